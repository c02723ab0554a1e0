"""Counts of ordered k-sequences by gap, and cheap bounds on the counts of k-sets.

Seed 004 Sec. 5 (sequences); docs/joint.md ("Knots") for how the bounds are used.
"""

import numpy as np
from scipy.special import gammaln

from .grid import _prefix_sizes


def _log_binomial(n, t):
    """log C(n, t) elementwise, in floats (n, t arrays or scalars)."""
    n = np.asarray(n, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    return gammaln(n + 1) - gammaln(t + 1) - gammaln(n - t + 1)


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


def _sequence_log_n(sorted_counts: np.ndarray, k: int, grid: np.ndarray) -> np.ndarray:
    """log N_seq(u) = Σ_i log(m_i(u) - i + 1) for every grid value u.

    Position i picks among the top m_i(u) items minus the i - 1 already placed,
    all of which lie in that prefix (prefixes grow with i).
    """
    return _sequence_bounds(sorted_counts, k, grid)[0]


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
