"""Exact worst-case search: local search over neighbouring pairs driven by exact laws.

Exhaustive [`dpaudit.exact.verify`][dpaudit.exact.verify.verify] covers counts <= 3..5; worst cases
can sit at counts of tens (TopStable(k=2, k̄=3, ε=1, δ=1e-3): (60, 36, 4, 4, 0) vs (61, 36, 4, 5,
0)). [`worst_case`][dpaudit.exact.worst_case.worst_case] runs
[`dpaudit.neighbours.local_search.local_search`][dpaudit.neighbours.local_search.local_search] with
the exact ε at δ of each pair as its score — float64 laws
([`dpaudit.exact.float_law`][dpaudit.exact.float_law]) for speed — then recomputes the best pairs' ε
at δ and δ at the claimed ε in mpmath ([`dpaudit.exact.epsilon_at`][dpaudit.exact.epsilon_at],
[`dpaudit.exact.privacy_profile`][dpaudit.exact.privacy_profile]; Balle & Wang 2018, Thm 5). The
result is a lower bound on the worst case over the family, attained by the reported pair; the
coverage says how much of the family the search scored.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np

from mechanisms.claims import AddRemoveUser, BoundedChange
from mechanisms.validation import require_positive_int, require_probability

from ..neighbours.local_search import SearchSpace, local_search
from ..progress import progress_bar
from .float_laws import float_epsilon, float_law
from .law import output_law, working_precision
from .profile import _one_direction_epsilon, profile_from_laws
from .verify import ABSOLUTE_TOLERANCE, RELATIVE_TOLERANCE

__all__ = [
    "ConfirmedPair",
    "ExactEpsilonScore",
    "WorstCaseCoverage",
    "WorstCaseResult",
    "worst_case",
]


@dataclass(frozen=True)
class ConfirmedPair:
    """A pair recomputed in mpmath: ε at δ (direction that attains it) and δ at the claimed ε.

    Parameters
    ----------
    counts, counts2 : the pair, ordered so that ``counts`` is P in ``δ_{P‖Q}``.
    epsilon_at_delta : exact ε at the target δ.
    delta_at_epsilon : exact two-sided δ at the claimed ε.
    float_epsilon : the float64 value the search ranked it by.
    """

    counts: tuple[int, ...]
    counts2: tuple[int, ...]
    epsilon_at_delta: mpmath.mpf
    delta_at_epsilon: mpmath.mpf
    float_epsilon: float


@dataclass(frozen=True)
class WorstCaseCoverage:
    """How much of the family a worst-case search covered.

    Parameters
    ----------
    d, max_count, relation : the family: pairs ``(c, c + t)`` with ``c`` on ``d`` items,
        counts in ``[0, max_count]``, ``t`` an offset of ``relation``.
    family_pairs : (c, t) states in the family.
    pairs_scored : distinct pairs whose float64 ε was computed.
    histograms : distinct histograms whose law was computed.
    restarts : search chains started (initial starts and restarts).
    proposals : moves proposed.
    confirmed : pairs recomputed in mpmath.
    """

    d: int
    max_count: int
    relation: AddRemoveUser | BoundedChange
    family_pairs: int
    pairs_scored: int
    histograms: int
    restarts: int
    proposals: int
    confirmed: int

    def __str__(self) -> str:
        share = self.pairs_scored / self.family_pairs
        return (
            f"d={self.d}, counts <= {self.max_count}, {self.relation}: "
            f"{self.pairs_scored} of {self.family_pairs} pairs scored ({share:.3g}), "
            f"{self.histograms} laws, {self.restarts} starts, {self.proposals} moves, "
            f"{self.confirmed} confirmed in mpmath"
        )


@dataclass(frozen=True)
class WorstCaseResult:
    """The worst pair a search found, its exact ε at δ and δ at ε, the claim, the coverage.

    Parameters
    ----------
    mechanism : ``repr`` of the mechanism.
    claim_epsilon, claim_delta : the mechanism's claim.
    delta : the δ at which ε is computed (the claim's unless given).
    pair : ``(c, c')`` attaining ``epsilon_at_delta`` (``δ_{P_c‖P_c'}``).
    epsilon_at_delta : exact ε at ``delta`` on ``pair`` (mpmath).
    delta_at_epsilon : exact two-sided δ at ``claim_epsilon`` on ``pair`` (mpmath).
    holds : whether every confirmed pair has δ at ``claim_epsilon`` <= ``claim_delta``
        (up to the tolerance of [`dpaudit.exact.verify`][dpaudit.exact.verify.verify]).
    confirmed : every pair recomputed in mpmath, worst first.
    coverage : what the search covered.
    """

    mechanism: str
    claim_epsilon: float
    claim_delta: float
    delta: float
    pair: tuple[tuple[int, ...], tuple[int, ...]]
    epsilon_at_delta: mpmath.mpf
    delta_at_epsilon: mpmath.mpf
    holds: bool
    confirmed: tuple[ConfirmedPair, ...]
    coverage: WorstCaseCoverage

    def __str__(self) -> str:
        verdict = "within the claim" if self.holds else "EXCEEDS the claim"
        return "\n".join(
            [
                self.mechanism,
                f"claim: ({self.claim_epsilon:.6g}, {self.claim_delta:.6g})-DP -> worst found "
                f"{verdict}",
                f"worst pair found: c={list(self.pair[0])} -> c'={list(self.pair[1])}",
                f"    exact epsilon at delta={self.delta:.6g}: "
                f"{mpmath.nstr(self.epsilon_at_delta, 10)}",
                f"    exact delta at epsilon={self.claim_epsilon:.6g}: "
                f"{mpmath.nstr(self.delta_at_epsilon, 10)}",
                f"searched: {self.coverage}",
                "(a lower bound on the worst case of the family: the search is not exhaustive)",
            ]
        )

    def to_dict(self) -> dict:
        """JSON-ready summary (floats, ``"inf"``; exact values also as 30-digit strings)."""

        def number(value):
            return "inf" if mpmath.isinf(value) else float(value)

        def confirmed(p):
            return {
                "pair": [list(p.counts), list(p.counts2)],
                "epsilon_at_delta": number(p.epsilon_at_delta),
                "delta_at_epsilon": number(p.delta_at_epsilon),
                "float_epsilon": p.float_epsilon if np.isfinite(p.float_epsilon) else "inf",
            }

        c = self.coverage
        return {
            "mechanism": self.mechanism,
            "claim": {"epsilon": self.claim_epsilon, "delta": self.claim_delta},
            "delta": self.delta,
            "pair": [list(self.pair[0]), list(self.pair[1])],
            "epsilon_at_delta": number(self.epsilon_at_delta),
            "epsilon_at_delta_exact": mpmath.nstr(self.epsilon_at_delta, 30),
            "delta_at_epsilon": number(self.delta_at_epsilon),
            "delta_at_epsilon_exact": mpmath.nstr(self.delta_at_epsilon, 30),
            "holds": self.holds,
            "confirmed": [confirmed(p) for p in self.confirmed],
            "coverage": {
                "d": c.d,
                "max_count": c.max_count,
                "relation": str(c.relation),
                "family_pairs": c.family_pairs,
                "pairs_scored": c.pairs_scored,
                "histograms": c.histograms,
                "restarts": c.restarts,
                "proposals": c.proposals,
                "confirmed": c.confirmed,
            },
        }


class ExactEpsilonScore:
    """Score for [`local_search`][dpaudit.neighbours.local_search.local_search]: each pair's exact ε.

    ``score(low, high)`` is the float64 exact ε at ``delta`` of every pair (both
    directions, [`dpaudit.exact.float_epsilon`][dpaudit.exact.float_epsilon] on
    [`dpaudit.exact.float_law`][dpaudit.exact.float_law]); each histogram's law is computed once and
    kept in ``laws``. Use it wherever an exact law exists (e.g.
    ``local_search_pairs(ExactEpsilonScore(mechanism, delta), ...)``).

    Parameters
    ----------
    mechanism : a mechanism with a registered exact law.
    delta : the δ at which ε is computed.
    """

    def __init__(self, mechanism, delta: float):
        self.mechanism = mechanism
        self.delta = require_probability("delta", delta, allow_zero=True, allow_one=True)
        self.laws: dict[tuple, dict] = {}

    def law(self, row) -> dict:
        key = tuple(int(v) for v in row)
        found = self.laws.get(key)
        if found is None:
            found = self.laws[key] = float_law(self.mechanism, np.asarray(key, dtype=np.int64))
        return found

    def __call__(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        return np.array(
            [float_epsilon(self.law(a), self.law(b), self.delta) for a, b in zip(low, high)]
        )


def _confirm(mechanism, counts, counts2, delta, claim_epsilon, value) -> ConfirmedPair:
    with working_precision():
        law_p = output_law(mechanism, np.asarray(counts, dtype=np.int64))
        law_q = output_law(mechanism, np.asarray(counts2, dtype=np.int64))
        target = mpmath.mpf(delta)
        forward = _one_direction_epsilon(law_p, law_q, target)
        backward = _one_direction_epsilon(law_q, law_p, target)
        if backward > forward:
            counts, counts2, forward = counts2, counts, backward
        return ConfirmedPair(
            tuple(counts),
            tuple(counts2),
            forward,
            profile_from_laws(law_p, law_q, claim_epsilon),
            value,
        )


class _Counted:
    """A pair score that reports how many pairs it scored (the progress bar's ticks)."""

    def __init__(self, score, tick):
        self.score, self.tick = score, tick

    def __call__(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        values = self.score(low, high)
        self.tick(len(low))
        return values


def _search(score, space, seed, budget, chains, temperature, confirm, progress):
    """The local search of ``worst_case`` (its parameters), with a progress bar of pairs scored."""
    bar = progress_bar(budget, "pair", desc="worst-case search", disable=not progress)
    try:
        return local_search(
            _Counted(score, bar.update),
            space,
            seed=np.random.SeedSequence(seed),
            budget=budget,
            chains=chains,
            temperature=temperature,
            keep=confirm,
        )
    finally:
        bar.close()


def _result(mechanism, claim, delta, relation, space, score, found, checked) -> WorstCaseResult:
    """The result of ``worst_case`` from its confirmed pairs (``checked``, worst first)."""
    worst = checked[0]
    with working_precision():
        allowed = mpmath.mpf(claim.delta) * (1 + RELATIVE_TOLERANCE) + ABSOLUTE_TOLERANCE
        holds = all(p.delta_at_epsilon <= allowed for p in checked)
    return WorstCaseResult(
        mechanism=repr(mechanism),
        claim_epsilon=float(claim.epsilon),
        claim_delta=float(claim.delta),
        delta=float(delta),
        pair=(worst.counts, worst.counts2),
        epsilon_at_delta=worst.epsilon_at_delta,
        delta_at_epsilon=worst.delta_at_epsilon,
        holds=holds,
        confirmed=tuple(checked),
        coverage=WorstCaseCoverage(
            d=space.d,
            max_count=space.max_count,
            relation=relation,
            family_pairs=space.pairs,
            pairs_scored=found.scored,
            histograms=len(score.laws),
            restarts=found.restarts,
            proposals=found.proposals,
            confirmed=len(checked),
        ),
    )


def worst_case(
    mechanism,
    d: int = 5,
    max_count: int = 100,
    relation=None,
    delta: float | None = None,
    seed: int = 0,
    budget: int = 20_000,
    *,
    chains: int = 8,
    confirm: int = 5,
    temperature: float = 0.02,
    progress: bool = False,
) -> WorstCaseResult:
    """Search the pairs on ``d`` items with counts <= ``max_count`` for the largest exact ε at δ.

    Local search
    ([`dpaudit.neighbours.local_search.local_search`][dpaudit.neighbours.local_search.local_search]:
    moves, raises, gaps, staircases, ties, neighbour changes; ``chains`` chains from seeded generic
    starts, restarts when stuck) scored by the float64 exact ε at ``delta`` of each pair; the
    ``confirm`` best pairs are recomputed in mpmath (``epsilon_at``, ``privacy_profile``; Balle &
    Wang 2018, Thm 5). Same arguments, same result.

    Parameters
    ----------
    mechanism : a mechanism with a registered exact law.
    d : items, >= 1.
    max_count : largest count of the searched side ``c`` (``c + t`` may exceed it by one,
        as in [`dpaudit.exact.verify`][dpaudit.exact.verify.verify]).
    relation : neighbour relation (default: the claim's).
    delta : δ at which ε is computed (default: the claim's δ).
    seed : seed of the search.
    budget : distinct pairs scored.
    chains : search chains run together.
    confirm : best pairs recomputed in mpmath, >= 1.
    temperature : initial annealing temperature, in units of ε.
    progress : show a bar of the pairs scored (of ``budget``) on stderr.
    """
    claim = mechanism.claim
    relation = claim.neighbours if relation is None else relation
    delta = require_probability(
        "delta", claim.delta if delta is None else delta, allow_zero=True, allow_one=True
    )
    confirm = require_positive_int("confirm", confirm)
    space = SearchSpace(d, max_count, relation)
    score = ExactEpsilonScore(mechanism, delta)
    found = _search(score, space, seed, budget, chains, temperature, confirm, progress)
    checked = [
        _confirm(mechanism, p.counts, p.counts2, delta, claim.epsilon, p.score) for p in found.pairs
    ]
    checked.sort(key=lambda p: -p.epsilon_at_delta)
    return _result(mechanism, claim, delta, relation, space, score, found, checked)
