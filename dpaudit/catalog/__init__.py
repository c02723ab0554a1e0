"""A catalog of deliberately broken mechanisms, each with the bug it carries.

Every entry is a mechanism whose ``claim`` is WRONG: it states the guarantee
of the correct algorithm (or of a well-known mistaken analysis) while its
sampler carries the bug. The auditor must flag every one; where an exact law
is known (registered with [`dpaudit.exact.output_law`][dpaudit.exact.output_law] beside the class)
the entry's ``pair`` is a neighbouring pair on which the exact ε at the claimed
δ exceeds the claim ([`check_exact`][dpaudit.catalog.check_exact]).

Most broken mechanisms are standalone frozen dataclasses implementing
[`mechanisms.TopKMechanism`][mechanisms.TopKMechanism], so that they do not depend on the internals
of the correct implementations they imitate; each follows its paper's
algorithm except for the one bug it states. Some override one documented hook
of the project's mechanism (``TopStable.unstable_budget``,
``ReportNoisyMax.scale``, ``FixedThreshold.margin``, ...) and so inherit its
exact law (registered again for the subclass where the law reads the hook).

One module per family, each with its ``ENTRIES``: ``exponential``,
``limit_domain``, ``noisy_max``, ``values``, ``sparse_vector``, ``joint``,
``threshold``, ``sessions``.

    from dpaudit.catalog import CATALOG
    for entry in CATALOG:
        print(entry.name, entry.bug)
        result = dpaudit.audit(entry.build())
"""

from . import (
    exponential,
    joint,
    limit_domain,
    noisy_max,
    sessions,
    sparse_vector,
    threshold,
    values,
)
from .entry import CatalogEntry, check_exact
from .exponential import (
    EMNonMonotoneClaimsEpsilon,
    GumbelTopKClaimsEpsilon,
    PeelingNonMonotoneClaimsKEpsilon,
)
from .joint import JointNoHalf
from .limit_domain import LimitDomainNoBottom, LimitDomainNoThresholdTerm
from .noisy_max import ReportNoisyMaxHalfNoise, ReportNoisyMaxReleasesValue
from .sessions import FreeBottomSession, free_bottom_transcript
from .sparse_vector import (
    SparseVectorNoCutoff,
    SparseVectorNoQueryNoise,
    SparseVectorReleasesNoisyAnswer,
    SparseVectorReleasesValue,
)
from .threshold import (
    FixedThresholdNoMargin,
    RestrictedGumbelThresholdNoHalf,
    TopStableDeltaQAgainstDelta,
    TopStableThresholdNoHalf,
)
from .values import FloatLaplaceNoisyCount, NoisyCountsHalfNoise, ReportNoisyMaxFloatValue

__all__ = [
    "CATALOG",
    "OPEN_CASES",
    "CatalogEntry",
    "EMNonMonotoneClaimsEpsilon",
    "FixedThresholdNoMargin",
    "FloatLaplaceNoisyCount",
    "FreeBottomSession",
    "GumbelTopKClaimsEpsilon",
    "JointNoHalf",
    "LimitDomainNoBottom",
    "LimitDomainNoThresholdTerm",
    "NoisyCountsHalfNoise",
    "PeelingNonMonotoneClaimsKEpsilon",
    "ReportNoisyMaxFloatValue",
    "ReportNoisyMaxHalfNoise",
    "ReportNoisyMaxReleasesValue",
    "RestrictedGumbelThresholdNoHalf",
    "SparseVectorNoCutoff",
    "SparseVectorNoQueryNoise",
    "SparseVectorReleasesNoisyAnswer",
    "SparseVectorReleasesValue",
    "TopStableDeltaQAgainstDelta",
    "TopStableThresholdNoHalf",
    "catalog_entry",
    "check_exact",
    "free_bottom_transcript",
]

#: Every entry, family by family.
CATALOG: tuple[CatalogEntry, ...] = (
    *exponential.ENTRIES,
    *limit_domain.ENTRIES,
    *noisy_max.ENTRIES,
    *values.ENTRIES,
    *sparse_vector.ENTRIES,
    *joint.ENTRIES,
    *threshold.ENTRIES,
    *sessions.ENTRIES,
)


#: Broken mechanisms whose stated bug the default audit does not reach yet (each family
#: module's ``OPEN_ENTRIES`` says what was measured): ``catalog:NAME`` audits them, and the
#: gap stays visible, but they are not in ``CATALOG``, whose every entry is flagged.
OPEN_CASES: tuple[CatalogEntry, ...] = (*sparse_vector.OPEN_ENTRIES,)


def catalog_entry(name: str) -> CatalogEntry:
    """The entry called ``name`` (in ``CATALOG`` or ``OPEN_CASES``)."""
    for entry in CATALOG + OPEN_CASES:
        if entry.name == name:
            return entry
    known = ", ".join(e.name for e in CATALOG + OPEN_CASES)
    raise KeyError(f"no catalog entry {name!r}; known: {known}")


# Results name a mechanism's class as "module:qualname" (dpaudit/provenance.py) and recheck
# imports it back: the package is the stable name, not the family file inside it.
for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = __name__
