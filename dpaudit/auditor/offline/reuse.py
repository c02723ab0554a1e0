"""Rows reused across outcome files: what can be detected, by which test, and what cannot.

An offline audit ([`offline`][dpaudit.auditor.offline]) is valid only if every row is a fresh run of
the system on its histogram, the confirm split drawn independently of the select split. Two files
that share rows break that. [`find_reuse`][dpaudit.auditor.offline.reuse.find_reuse] looks for the reuse
that the rows can show:

* **lagged equality** (any order kept, any offset, integer or real rows): a file that
  repeats a stretch of another (or of itself) at an offset ``s`` — a copy, a copy shifted
  by some rows, a copy with rows inserted or dropped at the ends. For two files A and B
  of independent rows, ``A[i] = B[i + s]`` holds at each aligned position with
  probability ``q = Σ_o p_A(o) p_B(o)``, so the number of equal aligned positions ``E_s``
  over the ``L_s`` positions of the overlap is Binomial(L_s, q). ``q`` is estimated from
  the two files' own outcome frequencies (a plug-in). A file pair is refused when, at
  some offset, the binomial tail ``P(E_s >= e_s)`` is below ``alpha / T``, ``T`` the
  number of (file pair, offset) hypotheses (Bonferroni over every offset of every pair,
  so a run of independent files is refused with probability about ``alpha`` at most).
  Offsets are found from matching runs of [`window`][dpaudit.auditor.offline.reuse.window] consecutive rows
  (a rolling hash; a window long enough that chance matches are rare), so a copy whose equal rows
  come in runs shorter than the window (every other row copied) is not seen;
* **exact repeats of real-valued rows** (any order): a row of real values that never
  repeats within a file does not repeat in an independent file either. When no file
  repeats a row internally, the rows' collision probability is below ``3 / N`` (``N``
  the pairs of rows within files, at level 0.05 — the "rule of three"), and a file pair
  sharing ``c`` rows is refused when ``P(Binomial(n m, 3 / N) >= c) < alpha / F``, ``F``
  the number of file pairs. A shuffled copy of real-valued rows is therefore refused.

Not detectable, and not claimed:

* a shuffled copy (or any reordering) of INTEGER outcomes: the multiset of outcomes of
  fresh draws and of a permuted copy have the same law up to terms of order ``n Σ p³``
  the files cannot resolve; reordering removes all lagged equality;
* a subsample, or rows copied one at a time (runs shorter than the window);
* rows drawn from a seed shared with, or predictable from, other rows (they look fresh);
* a law concentrated on one outcome (``q`` near 1, a deterministic system): its fresh
  files agree by necessity, and nothing is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechanisms import MixedBatch

__all__ = ["DEFAULT_ALPHA", "Reuse", "find_reuse", "window"]

#: Level of the reuse tests: the chance that independent files are refused (about).
DEFAULT_ALPHA = 1e-6

#: Candidate alignments examined at most (each costs one pass over the overlap).
MAX_CANDIDATES = 20_000


@dataclass(frozen=True)
class Reuse:
    """Two files found to share rows: which, how, and the test that says so."""

    first: object  # the files' keys, as given to find_reuse
    second: object
    kind: str  # "copy", "shifted copy" or "repeated real rows"
    offset: int  # second[i + offset] == first[i] (0 for repeated real rows)
    equal: int  # equal aligned rows, or shared real rows
    compared: int  # aligned rows, or rows of the smaller file
    pvalue: float
    threshold: float

    def describe(self, name=str) -> str:
        """One line: what was found and the test's numbers."""
        a, b = name(self.first), name(self.second)
        test = f"p = {self.pvalue:.3g} < {self.threshold:.3g}"
        if self.kind == "repeated real rows":
            return f"{a} and {b} share {self.equal} rows of real values ({test})"
        if self.kind == "copy":
            return f"{a} and {b} hold the same rows ({self.equal} of {self.compared}; {test})"
        if self.first == self.second:
            return (
                f"{a} repeats itself {self.offset} rows further on ({self.equal} of "
                f"{self.compared} aligned rows equal; {test})"
            )
        rows = "row" if abs(self.offset) == 1 else "rows"
        return (
            f"{b} is {a} shifted by {abs(self.offset)} {rows} ({self.equal} of "
            f"{self.compared} aligned rows equal; {test})"
        )


