"""Fisher-Yates shuffles with growing bounds: uniform sequences with position t in a prefix.

The ordered sampler of JointSequence (Gillenwater et al., ICML 2022); every
variant returns the same sequences for the same uniforms (docs/joint.md,
"Sequences in a batch").
"""

import numpy as np


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


def _point_slots_to_values(parent, pos, flat, ends, steps, mask):
    """Point each written slot j at the step whose value it holds, S(j) = S(parent(j)), and
    follow the pointers to their roots (pointer doubling); ``parent`` is updated in place.

    ``ends`` are the sorted entries that are the latest write to a slot of their row (see
    ``_sorted_fisher_yates``, whose sort keys ``flat`` pack position ``pos`` and step).
    """
    if not ends.size:
        return
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
    _point_slots_to_values(parent, pos, flat, np.flatnonzero(last), steps, mask)
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


def _prefix_shuffle(highs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Uniform sequences with position t drawn among the first highs[:, t] unplaced ranks.

    All variants return exactly the same sequences for the same uniforms (the
    ones the O(k^2) ``_sparse_fisher_yates`` returns), so the choice only steers
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
