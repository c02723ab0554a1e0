"""Filling a plan's outcome files by sampling a dpaudit mechanism (tests, examples)."""

from __future__ import annotations

import numpy as np

from mechanisms import MixedBatch

from ..planning.plan import AuditPlan
from ..sources.sampling import DEFAULT_CHUNK, chunk_sizes
from ..values import as_mixed_batch
from .files import _duckdb, outcome_path, write_outcomes
from .plan import EXTENSIONS, SPLITS, read_plan


def fill_outcomes(
    directory, mechanism, *, seed=None, fmt="csv", splits=SPLITS, chunk=DEFAULT_CHUNK
) -> list[str]:
    """Write every outcome file of the plan in ``directory`` by sampling ``mechanism``.

    For tests and as an example of the user's side. Each (split, histogram) is drawn from
    its own stream, ``SeedSequence(seed, spawn_key=(phase of split, 0, histogram index))``
    ([`plan.AuditPlan.seed_for`][dpaudit.auditor.AuditPlan.seed_for]), so the splits are
    independent; chunk ``i`` uses the stream's ``i``-th child, as
    [`sampling.SamplingJob`][dpaudit.auditor.sources.sampling.SamplingJob] does, so a restricted plan of one
    pair gets exactly the rows of the live restricted audit with that seed.

    Parameters
    ----------
    directory : a directory written by [`write_plan`][dpaudit.auditor.offline.write_plan].
    mechanism : anything with ``sample(counts, size, rng) -> (size, width)`` batches.
    seed : root seed (default: the plan's).
    fmt : ``csv``, ``jsonl`` or ``parquet``.
    splits : the splits to write.
    chunk : rows per sampling call.
    """
    if fmt not in EXTENSIONS:
        raise ValueError(f"fmt must be one of {', '.join(EXTENSIONS)}, got {fmt!r}")
    plan = read_plan(directory)
    seeds = AuditPlan(
        samples=max(int(plan["samples"]), 1000),
        seed=int(plan["seed"] if seed is None else seed),
        alpha=plan["alpha"],
    )
    written = []
    connection = _duckdb().connect() if fmt == "parquet" else None
    values = int(plan.get("values", 0) or 0)
    for split in splits:
        for index, h in enumerate(plan["histograms"]):
            counts = np.asarray(h["counts"], dtype=np.int64)
            sizes = chunk_sizes(int(h[split]), int(chunk))
            streams = seeds.seed_for(split, 0, index).spawn(len(sizes))
            batch = _sample(mechanism, counts, sizes, streams, int(plan["width"]), values)
            path = outcome_path(directory, h["id"], split, fmt)
            write_outcomes(path, batch, connection)
            written.append(path)
    if connection is not None:
        connection.close()
    return written


def _sample(mechanism, counts, sizes, streams, width: int, values: int) -> np.ndarray | MixedBatch:
    """One file's rows: a chunk per stream, stacked (a MixedBatch when values are released)."""
    draws = [
        mechanism.sample(counts, size, np.random.default_rng(stream))
        for size, stream in zip(sizes, streams)
    ]
    if values:
        return MixedBatch.stack(
            [
                as_mixed_batch(draw, size, width, values, str(mechanism))
                for draw, size in zip(draws, sizes)
            ]
        )
    parts = [np.asarray(draw, dtype=np.int64) for draw in draws]
    return np.vstack(parts) if parts else np.zeros((0, width), np.int64)
