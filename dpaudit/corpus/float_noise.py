"""Floating-point noise samplers: the doubles they can output depend on the input.

Mironov, "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012,
§3-4: ``x − b·sign(u)·ln(1 − 2|u|)`` evaluated in doubles misses many doubles, and which
ones depends on ``x``; an output reachable from one count and not from its neighbour
breaks ε-DP for every ε. IBM/differential-privacy-library (diffprivlib) issue 19
("Floating-point privacy vulnerabilities") reports its Laplace mechanism, written this way,
open to the attack. The release here is the count of item 0 with that noise
(``AddRemoveUser(1)``: one count moves by at most 1).

The same holds for Gaussian noise in doubles (Jin, McMurtry, Rubinstein, Ohrimenko,
"Are We There Yet? Timing and Floating-Point Attacks on Differential Privacy Systems",
S&P 2022): diffprivlib's ``Gaussian`` draws Box–Muller noise ``√(−2 ln u₁) cos(2π u₂)``
from two uniform doubles and adds it scaled. Haney, Desfontaines, Hartman, Shrestha, Hay,
"Precision-based attacks and interval refining" (arXiv 2207.13793, 2022) use the grid of
the sum against diffprivlib, SmartNoise Core and OpenDP: whatever the sampler,
``fl(1 + w)`` below ½ in magnitude is an exact multiple of 2^-53 (``w`` lies in
(−1.5, −0.5), where doubles are multiples of 2^-53, and the sum is exact), while
``fl(0 + w) = w`` there carries finer bits.
The same argument holds for numpy's own Laplace sampler (``U >= ½: loc − b·log(2 − 2U)``,
else ``loc + b·log(2U)``), which DP-Sniper (Bichsel et al., S&P 2021; ``eth-sri/dp-sniper``
``dpsniper/experiments/exp_floating_point.py``) audits as ``LaplaceMechanism(eps=0.1)``,
against its fix ``LaplaceFixed``: Mironov's snapping mechanism (clamp to [−B, B], noise of
scale (1 + B·2^-49)/ε, round to the smallest power of two Λ >= that scale, clamp again).
No Laplace noise model fits this sampler; the audit sees the bug through the grid view
([`dpaudit.auditor.values.floats.grid_codes`][dpaudit.auditor.values.floats.grid_codes]: sign,
binade and trailing zero bits of each double), which needs no model.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from mechanisms import AddRemoveUser, validate_counts

from .entry import CorpusEntry, TrueGuarantee, black_box

__all__ = [
    "ENTRIES",
    "box_muller_gaussian",
    "gaussian_sigma",
    "numpy_laplace",
    "reachable",
    "snapping_lambda",
    "textbook_laplace",
]

EPSILON = 1.0
RELATION = AddRemoveUser(1)
#: numpy's ``random()`` returns k·2^-53, so 1 − 2|u| is j·2^-52 with 1 <= j <= 2^52.
_GRID = 2.0**-52


def textbook_laplace(value, u, scale):
    """The textbook sampler, in the order of operations its code uses (u uniform in [−½, ½))."""
    return value - scale * np.sign(u) * np.log(1 - 2 * np.abs(u))


def _textbook_batch(counts, size, rng, *, scale):
    value = float(validate_counts(counts)[0])
    return textbook_laplace(value, rng.random(size) - 0.5, scale)


def reachable(outputs, value, scale):
    """Whether each double in ``outputs`` is an output of the sampler on ``value``, exactly.

    Inverts y = value ∓ b·ln(m) for m = 1 − 2|u| on its grid j·2^-52 and evaluates the
    sampler's own floating-point expression at the grid points around the real solution
    (the map j → output is monotone, so a window of ±4 points cannot miss one).
    """
    y = np.asarray(outputs, dtype=float)
    found = np.zeros(y.shape, dtype=bool)
    for sign in (1.0, -1.0):
        with np.errstate(over="ignore"):
            m = np.exp((value - y) / (scale * sign))
        centre = np.floor(m / _GRID)
        for step in range(-4, 5):
            j = centre + step
            valid = (j >= 1) & (j <= 2**52)
            grid = np.where(valid, j, 1.0) * _GRID
            # 1 − 2|u| = grid; sign(u) = sign; the sampler's expression on that u.
            out = value - scale * sign * np.log(grid)
            found |= valid & (out == y)
    return found


def _witness():
    """A double that count 0 outputs (u ≈ 0.1, on numpy's grid) and count 1 never does: P >= 2^-53, Q = 0."""
    u = np.floor(0.6 * 2.0**53) * 2.0**-53 - 0.5
    y = textbook_laplace(0.0, u, 1.0 / EPSILON)
    ok = bool(reachable([y], 0.0, 1.0 / EPSILON)[0]) and not bool(
        reachable([y], 1.0, 1.0 / EPSILON)[0]
    )
    return (math.inf if ok else 0.0), 2.0**-53


def _geometric_batch(counts, size, rng, *, scale):
    value = float(validate_counts(counts)[0])
    p = -math.expm1(-1.0 / scale)
    return value + (rng.geometric(p, size=size) - rng.geometric(p, size=size)).astype(float)


# ---------------------------------------------------------------------------
# diffprivlib's Gaussian: Box–Muller in doubles (Jin et al., S&P 2022).

#: diffprivlib's Gaussian takes ε in (0, 1]; δ = 1e-5 as a typical claim.
GAUSSIAN_EPSILON, GAUSSIAN_DELTA = 1.0, 1e-5
#: Below this magnitude every output of count 1 is a multiple of ``_COARSE`` (module doc).
_NEAR_ZERO, _COARSE = 0.5, 2.0**-53


def gaussian_sigma(epsilon, delta):
    """diffprivlib ``Gaussian`` scale (sensitivity 1): σ = √(2 ln(1.25/δ)) / ε (Dwork–Roth Thm. A.1)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def box_muller_gaussian(value, u1, u2, scale):
    """diffprivlib's ``Gaussian.randomise``: ``√(−2 ln u₁) cos(2π u₂) · scale + value``."""
    with np.errstate(divide="ignore"):
        return np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2) * scale + value


