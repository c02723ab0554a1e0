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
from .exponential import ExponentialMechanism, GumbelTopK, PeelingEM
from .limit_domain import LimitDomain, LimitDomainOptimizedKbar, StrictLimitDomain
from .sparse_vector import SparseVector
from .stability import StabilityRelease, TopStable
from .restricted_domain import RestrictedDomain, RestrictedGumbel, RestrictedNormal
from .multi_limit_domain import BudgetExhaustedError, MultiLimitDomain, MultiLimitDomainConfig
from .joint import Joint, JointSequence
from .laplace import GaussianTopK, LaplaceTopK, PermuteAndFlip, ReportNoisyMax
from .laplace_limit_domain import LaplaceLimitDomain

__all__ = [
    "TopKMechanism", "check_rng", "check_size",
    "UNRESTRICTED", "AddRemoveUser", "BoundedChange", "NeighbourRelation", "PrivacyClaim",
    "TopCounts", "as_top_counts", "rank_order", "top_counts", "validate_counts",
    "BOTTOM", "PAD", "batch_from_outcomes", "count_outcomes", "outcome_from_row",
    "outcomes_from_batch", "accounting",
    "ExponentialMechanism",
    "PeelingEM",
    "GumbelTopK",
    "LimitDomain",
    "StrictLimitDomain",
    "LimitDomainOptimizedKbar",
    "SparseVector",
    "StabilityRelease",
    "TopStable",
    "RestrictedDomain",
    "RestrictedGumbel",
    "RestrictedNormal",
    "MultiLimitDomain",
    "MultiLimitDomainConfig",
    "BudgetExhaustedError",
    "Joint",
    "JointSequence",
    "ReportNoisyMax",
    "LaplaceTopK",
    "PermuteAndFlip",
    "GaussianTopK",
    "LaplaceLimitDomain",
]
