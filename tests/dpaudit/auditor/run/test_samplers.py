"""``dpaudit.auditor.run.samplers``: which executor an audit draws with, and its resume store."""

import numpy as np
import pytest

from dpaudit.auditor.planning.options import AuditOptions
from dpaudit.auditor.run.samplers import close_sampler, open_sampler, resume_evidence
from dpaudit.auditor.sources.executors import LocalExecutor
from mechanisms import GumbelTopK

MECH = GumbelTopK(k=2, epsilon=1.0)
OPTIONS = AuditOptions(samples=20_000, seed=3, chunk=200)
HISTOGRAMS = [np.array([4, 2, 0]), np.array([3, 3, 1])]


def _seeds():
    """Fresh seed streams (a SeedSequence counts the children it spawned: never reuse one)."""
    return [np.random.SeedSequence(3, spawn_key=(0, 0, i)) for i in range(2)]


def _open(resume=None, executor=None, client=None, options=OPTIONS):
    claim = MECH.claim
    return open_sampler(MECH, claim, claim.neighbours, options, executor, client, resume, False)


def test_without_an_executor_a_local_one_is_built_and_owned():
    executor, owned, store = _open()
    assert isinstance(executor, LocalExecutor) and owned and store is None
    assert executor.chunk == 200
    assert resume_evidence(store, executor) == {}
    close_sampler(executor, store)


def test_the_callers_executor_is_used_and_not_owned():
    mine = LocalExecutor(MECH)
    executor, owned, store = _open(executor=mine)
    assert executor is mine and not owned and store is None
    mine.close()


@pytest.mark.parametrize("given", [{"executor": LocalExecutor(MECH)}, {"client": object()}])
def test_resume_works_only_with_the_local_executor(tmp_path, given):
    with pytest.raises(
        ValueError, match=r"resume= works with the local executor \(not with client= or executor=\)"
    ):
        _open(resume=str(tmp_path / "run.duckdb"), **given)


def test_a_resumed_run_reads_back_what_the_first_stored(tmp_path):
    path = str(tmp_path / "run.duckdb")
    executor, _, store = _open(resume=path)
    first = executor.draw(HISTOGRAMS, 600, _seeds())
    close_sampler(executor, store)

    executor, _, store = _open(resume=path)
    again = executor.draw(HISTOGRAMS, 600, _seeds())
    evidence = resume_evidence(store, executor)
    close_sampler(executor, store)
    assert again == first
    assert evidence == {"resume": {"file": path, "plan": store.key, "samples_read": 1200}}


def test_a_file_of_another_plan_is_refused_naming_what_differs(tmp_path):
    # The store is keyed by the plan (mechanism, claim, relation, options): another seed is
    # another plan, and its chunks are never mixed in.
    path = str(tmp_path / "run.duckdb")
    executor, _, store = _open(resume=path)
    executor.draw(HISTOGRAMS, 600, _seeds())
    close_sampler(executor, store)
    other = AuditOptions(samples=20_000, seed=4, chunk=200)
    with pytest.raises(ValueError, match=r"holds another audit plan \(it differs in: seed\)"):
        _open(resume=path, options=other)


def test_close_sampler_closes_what_it_is_given():
    closed = []

    class Closes:
        def __init__(self, name):
            self.name = name

        def close(self):
            closed.append(self.name)

    close_sampler(Closes("executor"), Closes("store"))
    close_sampler(None, None)
    assert closed == ["executor", "store"]
