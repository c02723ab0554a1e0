"""Noisy histograms whose Laplace scale is ε instead of 1/ε, as the auditing papers test them.

One module per source, each with its entries: ``counts`` (StatDP's and DP-Sniper's
``histogram_eps``, SmartNoise's two-category histogram under substitution), ``sums`` (CheckDP's
BadPartialSum and BadSmartSum), ``privbayes`` (DataSynthesizer issue 34), ``geometric``
(SmartNoise-core's censored geometric noise, PR 318 and issue 358) and ``regression``
(diffprivlib issues 104 and 105). ``ENTRIES`` lists them in that order.
"""

from __future__ import annotations

from . import counts, geometric, privbayes, regression, sums

# Every public name of the family, importable from the package as well as from its module.
from .counts import (  # noqa: F401
    BINARY_EPSILON,
    RELATION,
    SNIPER_EPSILON,
    SNIPER_ITEMS,
    STATDP_EPSILON,
    discrete_laplace_pmf,
    laplace_shift_loss,
    noisy_counts,
    sniper,
)
from .geometric import (  # noqa: F401
    GEOMETRIC_BEYOND_PAIR,
    GEOMETRIC_BOUNDS,
    GEOMETRIC_EPSILON,
    GEOMETRIC_PAIR,
    censored_geometric,
    censored_geometric_law,
)
from .privbayes import (  # noqa: F401
    PRIVBAYES_EPSILON,
    PRIVBAYES_PAIR,
    PRIVBAYES_TABLES,
    privbayes_point_loss,
)
from .regression import (  # noqa: F401
    REGRESSION_ASYMMETRIC_BOUNDS,
    REGRESSION_ASYMMETRIC_PAIR,
    REGRESSION_EPSILON,
    REGRESSION_SHARE,
    REGRESSION_ZERO_BOUNDS,
    REGRESSION_ZERO_PAIR,
)
from .sums import (  # noqa: F401
    PARTIAL_EPSILON,
    PARTIAL_QUERIES,
    SMART_BLOCK,
    SMART_EPSILON,
    SMART_QUERIES,
    partial_sum,
)

__all__ = ["ENTRIES", "censored_geometric", "censored_geometric_law", "privbayes_point_loss"]

ENTRIES = (
    *counts.ENTRIES,
    *sums.ENTRIES,
    *privbayes.ENTRIES,
    *geometric.ENTRIES,
    *regression.ENTRIES,
)
