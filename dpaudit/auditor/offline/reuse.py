"""Refusing outcome files that reuse rows: the confirm split must be drawn afresh."""

from __future__ import annotations

import hashlib
import math

import numpy as np

from mechanisms import MixedBatch

from ..sampling import count_batch
from .plan import OfflineInputError

#: the files show would repeat it with probability below this.
REUSE_CHANCE = 1e-9


def check_reuse(batches: dict) -> None:
    """Refuse two files that share their first rows beyond chance (reused or copied rows).

    Two independent files of a law with outcome probabilities ``p_o`` agree on their
    first ``r`` rows with probability ``(Σ p_o²)^r``; with the ``p_o`` estimated from the
    two files, agreement is refused when that is below :data:`REUSE_CHANCE`. A constant
    law (a deterministic system) agrees by necessity and is never refused.
    """
    if len(batches) < 2:
        return
    if any(isinstance(b, MixedBatch) for b in batches.values()):
        # Real values: independent draws repeat a row of numbers with probability 0.
        batches = {key: np.hstack([b.items, b.values.view(np.int64)]) for key, b in batches.items()}
    r = min(b.shape[0] for b in batches.values())
    if r == 0:
        return
    groups: dict[bytes, list] = {}
    for key, batch in batches.items():
        head = np.ascontiguousarray(batch[:r])
        groups.setdefault(hashlib.sha256(head.tobytes()).digest(), []).append(key)
    for keys in groups.values():
        if len(keys) < 2:
            continue
        first, second = keys[0], keys[1]
        together = count_batch(np.vstack([batches[first], batches[second]]))
        n = sum(together.values())
        collision = sum((c / n) ** 2 for c in together.values())
        if r * math.log(collision) < math.log(REUSE_CHANCE):
            what = (
                "hold the same rows"
                if all(batches[k].shape[0] == r for k in (first, second))
                else f"share their first {r} rows"
            )
            raise OfflineInputError(
                f"outcomes/{first[0]}.{first[1]} and outcomes/{second[0]}.{second[1]} {what}: "
                "every file must be drawn with fresh randomness (the confirm split independently "
                "of the select split), not copied or reused"
            )
