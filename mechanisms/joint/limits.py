"""Work and memory limits of JOINT's sampler, read as ``limits.NAME`` by every module of the package.

One setting governs every module that reads it (the tests lower some of them);
the reasons behind each value are in docs/joint.md ("Guards", "Knots").
"""

#: Truncation margin: dropped outcomes carry < e^{-LOG_TAIL} of the mass.
LOG_TAIL = 130.0
#: Largest utility grid we are willing to build (memory guard).
MAX_GRID = 20_000_000
#: Largest full per-utility set count (Joint only) we run, in cell updates as
#: planned by ``Joint.dp_work``: only the on-demand ``JointPrepared.log_n`` of
#: a coarse plan can reach it (sampling uses the knots, docs/joint.md).
#: Measured with the scaled Pascal programme at 0.4-1.2 ns per planned cell on
#: spread counts (d=1e5, k=100, ε=0.1: 5.5e8 cells in 0.24 s; k=1000, ε=0.5:
#: 9.3e8 in 1.1 s), more in the log-space blocks of Zipf tails: ~10 s.
MAX_SET_DP_WORK = 1e10
#: Set counts planned at or below this many cells (``Joint.dp_work`` without
#: its probes, ~0.05 s) count every grid value: the exact mixture, acceptance 1.
#: Changing it changes which histograms use the knots, hence their random stream.
FULL_COUNT_WORK = 5e7
#: Coarse knots: refine until the planned acceptance of the proposal reaches
#: KNOT_ACCEPTANCE, or the exact counts at the knots cost KNOT_COUNT_WORK cells
#: (~0.1-0.3 s) with the planned acceptance at least KNOT_MIN_ACCEPTANCE.
KNOT_ACCEPTANCE = 0.1
KNOT_COUNT_WORK = 1.2e8
KNOT_MIN_ACCEPTANCE = 0.01
#: Knots counted per vectorised DP call (a round makes up to four calls), and
#: the growth of log N aimed at per segment when one is split.
KNOT_ROWS = 12
KNOT_LOG_STEP = 3.0
#: Knot placement (``_place_knots``): equal excess of proposal over target mass
#: per segment, sized for about KNOT_SEGMENTS segments.
KNOT_PLACEMENTS = 2
KNOT_SEGMENTS = 64
#: Fixed cost of one block step of the set count (a few numpy calls), in cell updates.
BLOCK_OVERHEAD_CELLS = 3000
#: Largest banded table of one grid value (Σ_b band_b cells of 12 bytes, one
#: per block and pick number in its band) that ``Joint.sample``'s backward
#: pass may need; sampled grid values are processed in groups of at most
#: MAX_SET_TABLE / 2 cells (240 MB).
MAX_SET_TABLE = 40_000_000
