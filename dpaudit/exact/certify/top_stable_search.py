"""Branch and bound over TopStable's shapes: a certified upper bound on the worst ε at δ.

Each shape of [`top_stable`][dpaudit.exact.certify.top_stable] starts as one box, every free gap
in ``[1, ∞]``; the box with the largest ε bound is split until every bound is within ``rtol`` of
the lower end (the exact ε of a given pair, ``output_law``). The leaves cover every pair of
every shape; [`recheck_top_stable`][dpaudit.exact.certify.top_stable_search.recheck_top_stable]
re-enumerates the shapes, checks the cover and re-derives every leaf bound.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from ..law import output_law, working_precision
from ..profile import epsilon_from_laws
from .top_stable import INF, TopStableShape, canonical_shapes
from .top_stable_bounds import TopStableBounds

__all__ = ["TopStableCertificate", "certify_top_stable", "recheck_top_stable"]

#: The worst pair found by ``dpaudit worst-case`` for TopStable(2, 3, 1, 1e-3) (issue 45).
DEFAULT_PAIR = ((60, 36, 4, 4, 0), (61, 36, 4, 5, 0))


@dataclass(frozen=True)
class TopStableCertificate:
    """``[lower, upper]`` on the worst ε at δ of TopStable over every add/remove pair (d >= k̄).

    ``leaves`` are ``(shape index, lo, hi, bound)`` with ``lo``/``hi`` per free gap (INF
    allowed); the shapes are ``canonical_shapes(k̄)`` in order.
    """

    mechanism: str
    delta: float
    lower: float
    upper: float
    pair: tuple[tuple[int, ...], tuple[int, ...]]
    leaves: tuple[tuple[int, tuple, tuple, float], ...]
    converged: bool
    seconds: float
    regions: int

    def to_dict(self) -> dict:
        return {
            "format": "dpaudit-top-stable-certificate",
            "format_version": 1,
            "mechanism": self.mechanism,
            "delta": self.delta,
            "lower": self.lower,
            "upper": self.upper,
            "pair": [list(self.pair[0]), list(self.pair[1])],
            "leaves": [
                [i, [_enc(v) for v in lo], [_enc(v) for v in hi], _enc(b)]
                for i, lo, hi, b in self.leaves
            ],
            "converged": self.converged,
            "seconds": self.seconds,
            "regions": self.regions,
        }


def _enc(v):
    return "inf" if v == INF else v


def _dec(v):
    return INF if v == "inf" else v


def exact_epsilon(mechanism, pair, delta: float) -> float:
    """The exact ε at δ of ``pair`` (both directions), from ``output_law``."""
    with working_precision():
        a = output_law(mechanism, np.asarray(pair[0], dtype=np.int64))
        b = output_law(mechanism, np.asarray(pair[1], dtype=np.int64))
        return float(epsilon_from_laws(a, b, delta))


#: A side starting at or above this is not split (a heuristic; bounds stay rigorous): a test
#: there fails with probability at most 3.5e-13 for TopStable(2, 3, 1, 1e-3) (φ(120)).
SPLIT_CAP = 120


def _split(shape: TopStableShape, lo: tuple, hi: tuple):
    """Split a side that starts below ``SPLIT_CAP``: an infinite one first ([a, ∞] -> [a, 2a + 1],
    [2a + 2, ∞]), else the widest finite one in halves; None for a point (or only capped sides)."""
    best, best_width = None, 0.0
    for j, (a, b) in enumerate(zip(lo, hi)):
        if a >= SPLIT_CAP:
            continue  # saturated: the tests there all but surely pass
        width = INF if b == INF else b - a
        if width > best_width:
            best, best_width = j, width
    if best is None:
        return None
    a, b = lo[best], hi[best]
    cut = 2 * a + 1 if b == INF else (a + b) // 2
    left_hi = list(hi)
    left_hi[best] = cut
    right_lo = list(lo)
    right_lo[best] = cut + 1
    return (lo, tuple(left_hi)), (tuple(right_lo), hi)


def _bound(bounds: TopStableBounds, shape: TopStableShape, lo: tuple, hi: tuple, delta) -> float:
    free = shape.free
    return bounds.epsilon_bound(shape, dict(zip(free, lo)), dict(zip(free, hi)), delta)


def certify_top_stable(
    mechanism,
    *,
    delta: float | None = None,
    rtol: float = 0.01,
    seconds: float = 600.0,
    pair=DEFAULT_PAIR,
) -> TopStableCertificate:
    """Certify the worst ε at δ of ``mechanism`` (TopStable, ε_EM = 0) over every pair, d >= k̄.

    ``pair`` supplies the lower end (its exact ε). The search splits the box with the largest
    bound until it is within ``rtol`` of the lower end or ``seconds`` run out (the upper end is
    rigorous either way).
    """
    start = time.perf_counter()
    delta = float(mechanism.claim.delta if delta is None else delta)
    lower = exact_epsilon(mechanism, pair, delta)
    bounds = TopStableBounds(mechanism)
    shapes = canonical_shapes(mechanism.kbar)
    heap: list = []
    leaves: list = []
    regions = 0
    for index, shape in enumerate(shapes):
        lo = tuple(1 for _ in shape.free)
        hi = tuple(INF for _ in shape.free)
        b = _bound(bounds, shape, lo, hi, delta)
        regions += 1
        heapq.heappush(heap, (-b, index, lo, hi))
    target = (1 + rtol) * lower
    converged = True
    while heap and -heap[0][0] > target:
        if time.perf_counter() - start > seconds:
            converged = False
            break
        neg, index, lo, hi = heapq.heappop(heap)
        parts = _split(shapes[index], lo, hi)
        if parts is None:  # a single point: exact for its shape
            leaves.append((index, lo, hi, -neg))
            converged = False
            continue
        for plo, phi in parts:
            b = _bound(bounds, shapes[index], plo, phi, delta)
            regions += 1
            heapq.heappush(heap, (-b, index, plo, phi))
    leaves.extend((index, lo, hi, -neg) for neg, index, lo, hi in heap)
    upper = max(b for *_, b in leaves)
    return TopStableCertificate(
        mechanism=repr(mechanism),
        delta=delta,
        lower=lower,
        upper=upper,
        pair=(tuple(pair[0]), tuple(pair[1])),
        leaves=tuple(sorted(leaves, key=lambda x: (x[0], x[1]))),
        converged=converged and upper <= target,
        seconds=time.perf_counter() - start,
        regions=regions,
    )


def _covers(boxes: list[tuple[tuple, tuple]], lo: tuple, hi: tuple) -> bool:
    """Whether the integer boxes cover ``[lo, hi]`` (INF allowed as an upper end).

    Sweep the first coordinate: the set of boxes containing ``x`` only changes where a box
    starts or just after one ends, so checking the rest at those points (and ``lo``) suffices.
    """
    if not lo:
        return len(boxes) >= 1
    cuts = {lo[0]} | {b[0][0] for b in boxes} | {b[1][0] + 1 for b in boxes if b[1][0] != INF}
    for a in sorted(c for c in cuts if lo[0] <= c <= hi[0]):
        inside = [(b[0][1:], b[1][1:]) for b in boxes if b[0][0] <= a <= b[1][0]]
        if not _covers(inside, lo[1:], hi[1:]):
            return False
    return True


def recheck_top_stable(data: dict, mechanism) -> tuple[bool, str]:
    """Re-enumerate the shapes, check the leaves tile ``[1, ∞]^free`` of each, re-derive bounds.

    A leaf's bound is checked, not searched for again: the box's δ bound at the stated ε must be
    at most δ (``TopStableBounds.holds``). Returns ``(ok, message)``: refused when a leaf's
    bound does not hold or its box ends are not integers, when a shape is not covered, when
    the stated upper end is below a leaf, when the pair is not an add pair, or when the pair's
    exact ε is not the stated lower end.
    """
    if data.get("format") != "dpaudit-top-stable-certificate":
        return False, "not a TopStable certificate"
    delta = float(data["delta"])
    shapes = canonical_shapes(mechanism.kbar)
    bounds = TopStableBounds(mechanism)
    by_shape: dict[int, list] = {}
    for i, (index, lo, hi, b) in enumerate(data["leaves"]):
        lo, hi, b = tuple(_dec(v) for v in lo), tuple(_dec(v) for v in hi), _dec(b)
        if not 0 <= index < len(shapes) or len(lo) != len(shapes[index].free):
            return False, f"leaf {i}: no such shape or box"
        if not all(isinstance(v, int) or v == INF for v in (*lo, *hi)):
            return False, f"leaf {i}: box ends must be integers or inf"
        if b > float(data["upper"]):
            return False, f"leaf {i}: bound {b} above the stated upper end"
        if not bounds.holds(
            shapes[index],
            dict(zip(shapes[index].free, lo)),
            dict(zip(shapes[index].free, hi)),
            b,
            delta,
        ):
            return False, f"leaf {i} (shape {index}, box {lo}..{hi}): bound {b} does not hold"
        by_shape.setdefault(index, []).append((lo, hi))
    for index, shape in enumerate(shapes):
        n = len(shape.free)
        full = (tuple(1 for _ in range(n)), tuple(INF for _ in range(n)))
        if not _covers(by_shape.get(index, []), *full):
            return False, f"shape {index} ({shape}) is not covered"
    a, b = (np.asarray(c, dtype=np.int64) for c in data["pair"])
    if a.shape != b.shape or not (set(np.unique(b - a)) <= {0, 1} and (b - a).any()):
        return False, "the pair is not D, D + 1_S with S non-empty"
    lower = exact_epsilon(mechanism, data["pair"], delta)
    if not math.isclose(lower, float(data["lower"]), rel_tol=1e-9):
        return False, f"the pair's exact ε is {lower}, not the stated {data['lower']}"
    return (
        True,
        f"certificate OK: {len(data['leaves'])} leaves, ε in [{lower:.6g}, {data['upper']:.6g}]",
    )
