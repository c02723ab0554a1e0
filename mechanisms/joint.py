"""JOINT: the joint exponential mechanism over size-k sets and ordered k-sequences.

Seed 004 (004_96d6a41600571c16.txt) defines JOINT, the exponential mechanism
(Definition 3) over size-k sets with utility u* (Lemma 5, sensitivity 1), and
samples it with Algorithm 1 (Lemmas 6-7), whose path counts reach d^k and
overflow (Sec. 5). Section 5 leaves ordered sequences as future work; the
follow-up (Gillenwater et al., ICML 2022) samples them in O(dk log k).

Weights and probabilities live in log space, and set counts as mantissa x
2^exponent with exact power-of-two rescaling (``_set_forward``): no number
can overflow.

How sampling works (both mechanisms)
------------------------------------
Let ``a_1 >= ... >= a_d`` be the counts in rank order (ties to the lower id)
and ``g(o) = -u(o) >= 0`` the largest gap of an outcome ``o``. Every possible
gap is an integer of the form ``a_i - a_r`` (i <= k), so we take the sorted
grid ``u_0 = 0 < u_1 < ... < u_T`` of those values and write

    exp(-ε g/2) = Σ_{t : u_t >= g} w_t,   w_t = e^{-ε u_t/2} - e^{-ε u_{t+1}/2},
                                          w_T = e^{-ε u_T/2}.

Hence P(o) ∝ Σ_t w_t · 1[g(o) <= u_t]: a mixture over t of the UNIFORM law on
``{o : g(o) <= u_t}``, with mixture weights ∝ w_t · N(u_t), where N(u) counts
the outcomes with gap <= u. Using cumulative counts avoids the cancellation of
per-utility counts N(u_t) - N(u_{t-1}) and makes every weight positive.

With m_i(u) = #{r : a_r >= a_i - u} (a prefix of the rank order, non-decreasing
in i, always a tie-block end):

* sequences: position i may hold any item among the top m_i(u); the prefixes
  are nested, so N_seq(u) = Π_i (m_i(u) - i + 1) and a uniform sequence is
  drawn position by position (a Fisher-Yates shuffle with growing bounds);
* sets: a set with ranks r_1 < ... < r_k has gap <= u iff r_i <= m_i(u) for
  every i (Lemma 5: the set's i-th largest count faces a_i). Equal counts are
  interchangeable, so N_set(u) is a lattice-path count over tie blocks
  (Lemma 6), computed by a dynamic programme over blocks with binomial
  transitions (one Pascal step per item; log space for huge tie blocks).
  After block b (end E_b) the number of picks j must lie in the band
  need_b(u) <= j <= min(E_b, k), need_b(u) = #{i : m_i(u) <= E_b};
  the programme only touches that band, about m_k(u) - k wide on spread-out
  counts, so a grid value costs ~ Σ_i (m_i(u) - i) cells instead of
  blocks x k (Lemma 7's O(k^2 log k) per utility value becomes O(k L) with
  L the number of items within reach below the top-k). A uniform set is drawn
  by backward sampling of the number of picks per block, then a uniform subset
  inside each tie block.

Truncation: outcomes with a gap above ``u_cut = 2 (log #outcomes + 130)/ε``
are never built; their total weight is at most #outcomes · e^{-ε(u_cut+1)/2}
<= e^{-130}, while the normaliser Z is >= 1 (the true top-k has gap 0). The
grid is then cut at the first u_T whose dropped weight Σ_{t>T} e^{-ε u_t/2} N(u_t)
is <= e^{-130} · Z (``JointPrepared.log_tail_bound`` records the log of that
ratio, which is exactly the total-variation change). Sequences use their exact
counts and Z; sets bound N from above by min(N_seq(u), C(m_k(u), k)) and Z from
below by exact counts (a few probes first, to plan the work, then the counted
rows). The law therefore changes by less than 1e-56 in total variation —
below the 50 digits of the exact laws; on small histograms usually nothing is
dropped at all.

Knots (sets, issue 15): the set count costs ~ Σ_b band_b x min(n_b, band_b)
cells per grid value (~3e6 at d=1e6, k=1000, ε=0.1), and at small ε the grid
has tens of thousands of values, so counting all of them (1e10+ cells) is out
of reach. When the planned full count (``_planned_work`` on the sure cut,
without probes) exceeds FULL_COUNT_WORK, JOINT samples a coarse mixture by
rejection instead, and stays exact:

* knots κ_0 < ... < κ_J = u_T (a subset of the grid) split the gaps into
  segments (κ_{j-1}, κ_j]; the proposal gives an outcome of gap g in segment
  j the weight ℓ_j = e^{-ε s_j/2} >= e^{-ε g/2}, s_j the segment's smallest
  grid value. ℓ is a non-increasing step function of g, so it is again a
  mixture of uniform laws on {g <= κ_j}, with weights H_j N(κ_j),
  H_j = ℓ_j - ℓ_{j+1} = Σ_{t in segment j} w_t;
* N(κ_j) is the exact count where it was computed, else an upper bound
  U_j >= N(κ_j) (monotone: the count at the next counted knot, or the bounds
  below); a component is drawn ∝ H_j U_j, a uniform set S of gap <= κ_j is
  drawn by backward sampling (which yields N(κ_j) exactly), and S is kept with
  probability (N(κ_j)/U_j) · e^{-ε g(S)/2}/ℓ_{j'(S)} <= 1, j'(S) the segment
  of g(S). The kept sets have law ∝ e^{-ε g/2} exactly; the rejection rate
  only costs time;
* knot placement only steers the cost: exact counts at ~14 probes around the
  peaks of the bounds, then knots placed (``_place_knots``) from the log
  counts interpolated between probes so that every segment's proposal mass
  exceeds its estimated mass by about the same amount (narrow segments, a few
  1/ε wide, where the mass is, wide ones elsewhere), counted exactly, placed
  once more from the better estimate if the planned acceptance is still below
  KNOT_ACCEPTANCE, then split where the excess is largest while the cell
  budget KNOT_COUNT_WORK lasts. The plan uses cell estimates, never clock
  time, so the random stream does not depend on the machine's load;
* the count programme runs over merged blocks (``_set_blocks``): the runs
  between consecutive distinct m_i(u), inside which the constraint never
  binds (Vandermonde), so huge tail tie blocks (Zipf counts) are one block.

Complexity: per histogram O(d) selection + O(grid + 1e7) bounds + (number of
counted knots) x Σ_b band_b · min(n_b, band_b) cells; per batch, one banded
table per distinct knot drawn plus O(blocks) per proposal, and 1/acceptance
proposals per kept set. The counts at knots need no more than those cells.

Error bound: the count programme adds non-negative numbers in floating point
with exact power-of-two scaling (``_set_forward``), so a count is within a
relative items x 1.2e-16 of the exact one, plus about 4 ulp(|log F|) + band
x 1.1e-16 in log F per log-space block; log N carries a relative error
<= 1e-12 (checked against big integers, d <= 300 with ties and without, on
every arithmetic path: tests/mechanisms/test_joint_knots.py). Bounds used as
U_j carry a relative margin of 1e-10 in log, so the count acceptance ratio
never exceeds 1 by rounding; the level ratio e^{-ε(g - s_j)/2} is <= 1
exactly. The truncation changes the law by at most e^{log_tail_bound} <=
e^{-130} in total variation, as before.

Stream: histograms whose full count is planned at <= FULL_COUNT_WORK cells
(all small histograms, the exact laws, and e.g. d=1e5, k=100 at ε >= 0.5)
keep the exact mixture and draw the same samples from the same seed as before
issue 15. Larger ones (formerly 5e7..1e9 cells: e.g. d=1e6, k=1000 at ε=1)
use the knots: same law, a different stream from before issue 15. The
scaled linear-space count (which replaced log-add-exp) agrees with the
former one to ~1e-15 relative, so a draw could change only when a uniform
lands within ~1e-15 of a cumulative boundary; on 51 checked cases (exact
mixture and knots, up to d=1e5, k=1000) every sample is unchanged.

Guards: ``Joint.dp_work`` still returns the planned full-grid count. The full
per-utility table ``JointPrepared.log_n`` of a coarse plan is counted on first
use (``utility_law``, inspection) and refused above MAX_SET_DP_WORK cells;
sampling never needs it. A single grid value's sampling table above
MAX_SET_TABLE cells (480 MB: a double mantissa and an int32 exponent per
cell) is refused; the seed's experiments (k = 5) are
many orders of magnitude below both.

Sequences in a batch: the Fisher-Yates shuffle with growing bounds is dense
(O(max prefix) per sample, a loop over the k steps) when the prefixes are
short, else resolved without stepping (``_sorted_fisher_yates``: one row-wise
sort of the swap targets, O(k) per sample whatever the tie blocks; the hashed
shuffle only if its packed keys would overflow). All of them return exactly
what the former O(k^2) sparse shuffle returned for the same uniforms.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy.special import gammaln, logsumexp

from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, PrivacyClaim
from .histogram import validate_counts
from .validation import require_positive_float, require_positive_int

__all__ = ["Joint", "JointPrepared", "JointSequence", "joint_epsilon"]

#: Truncation margin: dropped outcomes carry < e^{-LOG_TAIL} of the mass.
LOG_TAIL = 130.0
#: Largest utility grid we are willing to build (memory guard).
MAX_GRID = 20_000_000
#: Largest full per-utility set count (Joint only) we run, in cell updates as
#: planned by ``Joint.dp_work``: only the on-demand ``JointPrepared.log_n`` of
#: a coarse plan can reach it (sampling uses the knots, module docstring).
#: Measured with the scaled Pascal programme at 0.4-1.2 ns per planned cell on
#: spread counts (d=1e5, k=100, ε=0.1: 5.5e8 cells in 0.24 s; k=1000, ε=0.5:
#: 9.3e8 in 1.1 s), more in the log-space blocks of Zipf tails: ~10 s.
MAX_SET_DP_WORK = 1e10
#: Set counts planned at or below this many cells (``Joint.dp_work`` without
#: its probes, ~0.05 s; kept from the log-space kernel's ~0.4 s so the same
#: histograms keep the exact mixture) count every grid value: the exact mixture, acceptance 1,
#: the same tables and random stream as before the coarse knots existed.
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
_BLOCK_OVERHEAD_CELLS = 3000
#: Largest banded table of one grid value (Σ_b band_b cells of 12 bytes, one
#: per block and pick number in its band) that ``Joint.sample``'s backward
#: pass may need; sampled grid values are processed in groups of at most
#: MAX_SET_TABLE / 2 cells (240 MB).
MAX_SET_TABLE = 40_000_000
_CACHE_SIZE = 4
#: Set count arithmetic (``_set_forward``): mantissa growth allowed between
#: renormalisations, in bits (below the 1023 of a double), and the block size
#: (relative to its band) above which a block is counted in log space.
_EXPONENT_ROOM = 960
_PASCAL_RATIO = 4
_LN2 = float(np.log(2.0))


def joint_epsilon(epsilon: float, sensitivity: int = 1) -> float:
    """Privacy of the exponential mechanism with weights exp(ε u / 2) and utility sensitivity Δ.

    Seed 004 Definition 3 (McSherry-Talwar): weights exp(ε u/(2Δ_u)) give ε-DP;
    here the weights are exp(ε u/2), so the guarantee is ε·Δ_u, and Lemma 5
    gives Δ_{u*} = 1 under add/remove-one-user.

    Parameters
    ----------
    epsilon : the ε in the weights exp(ε u/2) (> 0).
    sensitivity : Δ_u of the utility (>= 1).
    """
    epsilon = require_positive_float("epsilon", epsilon)
    sensitivity = require_positive_int("sensitivity", sensitivity)
    return epsilon * sensitivity


@dataclass(frozen=True, eq=False)
class JointPrepared:
    """Per-histogram work of JOINT, done once and reused for every sample of a batch.

    Attributes
    ----------
    order : item ids in rank order (count high first, ties to the lower id) —
        only the items that can appear in an outcome within the truncation.
    sorted_counts : their counts, in rank order.
    grid : the utility grid u_0 = 0 < ... < u_T (int64; gaps, utility = -u).
    knots : grid indices of the mixture components (ascending, the last is T).
        Every grid index for JointSequence and for small set counts (then the
        mixture is exact and no acceptance step runs); a coarse subset for large
        set counts (module docstring, "Knots").
    log_knot_n : log N(u) at the knots: exact where ``knot_exact``, else an
        upper bound (the acceptance step corrects it).
    knot_exact : whether ``log_knot_n`` is the exact count.
    log_mix : log mixture weights of the components (unnormalised): log(w_t N(u_t))
        on the full grid, log(H_j U_j) on coarse knots.
    log_level : log of the proposal weight of a gap in knot segment j
        (-ε u_{s_j}/2, s_j the segment's first grid index).
    log_tail_bound : log of the bound on the total mass dropped by truncation
        (-inf when nothing was dropped).
    owner : ``(class name, k, epsilon)`` of the mechanism that built it.
    exact_mixture : True when the knots are the whole grid with exact counts.
    acceptance : planned acceptance rate of the coarse proposal (1 when exact).
    """

    order: np.ndarray
    sorted_counts: np.ndarray
    grid: np.ndarray
    knots: np.ndarray
    log_knot_n: np.ndarray
    knot_exact: np.ndarray
    log_mix: np.ndarray
    log_level: np.ndarray
    log_tail_bound: float
    owner: tuple = ()
    exact_mixture: bool = True
    acceptance: float = 1.0
    _full_counter: object = field(default=None, repr=False)
    _lazy: dict = field(default_factory=dict, repr=False)

    @property
    def log_n(self) -> np.ndarray:
        """log N(u_t) on the whole grid (computed on first use when the knots are coarse)."""
        if self.exact_mixture:
            return self.log_knot_n
        if "log_n" not in self._lazy:
            self._lazy["log_n"] = self._full_counter(self.sorted_counts, self.grid)
        return self._lazy["log_n"]

    @property
    def log_count_per_utility(self) -> np.ndarray:
        """log of N(u_t) - N(u_{t-1}): the number of outcomes with gap exactly u_t."""
        prev = np.concatenate([[-np.inf], self.log_n[:-1]])
        with np.errstate(divide="ignore"):
            # log(N_t - N_{t-1}) = log N_t + log1p(-N_{t-1}/N_t); the cancellation is
            # harmless: an absolute error e·N_t here moves a bucket probability by at
            # most e, since N_t e^{-ε u_t/2} <= the normaliser.
            # (a count equal to the previous one may come out an ulp below it)
            return self.log_n + np.log1p(-np.exp(np.minimum(prev - self.log_n, 0.0)))

    def log_utility_probabilities(self, epsilon: float) -> np.ndarray:
        """log P(gap = u_t) for each grid value (normalised; utility is -u_t)."""
        log_w = self.log_count_per_utility - epsilon * self.grid / 2.0
        return log_w - logsumexp(log_w)


def _counts_key(counts: np.ndarray) -> bytes:
    return hashlib.blake2b(counts.tobytes(), digest_size=16).digest() + str(counts.size).encode()


def _prefix_sizes(neg_sorted: np.ndarray, top: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """m_i(u) = #{r : a_r >= a_i - u} for every gap u (rows) and position i (columns)."""
    # neg_sorted = -a is ascending, so a_r >= a_i - u  <=>  -a_r <= u - a_i.
    targets = gaps[:, None] - top[None, :]
    if targets.size == 0:
        return targets.astype(np.int64)
    low, high = int(targets.min()), int(targets.max())
    span = high - low + 1
    if targets.size >= 64 and span <= min(4 * targets.size, 50_000_000):
        # Integer targets over a short range: tabulate the count once per value
        # and look it up (a gather instead of a binary search per entry). The
        # table is a cumulative histogram of the values in [low, high] on top of
        # the number below low: O(span + reach), no binary search per value.
        first = int(np.searchsorted(neg_sorted, low, side="left"))
        stop = int(np.searchsorted(neg_sorted, high, side="right"))
        table = np.bincount(neg_sorted[first:stop] - low, minlength=span)
        table[0] += first
        np.cumsum(table, out=table)
        targets -= low
        return table[targets].astype(np.int64, copy=False)
    return np.searchsorted(neg_sorted, targets, side="right").astype(np.int64)


def _sequence_log_n(sorted_counts: np.ndarray, k: int, grid: np.ndarray) -> np.ndarray:
    """log N_seq(u) = Σ_i log(m_i(u) - i + 1) for every grid value u.

    Position i picks among the top m_i(u) items minus the i - 1 already placed,
    all of which lie in that prefix (prefixes grow with i).
    """
    return _sequence_bounds(sorted_counts, k, grid)[0]


def _log_mixture(grid: np.ndarray, log_n: np.ndarray, epsilon: float) -> np.ndarray:
    """log(w_t N(u_t)) with w_t = e^{-ε u_t/2} - e^{-ε u_{t+1}/2} (w_T = e^{-ε u_T/2})."""
    half = epsilon / 2.0
    log_w = -half * grid.astype(np.float64)
    steps = np.diff(grid).astype(np.float64)
    # log(1 - e^{-ε Δ/2}) via log(-expm1(.)), accurate for small steps.
    log_w[:-1] += np.log(-np.expm1(-half * steps))
    return log_w + log_n


def _utility_grid(sorted_counts: np.ndarray, k: int, u_cut: int) -> np.ndarray:
    """All gaps a_i - a_r in [0, u_cut] for i < k (sorted, distinct), as int64."""
    ascending = sorted_counts[::-1]
    # distinct counts, ascending (the input is sorted: no hashing or re-sorting)
    values = ascending[np.concatenate([[True], np.diff(ascending) != 0])]
    top = np.unique(sorted_counts[:k])
    max_gap = int(top[-1] - values[0])
    span = min(max_gap, u_cut)
    lo = np.searchsorted(values, top - span, side="left")
    hi = np.searchsorted(values, top, side="right")
    total = int(np.sum(hi - lo))
    if min(total, span + 1) > MAX_GRID:
        raise ValueError(
            f"JOINT would need {min(total, span + 1)} utility values (> {MAX_GRID}); "
            f"increase epsilon or coarsen the counts"
        )
    if span + 1 <= total:
        # Every integer in [0, span] is a valid grid point: extra points where N
        # does not change only split a mixture component in two.
        return np.arange(span + 1, dtype=np.int64)
    lengths = hi - lo
    starts = np.repeat(lo - np.cumsum(np.concatenate([[0], lengths[:-1]])), lengths)
    idx = starts + np.arange(total)
    gaps = np.repeat(top, lengths) - values[idx]
    return np.unique(gaps).astype(np.int64)


def _sparse_fisher_yates(slots: np.ndarray, highs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Partial Fisher-Yates shuffles of 0..n-1, one per row, with per-step bounds.

    Step t swaps position ``slots[:, t]`` with a uniform position in
    ``[slots[:, t], highs[:, t])`` and outputs the value moved to the slot.
    Only swapped positions are stored (a row never touches more than t of
    them), so memory is O(rows * steps) whatever n is, at O(rows * steps^2)
    time. Slots must increase along a row and every bound must exceed its slot.
    """
    rows, steps = slots.shape
    keys = np.full((rows, steps), -1, dtype=np.int64)
    vals = np.empty((rows, steps), dtype=np.int64)
    out = np.empty((rows, steps), dtype=np.int64)
    row_ids = np.arange(rows)

    def lookup(pos, t):
        if t == 0:
            return pos.copy()
        match = keys[:, :t] == pos[:, None]
        # the latest write to a position wins
        last = t - 1 - np.argmax(match[:, ::-1], axis=1)
        return np.where(match.any(axis=1), vals[row_ids, last], pos)

    for t in range(steps):
        slot = slots[:, t]
        width = highs[:, t] - slot
        pick = slot + np.minimum((uniforms[:, t] * width).astype(np.int64), width - 1)
        at_pick = lookup(pick, t)
        at_slot = lookup(slot, t)
        out[:, t] = at_pick
        keys[:, t] = pick
        vals[:, t] = at_slot
    return out


def _shuffle_picks(highs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Swap targets of the shuffle with growing bounds: step t swaps slot t with
    ``t + min(floor(u_t (highs_t - t)), highs_t - t - 1)``, uniform in [t, highs_t).

    The same float expression every shuffle variant evaluates, for all steps at
    once, so all of them consume the uniforms identically (the ``min`` only
    guards against u * width rounding up to width).
    """
    t = np.arange(highs.shape[1], dtype=np.int64)
    width = highs - t
    picks = (uniforms * width).astype(np.int64)
    width -= 1
    np.minimum(picks, width, out=picks)
    picks += t
    return picks


def _dense_fisher_yates(picks: np.ndarray, width_all: int) -> np.ndarray:
    """Outputs of the shuffle with swap targets ``picks`` (all < width_all), on a dense permutation.

    Step t swaps positions t and picks[:, t] of each row's permutation of
    0..width_all-1 and outputs the value moved to position t. With the targets
    of ``_shuffle_picks`` this is Fisher-Yates with growing bounds: positions at
    or beyond the current bound were never swapped, so positions t..high-1 hold
    exactly the unplaced ranks of the prefix. O(rows * width_all) memory and one
    Python step per column, three gathers/scatters on flat indices each: cheap
    when the rows are short (prefixes barely longer than the sequences). Same
    outputs as ``_sorted_fisher_yates`` and the hashed and sparse shuffles.
    """
    rows, steps = picks.shape
    dtype = np.int32 if width_all < 2**31 else np.int64
    perm = np.broadcast_to(np.arange(width_all, dtype=dtype), (rows, width_all)).copy()
    flat = perm.reshape(-1)
    offsets = np.arange(rows, dtype=np.int64) * width_all
    # step-major flat targets: each step reads one contiguous row of indices
    targets = np.ascontiguousarray((picks + offsets[:, None]).T)
    for t in range(steps):
        at, slot = targets[t], offsets + t
        chosen = flat[at]
        flat[at] = flat[slot]
        flat[slot] = chosen
    return perm[:, :steps].astype(np.int64)


def _sorted_fisher_yates(picks: np.ndarray) -> np.ndarray:
    """Outputs of the shuffle with swap targets ``picks`` (picks[:, t] >= t), without stepping.

    Let S(t) be the value at position t just before step t. Step t outputs the
    value at position p = picks[:, t] and writes S(t) there; positions below t
    are never read again (every later target is >= its own slot). Hence

    * output t = p if no earlier step wrote p, else S(t') for the latest
      earlier step t' with picks[:, t'] = p;
    * S(j) = j if no step before j wrote position j, else S(parent(j)), with
      parent(j) the latest step before j that did (writes to j come from steps
      <= j only, so that is the last one, or the one before it if step j itself
      targets j).

    One sort of the (target, step) pairs of each row groups the writes per
    position in step order, which gives both "latest earlier write"s by
    adjacency; S follows the parent forest (parent(j) < j) by pointer doubling
    on the non-root slots only. O(rows * steps) work plus one row-wise sort,
    whatever the prefix lengths: the choice for long prefixes (huge tie blocks)
    and small batches. Exactly the outputs of ``_dense_fisher_yates`` and of
    the hashed and sparse shuffles for the same picks. Needs
    (max pick).bit_length() + bits(steps) <= 63 (the packed sort keys). The
    result is written over ``picks`` (a C-contiguous input is overwritten).
    """
    rows, steps = picks.shape
    n = rows * steps
    shift = max(1, int(steps - 1).bit_length())
    mask = (1 << shift) - 1
    keys = picks << shift
    keys |= np.arange(steps, dtype=np.int64)
    keys.sort(axis=1)  # per row: by target position, then by step
    flat = keys.reshape(-1)
    pos = flat >> shift
    # last[i]: sorted entry i is the latest write to its position in its row;
    # otherwise entry i + 1 (same row) rewrites the position entry i wrote
    last = np.empty(n, dtype=bool)
    np.not_equal(pos[1:], pos[:-1], out=last[:-1])
    last[steps - 1 :: steps] = True
    rewrites = np.flatnonzero(~last)
    # flat slot ids row * steps + j; a root (S(j) = j) points to itself
    parent = np.arange(n, dtype=np.int64)
    last &= flat < (steps << shift)  # positions below steps are slots
    ends = np.flatnonzero(last)
    if ends.size:
        slot = pos[ends]
        when = flat[ends] & mask
        # step j targeting j writes after its own slot read: take the write before it
        own = np.flatnonzero(when == slot)
        before = ends[own] - 1
        same = ends[own] % steps != 0
        same[same] = pos[before[same]] == slot[own[same]]
        when[own] = np.where(same, flat[before] & mask, -1)
        has = when >= 0
        row_start = ends[has] - ends[has] % steps
        nodes = row_start + slot[has]
        parent[nodes] = row_start + when[has]
        while nodes.size:  # pointer doubling: O(log depth) rounds
            up = parent[parent[nodes]]
            moved = up != parent[nodes]
            parent[nodes] = up
            nodes = nodes[moved]
    # step reading a rewritten position outputs S(step of the write before it)
    row_start = rewrites - rewrites % steps
    reader = row_start + (flat[rewrites + 1] & mask)
    writer = row_start + (flat[rewrites] & mask)
    out = picks.reshape(-1)  # every other step outputs its own target
    out[reader] = parent[writer] - row_start
    return out.reshape(rows, steps)


def _hashed_prefix_shuffle(highs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Fisher-Yates with growing bounds, swapped positions kept in a hash table per row.

    Same steps and law as ``_sparse_fisher_yates`` (slot t, pick uniform in
    [t, highs[:, t])), but a swapped position is found by open addressing
    (multiplicative hash, linear probing, load <= 1/4) instead of a scan of
    all earlier swaps: O(k) expected work per row whatever the prefix lengths,
    O(rows * k) memory.
    """
    rows, steps = highs.shape
    bits = max(2, int(np.ceil(np.log2(4 * steps))))
    size = 1 << bits
    mask = size - 1
    keys = np.full(rows * size, -1, dtype=np.int64)
    vals = np.empty(rows * size, dtype=np.int64)
    base = np.arange(rows, dtype=np.int64) * size
    out = np.empty((rows, steps), dtype=np.int64)
    shift = np.uint64(64 - bits)
    golden = np.uint64(0x9E3779B97F4A7C15)

    def find(pos):
        """Flat index holding ``pos``, or the empty one where it would go."""
        with np.errstate(over="ignore"):
            h = ((pos.astype(np.uint64) * golden) >> shift).astype(np.int64)
        where = base + h
        active = np.arange(rows)
        while active.size:
            at = where[active]
            stored = keys[at]
            done = (stored == pos[active]) | (stored < 0)
            active = active[~done]
            where[active] = base[active] + ((where[active] - base[active] + 1) & mask)
        return where

    for t in range(steps):
        width = highs[:, t] - t
        pick = t + np.minimum((uniforms[:, t] * width).astype(np.int64), width - 1)
        at = find(pick)
        at_pick = np.where(keys[at] == pick, vals[at], pick)
        slot = np.full(rows, t, dtype=np.int64)
        at_s = find(slot)
        at_slot = np.where(keys[at_s] == t, vals[at_s], t)
        out[:, t] = at_pick
        # position ``pick`` now holds the slot's value (position t is never read again)
        keys[at] = pick
        vals[at] = at_slot
    return out


def _prefix_shuffle(highs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Uniform sequences with position t drawn among the first highs[:, t] unplaced ranks.

    All variants return exactly the same sequences for the same uniforms (the
    ones the former O(k^2) sparse shuffle returned), so the choice only steers
    the cost: the dense Fisher-Yates when the prefixes are barely longer than
    the sequences (most targets land on slots; the loop over steps is then
    cheaper than resolving many rewrites) and the batch amortises its per-step
    overhead; otherwise the sorted variant (no loop over steps, O(k) per row
    whatever the prefix lengths: huge tie blocks, small batches), in row chunks
    of ~2^16 entries that stay in cache; the hashed variant only if the packed
    sort keys would overflow int64.
    """
    rows, steps = highs.shape
    out = np.empty((rows, steps), dtype=np.int64)
    if rows == 0:
        return out
    width_all = int(highs.max())
    # measured (k = 20..1000, 1000 rows): the dense loop wins while width_all <=
    # ~2 steps and rows >= ~128; the sorted one wins by up to 8x beyond
    if width_all <= 2 * steps and rows >= 128:
        chunk = max(1, 8_000_000 // width_all)
        for start in range(0, rows, chunk):
            stop = min(rows, start + chunk)
            picks = _shuffle_picks(highs[start:stop], uniforms[start:stop])
            out[start:stop] = _dense_fisher_yates(picks, width_all)
    elif (width_all - 1).bit_length() + max(1, int(steps - 1).bit_length()) <= 63:
        chunk = max(1, (1 << 16) // steps)
        for start in range(0, rows, chunk):
            stop = min(rows, start + chunk)
            out[start:stop] = _sorted_fisher_yates(
                _shuffle_picks(highs[start:stop], uniforms[start:stop])
            )
    else:
        chunk = max(1, 2_000_000 // (4 * steps))
        for start in range(0, rows, chunk):
            stop = min(rows, start + chunk)
            out[start:stop] = _hashed_prefix_shuffle(highs[start:stop], uniforms[start:stop])
    return out


#: ``_uniform_subsets``, dense pairs: key rows at least this wide are sorted with the
#: (SIMD, unstable) default argsort and checked for ties, narrower ones with the
#: stable sort, which is faster there; and at most this many keys per block of rows.
_QUICK_ROW_WIDTH = 32
_DENSE_BLOCK = 1 << 22


def _uniform_subsets(sizes: np.ndarray, picks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniform ``picks[p]``-subsets of ``range(sizes[p])`` for every pair p, flat and grouped by p.

    Dense pairs (size <= 4 picks): one random key per element, drawn for all
    dense pairs at once, and the ``picks`` smallest keys win, in increasing key
    order (ties by offset). Pairs of similar size are sorted together as rows
    of a padded 2-D array: the same result (and random stream) as one stable
    sort of all dense elements by (pair, key), several times faster. Sparse
    pairs: draws with replacement, and duplicates are redrawn until none is
    left; the result is invariant under relabelling the elements, hence
    uniform over subsets. Expected duplicates per round are <= picks/8 of a
    pair, so a few rounds suffice. Offsets inside a pair come in no
    particular order (callers sort).
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    picks = np.asarray(picks, dtype=np.int64)
    out = np.empty(int(picks.sum()), dtype=np.int64)
    first = np.cumsum(picks) - picks
    full = sizes == picks
    if full.any():
        # the whole range is taken: no randomness needed
        t, at = picks[full], first[full]
        inside = _positions_within(t)
        out[np.repeat(at, t) + inside] = inside
    dense = (sizes <= 4 * picks) & ~full
    if dense.any():
        n, t, at = sizes[dense], picks[dense], first[dense]
        keys = rng.random(int(n.sum()))
        start = np.cumsum(n) - n
        # size classes of ratio 2^(1/4): few classes, padding < 19% (exact up to 8)
        size_class = np.floor(4 * np.log2(n)).astype(np.int64)
        by_class = np.argsort(size_class, kind="stable")
        bounds = np.flatnonzero(np.diff(size_class[by_class])) + 1
        for members in np.split(by_class, bounds):
            width = int(n[members].max())
            block = max(1, _DENSE_BLOCK // width)
            for lo in range(0, members.size, block):
                rows = members[lo : lo + block]
                ranked = _sorted_key_rows(keys, start[rows], n[rows], width)
                taken = t[rows]
                out[np.repeat(at[rows], taken) + _positions_within(taken)] = ranked[
                    np.arange(width) < taken[:, None]
                ]
    sparse = ~dense & ~full
    if sparse.any():
        n, t, at = sizes[sparse], picks[sparse], first[sparse]
        pair, bound = np.repeat(np.arange(n.size), t), np.repeat(n, t)
        values = _distinct_draws(pair, bound, int(n.max()), rng)
        dest = np.repeat(at, t) + _positions_within(t)
        out[dest] = values
    return out


def _sorted_key_rows(
    keys: np.ndarray, start: np.ndarray, size: np.ndarray, width: int
) -> np.ndarray:
    """Row r: the offsets 0..size[r]-1 of keys[start[r]:start[r]+size[r]], stably sorted by key.

    Rows are padded to ``width`` with distinct keys >= 2, which sort after every
    uniform in [0, 1) and tie with nothing, so the first size[r] entries of a row
    are exactly its stable argsort. Wide rows use the faster unstable argsort:
    without ties the sorted order is unique, and rows with a tie are redone stably.
    """
    cols = np.arange(width)
    if np.all(size == width):
        rows = keys[start[:, None] + cols]
    else:
        inside = cols < size[:, None]
        rows = np.broadcast_to(2.0 + cols, (size.size, width)).copy()
        rows[inside] = keys[np.repeat(start, size) + _positions_within(size)]
    if width < _QUICK_ROW_WIDTH:
        return np.argsort(rows, axis=1, kind="stable")
    order = np.argsort(rows, axis=1)
    ranked = np.sort(rows, axis=1)  # the keys in ``order``'s order, faster than gathering
    tied = np.flatnonzero((ranked[:, 1:] == ranked[:, :-1]).any(axis=1))
    if tied.size:
        order[tied] = np.argsort(rows[tied], axis=1, kind="stable")
    return order


def _distinct_draws(
    pair: np.ndarray, bound: np.ndarray, span: int, rng: np.random.Generator
) -> np.ndarray:
    """Draws uniform in range(bound[i]), redrawn until distinct within each pair.

    Each round redraws, in increasing index order, every draw whose value an
    earlier draw of its pair already holds. Only the first round sorts all
    draws; later rounds look the few redrawn values up in tables of the values
    held (each with the lowest index holding it), which gives the same rounds,
    hence the same random numbers and result, as sorting all draws every round.
    """
    values = np.minimum((rng.random(pair.size) * bound).astype(np.int64), bound - 1)
    key = pair * span + values
    order = np.argsort(key, kind="stable")
    ranked = key[order]
    lead = np.ones(key.size, dtype=bool)
    lead[1:] = ranked[1:] != ranked[:-1]
    # keys held after round 1, sorted and unique, and their holders (the sort is stable,
    # so a run of equal keys starts with its lowest index); keys first held later go to
    # the small ``added`` table
    held, held_by = ranked[lead], order[lead]
    added, added_by = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    redo = np.sort(order[~lead])
    none = key.size  # holder index meaning "nobody"
    while redo.size:
        values[redo] = np.minimum(
            (rng.random(redo.size) * bound[redo]).astype(np.int64), bound[redo] - 1
        )
        new = pair[redo] * span + values[redo]
        # among equal new keys only the first (lowest index) may keep its value ...
        by_key = np.argsort(new, kind="stable")
        new_sorted = new[by_key]
        first = np.ones(new.size, dtype=bool)
        first[1:] = new_sorted[1:] != new_sorted[:-1]
        cand, cand_key = redo[by_key[first]], new_sorted[first]
        # ... and only if no lower index holds that key already
        in_held, at_held = _find_sorted(held, cand_key)
        in_added, at_added = _find_sorted(added, cand_key)
        holder = np.full(cand.size, none, dtype=np.int64)
        holder[in_held] = held_by[at_held[in_held]]
        holder[in_added] = added_by[at_added[in_added]]
        wins = cand < holder
        # a winner over a higher-index holder takes the key over and the holder is redrawn
        held_by[at_held[in_held & wins]] = cand[in_held & wins]
        added_by[at_added[in_added & wins]] = cand[in_added & wins]
        fresh = wins & (holder == none)
        added = np.concatenate([added, cand_key[fresh]])
        added_by = np.concatenate([added_by, cand[fresh]])
        resort = np.argsort(added, kind="stable")
        added, added_by = added[resort], added_by[resort]
        redo = np.sort(
            np.concatenate([redo[by_key[~first]], cand[~wins], holder[wins & (holder < none)]])
        )
    return values


def _find_sorted(table: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found, at): whether each query is in the sorted ``table``, and its index there if so."""
    at = np.searchsorted(table, query)
    found = at < table.size
    found[found] = table[at[found]] == query[found]
    return found, at


def _positions_within(sizes: np.ndarray) -> np.ndarray:
    """0, 1, ..., sizes[0]-1, 0, 1, ..., sizes[1]-1, ...: each element's place in its group."""
    return np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)


def _log_binomial(n, t):
    """log C(n, t) elementwise, in floats (n, t arrays or scalars)."""
    n = np.asarray(n, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    return gammaln(n + 1) - gammaln(t + 1) - gammaln(n - t + 1)


def _tie_blocks(sorted_counts: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the tie blocks of the rank order covering ranks < limit.

    Items with equal counts are interchangeable and every m_i(u) is a block
    end, so the set count runs over blocks. A block cut by ``limit`` is
    extended to its true end (the counts beyond it are equal).
    """
    change = np.flatnonzero(np.diff(sorted_counts[:limit]) != 0) + 1
    starts = np.concatenate([[0], change]).astype(np.int64)
    ends = np.concatenate([change, [limit]]).astype(np.int64)
    ends[-1] = np.searchsorted(-sorted_counts, -sorted_counts[starts[-1]], side="right")
    return starts, ends


def _set_needs(m: np.ndarray, ends: np.ndarray, k: int) -> np.ndarray:
    """need[row, b] = #{i : m_i(u_row) <= E_b}: picks required among the blocks up to b."""
    rows = m.shape[0]
    # one flattened searchsorted: rows are sorted, offset them apart
    offset = (np.arange(rows, dtype=np.int64) * (int(ends[-1]) + 1))[:, None]
    flat = (m + offset).ravel()
    return (
        np.searchsorted(flat, (ends[None, :] + offset).ravel(), side="right").reshape(rows, -1)
        - np.arange(rows)[:, None] * k
    )


def _set_row_work(
    sorted_counts: np.ndarray, k: int, gap: int, merge: bool = False
) -> tuple[float, int, int]:
    """(DP cell updates, tie blocks, banded table cells) of one grid row of the set count.

    Mirrors ``_set_forward``: block b updates the band of pick numbers
    need_b .. min(E_b, k), once per possible number of picks from the block.
    Work grows with the gap (prefixes only grow), so a chunk costs at most
    its rows times the work of its largest gap.
    """
    m = _prefix_sizes(-sorted_counts, sorted_counts[:k], np.array([gap], dtype=np.int64))[0]
    starts, ends = _set_blocks(sorted_counts, m[None, :], merge)
    need = np.searchsorted(m, ends, side="right")
    width = np.minimum(ends, k) - need + 1
    cells = float(np.sum(width * (1 + np.minimum(ends - starts, width))))
    return cells, int(starts.size), int(width.sum())


def _set_blocks(sorted_counts, m, merge):
    """(starts, ends) of the blocks the set count runs over, for prefix sizes m (rows, k).

    Tie blocks, or with ``merge`` the runs between consecutive distinct prefix
    sizes m_i(u) of the rows: the constraint r_i <= m_i only binds at those
    ends, and inside a run the items are interchangeable for the count
    (Vandermonde: C(n_1 + n_2, t) = Σ C(n_1, s) C(n_2, t - s)), so a run of tie
    blocks is one block. This makes huge tail tie blocks (Zipf counts) one
    block each instead of thousands.
    """
    if not merge:
        return _tie_blocks(sorted_counts, int(m[:, -1].max()))
    ends = np.unique(m).astype(np.int64)
    return np.concatenate([[0], ends[:-1]]).astype(np.int64), ends


def _renormalise(mantissa, exponent, low, high):
    """Rescale mantissa[low:high] into [0.5, 1) exactly and flat-extend exponents over zeros.

    Scaling by powers of two is exact, so renormalising never rounds. A zero
    entry (no valid subset) takes the exponent of its nearest nonzero entry
    below it (or above it, below the first one), which keeps every ratio
    2^(X[j-1] - X[j]) of the next Pascal steps finite and equal to 1 at zeros.
    """
    mant, ex = np.frexp(mantissa[low:high])
    mantissa[low:high] = mant
    shifted = exponent[low:high]
    shifted += ex
    nonzero = mant != 0.0
    place = np.arange(high - low)[:, None]
    last = np.maximum.accumulate(np.where(nonzero, place, -1), axis=0)
    first = np.argmax(nonzero, axis=0)
    exponent[low:high] = np.take_along_axis(
        shifted, np.where(last >= 0, last, first[None, :]), axis=0
    )


def _log_space_block(mantissa, exponent, n, prev_low, low, high):
    """One block of n items much larger than its band: the binomial transition in log space.

    F'(j) = log Σ_t C(n, t) F(j - t) over the band (Vandermonde: the
    constraint does not bind inside a block), by a max-shifted sum: first
    H(j) = max_t [log F(j - t) + log C(n, t)], then Σ_t exp(... - H(j)), a sum
    of terms in [0, 1] (vectorised exp and adds, ~2 ns per cell against ~9-18
    for log-add-exp). Each term's exponent carries a few ulp(|log F|), so a
    block adds about 4 ulp(|log F|) + band · 1.1e-16 to log F (4e-12 at
    log F = 1e4). Entries below ``low`` are left to the caller (zeroed).
    """
    with np.errstate(divide="ignore"):
        source = np.log(mantissa[prev_low : high + 1]) + exponent[prev_low : high + 1] * _LN2
    top = min(n, high - prev_low)
    log_binom = _log_binomial(n, np.arange(top + 1))
    reach = [t for t in range(top + 1) if max(low, prev_low + t) <= high]
    peak = np.full((high - low + 1, source.shape[1]), -np.inf)
    term = np.empty_like(peak)
    for t in reach:
        j0 = max(low, prev_low + t)
        part = term[: high - j0 + 1]
        np.add(source[j0 - t - prev_low : high - t - prev_low + 1], log_binom[t], out=part)
        np.maximum(peak[j0 - low :], part, out=peak[j0 - low :])
    empty = ~np.isfinite(peak)  # no valid subset: the count is zero
    peak[empty] = 0.0
    total = np.zeros_like(peak)
    for t in reach:
        j0 = max(low, prev_low + t)
        part = term[: high - j0 + 1]
        np.add(source[j0 - t - prev_low : high - t - prev_low + 1], log_binom[t], out=part)
        np.subtract(part, peak[j0 - low :], out=part)
        np.exp(part, out=part)
        np.add(total[j0 - low :], part, out=total[j0 - low :])
    with np.errstate(divide="ignore"):
        result = peak + np.log(total)
    power = np.where(empty, 0.0, np.floor(result / _LN2))
    with np.errstate(invalid="ignore"):
        mantissa[low : high + 1] = np.where(empty, 0.0, np.exp(result - power * _LN2))
    exponent[low : high + 1] = power.astype(np.int64)
    _renormalise(mantissa, exponent, prev_low, mantissa.shape[0])


def _set_forward(
    sorted_counts: np.ndarray,
    k: int,
    gaps: np.ndarray,
    keep_tables: bool = False,
    merge: bool = False,
):
    """Count of k-sets with gap <= u for every u in ``gaps`` (ascending), as log N per row.

    F[j, row] = #(j-subsets of the items so far whose i-th pick sits in the
    top m_i(u) for every i <= j); after block b at least need_b(u) picks must
    have been made (r_i <= m_i). Only the band need_b .. min(E_b, k) of pick
    numbers can be nonzero, and for near-uniform histograms it is about
    m_k(u) - k wide, not k: the programme costs O(Σ_b band_b · n_b) per row
    instead of O(blocks * k * n_b).

    Arithmetic (issue 15): F = mantissa · 2^exponent per entry, in plain
    floating point. An item adds one Pascal step F'(j) = F(j) + F(j-1), i.e.
    M'(j) = M(j) + M(j-1) · 2^(X(j-1) - X(j)): one exact scaling by a power of
    two and one addition of non-negative numbers, about 0.5 ns per cell with
    the rows innermost (the former log-add-exp cost 5-8 ns). Mantissas are
    renormalised into [0.5, 1) exactly (``_renormalise``) before the growth
    bound (1 + 2^D)^steps, D the largest exponent drop between neighbours,
    could reach 2^960, so nothing overflows; nothing that matters underflows
    either (a product below 2^-1022 is added to a mantissa >= 0.5). Blocks of
    n items with n > 4 · band + 16 (huge tail tie blocks of Zipf counts) use
    the binomial transition in log space instead (``_log_space_block``).

    Error bound: every addition adds non-negative numbers, so each count is
    within a relative (1 + 2^-53)^(items) - 1 <= items · 1.2e-16 of the exact
    one (3e-13 for 2,500 items); a log-space block adds about 4 ulp(|log F|)
    + band · 1.1e-16 to log F (``_log_space_block``). log N = log M + X log 2
    is within 1e-12 relative,
    checked against big integers up to d = 300 with and without ties
    (tests/mechanisms/test_joint_knots.py).

    Returns (log N(u) per row, tables, starts, sizes, lows) where, with
    ``keep_tables``, ``tables[b] = (mantissa, exponents, base)`` holds F after
    block b: F[lows[b] + c, row] = mantissa[c, row] · 2^exponents[lows[b] + c -
    base, row]. Exponents only change at renormalisations, so consecutive
    blocks share one int32 snapshot of them instead of copying a band each.
    """
    m = _prefix_sizes(-sorted_counts, sorted_counts[:k], gaps)  # (rows, k), non-decreasing
    starts, ends = _set_blocks(sorted_counts, m, merge)
    sizes = ends - starts
    need = _set_needs(m, ends, k)
    lows = need.min(axis=0)  # the largest gap has the widest band; non-decreasing in b
    highs = np.minimum(ends, k)
    rows = gaps.size
    # pick numbers outermost, rows innermost: the Pascal step runs over contiguous memory
    mantissa = np.zeros((k + 1, rows))
    mantissa[0] = 1.0
    exponent = np.zeros((k + 1, rows), dtype=np.int64)
    ratio = np.ones((k + 1, rows))
    scratch = np.empty((k + 1, rows))
    tables = [] if keep_tables else None
    snapshot = None  # int32 copy of exponent[base:], shared until exponents change
    prev_low, prev_high = 0, 0
    prev_need = np.zeros(rows, dtype=np.int64)
    budget = 0  # Pascal steps left before the next renormalisation
    for b in range(starts.size):
        n, low, high = int(sizes[b]), int(lows[b]), int(highs[b])
        if n > _PASCAL_RATIO * (high - prev_low + 1) + 16:
            _log_space_block(mantissa, exponent, n, prev_low, low, high)
            budget, snapshot = 0, None
        else:
            top = prev_high  # largest pick number that can be nonzero so far
            a = prev_low + 1  # F(prev_low - 1) is zero: nothing moves into prev_low
            done = 0
            while done < n:
                if budget == 0:
                    _renormalise(mantissa, exponent, prev_low, k + 1)
                    snapshot = None
                    drop = exponent[prev_low:k] - exponent[prev_low + 1 : k + 1]
                    largest = max(int(drop.max(initial=0)), 0)
                    if largest >= 900:
                        raise FloatingPointError(
                            "JOINT set count: neighbouring counts differ by more than 2^900"
                        )
                    budget = max(1, int(_EXPONENT_ROOM / np.log2(1.0 + 2.0**largest)))
                    ratio[prev_low + 1 :] = np.ldexp(1.0, drop)
                h = min(top + 1, high)
                # once the band is full the step is the same until the next
                # renormalisation: make the views once, then only the two ufuncs
                steps = min(n - done, budget) if h == high else 1
                if h >= a:
                    source, factor = mantissa[a - 1 : h], ratio[a : h + 1]
                    target, moved = mantissa[a : h + 1], scratch[: h - a + 1]
                    for _ in range(steps):
                        np.multiply(source, factor, out=moved)
                        np.add(target, moved, out=target)
                top = h
                budget -= steps
                done += steps
        if low > prev_low:
            mantissa[prev_low:low] = 0.0  # below every row's need from now on
        row_need = need[:, b]
        # Entries below the previous need stay zero through a transition (it only
        # moves mass upwards), so rows whose need did not grow need no mask.
        if np.any(row_need > np.maximum(prev_need, low)):
            cols = np.arange(low, high + 1)
            np.copyto(mantissa[low : high + 1], 0.0, where=cols[:, None] < row_need[None, :])
        prev_need = row_need
        prev_low, prev_high = low, high
        if keep_tables:
            if snapshot is None:
                base, snapshot = low, exponent[low:].astype(np.int32)
            tables.append((mantissa[low : high + 1].copy(), snapshot, base))
    return np.log(mantissa[k]) + exponent[k] * _LN2, tables, starts, sizes, lows


def _cut_index(grid, log_upper, tail, log_z_lower, epsilon):
    """First grid index T whose dropped mass, relative to the normaliser, is <= e^{-LOG_TAIL}.

    Outcomes with gap > u_T weigh at most Σ_{t>T} e^{-ε u_t/2} N(u_t) (each
    gap above u_T is a grid value) plus ``tail`` (gaps beyond the grid), with
    N bounded by ``log_upper``. ``log_z_lower[T]`` is a lower bound on the
    normaliser Z, and the total-variation change of truncating at T is
    exactly (dropped mass) / Z. Returns (T, log of the relative bound).
    """
    bound = log_upper - epsilon * grid.astype(np.float64) / 2.0
    suffix = np.logaddexp.accumulate(bound[::-1])[::-1]
    dropped = np.logaddexp(np.append(suffix[1:], -np.inf), tail)
    relative = dropped - log_z_lower
    ok = np.flatnonzero(relative <= -LOG_TAIL)
    last = int(ok[0]) if ok.size else grid.size - 1
    return last, float(relative[last])


def _sequence_bounds(sorted_counts, k, grid):
    """Per grid value: log N_seq(u), m_k(u) and min_i (m_i(u) - i), from one pass over m.

    N_seq bounds the set count from above (a set sorted by rank is one valid
    sequence) and N_seq / k! from below; m_k gives the bound C(m_k, k) from
    above (every rank of a valid set is <= m_k) and L = min_i (m_i - i) the
    bound C(k + L, k) from below (every set with r_i <= i + L is valid).
    """
    neg = -sorted_counts
    top = sorted_counts[:k]
    free = np.arange(k)
    log_seq = np.empty(grid.size)
    last = np.empty(grid.size, dtype=np.int64)
    slack = np.empty(grid.size, dtype=np.int64)
    chunk = max(1, 4_000_000 // k)
    log_int = None
    for start in range(0, grid.size, chunk):
        m = _prefix_sizes(neg, top, grid[start : start + chunk])
        rest = m - free  # m_i - i + 1 (1-based i) >= 1
        if log_int is None or log_int.size <= int(m[:, -1].max()):
            log_int = np.log(np.arange(1, max(2, int(m[:, -1].max()) + 1), dtype=np.float64))
            log_int = np.concatenate([[-np.inf], log_int])  # rest >= 1: index 0 unused
        log_seq[start : start + chunk] = log_int[rest].sum(axis=1)
        last[start : start + chunk] = m[:, -1]
        slack[start : start + chunk] = rest.min(axis=1) - 1
    return log_seq, last, slack


def _exact_tables(grid, log_n, bound, epsilon) -> dict:
    """JointPrepared fields of the exact mixture: one component per grid value, acceptance 1."""
    return {
        "grid": grid,
        "knots": np.arange(grid.size),
        "log_knot_n": log_n,
        "knot_exact": np.ones(grid.size, dtype=bool),
        "log_mix": _log_mixture(grid, log_n, epsilon),
        "log_level": -epsilon * grid.astype(np.float64) / 2.0,
        "log_tail_bound": float(bound),
        "exact_mixture": True,
        "acceptance": 1.0,
    }


def _fast_bounds(sorted_counts, k, grid):
    """Cheap (log upper, log lower) bounds on N_set(u_t) for every grid value, O(grid + 1e7).

    N_set is non-decreasing in u, so the sequence bounds of ``_sequence_bounds``
    (N_seq from above, N_seq / k! and C(k + L, k) from below) are evaluated on a
    strided subset of the grid only and carried to the next (upper) or previous
    (lower) evaluated value; C(m_k(u), k) from above is exact at every value.
    A relative margin of 1e-9 covers the float error of the log-gamma sums.
    """
    size = grid.size
    stride = max(1, -(-size * k // 10_000_000))
    idx = np.arange(0, size, stride)
    if idx[-1] != size - 1:
        idx = np.append(idx, size - 1)
    log_seq, _, slack = _sequence_bounds(sorted_counts, k, grid[idx])
    every = np.arange(size)
    m_k = np.searchsorted(-sorted_counts, grid - sorted_counts[k - 1], side="right")
    upper = np.minimum(log_seq[np.searchsorted(idx, every, side="left")], _log_binomial(m_k, k))
    prev = np.searchsorted(idx, every, side="right") - 1
    lower = np.maximum(log_seq[prev] - gammaln(k + 1), _log_binomial(k + slack[prev], k))
    lower = np.maximum(lower - 1e-9 * (1 + np.abs(lower)), 0.0)  # N >= 1: the true top-k
    return upper + 1e-9 * (1 + np.abs(upper)), lower


def _segment_log_h(grid, knots, epsilon):
    """log H_j = log Σ_{t in segment j} w_t and log ℓ_j = -ε u_{s_j}/2 for knot segments.

    Segment j holds grid indices s_j = knots[j-1] + 1 .. knots[j] (s_0 = 0); the
    last knot is the end of the (cut) grid, whose weight runs to infinity.
    """
    half = epsilon / 2.0
    starts = np.concatenate([[0], knots[:-1] + 1])
    u_start = grid[starts].astype(np.float64)
    log_level = -half * u_start
    log_h = log_level.copy()
    nxt = np.minimum(knots[:-1] + 1, grid.size - 1)
    span = grid[nxt].astype(np.float64) - u_start[:-1]
    log_h[:-1] += np.log(-np.expm1(-half * span))
    return log_h, log_level


@dataclass(frozen=True)
class _JointBase(TopKMechanism):
    k: int
    epsilon: float
    _cache: OrderedDict = field(default_factory=OrderedDict, init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))

    @property
    def width(self) -> int:
        return self.k

    @property
    def claim(self) -> PrivacyClaim:
        """(ε, 0) under add/remove-one-user: seed 004 Definition 3 with Δ_{u*} = 1 (Lemma 5)."""
        return PrivacyClaim(joint_epsilon(self.epsilon, 1), 0.0, AddRemoveUser())

    def _owner(self) -> tuple:
        return (type(self).__name__, self.k, self.epsilon)

    # -- per-histogram preparation -------------------------------------------------
    def _log_outcomes(self, d: int) -> float:
        raise NotImplementedError

    def _count(self, sorted_counts, grid, tail):
        """(grid, log N on it, log relative truncation bound): the counting pass."""
        raise NotImplementedError

    def _tables(self, sorted_counts, grid, tail) -> dict:
        """Fields of JointPrepared: by default the exact mixture over the whole (cut) grid."""
        grid, log_n, bound = self._count(sorted_counts, grid, tail)
        return _exact_tables(grid, log_n, bound, self.epsilon)

    def _validated(self, counts) -> np.ndarray:
        counts = validate_counts(counts)
        if self.k > counts.size:
            raise ValueError(f"k must be <= the number of items d={counts.size}, got {self.k}")
        return counts

    def _grid(self, counts):
        """(order, sorted_counts, grid, tail) of a validated histogram: everything before counting.

        ``tail`` bounds (in log) the mass of outcomes with a gap beyond the grid;
        the normaliser is >= 1 (the true top-k has gap 0), so the grid stops
        where the number of outcomes times e^{-ε u/2} drops below e^{-LOG_TAIL}.
        """
        d = counts.size
        log_outcomes = self._log_outcomes(d)
        u_cut = int(min(2.0 * (log_outcomes + LOG_TAIL) / self.epsilon, 2.0**62))
        kth = int(np.partition(counts, d - self.k)[d - self.k])  # k-th largest count
        max_gap = int(counts.max()) - int(counts.min())
        # Only items with count >= a_k - u_cut can sit in an outcome of gap <= u_cut
        # (position k is the loosest), so only they are ranked: O(d) selection plus
        # a sort of the survivors instead of a full O(d log d) sort.
        lower = kth - u_cut
        candidates = np.flatnonzero(counts >= lower) if lower > counts.min() else None
        if candidates is None:
            # stable sort of -counts: count high first, ties keep the lower id first
            order = np.argsort(-counts, kind="stable")
        else:
            order = candidates[np.argsort(-counts[candidates], kind="stable")]
        sorted_counts = counts[order]
        grid = _utility_grid(sorted_counts, self.k, u_cut)
        tail = -np.inf if max_gap <= u_cut else log_outcomes - self.epsilon * (u_cut + 1) / 2.0
        return order, sorted_counts, grid, tail

    def prepare(self, counts) -> JointPrepared:
        """The per-histogram tables (cached: the last few histograms are kept)."""
        if isinstance(counts, JointPrepared):
            if counts.owner != self._owner():
                raise ValueError(
                    f"counts is a JointPrepared built for {counts.owner}, not {self._owner()}"
                )
            return counts
        counts = self._validated(counts)
        key = _counts_key(counts)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        order, sorted_counts, grid, tail = self._grid(counts)
        parts = self._tables(sorted_counts, grid, tail)
        grid = parts["grid"]
        # Items ranked beyond the largest prefix of the kept grid never appear.
        reach = int(
            np.searchsorted(-sorted_counts, grid[-1] - sorted_counts[self.k - 1], side="right")
        )
        prepared = JointPrepared(
            order=order[:reach],
            sorted_counts=sorted_counts[:reach],
            owner=self._owner(),
            **parts,
        )
        self._cache[key] = prepared
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return prepared

    def _components(self, prepared: JointPrepared, size: int, rng) -> np.ndarray:
        weights = np.exp(prepared.log_mix - prepared.log_mix.max())
        cdf = np.cumsum(weights)
        draws = rng.random(size) * cdf[-1]
        return np.minimum(np.searchsorted(cdf, draws, side="right"), cdf.size - 1)

    def utility_law(self, counts):
        """(utility values, log P(utility)) of the sampler's own tables, utility = -gap."""
        prepared = self.prepare(counts)
        return -prepared.grid, prepared.log_utility_probabilities(self.epsilon)


@dataclass(frozen=True)
class JointSequence(_JointBase):
    """Exponential mechanism over ordered k-sequences of distinct items, weight exp(ε u/2).

    Utility u(s) = -max_i (c_(i) - c_{s_i}) (seed 004 Lemma 5 applied position
    by position; the ordered variant of seed 004 Sec. 5, sampled as in
    Gillenwater et al., ICML 2022, here via cumulative counts in log space).
    Outcomes list items in selection order (position 1 first).

    Parameters
    ----------
    k : sequence length (1 <= k <= d).
    epsilon : ε of the weights exp(ε u/2); the mechanism is ε-DP.
    """

    ordered: ClassVar[bool] = True

    def _log_outcomes(self, d: int) -> float:
        return float(gammaln(d + 1) - gammaln(d - self.k + 1))

    def _count(self, sorted_counts, grid, tail):
        log_n = _sequence_log_n(sorted_counts, self.k, grid)
        # Sum of the mixture terms so far: the mass of outcomes with gap <= u_T at
        # most, hence a lower bound on the normaliser (which is also >= 1).
        z_lower = np.maximum(np.logaddexp.accumulate(_log_mixture(grid, log_n, self.epsilon)), 0.0)
        last, bound = _cut_index(grid, log_n, tail, z_lower, self.epsilon)
        return grid[: last + 1], log_n[: last + 1], bound

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` sequences (int64, (size, k)), each in selection order."""
        rng = check_rng(rng)
        size = check_size(size)
        prepared = self.prepare(counts)
        comp = self._components(prepared, size, rng)
        uniforms = rng.random((size, self.k))
        neg = -prepared.sorted_counts
        top = prepared.sorted_counts[: self.k]
        highs = np.empty((size, self.k), dtype=np.int64)
        chunk = max(1, 4_000_000 // self.k)
        for start in range(0, size, chunk):
            highs[start : start + chunk] = _prefix_sizes(
                neg, top, prepared.grid[comp[start : start + chunk]]
            )
        return prepared.order[_prefix_shuffle(highs, uniforms)]


@dataclass(frozen=True)
class Joint(_JointBase):
    """JOINT of seed 004: exponential mechanism over size-k sets, weight exp(ε u*(S)/2).

    u*(S) = -max_i (c_i - c_{j_i}) with S's counts sorted decreasingly (seed 004
    Lemma 5, Δ = 1); ε-DP by Definition 3. Sampled exactly for any histogram,
    ties included, without overflow (module docstring), replacing Algorithm 1's
    overflowing path counts (Sec. 5). Outcomes are ascending item ids.

    The exact set count is a banded dynamic programme over tie blocks; when
    counting every utility value is planned above FULL_COUNT_WORK cells, the
    sampler counts a few knots only and corrects by rejection (module
    docstring, "Knots"): exact law, no refusal at the seed's sizes.

    Parameters
    ----------
    k : set size (1 <= k <= d).
    epsilon : ε of the weights exp(ε u*/2); the mechanism is ε-DP.
    """

    ordered: ClassVar[bool] = False

    def _log_outcomes(self, d: int) -> float:
        return float(gammaln(d + 1) - gammaln(d - self.k + 1) - gammaln(self.k + 1))

    def _plan(self, sorted_counts, grid, tail):
        """Bounds, a cut that is surely late enough, and the chunked counting plan with its cost.

        Returns (log upper bound on N per row, log lower bound on Z, last row
        that can be needed, chunk boundaries, estimated cells, blocks and
        banded table cells of that last row).
        """
        k = self.k
        log_seq, last_prefix, slack = _sequence_bounds(sorted_counts, k, grid)
        log_upper = np.minimum(log_seq, _log_binomial(last_prefix, k))
        log_lower = np.maximum(log_seq - gammaln(k + 1), _log_binomial(k + slack, k))
        # any single term e^{-ε u/2} N(u) is <= Z; and Z >= 1
        half_grid = self.epsilon * grid / 2.0
        z_apriori = max(0.0, float(np.max(log_lower - half_grid)))
        last, _ = _cut_index(grid, log_upper, tail, np.full(grid.size, z_apriori), self.epsilon)
        # The peak of e^{-ε u/2} N(u) lies between the peaks of the two bounds;
        # exact counts at a few probes there give a much better lower bound on Z,
        # hence a much earlier sure cut, for a few rows of work.
        peaks = sorted(
            (
                int(np.argmax((log_lower - half_grid)[: last + 1])),
                int(np.argmax((log_upper - half_grid)[: last + 1])),
            )
        )
        probes = np.unique(np.linspace(peaks[0], peaks[1], 8).round().astype(np.int64))
        cells, blocks, _ = _set_row_work(sorted_counts, k, int(grid[probes[-1]]))
        if probes.size * cells + blocks * _BLOCK_OVERHEAD_CELLS <= MAX_SET_DP_WORK / 8:
            exact = _set_forward(sorted_counts, k, grid[probes])[0]
            z_apriori = max(z_apriori, float(np.max(exact - half_grid[probes])))
            last, _ = _cut_index(grid, log_upper, tail, np.full(grid.size, z_apriori), self.epsilon)
        work, bounds = _planned_work(sorted_counts, k, grid, last)
        _, blocks, table = _set_row_work(sorted_counts, k, int(grid[last]))
        return log_upper, z_apriori, last, bounds, work, blocks, table

    def dp_work(self, counts) -> tuple[float, int]:
        """(estimated set-counting DP cell updates, tie blocks) for ``counts``, without counting.

        The estimate covers every grid value the truncation could need (it uses
        a cheap lower bound on the normaliser; counting usually stops earlier).
        Above FULL_COUNT_WORK ``prepare`` switches to coarse knots; ``prepare``
        raises ValueError only when one grid value's sampling table exceeds
        MAX_SET_TABLE cells.
        """
        _, sorted_counts, grid, tail = self._grid(self._validated(counts))
        plan = self._plan(sorted_counts, grid, tail)
        return plan[4], plan[5]

    def _count(self, sorted_counts, grid, tail):
        if sorted_counts.size == self.k:
            # Only k items are within reach (k = d, or the rest lie beyond the grid):
            # the one set within reach is the true top-k, of gap 0.
            return grid[:1], np.zeros(1), float(tail)
        log_upper, z_apriori, last, bounds, work, blocks, table = self._plan(
            sorted_counts, grid, tail
        )
        if work > MAX_SET_DP_WORK or table > MAX_SET_TABLE:
            raise ValueError(
                f"Joint(k={self.k}, epsilon={self.epsilon}) on d={sorted_counts.size}+ items "
                f"would need ~{work:.1e} set-counting DP cell updates (limit MAX_SET_DP_WORK="
                f"{MAX_SET_DP_WORK:.0e}, ~10 s) over up to {last + 1} utility values and "
                f"{blocks} tie blocks, and {table:.1e}-cell sampling tables (limit "
                f"{MAX_SET_TABLE:.0e}); use JointSequence (ordered k-sequences, O(grid*k)), "
                f"a smaller k, or a larger epsilon"
            )
        log_n = np.full(last + 1, -np.inf)
        log_w = _log_mixture(grid, np.zeros(grid.size), self.epsilon)
        z_exact = -np.inf
        for a, b in itertools.pairwise(bounds):
            log_n[a:b] = _set_forward(sorted_counts, self.k, grid[a:b])[0]
            # Σ_{t<b} w_t N(u_t) is the mass of some outcomes of gap < u_b: <= Z
            z_exact = float(np.logaddexp(z_exact, logsumexp(log_w[a:b] + log_n[a:b])))
            z_lower = np.full(grid.size, max(z_exact, z_apriori))
            cut, bound = _cut_index(
                grid, np.concatenate([log_n[:b], log_upper[b:]]), tail, z_lower, self.epsilon
            )
            if cut < b or b == last + 1:
                cut = min(cut, b - 1)
                return grid[: cut + 1], log_n[: cut + 1], bound
        raise AssertionError("unreachable: the plan's last chunk ends the count")

    def _tables(self, sorted_counts, grid, tail) -> dict:
        """Exact mixture when counting every grid value is cheap, else coarse knots (docstring)."""
        if sorted_counts.size == self.k:
            return super()._tables(sorted_counts, grid, tail)
        upper, lower = _fast_bounds(sorted_counts, self.k, grid)
        half_grid = self.epsilon * grid / 2.0
        z_apriori = max(0.0, float(np.max(lower - half_grid)))
        last, _ = _cut_index(grid, upper, tail, np.full(grid.size, z_apriori), self.epsilon)
        if _planned_work(sorted_counts, self.k, grid, last)[0] <= FULL_COUNT_WORK:
            return super()._tables(sorted_counts, grid, tail)  # the exact mixture, as before
        return self._coarse_tables(sorted_counts, grid, tail, upper, lower, last)

    def _coarse_tables(self, sorted_counts, grid, tail, upper, lower, last) -> dict:
        """Knots, counts and proposal weights of the coarse mixture (module docstring, "Knots").

        Exact counts are computed at a few probes between the peaks of the two
        bounds, then at the knots and segment midpoints that carry the largest
        gap between the proposal's mass and its monotone lower bound, until the
        planned acceptance reaches KNOT_ACCEPTANCE or the counting work reaches
        KNOT_COUNT_WORK (cell estimates, not clock time: the plan, hence the
        random stream, does not depend on the machine's load).
        """
        k, epsilon = self.k, self.epsilon
        size = grid.size
        every = np.arange(size)
        half_grid = epsilon * grid / 2.0
        log_w = _log_mixture(grid, np.zeros(size), epsilon)
        ex_idx = np.empty(0, dtype=np.int64)
        ex_val = np.empty(0)
        spent = 0.0
        peaks = sorted(
            (
                int(np.argmax((lower - half_grid)[: last + 1])),
                int(np.argmax((upper - half_grid)[: last + 1])),
            )
        )
        # probes: across the range between the two bounds' peaks, and at doubling
        # distances on both sides (where the log-count estimate comes from)
        width = max(peaks[1] - peaks[0], 16)
        new = np.concatenate(
            [
                np.linspace(peaks[0], peaks[1], 8),
                peaks[0] - width * np.array([0.5, 1.5, 3.5]),
                peaks[1] + width * np.array([0.5, 1.5, 3.5]),
            ]
        )
        new = np.unique(np.clip(new.round(), 0, last).astype(np.int64))
        placements = 0
        while True:
            new = np.setdiff1d(new, ex_idx)
            # rows of similar gaps share one call (a call pays the widest band of its rows)
            for part in np.array_split(new, max(1, -(-new.size // KNOT_ROWS))):
                if part.size:
                    cells, blocks, _ = _set_row_work(
                        sorted_counts, k, int(grid[part[-1]]), merge=True
                    )
                    spent += part.size * cells + blocks * _BLOCK_OVERHEAD_CELLS
                    values = _set_forward(sorted_counts, k, grid[part], merge=True)[0]
                    ex_idx = np.concatenate([ex_idx, part])
                    ex_val = np.concatenate([ex_val, values])
            sort = np.argsort(ex_idx)
            ex_idx, ex_val = ex_idx[sort], ex_val[sort]
            # N is non-decreasing in u: exact counts bound their neighbours (from
            # above with a relative margin of 1e-10 for the programme's rounding).
            above = np.searchsorted(ex_idx, every, side="left")
            up = upper.copy()
            has = above < ex_idx.size
            ceiling = ex_val + 1e-10 * (1.0 + np.abs(ex_val))
            up[has] = np.minimum(up[has], ceiling[above[has]])
            below = np.searchsorted(ex_idx, every, side="right") - 1
            lo = lower.copy()
            has = below >= 0
            lo[has] = np.maximum(lo[has], ex_val[below[has]])
            # Σ_t w_t N_lower(u_t) <= Z (every term is the mass of some outcomes)
            z_lower = float(logsumexp(log_w + lo))
            cut, bound = _cut_index(grid, up, tail, np.full(size, z_lower), epsilon)
            knots = np.union1d(ex_idx[ex_idx <= cut], [cut]).astype(np.int64)
            log_h, log_level = _segment_log_h(grid[: cut + 1], knots, epsilon)
            exact = np.isin(knots, ex_idx)
            log_u = up[knots]
            log_u[exact] = ex_val[np.searchsorted(ex_idx, knots[exact])]
            log_p = log_h + log_u
            log_zh = float(logsumexp(log_p))
            starts = np.concatenate([[0], knots[:-1] + 1])
            w_cut = log_w[: cut + 1].copy()
            w_cut[cut] = -half_grid[cut]
            log_q = np.logaddexp.reduceat(w_cut + lo[: cut + 1], starts)
            # planned acceptance Z/Z_h with log N interpolated between exact counts
            guess = np.clip(
                np.interp(grid[: cut + 1], grid[ex_idx], ex_val), lo[: cut + 1], up[: cut + 1]
            )

            acceptance = float(np.exp(logsumexp(w_cut + guess) - log_zh))
            if placements < KNOT_PLACEMENTS and acceptance < KNOT_ACCEPTANCE:
                # Place the knots from the interpolated log counts (twice: the
                # second time from the counts at the first knots); exact counts
                # at them follow (the estimate only steers the work).
                placements += 1
                # beyond the last exact count: extrapolate log N along its last slope
                # (within the bounds), and the proposal's own upper bound at the cut
                plan = guess.copy()
                top = ex_idx[-1]
                if ex_idx.size >= 2 and top < cut:
                    slope = (ex_val[-1] - ex_val[-2]) / float(grid[top] - grid[ex_idx[-2]])
                    ahead = ex_val[-1] + slope * (grid[top + 1 : cut + 1] - grid[top])
                    plan[top + 1 :] = np.clip(ahead, lo[top + 1 : cut + 1], up[top + 1 : cut + 1])
                plan[cut] = up[cut]
                new = np.setdiff1d(
                    _place_knots(grid[: cut + 1], w_cut + plan, plan, epsilon), ex_idx
                )
                if new.size:
                    continue
            if acceptance >= KNOT_ACCEPTANCE or (
                spent >= KNOT_COUNT_WORK and acceptance >= KNOT_MIN_ACCEPTANCE
            ):
                break  # (below the floor, refine on: every grid value a knot means 1)
            with np.errstate(divide="ignore"):
                excess = log_p + np.log1p(-np.exp(np.minimum(log_q - log_p, 0.0)))
            new = []
            for j in np.argsort(-excess):
                if excess[j] < log_zh - 7.0 or len(new) >= 4 * KNOT_ROWS:
                    break  # negligible segments: refining them cannot move the acceptance
                if not exact[j]:
                    new.append(knots[j])
                elif knots[j] > starts[j]:
                    # split so that log N grows by about KNOT_LOG_STEP per piece
                    pieces = int(min(8, np.ceil((up[knots[j]] - lo[starts[j]]) / KNOT_LOG_STEP)))
                    cuts = np.linspace(starts[j], knots[j], max(2, pieces) + 1)[1:-1]
                    new.extend(np.unique(np.floor(cuts).astype(np.int64)).tolist())
            new = np.setdiff1d(np.array(new, dtype=np.int64), ex_idx)
            if not new.size:
                break
        _, _, table = _set_row_work(sorted_counts, k, int(grid[cut]), merge=True)
        if table > MAX_SET_TABLE:
            raise ValueError(
                f"Joint(k={k}, epsilon={epsilon}) on d={sorted_counts.size}+ items would need "
                f"{table:.1e}-cell sampling tables (limit MAX_SET_TABLE={MAX_SET_TABLE:.0e}); "
                f"use JointSequence, a smaller k, or a larger epsilon"
            )
        return {
            "grid": grid[: cut + 1],
            "knots": knots,
            "log_knot_n": log_u,
            "knot_exact": exact,
            "log_mix": log_p,
            "log_level": log_level,
            "log_tail_bound": float(bound),
            "exact_mixture": False,
            "acceptance": acceptance,
            "_full_counter": functools.partial(_full_set_counts, k=k, epsilon=epsilon),
        }

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` sets (int64, (size, k)), each row ascending item ids.

        Exact mixture: per sampled grid value, a uniform set of gap <= u
        (backward sampling over tie blocks). Coarse knots: proposals from the
        knot mixture, each kept with probability
        (N(κ_j)/U_j) · e^{-ε g(S)/2}/ℓ_{j'(S)} (module docstring, "Knots").
        """
        rng = check_rng(rng)
        size = check_size(size)
        prepared = self.prepare(counts)
        k = self.k
        if size == 0:
            return np.empty((0, k), dtype=np.int64)
        sorted_counts = prepared.sorted_counts
        gaps = prepared.grid[prepared.knots]
        if prepared.exact_mixture:
            comp = self._components(prepared, size, rng)
            ranks, _ = _uniform_sets(sorted_counts, k, gaps, comp, rng)
        else:
            parts, need = [], size
            top = sorted_counts[:k]
            while need:
                proposals = int(np.ceil(need / max(prepared.acceptance, 0.05) * 1.25)) + 4
                proposals = min(proposals, max(need, 4_000_000 // k))
                comp = self._components(prepared, proposals, rng)
                ranks, log_n = _uniform_sets(sorted_counts, k, gaps, comp, rng, merge=True)
                gap = np.max(top[None, :] - sorted_counts[np.sort(ranks, axis=1)], axis=1)
                segment = np.searchsorted(gaps, gap, side="left")
                log_accept = -self.epsilon * gap / 2.0 - prepared.log_level[segment]
                log_accept += np.where(
                    prepared.knot_exact[comp], 0.0, log_n - prepared.log_knot_n[comp]
                )
                keep = np.flatnonzero(rng.random(proposals) < np.exp(log_accept))[:need]
                parts.append(ranks[keep])
                need -= keep.size
            ranks = np.concatenate(parts)
        out = prepared.order[ranks]
        out.sort(axis=1)
        return out


def _place_knots(grid, log_mass, log_n, epsilon):
    """Knot indices (ascending, last = end of grid) for estimated masses and log counts.

    From the top down, each segment [s, κ] is made as long as its proposal
    mass H(s, κ) N(κ) exceeds its estimated mass by at most
    (1/KNOT_ACCEPTANCE - 1)/KNOT_SEGMENTS of the estimated total (equal excess
    per segment): wide segments where the mass is negligible, narrow ones at the
    peak; about KNOT_SEGMENTS segments give an acceptance of KNOT_ACCEPTANCE.
    """
    half = epsilon / 2.0
    last = grid.size - 1
    cum = np.logaddexp.accumulate(log_mass)
    slack = float(cum[-1]) + np.log((1.0 / KNOT_ACCEPTANCE - 1.0) / KNOT_SEGMENTS)
    u = grid.astype(np.float64)
    knots = [last]
    kappa = last
    while kappa > 0:
        s = np.arange(kappa + 1)
        before = np.concatenate([[-np.inf], cum[:kappa]])
        with np.errstate(divide="ignore", invalid="ignore"):
            log_q = cum[kappa] + np.log1p(-np.exp(np.minimum(before - cum[kappa], 0.0)))
            log_h = -half * u[s]
            if kappa < last:
                log_h = log_h + np.log(-np.expm1(-half * (u[kappa + 1] - u[s])))
        ok = log_h + log_n[kappa] <= np.logaddexp(log_q, slack)
        bad = np.flatnonzero(~ok)
        start = int(bad[-1]) + 1 if bad.size else 0
        start = min(start, kappa)
        if start == 0:
            break
        kappa = start - 1
        knots.append(kappa)
    return np.array(sorted(knots), dtype=np.int64)


def _full_set_counts(sorted_counts, grid, k, epsilon):
    """log N_set(u) on every grid value (JointPrepared.log_n of coarse knots), guarded."""
    last = grid.size - 1
    work, bounds = _planned_work(sorted_counts, k, grid, last, merge=True)
    if work > MAX_SET_DP_WORK:
        raise ValueError(
            f"Joint(k={k}, epsilon={epsilon}): the per-utility table on {grid.size} utility "
            f"values would need ~{work:.1e} set-counting cell updates (limit MAX_SET_DP_WORK="
            f"{MAX_SET_DP_WORK:.0e}); sampling does not need it"
        )
    log_n = np.empty(grid.size)
    for a, b in itertools.pairwise(bounds):
        log_n[a:b] = _set_forward(sorted_counts, k, grid[a:b], merge=True)[0]
    return log_n


def _planned_work(sorted_counts, k, grid, last, merge=False):
    """(cells, chunk bounds) of counting grid rows 0..last with ``_set_forward`` in chunks."""
    rows = int(min(256, max(8, 2_000_000 // (k + 1))))
    bounds = list(range(0, last + 1, rows)) + [last + 1]
    work = 0.0
    for a, b in itertools.pairwise(bounds):
        cells, blocks, _ = _set_row_work(sorted_counts, k, int(grid[b - 1]), merge)
        work += (b - a) * cells + blocks * _BLOCK_OVERHEAD_CELLS
    return work, bounds


def _uniform_sets(sorted_counts, k, gaps, comp, rng, merge=False):
    """Uniform k-sets of gap <= gaps[comp[p]] for every p: (ranks (p, k), log N per p).

    Backward sampling of the number of picks per block (``_set_blocks``) from
    the banded count tables of each distinct component (built in
    memory-bounded groups), then a uniform subset inside each block. Ranks of
    a row come in no particular order.
    """
    size = comp.size
    distinct, inverse = np.unique(comp, return_inverse=True)
    member_parts, start_parts, size_parts, pick_parts = [], [], [], []
    log_n = np.empty(size)
    _, _, table = _set_row_work(sorted_counts, k, int(gaps[distinct[-1]]), merge)
    # groups of MAX_SET_TABLE / 2 cells, as with the former 8-byte log tables:
    # the grouping fixes the order of the uniforms, hence the random stream
    group_rows = max(1, MAX_SET_TABLE // max(1, 2 * table))
    for c0 in range(0, distinct.size, group_rows):
        group = distinct[c0 : c0 + group_rows]
        counted, tables, starts_g, sizes_g, lows = _set_forward(
            sorted_counts, k, gaps[group], keep_tables=True, merge=merge
        )
        members = np.flatnonzero((inverse >= c0) & (inverse < c0 + group.size))
        row_of = inverse[members] - c0
        log_n[members] = counted[row_of]
        uniform = rng.random((members.size, starts_g.size))
        remaining = np.full(members.size, k, dtype=np.int64)
        for b in range(starts_g.size - 1, -1, -1):
            n = int(sizes_g[b])
            if b == 0:
                taken = remaining.copy()  # the first block takes what is left
            else:
                (mantissa, exponent, base), low = tables[b - 1], int(lows[b - 1])
                width, most = mantissa.shape[0], min(n, k)
                # Only picks t with low <= remaining - t < low + width carry
                # weight: a window of at most ``width`` values from t0. The
                # zero-weight t below it add exact zeros to the cumulative sums
                # and are counted by the search below, so the drawn t is the
                # one the full range 0..most gives for the same uniform.
                first = np.maximum(remaining - low - width + 1, 0)
                span = min(most + 1, width)
                ts = first[:, None] + np.arange(span)[None, :]
                before = remaining[:, None] - ts
                valid = (before >= low) & (ts <= most)
                cell = np.clip(before - low, 0, width - 1)
                with np.errstate(divide="ignore"):
                    log_count = (
                        np.log(mantissa[cell, row_of[:, None]])
                        + exponent[cell + (low - base), row_of[:, None]] * _LN2
                    )
                log_binom = _log_binomial(n, np.arange(most + 1))
                logp = np.where(valid, log_count + log_binom[np.minimum(ts, most)], -np.inf)
                logp -= logp.max(axis=1, keepdims=True)
                cdf = np.cumsum(np.exp(logp), axis=1)
                # first index whose cdf exceeds the draw: never a zero-weight t
                below = (cdf <= (uniform[:, b] * cdf[:, -1])[:, None]).sum(axis=1)
                taken = np.where(below == span, most, np.minimum(first + below, most))
            hit = np.flatnonzero(taken)
            if hit.size:
                member_parts.append(members[hit])
                start_parts.append(np.full(hit.size, starts_g[b], dtype=np.int64))
                size_parts.append(np.full(hit.size, sizes_g[b], dtype=np.int64))
                pick_parts.append(taken[hit])
            remaining -= taken
    member = np.concatenate(member_parts)
    picks = np.concatenate(pick_parts)
    offsets = _uniform_subsets(np.concatenate(size_parts), picks, rng)
    ranks = np.repeat(np.concatenate(start_parts), picks) + offsets
    rows = np.repeat(member, picks)
    # k picks per sample: group them by sample
    order = np.argsort(rows, kind="stable")
    return ranks[order].reshape(size, k), log_n
