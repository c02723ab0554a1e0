"""Carry out an audit plan's draws on a Dask cluster: one task per sampling chunk.

The executor contract is
[`dpaudit.auditor.sources.executors.LocalExecutor`][dpaudit.auditor.sources.executors.LocalExecutor]'s ``draw``.
Every chunk's seed comes from the plan (``SeedSequence`` spawned per phase, round, histogram and
chunk), the outcome counts of a histogram are the sum of its chunks' ``Counter``s (addition is
associative and commutative), so the result is identical to the in-process run for the same seed,
whatever the number of workers and whatever order the tasks finish in. A worker lost mid-run is
survived: the scheduler re-runs its tasks, which are pure functions of their seeds, so the counts
are the same. A mechanism that raises on a worker stops the audit with that exception (Dask
re-raises it here).

Needs the optional extra ``dpaudit[dask]`` (``dask.distributed``); nothing imports Dask
unless this executor is asked for.
"""

from __future__ import annotations

from collections import Counter

from dpaudit.progress import progress_bar

from .sampling import DEFAULT_CHUNK, SamplingJob, _sample_chunk

__all__ = ["DaskExecutor", "local_cluster_client"]


def local_cluster_client(workers: int = 2):
    """A ``dask.distributed.Client`` on a LocalCluster of ``workers`` single-threaded processes."""
    from dask.distributed import Client, LocalCluster  # the optional `dask` extra

    cluster = LocalCluster(
        n_workers=int(workers), threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    return Client(cluster)


class DaskExecutor:
    """Draws as Dask tasks, one per chunk of ``chunk`` rows.

    Parameters
    ----------
    mechanism : the auditable mechanism (must pickle: it is shipped to the workers once).
    client : a ``dask.distributed.Client`` (``local_cluster_client()`` for this machine).
    chunk : rows per task.
    progress : show one tqdm bar on stderr (samples).
    total : the bar's total.
    """

    def __init__(
        self, mechanism, client, chunk: int = DEFAULT_CHUNK, progress: bool = False, total: int = 0
    ):
        self.mechanism = mechanism
        self.client = client
        self.chunk = int(chunk)
        self.used = 0
        self.tasks = 0
        # One copy of the mechanism per worker, not one per task.
        self._remote = client.scatter(mechanism, broadcast=True)
        self.bar = None
        if progress:
            self.bar = progress_bar(total, "sample", unit_scale=True, leave=False)

    @property
    def workers(self) -> int:
        return len(self.client.scheduler_info().get("workers", {}))

    @property
    def description(self) -> str:
        return f"dask ({self.workers} workers, {self.tasks} tasks)"

    def draw(self, histograms, per_histogram: int, seeds, encoder=None) -> list[tuple]:
        """``[(Counter, n), ...]``: as [`LocalExecutor.draw`][dpaudit.auditor.LocalExecutor.draw], sampled on the cluster."""
        from dask.distributed import as_completed  # the optional `dask` extra

        jobs = [
            SamplingJob(None, h, per_histogram, s, self.chunk) for h, s in zip(histograms, seeds)
        ]
        futures = {}
        for index, job in enumerate(jobs):
            for size, seed in zip(job.sizes, job.seeds):
                future = self.client.submit(
                    _remote_chunk, self._remote, job.counts, size, seed, encoder, pure=False
                )
                futures[future] = (index, size)
        self.tasks += len(futures)
        totals: list[Counter[tuple[int, ...]]] = [Counter() for _ in jobs]
        done = [0] * len(jobs)
        try:
            for future in as_completed(futures):
                index, size = futures[future]
                totals[index].update(future.result())  # re-raises a mechanism's exception
                done[index] += size
                if self.bar is not None:
                    self.bar.update(size)
        except BaseException:
            self.client.cancel(list(futures))
            raise
        finally:
            self.used += sum(done)
        return list(zip(totals, done))

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _remote_chunk(mechanism, counts, size, seed, encoder=None):
    return _sample_chunk(mechanism.sample, counts, size, seed, encoder)
