"""Report-noisy-max variants of the auditing papers: the maximum released instead of its index.

Ding et al., "Detecting Violations of Differential Privacy" (StatDP, CCS 2018), Algs. 5-8,
``cmla-psu/statdp`` ``statdp/algorithms.py`` (noisy_max_v1a/v1b/v2a/v2b); Bichsel et al.
(DP-Sniper, S&P 2021) ``eth-sri/dp-sniper`` ``dpsniper/mechanisms/report_noisy_max.py``
(ReportNoisyMax1-4); Wang et al. (CheckDP, CCS 2020) ``cmla-psu/checkdp``
``examples/badnoisymax.c`` (the maximum kept in a C ``int``). DP-Sniper's setting (``exp_default.py``): ε = 0.1, 5 queries of
sensitivity 1, every query may move by 1 either way (``BoundedChange(1)``).

OpenDP issue 2911: ``make_noisy_max`` draws exponential noise (report noisy max with
exponential noise is permute-and-flip, McKenna & Sheldon 2020; Ding et al. 2021) but states
the zCDP budget of the exponential mechanism, ρ = ε²/8 (Cesar & Rogers 2021: ε-bounded
range), where ε = 2Δ/scale (its range distance of L∞ distance Δ); permute-and-flip is
ε-DP, not ε-bounded range.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np

from mechanisms import BoundedChange, PrivacyClaim, validate_counts
from mechanisms.profiles import ZeroConcentratedDP

from .entry import CorpusEntry, TrueGuarantee, black_box
from .exact import laplace_cdf, laplace_pdf, log_ratio, working_precision

__all__ = [
    "ENTRIES",
    "exponential_argmax_law",
    "jam_selection_epsilon",
    "laplace_max_cdf",
    "laplace_max_density",
    "opendp_noisy_max_claim",
    "softmax_law",
    "truncated_max_probability",
]

EPSILON, QUERIES = 0.1, 5
RELATION = BoundedChange(1)


def _noisy_max_batch(counts, size, rng, *, noise, scale, release):
    """Counts plus Laplace or exponential noise; the argmax (an id), the max (a value), or
    the max converted to a C ``int`` (``"int"``: truncated toward zero)."""
    q = validate_counts(counts).astype(float)
    draw = rng.laplace if noise == "laplace" else rng.exponential
    noisy = q + draw(scale=scale, size=(size, q.size))
    if release == "index":
        return np.argmax(noisy, axis=1)[:, None].astype(np.int64)
    if release == "int":
        return np.trunc(noisy.max(axis=1))
    return noisy.max(axis=1)


def _build(name, noise, release):
    function = functools.partial(_noisy_max_batch, noise=noise, scale=2 / EPSILON, release=release)
    if release == "index":
        return black_box(function, claim=(EPSILON, 0.0, RELATION), width=1, name=name)
    return black_box(function, claim=(EPSILON, 0.0, RELATION), width=0, name=name, values=1)


def laplace_max_density(counts, x, scale):
    """Exact density of max_i (q_i + Lap(scale)) at ``x``: Σ_i f_i(x) Π_{j≠i} F_j(x)."""
    q = [int(c) for c in validate_counts(counts)]
    with working_precision():
        total = mpmath.mpf(0)
        for i, qi in enumerate(q):
            term = laplace_pdf(x - qi, scale)
            for j, qj in enumerate(q):
                if j != i:
                    term *= laplace_cdf(x - qj, scale)
            total += term
        return total


#: Every count one higher: below all counts each factor of the density gains e^{ε/2}.
_LAPLACE_PAIR = ((0,) * QUERIES, (1,) * QUERIES)


def _laplace_value_exact():
    """ln f(x)/f'(x) below every count, where it equals its supremum dε/2."""
    p = laplace_max_density(_LAPLACE_PAIR[0], -3, 2 / EPSILON)
    q = laplace_max_density(_LAPLACE_PAIR[1], -3, 2 / EPSILON)
    return log_ratio(p, q), 0.0


