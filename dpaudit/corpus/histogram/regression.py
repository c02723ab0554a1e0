"""diffprivlib's linear regression: Σ x² noised with the sensitivity of its lower bound twice.

IBM/differential-privacy-library issues 105 and 104 (item 1), fixed by PR 110: diffprivlib's
``LinearRegression`` (Zhang et al.'s functional mechanism, arXiv:1208.0219) noises each
coefficient of its objective with its own share of ε; the diagonal Σ x² gets
``LaplaceFolded`` (Laplace noise, a negative result folded onto −y) of sensitivity
``max(|lower|, |lower|)²``, the lower bound twice, where adding one record moves Σ x² by up
to ``max(|lower|, |upper|)²``. The release here is that coefficient alone (a marginal of the
fit, so it must keep its share): one feature taking the integer values of its bounds, one
target, ``fit_intercept=False`` (the bounds are used as given), default ε = 1, share ε/3.
With issue 105's bounds (0, 100) the sensitivity is 0 and the coefficient is released
exactly; with bounds (−2, 3) it is 4 where 9 is needed, 2.25 times the share.

"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

from mechanisms import AddRemoveUser, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import laplace_pdf, log_ratio, working_precision

#: ``LinearRegression``'s default ε, and the share of each of its noisy coefficients with one
#: feature and one target: ε / (1 + n_targets · n_features + n_features (n_features + 1) / 2).
REGRESSION_EPSILON = 1.0
REGRESSION_SHARE = REGRESSION_EPSILON / 3


def _square_sum(counts, size, rng, *, values, sensitivity, exact=False):
    """The diagonal coefficient Σ x² of ``LinearRegression`` (fit_intercept=False), noised as
    ``LaplaceFolded(epsilon=share, sensitivity, lower=0, upper=inf)`` does it: Laplace noise
    of scale sensitivity/share, a negative result folded onto −y. ``counts[j]`` records have
    the feature value ``values[j]``. ``exact``: discrete Laplace noise on the integer sum."""
    q = validate_counts(counts)
    if q.size != len(values):
        raise ValueError(
            f"counts has {q.size} cells but the feature takes {len(values)} values {values}; "
            f"audit with domain_size={len(values)}"
        )
    total = int(np.dot(q, np.square(values)))
    scale = sensitivity / REGRESSION_SHARE
    if exact:
        noisy = total + discrete_laplace(discrete_laplace_ratio(1.0 / scale), (size, 1), rng)
    elif scale == 0:
        # diffprivlib accepts sensitivity 0: Laplace of scale 0 returns the value itself.
        noisy = np.full((size, 1), float(total))
    else:
        noisy = total + rng.laplace(scale=scale, size=(size, 1))
    return np.abs(noisy)


def _feature_values(bounds):
    lower, upper, step = bounds
    return tuple(range(lower, upper + 1, step))


def _regression(name, bounds, *, fixed):
    """The coefficient's release on integer feature values ``lower..upper`` (step ``bounds[2]``),
    its sensitivity as shipped, ``max(|lower|, |lower|)²``, or as PR 110 fixes it (``fixed``)."""
    lower, upper, _ = bounds
    values = _feature_values(bounds)
    shipped = max(abs(lower), abs(lower)) ** 2
    sensitivity = max(abs(lower), abs(upper)) ** 2 if fixed else shipped
    function = functools.partial(_square_sum, values=values, sensitivity=sensitivity, exact=fixed)
    return black_box(
        function, claim=(REGRESSION_SHARE, 0.0, AddRemoveUser(1)), width=0, name=name, values=1
    )


def _folded_laplace_pdf(y, centre, scale):
    """Density at ``y >= 0`` of |centre + L|, L ~ Laplace(0, scale) (mpmath)."""
    return laplace_pdf(y - centre, scale) + laplace_pdf(-y - centre, scale)


#: Issue 105's own bounds: the shipped sensitivity is 0, so the coefficient has no noise.
REGRESSION_ZERO_BOUNDS = (0, 100, 25)
#: Asymmetric bounds (issue 104, point 1): shipped sensitivity 4, true 9.
REGRESSION_ASYMMETRIC_BOUNDS = (-2, 3, 1)
#: One record at x = 100 (Σ x² = 10⁴) against none (Σ x² = 0).
REGRESSION_ZERO_PAIR = ((0, 0, 0, 0, 1), (0, 0, 0, 0, 0))
#: A record at x = 2 (Σ x² = 4) against it with a record at x = 3 added (Σ x² = 13).
REGRESSION_ASYMMETRIC_PAIR = ((0, 0, 0, 0, 1, 0), (0, 0, 0, 0, 1, 1))


def _regression_zero_exact():
    """No noise: the pair's first histogram releases Σ x² = 10⁴ with probability 1, the
    second never (its Σ x² is 0); P − e^ε Q = 1 at every ε."""
    values = _feature_values(REGRESSION_ZERO_BOUNDS)
    first, second = (
        sum(c * v * v for c, v in zip(counts, values, strict=True))
        for counts in REGRESSION_ZERO_PAIR
    )
    with working_precision():
        p = mpmath.mpf(1)
        q = mpmath.mpf(1 if second == first else 0)
        return log_ratio(p, q), float(p - mpmath.exp(REGRESSION_SHARE) * q)


def _regression_asymmetric_exact():
    """Log ratio of the folded Laplace densities of Σ x² = 4 and 13 at y = 1: on [0, 4] both
    are e^{−centre/b} cosh(y/b)/b, so the ratio is e^{9/b} there (b = 4/share)."""
    scale = mpmath.mpf(4) / mpmath.mpf(REGRESSION_SHARE)
    with working_precision():
        p = _folded_laplace_pdf(1, 4, scale)
        q = _folded_laplace_pdf(1, 13, scale)
        return log_ratio(p, q), 0.0


_REGRESSION_SOURCE = (
    "IBM/differential-privacy-library issue 105 (Sensitivity Misscalibration for Linear "
    "Regression) and issue 104 item 1, fixed by PR 110: models/linear_regression.py "
    "_construct_regression_obj noises the diagonal coefficient Σ x² with LaplaceFolded of "
    "sensitivity np.max(np.abs([bounds_X[0][i], bounds_X[0][i]])) ** 2; one feature, one "
    "target, fit_intercept=False, default ε = 1 (each coefficient's share ε/3)"
)


def _regression_entry(name, bounds, *, bug, true, pair):
    """A diffprivlib diagonal-coefficient bug at ``bounds``, with PR 110's fix as its twin."""
    lower, upper, _ = bounds
    return CorpusEntry(
        name=name,
        family="histogram",
        bug=bug,
        source=f"{_REGRESSION_SOURCE}, bounds_X = ({lower}, {upper})",
        build=lambda: _regression(name, bounds, fixed=False),
        true=true,
        pair=pair,
        twin=lambda: _regression(f"{name}-fixed", bounds, fixed=True),
        twin_source="PR 110's sensitivity max(|lower|, |upper|)², with integer (discrete "
        "Laplace) noise on the integer Σ x² so that it is DP on doubles",
        audit_options={"domain_size": len(_feature_values(bounds))},
    )


