"""Local search over neighbouring histograms: mutate pairs, keep what raises a privacy-loss score.

Fixed families and block-shaped threshold probes miss worst cases shaped like staircases
(TopStable(k=2, k̄=3, ε=1, δ=1e-3): one user added to items 0 and 3 of (60, 36, 4, 4, 0)).
This search walks the space of pairs ``(c, c + t)`` — ``c`` with ``d`` counts in
``[0, max_count]``, ``t`` an offset the relation allows — by the moves a person would try:

* move a few units from one item to another; raise or lower one count, or a few together;
* widen or close a gap: shift the top r items (in rank order) up or down together;
* add a step or a staircase: set the items below rank r to equal steps down from it;
* make or break a tie: set one count to another's, ±1 (ties meet the id tie-break);
* change the neighbour: flip one item of the user's offset (add/remove: ``s ∈ {0,1}^d``);
* reset one count uniformly.

Amounts are log-uniform in ``[1, max_count]``, so both fine and coarse steps are tried.
Several chains run in lockstep (one batched ``score`` call per round), each from a
generic random start on its own ``numpy.random.SeedSequence`` stream, accepting a worse
pair with the simulated-annealing probability ``exp(Δ/τ)``, τ falling linearly to 0 over
the budget; a chain that has not improved for ``patience`` proposals restarts from a
fresh random start. ``score(low, high) -> scores`` is the only contact with the
mechanism: the exact ε of each pair
([`dpaudit.exact.worst_case`][dpaudit.exact.worst_case.worst_case]) or an estimate from samples
([`local_search_pairs`][dpaudit.neighbours.local_pairs.local_search_pairs], for black boxes). Every
distinct pair is scored once; the budget counts distinct pairs scored.

From samples, one look at a few hundred draws per histogram cannot see a loss on outcomes
of small mass, and the best of thousands of noisy scores is mostly luck. The auditor's
search ([`local_search_pairs`][dpaudit.neighbours.local_pairs.local_search_pairs] with ``draws``)
therefore runs in stages: search, then
[`successive_halving`][dpaudit.neighbours.local_pairs.successive_halving] of its best pairs on
pooled draws ([`SampledEpsilon`][dpaudit.neighbours.local_pairs.SampledEpsilon]), the next stage's
chains started from the pairs kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mechanisms.claims import AddRemoveUser, BoundedChange
from mechanisms.validation import require_nonnegative_int, require_positive_int

from .relations import _check_relation, offsets

__all__ = [
    "MOVES",
    "LocalSearchResult",
    "ScoredPair",
    "SearchSpace",
    "local_search",
    "propose",
]

#: The mutation moves and how often each is proposed (weights, normalised).
MOVES = {
    "move": 2.0,
    "raise": 1.0,
    "lower": 1.0,
    "raise few": 0.5,
    "lower few": 0.5,
    "gap": 2.0,
    "staircase": 1.0,
    "tie": 1.0,
    "neighbour": 1.5,
    "reset": 0.5,
}
_MOVE_NAMES = tuple(MOVES)
_MOVE_P = np.array([MOVES[m] for m in _MOVE_NAMES]) / sum(MOVES.values())

Score = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SearchSpace:
    """Pairs ``(c, c + t)``: ``c`` on ``d`` items with counts in ``[0, max_count]``, ``t`` allowed.

    Parameters
    ----------
    d : number of items, >= 1.
    max_count : largest count of ``c``, >= 1 (``c + t`` may leave the box by one step, as
        in [`dpaudit.neighbours.neighbour_pairs`][dpaudit.neighbours.neighbour_pairs]).
    relation : ``AddRemoveUser`` or ``BoundedChange``.
    """

    d: int
    max_count: int
    relation: AddRemoveUser | BoundedChange

    def __post_init__(self):
        object.__setattr__(self, "d", require_positive_int("d", self.d))
        object.__setattr__(self, "max_count", require_positive_int("max_count", self.max_count))
        _check_relation(self.relation)

    @property
    def steps(self) -> np.ndarray:
        """The offsets ``t``: for add/remove the additions only (``(c, c − s)`` is ``(c − s, c)``)."""
        steps = offsets(self.d, self.relation)
        if isinstance(self.relation, AddRemoveUser):
            steps = steps[np.all(steps >= 0, axis=1)]
        return steps

    @property
    def pairs(self) -> int:
        """Number of (c, t) states: ``(max_count + 1)^d`` times the offsets (an upper bound
        on the distinct pairs for bounded change, where ``c + t`` may be negative)."""
        return (self.max_count + 1) ** self.d * int(self.steps.shape[0])


@dataclass(frozen=True)
class ScoredPair:
    """One pair and the score the search gave it."""

    counts: tuple[int, ...]
    counts2: tuple[int, ...]
    score: float


@dataclass(frozen=True)
class LocalSearchResult:
    """The best pairs a local search found, best first, and how much it searched.

    Parameters
    ----------
    pairs : distinct pairs, best score first (at most ``keep``).
    scored : distinct pairs scored (the budget spent).
    proposals : moves proposed (including ones that led to an already scored pair).
    restarts : chains started (initial starts and restarts).
    chains : chains run in lockstep.
    """

    pairs: tuple[ScoredPair, ...]
    scored: int
    proposals: int
    restarts: int
    chains: int


def _amount(rng: np.random.Generator, max_count: int) -> int:
    """Log-uniform integer in [1, max_count]: fine and coarse steps alike."""
    return int(min(max_count, math.floor(math.exp(rng.uniform(0.0, math.log(max_count + 1))))))


def _rank_order(counts: np.ndarray) -> np.ndarray:
    """Item ids by count, high first; ties to the lower id (DESIGN.md, "Order")."""
    return np.lexsort((np.arange(counts.size), -counts))


def propose(
    counts: np.ndarray, step: int, space: SearchSpace, rng: np.random.Generator
) -> tuple[np.ndarray, int, str]:
    """One random move from state ``(counts, step)``; ``step`` indexes ``space.steps``.

    Returns the new counts (clipped to ``[0, max_count]``), the new step index and the
    move's name (see ``MOVES``).
    """
    d, top = space.d, space.max_count
    c = counts.copy()
    move = _MOVE_NAMES[int(rng.choice(len(_MOVE_NAMES), p=_MOVE_P))]
    amount = _amount(rng, top)
    if move == "move" and d >= 2:
        i, j = rng.choice(d, size=2, replace=False)
        a = min(amount, int(c[i]))
        c[i] -= a
        c[j] += a
    elif move in ("raise", "lower"):
        c[rng.integers(d)] += amount if move == "raise" else -amount
    elif move in ("raise few", "lower few"):
        chosen = rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False)
        c[chosen] += amount if move == "raise few" else -amount
    elif move == "gap" and d >= 2:
        order = _rank_order(c)
        r = int(rng.integers(1, d))
        c[order[:r]] += amount if rng.random() < 0.5 else -amount
    elif move == "staircase" and d >= 2:
        order = _rank_order(c)
        r = int(rng.integers(1, d))
        gap = int(rng.integers(0, max(1, amount) + 1))
        base = int(c[order[r - 1]])
        for j, item in enumerate(order[r:], start=1):
            c[item] = base - j * gap
    elif move == "tie" and d >= 2:
        i, j = rng.choice(d, size=2, replace=False)
        c[i] = c[j] + int(rng.integers(-1, 2))
    elif move == "neighbour":
        step = _other_step(step, space, rng)
    else:  # "reset", and moves that need two items on a one-item domain
        c[rng.integers(d)] = rng.integers(0, top + 1)
    return np.clip(c, 0, top), step, move


def _other_step(step: int, space: SearchSpace, rng: np.random.Generator) -> int:
    """Flip one item of the offset (add/remove), or change one coordinate (bounded change)."""
    steps = space.steps
    current = steps[step].copy()
    for _ in range(8):
        candidate = current.copy()
        i = int(rng.integers(space.d))
        if isinstance(space.relation, AddRemoveUser):
            candidate[i] = 1 - candidate[i]
        else:
            m = space.relation.max_change
            candidate[i] = int(rng.integers(-m, m + 1))
        match = np.flatnonzero(np.all(steps == candidate, axis=1))
        if match.size and match[0] != step:
            return int(match[0])
    return int(rng.integers(steps.shape[0]))


def _start(space: SearchSpace, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """A generic random start: uniform counts, a uniform offset."""
    counts = rng.integers(0, space.max_count + 1, size=space.d).astype(np.int64)
    return counts, int(rng.integers(space.steps.shape[0]))


def local_search(
    score: Score,
    space: SearchSpace,
    *,
    seed: np.random.SeedSequence | int = 0,
    budget: int = 2_000,
    chains: int = 8,
    temperature: float = 0.02,
    patience: int | None = None,
    keep: int = 20,
    starts=(),
) -> LocalSearchResult:
    """Search pairs of ``space`` for the highest ``score``; return the best ``keep`` pairs.

    See the module docstring for the moves and the annealing rule.

    Parameters
    ----------
    score : ``score(low, high) -> scores``: ``low``, ``high`` int64 ``(n, d)`` arrays of
        neighbouring histograms, returns ``n`` floats (higher = larger privacy loss;
        ``inf`` allowed).
    space : the pairs searched.
    seed : a ``SeedSequence`` (or an int for one); chain ``j`` draws from its child ``j``.
    budget : distinct pairs scored, >= 1.
    chains : chains run in lockstep (one ``score`` call per round), >= 1.
    temperature : initial annealing temperature τ₀ in units of the score, >= 0
        (0: accept only pairs that score at least as high).
    patience : proposals without improving its best after which a chain restarts
        (default ``max(50, budget // (4 · chains))``).
    keep : number of best pairs returned.
    starts : optional ``(counts, step index)`` states the first chains start from.
    """
    budget = require_positive_int("budget", budget)
    chains = require_positive_int("chains", chains)
    keep = require_positive_int("keep", keep)
    if not temperature >= 0:
        raise ValueError(f"temperature must be >= 0, got {temperature!r}")
    patience = (
        max(50, budget // (4 * chains))
        if patience is None
        else require_nonnegative_int("patience", patience)
    )
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rngs = [np.random.default_rng(child) for child in root.spawn(chains)]
    annealing = _Annealing(_ScoredPairs(score, space.steps, budget), space, rngs, patience)
    annealing.start([(np.asarray(c, dtype=np.int64), int(s)) for c, s in starts])
    while annealing.scored.left() and annealing.proposals < 50 * budget:
        annealing.round(temperature * (1.0 - len(annealing.scored.scores) / budget))
    ranked = sorted(annealing.scored.scores.items(), key=lambda item: (-item[1], item[0]))[:keep]
    return LocalSearchResult(
        pairs=tuple(ScoredPair(low, high, value) for (low, high), value in ranked),
        scored=len(annealing.scored.scores),
        proposals=annealing.proposals,
        restarts=annealing.restarts,
        chains=chains,
    )


class _ScoredPairs:
    """The pairs scored so far, at most ``budget``, each scored once by ``score`` in batches."""

    def __init__(self, score: Score, steps: np.ndarray, budget: int):
        self.score, self.steps, self.budget = score, steps, budget
        self.scores: dict[tuple, float] = {}

    def left(self) -> bool:
        """Whether the budget allows another pair."""
        return len(self.scores) < self.budget

    def key(self, counts, step):
        return tuple(int(v) for v in counts), tuple(int(v) for v in counts + self.steps[step])

    def valid(self, counts, step) -> bool:
        return bool(np.all(counts + self.steps[step] >= 0))

    def evaluate(self, states) -> list[float]:
        """Score the not-yet-scored states (within the budget); return every state's score."""
        fresh: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        for counts, step in states:
            k = self.key(counts, step)
            if (
                k not in self.scores
                and k not in fresh
                and len(self.scores) + len(fresh) < self.budget
            ):
                fresh.append(k)
        if fresh:
            low = np.array([k[0] for k in fresh], dtype=np.int64)
            high = np.array([k[1] for k in fresh], dtype=np.int64)
            values = np.asarray(self.score(low, high), dtype=float)
            if values.shape != (len(fresh),):
                raise ValueError(
                    f"score must return one number per pair ({len(fresh)}), got shape "
                    f"{values.shape}"
                )
            self.scores.update(zip(fresh, (float(v) for v in values)))
        return [self.scores.get(self.key(c, s), -math.inf) for c, s in states]


class _Annealing:
    """The chains of [`local_search`][dpaudit.neighbours.local_search.local_search], run in
    lockstep: chain ``j`` draws from ``rngs[j]``; a chain without improvement for ``patience``
    proposals restarts."""

    def __init__(self, scored: _ScoredPairs, space: SearchSpace, rngs: list, patience: int):
        self.scored, self.space, self.rngs, self.patience = scored, space, rngs, patience
        self.proposals = self.restarts = 0
        self.current: list = []
        self.current_score: list[float] = []
        self.best_score: list[float] = []
        self.stale: list[int] = []

    def fresh_start(self, j: int):
        self.restarts += 1
        for _ in range(100):
            state = _start(self.space, self.rngs[j])
            if self.scored.valid(*state):
                return state
        raise ValueError("no valid start found: max_count or the relation admits no pair")

    def start(self, given: list) -> None:
        """Start every chain: from the ``given`` states first, then fresh."""
        chains = len(self.rngs)
        self.current = [given[j] if j < len(given) else self.fresh_start(j) for j in range(chains)]
        self.restarts += min(len(given), chains)
        self.current_score = self.scored.evaluate(self.current)
        self.best_score = list(self.current_score)
        self.stale = [0] * chains

    def _proposal(self, j: int):
        """A valid move of chain ``j`` (its state if 20 proposals are all invalid)."""
        for _ in range(20):
            here, at = self.current[j]
            counts, step, _move = propose(here, at, self.space, self.rngs[j])
            if self.scored.valid(counts, step):
                return counts, step
        return self.current[j]

    def round(self, tau: float) -> None:
        """One proposal per chain, scored in one call, accepted by the annealing rule at ``tau``."""
        proposed = [self._proposal(j) for j in range(len(self.rngs))]
        self.proposals += len(self.rngs)
        new_score = self.scored.evaluate(proposed)
        for j, rng in enumerate(self.rngs):
            current = self.current_score[j]
            gain = new_score[j] - current if math.isfinite(current) else 0.0
            accept = new_score[j] >= current or (
                tau > 0 and rng.random() < math.exp(max(gain, -700.0) / tau)
            )
            if accept:
                self.current[j], self.current_score[j] = proposed[j], new_score[j]
            if new_score[j] > self.best_score[j]:
                self.best_score[j], self.stale[j] = new_score[j], 0
            else:
                self.stale[j] += 1
            if self.stale[j] > self.patience and self.scored.left():
                self.current[j] = self.fresh_start(j)
                self.current_score[j] = self.scored.evaluate([self.current[j]])[0]
                self.best_score[j], self.stale[j] = self.current_score[j], 0
