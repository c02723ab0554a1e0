"""Branch and bound over the shapes and gap boxes of a LimitDom family: a certified interval.

Each region is a shape ([`shapes`][dpaudit.exact.certify.shapes]) with an integer box of its free gaps;
its upper bound comes from [`bounds`][dpaudit.exact.certify.bounds], its lower bound from the exact
pairs at its finite vertices (realisable shapes only). The region with the largest upper bound is
split (the free gap whose weight ``e^{−ε g}`` varies most over the box; an infinite side
``[lo, ∞]`` splits into ``[lo, 2 lo]`` and ``[2 lo + 1, ∞]``) until the largest upper bound is
within ``rtol`` of the best attained value or the time budget runs out. The unsplit regions are
the certificate's leaves; the interval is [best attained, largest leaf bound].
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .bounds import INF, Box, LawBounds, law_bounds, log_ratio_upper
from .cover import enumerate_shapes
from .hockey_stick import Direction, delta_upper, epsilon_upper, pair_delta, pair_epsilon
from .shapes import FREE, LimitDomainModel, Shape

__all__ = ["Leaf", "SearchOutcome", "bound_holds", "branch_and_bound", "region_bounds"]

QUANTITIES = ("delta", "epsilon")


@dataclass(frozen=True)
class Leaf:
    """A region of pair space that was not split, and its upper bound."""

    shape: Shape
    box: Box
    upper: float

    def to_dict(self) -> dict:
        return {
            "shape": self.shape.to_dict(),
            "box": [[lo, "inf" if math.isinf(hi) else hi] for lo, hi in self.box],
            "upper": "inf" if math.isinf(self.upper) else self.upper,
        }


@dataclass(frozen=True)
class SearchOutcome:
    """What the search found: the bounds, the best point, the leaves and the effort."""

    lower: float
    upper: float
    best_shape: Shape | None
    best_point: tuple[int, ...] | None
    leaves: tuple[Leaf, ...]
    regions: int
    converged: bool
    seconds: float


def region_directions(
    model: LimitDomainModel, shape: Shape, box: Box
) -> tuple[Direction, Direction, LawBounds, LawBounds]:
    """Both directions' per-outcome bounds over one region, and the two laws' bounds."""
    law_d, law_d2 = shape.laws(model)
    eps = model.epsilon
    bp = law_bounds(law_d, box, eps)
    bq = law_bounds(law_d2, box, eps)
    forward = Direction.build(bp, bq, log_ratio_upper(law_d, law_d2, box, eps))
    backward = Direction.build(bq, bp, log_ratio_upper(law_d2, law_d, box, eps))
    return forward, backward, bp, bq


def region_bounds(
    model: LimitDomainModel, shape: Shape, box: Box, quantity: str, at: float
) -> tuple[float, float, tuple | None]:
    """``(upper, best attained at a finite vertex, that vertex)`` of one region."""
    forward, backward, bp, bq = region_directions(model, shape, box)
    value: Callable[[dict, dict, float], float]
    if quantity == "delta":
        upper = delta_upper(forward, backward, at)
        value = pair_delta
    else:
        upper = epsilon_upper(forward, backward, at)
        value = pair_epsilon
    best, best_vertex = -INF, None
    for vertex, law_p in bp.vertex_laws.items():
        v = value(law_p, bq.vertex_laws[vertex], at)
        if v > best:
            best, best_vertex = v, vertex
    return upper, best, best_vertex


def bound_holds(
    model: LimitDomainModel, shape: Shape, box: Box, quantity: str, at: float, stated: float
) -> bool:
    """Whether ``stated`` bounds the region: one rounded-up δ evaluation, no search."""
    if math.isinf(stated):
        return True
    forward, backward, _, _ = region_directions(model, shape, box)
    if quantity == "delta":
        return delta_upper(forward, backward, at) <= stated
    return delta_upper(forward, backward, stated) <= at


def _split(box: Box, epsilon: float) -> tuple[Box, Box] | None:
    """Split the side whose weight e^{−ε g} varies most; None if the box is a point."""
    best, side = 0.0, None
    for i, (lo, hi) in enumerate(box):
        if lo == hi:
            continue
        spread = math.exp(-epsilon * lo) - (0.0 if math.isinf(hi) else math.exp(-epsilon * hi))
        if spread > best or side is None:
            best, side = spread, i
    if side is None:
        return None
    lo, hi = box[side]
    cut = 2 * lo if math.isinf(hi) else (lo + hi) // 2
    left = (*box[:side], (lo, cut), *box[side + 1 :])
    right = (*box[:side], (cut + 1, hi), *box[side + 1 :])
    return left, right


@dataclass(order=True)
class _Region:
    key: float
    serial: int
    shape: Shape = field(compare=False)
    box: Box = field(compare=False)
    upper: float = field(compare=False)


class _Frontier:
    """The regions left to split (a heap, largest upper bound first) and the best value attained."""

    def __init__(self, model: LimitDomainModel, quantity: str, at: float) -> None:
        self.model, self.quantity, self.at = model, quantity, at
        self.heap: list[_Region] = []
        self.realisable: dict[Shape, bool] = {}
        self.lower = -INF
        self.best_shape: Shape | None = None
        self.best_point: tuple[int, ...] | None = None
        self.serial = 0

    def add(self, shape: Shape, box: Box) -> None:
        """Bound a region, keep its attained value when its shape is realisable, and queue it."""
        upper, value, vertex = region_bounds(self.model, shape, box, self.quantity, self.at)
        if vertex is not None and value > self.lower:
            if shape not in self.realisable:
                self.realisable[shape] = shape.realisable
            if self.realisable[shape]:
                self.lower, self.best_shape = value, shape
                self.best_point = tuple(int(g) for g in vertex)
        self.serial += 1
        heapq.heappush(self.heap, _Region(-upper, self.serial, shape, box, upper))


def branch_and_bound(
    model: LimitDomainModel,
    quantity: str,
    at: float,
    *,
    rtol: float = 0.01,
    seconds: float = 600.0,
    shapes: list[Shape] | None = None,
) -> SearchOutcome:
    """Certified ``[lower, upper]`` on the worst δ at ε = ``at`` or ε at δ = ``at`` of the family.

    Parameters
    ----------
    model : the mechanism and family.
    quantity : ``"delta"`` (worst δ at ε = ``at``) or ``"epsilon"`` (worst ε at δ = ``at``).
    at : the ε or δ.
    rtol : stop when the largest upper bound is <= (1 + rtol) · the best attained value.
    seconds : time budget; on expiry the interval is still rigorous, only wider.
    shapes : the shapes to cover (default: every shape of the family).
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {QUANTITIES}, got {quantity!r}")
    start = time.perf_counter()
    shapes = enumerate_shapes(model) if shapes is None else shapes
    frontier = _Frontier(model, quantity, at)
    heap = frontier.heap
    leaves: list[Leaf] = []
    for shape in shapes:
        nfree = sum(1 for c in shape.classes if c == FREE)
        frontier.add(shape, ((2, INF),) * nfree)
    converged = False
    while heap:
        top = heap[0]
        if top.upper <= frontier.lower * (1 + rtol) or top.upper <= 0:
            converged = True
            break
        if time.perf_counter() - start > seconds:
            break
        heapq.heappop(heap)
        halves = _split(top.box, model.epsilon)
        if halves is None:
            leaves.append(Leaf(top.shape, top.box, top.upper))
            continue
        for half in halves:
            frontier.add(top.shape, half)
    leaves.extend(Leaf(r.shape, r.box, r.upper) for r in heap)
    if not heap:
        converged = max(leaf.upper for leaf in leaves) <= frontier.lower * (1 + rtol)
    return SearchOutcome(
        lower=frontier.lower,
        upper=max(leaf.upper for leaf in leaves),
        best_shape=frontier.best_shape,
        best_point=frontier.best_point,
        leaves=tuple(leaves),
        regions=frontier.serial,
        converged=converged,
        seconds=time.perf_counter() - start,
    )
