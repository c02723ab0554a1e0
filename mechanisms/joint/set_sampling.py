"""Uniform k-sets of gap <= u by backward sampling of the picks per block.

Seed 004 Algorithm 1 (sampling backwards through the path counts), over the
banded tables of ``set_count._set_forward``; docs/joint.md ("How sampling works").
"""

import numpy as np

from . import limits
from .bounds import _log_binomial
from .set_count import _LN2, _set_forward, _set_row_work
from .subsets import _uniform_subsets


def _block_picks(table, low, n, k, remaining, row_of, draws):
    """How many of block b's ``n`` items each sample picks, drawn backwards from the table of F
    after block b - 1 (``table = (mantissa, exponent, base)``, band from ``low``) given the
    ``remaining`` picks, one uniform of ``draws`` each (seed 004 Lemma 7)."""
    mantissa, exponent, base = table
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
    below = (cdf <= (draws * cdf[:, -1])[:, None]).sum(axis=1)
    return np.where(below == span, most, np.minimum(first + below, most))


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
    # groups of MAX_SET_TABLE / 2 cells: the grouping fixes the order of the
    # uniforms, hence the random stream (do not change it with the table layout)
    group_rows = max(1, limits.MAX_SET_TABLE // max(1, 2 * table))
    for c0 in range(0, distinct.size, group_rows):
        group = distinct[c0 : c0 + group_rows]
        counted, tables, starts_g, sizes_g, lows = _set_forward(
            sorted_counts, k, gaps[group], keep_tables=True, merge=merge
        )
        assert tables is not None  # keep_tables=True
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
                taken = _block_picks(
                    tables[b - 1], int(lows[b - 1]), n, k, remaining, row_of, uniform[:, b]
                )
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