def _row_ids(batches: dict) -> dict:
    """Every file's rows as small integers, equal ids for equal rows across all files."""
    keys = list(batches)
    flat = []
    for key in keys:
        b = batches[key]
        if isinstance(b, MixedBatch):  # items and the values' bit patterns
            b = np.hstack(
                [np.asarray(b.items), np.asarray(b.values, dtype=np.float64).view(np.int64)]
            )
        b = np.ascontiguousarray(np.asarray(b, dtype=np.int64).reshape(len(b), -1))
        flat.append(b)
    # Rows are told apart by a 64-bit mix of their columns: two distinct rows of N share
    # one with probability about N² / 2^65 (1e-7 for two million rows).
    keys64 = np.concatenate([_row_hash(b) for b in flat])
    _, inverse = np.unique(keys64, return_inverse=True)
    inverse = inverse.reshape(-1)
    out, start = {}, 0
    for key, b in zip(keys, flat):
        out[key] = inverse[start : start + len(b)].astype(np.int64)
        start += len(b)
    return out


def _row_hash(rows: np.ndarray) -> np.ndarray:
    """A 64-bit hash of every row (splitmix64 finaliser over the columns)."""
    h = np.full(len(rows), 0x243F6A8885A308D3, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in rows.T.astype(np.uint64):
            h = (h ^ column) * np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
            h *= np.uint64(0x94D049BB133111EB)
            h ^= h >> np.uint64(29)
    return h


def _frequencies(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(outcome ids, frequencies)`` of one file, sparse (real values: all distinct)."""
    outcomes, counts = np.unique(ids, return_counts=True)
    return outcomes, counts / max(len(ids), 1)


def _collision(first, second) -> float:
    """``Σ_o p(o) r(o)`` of two sparse frequency tables."""
    _, i, j = np.intersect1d(first[0], second[0], assume_unique=True, return_indices=True)
    return float(first[1][i] @ second[1][j])


def window(q: float, rows: int) -> int:
    """Rows per hashed run: chance runs of that length among ``rows²`` alignments are rare."""
    if q <= 0:
        return 1
    if q >= 0.9:
        return 64
    return int(min(64, max(2, math.ceil(math.log(1e-3 / max(rows, 2) ** 2) / math.log(q)))))


def _run_hashes(ids: np.ndarray, w: int) -> np.ndarray:
    """A hash of every run of ``w`` consecutive ids (polynomial, uint64 arithmetic)."""
    if len(ids) < w:
        return np.zeros(0, dtype=np.uint64)
    mixed = (ids.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)) * np.uint64(0xBF58476D1CE4E5B9)
    h = np.zeros(len(ids) - w + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(w):
            h = h * np.uint64(0x100000001B3) + mixed[j : j + len(h)]
    return h


def _aligned_runs(ids, keys, w) -> set:
    """``(a, b, s)`` where a run of ``w`` rows of ``a`` at ``t`` equals ``b``'s at ``t + s``."""
    hash_parts, file_parts, position_parts = [], [], []
    for i, key in enumerate(keys):
        h = _run_hashes(ids[key], w)
        hash_parts.append(h)
        file_parts.append(np.full(len(h), i))
        position_parts.append(np.arange(len(h)))
    hashes, files, positions = map(np.concatenate, (hash_parts, file_parts, position_parts))
    order = np.argsort(hashes, kind="stable")
    hashes, files, positions = hashes[order], files[order], positions[order]
    starts = np.flatnonzero(np.r_[True, hashes[1:] != hashes[:-1]])
    sizes = np.diff(np.r_[starts, len(hashes)])
    candidates = set()
    for start, size in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist()):
        # A few places per run are enough to find an alignment; a constant law has one run.
        members = list(
            zip(
                files[start : start + min(size, 8)].tolist(),
                positions[start : start + min(size, 8)].tolist(),
            )
        )
        for j, (fa, pa) in enumerate(members):
            for fb, pb in members[j + 1 :]:
                if (fa, pa) > (fb, pb):
                    fa, pa, fb, pb = fb, pb, fa, pa
                candidates.add((keys[fa], keys[fb], pb - pa))
        if len(candidates) >= MAX_CANDIDATES:
            break
    return candidates


def _binomial_tail(k: int, n: int, p: float) -> float:
    from scipy.stats import binom

    if k <= 0:
        return 1.0
    if p <= 0:
        return 0.0
    return float(binom.sf(k - 1, n, min(p, 1.0)))


def _lagged(ids, keys, alpha) -> list[Reuse]:
    """Lagged equality of every pair of files (and every file with itself) at any offset."""
    freq = {k: _frequencies(ids[k]) for k in keys}
    q_max = max((float(freq[k][1] @ freq[k][1]) for k in keys), default=0.0)
    rows = sum(len(ids[k]) for k in keys)
    w = window(q_max, rows)
    # Every (file pair, offset) is a hypothesis, found or not (the offsets are chosen from data).
    hypotheses = sum(len(ids[k]) - 1 for k in keys)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            hypotheses += len(ids[a]) + len(ids[b]) - 1
    threshold = alpha / max(hypotheses, 1)
    candidates = _aligned_runs(ids, keys, w)
    order = {k: i for i, k in enumerate(keys)}
    found, seen = [], set()
    for a, b, s in sorted(candidates, key=lambda c: (order[c[0]], order[c[1]], abs(c[2]))):
        if a == b and s == 0:
            continue
        if (a, b) in seen:
            continue
        x, y = ids[a], ids[b]
        # second[j] == first[j - s]: align x[t] with y[t + s].
        lo, hi = max(0, -s), min(len(x), len(y) - s)
        if hi - lo <= 0:
            continue
        equal = int(np.count_nonzero(x[lo:hi] == y[lo + s : hi + s]))
        q = _collision(freq[a], freq[b])
        pvalue = _binomial_tail(equal, hi - lo, q)
        if pvalue < threshold:
            kind = "copy" if s == 0 else "shifted copy"
            found.append(Reuse(a, b, kind, s, equal, hi - lo, pvalue, threshold))
            seen.add((a, b))
    return found


def _real_repeats(ids, keys, alpha) -> list[Reuse]:
    """Rows of real values shared by two files, when no file repeats a row of its own."""
    within = 0
    for k in keys:
        counts = np.unique(ids[k], return_counts=True)[1]
        within += int((counts * (counts - 1) // 2).sum())
    if within:
        return []  # values on a grid: equal rows happen; only lagged equality is tested
    pairs = sum(len(ids[k]) * (len(ids[k]) - 1) // 2 for k in keys)
    q_high = 3.0 / max(pairs, 1)
    n_pairs = len(keys) * (len(keys) - 1) // 2
    threshold = alpha / max(n_pairs, 1)
    # No row repeats within a file, so a row id seen twice is shared by two files.
    files = np.concatenate([np.full(len(ids[k]), i) for i, k in enumerate(keys)])
    rows = np.concatenate([ids[k] for k in keys])
    order = np.argsort(rows, kind="stable")
    rows, files = rows[order], files[order]
    twice = np.flatnonzero(rows[1:] == rows[:-1])
    shared: dict = {}
    for i in twice.tolist():
        pair = (int(files[i]), int(files[i + 1]))
        shared[pair] = shared.get(pair, 0) + 1
    found = []
    for (i, j), count in sorted(shared.items()):
        a, b = keys[i], keys[j]
        n, m = len(ids[a]), len(ids[b])
        pvalue = _binomial_tail(count, n * m, q_high)
        if pvalue < threshold:
            found.append(Reuse(a, b, "repeated real rows", 0, count, min(n, m), pvalue, threshold))
    return found


def find_reuse(batches: dict, alpha: float = DEFAULT_ALPHA) -> list[Reuse]:
    """Every pair of files found to share rows (module docstring), most evident first.

    Parameters
    ----------
    batches : ``{key: rows}``; rows an int64 array ``(n, width)`` or a
        [`mechanisms.MixedBatch`][mechanisms.MixedBatch] (items and real values).
    alpha : level of each of the two families of tests (lagged equality; real repeats):
        independent files are refused with probability about ``alpha`` per family.
    """
    keys = [k for k in batches if len(batches[k])]
    if not keys:
        return []
    ids = _row_ids({k: batches[k] for k in keys})
    found = _lagged(ids, keys, alpha)
    if any(isinstance(batches[k], MixedBatch) for k in keys):
        found += _real_repeats(ids, keys, alpha)
    return sorted(found, key=lambda r: r.pvalue)
