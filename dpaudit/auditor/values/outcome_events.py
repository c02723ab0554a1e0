"""Events: sets of outcomes whose probabilities the testers compare.

An event is chosen on one set of samples and its probability bounded on
fresh ones, so it must be defined without reference to the confirmation
samples: either an explicit set of outcomes (unions ranked by the estimated
likelihood ratio) or a structural predicate (item ``j`` is output, ``j`` at
position ``m``, output length >= ``m``, ⊥ at position ``m``, the output leaning
``s`` items towards the ones a pair moves up). The candidate events of a pair are chosen by
[`outcome_candidates`][dpaudit.auditor.values.outcome_candidates].
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
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
    "counted_hits",
    "event_from_dict",
    "event_hits",
    "events_hits",
    "outcome_matrix",
    "register_event_kind",
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
