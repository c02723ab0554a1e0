"""Neighbouring histograms: relations, exhaustive families, pair families and searches.

[`relations`][dpaudit.neighbours.relations] enumerates the neighbours of a histogram under
``AddRemoveUser(Δ)``, ``BoundedChange(m)`` and ``Substitute(Δ)``, every histogram with ``d``
items and counts ``<= C``, and every neighbouring pair touching that family.
"""

from .relations import (
    MAX_CELLS,
    count_histograms,
    histograms,
    is_neighbour,
    neighbour_pairs,
    neighbours_of,
    offsets,
    pair_count_add_remove,
)

__all__ = [
    "MAX_CELLS",
    "count_histograms",
    "histograms",
    "is_neighbour",
    "neighbour_pairs",
    "neighbours_of",
    "offsets",
    "pair_count_add_remove",
]

# Other neighbour modules (pair families, searches) register below, one import line each.
from .candidates import Families, Family, candidate_pairs, default_families
from .local_pairs import local_search_pairs
from .pairs import (
    NeighbourPair,
    default_pairs,
    explicit_pairs,
    random_pairs,
    relation_pairs,
    restricted_domain_pairs,
    substitute_pairs,
)
from .threshold_search import threshold_search_pairs

__all__ += [
    "Families",
    "Family",
    "NeighbourPair",
    "candidate_pairs",
    "default_families",
    "default_pairs",
    "explicit_pairs",
    "local_search_pairs",
    "random_pairs",
    "relation_pairs",
    "restricted_domain_pairs",
    "substitute_pairs",
    "threshold_search_pairs",
]