def _box_muller_batch(counts, size, rng, *, scale, rounded=False):
    value = float(validate_counts(counts)[0])
    # u₁ = 0 (probability 2^-53) would give an infinite draw: numpy's ``random`` is in [0, 1).
    u1 = 1.0 - rng.random(size)
    out = box_muller_gaussian(value, u1, rng.random(size), scale)
    # The twin: the noisy count rounded to an integer, post-processing of the Gaussian release.
    return np.round(out) if rounded else out


def fine_near_zero(outputs):
    """Outputs below ½ in magnitude that are not multiples of 2^-53: never produced by count 1."""
    y = np.asarray(outputs, dtype=float)
    return (np.abs(y) < _NEAR_ZERO) & (np.fmod(y, _COARSE) != 0)


def _gaussian_witness():
    """A double count 0 outputs (u₁ = 0.99, u₂ = 0.26 on numpy's grid) that count 1 never does."""
    grid = 2.0**-53
    u1, u2 = np.floor(0.99 / grid) * grid, np.floor(0.26 / grid) * grid
    y = box_muller_gaussian(0.0, u1, u2, gaussian_sigma(GAUSSIAN_EPSILON, GAUSSIAN_DELTA))
    return (math.inf if bool(fine_near_zero([y])[0]) else 0.0), _GAUSSIAN_DELTA_ESTIMATE


#: P(fine_near_zero) on count 0: P(|σZ| < ½) = 0.0822 times the share of doubles there that
#: are not multiples of 2^-53 (2/3 if the low bits were uniform); measured 0.0547 on 4e6
#: samples (seed 1; standard error 1.2e-4).
_GAUSSIAN_DELTA_ESTIMATE = 0.0547


