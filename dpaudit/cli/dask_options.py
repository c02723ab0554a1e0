"""The ``--dask`` and ``--scheduler`` options read into a Dask client, and the client closed."""

from __future__ import annotations

from .errors import UsageError

__all__ = ["check_dask_options", "close_dask_client", "dask_client"]


def dask_client(args):
    """A Dask client for --dask local[:N] or --scheduler ADDRESS, or None.

    Call it only after every other option was checked: it starts worker processes.
    """
    if args.dask is None and args.scheduler is None:
        return None
    check_dask_options(args)
    try:
        from dask.distributed import Client
    except ImportError:
        raise UsageError("Dask is not installed: pip install 'dpaudit[dask]'") from None
    if args.scheduler is not None:
        try:
            return Client(args.scheduler, timeout="10s")
        except OSError as error:
            raise UsageError(f"--scheduler: cannot reach {args.scheduler!r}: {error}") from None
    count = args.dask.partition(":")[2]
    from dpaudit.auditor.sources.dask_executor import local_cluster_client

    return local_cluster_client(int(count) if count else 2)


def check_dask_options(args) -> None:
    """Refuse a bad --dask / --scheduler spelling or combination, before any cluster starts."""
    if args.dask is None and args.scheduler is None:
        return
    if args.dask is not None and args.scheduler is not None:
        raise UsageError("give --dask or --scheduler, not both")
    if args.dask is not None:
        name, _, count = args.dask.partition(":")
        if name != "local" or (count and not count.isdigit()) or count == "0":
            raise UsageError(f"--dask: expected local or local:N with N >= 1, got {args.dask!r}")


def close_dask_client(client, args) -> None:
    """Close the client, and the LocalCluster too when --dask started one."""
    if client is None:
        return
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None and args.dask:
        cluster.close()