def laplace_max_cdf(counts, x, scale):
    """Exact P(max_i (q_i + Lap(scale)) <= x) = Π_i F(x − q_i)."""
    q = [int(c) for c in validate_counts(counts)]
    with working_precision():
        out = mpmath.mpf(1)
        for qi in q:
            out *= laplace_cdf(x - qi, scale)
        return out


def truncated_max_probability(counts, k, scale):
    """Exact P(int(max) = k): C truncation toward zero maps (k − 1, k] to k < 0, (−1, 1) to
    0 and [k, k + 1) to k > 0 (the boundaries have probability 0)."""
    low, high = (k - 1, k) if k < 0 else ((-1, 1) if k == 0 else (k, k + 1))
    with working_precision():
        return laplace_max_cdf(counts, high, scale) - laplace_max_cdf(counts, low, scale)


#: An output below every count: there the probability of each of the d factors moves by e^{ε/2}.
_TRUNCATED_OUTPUT = -3


def _truncated_value_exact():
    p = truncated_max_probability(_LAPLACE_PAIR[0], _TRUNCATED_OUTPUT, 2 / EPSILON)
    q = truncated_max_probability(_LAPLACE_PAIR[1], _TRUNCATED_OUTPUT, 2 / EPSILON)
    return log_ratio(p, q), 0.0


def _exponential_value_exact():
    """max < 1 has P = (1 − e^{−ε/2})^d on all-zero counts and Q = 0 on all-one counts."""
    with working_precision():
        p = (1 - mpmath.exp(-mpmath.mpf(EPSILON) / 2)) ** QUERIES
    return (float("inf") if p > 0 else 0.0), float(p)


# ---------------------------------------------------------------------------
# OpenDP issue 2911: exponential-noise noisy max stated with the exponential mechanism's ρ.

#: The issue's reproducer: two scores, scale 1, L∞ distance 1 (every score moves by <= 1);
#: its (0, 0) against (1, −1) shifted by 1 (counts are non-negative; argmax is shift invariant).
OPENDP_SCALE, OPENDP_PAIR = 1.0, ((1, 1), (2, 0))
#: ε of the map for non-monotone scores: 2Δ/scale.
OPENDP_EPSILON = 2.0 / OPENDP_SCALE
#: The claim's head point: the ε where the true δ on the pair is furthest above the claimed
#: curve (ratio 1.54; the pair violates the curve for ε in about (0.55, 1.85)).
OPENDP_HEAD_EPSILON = 1.5


def _argmax_batch(counts, size, rng, *, scale, noise):
    q = validate_counts(counts).astype(float)
    draw = rng.exponential if noise == "exponential" else rng.gumbel
    return np.argmax(q + draw(scale=scale, size=(size, q.size)), axis=1)[:, None].astype(np.int64)


def opendp_noisy_max_claim(rho):
    """ρ-zCDP for scores at L∞ distance 1, headed at ``OPENDP_HEAD_EPSILON``."""
    return PrivacyClaim.from_profile(
        ZeroConcentratedDP(rho), BoundedChange(1), epsilon=OPENDP_HEAD_EPSILON
    )


def _opendp_noisy_max(name, noise, rho):
    function = functools.partial(_argmax_batch, scale=OPENDP_SCALE, noise=noise)
    return black_box(function, claim=opendp_noisy_max_claim(rho), width=1, name=name)


def exponential_argmax_law(counts, scale):
    """Exact law of argmax(q + Exp(scale)) over two scores: X₁ − X₀ ~ Laplace(scale), so
    P(1) = P(X₁ − X₀ > q₀ − q₁)."""
    a, b = (int(c) for c in validate_counts(counts))
    with working_precision():
        one = 1 - laplace_cdf(a - b, scale)
        return [1 - one, one]


