"""Sparse-vector variants from the literature, as the auditing papers published them.

Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy",
PVLDB 10(6), 2017, Fig. 1 / Table 1 collect six variants; Ding et al. (StatDP, CCS 2018,
``cmla-psu/statdp`` ``statdp/algorithms.py``: SVT, iSVT1-4) and Bichsel et al.
(DP-Sniper, S&P 2021, ``eth-sri/dp-sniper`` ``dpsniper/mechanisms/sparse_vector_technique.py``:
SparseVectorTechnique1-6, NumericalSVT) test them; Wang et al. (CheckDP, CCS 2020,
``cmla-psu/checkdp`` ``examples/``) add gap and adaptive variants that release the noisy
answer; NVFlare's ``SVTPrivacy`` filter (issue 343) selects coordinates of a model update
with one and releases some of the accepted ones raw. The settings are DP-Sniper's own
(``dpsniper/experiments/exp_default.py``): ε = 0.1, c = 1, threshold t = 1, 10 queries of
sensitivity 1, neighbours where every query may move by 1 either way (``BoundedChange(1)``);
NVFlare's entry uses the filter's defaults; StatDP's entries use StatDP's
(``examples/benchmark.py``: claims 0.2 / 0.7 / 1.5, N = 1, T = 1, its 5-query inputs) and
StatDP's one-number release.

Queries are the counts in item order. An outcome lists the ids answered "above"
(ascending; the answers "below" are the other ids before the stop, so nothing is lost);
the value-releasing variants give the first "above" id and a real value (NaN when none).

One module per source: ``lyu`` (Lyu–Su–Li's variants at DP-Sniper's setting), ``gap`` and
``adaptive`` (CheckDP), ``statdp`` (StatDP's iSVT1-4), ``parallel`` (DP-Sniper's
SVT34Parallel), ``nvflare``; ``base`` holds the setting and the batched sparse vectors,
``laws`` the exact laws. ``ENTRIES`` lists them in that order.
"""

from __future__ import annotations

from . import adaptive, gap, lyu, nvflare, parallel, statdp

# Every public name of the family, importable from the package as well as from its module.
from .adaptive import ADAPTIVE_EPSILON, ADAPTIVE_MARGIN, adaptive_top_density  # noqa: F401
from .base import EPSILON, QUERIES, RELATION, THRESHOLD, svt_batch, value_svt  # noqa: F401
from .gap import bad_gap, gap_svt, integer_first_above_batch  # noqa: F401
from .laws import (  # noqa: F401
    cutoff_epsilon,
    density_ratio,
    first_above_density,
    first_above_law,
    hockey_stick,
    noiseless_summary_law,
    noisy_summary_law,
    pattern_probability,
)
from .lyu import chen, lee_clifton, lyu_alg1, numerical_svt, roth, stoddard  # noqa: F401
from .nvflare import (  # noqa: F401
    NVFLARE_EPSILON_1,
    NVFLARE_EPSILON_2,
    NVFLARE_EPSILON_3,
    NVFLARE_GAMMA,
    NVFLARE_KEPT,
    NVFLARE_NU_SCALE,
    NVFLARE_PAIR,
    NVFLARE_RELATION,
    NVFLARE_RHO_SCALE,
    NVFLARE_TAU,
    NVFLARE_VALUE_SCALE,
    nvflare_leak_probability,
    nvflare_svt,
)
from .parallel import PARALLEL_CUTOFF, svt34_parallel  # noqa: F401
from .statdp import (  # noqa: F401
    STATDP_EPSILON,
    STATDP_QUERIES,
    statdp_all_answers_batch,
    statdp_hamming,
    statdp_isvt1,
    statdp_isvt2,
    statdp_isvt3,
    statdp_isvt3_batch,
    statdp_isvt4,
    statdp_mismatches,
    statdp_summary_law,
    statdp_svt,
)

__all__ = [
    "ENTRIES",
    "first_above_density",
    "first_above_law",
    "hockey_stick",
    "integer_first_above_batch",
    "noiseless_summary_law",
    "noisy_summary_law",
    "nvflare_leak_probability",
    "nvflare_svt",
    "pattern_probability",
    "statdp_mismatches",
]

ENTRIES = (
    *lyu.ENTRIES,
    *gap.ENTRIES,
    *statdp.ENTRIES,
    *adaptive.ENTRIES,
    *parallel.ENTRIES,
    *nvflare.ENTRIES,
)
