"""JOINT: the joint exponential mechanism over size-k sets and ordered k-sequences.

Seed 004 (004_96d6a41600571c16.txt) defines JOINT, the exponential mechanism
(Definition 3) over size-k sets with utility u* (Lemma 5, sensitivity 1), and
samples it with Algorithm 1 (Lemmas 6-7), whose path counts reach d^k and
overflow (Sec. 5). Section 5 leaves ordered sequences as future work; the
follow-up (Gillenwater et al., ICML 2022) samples them in O(dk log k).

Everything here works in log space and never forms a number that can overflow.

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
  (Lemma 6), computed by a log-space dynamic programme over blocks with
  binomial transitions; a uniform set is drawn by backward sampling of the
  number of picks per block, then a uniform subset inside each block.

Truncation: outcomes with a gap above ``u_cut = 2 (log #outcomes + 130)/ε``
are never built; their total weight is at most #outcomes · e^{-ε(u_cut+1)/2}
<= e^{-130}, while the normaliser is >= 1 (the true top-k has gap 0). The grid
is then cut further while the dropped weight, bounded with the closed-form
sequence count Π_i (m_i(u) - i + 1) >= N(u), stays below e^{-130} in total
(``JointPrepared.log_tail_bound`` records the bound). The law therefore
changes by less than 1e-56 in total variation — below the 50 digits of the
exact laws; on small histograms usually nothing is dropped at all.

Cost guard (sets): the counting DP touches about grid x tie blocks x (k+1)
log-space cells (x picks per block when counts tie), e.g. ~3.6e10 for d=1e6,
k=1000, ε=1 on U(0, 10d) counts — minutes. ``Joint.prepare`` estimates it
first (``Joint.dp_work``, no counting) and raises ValueError above
``MAX_SET_DP_WORK`` (~10 s) or when a sampling table would exceed
``MAX_SET_TABLE``, pointing to JointSequence (O(grid x k)), which has no DP.
"""

from __future__ import annotations

