"""Uniform fixed-size subsets of many ranges at once (the subset inside each tie block).

The last step of seed 004 Algorithm 1: equal counts are interchangeable, so the
picks inside a tie block are a uniform subset.
"""

import numpy as np

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