def _gaussian(name, *, rounded=False):
    function = functools.partial(
        _box_muller_batch,
        scale=gaussian_sigma(GAUSSIAN_EPSILON, GAUSSIAN_DELTA),
        rounded=rounded,
    )
    return black_box(
        function,
        claim=(GAUSSIAN_EPSILON, GAUSSIAN_DELTA, RELATION),
        width=0,
        name=name,
        values=1,
    )


# ---------------------------------------------------------------------------
# DP-Sniper's floating-point experiment: numpy's Laplace at ε = 0.1 against snapping.

SNIPER_EPSILON, SNAP_BOUND = 0.1, 100


def _numpy_laplace_batch(counts, size, rng, *, scale):
    return rng.laplace(loc=float(validate_counts(counts)[0]), scale=scale, size=size)


def snapping_lambda(scale):
    """The smallest power of two >= ``scale`` (from 2^-20 up, as DP-Sniper's LaplaceFixed)."""
    out = 2.0**-20
    while out < scale:
        out *= 2
    return out


def _snapping_batch(counts, size, rng, *, epsilon, bound):
    """DP-Sniper's LaplaceFixed: Mironov's snapping mechanism (CCS 2012, Thm. 1)."""
    scale = (1.0 + bound * 2.0**-49) / epsilon
    step = snapping_lambda(scale)
    loc = min(bound, max(-bound, float(validate_counts(counts)[0])))
    sign = 1 - 2 * rng.integers(2, size=size)
    with np.errstate(divide="ignore"):  # u = 0 gives −inf, clamped to ∓B below
        intermediate = loc + sign * scale * np.log(rng.random(size))
    return np.clip(np.round(intermediate / step) * step, -bound, bound)


def _sniper_float(name, function):
    return black_box(function, claim=(SNIPER_EPSILON, 0.0, RELATION), width=0, name=name, values=1)


def numpy_laplace(value, u, scale):
    """numpy's Laplace sampler on uniform doubles ``u`` in (0, 1), in its own arithmetic.

    numpy's C sampler calls the C library's ``log``, which ``math.log`` is; numpy's
    vectorised ``np.log`` differs from it in the last bit on some inputs.
    """

    def one(x):
        if x >= 0.5:
            return value - scale * math.log(2.0 - x - x)
        return value + scale * math.log(x + x)

    return np.array([one(float(x)) for x in np.atleast_1d(u)])


def _numpy_laplace_witness():
    """A double count 0 outputs (U = 0.49 on numpy's grid) that count 1 never does."""
    grid = 2.0**-53
    y = numpy_laplace(0.0, np.floor(0.49 / grid) * grid, 1.0 / SNIPER_EPSILON)[0]
    return (math.inf if bool(fine_near_zero([y])[0]) else 0.0), _NUMPY_DELTA_ESTIMATE


#: P(fine_near_zero) on count 0: P(|Lap(10)| < ½) = 1 − e^{−0.05} = 0.0488 times the share of
#: doubles there that are not multiples of 2^-53; measured 0.0292 on 4e6 samples (seed 1;
#: standard error 8.4e-5).
_NUMPY_DELTA_ESTIMATE = 0.0292


