"""Events: sets of outcomes whose probabilities the testers compare.

An event is chosen on one set of samples and its probability bounded on
fresh ones, so it must be defined without reference to the confirmation
samples: either an explicit set of outcomes (unions ranked by the estimated
likelihood ratio) or a structural predicate (item ``j`` is output, ``j`` at
position ``m``, output length >= ``m``, ⊥ at position ``m``, the output leaning
``s`` items towards the ones a pair moves up).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import repeat
from typing import Any, cast

import numpy as np

from mechanisms import BOTTOM, batch_from_outcomes

__all__ = [
    "BottomAt",
    "Event",
    "ItemAt",
    "ItemOutput",
    "ItemsFromAtLeast",
    "LengthAtLeast",
    "OutcomeSet",
    "SignedCountAtLeast",
    "candidate_events",
    "counted_hits",
    "event_from_dict",
    "event_hits",
    "events_hits",
    "outcome_matrix",
    "register_event_kind",
    "structural_events",
]


class Event:
    """Base class: ``contains(outcome) -> bool`` and a readable ``describe()``."""

    def contains(self, outcome: tuple[int, ...]) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def mask(self, outcomes, matrix) -> np.ndarray:
        """Membership of each outcome (rows of ``matrix``, see [`outcome_matrix`][dpaudit.auditor.values.outcome_events.outcome_matrix])."""
        return np.fromiter((self.contains(o) for o in outcomes), dtype=bool, count=len(outcomes))

    def describe(self, limit: int | None = 5) -> str:  # pragma: no cover - abstract
        """Readable text; ``limit`` caps the outcomes or items listed (None: all)."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        """The event as JSON data, complete: [`event_from_dict`][dpaudit.auditor.values.outcome_events.event_from_dict] rebuilds it."""
        data = {"kind": _KINDS_BY_CLASS[type(self)]}
        data.update({f.name: getattr(self, f.name) for f in dataclasses.fields(cast(Any, self))})
        return data

    def __str__(self) -> str:
        return self.describe()


def _fmt(outcome):
    return "(" + ", ".join("⊥" if v == BOTTOM else str(v) for v in outcome) + ")"


@dataclass(frozen=True, eq=True)
class OutcomeSet(Event):
    """The union of an explicit set of outcomes."""

    outcomes: frozenset

    def contains(self, outcome):
        return outcome in self.outcomes

    def mask(self, outcomes, matrix):
        return np.fromiter(
            map(self.outcomes.__contains__, outcomes), dtype=bool, count=len(outcomes)
        )

    def describe(self, limit: int | None = 5):
        """``output in {…}``; at most ``limit`` outcomes shown (None: all of them)."""
        items = sorted(self.outcomes)
        shown = ", ".join(_fmt(o) for o in (items if limit is None else items[:limit]))
        more = f", … ({len(items)} outcomes)" if limit is not None and len(items) > limit else ""
        return "output in {" + shown + more + "}"

    def to_dict(self) -> dict:
        return {"kind": "outcomes", "outcomes": [list(o) for o in sorted(self.outcomes)]}


@dataclass(frozen=True)
class ItemOutput(Event):
    """Item ``item`` appears anywhere in the output."""

    item: int

    def contains(self, outcome):
        return self.item in outcome

    def mask(self, outcomes, matrix):
        return (matrix == self.item).any(axis=1)

    def describe(self, limit: int | None = 5):
        return f"item {self.item} is output"


@dataclass(frozen=True)
class ItemAt(Event):
    """The output has ``item`` at (0-based) ``position``."""

    item: int
    position: int

    def contains(self, outcome):
        return len(outcome) > self.position and outcome[self.position] == self.item

    def mask(self, outcomes, matrix):
        if self.position >= matrix.shape[1]:
            return np.zeros(matrix.shape[0], dtype=bool)
        return matrix[:, self.position] == self.item

    def describe(self, limit: int | None = 5):
        label = "⊥" if self.item == BOTTOM else f"item {self.item}"
        return f"{label} at position {self.position}"


@dataclass(frozen=True)
class LengthAtLeast(Event):
    """At least ``length`` real items (⊥ not counted) are output."""

    length: int

    def contains(self, outcome):
        return sum(1 for v in outcome if v != BOTTOM) >= self.length

    def mask(self, outcomes, matrix):
        return (matrix >= 0).sum(axis=1) >= self.length

    def describe(self, limit: int | None = 5):
        return f"at least {self.length} items output"


@dataclass(frozen=True)
class BottomAt(Event):
    """⊥ is output at (0-based) ``position`` (i.e. after exactly ``position`` items)."""

    position: int

    def contains(self, outcome):
        return len(outcome) == self.position + 1 and outcome[-1] == BOTTOM

    def mask(self, outcomes, matrix):
        if self.position >= matrix.shape[1]:
            return np.zeros(matrix.shape[0], dtype=bool)
        # ⊥ is always the last element, so ⊥ in column m means length m + 1.
        return matrix[:, self.position] == BOTTOM

    def describe(self, limit: int | None = 5):
        return f"⊥ at position {self.position}"


@dataclass(frozen=True)
class ItemsFromAtLeast(Event):
    """At least ``count`` of the ``items`` are output (the items a neighbour moves, say)."""

    items: tuple
    count: int

    def contains(self, outcome):
        return sum(1 for v in outcome if v in self.items) >= self.count

    def mask(self, outcomes, matrix):
        return np.isin(matrix, np.asarray(self.items, dtype=np.int64)).sum(axis=1) >= self.count

    def describe(self, limit: int | None = 5):
        return f"at least {self.count} of items {list(self.items)} output"

    def to_dict(self) -> dict:
        return {"kind": "items from at least", "items": list(self.items), "count": self.count}


@dataclass(frozen=True)
class SignedCountAtLeast(Event):
    """The output holds at least ``score`` more of the ``up`` items than of the ``down`` items.

    For a pair whose histograms move many counts in opposite directions (bounded change:
    some queries +1, others −1), a release of per-query indicators (a sparse vector's
    "above" answers, a threshold's released keys) has a log-likelihood ratio that grows
    with each ``up`` item output and each ``down`` item left out; given the shared noise
    it is a sum over the queries. This statistic is that sum with equal weights, and its
    upper tail at ``score = |up|`` is the single most telling pattern ("every up item
    answered above, every down item below"), the event StatDP (Ding et al., CCS 2018,
    Sec. 4) and DP-Sniper (Bichsel et al., S&P 2021, Sec. 7) find for sparse vectors.
    Each occurrence of an id counts (a transcript repeating ids counts each time).

    Parameters
    ----------
    up : the items whose output makes the event likelier (a pair's P counts above Q's).
    down : the items whose output makes it less likely.
    score : the least value of ``#(output ∩ up) − #(output ∩ down)`` in the event.
    """

    up: tuple
    down: tuple
    score: int

    def contains(self, outcome):
        return sum((v in self.up) - (v in self.down) for v in outcome) >= self.score

    def mask(self, outcomes, matrix):
        up = np.isin(matrix, np.asarray(self.up, dtype=np.int64)).sum(axis=1)
        down = np.isin(matrix, np.asarray(self.down, dtype=np.int64)).sum(axis=1)
        return up - down >= self.score

    def describe(self, limit: int | None = 5):
        def listed(items):
            shown = list(items) if limit is None else list(items)[:limit]
            more = f", … ({len(items)} items)" if limit is not None and len(items) > limit else ""
            return "[" + ", ".join(str(v) for v in shown) + more + "]"

        return (
            f"at least {self.score} more of items {listed(self.up)} than of items "
            f"{listed(self.down)} output"
        )

    def to_dict(self) -> dict:
        return {
            "kind": "signed count at least",
            "up": list(self.up),
            "down": list(self.down),
            "score": self.score,
        }


_KINDS_BY_CLASS = {
    OutcomeSet: "outcomes",
    ItemOutput: "item output",
    ItemAt: "item at",
    LengthAtLeast: "length at least",
    BottomAt: "bottom at",
    ItemsFromAtLeast: "items from at least",
    SignedCountAtLeast: "signed count at least",
}
_CLASSES_BY_KIND = {kind: cls for cls, kind in _KINDS_BY_CLASS.items()}
#: Event kinds defined in other modules (the value events): ``{kind: rebuild(data)}``.
_REGISTERED_KINDS: dict = {}


def register_event_kind(kind: str, rebuild) -> None:
    """Let [`event_from_dict`][dpaudit.auditor.values.outcome_events.event_from_dict] rebuild events of ``kind`` with ``rebuild(data) -> Event``.

    Modules that define events over other outcome types ([`values`][dpaudit.auditor.values])
    register their kinds when imported, so that this module needs to import none of them.
    """
    if kind in _CLASSES_BY_KIND or _REGISTERED_KINDS.get(kind, rebuild) is not rebuild:
        raise ValueError(f"event kind {kind!r} is already registered; choose another name")
    _REGISTERED_KINDS[kind] = rebuild


def event_from_dict(data: dict) -> Event:
    """Rebuild an event from [`Event.to_dict`][dpaudit.auditor.values.outcome_events.Event.to_dict] (e.g. from an audit's JSON)."""
    if isinstance(data, dict) and data.get("kind") in _REGISTERED_KINDS:
        return _REGISTERED_KINDS[data["kind"]](data)
    if not isinstance(data, dict) or data.get("kind") not in _CLASSES_BY_KIND:
        kinds = ", ".join([*_CLASSES_BY_KIND, *_REGISTERED_KINDS])
        raise ValueError(f"not an event: {data!r}; kinds: {kinds}")
    cls = _CLASSES_BY_KIND[data["kind"]]
    if cls is OutcomeSet:
        return OutcomeSet(frozenset(tuple(int(v) for v in o) for o in data["outcomes"]))
    if cls is ItemsFromAtLeast:
        return ItemsFromAtLeast(tuple(int(v) for v in data["items"]), int(data["count"]))
    if cls is SignedCountAtLeast:
        return SignedCountAtLeast(
            tuple(int(v) for v in data["up"]),
            tuple(int(v) for v in data["down"]),
            int(data["score"]),
        )
    fields = {f.name: int(data[f.name]) for f in dataclasses.fields(cast(Any, cls))}
    return cls(**fields)


def outcome_matrix(outcomes) -> np.ndarray:
    """Outcome tuples packed into a PAD-padded int64 matrix (at least one column)."""
    width = max(map(len, outcomes), default=0)
    return batch_from_outcomes(outcomes, max(width, 1))


def event_hits(event: Event, counter) -> int:
    """How many samples of ``{outcome: count}`` fall in ``event``."""
    return int(events_hits([event], counter)[0])


def events_hits(events, counter) -> np.ndarray:
    """Hits of each event in ``{outcome: count}``.

    A tally that keeps its events' hits running (``counter.running_hits(events)``,
    [`tallies.PooledCounter`][dpaudit.auditor.sources.tallies.PooledCounter]) answers from them; any other
    is counted.
    """
    running = getattr(counter, "running_hits", None)
    if running is not None:
        return np.array(running(events), dtype=np.int64)
    return counted_hits(events, counter)


def counted_hits(events, counter) -> np.ndarray:
    """Hits of each event in ``{outcome: count}``, vectorized over outcomes."""
    outcomes = list(counter)
    if not outcomes:
        return np.zeros(len(events), dtype=np.int64)
    matrix = outcome_matrix(outcomes)
    weights = np.fromiter(counter.values(), dtype=np.int64, count=len(outcomes))
    return np.array([int(weights[e.mask(outcomes, matrix)].sum()) for e in events], dtype=np.int64)


def structural_events(outcomes, focus=(), shift=None) -> list[Event]:
    """Structural events over the items and lengths seen in ``outcomes``.

    ``focus``: the items whose counts differ between the pair's histograms; "at least m of
    them output" is added for every m (a user moving many counts moves this most).
    ``shift``: P's counts minus Q's per item; where it moves some counts up and others
    down, "at least s more of the up items than of the down items output" is added for
    every s from 1 to the most the outputs allow
    ([`SignedCountAtLeast`][dpaudit.auditor.values.outcome_events.SignedCountAtLeast]).
    """
    items = sorted({v for o in outcomes for v in o if v != BOTTOM})
    positions = max((len(o) for o in outcomes), default=0)
    events: list[Event] = [ItemOutput(j) for j in items]
    focus = tuple(sorted(int(i) for i in focus))
    if len(focus) > 1:
        events.extend(ItemsFromAtLeast(focus, m) for m in range(1, min(len(focus), positions) + 1))
    if shift is not None:
        shift = np.asarray(shift)
        up = tuple(int(i) for i in np.flatnonzero(shift > 0))
        down = tuple(int(i) for i in np.flatnonzero(shift < 0))
        if up and down:
            top = min(len(up), positions)
            events.extend(SignedCountAtLeast(up, down, s) for s in range(1, top + 1))
    for position in range(positions):
        events.extend(ItemAt(j, position) for j in items)
        events.append(BottomAt(position))
        events.append(LengthAtLeast(position + 1))
    return events


def _looked_up(counter, outcomes) -> np.ndarray:
    """``counter[o]`` (0 when absent) for each of ``outcomes``, as floats."""
    return np.fromiter(map(counter.get, outcomes, repeat(0)), dtype=float, count=len(outcomes))


def candidate_events(
    counter_p,
    n_p,
    counter_q,
    n_q,
    max_union=64,
    structural=True,
    focus=(),
    shift=None,
    ranked=True,
    rank_by=None,
):
    """Candidate events for "P large, Q small" with their hits, from selection samples only.

    Returns ``(events, hits_p, hits_q)``. Candidates: single outcomes and
    unions of the top-``r`` outcomes ranked by the estimated likelihood ratio
    ``(hits_p + ½)/n_p ÷ (hits_q + ½)/n_q``, ``r`` on a geometric grid (when
    ``ranked``); plus the structural events (``focus``, ``shift``:
    [`structural_events`][dpaudit.auditor.values.outcome_events.structural_events]).

    ``rank_by``: ``(counter_p, n_p, counter_q, n_q)`` of other samples on which the
    outcomes are ranked, so that the hits of the ranked events on the given counters are
    honest estimates of their probabilities (on the samples that ranked them, a union of
    the outcomes that happened to fall on P's side looks far better than it is).
    """
    if rank_by is None:
        rank_by = (counter_p, n_p, counter_q, n_q)
    rank_p, m_p, rank_q, m_q = rank_by
    seen_p, seen_q = set(counter_p), set(counter_q)
    # The same sets when ranking on the counted samples: no key hashed twice.
    rank_seen_p = seen_p if rank_p is counter_p else set(rank_p)
    rank_seen_q = seen_q if rank_q is counter_q else set(rank_q)
    outcomes = list(seen_p | seen_q | rank_seen_p | rank_seen_q)
    if not outcomes:
        return [], np.zeros(0), np.zeros(0)
    hp = _looked_up(counter_p, outcomes)
    hq = _looked_up(counter_q, outcomes)
    events: list[Event] = []
    ep: list[float] = []
    eq: list[float] = []
    if ranked:
        rp = hp if rank_p is counter_p else _looked_up(rank_p, outcomes)
        rq = hq if rank_q is counter_q else _looked_up(rank_q, outcomes)
        # The +½ keeps outcomes unseen on Q finite while still favouring them.
        ratio = ((rp + 0.5) / max(m_p, 1)) / ((rq + 0.5) / max(m_q, 1))
        order = np.lexsort((-rp, -ratio))
        order = order[rp[order] > 0]
        cum_p = np.cumsum(hp[order])
        cum_q = np.cumsum(hq[order])
        n = len(order)
        sizes = {1, 2, 3, n}
        r = 4.0
        while r < min(n, max_union):
            sizes.add(int(r))
            r *= 1.5
        for r in sorted(s for s in sizes if 1 <= s <= n):
            events.append(OutcomeSet(frozenset(map(outcomes.__getitem__, order[:r].tolist()))))
            ep.append(cum_p[r - 1])
            eq.append(cum_q[r - 1])
        # Single outcomes: the high-ratio ones and the most likely ones.
        singles = list(order[:16]) + list(np.argsort(-rp)[:8])
        for i in dict.fromkeys(int(i) for i in singles):
            if rp[i] > 0:
                events.append(OutcomeSet(frozenset([outcomes[i]])))
                ep.append(hp[i])
                eq.append(hq[i])
    if structural:
        matrix = outcome_matrix(outcomes)
        for event in structural_events(outcomes, focus, shift):
            m = event.mask(outcomes, matrix)
            events.append(event)
            ep.append(hp[m].sum())
            eq.append(hq[m].sum())
    return events, np.asarray(ep), np.asarray(eq)