def _opendp_noisy_max_exact():
    """(ε at the claimed head δ, δ at the head ε) on the pair, from the two-outcome laws."""
    p, q = (exponential_argmax_law(c, OPENDP_SCALE) for c in OPENDP_PAIR)
    claim = opendp_noisy_max_claim(OPENDP_EPSILON**2 / 8)
    with working_precision():

        def delta_at(epsilon):
            factor = mpmath.exp(mpmath.mpf(epsilon))
            forward = mpmath.fsum(max(0, a - factor * b) for a, b in zip(p, q))
            backward = mpmath.fsum(max(0, b - factor * a) for a, b in zip(p, q))
            return max(forward, backward)

        # P(1 | (1, 1)) = ½ against P(1 | (2, 0)): δ(ε) = ½ − e^ε P(1 | (2, 0)) on outcome 1.
        epsilon = mpmath.log((p[1] - mpmath.mpf(claim.delta)) / q[1])
        return float(epsilon), float(delta_at(OPENDP_HEAD_EPSILON))


# ---------------------------------------------------------------------------
# ryan112358/mbi issue 65: JAM's exponential mechanism run at sensitivity 2 on scores of
# sensitivity 4.

#: JAM's defaults (``default_params``): ε = 1, δ = 1e-9 overall, 30 rounds, a share α = 0.2
#: of each round's ρ for selection.
JAM_EPSILON, JAM_DELTA, JAM_ROUNDS, JAM_ALPHA = 1.0, 1e-9, 30, 0.2
#: The scores' true L∞ sensitivity and the one the code states.
JAM_TRUE_SENSITIVITY, JAM_STATED_SENSITIVITY = 4, 2


def jam_selection_epsilon():
    """ε of one round's selection at JAM's defaults: ρ = cdp_rho(ε, δ) (the smallest ρ whose
    Canonne–Kamath–Steinke 2020 conversion, Prop. 12 as ``mechanisms/cdp2adp.py`` codes it,
    gives (ε, δ)), ρ_select = αρ/rounds (``adaptive_split`` after a private measurement), and
    ε = √(8 ρ_select) (``exponential_mech_eps``)."""
    low, high = 0.0, JAM_EPSILON + 1.0
    for _ in range(200):
        mid = (low + high) / 2
        if ZeroConcentratedDP(mid).delta_at(JAM_EPSILON) <= JAM_DELTA:
            low = mid
        else:
            high = mid
    return float(np.sqrt(8 * low * JAM_ALPHA / JAM_ROUNDS))


JAM_SELECTION_EPSILON = jam_selection_epsilon()
JAM_RELATION = BoundedChange(JAM_TRUE_SENSITIVITY)


def _softmax_batch(counts, size, rng, *, factor):
    """mbi's ``exponential_mechanism``: P(i) = softmax(factor · (q − max q)), drawn by
    ``rng.choice`` as mbi draws it (``prng.choice(p.size, p=p)``)."""
    q = validate_counts(counts).astype(float)
    weights = np.exp(factor * (q - q.max()))
    choice = rng.choice(q.size, size=size, p=weights / weights.sum())
    return choice[:, None].astype(np.int64)


def _jam(name, sensitivity):
    factor = 0.5 * JAM_SELECTION_EPSILON / sensitivity
    function = functools.partial(_softmax_batch, factor=factor)
    return black_box(function, claim=(JAM_SELECTION_EPSILON, 0.0, JAM_RELATION), width=1, name=name)


def softmax_law(counts, factor):
    """Exact law of the exponential mechanism: exp(factor · q_i) / Σ_j exp(factor · q_j)."""
    q = [int(c) for c in validate_counts(counts)]
    with working_precision():
        weights = [mpmath.exp(mpmath.mpf(factor) * c) for c in q]
        total = mpmath.fsum(weights)
        return [w / total for w in weights]


