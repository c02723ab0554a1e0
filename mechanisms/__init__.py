"""Reference implementations of differentially private top-k selection mechanisms.

No dependency on :mod:`dpaudit`. See DESIGN.md for the shared conventions.
"""

from . import accounting, profiles
from .analyst_policies import (
    AnalystPolicy,
    FunctionPolicy,
    RepeatQuery,
    ScriptedQueries,
    SessionQuery,
    WidenAfterBottom,
)
from .base import TopKMechanism, check_rng, check_size
from .claims import (
    UNRESTRICTED,
    AddRemoveUser,
    BoundedChange,
    NeighbourRelation,
    PrivacyClaim,
    ProfileClaim,
    Substitute,
)
from .exponential import ExponentialMechanism, GumbelTopK, PeelingEM
from .fixed_threshold import FixedThreshold
from .histogram import TopCounts, as_top_counts, rank_order, top_counts, validate_counts
from .joint import Joint, JointSequence
from .laplace import GaussianTopK, LaplaceTopK, PermuteAndFlip, ReportNoisyMax
from .laplace_limit_domain import LaplaceLimitDomain
from .limit_domain import LimitDomain, LimitDomainOptimizedKbar, StrictLimitDomain
from .multi_limit_domain import BudgetExhaustedError, MultiLimitDomain, MultiLimitDomainConfig
from .noisy_counts import NoisyCount, NoisyCountsRelease
from .outcomes import (
    BOTTOM,
    PAD,
    MixedBatch,
    batch_from_outcomes,
    count_outcomes,
    outcome_from_row,
    outcomes_from_batch,
)
from .restricted_domain import RestrictedDomain, RestrictedGumbel, RestrictedNormal
from .session_transcript import MultiLimitDomainTranscript
from .sparse_vector import SparseVector
from .stability import StabilityRelease, TopStable

__all__ = [
    "BOTTOM",
    "PAD",
    "UNRESTRICTED",
    "AddRemoveUser",
    "AnalystPolicy",
    "BoundedChange",
    "BudgetExhaustedError",
    "ExponentialMechanism",
    "FixedThreshold",
    "FunctionPolicy",
    "GaussianTopK",
    "GumbelTopK",
    "Joint",
    "JointSequence",
    "LaplaceLimitDomain",
    "LaplaceTopK",
    "LimitDomain",
    "LimitDomainOptimizedKbar",
    "MixedBatch",
    "MultiLimitDomain",
    "MultiLimitDomainConfig",
    "MultiLimitDomainTranscript",
    "NeighbourRelation",
    "NoisyCount",
    "NoisyCountsRelease",
    "PeelingEM",
    "PermuteAndFlip",
    "PrivacyClaim",
    "ProfileClaim",
    "RepeatQuery",
    "ReportNoisyMax",
    "RestrictedDomain",
    "RestrictedGumbel",
    "RestrictedNormal",
    "ScriptedQueries",
    "SessionQuery",
    "SparseVector",
    "StabilityRelease",
    "StrictLimitDomain",
    "Substitute",
    "TopCounts",
    "TopKMechanism",
    "TopStable",
    "WidenAfterBottom",
    "accounting",
    "as_top_counts",
    "batch_from_outcomes",
    "check_rng",
    "check_size",
    "count_outcomes",
    "outcome_from_row",
    "outcomes_from_batch",
    "profiles",
    "rank_order",
    "top_counts",
    "validate_counts",
]
