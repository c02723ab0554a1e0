"""The number of k-sets with gap <= u: a banded dynamic programme over tie blocks.

Seed 004 Lemmas 6-7 (a lattice-path count over tie blocks), in mantissa x
2^exponent arithmetic so that nothing overflows (seed 004 Sec. 5 notes that
Algorithm 1's path counts do); docs/joint.md ("How sampling works", "Error bound").
"""

import itertools

import numpy as np

from . import limits
from .bounds import _log_binomial
from .grid import _prefix_sizes

#: Set count arithmetic (``_set_forward``): mantissa growth allowed between
#: renormalisations, in bits (below the 1023 of a double), and the block size
#: (relative to its band) above which a block is counted in log space.
_EXPONENT_ROOM = 960
_PASCAL_RATIO = 4
_LN2 = float(np.log(2.0))


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


def _planned_work(sorted_counts, k, grid, last, merge=False):
    """(cells, chunk bounds) of counting grid rows 0..last with ``_set_forward`` in chunks."""
    rows = int(min(256, max(8, 2_000_000 // (k + 1))))
    bounds = list(range(0, last + 1, rows)) + [last + 1]
    work = 0.0
    for a, b in itertools.pairwise(bounds):
        cells, blocks, _ = _set_row_work(sorted_counts, k, int(grid[b - 1]), merge)
        work += (b - a) * cells + blocks * limits.BLOCK_OVERHEAD_CELLS
    return work, bounds


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


def _empty_counts(k, rows):
    """``(mantissa, exponent, ratio, scratch)`` of F before any item: F(0) = 1, else 0."""
    # pick numbers outermost, rows innermost: the Pascal step runs over contiguous memory
    mantissa = np.zeros((k + 1, rows))
    mantissa[0] = 1.0
    exponent = np.zeros((k + 1, rows), dtype=np.int64)
    return mantissa, exponent, np.ones((k + 1, rows)), np.empty((k + 1, rows))


def _pascal_block(mantissa, exponent, ratio, scratch, n, prev_low, prev_high, high, budget):
    """Add a block of ``n`` items by Pascal steps: ``(budget left, whether it renormalised)``.

    An item adds one Pascal step F'(j) = F(j) + F(j-1), i.e.
    M'(j) = M(j) + M(j-1) · 2^(X(j-1) - X(j)) on F = mantissa · 2^exponent: one exact scaling
    by a power of two and one addition of non-negative numbers, about 0.5 ns per cell with
    the rows innermost (log-add-exp would cost 5-8 ns). Mantissas are renormalised into
    [0.5, 1) exactly (``_renormalise``) before the growth bound (1 + 2^D)^steps, D the largest
    exponent drop between neighbours, could reach 2^960, so nothing overflows; nothing that
    matters underflows either (a product below 2^-1022 is added to a mantissa >= 0.5).
    Every addition adds non-negative numbers, so each count is within a relative
    (1 + 2^-53)^(items) - 1 <= items · 1.2e-16 of the exact one (3e-13 for 2,500 items).
    """
    k = mantissa.shape[0] - 1
    renormalised = False
    top = prev_high  # largest pick number that can be nonzero so far
    a = prev_low + 1  # F(prev_low - 1) is zero: nothing moves into prev_low
    done = 0
    while done < n:
        if budget == 0:
            _renormalise(mantissa, exponent, prev_low, k + 1)
            renormalised = True
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
    return budget, renormalised


def _zero_below_need(mantissa, row_need, prev_need, prev_low, low, high):
    """Zero the pick numbers below each row's need after a block (seed 004 Lemma 7: r_i <= m_i)."""
    if low > prev_low:
        mantissa[prev_low:low] = 0.0  # below every row's need from now on
    # Entries below the previous need stay zero through a transition (it only
    # moves mass upwards), so rows whose need did not grow need no mask.
    if np.any(row_need > np.maximum(prev_need, low)):
        cols = np.arange(low, high + 1)
        np.copyto(mantissa[low : high + 1], 0.0, where=cols[:, None] < row_need[None, :])


def _set_forward(
    sorted_counts: np.ndarray,
    k: int,
    gaps: np.ndarray,
    keep_tables: bool = False,
    merge: bool = False,
) -> tuple[
    np.ndarray,
    list[tuple[np.ndarray, np.ndarray, int]] | None,
    np.ndarray,
    np.ndarray,
    np.ndarray,
]:
    """Count of k-sets with gap <= u for every u in ``gaps`` (ascending), as log N per row.

    F[j, row] = #(j-subsets of the items so far whose i-th pick sits in the top m_i(u) for
    every i <= j); after block b at least need_b(u) picks must have been made (r_i <= m_i).
    Only the band need_b .. min(E_b, k) of pick numbers can be nonzero (about m_k(u) - k wide
    for near-uniform histograms): O(Σ_b band_b · n_b) per row. F = mantissa · 2^exponent,
    added by Pascal steps (``_pascal_block``) or, for blocks of n > 4 · band + 16 items, in
    log space (``_log_space_block``); log N is within 1e-12 relative, checked against big
    integers up to d = 300 (tests/mechanisms/test_joint_knots.py).

    Returns (log N(u) per row, tables, starts, sizes, lows) where, with ``keep_tables``,
    ``tables[b] = (mantissa, exponents, base)`` holds F after block b: F[lows[b] + c, row] =
    mantissa[c, row] · 2^exponents[lows[b] + c - base, row]; consecutive blocks share one int32
    snapshot of the exponents (they only change at renormalisations).
    """
    m = _prefix_sizes(-sorted_counts, sorted_counts[:k], gaps)  # (rows, k), non-decreasing
    starts, ends = _set_blocks(sorted_counts, m, merge)
    sizes = ends - starts
    need = _set_needs(m, ends, k)
    lows = need.min(axis=0)  # the largest gap has the widest band; non-decreasing in b
    highs = np.minimum(ends, k)
    rows = gaps.size
    mantissa, exponent, ratio, scratch = _empty_counts(k, rows)
    tables: list[tuple[np.ndarray, np.ndarray, int]] | None = [] if keep_tables else None
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
            budget, renormalised = _pascal_block(
                mantissa, exponent, ratio, scratch, n, prev_low, prev_high, high, budget
            )
            snapshot = None if renormalised else snapshot
        _zero_below_need(mantissa, need[:, b], prev_need, prev_low, low, high)
        prev_need = need[:, b]
        prev_low, prev_high = low, high
        if tables is not None:
            if snapshot is None:
                base, snapshot = low, exponent[low:].astype(np.int32)
            tables.append((mantissa[low : high + 1].copy(), snapshot, base))
    return np.log(mantissa[k]) + exponent[k] * _LN2, tables, starts, sizes, lows


def _full_set_counts(sorted_counts, grid, k, epsilon):
    """log N_set(u) on every grid value (JointPrepared.log_n of coarse knots), guarded."""
    last = grid.size - 1
    work, bounds = _planned_work(sorted_counts, k, grid, last, merge=True)
    if work > limits.MAX_SET_DP_WORK:
        raise ValueError(
            f"Joint(k={k}, epsilon={epsilon}): the per-utility table on {grid.size} utility "
            f"values would need ~{work:.1e} set-counting cell updates (limit MAX_SET_DP_WORK="
            f"{limits.MAX_SET_DP_WORK:.0e}); sampling does not need it"
        )
    log_n = np.empty(grid.size)
    for a, b in itertools.pairwise(bounds):
        log_n[a:b] = _set_forward(sorted_counts, k, grid[a:b], merge=True)[0]
    return log_n