#: A score up by 4 while every other one moves down by 4: outcome 0's loss is
#: 4a − ln(Z'/Z) for a = ε/(2Δ) (mpmath: 0.0450 on five scores against the claimed 0.0283).
JAM_PAIR = ((4, 4, 4, 4, 4), (8, 0, 0, 0, 0))
#: The witness of the supremum: outcome 0's weight negligible beside the others' (a·L = 70).
_JAM_FAR = 10_000


def _jam_exact():
    """The supremum 8a = 2ε: outcome 0 on (0, L, …, L) → (4, L − 4, …, L − 4), where
    Z'/Z → e^{−4a} as L grows; at L = 10⁴ the gap to 8a is below e^{−70} (mpmath)."""
    factor = 0.5 * JAM_SELECTION_EPSILON / JAM_STATED_SENSITIVITY
    far = _JAM_FAR
    p = softmax_law((4,) + (far - 4,) * 4, factor)[0]
    q = softmax_law((0,) + (far,) * 4, factor)[0]
    return log_ratio(p, q), 0.0


_STATDP = "Ding et al., CCS 2018 (StatDP) Alg. {alg}, statdp/algorithms.py {fn}"
_SNIPER = "DP-Sniper (Bichsel et al., S&P 2021) {cls}"

ENTRIES = (
    CorpusEntry(
        name="rnm-laplace-max-value",
        family="noisy max",
        bug="Laplace(2/ε) report noisy max releases the noisy maximum instead of its index",
        source=_STATDP.format(alg=7, fn="noisy_max_v1b")
        + "; "
        + _SNIPER.format(cls="ReportNoisyMax3"),
        build=lambda: _build("rnm-laplace-max-value", "laplace", "value"),
        true=TrueGuarantee(
            QUERIES * EPSILON / 2,
            0.0,
            "exact: closed form dε/2 (each of the d factors of the density of the maximum "
            "changes by at most e^{ε/2}, and all do below every count); mpmath density ratio",
            _laplace_value_exact,
        ),
        pair=_LAPLACE_PAIR,
        twin=lambda: _build("rnm-laplace-index", "laplace", "index"),
        twin_source=_STATDP.format(alg=5, fn="noisy_max_v1a")
        + "; "
        + _SNIPER.format(cls="ReportNoisyMax1"),
    ),
    CorpusEntry(
        name="rnm-exponential-max-value",
        family="noisy max",
        bug="exponential-noise report noisy max releases the noisy maximum instead of its index",
        source=_STATDP.format(alg=8, fn="noisy_max_v2b")
        + "; "
        + _SNIPER.format(cls="ReportNoisyMax4"),
        build=lambda: _build("rnm-exponential-max-value", "exponential", "value"),
        true=TrueGuarantee(
            float("inf"),
            float((1 - mpmath.exp(-mpmath.mpf(EPSILON) / 2)) ** QUERIES),
            "exact: the maximum lies below every count + 1 with P = (1 − e^{−ε/2})^d on "
            "all-zero counts and Q = 0 on all-one counts (closed form, mpmath): no finite ε; "
            "δ at the claimed ε is at least that P",
            _exponential_value_exact,
        ),
        pair=_LAPLACE_PAIR,
        twin=lambda: _build("rnm-exponential-index", "exponential", "index"),
        twin_source=_STATDP.format(alg=6, fn="noisy_max_v2a")
        + "; "
        + _SNIPER.format(cls="ReportNoisyMax2"),
    ),
    CorpusEntry(
        name="rnm-laplace-max-int",
        family="noisy max",
        bug="Laplace(2/ε) report noisy max releases the noisy maximum, truncated to an "
        "integer, instead of its index",
        source="Wang et al., CCS 2020 (CheckDP), cmla-psu/checkdp examples/badnoisymax.c "
        "(BadNoisyMax: int max = q[i] + eta), DP-Sniper's setting",
        build=lambda: _build("rnm-laplace-max-int", "laplace", "int"),
        true=TrueGuarantee(
            QUERIES * EPSILON / 2,
            0.0,
            "exact: P(int(max) = −3) on the pair (mpmath, from the CDF of the maximum); below "
            "every count the CDF is 2^{−d} e^{(dx − Σq)/b}, so the ratio is e^{dε/2} exactly, "
            "the supremum of the untruncated maximum's loss",
            _truncated_value_exact,
        ),
        pair=_LAPLACE_PAIR,
        twin=lambda: _build("rnm-laplace-index", "laplace", "index"),
        twin_source="cmla-psu/checkdp examples/noisymax.c (the index); "
        + _STATDP.format(alg=5, fn="noisy_max_v1a"),
    ),
    CorpusEntry(
        name="opendp-noisy-max-zcdp",
        family="noisy max",
        bug="report noisy max with exponential noise (permute-and-flip) claims the "
        "exponential mechanism's ρ = ε²/8; permute-and-flip is not ε-bounded range",
        source="opendp/opendp issue 2911 (make_noisy_max uses four times more privacy budget "
        "than claimed under zCDP), the issue's reproducer: scores (0, 0) against (1, −1) "
        "(here shifted to (1, 1) and (2, 0)), scale 1",
        build=lambda: _opendp_noisy_max(
            "opendp-noisy-max-zcdp", "exponential", OPENDP_EPSILON**2 / 8
        ),
        true=TrueGuarantee(
            1.704921676,
            0.1967346701,
            "exact: P(1) = e^{−2}/2 on (2, 0) against ½ on (1, 1) (X₁ − X₀ is Laplace; "
            "mpmath): at the head ε = 1.5 the pair's δ is 0.197 against the claimed "
            "curve's 0.128 (ρ = 0.5, Canonne–Kamath–Steinke conversion); ε at the claimed δ "
            "1.70. A lower bound (one pair of two scores); the true ρ is ε²/2 = 2",
            _opendp_noisy_max_exact,
        ),
        pair=OPENDP_PAIR,
        twin=lambda: _opendp_noisy_max("opendp-noisy-max-gumbel", "gumbel", OPENDP_EPSILON**2 / 8),
        twin_source="OpenDP make_noisy_max as its noisy_top_k measurement draws it for "
        "ZeroConcentratedDivergence elsewhere in its history: Gumbel noise, the exponential "
        "mechanism (ε-bounded range, so ρ = ε²/8 holds; Cesar & Rogers 2021)",
        audit_options={"domain_size": 2},
    ),
    CorpusEntry(
        name="jam-exponential-sensitivity",
        family="noisy max",
        bug="the exponential mechanism selects with sensitivity 2, but the scores "
        "model_error − pub_error move by up to 4 (both errors, opposite ways): 2ε, not ε",
        source="ryan112358/mbi issue 65 (Sensitivity misscalibration for the JAM algorithm: "
        "mechanisms/jam.py score_sensitivity_exp_mech = 2), JAM's defaults (ε = 1, δ = 1e-9, "
        "30 rounds, α = 0.2: ε = 0.0283 per selection)",
        build=lambda: _jam("jam-exponential-sensitivity", JAM_STATED_SENSITIVITY),
        true=TrueGuarantee(
            2 * JAM_SELECTION_EPSILON,
            0.0,
            "exact: closed form 2ε = 8a (a = ε/4 the code's factor; the exponential "
            "mechanism's loss on scores at L∞ distance 4 is at most 8a), reached in the limit "
            "of outcome 0 on (0, L, …) → (4, L − 4, …): mpmath at L = 10⁴ equals 8a to 20 "
            "digits; on five small scores (4, …, 4) → (8, 0, …, 0) the loss is 0.0450",
            _jam_exact,
        ),
        pair=JAM_PAIR,
        twin=lambda: _jam("jam-exponential-sensitivity-4", JAM_TRUE_SENSITIVITY),
        twin_source="mbi mechanisms/jam.py after issue 65 (score_sensitivity_exp_mech = 4.0), "
        "as in the authors' own implementation (Miguel-Fuentes/JAM_AiStats)",
    ),
)
