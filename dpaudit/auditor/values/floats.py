"""Features of the exact double: which counts a released value can come from.

Adding a double-precision Laplace sample to a count is not DP on doubles: the doubles
``fl(c + noise)`` reachable from count ``c`` and from ``c + 1`` are different sparse sets,
so one output can rule a neighbour out (Mironov, CCS 2012, "On significance of the least
significant bits for differential privacy", Sec. 3-4; IBM diffprivlib issue 19). The
auditor tests it with a *noise model*: a sampler's map from its uniform draw ``k`` (an
integer below ``2^53``) to a noise double, and back. A value ``x`` is *reachable* from
``c`` when some ``k`` gives ``fl(c + noise(k)) == x`` exactly;
[`reachable`][dpaudit.auditor.values.floats.reachable] searches the few ``k`` whose noise rounds
near ``x − c`` (a wide window means the noise is dense there, and ``x`` counts as reachable). The
``integer`` model is a grid: ``x − c`` an integer (the discrete noise of
[`mechanisms.discrete_laplace`][mechanisms.discrete_laplace], reachable from every count).

[`fit_float_model`][dpaudit.auditor.values.floats.fit_float_model] learns, on a pair's *learning*
samples only, the model kind, its scale (a round number near the estimated one) and, per side, the
count each value is anchored to (per value column and released item); the encoder then codes each
value by whether it is reachable from the first side's anchor, the second's, both or neither.
Every choice is made before the samples it is applied to, so the pipeline's sample
splitting keeps bounds on these events valid — and a model that is wrong only costs power.

Without a noise model, the *grid* of a double still tells counts apart: the largest power
of two ``2^g`` that divides it, read within its binade. ``fl(c + w)`` for an integer ``c != 0`` lies on the grid of
the spacing of doubles near ``c + w`` or of ``w``'s own spacing near ``-c``, never finer,
while ``c = 0`` releases ``w`` itself with every grid down to the subnormals; so a value
whose grid is finer than a count can make rules that count out, whatever the noise's law
(Box–Muller Gaussian, inverse-CDF or numpy Laplace, …). This is the noise-agnostic form of
the precision attacks of Haney et al., "Precision-based attacks and interval refining"
(arXiv 2207.13793, Sec. 3) and Jin et al., "Are we there yet? Timing and floating-point
attacks on differential privacy systems" (IEEE S&P 2022).
[`grid_separates`][dpaudit.auditor.values.floats.grid_separates] decides on learning samples whether
the grid view is worth its events.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechanisms import MixedBatch

from .batches import column_items

__all__ = [
    "FLOAT_CODES",
    "NOISE_MODELS",
    "FloatModel",
    "fit_float_model",
    "float_codes",
    "grid_cell",
    "grid_codes",
    "grid_separates",
    "has_fractions",
    "low_bits_codes",
    "reachable",
]

#: Uniform draws are ``k · 2^-53`` for an integer ``0 <= k < 2^53`` (53-bit doubles).
DRAW_BITS = 53
#: At most this many candidate draws are tried per value; more means the noise is dense.
WINDOW = 24
#: Value codes of the float view (0 is a missing value).
FLOAT_CODES = {
    0: "missing",
    1: "neither histogram's count",
    2: "the first histogram's count only",
    3: "the second histogram's count only",
    4: "both histograms' counts",
}
#: A model is kept when this share of each side's learning values is reachable.
MIN_REACHABLE = 0.9
#: Learning values per (column, item, side) used to fit a model.
FIT_SAMPLES = 400
#: Low-order mantissa code: trailing zero bits of the 52-bit fraction, capped here.
LOW_BITS_CAP = 12
#: Binades ``e`` (``|x|`` in ``[2^(e-1), 2^e)``) coded one by one; the ones beyond share the
#: end codes.
GRID_BINADES = (-40, 40)
#: Learning values on grids that one side never showed, needed to keep the grid view.
GRID_MIN_ALONE = 8


def _inverse_cdf_laplace(k, scale):
    """Textbook inverse-CDF Laplace (diffprivlib issue 19): ``u = k·2^-53 − ½``."""
    u = k * 2.0**-DRAW_BITS - 0.5
    with np.errstate(divide="ignore"):
        return -scale * np.sign(u) * np.log(1 - 2 * np.abs(u))


def _inverse_cdf_laplace_draw(noise, scale):
    u = np.sign(noise) * -np.expm1(-np.abs(noise) / scale) / 2
    return (u + 0.5) * 2.0**DRAW_BITS


def _numpy_laplace(k, scale):
    """``numpy.random.Generator.laplace(0, scale)``: ``U = k·2^-53``, two branches on ½."""
    u = k * 2.0**-DRAW_BITS
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u >= 0.5, -(scale * np.log(2.0 - u - u)), scale * np.log(u + u))


def _numpy_laplace_draw(noise, scale):
    u = np.where(noise >= 0, 1 - np.exp(-np.abs(noise) / scale) / 2, np.exp(noise / scale) / 2)
    return u * 2.0**DRAW_BITS


#: ``{kind: (noise(k, scale), draw(noise, scale))}``: the samplers the float view knows.
NOISE_MODELS = {
    "inverse-cdf laplace": (_inverse_cdf_laplace, _inverse_cdf_laplace_draw),
    "numpy laplace": (_numpy_laplace, _numpy_laplace_draw),
}


def reachable(kind: str, scale: float, values: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """Whether each double ``values[i]`` is an output of ``anchors[i] + noise`` (module doc)."""
    values = np.asarray(values, dtype=np.float64)
    anchors = np.asarray(anchors, dtype=np.float64)
    finite = np.isfinite(values) & np.isfinite(anchors)
    if kind == "integer":
        gap = np.where(finite, values - anchors, 0.5)
        return finite & (gap == np.round(gap))
    noise, draw = NOISE_MODELS[kind]
    x = np.where(finite, values, 0.0)
    c = np.where(finite, anchors, 0.0)
    slack = 2 * np.spacing(np.abs(x)) + np.spacing(np.abs(x - c))
    with np.errstate(over="ignore", invalid="ignore"):
        low = np.floor(draw(x - c - slack, scale)) - 2
        high = np.ceil(draw(x - c + slack, scale)) + 2
    low = np.clip(np.nan_to_num(low, nan=0.0), 0, 2.0**DRAW_BITS - 1)
    high = np.clip(np.nan_to_num(high, nan=0.0), 0, 2.0**DRAW_BITS - 1)
    found = finite & (high - low > WINDOW)
    for offset in range(WINDOW + 1):
        k = low + offset
        open_ = finite & ~found & (k <= high)
        if not open_.any():
            break
        with np.errstate(over="ignore", invalid="ignore"):
            found |= open_ & (c + noise(k, scale) == x)
    return found


def _round_scales(estimate: float) -> list[float]:
    """Round candidates near ``estimate``: ``m·10^e`` and ``a / (m·10^e)`` as doubles."""
    if not np.isfinite(estimate) or estimate <= 0:
        return []
    found = set()
    for e in range(-4, 4):
        for m in range(1, 20):
            base = float(f"{m}e{e}")
            found.add(base)
            found.update(a / base for a in range(1, 9))
    return sorted(s for s in found if 0.7 * estimate <= s <= 1.4 * estimate)


@dataclass(frozen=True)
class FloatModel:
    """A fitted noise model: kind, scale, and per side ``{(column, item): anchor count}``.

    ``item`` is the id released at position ``column`` (-2, PAD, when the mechanism
    releases no items); a value whose (column, item) has no anchor on a side counts as
    not reachable from that side.
    """

    kind: str
    scale: float
    anchors: tuple[tuple[tuple[int, ...], ...], ...]  # two sides of (column, item, count)

    def anchor_maps(self) -> tuple[dict, ...]:
        return tuple({(col, item): count for col, item, count in side} for side in self.anchors)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "scale": self.scale,
            "anchors": [[list(a) for a in side] for side in self.anchors],
        }

    @classmethod
    def from_dict(cls, data: dict) -> FloatModel:
        anchors = tuple(tuple(tuple(int(v) for v in a) for a in side) for side in data["anchors"])
        return cls(str(data["kind"]), float(data["scale"]), anchors)


def _groups(batch: MixedBatch):
    """``{(column, item): values}`` of the finite values, at most FIT_SAMPLES each."""
    groups = {}
    for column in range(batch.value_width):
        values = batch.values[:, column]
        items = column_items(batch.items, column)
        finite = np.isfinite(values)
        for item in np.unique(items[finite]):
            chosen = values[finite & (items == item)][:FIT_SAMPLES]
            if chosen.size >= 30:
                groups[(column, int(item))] = chosen
    return groups


def _best_anchor(kind, scale, values):
    """The integer anchor near the median from which most ``values`` are reachable.

    First within the median's sampling error; then, if no anchor there reaches most
    values, within three scales of it (a release that conditions its value — a sparse
    vector's answer above its threshold — moves the median away from the count).
    """
    centre = int(np.round(np.median(values)))
    if kind == "integer":
        return centre, float(reachable(kind, scale, values, np.full(values.size, centre)).mean())
    best = (centre, -1.0)
    near = int(np.ceil(4 * scale / np.sqrt(values.size))) + 1
    tried: set[int] = set()
    for spread in (near, max(near, int(np.ceil(3 * scale)))):
        anchors = [a for a in range(centre - spread, centre + spread + 1) if a not in tried]
        tried.update(anchors)
        for anchor, share in zip(anchors, _reachable_shares(kind, scale, values, anchors)):
            if share > best[1]:
                best = (anchor, share)
        if best[1] >= MIN_REACHABLE:
            break
    return best


#: Anchors tried together in one broadcast of ``reachable`` (rows of at most FIT_SAMPLES).
ANCHOR_BLOCK = 64


def _reachable_shares(kind, scale, values, anchors) -> list[float]:
    """The share of ``values`` reachable from each of ``anchors``, a block of anchors a call."""
    shares: list[float] = []
    for start in range(0, len(anchors), ANCHOR_BLOCK):
        block = np.asarray(anchors[start : start + ANCHOR_BLOCK], dtype=np.float64)[:, None]
        shape = (block.shape[0], values.size)
        found = reachable(
            kind, scale, np.broadcast_to(values, shape), np.broadcast_to(block, shape)
        )
        shares += found.mean(axis=1).tolist()
    return shares


def _fit_kind(kind, scale, sides):
    anchors, weighted, total = [], 0.0, 0
    for groups in sides:
        side = []
        for (column, item), values in groups.items():
            anchor, share = _best_anchor(kind, scale, values)
            side.append((column, item, anchor))
            weighted += share * values.size
            total += values.size
        anchors.append(tuple(side))
    return (weighted / total if total else 0.0), tuple(anchors)


def fit_float_model(samples_p: MixedBatch, samples_q: MixedBatch) -> FloatModel | None:
    """The noise model that makes most learning values reachable, or None (module doc)."""
    sides = [_groups(samples_p), _groups(samples_q)]
    if not sides[0] or not sides[1]:
        return None
    best: tuple[float, FloatModel | None] = (MIN_REACHABLE, None)
    share, anchors = _fit_kind("integer", 1.0, sides)
    if share >= best[0]:
        return FloatModel("integer", 1.0, anchors)
    pooled = np.concatenate([np.abs(v - np.median(v)) for groups in sides for v in groups.values()])
    probe = max(sides[0].values(), key=len)[:100]  # a quick first test of each scale
    for kind in NOISE_MODELS:
        for scale in _round_scales(float(np.mean(pooled))):
            if _best_anchor(kind, scale, probe)[1] < MIN_REACHABLE:
                continue
            share, anchors = _fit_kind(kind, scale, sides)
            if share >= best[0]:
                best = (share, FloatModel(kind, scale, anchors))
    return best[1]


def float_codes(model: FloatModel, batch: MixedBatch) -> np.ndarray:
    """Per value: 0 missing, else 1 + reachable from the first side + 2 · from the second."""
    codes = np.zeros(batch.values.shape, dtype=np.int64)
    maps = model.anchor_maps()
    for column in range(batch.value_width):
        values = batch.values[:, column]
        items = column_items(batch.items, column)
        flags = []
        for anchor_of in maps:
            anchors = np.full(batch.size, np.nan)
            for (col, item), count in anchor_of.items():
                if col == column:
                    anchors[items == item] = count
            flags.append(reachable(model.kind, model.scale, values, anchors))
        codes[:, column] = np.where(
            np.isnan(values), 0, 1 + flags[0].astype(np.int64) + 2 * flags[1].astype(np.int64)
        )
    return codes


def low_bits_codes(values: np.ndarray) -> np.ndarray:
    """0 for NaN, else 1 + the trailing zero bits of the 52-bit fraction (capped)."""
    bits = np.where(np.isfinite(values), values, 0.0).view(np.int64) & ((1 << 52) - 1)
    # The lowest set bit is a power of two 2^z: frexp gives z + 1 exactly (0 has none).
    _, exponent = np.frexp((bits & -bits).astype(np.float64))
    zeros = np.where(bits == 0, LOW_BITS_CAP, np.minimum(exponent - 1, LOW_BITS_CAP))
    return np.where(np.isnan(values), 0, 1 + zeros.astype(np.int64))


def grid_codes(values: np.ndarray) -> np.ndarray:
    """0 for NaN, 1 for zero, else ``2 +`` the cell (sign, binade, grid within the binade).

    For ``x = ±m · 2^e`` with ``m`` in ``[0.5, 1)`` (``numpy.frexp``), the binade ``e`` is
    clipped to GRID_BINADES and the grid within it is the number of trailing zero bits of
    the 53-bit significand ``m · 2^53`` (capped at LOW_BITS_CAP): ``x`` is a multiple of
    ``2^(e - 53 + zeros)``. A value's grid is only informative beside its binade (a count's
    outputs are coarse in the binades near the count and fine far below it), so the two
    are coded together; [`grid_cell`][dpaudit.auditor.values.floats.grid_cell] reads a code back.
    """
    finite = np.isfinite(values) & (values != 0)
    mantissa, exponent = np.frexp(np.where(finite, values, 1.0))
    # m in [0.5, 1) has 53 significant bits: m · 2^53 is an exact integer.
    integer = np.abs(np.ldexp(mantissa, 53)).astype(np.int64)
    lowest = integer & -integer
    zeros = np.minimum(np.frexp(lowest.astype(np.float64))[1] - 1, LOW_BITS_CAP)
    low, high = GRID_BINADES
    binade = np.clip(exponent, low, high) - low
    cell = ((mantissa < 0) * (high - low + 1) + binade) * (LOW_BITS_CAP + 1) + zeros
    return np.where(np.isnan(values), 0, np.where(finite, 2 + cell, 1)).astype(np.int64)


def grid_cell(code: int) -> tuple[int, int, int]:
    """``(sign, binade e, trailing zeros)`` of a [`grid_codes`][dpaudit.auditor.values.floats.grid_codes] code >= 2."""
    low, high = GRID_BINADES
    cell = code - 2
    zeros = cell % (LOW_BITS_CAP + 1)
    rest = cell // (LOW_BITS_CAP + 1)
    binade = rest % (high - low + 1) + low
    return (-1 if rest // (high - low + 1) else 1), binade, zeros


def has_fractions(values: np.ndarray) -> bool:
    """True when some finite value is not an integer (a release of doubles with a grid)."""
    finite = values[np.isfinite(values)]
    return bool(finite.size) and not np.all(finite == np.round(finite))


def grid_separates(samples_p: MixedBatch, samples_q: MixedBatch) -> bool:
    """True when some grid holds at least GRID_MIN_ALONE learning values of one side only.

    Judged per value column on learning samples (never on the ones later counted).
    """
    for column in range(samples_p.values.shape[1]):
        seen_p = np.bincount(grid_codes(samples_p.values[:, column]))
        seen_q = np.bincount(grid_codes(samples_q.values[:, column]))
        size = max(seen_p.size, seen_q.size)
        seen_p = np.pad(seen_p, (0, size - seen_p.size))
        seen_q = np.pad(seen_q, (0, size - seen_q.size))
        alone = np.where(seen_q[1:] == 0, seen_p[1:], 0) + np.where(seen_p[1:] == 0, seen_q[1:], 0)
        if alone.sum() >= GRID_MIN_ALONE:
            return True
    return False
