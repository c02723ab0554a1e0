"""The sampler of one live audit: its executor (local or Dask) and, with ``resume=``,
the DuckDB chunk store it appends finished chunks to
([`checkpoint`][dpaudit.checkpoint])."""

from __future__ import annotations

from dpaudit.checkpoint import ChunkStore, plan_key
from dpaudit.provenance import mechanism_spec, relation_to_dict, versions

from ..planning.options import AuditOptions
from ..sources.dask_executor import DaskExecutor
from ..sources.executors import LocalExecutor

__all__ = ["close_sampler", "open_sampler", "resume_evidence"]


def _checkpoint_store(path, mech, declared, relation, options: AuditOptions):
    """The DuckDB chunk store of ``resume=`` ([`checkpoint`][dpaudit.checkpoint]), keyed by the plan."""
    description = dict(
        options.plan_fields(),
        mechanism=mechanism_spec(mech) or repr(mech),
        claim=[declared.epsilon, declared.delta],
        relation=relation_to_dict(relation),
        dpaudit=versions().get("dpaudit"),
    )
    return ChunkStore(path, plan_key(description), description)


def _executor(mech, options: AuditOptions, client, progress, store):
    if client is not None:
        return DaskExecutor(mech, client, int(options.chunk), progress, int(options.samples))
    return LocalExecutor(
        mech, int(options.workers), int(options.chunk), progress, int(options.samples), store
    )


def open_sampler(
    mech, declared, relation, options: AuditOptions, executor, client, resume, progress
):
    """``(executor, owned, store)``: the caller's ``executor`` (not owned) or one built
    here (on ``client`` if given), and the chunk store of ``resume`` (or None)."""
    if resume is not None and (client is not None or executor is not None):
        raise ValueError("resume= works with the local executor (not with client= or executor=)")
    store = None if resume is None else _checkpoint_store(resume, mech, declared, relation, options)
    if executor is not None:
        return executor, False, store
    return _executor(mech, options, client, progress, store), True, store


def close_sampler(executor, store) -> None:
    """Close ``executor`` (when given: the one [`open_sampler`][dpaudit.auditor.run.samplers.open_sampler] built) and ``store``."""
    if executor is not None:
        executor.close()
    if store is not None:
        store.close()


def resume_evidence(store, executor) -> dict:
    """The evidence of a resumed audit: its file, plan key and the samples read back."""
    if store is None:
        return {}
    resumed = int(getattr(executor, "resumed", 0))
    return {"resume": {"file": store.path, "plan": store.key, "samples_read": resumed}}
