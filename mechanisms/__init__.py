"""Reference implementations of differentially private top-k selection mechanisms.

No dependency on [`dpaudit`][dpaudit]. See DESIGN.md for the shared conventions.
"""

from typing import TYPE_CHECKING

from . import accounting, profiles
from .analyst_policies import (
    AnalystPolicy,
    FunctionPolicy,
    RepeatQuery,
    ScriptedQueries,
    SessionQuery,
    WidenAfterBottom,
)
from .base import DeclaresOutputSupport, TopKMechanism, check_rng, check_size
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
    "DeclaresOutputSupport",
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

if TYPE_CHECKING:
    from .joint import Joint, JointSequence

#: Names loaded on first use (PEP 562): the joint mechanisms import scipy.special, which
#: a command line that only names a mechanism (or mistypes one) need not wait for.
_LAZY = {"Joint": ".joint", "JointSequence": ".joint"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'mechanisms' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value