import hashlib
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
#: Largest set-counting DP (Joint only) we run, in log-space cell updates as
#: estimated by ``Joint.dp_work``; above it ``Joint.prepare`` raises ValueError
#: at once instead of running for minutes. Measured at ~7-9 ns per cell on a
#: shared 2-core machine (d=1e5, k=300, ε=1: 8.4e8 cells in 7.1 s), so the
#: limit is ~10 s of counting. d=1e5, k=100 needs 2.5e7; d=1e6, k=1000 on
#: U(0, 10d) counts needs 3.6e10 (~5 min) and is refused.
MAX_SET_DP_WORK = 1e9
#: Largest per-grid-value table (tie blocks x (k+1) log-space cells) that
#: ``Joint.sample``'s backward pass keeps in memory (4e7 cells = 320 MB).
MAX_SET_TABLE = 40_000_000
_CACHE_SIZE = 4


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
    log_n : log N(u_t), the number of outcomes with gap <= u_t.
    log_mix : log mixture weights log(w_t N(u_t)) (unnormalised).
    log_tail_bound : log of the bound on the total mass dropped by truncation
        (-inf when nothing was dropped).
    owner : ``(class name, k, epsilon)`` of the mechanism that built it.
    """

    order: np.ndarray
    sorted_counts: np.ndarray
    grid: np.ndarray
    log_n: np.ndarray
    log_mix: np.ndarray
    log_tail_bound: float
    owner: tuple = ()

    @property
    def log_count_per_utility(self) -> np.ndarray:
        """log of N(u_t) - N(u_{t-1}): the number of outcomes with gap exactly u_t."""
        prev = np.concatenate([[-np.inf], self.log_n[:-1]])
        with np.errstate(divide="ignore"):
            # log(N_t - N_{t-1}) = log N_t + log1p(-N_{t-1}/N_t); the cancellation is
            # harmless: an absolute error e·N_t here moves a bucket probability by at
            # most e, since N_t e^{-ε u_t/2} <= the normaliser.
            return self.log_n + np.log1p(-np.exp(prev - self.log_n))

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
    return np.searchsorted(neg_sorted, targets, side="right").astype(np.int64)


def _sequence_log_n(sorted_counts: np.ndarray, k: int, grid: np.ndarray) -> np.ndarray:
    """log N_seq(u) = Σ_i log(m_i(u) - i + 1) for every grid value u.

    Position i picks among the top m_i(u) items minus the i - 1 already placed,
    all of which lie in that prefix (prefixes grow with i).
    """
    neg = -sorted_counts
    top = sorted_counts[:k]
    free = np.arange(k)
    out = np.empty(grid.size)
    chunk = max(1, 4_000_000 // k)
    for start in range(0, grid.size, chunk):
        m = _prefix_sizes(neg, top, grid[start : start + chunk])
        out[start : start + chunk] = np.log((m - free).astype(np.float64)).sum(axis=1)
    return out


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
    them), so memory is O(rows * steps) whatever n is. Slots must increase
    along a row and every bound must exceed its slot.
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

    def _log_n(self, sorted_counts, grid) -> np.ndarray:
        raise NotImplementedError

    def _check_work(self, d, sorted_counts, grid) -> None:
        """Raise before an infeasible counting pass (no-op: sequences are O(grid*k))."""

    def _tighten(self, sorted_counts, grid, tail):
        """Drop the top of the grid while the dropped mass stays below e^{-LOG_TAIL}.

        Outcomes with gap > u_T only get weight from the components t > T, so
        dropping them loses at most Σ_{t>T} e^{-ε u_t/2} N(u_t) (w_t <= e^{-ε u_t/2}),
        against a normaliser >= 1. N is bounded by the sequence count
        Π_i (m_i(u) - i + 1) (exact for sequences; a set sorted by count is one
        such sequence), which costs O(k log d) per grid value.
        """
        bound = _sequence_log_n(sorted_counts, self.k, grid) - self.epsilon * grid / 2.0
        # reverse running log-sum-exp: suffix[t] = log Σ_{t' >= t} bound[t']
        suffix = np.logaddexp.accumulate(bound[::-1])[::-1]
        dropped = np.logaddexp(np.append(suffix[1:], -np.inf), tail)
        ok = np.flatnonzero(dropped <= -LOG_TAIL)
        if ok.size == 0:
            return grid, tail
        last = int(ok[0])
        return grid[: last + 1], float(dropped[last])

    def _validated(self, counts) -> np.ndarray:
        counts = validate_counts(counts)
        if self.k > counts.size:
            raise ValueError(f"k must be <= the number of items d={counts.size}, got {self.k}")
        return counts

    def _grid(self, counts):
        """(order, sorted_counts, grid, tail) of a validated histogram: everything before counting."""
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
        grid, tail = self._tighten(sorted_counts, grid, tail)
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
        d = counts.size
        order, sorted_counts, grid, tail = self._grid(counts)
        self._check_work(d, sorted_counts, grid)
        log_n = self._log_n(sorted_counts, grid)
        prepared = JointPrepared(
            order=order,
            sorted_counts=sorted_counts,
            grid=grid,
            log_n=log_n,
            log_mix=_log_mixture(grid, log_n, self.epsilon),
            log_tail_bound=float(tail),
            owner=self._owner(),
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

    def _log_n(self, sorted_counts, grid) -> np.ndarray:
        return _sequence_log_n(sorted_counts, self.k, grid)

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` sequences (int64, (size, k)), each in selection order."""
        rng = check_rng(rng)
        size = check_size(size)
        prepared = self.prepare(counts)
        comp = self._components(prepared, size, rng)
        uniforms = rng.random((size, self.k))
        out = np.empty((size, self.k), dtype=np.int64)
        neg = -prepared.sorted_counts
        top = prepared.sorted_counts[: self.k]
        chunk = max(1, 2_000_000 // self.k)
        for start in range(0, size, chunk):
            stop = min(size, start + chunk)
            highs = _prefix_sizes(neg, top, prepared.grid[comp[start:stop]])
            slots = np.broadcast_to(np.arange(self.k), highs.shape)
            ranks = _sparse_fisher_yates(slots, highs, uniforms[start:stop])
            out[start:stop] = prepared.order[ranks]
        return out


@dataclass(frozen=True)
class Joint(_JointBase):
    """JOINT of seed 004: exponential mechanism over size-k sets, weight exp(ε u*(S)/2).

    u*(S) = -max_i (c_i - c_{j_i}) with S's counts sorted decreasingly (seed 004
    Lemma 5, Δ = 1); ε-DP by Definition 3. Sampled exactly for any histogram,
    ties included, in log space (module docstring), replacing Algorithm 1's
    overflowing path counts (Sec. 5). Outcomes are ascending item ids.

    The exact set count costs ~grid x tie blocks x k; histograms whose estimate
    (``dp_work``) exceeds ``MAX_SET_DP_WORK`` are refused with a ValueError
    before any counting (large k on spread-out counts; use JointSequence).

    Parameters
    ----------
    k : set size (1 <= k <= d).
    epsilon : ε of the weights exp(ε u*/2); the mechanism is ε-DP.
    """

    ordered: ClassVar[bool] = False

    def _log_outcomes(self, d: int) -> float:
        return float(gammaln(d + 1) - gammaln(d - self.k + 1) - gammaln(self.k + 1))

    # Tie blocks of the rank order: items with equal counts are interchangeable
    # and every m_i(u) is a block end, so the DP runs over blocks.
    def _blocks(self, sorted_counts, limit):
        change = np.flatnonzero(np.diff(sorted_counts[:limit]) != 0) + 1
        starts = np.concatenate([[0], change])
        ends = np.concatenate([change, [limit]])
        # a block cut by `limit` is extended to its true end (counts beyond are equal)
        ends[-1] = np.searchsorted(-sorted_counts, -sorted_counts[starts[-1]], side="right")
        return starts.astype(np.int64), ends.astype(np.int64)

    def _forward(self, sorted_counts, gaps, keep_tables=False):
        """Log-space DP: F[row, j] = log #(j-subsets of the blocks so far meeting the constraints).

        Row = grid value u. After block b (end E_b) at least need_b(u) = #{i :
        m_i(u) <= E_b} items must have been chosen (r_i <= m_i for every i).
        """
        k = self.k
        neg = -sorted_counts
        m = _prefix_sizes(neg, sorted_counts[:k], gaps)  # (rows, k), non-decreasing in i
        limit = int(m[:, -1].max())
        starts, ends = self._blocks(sorted_counts, limit)
        rows = gaps.size
        # need[row, b] by a flattened searchsorted (rows are sorted, so offset them)
        offset = (np.arange(rows, dtype=np.int64) * (int(ends[-1]) + 1))[:, None]
        flat = (m + offset).ravel()
        need = np.searchsorted(flat, (ends[None, :] + offset).ravel(), side="right").reshape(
            rows, -1
        ) - np.arange(rows)[:, None] * k
        cols = np.arange(k + 1)
        F = np.full((rows, k + 1), -np.inf)
        F[:, 0] = 0.0
        tables = [F.copy()] if keep_tables else None
        sizes = ends - starts
        last = m[:, -1]
        rows_sorted = bool(np.all(np.diff(last) >= 0))
        for b in range(starts.size):
            n = int(sizes[b])
            top_t = min(n, k)
            # Only rows whose last prefix reaches past this block change (for the
            # others need = k already and the block adds nothing), and at most
            # min(E_b, k) items can have been chosen so far.
            r0 = int(np.searchsorted(last, starts[b], side="right")) if rows_sorted else 0
            cmax = int(min(ends[b], k))
            view = F[r0:, : cmax + 1]
            if top_t >= 1:
                ts = np.arange(top_t + 1)
                log_binom = gammaln(n + 1) - gammaln(ts + 1) - gammaln(n - ts + 1)
                if top_t == 1 or cmax == 1:
                    # one item: F'(j) = F(j) ⊕ (F(j-1) + log n); numpy buffers the
                    # overlapping operands, so this in-place update reads the old F.
                    np.logaddexp(view[:, 1:], view[:, :-1] + log_binom[1], out=view[:, 1:])
                else:
                    old = view.copy()
                    for t in range(1, min(top_t, cmax) + 1):
                        np.logaddexp(view[:, t:], old[:, : cmax + 1 - t] + log_binom[t],
                                     out=view[:, t:])
            # Entries below the previous need are still -inf (the update only
            # moves mass upwards), so the mask is needed only where need grew.
            if b == 0 or np.any(need[r0:, b] != need[r0:, b - 1]):
                np.copyto(view, -np.inf, where=cols[None, : cmax + 1] < need[r0:, b : b + 1])
            if keep_tables:
                tables.append(F.copy())
        return F, (np.stack(tables, axis=1) if keep_tables else None), starts, sizes

    def dp_work(self, counts) -> tuple[float, int]:
        """(estimated set-counting DP cell updates, tie blocks) for ``counts``, without counting.

        ``prepare`` raises ValueError when the first exceeds MAX_SET_DP_WORK or
        blocks x (k+1) exceeds MAX_SET_TABLE. Costs the sort and utility grid only.
        """
        _, sorted_counts, grid, _ = self._grid(self._validated(counts))
        return self._dp_work(sorted_counts, grid)

    def _dp_work(self, sorted_counts, grid) -> tuple[float, int]:
        """Upper estimate of ``_forward``'s cell updates over ``grid``, and the tie blocks.

        Mirrors ``_forward``: block b touches the rows whose k-th prefix reaches
        past its start, columns 0..min(E_b, k), once per possible number of picks
        from the block (plus the mask pass).
        """
        k = self.k
        last = np.searchsorted(-sorted_counts, grid - sorted_counts[k - 1], side="right")
        starts, ends = self._blocks(sorted_counts, int(last.max()))
        last = np.sort(last)
        active = grid.size - np.searchsorted(last, starts, side="right")
        cmax = np.minimum(ends, k)
        passes = 1 + np.minimum(ends - starts, cmax)
        return float(np.sum(active.astype(np.float64) * (cmax + 1) * passes)), starts.size

    def _check_work(self, d, sorted_counts, grid) -> None:
        """Refuse, before any counting, a DP too slow (MAX_SET_DP_WORK) or too big to sample."""
        work, blocks = self._dp_work(sorted_counts, grid)
        table = blocks * (self.k + 1)
        if work > MAX_SET_DP_WORK or table > MAX_SET_TABLE:
            raise ValueError(
                f"Joint(k={self.k}, epsilon={self.epsilon}) on d={d} items would need "
                f"~{work:.1e} set-counting DP cell updates (limit MAX_SET_DP_WORK="
                f"{MAX_SET_DP_WORK:.0e}, ~10 s) over {grid.size} utility values x {blocks} "
                f"tie blocks x k+1, and {table:.1e}-cell sampling tables (limit "
                f"{MAX_SET_TABLE:.0e}); use JointSequence (ordered k-sequences, O(grid*k)), "
                f"a smaller k, or a larger epsilon"
            )

    def _log_n(self, sorted_counts, grid) -> np.ndarray:
        out = np.empty(grid.size)
        chunk = max(1, 2_000_000 // (self.k + 1))
        for start in range(0, grid.size, chunk):
            F, _, _, _ = self._forward(sorted_counts, grid[start : start + chunk])
            out[start : start + chunk] = F[:, self.k]
        return out

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` sets (int64, (size, k)), each row ascending item ids."""
        rng = check_rng(rng)
        size = check_size(size)
        prepared = self.prepare(counts)
        comp = self._components(prepared, size, rng)
        k = self.k
        distinct, inverse = np.unique(comp, return_inverse=True)
        # Backward sampling needs the full DP tables of each sampled grid value;
        # they are built for the distinct components of the batch only.
        slots = np.empty((size, k), dtype=np.int64)
        highs = np.empty((size, k), dtype=np.int64)
        chunk_rows = max(1, 20_000_000 // ((k + 1) * max(1, self._block_estimate(prepared))))
        for c0 in range(0, distinct.size, chunk_rows):
            group = distinct[c0 : c0 + chunk_rows]
            _, tables, starts, sizes = self._forward(
                prepared.sorted_counts, prepared.grid[group], keep_tables=True
            )
            nb = sizes.size
            members = np.flatnonzero((inverse >= c0) & (inverse < c0 + group.size))
            row_of = inverse[members] - c0
            u = rng.random((members.size, nb))
            remaining = np.full(members.size, k, dtype=np.int64)
            taken = np.zeros((members.size, nb), dtype=np.int64)
            for b in range(nb - 1, -1, -1):
                n = int(sizes[b])
                top_t = min(n, k)
                ts = np.arange(top_t + 1)
                log_binom = gammaln(n + 1) - gammaln(ts + 1) - gammaln(n - ts + 1)
                prev = remaining[:, None] - ts[None, :]
                valid = prev >= 0
                logp = np.where(
                    valid,
                    tables[row_of[:, None], b, np.maximum(prev, 0)] + log_binom[None, :],
                    -np.inf,
                )
                logp -= logp.max(axis=1, keepdims=True)
                cdf = np.cumsum(np.exp(logp), axis=1)
                # first index whose cdf exceeds the draw: never a zero-weight t
                t = (cdf <= (u[:, b] * cdf[:, -1])[:, None]).sum(axis=1)
                t = np.minimum(t, top_t)
                taken[:, b] = t
                remaining -= t
            # Lay out each member's k picks block by block: slot = block start + offset.
            block_of_pick = np.repeat(np.tile(np.arange(nb), members.size), taken.ravel())
            block_of_pick = block_of_pick.reshape(members.size, k)
            first = np.cumsum(taken, axis=1) - taken
            offset = np.arange(k)[None, :] - np.take_along_axis(first, block_of_pick, axis=1)
            slots[members] = starts[block_of_pick] + offset
            highs[members] = starts[block_of_pick] + sizes[block_of_pick]
        uniforms = rng.random((size, k))
        out = np.empty((size, k), dtype=np.int64)
        chunk = max(1, 2_000_000 // k)
        for start in range(0, size, chunk):
            stop = min(size, start + chunk)
            ranks = _sparse_fisher_yates(slots[start:stop], highs[start:stop], uniforms[start:stop])
            out[start:stop] = prepared.order[ranks]
        out.sort(axis=1)
        return out

    def _block_estimate(self, prepared: JointPrepared) -> int:
        neg = -prepared.sorted_counts
        m = _prefix_sizes(neg, prepared.sorted_counts[: self.k], prepared.grid[-1:])
        limit = int(m[0, -1])
        return int(np.count_nonzero(np.diff(prepared.sorted_counts[:limit]) != 0) + 1)
