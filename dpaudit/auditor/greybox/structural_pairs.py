"""Neighbouring pairs whose declared output supports differ: where structural zeros live.

Issue 43, item 3. A pair source for
[`structural_delta`][dpaudit.auditor.greybox.structural_delta.structural_delta]: from any
histogram, the pair that moves items across the edge of a mechanism's declared support
([`DeclaresOutputSupport`][mechanisms.base.DeclaresOutputSupport]) with one user, built from the
declaration alone. The pairs an audit screens seldom have one (a support moves only when counts
meet at its edge), so the stage builds its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechanisms import DeclaresOutputSupport, rank_order, validate_counts

from .inputs import Seed, seed_sequence
from .structural_delta import StructuralDelta, structural_delta

__all__ = ["rank_structural_pairs", "support_edge_pair"]


def support_edge_pair(
    mechanism: Any, counts: Any, max_items: int | None = None
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """``(D, D')``, one user apart, with ``support(D) \\ support(D') ≠ ∅``; None if none is found.

    From ``counts`` with declared support ``S`` (outside it, ``O`` in rank order): take the
    ``g = min(Δ, |O|, |S|)`` highest items of ``O``, set them to ``t``, the lowest count in ``S``
    (or ``t − 1`` when that already brings them into the support: ties go to lower ids), which is
    ``D'``; ``D`` is ``D'`` with one user added to those ``g`` items (or the other way round, when
    adding them pushes items out, as in a strict domain). For the limited domains that
    puts every moved item at ``h_(k̄+1) + 1`` on ``D`` and makes as many items enter as a user
    can move: the pair of largest ``P(S | D)`` (``δ/(1 + δ)`` for LimitDomain when ``g`` is the
    threshold's size term). The declaration decides whether the supports differ; nothing else of
    the mechanism is read.

    Parameters
    ----------
    mechanism : declares ``output_support``.
    counts : a histogram (its support and ranks seed the pair).
    max_items : Δ, the most items one user touches (None: unrestricted).
    """
    if not isinstance(mechanism, DeclaresOutputSupport):
        return None
    base = validate_counts(counts).copy()
    support = mechanism.output_support(base)
    if not support:
        return None
    outside = [int(i) for i in rank_order(base) if int(i) not in support]
    moved = min(len(outside), len(support), max_items if max_items is not None else len(outside))
    if moved == 0:
        return None
    items = np.array(outside[:moved])
    edge = int(min(base[list(support)]))
    for level in (edge, edge - 1):
        if level < 0:
            continue
        neighbour = base.copy()
        neighbour[items] = level
        if set(items.tolist()) & mechanism.output_support(neighbour):
            continue  # at this level they are already in: one lower
        first = neighbour.copy()
        first[items] += 1
        added, without = tuple(int(c) for c in first), tuple(int(c) for c in neighbour)
        if mechanism.output_support(first) - mechanism.output_support(neighbour):
            return added, without
        if mechanism.output_support(neighbour) - mechanism.output_support(first):
            return without, added  # the added items push others out (a strict domain)
    return None


def rank_structural_pairs(
    mechanism: Any,
    pairs: Any,
    *,
    claim: tuple[float, float],
    seed: Seed,
    runs: int = 2_000,
    pilot_runs: int = 500,
) -> list[StructuralDelta]:
    """Quick pilots of every orientation of ``pairs`` whose declared supports differ, worst first.

    For choosing the pair of the stage: each ``(D, D')`` with ``support(D) \\ support(D') ≠ ∅``
    (both orientations of each pair; ``pairs`` are anything with ``counts`` and ``counts2``) gets
    a small [`structural_delta`][dpaudit.auditor.greybox.structural_delta.structural_delta]
    (``runs`` main runs, no declaration check) on its own child of ``SeedSequence(seed)``;
    sorted by ``estimate`` (``P̂(S | D)``), largest first. These runs choose the pair: the stage
    that bounds it must run on other streams.
    """
    if not isinstance(mechanism, DeclaresOutputSupport):
        return []
    oriented = []
    for pair in pairs:
        for d, d2 in ((pair.counts, pair.counts2), (pair.counts2, pair.counts)):
            if mechanism.output_support(np.asarray(d)) - mechanism.output_support(np.asarray(d2)):
                oriented.append((d, d2))
    streams = seed_sequence(seed).spawn(len(oriented)) if oriented else []
    pilots = [
        structural_delta(
            mechanism,
            d,
            d2,
            claim=claim,
            alpha=0.5,
            seed=stream,
            runs=runs,
            pilot_runs=pilot_runs,
            check_runs=0,
        )
        for (d, d2), stream in zip(oriented, streams)
    ]
    return sorted(pilots, key=lambda pilot: -pilot.estimate)
