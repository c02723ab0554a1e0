"""Batch sampling of a Plackett–Luce prefix: k draws without replacement, optional stop.

Adding Gumbel(1) noise to log-weights ``λ_j`` and sorting gives candidate
``j`` first with probability ``e^{λ_j} / Σ e^{λ}``, then the next among the
rest, and so on (seed 003, 003_9293f5da18078e1b.txt, Lemma 4.2): the
Plackett–Luce law. The limited-domain mechanisms (seed 003 Alg. 1) draw the
first ``k`` of that order over ``m = k̄ + 1`` candidates, one of which is the
⊥ candidate; the outcome ends at ⊥.

Two exact routes, chosen by size:

* ``"table"``: when the number of possible outcomes ``N`` is small (k̄ = 10,
  k = 3 gives 821), compute every outcome's probability once, then each sample
  is one uniform, an alias-table lookup (Walker) and a row copy.
* ``"gumbel"``: one Gumbel per candidate and a partial sort, O(size · m).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .outcomes import PAD

__all__ = [
    "TABLE_MAX_OUTCOMES",
    "alias_table",
    "count_prefix_outcomes",
    "outcome_table",
    "sample_plackett_luce",
]

#: Largest outcome count for which the "auto" route builds a probability table.
TABLE_MAX_OUTCOMES = 1 << 16


def count_prefix_outcomes(m: int, k: int, stop: int | None) -> int:
    """Number of distinct outcomes of a k-prefix over ``m`` candidates.

    Without a stop candidate: ordered selections of ``min(k, m)`` of ``m``.
    With one: j ordinary candidates then the stop, for ``j < k``, plus the
    ``k``-prefixes of ordinary candidates only.
    """
    if stop is None:
        return math.perm(m, min(k, m))
    n = m - 1
    total = sum(math.perm(n, j) for j in range(min(k - 1, n) + 1))
    return total + (math.perm(n, k) if k <= n else 0)


def outcome_table(
    log_weights: np.ndarray, k: int, stop: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every outcome of the k-prefix and its probability, exactly up to float rounding.

    Returns ``(rows, probs)``: ``rows`` is an int64 ``(N, k)`` array of candidate
    positions in draw order, PAD after the stop or after the candidates run
    out; ``probs`` the float64 probabilities (sum 1 up to rounding).

    Built level by level: each live prefix is extended by every unused
    candidate with probability ``e^{λ_c} / Σ_{unused} e^{λ}``. The conditional
    is computed per prefix after shifting by that prefix's largest unused
    log-weight, so candidates that are negligible in the first draw still get
    their correct conditional probability once the dominant ones are used.
    """
    lw = np.asarray(log_weights, dtype=np.float64)
    m = lw.size
    prefixes = np.empty((1, 0), dtype=np.int64)
    probs = np.ones(1)
    done_rows, done_probs = [], []
    depth = min(k, m)
    for r in range(depth):
        n = prefixes.shape[0]
        used = np.zeros((n, m), dtype=bool)
        if r:
            np.put_along_axis(used, prefixes, True, axis=1)
        masked = np.where(used, -np.inf, lw)
        shifted = np.exp(masked - masked.max(axis=1, keepdims=True))
        cond = shifted / shifted.sum(axis=1, keepdims=True)
        parent, cand = np.nonzero(~used)
        new = np.concatenate([prefixes[parent], cand[:, None]], axis=1)
        new_probs = probs[parent] * cond[parent, cand]
        ends = np.full(cand.size, r + 1 == depth) | (cand == stop if stop is not None else False)
        if np.any(ends):
            block = np.full((int(ends.sum()), k), PAD, dtype=np.int64)
            block[:, : r + 1] = new[ends]
            done_rows.append(block)
            done_probs.append(new_probs[ends])
        prefixes, probs = new[~ends], new_probs[~ends]
    return np.concatenate(done_rows), np.concatenate(done_probs)