ENTRIES = (
    CorpusEntry(
        name="float-laplace-textbook",
        family="float noise",
        bug="Laplace noise by inverse CDF in doubles: which doubles come out depends on the count",
        source="IBM/differential-privacy-library issue 19 (floating-point privacy "
        "vulnerabilities); Mironov, CCS 2012, §3-4",
        build=lambda: black_box(
            functools.partial(_textbook_batch, scale=1.0 / EPSILON),
            claim=(EPSILON, 0.0, RELATION),
            width=0,
            name="float-laplace-textbook",
            values=1,
        ),
        true=TrueGuarantee(
            math.inf,
            0.8,
            "exact: ε = ∞, a double output on count 0 and never on count 1 (found by "
            "inverting the sampler's own double arithmetic). δ at the claimed ε ≈ 0.8 is an "
            "estimate, not exact: 80 % of 200,000 count-0 outputs are unreachable from count 1",
            _witness,
            estimated=("delta",),
        ),
        pair=((0, 0, 0, 0, 0), (1, 0, 0, 0, 0)),
        twin=lambda: black_box(
            functools.partial(_geometric_batch, scale=1.0 / EPSILON),
            claim=(EPSILON, 0.0, RELATION),
            width=0,
            name="float-laplace-geometric",
            values=1,
        ),
        twin_source="diffprivlib's Geometric mechanism: discrete Laplace on integer counts "
        "(ε-DP exactly; Ghosh, Roughgarden, Sundararajan 2009)",
    ),
    CorpusEntry(
        name="float-gaussian-box-muller",
        family="float noise",
        bug="Gaussian noise by Box–Muller in doubles: outputs near 0 carry low bits that "
        "count 1 + noise can never produce",
        source="IBM/differential-privacy-library issue 19 (floating-point vulnerabilities of "
        "the Laplace mechanism and 'similar vulnerabilities for other mechanisms'); Jin et "
        "al., S&P 2022 (floating-point attacks on Gaussian samplers); Haney et al., arXiv "
        "2207.13793 (precision-based attacks: the sum's grid depends on the input); diffprivlib "
        "mechanisms/gaussian.py Gaussian.randomise (Box–Muller), ε = 1, δ = 1e-5",
        build=lambda: _gaussian("float-gaussian-box-muller"),
        true=TrueGuarantee(
            math.inf,
            _GAUSSIAN_DELTA_ESTIMATE,
            "exact: ε = ∞, a double below ½ that count 0 outputs and that is not a multiple "
            "of 2^-53, which every output of count 1 there is (fl(1 + w) is exact there). δ "
            "at the claimed ε ≈ 0.055 is an estimate, not exact: the share of count-0 "
            "outputs with that property (4e6 samples)",
            _gaussian_witness,
            estimated=("delta",),
        ),
        pair=((0, 0, 0, 0, 0), (1, 0, 0, 0, 0)),
        twin=lambda: _gaussian("float-gaussian-rounded", rounded=True),
        twin_source="the same Gaussian release rounded to an integer (post-processing of the "
        "Gaussian mechanism, whose exact δ at ε = 1 is 4e-8; integers are not porous)",
    ),
    CorpusEntry(
        name="float-laplace-numpy-dpsniper",
        family="float noise",
        bug="numpy's Laplace sampler in doubles at ε = 0.1: outputs near 0 carry low bits "
        "that count 1 + noise can never produce",
        source="Bichsel et al., S&P 2021 (DP-Sniper), eth-sri/dp-sniper "
        "dpsniper/experiments/exp_floating_point.py (LaplaceMechanism(eps=0.1), "
        "dpsniper/mechanisms/laplace.py: np.random.laplace); Mironov, CCS 2012, §3-4",
        build=lambda: _sniper_float(
            "float-laplace-numpy-dpsniper",
            functools.partial(_numpy_laplace_batch, scale=1.0 / SNIPER_EPSILON),
        ),
        true=TrueGuarantee(
            math.inf,
            _NUMPY_DELTA_ESTIMATE,
            "exact: ε = ∞, a double below ½ that count 0 outputs and that is not a multiple "
            "of 2^-53, which every output of count 1 there is (fl(1 + w) is exact there). δ "
            "at the claimed ε ≈ 0.029 is an estimate, not exact: the share of count-0 "
            "outputs with that property (4e6 samples)",
            _numpy_laplace_witness,
            estimated=("delta",),
        ),
        pair=((0, 0, 0, 0, 0), (1, 0, 0, 0, 0)),
        twin=lambda: _sniper_float(
            "float-laplace-snapping-dpsniper",
            functools.partial(_snapping_batch, epsilon=SNIPER_EPSILON, bound=SNAP_BOUND),
        ),
        twin_source="DP-Sniper dpsniper/mechanisms/laplace.py LaplaceFixed (B = 100): "
        "Mironov's snapping mechanism, ε-DP in doubles (Mironov, CCS 2012, Thm. 1), as "
        "exp_floating_point.py's run_exp_floating_fixed audits it",
    ),
)
