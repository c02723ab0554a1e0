"""Partition selection by a noisy threshold whose δ, or whose threshold, is computed wrong.

A key (an item) with a positive count is released when its noisy count clears a
threshold; a key with count 0 is absent from the data, so the library never sees it and
never releases it. A user contributes to one key (``AddRemoveUser(1)``). The δ is spent on
the smallest present count against the same histogram without it: the event "the key is
released" has P > 0 there and Q = 0. Releases here are the key sets (ascending ids): the
libraries also publish the noisy counts, and dropping them is post-processing, so the
true δ of the set is the true δ of the release.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

from mechanisms import PAD, AddRemoveUser, validate_counts
from mechanisms.profiles import ZeroConcentratedDP

from .entry import CorpusEntry, TrueGuarantee, black_box
from .exact import discrete_laplace_tail, laplace_cdf, working_precision
from .integer_noise import discrete_gaussian, discrete_gaussian_tail, two_sided_geometric

__all__ = [
    "ENTRIES",
    "discrete_gaussian",
    "discrete_gaussian_tail",
    "go_release_delta",
    "go_threshold",
    "opendp_deltas",
    "opendp_gaussian_deltas",
    "ptr_scale_threshold",
    "release_probability",
    "smartnoise_release_delta",
    "smartnoise_sd",
    "smartnoise_tau",
    "stability_map_accepts",
]

RELATION = AddRemoveUser(1)


def _key_set(released):
    """Ascending ids of the released keys, padded: one row per sample."""
    size, d = released.shape
    ids = np.where(released, np.arange(d), d + 1)
    ids.sort(axis=1)
    out = np.full((size, d), PAD, dtype=np.int64)
    out[:, :d] = np.where(ids <= d, ids, PAD)
    return out


# ---------------------------------------------------------------------------
# OpenDP issue 2922: make_laplace_threshold's map misses the mass at the threshold.


def _opendp_threshold(counts, size, rng, *, scale, threshold):
    c = validate_counts(counts)
    noisy = c + two_sided_geometric(rng, scale, (size, c.size))
    return _key_set((c > 0) & (noisy >= threshold))


def opendp_deltas(scale, threshold):
    """``(δ the map reports, true δ)``: P(Z >= t) and P(1 + Z >= t) = P(Z >= t − 1)."""
    with working_precision():
        return (
            float(discrete_laplace_tail(threshold, scale)),
            float(discrete_laplace_tail(threshold - 1, scale)),
        )


def _opendp(name, scale, threshold, *, correct=False):
    reported, true = opendp_deltas(scale, threshold)
    function = functools.partial(_opendp_threshold, scale=scale, threshold=threshold)
    delta = true if correct else reported
    return black_box(function, claim=(1.0 / scale, delta, RELATION), width=5, name=name)


def _opendp_entry(name, scale, threshold):
    true = opendp_deltas(scale, threshold)[1]
    return CorpusEntry(
        name=name,
        family="partition selection",
        bug=(
            f"discrete Laplace threshold (scale {scale:g}, threshold {threshold}) reports "
            "δ = P(Z >= t), but a count of 1 that reaches t is released: δ = P(Z >= t − 1)"
        ),
        source="opendp/opendp issue 2922 (make_laplace_threshold / make_gaussian_threshold "
        "report an incorrectly small delta)",
        build=lambda: _opendp(name, scale, threshold),
        true=TrueGuarantee(
            math.inf,
            true,
            "exact: P(release | count 1) = P(Z >= t − 1) by the discrete Laplace series "
            f"(mpmath), e^(1/scale) = {math.exp(1 / scale):.4g}× the reported δ; the event "
            "has Q = 0 on the neighbour without the key, so no ε holds at the reported δ",
            lambda: (math.inf, opendp_deltas(scale, threshold)[1]),
        ),
        pair=((1, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        twin=lambda: _opendp(name + "-fixed", scale, threshold, correct=True),
        twin_source="the same release with δ = P(Z >= t − 1), the mass at the threshold counted",
    )


# ---------------------------------------------------------------------------
# The same issue, make_gaussian_threshold: discrete Gaussian noise, a map to approximate
# zCDP (ρ = 1/(2σ²) for sensitivity 1, and δ = P(Z >= t)), stated here as the one (ε, δ) it
# converts to: δ(ε) = δ_ρ(ε) + P(Z >= t), δ_ρ by Canonne–Kamath–Steinke 2020, Cor. 13.


def _gaussian_threshold(counts, size, rng, *, sigma, threshold):
    c = validate_counts(counts)
    noisy = c + discrete_gaussian(rng, sigma, (size, c.size))
    return _key_set((c > 0) & (noisy >= threshold))


#: σ = 3, threshold 9, the (ρ, δ) converted at ε = 2 (where δ_ρ is 8e-10, negligible).
GAUSS_SIGMA, GAUSS_THRESHOLD, GAUSS_EPSILON = 3.0, 9, 2.0


def opendp_gaussian_deltas(sigma, threshold, epsilon):
    """``(δ_ρ(ε), P(Z >= t), P(Z >= t − 1))``: the map reports the first two summed; a count
    of 1 is released with the third."""
    rho_delta = ZeroConcentratedDP(1 / (2 * sigma**2)).delta_at(epsilon)
    with working_precision():
        return (
            rho_delta,
            float(discrete_gaussian_tail(threshold, sigma)),
            float(discrete_gaussian_tail(threshold - 1, sigma)),
        )


def _opendp_gaussian(name, *, correct=False):
    rho_delta, reported, true = opendp_gaussian_deltas(GAUSS_SIGMA, GAUSS_THRESHOLD, GAUSS_EPSILON)
    function = functools.partial(_gaussian_threshold, sigma=GAUSS_SIGMA, threshold=GAUSS_THRESHOLD)
    # The fix counts the mass at the threshold: δ_ρ(ε) + P(Z >= t − 1).
    delta = rho_delta + (true if correct else reported)
    return black_box(function, claim=(GAUSS_EPSILON, delta, RELATION), width=5, name=name)


# ---------------------------------------------------------------------------
# google/differential-privacy PR 101: dpagg.Count.ThresholdedResult truncates the threshold.


def go_threshold(epsilon, delta):
    """Go ``laplace.Threshold`` for l0 = l∞ = 1: τ = 1 − λ ln(2δ), λ = 1/ε."""
    return 1.0 - math.log(2.0 * delta) / epsilon


def _go_count(counts, size, rng, *, epsilon, delta, rounding):
    c = validate_counts(counts)
    # AddNoiseInt64 returns round(c + Laplace(1/ε)) (its 2^-40 noise grid is ignored here).
    noisy = np.floor(c + rng.laplace(scale=1.0 / epsilon, size=(size, c.size)) + 0.5)
    cut = rounding(go_threshold(epsilon, delta))
    return _key_set((c > 0) & (noisy >= cut))


def go_release_delta(epsilon, delta, rounding):
    """Exact P(round(1 + L) >= rounding(τ)) = P(L >= rounding(τ) − 3/2), L ~ Laplace(1/ε)."""
    cut = rounding(go_threshold(epsilon, delta)) - 1.5
    with working_precision():
        eps = mpmath.mpf(epsilon)
        tail = mpmath.exp(-eps * cut) / 2 if cut >= 0 else 1 - mpmath.exp(eps * cut) / 2
        return float(tail)


#: ε = ln 3 as in the library's examples; δ where the fix (rounding τ up) is exact, i.e. the
#: fractional part of τ is at most 1/2 (0.42 and 0.48 here): the integer noisy count clears
#: ⌈τ⌉ iff 1 + L >= ⌈τ⌉ − 1/2 >= τ.
GO_EPSILON, GO_DELTA, GO_DELTA_SMALL = math.log(3.0), 1.3e-3, 1.5e-5


def _go(name, rounding, delta):
    function = functools.partial(_go_count, epsilon=GO_EPSILON, delta=delta, rounding=rounding)
    return black_box(function, claim=(GO_EPSILON, delta, RELATION), width=5, name=name)


def _go_entry(name, delta):
    true = go_release_delta(GO_EPSILON, delta, math.floor)
    return CorpusEntry(
        name=name,
        family="partition selection",
        bug="ThresholdedResult compares the noisy count with int64(τ): τ truncated, not rounded up",
        source="google/differential-privacy PR 101 (privacy-impacting bug in "
        "dpagg.Count.ThresholdedResult: float threshold truncated to int64)",
        build=lambda: _go(name, math.floor, delta),
        true=TrueGuarantee(
            math.inf,
            true,
            "exact: P(round(1 + L) >= ⌊τ⌋) = e^{−ε(⌊τ⌋ − 3/2)}/2 (closed form, mpmath), "
            f"e^(ε(frac τ + 1/2)) = {true / delta:.3g}× the claimed δ; Q = 0 on the neighbour "
            "without the key",
            lambda: (math.inf, go_release_delta(GO_EPSILON, delta, math.floor)),
        ),
        pair=((1, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        twin=lambda: _go(name + "-ceil", math.ceil, delta),
        twin_source="google/differential-privacy PR 101's fix: compare with int64(math.Ceil(τ))",
    )


# ---------------------------------------------------------------------------
# opendp/smartnoise-sdk issue 204: the SQL reader censors rare keys with a threshold τ from
# the Laplace formula, τ = 1 − ln(2δ)/ε (max_contrib = 1), while the key counts carry its
# default Gaussian noise; a key is kept when its noisy count exceeds τ.


def smartnoise_sd(epsilon, delta):
    """Standard deviation of the reader's Gaussian mechanism (sensitivity 1).

    ``opendp.whitenoise.mechanisms.gaussian.Gaussian``: (√ln(1/δ) + √(ln(1/δ) + ε)) / (√2 ε).
    """
    log = math.log(1.0 / delta)
    return (math.sqrt(log) + math.sqrt(log + epsilon)) / (math.sqrt(2.0) * epsilon)


def smartnoise_tau(epsilon, delta, *, gaussian=False):
    """The reader's τ (Laplace formula), or the τ the Gaussian noise needs.

    ``gaussian``: τ = 1 + σ Φ^{-1}(1 − δ), where a count of 1 is kept with probability δ.
    """
    if not gaussian:
        return 1.0 - math.log(2.0 * delta) / epsilon
    with working_precision():
        z = -mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(delta) - 1)
    return 1.0 + smartnoise_sd(epsilon, delta) * float(z)


def _smartnoise_count(counts, size, rng, *, sd, tau):
    c = validate_counts(counts)
    noisy = c + rng.normal(scale=sd, size=(size, c.size))
    return _key_set((c > 0) & (noisy > tau))


def smartnoise_release_delta(epsilon, delta, tau):
    """Exact P(1 + N(0, σ²) > τ) = Φ((1 − τ)/σ) (mpmath)."""
    with working_precision():
        return float(mpmath.ncdf((1 - mpmath.mpf(tau)) / mpmath.mpf(smartnoise_sd(epsilon, delta))))


#: PrivateReader's defaults: epsilon 1.0, delta 10E-16.
SMARTNOISE_EPSILON, SMARTNOISE_DELTA = 1.0, 1e-15


def _smartnoise(name, *, gaussian=False):
    eps, delta = SMARTNOISE_EPSILON, SMARTNOISE_DELTA
    function = functools.partial(
        _smartnoise_count,
        sd=smartnoise_sd(eps, delta),
        tau=smartnoise_tau(eps, delta, gaussian=gaussian),
    )
    return black_box(function, claim=(eps, delta, RELATION), width=5, name=name)


def _smartnoise_exact():
    eps, delta = SMARTNOISE_EPSILON, SMARTNOISE_DELTA
    return math.inf, smartnoise_release_delta(eps, delta, smartnoise_tau(eps, delta))


_SMARTNOISE_DELTA_TRUE = 2.636439353e-05


# ---------------------------------------------------------------------------
# opendp/opendp issue 369 (fixed by PR 370): make_base_stability's privacy map divides the
# Laplace scale and the threshold by n, as the stability histogram's source does for a
# normalised query q(x) = Σ q(x_i)/n, while the measurement noises and thresholds raw counts.
# The numbers are the map's own unit test: n = 10, scale 0.5, threshold 1, d_in = 1,
# accepted at (2.3, 1e-5).

#: The dataset size the map is told, the claim its unit test accepts, and that test's scale
#: and threshold.
STABILITY_N, STABILITY_EPSILON, STABILITY_DELTA = 10, 2.3, 1e-5
STABILITY_SCALE, STABILITY_THRESHOLD = 0.5, 1.0


def stability_map_accepts(n, scale, threshold, epsilon, delta, d_in=1.0) -> bool:
    """make_base_stability's map as shipped: scale >= d_in/(εn), threshold >= ln(2/δ) ·
    d_in/(εn) + 1/n, with 0 < ε < ln n and 0 < δ < 1/n."""
    ideal_scale = d_in / (epsilon * n)
    ideal_threshold = math.log(2.0 / delta) * ideal_scale + 1.0 / n
    in_range = 0 < epsilon < math.log(n) and 0 < delta < 1.0 / n
    return in_range and scale >= ideal_scale and threshold >= ideal_threshold


def ptr_scale_threshold(epsilon, delta, d_in=1.0) -> tuple[float, float]:
    """PR 370's make_count_by_ptr at the smallest scale and threshold its map accepts:
    scale d_in/ε, threshold ln(d_in/(2δ)) · scale + d_in."""
    scale = d_in / epsilon
    return scale, math.log(d_in / (2.0 * delta)) * scale + d_in


def _laplace_count(counts, size, rng, *, scale, threshold):
    c = validate_counts(counts)
    noisy = c + rng.laplace(scale=scale, size=(size, c.size))
    return _key_set((c > 0) & (noisy >= threshold))


def release_probability(count, scale, threshold) -> float:
    """Exact P(count + L >= threshold), L ~ Laplace(0, scale) (closed form, mpmath)."""
    with working_precision():
        return float(1 - laplace_cdf(mpmath.mpf(threshold) - count, scale))


def _stability(name, *, fixed=False):
    eps, delta = STABILITY_EPSILON, STABILITY_DELTA
    if fixed:
        scale, threshold = ptr_scale_threshold(eps, delta)
    else:
        scale, threshold = STABILITY_SCALE, STABILITY_THRESHOLD
    function = functools.partial(_laplace_count, scale=scale, threshold=threshold)
    return black_box(function, claim=(eps, delta, RELATION), width=5, name=name)


ENTRIES = (
    _opendp_entry("opendp-laplace-threshold-delta", 1.0, 5),
    _opendp_entry("opendp-laplace-threshold-delta-small", 1.0, 10),
    CorpusEntry(
        name="opendp-gaussian-threshold-delta",
        family="partition selection",
        bug=f"discrete Gaussian threshold (σ {GAUSS_SIGMA:g}, threshold {GAUSS_THRESHOLD}) "
        "reports δ = P(Z >= t), but a count of 1 that reaches t is released: δ = P(Z >= t − 1)",
        source="opendp/opendp issue 2922 (make_laplace_threshold / make_gaussian_threshold "
        "report an incorrectly small delta), the Gaussian half: (ρ, δ) converted at ε = 2",
        build=lambda: _opendp_gaussian("opendp-gaussian-threshold-delta"),
        true=TrueGuarantee(
            math.inf,
            0.006008944330,
            "exact: P(release | count 1) = P(Z >= t − 1) by the discrete Gaussian series "
            "(mpmath), 2.72× the reported δ_ρ(2) + P(Z >= t); the event has Q = 0 on the "
            "neighbour without the key, so no ε holds at the reported δ",
            lambda: (
                math.inf,
                opendp_gaussian_deltas(GAUSS_SIGMA, GAUSS_THRESHOLD, GAUSS_EPSILON)[2],
            ),
        ),
        pair=((1, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        twin=lambda: _opendp_gaussian("opendp-gaussian-threshold-delta-fixed", correct=True),
        twin_source="the same release with δ = δ_ρ(ε) + P(Z >= t − 1), the mass at the "
        "threshold counted",
    ),
    _go_entry("go-count-threshold-truncated", GO_DELTA),
    _go_entry("go-count-threshold-truncated-small", GO_DELTA_SMALL),
    CorpusEntry(
        name="smartnoise-gaussian-laplace-tau",
        family="partition selection",
        bug="rare keys censored with the Laplace threshold τ = 1 − ln(2δ)/ε while the "
        "counts carry Gaussian noise",
        source="opendp/smartnoise-sdk issue 204 (the SQL thresholding math: tau uses a Laplace "
        "formula, but the noise is Gaussian), PrivateReader's defaults ε = 1, δ = 1e-15",
        build=lambda: _smartnoise("smartnoise-gaussian-laplace-tau"),
        true=TrueGuarantee(
            math.inf,
            _SMARTNOISE_DELTA_TRUE,
            "exact: P(1 + N(0, σ²) > τ) = Φ((1 − τ)/σ) (mpmath), σ = 8.37, τ = 34.8; Q = 0 "
            "on the neighbour without the key",
            _smartnoise_exact,
        ),
        pair=((1, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        twin=lambda: _smartnoise("smartnoise-gaussian-tau", gaussian=True),
        twin_source="the same release with τ = 1 + σΦ^{-1}(1 − δ), the Gaussian tail issue "
        "204 asks for (a count of 1 is kept with probability δ)",
    ),
    CorpusEntry(
        name="opendp-base-stability-over-n",
        family="partition selection",
        bug="stability histogram: the map divides the Laplace scale and the threshold by n "
        "(the source's q is a normalised query) while raw counts are noised and thresholded",
        source="opendp/opendp issue 369 (stability mechanism hardening, point 1), fixed by PR "
        "370 (make_count_by_ptr); n = 10, scale 0.5, threshold 1, (2.3, 1e-5) as in "
        "make_base_stability's own unit test",
        build=lambda: _stability("opendp-base-stability-over-n"),
        true=TrueGuarantee(
            math.inf,
            0.5,
            "exact: P(1 + L >= 1) = 1/2 for L ~ Laplace(0.5) (closed form, mpmath): a key of "
            "count 1 is released half the time and never without it (Q = 0), so no ε holds at "
            "the claimed δ = 1e-5",
            lambda: (
                math.inf,
                release_probability(1, STABILITY_SCALE, STABILITY_THRESHOLD),
            ),
        ),
        pair=((1, 0, 0, 0, 0), (0, 0, 0, 0, 0)),
        twin=lambda: _stability("opendp-count-by-ptr", fixed=True),
        twin_source="PR 370's make_count_by_ptr at the same (ε, δ): scale 1/ε, threshold "
        "ln(1/(2δ))/ε + 1, where a count of 1 is released with probability δ",
    ),
)
