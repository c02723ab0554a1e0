"""NVFlare's ``SVTPrivacy`` filter releasing raw the coordinates it accepted but did not keep."""

from __future__ import annotations

import functools

import mpmath
import numpy as np

from mechanisms import BoundedChange, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import integrate, laplace_pdf, working_precision
from .base import QUERIES, SETTING

# ---------------------------------------------------------------------------
# NVIDIA/NVFlare issue 343: ``SVTPrivacy`` (nvflare/app_common/filters/svt_privacy.py) selects
# coordinates of a model update by a sparse vector and releases the selected ones noised,
# but the coordinates it accepted and then did not keep are released raw. The filter clips
# each coordinate w to [−γ, γ] and tests |clip(w)| + ν >= τ + ρ, ρ ~ Lap(2γ/ε₁),
# ν ~ Lap(4γc/ε₂) with ε₂ = ε₁(2c)^{2/3} (Lyu–Su–Li's ratio), c = ⌈d · fraction⌉; it retests
# the candidates not yet accepted, with fresh ν, until c are accepted, keeps c of them drawn
# with replacement, and releases clip(w + Lap(2γ/ε₃), −γ, γ) there and 0 at the candidates
# never accepted. Its defaults: fraction 0.1, ε₁ = 0.1, ε₃ = noise_var = 0.1, τ = γ/10
# (1e-6 with γ = 1e-5); here γ = 1 count, a coordinate is a count (w >= 0), and 10
# coordinates give c = 1. The claim is the three budgets composed, ε₁ + ε₂ + ε₃ (Lyu–Su–Li,
# PVLDB 2017, §4, numeric answers; the filter states the three, not their sum), for
# updates whose coordinates move by at most 2γ, the sensitivity its noise scales assume.

NVFLARE_EPSILON_1, NVFLARE_EPSILON_3, NVFLARE_GAMMA, NVFLARE_TAU = 0.1, 0.1, 1.0, 0.1
NVFLARE_KEPT = 1  # ⌈10 · 0.1⌉
NVFLARE_EPSILON_2 = NVFLARE_EPSILON_1 * (2 * NVFLARE_KEPT) ** (2 / 3)
NVFLARE_RHO_SCALE = 2 * NVFLARE_GAMMA / NVFLARE_EPSILON_1
NVFLARE_NU_SCALE = 4 * NVFLARE_GAMMA * NVFLARE_KEPT / NVFLARE_EPSILON_2
NVFLARE_VALUE_SCALE = 2 * NVFLARE_GAMMA / NVFLARE_EPSILON_3
NVFLARE_RELATION = BoundedChange(2)


def _laplace_survival(x, scale):
    """P(L >= x) for L ~ Laplace(0, scale), elementwise in doubles."""
    return np.where(x >= 0, 0.5 * np.exp(-np.abs(x) / scale), 1 - 0.5 * np.exp(-np.abs(x) / scale))


def _nvflare_batch(counts, size, rng, *, leak_raw, exact):
    """One ``SVTPrivacy`` release per row: the d coordinates after the filter.

    Given ρ, each retest of coordinate j accepts it with probability a_j = P(v_j + ν >= τ + ρ)
    (v_j = |clip(w_j)|), independently across rounds and coordinates, so j is first accepted
    in round R_j ~ Geometric(a_j); the loop stops at the first round that accepts any (c = 1)
    and the accepted set is {j : R_j = min R}. One of them is kept, uniformly. ``leak_raw``:
    the others keep their raw value (as shipped); otherwise 0 (the fix). ``exact``: the kept
    value's noise is discrete Laplace (ratio e^{-1/scale}), so the release is DP on doubles.
    """
    w = validate_counts(counts).astype(float)
    if w.size > QUERIES:
        raise ValueError(
            f"counts has {w.size} coordinates, more than the {QUERIES} this keeps 1 of"
        )
    clipped = np.clip(w, -NVFLARE_GAMMA, NVFLARE_GAMMA)
    threshold = NVFLARE_TAU + rng.laplace(scale=NVFLARE_RHO_SCALE, size=(size, 1))
    accept = _laplace_survival(threshold - np.abs(clipped), NVFLARE_NU_SCALE)
    uniform = 1.0 - rng.random((size, w.size))  # in (0, 1]
    with np.errstate(divide="ignore"):
        rounds = np.maximum(np.ceil(np.log(uniform) / np.log1p(-accept)), 1.0)
    accepted = rounds == rounds.min(axis=1, keepdims=True)
    key = np.where(accepted, rng.random((size, w.size)), -1.0)
    kept = np.argmax(key, axis=1)
    if exact:
        ratio = discrete_laplace_ratio(1.0 / NVFLARE_VALUE_SCALE)
        noise = discrete_laplace(ratio, size, rng).astype(float)
    else:
        noise = rng.laplace(scale=NVFLARE_VALUE_SCALE, size=size)
    out = np.where(accepted, w, 0.0) if leak_raw else np.zeros((size, w.size))
    out[np.arange(size), kept] = np.clip(w[kept] + noise, -NVFLARE_GAMMA, NVFLARE_GAMMA)
    return out


