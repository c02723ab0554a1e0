"""A pair of neighbouring histograms, the user's own pairs, and the helpers every family shares.

The families that build pairs are in [`pairs`][dpaudit.neighbours.pairs] and
[`targeted_pairs`][dpaudit.neighbours.targeted_pairs]; the relations in
[`relations`][dpaudit.neighbours.relations].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechanisms.histogram import validate_counts

from .relations import is_neighbour

__all__ = ["NAMED", "NeighbourPair", "array_pair", "explicit_pairs", "unique_pairs"]


#: The ``family`` of a pair the user names (``pairs=``, ``--pair``): such a pair is
#: confirmed, not only screened (``dpaudit.auditor.search.slots.with_named_pairs``).
NAMED = "explicit"


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring histograms (as tuples, so pairs hash) and where they came from."""

    counts: tuple
    counts2: tuple
    family: str = NAMED

    def __post_init__(self):
        a = validate_counts(self.counts, "counts")
        b = validate_counts(self.counts2, "counts2")
        if a.size != b.size:
            raise ValueError(f"counts and counts2 differ in length ({a.size} vs {b.size})")
        object.__setattr__(self, "counts", tuple(int(v) for v in a))
        object.__setattr__(self, "counts2", tuple(int(v) for v in b))

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.counts, dtype=np.int64), np.array(self.counts2, dtype=np.int64)

    def swapped(self) -> NeighbourPair:
        return NeighbourPair(self.counts2, self.counts, self.family)

    def __str__(self) -> str:
        return f"{list(self.counts)} vs {list(self.counts2)}"


def array_pair(c: np.ndarray, c2: np.ndarray, family: str) -> NeighbourPair:
    """The pair of two count arrays (a pair holds tuples, so that pairs hash)."""
    return NeighbourPair(tuple(c.tolist()), tuple(c2.tolist()), family)


def unique_pairs(pairs):
    """``pairs`` without a pair of equal histograms or a repeat (either way round), in order."""
    seen = set()
    out = []
    for pair in pairs:
        key = frozenset([pair.counts, pair.counts2])
        if pair.counts != pair.counts2 and key not in seen:
            seen.add(key)
            out.append(pair)
    return out


def explicit_pairs(pairs, relation=None) -> list[NeighbourPair]:
    """The user's ``[(counts, counts2), ...]``; each is checked against ``relation`` if given."""
    out = []
    for item in pairs:
        pair = item if isinstance(item, NeighbourPair) else NeighbourPair(item[0], item[1], NAMED)
        if relation is not None and not is_neighbour(pair.counts, pair.counts2, relation):
            raise ValueError(f"pair {pair} is not a pair of neighbours under {relation}")
        out.append(pair)
    if not out:
        raise ValueError("pairs must hold at least one (counts, counts2) pair")
    return out
