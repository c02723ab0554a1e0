"""Exact output laws of the exponential-mechanism / Gumbel family and the limited domain.

Every mechanism here reports a prefix of the order of independent noisy scores
``ε s_j + Gumbel(1)`` over a candidate set (seed 003, 003_9293f5da18078e1b.txt,
Section 4.1 and Alg. 1). Two exact routes are implemented, derived from the
papers independently of the samplers in [`mechanisms`][mechanisms]:

* peeling (Plackett–Luce): with ``w_j = exp(ε s_j)``, the ordered prefix
  ``(j_1, ..., j_r)`` has probability ``Π_t w_{j_t} / Σ_{j unused before t} w_j``
  (seed 003 Section 4.1, pEM^k; Lemma 4.2: equal in law to the Gumbel top-k);
* Gumbel order statistics: ``P(X_{j_1} > ... > X_{j_r} > max of the rest)``
  integrated in closed form from the Gumbel CDF ``G_a(x) = exp(-e^{a-x})``
  (inclusion–exclusion; see
  [`gumbel_chain_probability`][dpaudit.exact.gumbel_laws.gumbel_chain_probability]).

``PeelingEM``, ``ExponentialMechanism`` and the limited-domain family use the
peeling route; ``GumbelTopK`` uses the order-statistics route, so the test
``law(PeelingEM) == law(GumbelTopK)`` checks Lemma 4.2 by two derivations.

Limited domain (seed 003 Alg. 1): the candidates are the true top-k̄ in rank
order (count high first, ties to the lower id: the tie-break decides which
items are candidates), plus ⊥ with score
``h_⊥ = h_(k̄+1) + 1 + ln(min{Δ, k̄, d − k̄}/δ)/ε``; the outcome stops at ⊥.
For d <= k̄ the missing ``h_(k̄+1)`` is 0 and the size term is floored at 1
(the convention of [`mechanisms.limit_domain`][mechanisms.limit_domain]). The strict variant
(seed 002, 002_a192ff3c12785105.txt, §6.2, domain (9)) keeps only candidates
with count > h_(k̄+1) and uses ``ln(k̄/δ)``; the optimized variant (seed 002
§6.3) first picks k̄ ∈ {k, ..., kbar_max} with probability ∝ exp(−ε h_⊥(k̄)),
so its law is the mixture of the LimitDomain laws.

All arithmetic is mpmath at ``dpaudit.exact.law.DEFAULT_DIGITS`` digits.
Limited-domain laws are memoised on the shift-invariant signature
``(candidate counts − h_(k̄+1), size term, δ, ε, k)``, so an exhaustive sweep
over many histograms reuses most of its work.
"""

from __future__ import annotations

import functools
import itertools
import math

import mpmath
import numpy as np

from mechanisms import (
    BOTTOM,
    ExponentialMechanism,
    GumbelTopK,
    LimitDomain,
    LimitDomainOptimizedKbar,
    PeelingEM,
    StrictLimitDomain,
    as_top_counts,
    validate_counts,
)

from .law import DEFAULT_DIGITS, output_law, working_precision

__all__ = [
    "gumbel_chain_probability",
    "limit_domain_size_term",
    "plackett_luce_law",
]

# Extra digits for the inclusion–exclusion route, whose signed sum cancels.
_GUARD_DIGITS = 20
_CACHE_SIZE = 1 << 16


def plackett_luce_law(weights, labels, k: int, stop: int | None = None) -> dict:
    """Law of the Plackett–Luce k-prefix over candidates with positive ``weights``.

    Seed 003 (003_9293f5da18078e1b.txt) Section 4.1 (peeling EM) and Alg. 1
    (the prefix ends at ⊥). Each remaining total is summed afresh from the
    unused weights (not ``W − used``), so no digits cancel when dominant
    candidates are removed.

    Parameters
    ----------
    weights : sequence of mpmath.mpf > 0, one per candidate.
    labels : the output id of each candidate (⊥ is labelled BOTTOM).
    k : the number of draws; a prefix also ends at ``stop`` or when the
        candidates run out.
    stop : index of the stop candidate (⊥) in ``weights``, or None.

    Returns
    -------
    dict
        ``{tuple of labels: mpf}``; call inside ``working_precision()``.
    """
    m = len(weights)
    depth = min(k, m)
    law = {}
    used = [False] * m

    def extend(prefix, prob, level):
        free = [j for j in range(m) if not used[j]]
        total = mpmath.fsum(weights[j] for j in free)
        for j in free:
            p = prob * weights[j] / total
            outcome = prefix + (labels[j],)
            if j == stop or level + 1 == depth:
                law[outcome] = p
            else:
                used[j] = True
                extend(outcome, p, level + 1)
                used[j] = False

    extend((), mpmath.mpf(1), 0)
    return law


