"""Learned encodings that turn (items, values) samples into counts of keys.

A mechanism that releases numbers next to (or instead of) item ids returns a
[`mechanisms.MixedBatch`][mechanisms.MixedBatch]. The auditor's testers compare counts of discrete
outcomes, so each draw is reduced by a
[`ValueEncoder`][dpaudit.auditor.values.encoders.ValueEncoder] that is FIXED before the draw (chosen
from earlier samples only): value coordinate ``j`` becomes the index of its quantile bin, and
optionally a learned score — a logistic regression of "which histogram of the pair produced this
sample", fitted on the pair's own learning samples, the likelihood-ratio score DP-Sniper (Bichsel et
al., S&P 2021) learns — becomes the index of its bin. A sample yields one key per view:

* ``(0, item_1..item_w, code_1..code_v)`` — the items and the bin of every value;
* ``(1, item_1..item_w, score code)`` — the items and the bin of the learned score.

(``code 0`` is a missing value, NaN.) Because an encoder, and every event over its keys
([`ValueRegion`][dpaudit.auditor.values.ValueRegion],
[`ValueThreshold`][dpaudit.auditor.values.ValueThreshold],
[`OnItems`][dpaudit.auditor.values.OnItems]), is defined before the samples it is applied to, the
auditor's sample splitting keeps the bounds valid: the encoders of a pair are learned on
its *learning* samples, events are chosen on its *selection* samples, and only fresh *confirmation*
samples are bounded. The encoders are learned by [`fitting`][dpaudit.auditor.values.fitting].
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from mechanisms import PAD, MixedBatch

from .batches import column_items
from .counting import count_batch
from .floats import (
    FLOAT_CODES,
    LOW_BITS_CAP,
    FloatModel,
    float_codes,
    grid_cell,
    grid_codes,
    low_bits_codes,
)
from .score import LinearScore, fit_linear_score

__all__ = [
    "VIEW_BINS",
    "VIEW_FLOAT",
    "VIEW_GRID",
    "VIEW_ITEM_TAILS",
    "VIEW_LOW_BITS",
    "VIEW_NAMES",
    "VIEW_SCORE",
    "LinearScore",
    "ValueEncoder",
    "fit_linear_score",
    "items_only_encoder",
    "unique_rows",
]

VIEW_BINS = 0
VIEW_SCORE = 1
VIEW_FLOAT = 2
VIEW_LOW_BITS = 3
VIEW_ITEM_TAILS = 4
VIEW_GRID = 5
VIEW_NAMES = {
    VIEW_ITEM_TAILS: "values given their item",
    VIEW_BINS: "values",
    VIEW_SCORE: "learned score",
    VIEW_FLOAT: "exact doubles",
    VIEW_LOW_BITS: "low-order bits",
    VIEW_GRID: "grid of the double",
}


def _codes(values: np.ndarray, edges: tuple[float, ...]) -> np.ndarray:
    """Bin codes: 0 for NaN, else 1 + the number of edges <= value."""
    codes = np.searchsorted(np.asarray(edges, dtype=np.float64), values, side="right") + 1
    return np.where(np.isnan(values), 0, codes).astype(np.int64)


@dataclass(frozen=True)
class ValueEncoder:
    """Reduces mixed samples to counts of keys (module docstring), fixed before a draw.

    Parameters
    ----------
    width : item columns of the mechanism's batches.
    value_width : value columns.
    edges : per value column, the sorted bin edges (``()``: one bin of finite values).
    score : a [`LinearScore`][dpaudit.auditor.values.score.LinearScore] or None (no score view).
    score_edges : bin edges of the score.
    items_only : keys are the plain item tuples (for the threshold search).
    floats : a [`floats.FloatModel`][dpaudit.auditor.values.floats.FloatModel] or None (no float
        views).
    grid : code each value by its grid, the largest power of two dividing it
        ([`floats.grid_codes`][dpaudit.auditor.values.floats.grid_codes]; no noise model needed).
    item_edges : ``((column, item, edges), ...)``: tail edges of value ``column`` given
        the item released at that position (``-2`` when none are released).
    rankings : ``{view: (cells favouring the first side, cells favouring the second)}``,
        each ordered by the likelihood ratio on the LEARNING samples: the candidate
        regions are their prefixes, so their shape is fixed before the selection samples
        score them (a region ranked on the samples that score it is a winner's curse).
        Not part of an event's meaning: left out of comparisons and of ``to_dict``.
    """

    width: int
    value_width: int
    edges: tuple[tuple[float, ...], ...] = ()
    score: LinearScore | None = None
    score_edges: tuple[float, ...] = ()
    items_only: bool = False
    floats: FloatModel | None = None
    item_edges: tuple[tuple[int, int, tuple[float, ...]], ...] = ()
    grid: bool = False
    rankings: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def count(self, batch: MixedBatch) -> Counter:
        """``{key: count}`` of a mixed batch, one key per sample per view."""
        if self.items_only:
            return count_batch(batch.items)
        blocks = [
            np.column_stack(
                [_codes(batch.values[:, j], self.edges[j]) for j in range(self.value_width)]
            )
        ]
        views = [VIEW_BINS]
        if self.score is not None:
            blocks.append(_codes(self.score(batch.items, batch.values), self.score_edges)[:, None])
            views.append(VIEW_SCORE)
        if self.floats is not None:
            blocks.append(float_codes(self.floats, batch))
            views.append(VIEW_FLOAT)
            blocks.append(
                np.column_stack(
                    [low_bits_codes(batch.values[:, j]) for j in range(self.value_width)]
                )
            )
            views.append(VIEW_LOW_BITS)
        if self.item_edges:
            blocks.append(self._item_codes(batch))
            views.append(VIEW_ITEM_TAILS)
        if self.grid:
            blocks.append(
                np.column_stack([grid_codes(batch.values[:, j]) for j in range(self.value_width)])
            )
            views.append(VIEW_GRID)
        keys: list[tuple] = []
        counts: list[int] = []
        for view, codes in zip(views, blocks):
            rows = np.hstack([np.full((batch.size, 1), view, dtype=np.int64), batch.items, codes])
            unique, n = unique_rows(rows)
            keys.extend(zip(*unique.T.tolist()))  # row tuples built column-wise, in C
            counts.extend(n.tolist())
        # Distinct rows, and each view's rows lead with the view: keys never repeat, so
        # the tally is built in one dict construction instead of key by key.
        return Counter(dict(zip(keys, counts)))

    def _item_codes(self, batch: MixedBatch) -> np.ndarray:
        """Per value: its bin among the tail edges of (column, released item); 0 if missing."""
        codes = np.zeros(batch.values.shape, dtype=np.int64)
        for column in range(self.value_width):
            values = batch.values[:, column]
            items = column_items(batch.items, column)
            codes[:, column] = np.where(np.isnan(values), 0, 1)
            for col, item, edges in self.item_edges:
                if col == column:
                    rows = items == item
                    codes[rows, column] = _codes(values[rows], edges)
        return codes

    def tail_edges(self, column: int, item: int) -> tuple[float, ...]:
        """The tail edges of value ``column`` given ``item`` (``()``: one bin)."""
        for col, it, edges in self.item_edges:
            if col == column and it == item:
                return edges
        return ()

    def _edges(self, column: int) -> tuple[float, ...]:
        return self.score_edges if column < 0 else self.edges[column]

    def interval(self, column: int, code: int, above: bool) -> str:
        """Readable ``{code >= code}`` (above) or ``{0 < code < code}`` as a bound on the value."""
        edges = self._edges(column)
        if code <= 1:
            return "any" if above else "none"
        return f"{'>=' if above else '<'} {edges[code - 2]:.6g}"

    def bin_interval(self, column: int, code: int, edges=None) -> tuple:
        """The bin ``code`` of value ``column`` as ``(low, high)`` (half-open); ``()`` if missing.

        ``edges``: bin edges other than the column's own (an item's tail edges).
        """
        if code == 0:
            return ()
        edges = self._edges(column) if edges is None else edges
        low = edges[code - 2] if code >= 2 else -np.inf
        high = edges[code - 1] if code - 1 < len(edges) else np.inf
        return (low, high)

    def _reach_text(self, floats: FloatModel, column: int, item: int, code: int) -> str:
        """Which anchor counts a value is reachable from, named by the counts themselves.

        The float model's sides are the kept pair's order, which a witness may reverse (its
        first histogram is the side with the larger probability); naming the counts keeps the
        text true either way.
        """
        first, second = (m.get((column, item)) for m in floats.anchor_maps())
        if code == 1 or first is None or second is None or first == second:
            return f"reachable from {FLOAT_CODES[code]}"
        only = {2: (first, second), 3: (second, first)}.get(code)
        if only is None:
            return f"reachable from both counts {first} and {second}"
        return f"reachable from count {only[0]} only (not from {only[1]})"

    def cell_text(self, view: int, column: int, item: int, code: int) -> str:
        """Readable condition of one coded value of ``view`` (its bin, reachability, bits)."""
        if view == VIEW_FLOAT and self.floats is not None:
            if code == 0:
                return "missing"
            return f"{self._reach_text(self.floats, column, item, code)} ({self.floats.kind}, scale {self.floats.scale:g})"
        if view == VIEW_LOW_BITS:
            return "missing" if code == 0 else f"with {code - 1} trailing zero bits"
        if view == VIEW_GRID:
            if code <= 1:
                return "missing" if code == 0 else "zero"
            sign, binade, zeros = grid_cell(code)
            capped = " or more" if zeros == LOW_BITS_CAP else ""
            return (
                f"{'negative' if sign < 0 else 'positive'}, |value| in [2^{binade - 1}, "
                f"2^{binade}), {zeros}{capped} trailing zero bits (a multiple of "
                f"2^{binade - 53 + zeros})"
            )
        if view == VIEW_ITEM_TAILS:
            return self.bin_text(column, code, self.tail_edges(column, item))
        return self.bin_text(column, code)

    def bin_text(self, column: int, code: int, edges=None) -> str:
        """The interval of one bin: ``[a, b)``, open-ended at the extremes, or "missing"."""
        if code == 0:
            return "missing"
        edges = self._edges(column) if edges is None else edges
        low = f"[{edges[code - 2]:.6g}" if code >= 2 else "(-inf"
        high = f"{edges[code - 1]:.6g})" if code - 1 < len(edges) else "inf)"
        return f"in {low}, {high}"

    def to_dict(self) -> dict:
        data = {
            "width": self.width,
            "value_width": self.value_width,
            "edges": [list(e) for e in self.edges],
            "items_only": self.items_only,
            "score_edges": list(self.score_edges),
            "score": None,
        }
        if self.floats is not None:  # written only when present: older results stay unchanged
            data["floats"] = self.floats.to_dict()
        if self.grid:  # written only when present, as floats
            data["grid"] = True
        if self.item_edges:
            data["item_edges"] = [[c, i, list(e)] for c, i, e in self.item_edges]
        if self.score is not None:
            data["score"] = {
                f: list(getattr(self.score, f))
                for f in ("vocabulary", "means", "scales", "weights")
            }
        return data

    @classmethod
    def from_dict(cls, data: dict) -> ValueEncoder:
        score = None
        if data.get("score"):
            s = data["score"]
            score = LinearScore(
                tuple(int(v) for v in s["vocabulary"]),
                *(tuple(float(v) for v in s[f]) for f in ("means", "scales", "weights")),
            )
        return cls(
            int(data["width"]),
            int(data["value_width"]),
            tuple(tuple(float(v) for v in e) for e in data["edges"]),
            score,
            tuple(float(v) for v in data["score_edges"]),
            bool(data.get("items_only")),
            FloatModel.from_dict(data["floats"]) if data.get("floats") else None,
            tuple(
                (int(c), int(i), tuple(float(v) for v in e))
                for c, i, e in data.get("item_edges", ())
            ),
            bool(data.get("grid")),
        )


def unique_rows(rows: np.ndarray):
    """Distinct rows and their counts; rows packed into one int64 when they fit (fast path)."""
    if rows.shape[0] == 0:
        return rows, np.zeros(0, dtype=np.int64)
    shifted = rows - PAD  # every cell >= 0 (PAD is the smallest value a key holds)
    radix = shifted.max(axis=0) + 1
    if float(np.sum(np.log2(radix.astype(np.float64)))) >= 62:
        return np.unique(rows, axis=0, return_counts=True)
    packed = np.zeros(rows.shape[0], dtype=np.int64)
    for column in range(rows.shape[1]):
        packed *= radix[column]
        packed += shifted[:, column]
    keys, counts = np.unique(packed, return_counts=True)
    decoded = np.empty((keys.size, rows.shape[1]), dtype=np.int64)
    for column in range(rows.shape[1] - 1, -1, -1):
        decoded[:, column] = keys % radix[column]
        keys = keys // radix[column]
    return decoded + PAD, counts


def items_only_encoder(width: int, value_width: int) -> ValueEncoder:
    """Keys are item tuples only (values ignored): the threshold search's view."""
    return ValueEncoder(width, value_width, tuple(() for _ in range(value_width)), items_only=True)