def nvflare_svt(name, *, leak_raw, exact):
    function = functools.partial(_nvflare_batch, leak_raw=leak_raw, exact=exact)
    claim = (NVFLARE_EPSILON_1 + NVFLARE_EPSILON_2 + NVFLARE_EPSILON_3, 0.0, NVFLARE_RELATION)
    return black_box(function, claim=claim, width=0, name=name, values=QUERIES)


#: Every coordinate at 2 (clipped to 1) against every one at 1: 2.0 is released only as a
#: raw value, which the second histogram never has.
NVFLARE_PAIR = ((2,) * QUERIES, (1,) * QUERIES)


def nvflare_leak_probability(queries=QUERIES):
    """Exact P(some accepted coordinate is not kept) when every coordinate clips to γ (mpmath).

    With all a_j = a, K ~ Binomial(d, a) coordinates are accepted given K >= 1, and one is
    kept: the others leak when K >= 2. P(K >= 2 | K >= 1), summed over k term by term (no
    cancellation where a is tiny), integrated over the threshold noise ρ
    (a = P(ν >= τ + ρ − γ)).
    """
    d = queries
    with working_precision():

        def integrand(r):
            x = (NVFLARE_TAU + r - NVFLARE_GAMMA) / mpmath.mpf(NVFLARE_NU_SCALE)
            a = mpmath.exp(-x) / 2 if x >= 0 else 1 - mpmath.exp(x) / 2  # P(ν >= x·scale)
            terms = [mpmath.binomial(d, k) * a**k * (1 - a) ** (d - k) for k in range(d + 1)]
            return (
                laplace_pdf(r, NVFLARE_RHO_SCALE) * mpmath.fsum(terms[2:]) / mpmath.fsum(terms[1:])
            )

        return integrate(integrand, [0, NVFLARE_GAMMA - NVFLARE_TAU])


def _nvflare_exact():
    """The event "some coordinate released as 2.0": P = the leak probability, Q = 0."""
    p = nvflare_leak_probability()
    return (float("inf") if p > 0 else 0.0), float(p)


#: The leak probability on the pair (mpmath, ``nvflare_leak_probability``).
_NVFLARE_DELTA = 0.8818985528424


ENTRIES = (
    CorpusEntry(
        name="nvflare-svt-raw-leak",
        family="sparse vector",
        bug="sparse vector selection of update coordinates: the coordinates accepted but not "
        "kept are released raw, neither noised nor zeroed",
        source="NVIDIA/NVFlare issue 343 (SVTPrivacy might be incorrect?: "
        "nvflare/app_common/filters/svt_privacy.py keeps np.random.choice(accepted) and zeroes "
        "only candidate_idx), fixed by PR 348; the filter's defaults (fraction 0.1, ε₁ = 0.1, "
        "ε₃ = 0.1), 10 coordinates, γ = 1",
        build=lambda: nvflare_svt("nvflare-svt-raw-leak", leak_raw=True, exact=False),
        true=TrueGuarantee(
            float("inf"),
            _NVFLARE_DELTA,
            "exact: some coordinate is released as its raw count 2 with P = P(K >= 2 | K >= 1) "
            "integrated over the threshold noise (mpmath), K ~ Binomial(10, a) the accepted "
            "coordinates; never on the neighbour, where every count is 1: no finite ε, δ at "
            "the claimed ε is at least that P",
            _nvflare_exact,
        ),
        pair=NVFLARE_PAIR,
        twin=lambda: nvflare_svt("nvflare-svt", leak_raw=False, exact=True),
        twin_source="NVFlare PR 348 (the fix: every coordinate not kept released as 0), with "
        "integer (discrete Laplace) noise on the kept value so that it is DP on doubles",
        audit_options=SETTING,
    ),
)
