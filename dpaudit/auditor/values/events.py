"""Events over the keys of a [`encoders.ValueEncoder`][dpaudit.auditor.values.encoders.ValueEncoder], and their kinds' registry.

Each event is defined by its encoder and cells before the samples it is applied to
(the pipeline's learn/select/confirm split keeps its bounds valid). Every kind registers
with [`outcome_events.register_event_kind`][dpaudit.auditor.values.outcome_events.register_event_kind], so
[`outcome_events.event_from_dict`][dpaudit.auditor.values.outcome_events.event_from_dict] rebuilds it from an audit's JSON.
``exact_probability(law)`` gives ``P(event)`` from a value law of
[`dpaudit.exact.value_laws`][dpaudit.exact.value_laws] (duck-typed: ``law.items`` and ``law.box``),
or None where the event is not a union of boxes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechanisms import PAD

from .encoders import VIEW_BINS, VIEW_ITEM_TAILS, VIEW_NAMES, VIEW_SCORE, ValueEncoder
from .outcome_events import Event, _fmt, event_from_dict, register_event_kind

__all__ = ["ItemValueThreshold", "OnItems", "ValueRegion", "ValueThreshold"]


@dataclass(frozen=True)
class ValueRegion(Event):
    """A union of encoded cells of one view, chosen by estimated likelihood ratio."""

    encoder: ValueEncoder
    view: int
    keys: frozenset

    def contains(self, outcome):
        return outcome in self.keys

    def mask(self, outcomes, matrix):
        return np.fromiter(map(self.keys.__contains__, outcomes), dtype=bool, count=len(outcomes))

    def describe(self, limit: int | None = 3):
        w = self.encoder.width
        cells = sorted(self.keys)
        if self.view == VIEW_SCORE or (self.view == VIEW_BINS and self.encoder.value_width == 1):
            return self._describe_intervals(cells, limit)
        shown = []
        for key in cells if limit is None else cells[:limit]:
            items = tuple(v for v in key[1 : 1 + w] if v != PAD)
            codes = key[1 + w :]
            parts = [f"items {_fmt(items)}"] if w else []
            columns = [-1] if self.view == VIEW_SCORE else range(len(codes))
            for column, code in zip(columns, codes):
                label = f"value {column + 1}" if column >= 0 else "score"
                item = key[1 + column] if 0 <= column < w else PAD
                parts.append(f"{label} {self.encoder.cell_text(self.view, column, item, code)}")
            shown.append("[" + "; ".join(parts) + "]")
        more = f", … ({len(cells)} cells)" if limit is not None and len(cells) > limit else ""
        return f"{VIEW_NAMES[self.view]} in {{" + ", ".join(shown) + more + "}"

    def _describe_intervals(self, cells, limit):
        """One coded column: adjacent bins merged into intervals, per item tuple."""
        w = self.encoder.width
        column = 0 if self.view == VIEW_BINS else -1
        label = "value" if column == 0 else "learned score"
        edges = self.encoder._edges(column)
        by_items: dict = {}
        for key in cells:
            by_items.setdefault(tuple(v for v in key[1 : 1 + w] if v != PAD), []).append(key[1 + w])
        parts = []
        for items, codes in by_items.items():
            runs, start = [], None
            codes = sorted(codes)
            for i, code in enumerate(codes):
                start = code if start is None else start
                if i + 1 == len(codes) or codes[i + 1] != code + 1:
                    runs.append((start, code))
                    start = None
            texts = []
            for low, high in runs:
                if low == 0:
                    texts.append("missing")
                    low = 1
                    if high == 0:
                        continue
                lo = f"[{edges[low - 2]:.6g}" if low >= 2 else "(-inf"
                hi = f"{edges[high - 1]:.6g})" if high - 1 < len(edges) else "inf)"
                texts.append(f"{lo}, {hi}")
            prefix = f"items {_fmt(items)}: " if w else ""
            parts.append(prefix + f"{label} in " + " ∪ ".join(texts))
        more = f", … ({len(parts)} item tuples)" if limit is not None and len(parts) > limit else ""
        return "{" + "; ".join(parts if limit is None else parts[:limit]) + more + "}"

    def exact_probability(self, law):
        """``P(event)`` under a value law ([`dpaudit.exact.value_laws`][dpaudit.exact.value_laws]).

        None off the views whose cells are boxes (values, values given their item).
        """
        if self.view not in (VIEW_BINS, VIEW_ITEM_TAILS):
            return None
        w = self.encoder.width
        total = 0
        for key in self.keys:
            items = tuple(v for v in key[1 : 1 + w] if v != PAD)
            intervals = tuple(
                self.encoder.bin_interval(
                    j,
                    code,
                    self.encoder.tail_edges(j, key[1 + j] if j < w else PAD)
                    if self.view == VIEW_ITEM_TAILS
                    else None,
                )
                for j, code in enumerate(key[1 + w :])
            )
            total += law.box(items, intervals)
        return total

    def to_dict(self) -> dict:
        return {
            "kind": "value region",
            "view": self.view,
            "encoder": self.encoder.to_dict(),
            "keys": [list(k) for k in sorted(self.keys)],
        }


@dataclass(frozen=True)
class ValueThreshold(Event):
    """One value (``column >= 0``) or the learned score (``column = -1``) above/below an edge."""

    encoder: ValueEncoder
    column: int
    code: int
    above: bool

    def _position(self):
        return 1 + self.encoder.width + (max(self.column, 0))

    def _view(self):
        return VIEW_BINS if self.column >= 0 else VIEW_SCORE

    def contains(self, outcome):
        if outcome[0] != self._view():
            return False
        code = outcome[self._position()]
        return code >= self.code if self.above else 0 < code < self.code

    def mask(self, outcomes, matrix):
        codes = matrix[:, self._position()]
        in_view = matrix[:, 0] == self._view()
        return in_view & (
            (codes >= self.code) if self.above else ((codes > 0) & (codes < self.code))
        )

    def describe(self, limit: int | None = 5):
        label = f"value {self.column + 1}" if self.column >= 0 else "learned score"
        return f"{label} {self.encoder.interval(self.column, self.code, self.above)}"

    def exact_probability(self, law):
        """``P(event)`` under a value law; None for the learned score (not a product set)."""
        if self.column < 0:
            return None
        edge = self.encoder.edges[self.column][self.code - 2]
        interval = (edge, math.inf) if self.above else (-math.inf, edge)
        intervals = tuple(
            interval if j == self.column else None for j in range(self.encoder.value_width)
        )
        return sum((law.box(items, intervals) for items in law.items), 0)

    def to_dict(self) -> dict:
        return {
            "kind": "value threshold",
            "encoder": self.encoder.to_dict(),
            "column": self.column,
            "code": self.code,
            "above": self.above,
        }


@dataclass(frozen=True)
class ItemValueThreshold(Event):
    """Item ``item`` released at position ``column`` and its value beyond a tail edge.

    A product of an item condition and a value condition: the value of the query that
    fired, given which fired. Edges are the encoder's tail edges for (column, item),
    learned on the learning split; ``code``/``above`` as in
    [`ValueThreshold`][dpaudit.auditor.values.events.ValueThreshold].
    """

    encoder: ValueEncoder
    column: int
    item: int
    code: int
    above: bool

    def _columns(self):
        return 1 + self.column, 1 + self.encoder.width + self.column

    def _beyond_items(self) -> bool:
        # A value column past the item columns has no item released at its position: its item
        # is PAD ([`batches.column_items`][dpaudit.auditor.values.batches.column_items]), as the
        # candidates that scored the event took it.
        return self.column >= self.encoder.width

    def contains(self, outcome):
        item_at, value_at = self._columns()
        if outcome[0] != VIEW_ITEM_TAILS:
            return False
        item = PAD if self._beyond_items() else outcome[item_at]
        if item != self.item:
            return False
        code = outcome[value_at]
        return code >= self.code if self.above else 0 < code < self.code

    def mask(self, outcomes, matrix):
        item_at, value_at = self._columns()
        codes = matrix[:, value_at]
        chosen = matrix[:, 0] == VIEW_ITEM_TAILS
        if self._beyond_items():
            chosen = chosen & (self.item == PAD)
        else:
            chosen = chosen & (matrix[:, item_at] == self.item)
        return chosen & (
            (codes >= self.code) if self.above else ((codes > 0) & (codes < self.code))
        )

    def _edge(self):
        return self.encoder.tail_edges(self.column, self.item)[self.code - 2]

    def describe(self, limit: int | None = 5):
        label = "⊥" if self.item == -1 else f"item {self.item}"
        sign = ">=" if self.above else "<"
        return f"{label} at position {self.column} with value {sign} {self._edge():.6g}"

    def exact_probability(self, law):
        """``P(event)``: boxes over the item tuples with ``item`` at ``column``."""
        edge = self._edge()
        interval = (edge, math.inf) if self.above else (-math.inf, edge)
        intervals = tuple(
            interval if j == self.column else None for j in range(self.encoder.value_width)
        )
        return sum(
            (
                law.box(items, intervals)
                for items in law.items
                if (items[self.column] if len(items) > self.column else PAD) == self.item
            ),
            0,
        )

    def to_dict(self) -> dict:
        return {
            "kind": "item value threshold",
            "encoder": self.encoder.to_dict(),
            "column": self.column,
            "item": self.item,
            "code": self.code,
            "above": self.above,
        }


@dataclass(frozen=True)
class OnItems(Event):
    """An event on the released items alone (values ignored), over encoded keys."""

    encoder: ValueEncoder
    event: Event

    def _items(self, outcome):
        return tuple(v for v in outcome[1 : 1 + self.encoder.width] if v != PAD)

    def contains(self, outcome):
        return outcome[0] == VIEW_BINS and self.event.contains(self._items(outcome))

    def mask(self, outcomes, matrix):
        return np.fromiter((self.contains(o) for o in outcomes), dtype=bool, count=len(outcomes))

    def describe(self, limit: int | None = 5):
        return self.event.describe(limit=limit)

    def exact_probability(self, law):
        """``P(event)``: the item law summed over the item tuples in the event."""
        return sum((p for items, p in law.items.items() if self.event.contains(items)), 0)

    def to_dict(self) -> dict:
        return {
            "kind": "on items",
            "encoder": self.encoder.to_dict(),
            "event": self.event.to_dict(),
        }


def _region_from_dict(data: dict) -> ValueRegion:
    keys = frozenset(tuple(int(v) for v in k) for k in data["keys"])
    return ValueRegion(ValueEncoder.from_dict(data["encoder"]), int(data["view"]), keys)


def _threshold_from_dict(data: dict) -> ValueThreshold:
    encoder = ValueEncoder.from_dict(data["encoder"])
    return ValueThreshold(encoder, int(data["column"]), int(data["code"]), bool(data["above"]))


def _on_items_from_dict(data: dict) -> OnItems:
    return OnItems(ValueEncoder.from_dict(data["encoder"]), event_from_dict(data["event"]))


register_event_kind("value region", _region_from_dict)
register_event_kind("value threshold", _threshold_from_dict)
register_event_kind("on items", _on_items_from_dict)


def _item_threshold_from_dict(data: dict) -> ItemValueThreshold:
    encoder = ValueEncoder.from_dict(data["encoder"])
    fields = (int(data["column"]), int(data["item"]), int(data["code"]), bool(data["above"]))
    return ItemValueThreshold(encoder, *fields)


register_event_kind("item value threshold", _item_threshold_from_dict)
