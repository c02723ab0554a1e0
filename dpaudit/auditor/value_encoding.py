"""Real-valued outputs: learned encodings that turn (items, values) samples into counts.

A mechanism that releases numbers next to (or instead of) item ids returns a
:class:`mechanisms.MixedBatch`. The auditor's testers compare counts of discrete
outcomes, so each draw is reduced by a :class:`ValueEncoder` that is FIXED before the
draw (chosen from earlier samples only): value coordinate ``j`` becomes the index of
its quantile bin, and optionally a learned score — a logistic regression of "which
histogram of the pair produced this sample", fitted on the pair's own learning samples,
the likelihood-ratio score DP-Sniper (Bichsel et al., S&P 2021) learns — becomes the
index of its bin. A sample yields one key per view:

* ``(0, item_1..item_w, code_1..code_v)`` — the items and the bin of every value;
* ``(1, item_1..item_w, score code)`` — the items and the bin of the learned score.

(``code 0`` is a missing value, NaN.) Because an encoder, and every event over its keys
(:class:`ValueRegion`, :class:`ValueThreshold`, :class:`OnItems`), is defined before the
samples it is applied to, the auditor's sample splitting keeps the bounds valid: the
encoders of a pair are learned on its *learning* samples, events are chosen on learning
plus *selection* samples, and only fresh *confirmation* samples are bounded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from mechanisms import BOTTOM, PAD, MixedBatch

from .counting import count_batch
from .events import Event, OutcomeSet, _fmt, candidate_events, outcome_matrix

__all__ = [
    "VIEW_BINS",
    "VIEW_SCORE",
    "LinearScore",
    "OnItems",
    "ValueEncoder",
    "ValueRegion",
    "ValueThreshold",
    "as_mixed_batch",
    "fit_encoder",
    "items_only_encoder",
    "quantile_edges",
    "value_candidate_events",
    "value_width_of",
]

VIEW_BINS = 0
VIEW_SCORE = 1
_VIEW_NAMES = {VIEW_BINS: "values", VIEW_SCORE: "learned score"}


def value_width_of(mechanism) -> int:
    """How many real values each outcome of ``mechanism`` carries (0: items only)."""
    value = getattr(mechanism, "value_width", 0) or 0
    return int(value)


def as_mixed_batch(batch, size: int, width: int, value_width: int, name: str) -> MixedBatch:
    """A sampler's return value as a :class:`MixedBatch` of the declared shape.

    Accepts a ``MixedBatch``, an ``(items, values)`` pair, or (``width == 0``) a bare
    float array of values. Errors name the mechanism and the shapes.
    """
    if isinstance(batch, MixedBatch):
        mixed = batch
    elif isinstance(batch, tuple) and len(batch) == 2:
        mixed = MixedBatch(
            np.asarray(batch[0]).reshape(size, -1)
            if np.size(batch[0])
            else np.zeros((size, 0), dtype=np.int64),
            np.asarray(batch[1]),
        )
    elif width == 0:
        values = np.asarray(batch)
        if values.ndim == 1:
            values = values[:, None]
        mixed = MixedBatch(np.zeros((values.shape[0], 0), dtype=np.int64), values)
    else:
        raise ValueError(
            f"{name} declares {value_width} value(s) per outcome and must return a "
            f"MixedBatch or (items, values), got {type(batch).__name__}"
        )
    if mixed.size != size or mixed.value_width != value_width or mixed.width > width:
        raise ValueError(
            f"{name} returned items of shape {mixed.items.shape} and values of shape "
            f"{mixed.values.shape}; expected ({size}, <= {width}) and "
            f"({size}, {value_width})"
        )
    if mixed.width < width:
        items = np.full((size, width), PAD, dtype=np.int64)
        items[:, : mixed.width] = mixed.items
        mixed = MixedBatch(items, mixed.values)
    return mixed


def quantile_edges(values: np.ndarray, bins: int) -> tuple[float, ...]:
    """At most ``bins - 1`` distinct interior quantiles of the finite ``values``."""
    finite = values[np.isfinite(values)]
    if finite.size == 0 or bins < 2:
        return ()
    qs = np.quantile(finite, np.linspace(0, 1, bins + 1)[1:-1])
    return tuple(float(v) for v in np.unique(qs))


def _codes(values: np.ndarray, edges: tuple[float, ...]) -> np.ndarray:
    """Bin codes: 0 for NaN, else 1 + the number of edges <= value."""
    codes = np.searchsorted(np.asarray(edges, dtype=np.float64), values, side="right") + 1
    return np.where(np.isnan(values), 0, codes).astype(np.int64)


@dataclass(frozen=True)
class LinearScore:
    """``weights · standardise(features(items, values))``: a fitted logistic score."""

    vocabulary: tuple[int, ...]  # item ids given their own indicator per position
    means: tuple[float, ...]
    scales: tuple[float, ...]
    weights: tuple[float, ...]

    def features(self, items: np.ndarray, values: np.ndarray) -> np.ndarray:
        return _features(items, values, self.vocabulary)

    def __call__(self, items, values) -> np.ndarray:
        x = (self.features(items, values) - np.asarray(self.means)) / np.asarray(self.scales)
        return x @ np.asarray(self.weights)


def _features(items, values, vocabulary):
    """Values (NaN as 0) with missing-value flags, and per-position item indicators."""
    missing = np.isnan(values)
    parts = [np.where(missing, 0.0, values), missing.astype(np.float64)]
    if items.shape[1] and vocabulary:
        vocab = np.asarray(vocabulary, dtype=np.int64)
        for column in range(items.shape[1]):
            parts.append((items[:, column, None] == vocab[None, :]).astype(np.float64))
    return np.hstack(parts)


def fit_linear_score(items_p, values_p, items_q, values_q, penalty=1e-3, max_vocabulary=24):
    """Logistic regression of "drawn from P" on the learning samples of both sides.

    Fitted with ``scipy.optimize.minimize`` (L-BFGS) on standardised features with a
    small L2 penalty, so that separable or collinear features do not diverge.
    """
    items = np.vstack([items_p, items_q])
    values = np.vstack([values_p, values_q])
    ids, freq = np.unique(items[items >= 0], return_counts=True)
    vocabulary = tuple(int(i) for i in ids[np.argsort(-freq, kind="stable")][:max_vocabulary])
    if BOTTOM in set(items.ravel().tolist()):
        vocabulary = vocabulary + (BOTTOM,)
    x = _features(items, values, vocabulary)
    means = x.mean(axis=0)
    scales = x.std(axis=0)
    scales[scales == 0] = 1.0
    x = (x - means) / scales
    y = np.concatenate([np.ones(len(items_p)), np.zeros(len(items_q))])
    n = float(len(y))

    def loss(w):
        z = x @ w
        # log(1 + e^z) - y z, stably; gradient X^T (sigmoid(z) - y)
        value = np.logaddexp(0.0, z).sum() - y @ z
        grad = x.T @ (1.0 / (1.0 + np.exp(-z)) - y)
        return value / n + 0.5 * penalty * w @ w, grad / n + penalty * w

    from scipy import optimize  # only value audits need it: keep `import dpaudit` light

    result = optimize.minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B")
    return LinearScore(
        vocabulary, tuple(map(float, means)), tuple(map(float, scales)), tuple(map(float, result.x))
    )


@dataclass(frozen=True)
class ValueEncoder:
    """Reduces mixed samples to counts of keys (module docstring), fixed before a draw.

    Parameters
    ----------
    width : item columns of the mechanism's batches.
    value_width : value columns.
    edges : per value column, the sorted bin edges (``()``: one bin of finite values).
    score : a :class:`LinearScore` or None (no score view).
    score_edges : bin edges of the score.
    items_only : keys are the plain item tuples (for the threshold search).
    """

    width: int
    value_width: int
    edges: tuple[tuple[float, ...], ...] = ()
    score: LinearScore | None = None
    score_edges: tuple[float, ...] = ()
    items_only: bool = False

    def count(self, batch: MixedBatch) -> Counter:
        """``{key: count}`` of a mixed batch, one key per sample per view."""
        if self.items_only:
            return count_batch(batch.items)
        tally: Counter = Counter()
        blocks = [
            np.column_stack(
                [_codes(batch.values[:, j], self.edges[j]) for j in range(self.value_width)]
            )
        ]
        views = [VIEW_BINS]
        if self.score is not None:
            blocks.append(_codes(self.score(batch.items, batch.values), self.score_edges)[:, None])
            views.append(VIEW_SCORE)
        for view, codes in zip(views, blocks):
            rows = np.hstack([np.full((batch.size, 1), view, dtype=np.int64), batch.items, codes])
            unique, counts = _unique_rows(rows)
            for row, n in zip(unique.tolist(), counts.tolist()):
                tally[tuple(row)] += n
        return tally

    def _edges(self, column: int) -> tuple[float, ...]:
        return self.score_edges if column < 0 else self.edges[column]

    def interval(self, column: int, code: int, above: bool) -> str:
        """Readable ``{code >= code}`` (above) or ``{0 < code < code}`` as a bound on the value."""
        edges = self._edges(column)
        if code <= 1:
            return "any" if above else "none"
        return f"{'>=' if above else '<'} {edges[code - 2]:.6g}"

    def bin_text(self, column: int, code: int) -> str:
        """The interval of one bin: ``[a, b)``, open-ended at the extremes, or "missing"."""
        if code == 0:
            return "missing"
        edges = self._edges(column)
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
        )


def _unique_rows(rows: np.ndarray):
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


def fit_encoder(
    width,
    value_width,
    samples_p: MixedBatch,
    samples_q: MixedBatch | None = None,
    bins: int = 128,
    score: bool = True,
    score_bins: int = 128,
) -> ValueEncoder:
    """An encoder learned on learning samples only (never on the ones it will count).

    Bins per value column are quantiles of both sides pooled; with several value
    columns the per-column bins shrink so that the joint view stays countable
    (``bins ** (1 / value_width)``, at least 8). The score view needs both sides.
    """
    pooled = (
        samples_p.values if samples_q is None else np.vstack([samples_p.values, samples_q.values])
    )
    per_column = max(8, round(bins ** (1.0 / max(value_width, 1))))
    edges = tuple(quantile_edges(pooled[:, j], per_column) for j in range(value_width))
    fitted, score_edges = None, ()
    if score and samples_q is not None and samples_p.size and samples_q.size:
        fitted = fit_linear_score(
            samples_p.items, samples_p.values, samples_q.items, samples_q.values
        )
        scores = np.concatenate(
            [fitted(samples_p.items, samples_p.values), fitted(samples_q.items, samples_q.values)]
        )
        score_edges = quantile_edges(scores, score_bins)
    return ValueEncoder(int(width), int(value_width), edges, fitted, score_edges)


# ---------------------------------------------------------------------------
# Events over encoded keys


@dataclass(frozen=True)
class ValueRegion(Event):
    """A union of encoded cells of one view, chosen by estimated likelihood ratio."""

    encoder: ValueEncoder
    view: int
    keys: frozenset

    def contains(self, outcome):
        return outcome in self.keys

    def mask(self, outcomes, matrix):
        return np.fromiter((o in self.keys for o in outcomes), dtype=bool, count=len(outcomes))

    def describe(self, limit: int | None = 3):
        w = self.encoder.width
        cells = sorted(self.keys)
        if self.view == VIEW_SCORE or self.encoder.value_width == 1:
            return self._describe_intervals(cells, limit)
        shown = []
        for key in cells if limit is None else cells[:limit]:
            items = tuple(v for v in key[1 : 1 + w] if v != PAD)
            codes = key[1 + w :]
            parts = [f"items {_fmt(items)}"] if w else []
            columns = range(len(codes)) if self.view == VIEW_BINS else [-1]
            for column, code in zip(columns, codes):
                label = f"value {column + 1}" if column >= 0 else "score"
                parts.append(f"{label} {self.encoder.bin_text(column, code)}")
            shown.append("[" + "; ".join(parts) + "]")
        more = f", … ({len(cells)} cells)" if limit is not None and len(cells) > limit else ""
        return f"{_VIEW_NAMES[self.view]} in {{" + ", ".join(shown) + more + "}"

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

    def describe(self):
        label = f"value {self.column + 1}" if self.column >= 0 else "learned score"
        return f"{label} {self.encoder.interval(self.column, self.code, self.above)}"

    def to_dict(self) -> dict:
        return {
            "kind": "value threshold",
            "encoder": self.encoder.to_dict(),
            "column": self.column,
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
        try:
            return self.event.describe(limit=limit)
        except TypeError:
            return self.event.describe()

    def to_dict(self) -> dict:
        return {
            "kind": "on items",
            "encoder": self.encoder.to_dict(),
            "event": self.event.to_dict(),
        }


def value_event_from_dict(data: dict, event_from_dict) -> Event:
    """Rebuild a value event (``kind`` "value region", "value threshold" or "on items")."""
    encoder = ValueEncoder.from_dict(data["encoder"])
    if data["kind"] == "value region":
        return ValueRegion(
            encoder, int(data["view"]), frozenset(tuple(int(v) for v in k) for k in data["keys"])
        )
    if data["kind"] == "value threshold":
        return ValueThreshold(encoder, int(data["column"]), int(data["code"]), bool(data["above"]))
    return OnItems(encoder, event_from_dict(data["event"]))


def _table(counter):
    """A Counter of keys as ``(key matrix, weights)`` for vectorised tallies."""
    keys = list(counter)
    weights = np.fromiter((counter[k] for k in keys), dtype=np.float64, count=len(keys))
    return outcome_matrix(keys), weights


def _view_counter(counter, view):
    return Counter({k: v for k, v in counter.items() if k[0] == view})


def _items_counter(table, width):
    """``{item tuple: hits}`` of the values view, summed over the value cells."""
    matrix, weights = table
    rows = matrix[:, 0] == VIEW_BINS
    block = matrix[rows, 1 : 1 + width]
    if block.shape[0] == 0:
        return Counter()
    distinct, inverse = np.unique(block, axis=0, return_inverse=True)
    sums = np.bincount(inverse.ravel(), weights=weights[rows], minlength=distinct.shape[0])
    return Counter(
        {
            tuple(v for v in row if v != PAD): int(n)
            for row, n in zip(distinct.tolist(), sums.tolist())
        }
    )


def _threshold_hits(table, view, position, n_codes):
    """Hits of every ``{code >= b}`` (b = 1..n_codes) and ``{0 < code < b}`` in one view."""
    matrix, weights = table
    rows = matrix[:, 0] == view
    per_code = np.bincount(matrix[rows, position], weights=weights[rows], minlength=n_codes + 2)
    finite = per_code.astype(float)
    finite[0] = 0.0
    at_least = np.cumsum(finite[::-1])[::-1]  # at_least[b] = hits with code >= b
    below = np.cumsum(finite) - finite  # below[b] = hits with 0 < code < b
    return at_least, below


def _prepared(counter, encoder, cache):
    """Per-counter tallies (key table, per-view counters, item counter), memoised in ``cache``."""
    key = id(counter)
    if cache is None or key not in cache:
        table = _table(counter)
        views = {view: _view_counter(counter, view) for view in (VIEW_BINS, VIEW_SCORE)}
        items = _items_counter(table, encoder.width) if encoder.width else Counter()
        found = (table, views, items, counter)  # the counter is kept so its id stays unique
        if cache is None:
            return found
        cache[key] = found
    return cache[key]


def value_candidate_events(
    encoder: ValueEncoder, counter_p, n_p, counter_q, n_q, focus=(), cache=None
):
    """Candidate events over encoded keys, with hits: regions, thresholds, item events.

    ``cache``: a dict shared across calls on the same counters (screening scores every
    pair in both directions over shared histograms).

    Regions are the likelihood-ratio unions of :func:`.events.candidate_events` within one
    view (a union across views would count a sample twice); thresholds cut one value
    column or the learned score at every bin edge; item events are the integer
    auditor's candidates on the item block alone.
    """
    events: list[Event] = []
    hp: list[float] = []
    hq: list[float] = []
    table_p, views_p, items_p, _ = _prepared(counter_p, encoder, cache)
    table_q, views_q, items_q, _ = _prepared(counter_q, encoder, cache)
    views = [VIEW_BINS] + ([VIEW_SCORE] if encoder.score is not None else [])
    for view in views:
        sub_p, sub_q = views_p[view], views_q[view]
        evs, a, b = candidate_events(sub_p, n_p, sub_q, n_q, structural=False)
        for event, x, y in zip(evs, a, b):
            assert isinstance(event, OutcomeSet)
            events.append(ValueRegion(encoder, view, event.outcomes))
            hp.append(x)
            hq.append(y)
        columns = range(encoder.value_width) if view == VIEW_BINS else [-1]
        for column in columns:
            edges = encoder.edges[column] if column >= 0 else encoder.score_edges
            position = 1 + encoder.width + max(column, 0)
            n_codes = len(edges) + 1
            ap, bp = _threshold_hits(table_p, view, position, n_codes)
            aq, bq = _threshold_hits(table_q, view, position, n_codes)
            for code in range(2, n_codes + 1):
                events.append(ValueThreshold(encoder, column, code, True))
                hp.append(ap[code])
                hq.append(aq[code])
                events.append(ValueThreshold(encoder, column, code, False))
                hp.append(bp[code])
                hq.append(bq[code])
    if encoder.width:
        evs, a, b = candidate_events(items_p, n_p, items_q, n_q, focus=focus)
        for event, x, y in zip(evs, a, b):
            events.append(OnItems(encoder, event))
            hp.append(x)
            hq.append(y)
    return events, np.asarray(hp, dtype=float), np.asarray(hq, dtype=float)
