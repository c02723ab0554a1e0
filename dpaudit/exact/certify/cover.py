"""The finite cover of LimitDom's neighbouring pairs by shapes, and the shape of an actual pair.

Seed 003 (003_9293f5da18078e1b.txt) Alg. 1; the reduction is argued in the module docstring of
[`shapes`][dpaudit.exact.certify.shapes] (docs/certify.md §2): ``enumerate_shapes`` lists every
shape of a model's family, ``locate`` maps a pair back to its shape (to test the reduction).
"""

from __future__ import annotations

import itertools

import numpy as np

from .shapes import FREE, LimitDomainModel, Shape

__all__ = ["enumerate_shapes", "locate"]


def locate(model: LimitDomainModel, counts, counts2) -> tuple[Shape, dict[int, int], dict]:
    """The shape, free gaps and label → item id map of an actual pair ``(D, D + 1_S)``.

    The inverse of [`Shape.realise`][dpaudit.exact.certify.shapes.Shape.realise], used to test the
    reduction: every pair of the family lands in a shape of ``enumerate_shapes`` whose laws at its
    gaps are the pair's laws. Raises ``ValueError`` if ``counts2 − counts`` is not a non-empty 0/1
    vector, ``LookupError`` if no split of the shape gives the pair's candidates.
    """
    a = np.asarray(counts, dtype=np.int64)
    b = np.asarray(counts2, dtype=np.int64)
    step = b - a
    if a.size != b.size or not np.isin(step, (0, 1)).all() or not step.any():
        raise ValueError("counts2 must be counts + 1_S for a non-empty S")
    kbar = model.kbar
    order = sorted(range(a.size), key=lambda i: (-a[i], i))
    h = int(a[order[kbar]])
    top = order[: kbar + 1]
    gaps = [int(a[order[i]] - a[order[i + 1]]) for i in range(kbar)]
    classes = tuple(min(g, FREE) for g in gaps)
    x = tuple(int(step[i]) for i in top)
    rest = order[kbar + 1 :]
    above = [i for i in rest if a[i] == h and step[i]][: kbar + 1]
    below = sorted(i for i in rest if a[i] == h - 1 and step[i])[: kbar + 1]
    free = {j: gaps[j] for j, c in enumerate(classes) if c == FREE}
    ids = {n: int(i) for n, i in enumerate(top)}
    ids.update({kbar + 1 + n: int(i) for n, i in enumerate(above)})
    ids.update({kbar + 1 + len(above) + n: int(i) for n, i in enumerate(below)})
    after = set(sorted(range(b.size), key=lambda i: (-b[i], i))[:kbar])
    probe = Shape(classes, x, len(above), len(below), -1)
    for split in probe.boundary()[2]:
        shape = Shape(classes, x, len(above), len(below), split)
        if {ids[shape.label(item)] for item in shape.candidates_after()[0]} == after:
            return shape, free, ids
    raise LookupError(f"no split of {probe} gives the candidates {sorted(after)} of D'")


def enumerate_shapes(model: LimitDomainModel) -> list[Shape]:
    """Every shape of the model's family (S non-empty, |S| <= Δ, at most d items)."""
    kbar = model.kbar
    cap = kbar + 1  # more fringe items of one kind never reach the top k̄ + 1 of D'
    room = model.fringe_room
    shapes: list[Shape] = []
    for classes in itertools.product((0, 1, FREE), repeat=kbar):
        for x in itertools.product((0, 1), repeat=kbar + 1):
            for above in range(min(cap, room) + 1):
                for below in range(min(cap, room - above) + 1):
                    size = sum(x) + above + below
                    if size == 0 or (model.max_items is not None and size > model.max_items):
                        continue
                    probe = Shape(classes, x, above, below, -1)
                    shapes.extend(
                        Shape(classes, x, above, below, split) for split in probe.boundary()[2]
                    )
    return shapes
