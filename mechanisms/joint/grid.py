"""The utility grid of JOINT: gaps a_i - a_r, prefix sizes m_i(u), mixture weights, truncation.

Seed 004 Lemma 5 (the utility u* as a largest gap); the mixture over cumulative
counts and the truncation are derived in docs/joint.md ("How sampling works",
"Truncation").
"""

import numpy as np

from . import limits


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
    if min(total, span + 1) > limits.MAX_GRID:
        raise ValueError(
            f"JOINT would need {min(total, span + 1)} utility values (> {limits.MAX_GRID}); "
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


def _log_mixture(grid: np.ndarray, log_n: np.ndarray, epsilon: float) -> np.ndarray:
    """log(w_t N(u_t)) with w_t = e^{-ε u_t/2} - e^{-ε u_{t+1}/2} (w_T = e^{-ε u_T/2})."""
    half = epsilon / 2.0
    log_w = -half * grid.astype(np.float64)
    steps = np.diff(grid).astype(np.float64)
    # log(1 - e^{-ε Δ/2}) via log(-expm1(.)), accurate for small steps.
    log_w[:-1] += np.log(-np.expm1(-half * steps))
    return log_w + log_n


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
    ok = np.flatnonzero(relative <= -limits.LOG_TAIL)
    last = int(ok[0]) if ok.size else grid.size - 1
    return last, float(relative[last])