def _relabel(positions: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
    """Map candidate positions to output labels; PAD stays PAD."""
    if labels is None:
        return positions
    extended = np.append(np.asarray(labels, dtype=np.int64), PAD)
    return extended[np.where(positions == PAD, extended.size - 1, positions)]


def alias_table(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table (Vose's construction) for the law ``∝ probs``.

    Returns ``(keep, alias)``: draw ``j`` uniform in ``[0, N)`` and keep it with
    probability ``keep[j]``, else take ``alias[j]``. Zero-probability entries
    have ``keep = 0`` and are never the result. O(N), a plain loop, run once
    per table (N <= TABLE_MAX_OUTCOMES).
    """
    probs = np.asarray(probs, dtype=np.float64)
    n = probs.size
    scaled = (probs / probs.sum() * n).tolist()
    keep = [1.0] * n
    alias = list(range(n))
    small = [i for i, v in enumerate(scaled) if v < 1.0]
    large = [i for i, v in enumerate(scaled) if v >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        keep[s] = scaled[s]
        alias[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        (small if scaled[g] < 1.0 else large).append(g)
    # Whatever is left over is 1 up to rounding: it keeps itself. A
    # zero-probability entry can only be left over through rounding, so it is
    # aliased to the largest entry instead of ever being returned.
    keep_arr = np.array(keep)
    alias_arr = np.array(alias, dtype=np.int64)
    zero = probs <= 0
    keep_arr[zero] = 0.0
    alias_arr[zero & (alias_arr == np.arange(n))] = int(np.argmax(probs))
    return keep_arr, alias_arr


def _sample_table(
    rows: np.ndarray, probs: np.ndarray, size: int, rng: np.random.Generator
) -> np.ndarray:
    # One uniform per draw: its integer part picks the column of the alias
    # table and its fractional part (about 53 - log2 N bits) the coin.
    keep, alias = alias_table(probs)
    n = keep.size
    x = rng.random(size) * n
    column = np.minimum(x.astype(np.int64), n - 1)
    pick = np.where(x - column < keep[column], column, alias[column])
    return np.take(rows, pick, axis=0)


def _sample_gumbel(
    lw: np.ndarray, k: int, stop: int | None, size: int, rng: np.random.Generator
) -> np.ndarray:
    m = lw.size
    taken = min(k, m)
    noisy = lw + rng.gumbel(size=(size, m))
    if taken < m:
        top = np.argpartition(-noisy, taken - 1, axis=1)[:, :taken]
    else:
        top = np.broadcast_to(np.arange(m), (size, m)).copy()
    order = np.argsort(-np.take_along_axis(noisy, top, axis=1), axis=1, kind="stable")
    out = np.full((size, k), PAD, dtype=np.int64)
    out[:, :taken] = np.take_along_axis(top, order, axis=1)
    if stop is not None:
        is_stop = out == stop
        # Everything after the stop candidate is cut off.
        after = (np.cumsum(is_stop, axis=1) - is_stop) > 0
        out[after] = PAD
    return out


def sample_plackett_luce(
    log_weights: np.ndarray,
    k: int,
    size: int,
    rng: np.random.Generator,
    *,
    stop: int | None = None,
    labels: ArrayLike | None = None,
    method: str = "auto",
) -> np.ndarray:
    """``size`` Plackett–Luce k-prefixes over candidates with log-weights ``λ``.

    Seed 003 (003_9293f5da18078e1b.txt) Lemma 4.2 (peeling EM = Gumbel top-k)
    and Alg. 1 (stop at ⊥).

    Parameters
    ----------
    log_weights : ``λ`` (m,), finite or -inf (never drawn); candidate j has
        first-draw probability ``e^{λ_j} / Σ e^{λ}``.
    k : the number of draws (a row ends earlier at ``stop``, or when the
        candidates run out).
    size : number of independent rows.
    rng : numpy Generator.
    stop : position of the stop candidate (⊥), or None.
    labels : optional (m,) int array mapping positions to output ids.
    method : "auto", "table" or "gumbel". "auto" builds the table when it has
        at most ``TABLE_MAX_OUTCOMES`` outcomes and no more than size/4
        (so that building it is paid back).

    Returns
    -------
    int64 array ``(size, k)`` of labels (positions if ``labels`` is None), PAD-padded.
    """
    lw = np.asarray(log_weights, dtype=np.float64)
    lw = lw - lw.max()
    labels = None if labels is None else np.asarray(labels)
    if method == "auto":
        outcomes = count_prefix_outcomes(lw.size, k, stop)
        method = "table" if outcomes <= min(TABLE_MAX_OUTCOMES, size // 4) else "gumbel"
    if method == "table":
        rows, probs = outcome_table(lw, k, stop)
        return _sample_table(_relabel(rows, labels), probs, size, rng)
    if method == "gumbel":
        return _relabel(_sample_gumbel(lw, k, stop, size, rng), labels)
    raise ValueError(f"method must be one of 'auto', 'table', 'gumbel', got {method!r}")
