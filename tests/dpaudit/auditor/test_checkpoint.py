"""Checkpoint and resume: a killed audit, resumed from its DuckDB file, gives the same result."""

import subprocess
import sys
import textwrap

import pytest

import dpaudit
import mechanisms as M
from dpaudit.cli import main

OPTIONS = {"seed": 2, "samples": 150_000, "chunk": 10_000}
# The child runs the same audit as the test (OPTIONS written in), dying at a given chunk.
SCRIPT = textwrap.dedent(f"""
    import os, sys
    import dpaudit, mechanisms as M
    from dpaudit.auditor.sources import sampling
    calls, die_at = [0], int(sys.argv[2])
    original = sampling._sample_chunk

    def dying(*args):
        calls[0] += 1
        if calls[0] == die_at:
            os._exit(9)  # killed: no clean-up, no flush, like SIGKILL
        return original(*args)

    sampling._sample_chunk = dying
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    result = dpaudit.audit(mech, resume=sys.argv[1], **{OPTIONS!r})
""")


def test_an_audit_killed_halfway_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch):
    from dpaudit.auditor.sources import sampling

    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    store = tmp_path / "audit.duckdb"
    # The uninterrupted run, counting the chunks it samples (the child dies halfway through).
    calls = [0]
    original = sampling._sample_chunk

    def counting(*args):
        calls[0] += 1
        return original(*args)

    monkeypatch.setattr(sampling, "_sample_chunk", counting)
    uninterrupted = dpaudit.audit(mech, **OPTIONS)
    monkeypatch.undo()
    chunks = calls[0]
    assert chunks >= 4
    killed = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(store), str(chunks // 2)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == 9
    resumed = dpaudit.audit(mech, resume=store, **OPTIONS)
    assert resumed.witnesses == uninterrupted.witnesses
    assert resumed.samples == uninterrupted.samples
    # The first half of the chunks (screening's many small ones) came from the file.
    read = resumed.evidence["resume"]["samples_read"]
    assert 0 < read < resumed.samples


def test_a_file_from_another_plan_is_refused(tmp_path, capsys):
    store = tmp_path / "audit.duckdb"
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    dpaudit.audit(mech, resume=store, samples=20_000, seed=1)
    with pytest.raises(ValueError, match=r"another audit plan.*seed"):
        dpaudit.audit(mech, resume=store, samples=20_000, seed=2)
    status = main(["audit", "--resume", str(store), "--samples", "20000", "--no-progress"])
    assert status == 2 and "another audit plan" in capsys.readouterr().err


class _StopsAt(M.GumbelTopK):
    """Raises KeyboardInterrupt (Ctrl-C) on the sampling call ``at`` of every audit."""

    at = 6

    def sample(self, counts, size, rng):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return super().sample(counts, size, rng)


def test_an_interrupted_audit_says_how_to_finish_the_same_test(tmp_path):
    store = tmp_path / "audit.duckdb"
    options = {"seed": 1, "samples": 20_000, "pairs": [((2, 1, 0), (1, 1, 0))], "restrict": True}
    stored = dpaudit.audit(_StopsAt(k=1, epsilon=1.0), resume=store, **options)
    assert stored.interrupted and f"--resume {store} continues it" in stored.explanation
    assert "meaning:" in str(stored) and "no α spent again" in str(stored)
    plain = dpaudit.audit(_StopsAt(k=1, epsilon=1.0), **options)
    assert "--resume FILE (resume= in Python) keeps the chunks drawn" in plain.explanation


def test_a_larger_budget_is_another_plan_not_a_continuation(tmp_path):
    # What the INCONCLUSIVE advice says: --resume finishes one plan, budget included.
    store = tmp_path / "audit.duckdb"
    mech = M.GumbelTopK(k=1, epsilon=0.05)
    options = {"pairs": [((2, 1, 0), (1, 1, 0))], "restrict": True, "seed": 0}
    few = dpaudit.audit(mech, resume=store, samples=20_000, **options)
    assert few.verdict == "inconclusive"
    assert "a second test at level α = 0.05" in few.explanation and "2α = 0.1" in few.explanation
    with pytest.raises(ValueError, match=r"another audit plan \(it differs in: samples\)"):
        dpaudit.audit(mech, resume=store, samples=40_000, **options)
