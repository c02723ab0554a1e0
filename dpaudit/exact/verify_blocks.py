"""Exact verification of blocks of neighbouring pairs: the worst case of a block, and of all.

[`dpaudit.exact.verify`][dpaudit.exact.verify] splits the family's pairs into blocks: each block's
worst δ at the claimed ε and worst ε at the claimed δ are found in one pass (``verify_block``,
the hot loop, in exact fixed-point integers), on a Dask cluster or resumed from a checkpoint
file (``verify_blocks``), and merged in pair order (``merge_blocks``), so that the result is the
same as one pass in one process.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import mpmath
import numpy as np

from ..checkpoint import BlockStore, plan_key
from ..progress import progress_bar
from ..provenance import mechanism_spec, relation_to_dict, versions
from .fixed_point import FIXED_BITS, excess, fixed_law, to_fixed
from .law import output_law, working_precision
from .profile import _one_direction_epsilon

__all__ = [
    "ABSOLUTE_TOLERANCE",
    "DEFAULT_BLOCK",
    "RELATIVE_TOLERANCE",
    "BlockResult",
    "merge_blocks",
    "verify_block",
    "verify_blocks",
]

#: Relative slack on the claimed δ: the laws carry 50 digits, so a pair that
#: meets the claim with equality may exceed it in the last digits.
RELATIVE_TOLERANCE = mpmath.mpf("1e-25")
#: Absolute slack, for claims with δ = 0 (pure DP) met with equality; 10 digits
#: above the rounding floor of 50-digit laws, far below any real violation.
ABSOLUTE_TOLERANCE = mpmath.mpf("1e-40")

#: Pairs per task when verification is spread over a Dask cluster.
DEFAULT_BLOCK = 2_000


@dataclass(frozen=True)
class BlockResult:
    """The worst case over one block of pairs (mergeable: max, max, sum)."""

    start: int
    worst_delta: int  # fixed-point, see fixed_point.excess
    delta_pair: tuple | None
    worst_eps: str  # mpmath.mpf as text, so it pickles and stores losslessly
    eps_pair: tuple | None
    violations: int
    laws: tuple  # the histograms whose laws were computed

    def to_json(self) -> str:
        return json.dumps(
            [
                self.start,
                str(self.worst_delta),
                self.delta_pair,
                self.worst_eps,
                self.eps_pair,
                self.violations,
                [list(h) for h in self.laws],
            ]
        )

    @classmethod
    def from_json(cls, text: str) -> BlockResult:
        start, worst_delta, delta_pair, worst_eps, eps_pair, violations, laws = json.loads(text)

        def pair(p):
            return None if p is None else (tuple(p[0]), tuple(p[1]))

        return cls(
            start,
            int(worst_delta),
            pair(delta_pair),
            worst_eps,
            pair(eps_pair),
            violations,
            tuple(tuple(h) for h in laws),
        )


class _Worst:
    """The worst pair so far of one pass: δ at ``epsilon`` and ε at ``delta`` (mutable).

    Built and fed inside ``working_precision()``; δ is compared in exact fixed-point integers
    (``fixed_point.excess``), and so are the thresholds.
    """

    def __init__(self, epsilon, delta):
        self.target = mpmath.mpf(delta)
        allowed = self.target + RELATIVE_TOLERANCE * self.target + ABSOLUTE_TOLERANCE
        self.scale = to_fixed(mpmath.exp(mpmath.mpf(epsilon)))
        self.allowed_fixed = to_fixed(allowed) << FIXED_BITS
        self.target_fixed = to_fixed(self.target) << FIXED_BITS
        self.worst_delta, self.delta_pair = -1, None
        self.worst_eps, self.eps_pair, self.eps_scale = mpmath.mpf(-1), None, None
        self.violations = 0

    def add(self, c, c2, p, q) -> None:
        """The pair ``(c, c2)`` with laws ``p``, ``q`` (each ``(exact law, fixed law)``)."""
        (exact_p, fixed_p), (exact_q, fixed_q) = p, q
        forward = excess(fixed_p, fixed_q, self.scale)
        backward = excess(fixed_q, fixed_p, self.scale)
        pair_delta, pair = (forward, (c, c2)) if forward >= backward else (backward, (c2, c))
        if pair_delta > self.allowed_fixed:
            self.violations += 1
        if pair_delta > self.worst_delta:
            self.worst_delta, self.delta_pair = pair_delta, pair
        # ε(δ) of this pair can exceed the current worst only if δ at the
        # current worst ε is still above δ (δ(ε) is non-increasing): a sound skip.
        if self.worst_eps != mpmath.inf and (
            self.eps_scale is None
            or excess(fixed_p, fixed_q, self.eps_scale) > self.target_fixed
            or excess(fixed_q, fixed_p, self.eps_scale) > self.target_fixed
        ):
            forward_eps = _one_direction_epsilon(exact_p, exact_q, self.target)
            backward_eps = _one_direction_epsilon(exact_q, exact_p, self.target)
            pair_eps, pair = (
                (forward_eps, (c, c2)) if forward_eps >= backward_eps else (backward_eps, (c2, c))
            )
            if pair_eps > self.worst_eps:
                self.worst_eps, self.eps_pair = pair_eps, pair
                self.eps_scale = None if pair_eps == mpmath.inf else to_fixed(mpmath.exp(pair_eps))

    def result(self, start: int, laws: tuple) -> BlockResult:
        return BlockResult(
            start,
            int(self.worst_delta),
            None
            if self.delta_pair is None
            else (_key(self.delta_pair[0]), _key(self.delta_pair[1])),
            mpmath.nstr(self.worst_eps, 60) if self.worst_eps != mpmath.inf else "inf",
            None if self.eps_pair is None else (_key(self.eps_pair[0]), _key(self.eps_pair[1])),
            self.violations,
            laws,
        )


def verify_block(
    mech, low, high, start, epsilon, delta, progress_total=None, cache=None
) -> BlockResult:
    """Exact δ(ε) and ε(δ) of every pair ``(low[i], high[i])``; the worst of the block."""
    cache = {} if cache is None else cache

    def law(row: np.ndarray) -> tuple[dict, dict]:
        key = tuple(int(v) for v in row)
        found = cache.get(key)
        if found is None:
            exact = output_law(mech, np.asarray(key, dtype=np.int64))
            found = cache[key] = (exact, fixed_law(exact))
        return found

    n_pairs = int(low.shape[0])
    with working_precision():
        worst = _Worst(epsilon, delta)
        bar = progress_bar(
            n_pairs,
            "pair",
            desc=f"verify {type(mech).__name__}",
            disable=not progress_total,
            mininterval=0.5,
        )
        try:
            for index in range(n_pairs):
                c, c2 = low[index], high[index]
                worst.add(c, c2, law(c), law(c2))
                if index % 64 == 63:
                    bar.update(64)
            bar.update(n_pairs - bar.n)
        finally:
            bar.close()
        return worst.result(start, tuple(cache))


def merge_blocks(blocks):
    """The worst case over all blocks, in pair order: ties go to the earliest pair, as in one pass."""
    blocks = sorted(blocks, key=lambda b: b.start)
    with working_precision():
        worst_delta, delta_pair, worst_eps, eps_pair = -1, None, mpmath.mpf(-1), None
        violations, laws = 0, set()
        for block in blocks:
            violations += block.violations
            laws.update(block.laws)
            if block.worst_delta > worst_delta:
                worst_delta, delta_pair = block.worst_delta, block.delta_pair
            block_eps = mpmath.mpf(block.worst_eps)
            if block_eps > worst_eps:
                worst_eps, eps_pair = block_eps, block.eps_pair
    return worst_delta, delta_pair, worst_eps, eps_pair, violations, len(laws)


def verify_blocks(mech, low, high, epsilon, delta, client, block, resume, family, progress):
    """Blocks of pairs on a Dask cluster and/or from a checkpoint file."""
    if block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}")
    starts = list(range(0, int(low.shape[0]), block))
    store = None if resume is None else _block_store(mech, epsilon, delta, block, resume, family)
    try:
        done = {}
        if store is not None:
            for start in starts:
                text = store.get(start)
                if text is not None:
                    done[start] = BlockResult.from_json(text)
        todo = [s for s in starts if s not in done]
        bar = progress_bar(
            len(starts),
            "block",
            desc=f"verify {type(mech).__name__}",
            initial=len(done),
            disable=not progress,
        )
        try:
            for result in _run_blocks(mech, low, high, epsilon, delta, client, block, todo):
                done[result.start] = result
                if store is not None:
                    store.put(result.start, result.to_json())
                bar.update(1)
        finally:
            bar.close()
    finally:
        if store is not None:
            store.close()
    return list(done.values())


def _block_store(mech, epsilon, delta, block, resume, family) -> BlockStore:
    """The checkpoint file of this check (a file from another check is refused)."""
    d, max_count, relation = family
    description = {
        "mechanism": mechanism_spec(mech) or repr(mech),
        "d": int(d),
        "max_count": int(max_count),
        "relation": relation_to_dict(relation),
        "epsilon": float(epsilon),
        "delta": float(delta),
        "block": block,
        "dpaudit": versions().get("dpaudit"),
    }
    return BlockStore(resume, plan_key(description), description)


def _run_blocks(mech, low, high, epsilon, delta, client, block, todo):
    """The blocks starting at ``todo``, each as it finishes: Dask tasks, or one by one here."""
    if client is None:
        for s in todo:
            yield verify_block(mech, low[s : s + block], high[s : s + block], s, epsilon, delta)
        return
    from dask.distributed import as_completed

    futures = [
        client.submit(
            verify_block,
            mech,
            low[s : s + block],
            high[s : s + block],
            s,
            epsilon,
            delta,
            pure=False,
        )
        for s in todo
    ]
    for future in as_completed(futures):
        yield future.result()


def _key(row) -> tuple[int, ...]:
    return tuple(int(v) for v in row)
