"""Find, from samples alone, where a mechanism's output law changes, and put pairs there.

Threshold and gap-test mechanisms (TopStable, StabilityRelease, SparseVector, the
restricted-domain framework and its Gumbel/Normal forms, LimitDomain and its Laplace
form, FixedThreshold, pay-what-you-get sessions) answer ⊥ — or nothing, or fewer items —
until the top counts stand far enough above the rest, and their privacy loss lives where
that answer is in doubt. Fixed pair families put nothing there: TopStable(k=2, k̄=3, ε=1,
δ=1e-3) moves its output only when the gap h_k − h_(k̄+1) is around 15–35.

The search treats the mechanism as a black box, seen only through ``draw``:

1. shapes — a top block of ``m`` items at height ``s`` above a floor of zeros (block
   sizes 1, 2, the mechanism's public ``k`` and ``k̄`` when known, bounded by the domain);
2. a statistic of the output that moves with ``s`` — the share of outputs holding ⊥, or
   if ⊥ never shows, the share of full-length outputs, or the mean length;
3. exponential search for the first height where it has moved, then bisection for the
   heights where it crosses 10 %, 50 % and 90 % of its range (each probe is a few
   thousand samples: the crossing heights only need to be roughly right, because the
   pairs proposed there are then screened, selected and confirmed on fresh samples);
4. pairs — every neighbour move of [`add_remove_pairs`][dpaudit.neighbours.pairs.add_remove_pairs]
   or [`bounded_change_pairs`][dpaudit.neighbours.pairs.bounded_change_pairs] on the bases at those
   heights (and one count above and below), family ``"threshold search"``.

Validity: the search only proposes pairs. Its samples come from their own seed streams
and are never pooled with the confirmation samples, so the confirmed bounds stay valid
whatever it proposes (DESIGN.md, "How the auditor is organised": pair generators).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from mechanisms.claims import RELATIONS
from mechanisms.outcomes import BOTTOM

from .neighbour_pair import NeighbourPair, unique_pairs
from .pairs import relation_pairs

__all__ = ["output_statistic", "threshold_search_pairs", "transition_heights"]

#: Highest block height tried by the exponential search.
MAX_HEIGHT = 4096
#: Levels of the statistic's range at which pairs are placed.
LEVELS = (0.1, 0.5, 0.9)


def output_statistic(counter: Counter, n: int, kind: str) -> float:
    """Share of outputs with ⊥ (``"bottom"``), of full-length outputs (``"full"``), or mean length."""
    if n <= 0:
        return float("nan")
    if kind == "bottom":
        return sum(c for o, c in counter.items() if BOTTOM in o) / n
    lengths = {o: sum(1 for v in o if v != BOTTOM) for o in counter}
    if kind == "full":
        longest = max(lengths.values(), default=0)
        return sum(c for o, c in counter.items() if lengths[o] == longest and longest > 0) / n
    return sum(c * lengths[o] for o, c in counter.items()) / n


def _shape(d: int, block: int, height: int) -> np.ndarray:
    base = np.zeros(d, dtype=np.int64)
    base[:block] = height
    return base


def transition_heights(
    probe: Callable[[int], tuple[Counter, int]],
    *,
    levels=LEVELS,
    max_height: int = MAX_HEIGHT,
    max_probes: int = 24,
) -> list[int]:
    """Heights where the output statistic crosses ``levels`` of its range, by bisection.

    ``probe(height) -> (Counter, n)`` samples the mechanism on the shape at ``height``.
    Returns ``[]`` when the statistic does not move between height 0 and ``max_height``.
    """
    cache: dict[int, tuple[Counter, int]] = {}

    def sample(h):
        if h not in cache:
            cache[h] = probe(h)
        return cache[h]

    low_counter, low_n = sample(0)
    kind = "bottom" if any(BOTTOM in o for o in low_counter) else "length"
    start = output_statistic(low_counter, low_n, kind)
    # Exponential search for a height where the statistic has moved by most of the way.
    height, end, probes = 1, start, 1
    while height <= max_height and probes < max_probes:
        counter, n = sample(height)
        probes += 1
        value = output_statistic(counter, n, kind)
        if kind == "bottom" and value <= 0.02:
            end = value
            break
        if kind == "length" and abs(value - start) >= 0.5 * max(abs(start), 1.0):
            end = value
            break
        end = value
        height *= 2
    if abs(end - start) < 0.05:
        return []
    top = min(height, max_height)
    found = []
    for level in levels:
        target = start + level * (end - start)
        lo, hi = 0, top
        while hi - lo > 1 and probes < max_probes * 3:
            mid = (lo + hi) // 2
            counter, n = sample(mid)
            probes += 1
            value = output_statistic(counter, n, kind)
            if (value - target) * (end - start) >= 0:
                hi = mid
            else:
                lo = mid
        found.append(hi)
    return sorted(set(found))


def _pairs_around(d: int, block: int, heights, relation) -> list[NeighbourPair]:
    """The relation's moves on the ``block``-item shapes at each height and one either side."""
    pairs: list[NeighbourPair] = []
    for height in heights:
        for h in {max(height - 1, 1), height, height + 1}:
            base = _shape(d, block, h)
            pairs += relation_pairs(base, relation, family="threshold search")
    return pairs


def threshold_search_pairs(
    draw,
    relation,
    *,
    domain_size: int,
    kbar: int | None,
    rng: np.random.Generator,
    samples: int,
    k: int | None = None,
    hint_offset: float | None = None,
) -> list[NeighbourPair]:
    """Neighbouring pairs placed where the output law changes, found from samples alone.

    Parameters
    ----------
    draw : ``draw(histograms, per_histogram) -> [(Counter of outcomes, n), ...]``, the
        executor's sampler (the only way the mechanism is seen).
    relation : [`AddRemoveUser`][mechanisms.AddRemoveUser],
        [`BoundedChange`][mechanisms.BoundedChange] or [`Substitute`][mechanisms.Substitute].
    domain_size : items of the probe histograms.
    kbar, k : the mechanism's public k̄ and k when it has them (block sizes to try).
    rng : generator for the order in which shapes are tried (the pairs do not depend on it
        otherwise).
    samples : the most samples the search may draw in total.
    hint_offset : an optional known offset of a fixed threshold above h_(k̄+1) (e.g.
        [`threshold_offset`][dpaudit.neighbours.targeted_pairs.threshold_offset]): its heights are added.
    """
    if not isinstance(relation, RELATIONS):
        raise ValueError(
            f"relation must be AddRemoveUser, BoundedChange or Substitute, got {relation!r}"
        )
    d = int(domain_size)
    blocks = sorted({b for b in (1, 2, k, kbar) if isinstance(b, int) and 1 <= b < d})
    if not blocks or samples <= 0:
        return []
    order = list(rng.permutation(len(blocks)))
    per_probe = max(500, min(4_000, samples // (len(blocks) * 40)))
    spent = 0
    pairs: list[NeighbourPair] = []

    for index in order:
        block = blocks[index]

        def probe(height, block=block):
            nonlocal spent
            if spent + per_probe > samples:
                raise _BudgetSpent
            spent += per_probe
            return draw([_shape(d, block, height)], per_probe)[0]

        try:
            heights = transition_heights(probe)
        except _BudgetSpent:
            break
        if hint_offset is not None and kbar is not None and block == kbar:
            heights = sorted(set(heights) | {int(np.floor(hint_offset))})
        pairs += _pairs_around(d, block, heights, relation)
    return unique_pairs(pairs)


class _BudgetSpent(Exception):
    """The search's sample budget is used up."""
