"""Reference implementations of differentially private top-k selection mechanisms.

No dependency on :mod:`dpaudit`. See DESIGN.md for the shared conventions.
"""

from .base import TopKMechanism, check_rng, check_size
from .claims import UNRESTRICTED, AddRemoveUser, BoundedChange, NeighbourRelation, PrivacyClaim
from .histogram import TopCounts, as_top_counts, rank_order, top_counts, validate_counts
from .outcomes import (
    BOTTOM,
    PAD,
    batch_from_outcomes,
    count_outcomes,
    outcome_from_row,
    outcomes_from_batch,
)
from . import accounting

__all__ = [
    "TopKMechanism", "check_rng", "check_size",
    "UNRESTRICTED", "AddRemoveUser", "BoundedChange", "NeighbourRelation", "PrivacyClaim",
    "TopCounts", "as_top_counts", "rank_order", "top_counts", "validate_counts",
    "BOTTOM", "PAD", "batch_from_outcomes", "count_outcomes", "outcome_from_row",
    "outcomes_from_batch", "accounting",
]

# Mechanism modules register themselves below, one import line each.
