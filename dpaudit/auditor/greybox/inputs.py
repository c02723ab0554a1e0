"""The two inputs every grey-box run takes: a seed and something with ``sample``.

Checked once here, so that the replay check, the coupled runs and importance sampling refuse a
bad seed or sampler with the same words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mechanisms.validation import require_nonnegative_int

__all__ = ["Seed", "sample_method", "seed_sequence"]

Seed = int | np.random.SeedSequence


def seed_sequence(seed: Seed) -> np.random.SeedSequence:
    """A fresh ``SeedSequence`` for ``seed``: a copy of a given one (spawning from it counts
    its children, so the caller's own is never advanced), or ``SeedSequence(seed)``."""
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(
            seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(
            f"seed must be an integer >= 0 or a numpy.random.SeedSequence, got {seed!r}"
        )
    return np.random.SeedSequence(require_nonnegative_int("seed", seed))


def sample_method(mechanism: Any) -> Callable[..., Any]:
    """``mechanism.sample``, or a ``ValueError`` saying how to make one."""
    sample = getattr(mechanism, "sample", None)
    if not callable(sample):
        raise ValueError(
            f"mechanism must have sample(counts, size, rng), got {mechanism!r}: pass a mechanism, "
            "or wrap a function with dpaudit.auditor.as_auditable(f, claim=..., width=...)"
        )
    return sample
