"""Executors: carry out the draws of an audit plan (in this process, or a process pool).

An executor has one job: given the mechanism, the histograms of a draw and their seed
streams, return for each histogram the ``Counter`` of outcomes and the number drawn.
Chunks of every job get their own child seeds (``SeedSequence.spawn``), so the counts
depend only on the plan, never on the number of workers or the order chunks finish.
A cluster executor (Dask) or an offline one (samples produced elsewhere) implements
the same [`draw`][dpaudit.auditor.sources.executors.LocalExecutor.draw].
"""

from __future__ import annotations

import pickle
import warnings
from concurrent.futures import ProcessPoolExecutor

from dpaudit.progress import progress_bar

from .sampling import SamplingJob, run_jobs

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """Draws in this process, or in ``workers`` processes when the mechanism pickles.

    Parameters
    ----------
    mechanism : the auditable mechanism (``sample(counts, size, rng)``).
    workers : processes; 1 samples in this process.
    chunk : rows per sampling call.
    progress : show one tqdm bar (samples) on stderr, of ``total`` samples.
    """

    def __init__(
        self,
        mechanism,
        workers: int = 1,
        chunk: int = 250_000,
        progress: bool = False,
        total: int = 0,
        store=None,
    ):
        self.mechanism = mechanism
        self.store = store  # a checkpoint.ChunkStore: finished chunks are read, new ones written
        self.resumed = 0
        self.chunk = int(chunk)
        self.used = 0
        self.pool = None
        self.workers = 1
        self.last_jobs: list[SamplingJob] = []
        if workers > 1:
            try:
                pickle.dumps(mechanism)
                self.pool = ProcessPoolExecutor(max_workers=workers)
                self.workers = workers
            except (pickle.PicklingError, AttributeError, TypeError):  # lambdas, closures, locks
                warnings.warn("mechanism cannot be pickled; sampling in one process", stacklevel=3)
        self.bar = None
        if progress:
            self.bar = progress_bar(total, "sample", unit_scale=True, leave=False)

    @property
    def description(self) -> str:
        return f"local ({self.workers} process{'es' if self.workers > 1 else ''})"

    def draw(self, histograms, per_histogram: int, seeds, encoder=None) -> list[tuple]:
        """``[(Counter, n), ...]``: ``per_histogram`` samples of each histogram, from ``seeds``.

        ``encoder`` ([`value_encoding.ValueEncoder`][dpaudit.auditor.values.encoders.ValueEncoder])
        reduces the samples of a mechanism that releases real values; it must be fixed before the
        draw.
        """
        jobs = [
            SamplingJob(self.mechanism.sample, h, per_histogram, s, self.chunk, encoder)
            for h, s in zip(histograms, seeds)
        ]
        self.last_jobs = jobs
        on_chunk = None
        if self.store is not None:
            for job in jobs:
                self._take_stored(job)
            on_chunk = self._store_chunk
        try:
            run_jobs(jobs, self.workers, progress=self._tick, executor=self.pool, on_chunk=on_chunk)
        finally:
            self.used += sum(job.done for job in jobs)
        return [(job.result, job.done) for job in jobs]

    def _take_stored(self, job):
        """Merge the chunks already in the store; leave only the missing ones to sample."""
        sizes, seeds = [], []
        for size, seed in zip(job.sizes, job.seeds):
            found = self.store.get(seed)
            if found is None:
                sizes.append(size)
                seeds.append(seed)
            else:
                job.result.update(found[0])
                job.done += found[1]
                self.resumed += found[1]
        job.sizes, job.seeds = sizes, seeds

    def _store_chunk(self, task, counter):
        size, seed = task[2], task[3]
        self.store.put(seed, counter, size)

    def _tick(self, n):
        if self.bar is not None:
            self.bar.update(n)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