def gumbel_chain_probability(chain_log_weights, rest_log_weights) -> mpmath.mpf:
    """``P(X_1 > X_2 > ... > X_r > max_j Y_j)`` for independent Gumbel(location, 1) noise.

    Seed 003 (003_9293f5da18078e1b.txt) Section 4.1 (M^k_Gumbel: add Gumbel
    noise and sort). With ``G_S(x) = exp(−w_S e^{−x})`` the CDF of the max over
    a set S (``w_S = Σ_S e^{a}``, a the locations), ``g_j G_S = w_j/(w_j + w_S)
    · d/dx G_{S∪j}``, so integrating the chain from the top down keeps every
    partial integral a signed sum ``Σ_S c_S G_S(x)`` (inclusion–exclusion
    over the items above); the last integral over the whole line gives
    ``Σ_S c_S w_r / (w_r + w_S + w_rest)``. 2^(r−1) terms, computed with extra
    guard digits because the signs alternate.

    Parameters
    ----------
    chain_log_weights : locations ``a_1, ..., a_r`` (r >= 1) of the chain, top first.
    rest_log_weights : locations of every other candidate (may be empty).
    """
    with mpmath.workdps(mpmath.mp.dps + _GUARD_DIGITS):
        chain = [mpmath.exp(mpmath.mpf(a)) for a in chain_log_weights]
        rest = mpmath.fsum(mpmath.exp(mpmath.mpf(a)) for a in rest_log_weights)
        # h(x) = ∫_x^∞ (density of X_1 ... X_{t}, chained) as {w_S: c_S}; S = ∅ has w = 0.
        terms = {mpmath.mpf(0): mpmath.mpf(1)}
        for w in chain[:-1]:
            # ∫_x^∞ g_w(y) Σ c_S G_S(y) dy = Σ c_S w/(w + w_S) (1 − G_{S∪w}(x)).
            new: dict = {}
            for w_s, c in terms.items():
                factor = c * w / (w + w_s)
                new[mpmath.mpf(0)] = new.get(mpmath.mpf(0), 0) + factor
                new[w_s + w] = new.get(w_s + w, 0) - factor
            terms = new
        last = chain[-1]
        total = mpmath.fsum(c * last / (last + w_s + rest) for w_s, c in terms.items())
    return +total  # round to the caller's precision


def limit_domain_size_term(domain_size: int, kbar: int, max_items: int | None) -> int:
    """``min{Δ, k̄, d − k̄}`` of seed 003 Alg. 1 line 2, floored at 1 when d <= k̄."""
    size = min(kbar, domain_size - kbar) if domain_size > kbar else 1
    return size if max_items is None else min(size, max_items)


# ---------------------------------------------------------------- full domain


def _em_weights(counts: np.ndarray, epsilon: float) -> list:
    # Shift by the max count: the law is shift-invariant and exp stays O(1).
    top = int(counts.max())
    eps = mpmath.mpf(epsilon)
    return [mpmath.exp(eps * (int(c) - top)) for c in counts]


@output_law.register(ExponentialMechanism)
def exponential_mechanism_law(mech: ExponentialMechanism, counts) -> dict:
    """Law of the exponential mechanism: ``P(i) = e^{ε c_i} / Σ_j e^{ε c_j}``.

    Seed 003 (003_9293f5da18078e1b.txt) Def. 4.1 with q(h, i) = h_i.

    Parameters
    ----------
    mech : the ExponentialMechanism.
    counts : full histogram.
    """
    counts = validate_counts(counts)
    with working_precision():
        weights = _em_weights(counts, mech.epsilon)
        total = mpmath.fsum(weights)
        return {(i,): w / total for i, w in enumerate(weights)}


