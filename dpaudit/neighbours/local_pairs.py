"""Candidate pairs from the local search ([`local_search`][dpaudit.neighbours.local_search]):
the auditor's pair source [`local_search_pairs`][dpaudit.neighbours.local_pairs.local_search_pairs],
and for black boxes, scores from samples alone
([`sampled_epsilon`][dpaudit.neighbours.local_pairs.sampled_epsilon]) and the
[`successive_halving`][dpaudit.neighbours.local_pairs.successive_halving] that spends the draws
the search left on its best pairs.

Validity (auditor use): the search only proposes pairs. Its samples come from its own seed stream
and are never pooled with the confirmation samples (DESIGN.md, "How the auditor is organised").
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable

import numpy as np

from mechanisms.validation import require_nonnegative_int, require_positive_int

from .local_search import Score, ScoredPair, SearchSpace, local_search
from .pairs import NeighbourPair

__all__ = [
    "REFINE_POOL",
    "REFINE_SHARE",
    "REFINE_STAGES",
    "SHRINK",
    "SampledEpsilon",
    "local_search_pairs",
    "sampled_epsilon",
    "successive_halving",
]


Draw = Callable[[list, int], list[tuple[Counter, int]]]


#: Standard errors each count is moved against the pair by ``sampled_epsilon``.
SHRINK = 1.0
#: The auditor's local search: share of its draws spent by ``successive_halving``,
#: the pool it halves, in multiples of the pairs returned (four rounds of halving), and
#: the stages of search-then-halve (each later stage starts from the pairs kept so far).
REFINE_SHARE, REFINE_POOL, REFINE_STAGES = 0.5, 16, 2


def _empirical_epsilon(counter_p, n_p: int, counter_q, n_q: int, delta: float) -> float:
    """Plug-in ε at ``delta`` of two tallies, each count moved one standard error against it.

    The plug-in law over-rates outcomes seen a few times on one side and rarely on the
    other (the winner's curse of a search that keeps the highest scores). Per direction,
    the numerator's count ``a`` becomes ``max(a − SHRINK·√a − ½, 0)`` and the
    denominator's ``b`` becomes ``b + SHRINK·√(b + 1) + ½`` (Poisson standard errors), so
    noise alone rarely scores above 0 and a single stray hit never scores ``∞``.
    """
    outcomes = set(counter_p) | set(counter_q)

    def one_side(a, n_a, b, n_b):
        ratios, mass_p = [], 0.0
        for o in outcomes:
            hits_a, hits_b = a.get(o, 0), b.get(o, 0)
            p = max(hits_a - SHRINK * math.sqrt(hits_a) - 0.5, 0.0) / n_a
            q = (hits_b + SHRINK * math.sqrt(hits_b + 1) + 0.5) / n_b
            if p > q:
                ratios.append((math.log(p / q), p, q))
        ratios.sort(reverse=True)
        active_q = 0.0
        for index, (_, p, q) in enumerate(ratios):
            mass_p += p
            active_q += q
            lower = ratios[index + 1][0] if index + 1 < len(ratios) else 0.0
            if mass_p - math.exp(lower) * active_q > delta:
                return max(math.log((mass_p - delta) / active_q), lower)
        return 0.0

    return max(one_side(counter_p, n_p, counter_q, n_q), one_side(counter_q, n_q, counter_p, n_p))


class SampledEpsilon:
    """A score from samples alone: the shrunk plug-in ε at ``delta`` of each pair (see
    ``_empirical_epsilon``), on tallies pooled over calls.

    ``draw(histograms, n) -> [(Counter of outcomes, n), ...]`` (the threshold search's
    convention, [`threshold_search`][dpaudit.neighbours.threshold_search]) must draw from the
    search's own seed stream. A call draws ``samples`` more of each histogram of its pairs
    (histograms shared within a call are drawn once) and adds them to that histogram's tally, so a
    pair scored again is scored on more draws: its shrinkage falls and a lucky first score
    regresses ([`successive_halving`][dpaudit.neighbours.local_pairs.successive_halving]).
    ``drawn`` counts the draws made.

    Parameters
    ----------
    draw : the sampler.
    delta : the claimed δ.
    samples : draws per histogram per call, >= 1.
    """

    def __init__(self, draw: Draw, delta: float, samples: int):
        self.draw = draw
        self.delta = float(delta)
        self.samples = require_positive_int("samples", samples)
        self.tallies: dict[tuple[int, ...], tuple[Counter, int]] = {}
        self.drawn = 0

    def __call__(self, low: np.ndarray, high: np.ndarray, samples: int | None = None) -> np.ndarray:
        """Scores of the pairs ``(low[i], high[i])`` after ``samples`` (default
        ``samples``) more draws of each of their histograms."""
        n = self.samples if samples is None else require_positive_int("samples", samples)
        histograms = sorted({tuple(int(v) for v in row) for row in np.concatenate([low, high])})
        for h, (counter, size) in zip(histograms, self.draw([list(h) for h in histograms], n)):
            old, old_size = self.tallies.get(h, (Counter(), 0))
            self.tallies[h] = (old + counter, old_size + int(size))
            self.drawn += int(size)

        def tally(row) -> tuple[Counter, int]:
            return self.tallies[tuple(int(v) for v in row)]

        return np.array(
            [_empirical_epsilon(*tally(a), *tally(b), self.delta) for a, b in zip(low, high)]
        )


def sampled_epsilon(draw: Draw, delta: float, samples: int) -> SampledEpsilon:
    """The score from samples alone
    ([`SampledEpsilon`][dpaudit.neighbours.local_pairs.SampledEpsilon]) at ``samples`` draws per
    histogram per call."""
    return SampledEpsilon(draw, delta, samples)


def successive_halving(
    score: SampledEpsilon, pairs, samples: int, *, keep: int, eta: int = 2
) -> tuple[ScoredPair, ...]:
    """The ``keep`` best of ``pairs`` after rounds of more draws on the better half.

    Successive halving (Jamieson & Talwalkar 2016; Karnin, Koren & Somekh 2013): each
    round draws the same share of ``samples`` over the histograms of the pairs still in,
    adds the draws to their tallies
    ([`SampledEpsilon`][dpaudit.neighbours.local_pairs.SampledEpsilon]), rescores them and keeps
    the best ``1/eta`` (at least ``keep``). Scores a search ranked on few draws are noisy and the
    best of many are lucky; pooled draws let a truly high pair hold its place and let the loss on
    outcomes of small mass (seen a few times in a search's draws) show. A general capability of any
    sampled search; it only reorders and filters pairs.

    Parameters
    ----------
    score : the pooled score the pairs were ranked by.
    pairs : [`ScoredPair`][dpaudit.neighbours.local_search.ScoredPair] candidates, best first.
    samples : draws the rounds may make in all, >= 0 (never exceeded).
    keep : pairs returned, >= 1.
    eta : the share kept per round is ``1/eta``, >= 2.
    """
    keep = require_positive_int("keep", keep)
    eta = require_positive_int("eta", eta, minimum=2)
    alive = list(pairs)
    rounds = 0
    while eta**rounds * keep < len(alive):
        rounds += 1
    spent = 0
    for round_ in range(rounds):
        histograms = {h for p in alive for h in (p.counts, p.counts2)}
        n = (int(samples) - spent) // ((rounds - round_) * len(histograms))
        if n < 1:
            break
        low = np.array([p.counts for p in alive], dtype=np.int64)
        high = np.array([p.counts2 for p in alive], dtype=np.int64)
        before = score.drawn
        values = score(low, high, n)
        spent += score.drawn - before
        ranked = sorted(
            (ScoredPair(p.counts, p.counts2, float(v)) for p, v in zip(alive, values)),
            key=lambda p: (-p.score, p.counts, p.counts2),
        )
        alive = ranked[: max(keep, -(-len(alive) // eta))]
    return tuple(alive[:keep])


def local_search_pairs(
    estimate: Score,
    d: int,
    max_count: int,
    relation,
    *,
    seed: np.random.SeedSequence | int = 0,
    budget: int = 1_000,
    chains: int = 8,
    top: int = 20,
    temperature: float = 0.05,
    starts=(),
    draws: int = 0,
    pool: int | None = None,
) -> tuple[NeighbourPair, ...]:
    """Candidate pairs for the auditor: the ``top`` best of a local search on ``estimate``.

    ``estimate(low, high) -> scores`` estimates the privacy loss of each pair at the claimed δ —
    from samples of a black box ([`sampled_epsilon`][dpaudit.neighbours.local_pairs.sampled_epsilon]
    on a ``draw`` from the search's own seed stream, never on confirmation samples; at 2000 draws
    per histogram the default budget costs at most 4M draws), or from an exact law when one exists
    ([`dpaudit.exact.worst_case.ExactEpsilonScore`][dpaudit.exact.worst_case.ExactEpsilonScore]).
    Family ``"local search"``. Given ``draws`` (a sampled estimate only), the search keeps its
    ``pool`` best pairs and [`successive_halving`][dpaudit.neighbours.local_pairs.successive_halving]
    spends the draws the search left to pick the ``top`` of them.

    Parameters
    ----------
    estimate : the score (see [`local_search`][dpaudit.neighbours.local_search.local_search]).
    d, max_count, relation : the space searched
        ([`SearchSpace`][dpaudit.neighbours.local_search.SearchSpace]).
    seed : the search's own ``SeedSequence`` (or int).
    budget : distinct pairs estimated.
    chains : chains in lockstep.
    top : pairs returned.
    temperature : initial annealing temperature (estimates are noisy: a little warmer).
    starts : optional ``(counts, step index)`` states the first chains start from.
    draws : the estimate's draws in all, search and halving, >= 0 (0: no halving;
        needs a [`SampledEpsilon`][dpaudit.neighbours.local_pairs.SampledEpsilon]; ``budget`` must
        leave some).
    pool : pairs the halving starts from (default ``REFINE_POOL · top``).
    """
    draws = require_nonnegative_int("draws", draws)
    if draws and not isinstance(estimate, SampledEpsilon):
        raise ValueError(
            "draws needs a SampledEpsilon estimate (exact scores need no more draws), "
            f"got {type(estimate).__name__}; pass draws=0"
        )
    pool = REFINE_POOL * top if pool is None else require_positive_int("pool", pool)
    space = SearchSpace(d, max_count, relation)
    search = functools.partial(
        local_search, estimate, space, chains=chains, temperature=temperature
    )
    if draws:
        found = _search_and_halve(
            search, space, estimate, seed, budget, draws, pool, top, starts, chains
        )
    else:
        found = search(seed=seed, budget=budget, keep=top, starts=starts).pairs
    return tuple(NeighbourPair(p.counts, p.counts2, "local search") for p in found)


def _search_and_halve(search, space, estimate, seed, budget, draws, pool, top, starts, chains):
    """The ``top`` pairs of ``REFINE_STAGES`` stages, each a ``search`` (on its child of ``seed``,
    a share of ``budget``, started from the best so far) keeping ``pool`` pairs, then
    [`successive_halving`][dpaudit.neighbours.local_pairs.successive_halving] on the draws the
    stages left (some reserved for the stages to come)."""
    assert isinstance(estimate, SampledEpsilon)  # local_search_pairs checked: draws need one
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    per_pair = 2 * estimate.samples
    best: tuple[ScoredPair, ...] = ()
    for stage, stage_seed in enumerate(root.spawn(REFINE_STAGES)):
        left = REFINE_STAGES - stage
        stage_budget = budget // REFINE_STAGES
        found = search(
            seed=stage_seed,
            budget=stage_budget,
            keep=pool,
            starts=starts if stage == 0 else _states(best[:chains], space),
        ).pairs
        reserved = (left - 1) * stage_budget * per_pair
        halving = max(0, draws - estimate.drawn - reserved) // left
        merged = {(p.counts, p.counts2): p for p in found + best}
        best = successive_halving(estimate, list(merged.values()), halving, keep=top)
    return best


def _states(pairs, space: SearchSpace) -> list[tuple[np.ndarray, int]]:
    """Scored pairs as search states ``(counts, step index)`` (pairs off ``space`` dropped)."""
    steps = space.steps
    states = []
    for p in pairs:
        low = np.array(p.counts, dtype=np.int64)
        match = np.flatnonzero(np.all(steps == np.array(p.counts2) - low, axis=1))
        if match.size and low.max(initial=0) <= space.max_count:
            states.append((low, int(match[0])))
    return states