ENTRIES = (
    _regression_entry(
        "diffprivlib-regression-diagonal-unnoised",
        REGRESSION_ZERO_BOUNDS,
        bug="linear regression's Σ x² noised with the sensitivity of the lower bound twice: "
        "0 when the lower bound is 0, so no noise at all",
        true=TrueGuarantee(
            math.inf,
            1.0,
            "exact: Σ x² = 10⁴ (one record at x = 100) is released with probability 1 and "
            "never from the empty histogram: no finite ε, δ = 1 at the claimed ε",
            _regression_zero_exact,
        ),
        pair=REGRESSION_ZERO_PAIR,
    ),
    _regression_entry(
        "diffprivlib-regression-diagonal-asymmetric",
        REGRESSION_ASYMMETRIC_BOUNDS,
        bug="linear regression's Σ x² noised with the sensitivity of the lower bound twice: "
        "4 instead of 9 on bounds (−2, 3), 2.25 times the claimed ε",
        true=TrueGuarantee(
            9 * REGRESSION_SHARE / 4,
            0.0,
            "exact: closed form 9/b with b = 4/share (folded Laplace densities of Σ x² = 4 "
            "and 13 in ratio e^{9/b} on [0, 4]); mpmath at y = 1",
            _regression_asymmetric_exact,
        ),
        pair=REGRESSION_ASYMMETRIC_PAIR,
    ),
)