@output_law.register(PeelingEM)
def peeling_law(mech: PeelingEM, counts) -> dict:
    """Law of k rounds of the exponential mechanism without replacement (Plackett–Luce).

    Seed 003 (003_9293f5da18078e1b.txt) Section 4.1, pEM^k_q: round t picks an
    unused i with probability ``e^{ε c_i} / Σ_{unused} e^{ε c_j}``. With d < k
    the outcome is all d items in some order.

    Parameters
    ----------
    mech : the PeelingEM.
    counts : full histogram.
    """
    counts = validate_counts(counts)
    with working_precision():
        weights = _em_weights(counts, mech.epsilon)
        return plackett_luce_law(weights, list(range(counts.size)), mech.k)


@output_law.register(GumbelTopK)
def gumbel_top_k_law(mech: GumbelTopK, counts) -> dict:
    """Law of the one-shot Gumbel top-k, from the Gumbel order statistics directly.

    Seed 003 (003_9293f5da18078e1b.txt) Section 4.1, M^k_Gumbel: the outcome
    ``(i_1..i_k)`` is the event ``X_{i_1} > ... > X_{i_k} > max_{rest} X`` with
    ``X_i = ε c_i + Gumbel(1)``, evaluated by
    [`gumbel_chain_probability`][dpaudit.exact.gumbel_laws.gumbel_chain_probability] (not by the
    peeling product, so Lemma 4.2 can be checked against
    [`peeling_law`][dpaudit.exact.gumbel_laws.peeling_law]).

    Parameters
    ----------
    mech : the GumbelTopK.
    counts : full histogram.
    """
    counts = validate_counts(counts)
    d = counts.size
    r = min(mech.k, d)
    top = int(counts.max())
    # The signed inclusion–exclusion sum loses up to log10(w_max / w_min)
    # digits per chain level to cancellation: carry that many extra.
    guard = math.ceil(mech.epsilon * (top - int(counts.min())) * r / math.log(10))
    with working_precision(DEFAULT_DIGITS + guard):
        eps = mpmath.mpf(mech.epsilon)
        locations = [eps * (int(c) - top) for c in counts]
        law = {}
        for chain in _ordered_selections(d, r):
            rest = [locations[j] for j in range(d) if j not in chain]
            law[chain] = gumbel_chain_probability([locations[j] for j in chain], rest)
    with working_precision():
        return {outcome: +p for outcome, p in law.items()}


def _ordered_selections(d: int, r: int):
    """All ordered r-tuples of distinct ids in range(d)."""
    return itertools.permutations(range(d), r)


# ------------------------------------------------------------ limited domain


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _limit_domain_core(
    shifted_counts: tuple, size_term: int, delta: float, epsilon: float, k: int
) -> tuple:
    """Law over candidate positions (⊥ = position len(shifted_counts)), memoised.

    ``shifted_counts`` are the candidates' counts minus h_(k̄+1) in rank
    order; the ⊥ score is then ``1 + ln(size_term/δ)/ε`` (seed 003 Alg. 1 line 2).
    Returns a tuple of (positions, mpf) so the cached value is immutable.
    """
    with working_precision():
        eps = mpmath.mpf(epsilon)
        # Weights relative to e^{ε h_(k̄+1)}: candidate e^{ε (c − h)}, ⊥ e^{ε} · size/δ.
        weights = [mpmath.exp(eps * c) for c in shifted_counts]
        weights.append(mpmath.exp(eps) * mpmath.mpf(size_term) / mpmath.mpf(delta))
        n = len(shifted_counts)
        labels = list(range(n)) + [BOTTOM]
        law = plackett_luce_law(weights, labels, k, stop=n)
        return tuple(law.items())


def _limit_domain_law(items, shifted_counts, size_term, delta, epsilon, k) -> dict:
    core = _limit_domain_core(
        tuple(int(c) for c in shifted_counts), int(size_term), float(delta), float(epsilon), int(k)
    )
    ids = [int(i) for i in items]
    return {
        tuple(BOTTOM if p == BOTTOM else ids[p] for p in positions): prob
        for positions, prob in core
    }


def _count_at(top, rank: int) -> int:
    """``h_(rank+1)`` (0-based rank); 0 when the domain has no such item."""
    return int(top.counts[rank]) if rank < len(top) else 0


