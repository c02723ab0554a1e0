"""Chunked, optionally parallel sampling that keeps only outcome counts.

Memory stays constant in the number of samples: each chunk of rows is
reduced to ``{outcome: count}`` at once
([`counting.count_batch`][dpaudit.auditor.values.counting.count_batch], or a value encoder for real-valued
releases) and merged.

Randomness: every (phase, pair, side) stream is a ``numpy.random.SeedSequence``
and every chunk gets its own child of it (``SeedSequence.spawn``), so a run is
reproducible from its seed and independent of the number of workers.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

import numpy as np

from ..values.batches import as_mixed_batch
from ..values.counting import count_batch
from .blackbox import validate_batch

__all__ = ["SamplingJob", "chunk_sizes", "count_batch", "draw_mixed", "run_jobs", "sample_counts"]

#: Default number of rows per chunk: ~25 MB for a width-10 batch.
DEFAULT_CHUNK = 250_000
#: Chunks smaller than this are sampled in the calling process even with workers > 1.
PARALLEL_MIN_CHUNK = 50_000


def chunk_sizes(total: int, chunk: int) -> list[int]:
    """Split ``total`` samples into chunks of at most ``chunk``."""
    full, rest = divmod(int(total), int(chunk))
    return [int(chunk)] * full + ([rest] if rest else [])


def draw_mixed(sampler, counts, size, rng):
    """One validated [`mechanisms.MixedBatch`][mechanisms.MixedBatch] from a value-releasing sampler."""
    owner: Any = getattr(sampler, "__self__", None)
    rule = getattr(owner, "outcome_validation", "structure")
    name = str(owner) if rule == "strict" else type(owner).__name__
    mixed = as_mixed_batch(
        sampler(counts, size, rng), size, int(owner.width), int(owner.value_width), name
    )
    domain = len(counts) if rule == "strict" and hasattr(counts, "__len__") else None
    validate_batch(mixed.items, domain_size=domain, transcript=rule == "transcript", name=name)
    _check_missing_values(mixed, name)
    return mixed


def _check_missing_values(mixed, name) -> None:
    """Refuse a NaN value except in a slot whose item is ⊥ or PAD (mechanisms/outcomes.py).

    NaN marks a value with nothing to report; anywhere else it is the mechanism's numerical
    bug, and counting it as "missing" would audit a different release.
    """
    missing = np.isnan(mixed.values)
    if not missing.any():
        return
    shared = min(mixed.items.shape[1], missing.shape[1])
    allowed = np.zeros_like(missing)
    allowed[:, :shared] = mixed.items[:, :shared] < 0  # ⊥ (-1) or PAD (-2)
    bad = np.argwhere(missing & ~allowed)
    if bad.size:
        row, slot = (int(v) for v in bad[0])
        raise ValueError(
            f"{name} released NaN as value {slot} of an outcome (row {row} of a batch); "
            "NaN marks only a value whose item is ⊥ or PAD: release a number"
        )


def _sample_chunk(sampler, counts, size, seed_seq, encoder=None) -> Counter:
    rng = np.random.default_rng(seed_seq)
    owner = getattr(sampler, "__self__", None)
    if getattr(owner, "value_width", 0):
        if encoder is None:
            raise ValueError(
                f"{type(owner).__name__} releases real values; its draws need an "
                "encoder (dpaudit.auditor.values)"
            )
        return encoder.count(draw_mixed(sampler, counts, size, rng))
    batch = sampler(counts, size, rng)
    batch = np.asarray(batch)
    if batch.ndim != 2 or batch.shape[0] != size:
        raise ValueError(
            f"sample(counts, size={size}, rng) must return a (size, width) array, got shape {batch.shape}"
        )
    rule = getattr(owner, "outcome_validation", "structure")
    domain = len(counts) if rule == "strict" and hasattr(counts, "__len__") else None
    batch = validate_batch(
        batch,
        domain_size=domain,
        transcript=rule == "transcript",
        name=str(owner) if rule == "strict" else type(owner).__name__,
    )
    return count_batch(batch)


class SamplingJob:
    """``total`` samples of ``sampler`` on ``counts``, drawn from ``seed_seq`` in chunks."""

    def __init__(self, sampler, counts, total, seed_seq, chunk=DEFAULT_CHUNK, encoder=None):
        self.sampler = sampler
        self.counts = counts
        self.encoder = encoder  # values.ValueEncoder for value-releasing mechanisms
        self.sizes = chunk_sizes(total, chunk)
        self.seeds = seed_seq.spawn(len(self.sizes))
        self.result: Counter = Counter()
        self.done = 0

    def tasks(self):
        return [
            (self.sampler, self.counts, size, seed, self.encoder)
            for size, seed in zip(self.sizes, self.seeds)
        ]


def run_jobs(jobs, workers=1, progress=None, executor=None, on_chunk=None):
    """Run every chunk of every job; fills ``job.result`` and ``job.done`` in place.

    On ``KeyboardInterrupt`` the chunks finished so far stay merged in the jobs
    and the interrupt is re-raised for the runner to report partial results.
    ``progress`` is called with the number of samples of each finished chunk, and
    ``on_chunk(task, counter)`` (a checkpoint store) with each finished chunk's counts.
    """
    flat = [(job, task) for job in jobs for task in job.tasks()]
    if workers <= 1 or executor is None:
        run_jobs_local(flat, progress, on_chunk)
        return jobs
    # Small chunks cost more to ship to a process than to sample here; they are
    # sampled in this process while the pool works on the large ones — unless the
    # mechanism says each sample is expensive (a per-call Python function).
    owner = getattr(flat[0][1][0], "__self__", None) if flat else None
    minimum = getattr(owner, "parallel_min_chunk", None) or PARALLEL_MIN_CHUNK
    local = [(job, task) for job, task in flat if task[2] < minimum]
    pending = [(job, task) for job, task in flat if task[2] >= minimum]
    futures: dict = {}
    try:
        window = max(2 * workers, 4)
        while pending or futures or local:
            while pending and len(futures) < window:
                job, task = pending.pop(0)
                futures[executor.submit(_sample_chunk, *task)] = (job, task)
            if local:
                run_jobs_local([local.pop(0)], progress, on_chunk)
                finished = [f for f in futures if f.done()]
            elif futures:
                finished = list(_wait_first(futures))
            else:
                finished = []
            for future in finished:
                job, task = futures.pop(future)
                size = task[2]
                counter = future.result()
                job.result.update(counter)
                job.done += size
                if on_chunk is not None:
                    on_chunk(task, counter)
                if progress is not None:
                    progress(size)
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    return jobs


def run_jobs_local(flat, progress=None, on_chunk=None):
    """Run ``[(job, task), ...]`` in this process."""
    for job, task in flat:
        counter = _sample_chunk(*task)
        job.result.update(counter)
        job.done += task[2]
        if on_chunk is not None:
            on_chunk(task, counter)
        if progress is not None:
            progress(task[2])


def _wait_first(futures):
    done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
    return done


def sample_counts(
    sampler, counts, total, rng_or_seed, chunk=DEFAULT_CHUNK, workers=1, encoder=None
) -> Counter:
    """Convenience: ``{outcome: count}`` of ``total`` samples (chunked, constant memory).

    ``encoder`` reduces the samples of a mechanism that releases real values.
    """
    seed_seq = (
        rng_or_seed
        if isinstance(rng_or_seed, np.random.SeedSequence)
        else np.random.SeedSequence(rng_or_seed)
    )
    job = SamplingJob(sampler, counts, total, seed_seq, chunk, encoder)
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as executor:
            run_jobs([job], workers, executor=executor)
    else:
        run_jobs([job], 1)
    return job.result
