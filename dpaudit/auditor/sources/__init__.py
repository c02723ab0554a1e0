"""Sample sources: mechanisms as samplers ([`blackbox`][dpaudit.auditor.sources.blackbox]) and the
executors that draw from them, in this process or a pool
([`executors`][dpaudit.auditor.sources.executors]) or on a Dask cluster
([`dask_executor`][dpaudit.auditor.sources.dask_executor], which imports Dask only when used)."""

from .dask_executor import DaskExecutor, local_cluster_client
from .executors import LocalExecutor

__all__ = ["DaskExecutor", "LocalExecutor", "local_cluster_client"]