@output_law.register(LimitDomain)
def limit_domain_law(mech: LimitDomain, counts) -> dict:
    """Law of LimitDom_{k,k̄}: Plackett–Luce prefix over the true top-k̄ and ⊥, stopping at ⊥.

    Seed 003 (003_9293f5da18078e1b.txt) Alg. 1 (Section 4.1 for the
    peeling form): candidates are the first k̄ items in rank order,
    ``h_⊥ = h_(k̄+1) + 1 + ln(min{Δ, k̄, d − k̄}/δ)/ε``.

    Parameters
    ----------
    mech : the LimitDomain.
    counts : full histogram or ``mechanisms.TopCounts`` with >= k̄ + 1 entries.
    """
    top = as_top_counts(counts, mech.kbar + 1)
    h_next = _count_at(top, mech.kbar)
    n = min(mech.kbar, len(top))
    size = limit_domain_size_term(top.domain_size, mech.kbar, mech.max_items)
    return _limit_domain_law(
        top.items[:n], top.counts[:n] - h_next, size, mech.delta, mech.epsilon, mech.k
    )


@output_law.register(StrictLimitDomain)
def strict_limit_domain_law(mech: StrictLimitDomain, counts) -> dict:
    """Law of the strictly limited domain: candidates with count > h_(k̄+1) only.

    Seed 002 (002_a192ff3c12785105.txt) §6.2, domain (9) and Lemma 6.6: the
    top-k̄ items whose count is strictly above h_(k̄+1) (ties at the boundary
    drop out whatever the tie-break), ⊥ score ``h_(k̄+1) + 1 + ln(k̄/δ)/ε``
    (no Δ improvement), otherwise seed 003 Alg. 1.

    Parameters
    ----------
    mech : the StrictLimitDomain.
    counts : full histogram or ``mechanisms.TopCounts`` with >= k̄ + 1 entries.
    """
    top = as_top_counts(counts, mech.kbar + 1)
    h_next = _count_at(top, mech.kbar)
    head = top.counts[: mech.kbar]
    keep = head > h_next
    return _limit_domain_law(
        top.items[: mech.kbar][keep],
        head[keep] - h_next,
        mech.kbar,
        mech.delta,
        mech.epsilon,
        mech.k,
    )


@output_law.register(LimitDomainOptimizedKbar)
def optimized_kbar_law(mech: LimitDomainOptimizedKbar, counts) -> dict:
    """Law of LimitDom with k̄ chosen by the exponential mechanism: a mixture over k̄.

    Seed 002 (002_a192ff3c12785105.txt) §6.3 (seed 003 Section 3, end of
    "Main Algorithm"): k̄ ∈ {k, ..., kbar_max} with probability
    ``∝ exp(−ε h_⊥(k̄))`` (score −h_⊥(k̄), sensitivity 1, monotonic), then
    LimitDom_{k,k̄}; the chosen k̄ is not part of the outcome.

    Parameters
    ----------
    mech : the LimitDomainOptimizedKbar.
    counts : full histogram or ``mechanisms.TopCounts`` with >= kbar_max + 1 entries.
    """
    top = as_top_counts(counts, mech.kbar_max + 1)
    with working_precision():
        eps = mpmath.mpf(mech.epsilon)
        kbars = range(mech.k, mech.kbar_max + 1)
        # exp(−ε h_⊥(k̄)) = e^{−ε h_(k̄+1)} · e^{−ε} · δ / size(k̄); the common
        # e^{−ε} δ and a shift by the largest count cancel in the normalisation.
        h_max = _count_at(top, 0)
        selection = [
            mpmath.exp(-eps * (_count_at(top, kb) - h_max))
            / limit_domain_size_term(top.domain_size, kb, mech.max_items)
            for kb in kbars
        ]
        total = mpmath.fsum(selection)
        mixture: dict = {}
        for kb, weight in zip(kbars, selection):
            h_next = _count_at(top, kb)
            n = min(kb, len(top))
            size = limit_domain_size_term(top.domain_size, kb, mech.max_items)
            part = _limit_domain_law(
                top.items[:n], top.counts[:n] - h_next, size, mech.delta, mech.epsilon, mech.k
            )
            share = weight / total
            for outcome, p in part.items():
                mixture[outcome] = mixture.get(outcome, 0) + share * p
        return mixture
