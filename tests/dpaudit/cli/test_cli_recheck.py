"""dpaudit recheck of the user's own code: module:attr and --command results rebuilt."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from forgeries import run_cli

import dpaudit
from dpaudit.recheck import recheck
from dpaudit.rerun import rerun

MODULE = '''
import numpy as np


def noisy_max(counts, rng):
    """Report noisy max with Laplace(2/epsilon) noise, epsilon = 1 (bounded change)."""
    noisy = np.asarray(counts) + rng.laplace(0.0, 2.0, size=len(counts))
    return (int(np.argmax(noisy)),)
'''
CHILD = Path(__file__).resolve().parents[2] / "children" / "noisy_max.pl"
COMMON = ["--claim", "1,0", "--width", "1", "--relation", "bounded-change:1", "--domain-size", "4"]


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "recheck_user_mod.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_module_attr_result_is_rechecked_and_rerun_from_the_cli(user_module):
    argv = ["audit", "recheck_user_mod:noisy_max", *COMMON, "--samples", "20000", "--seed", "2"]
    status, _ = run_cli([*argv, "--json", "r.json", "--no-progress"])
    assert status in (0, 3)
    source = json.loads((user_module / "r.json").read_text())["evidence"]["mechanism_source"]
    assert source["target"] == "recheck_user_mod:noisy_max" and len(source["sha256"]) == 64
    status, line = run_cli(["recheck", "r.json", "--seed", "5"])
    assert status == 0, line
    assert run_cli(["recheck", "--rerun", "r.json"])[0] == 0
    # The source changed since the audit: could not run (4), with both digests named.
    (user_module / "recheck_user_mod.py").write_text(MODULE.replace("2.0", "1.0"))
    status, line = run_cli(["recheck", "r.json"])
    assert status == 4
    assert "recheck_user_mod.py changed since the audit (sha256" in line


def test_recheck_accepts_a_plain_callable_as_audit_does():
    def coin(counts, rng):
        top = int(np.argmax(counts))
        return (top,) if rng.random() < 0.75 else ((top + 1) % len(counts),)

    result = dpaudit.audit(coin, claim=(1.2, 0.0), width=1, samples=30_000, seed=5, domain_size=3)
    outcome = recheck(result, mechanism=coin, seed=3)
    assert outcome.agrees and {c.route for c in outcome.checks} == {"sampled"}, str(outcome)
    assert rerun(result, mechanism=coin).agrees
    forged = json.loads(result.to_json())
    forged["claim"]["epsilon"] = 5.0
    assert "claim: the file records (5, 0)" in recheck(forged, mechanism=coin, seed=3).first_problem


@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is part of the image")
def test_a_command_result_runs_the_child_again_only_when_allowed(tmp_path):
    path = tmp_path / "c.json"
    argv = ["audit", "--command", f"perl {CHILD}", *COMMON, "--samples", "20000"]
    assert run_cli([*argv, "--json", str(path), "--no-progress"])[0] in (0, 3)
    status, line = run_cli(["recheck", str(path)])
    assert status == 4 and "--allow-command" in line
    assert run_cli(["recheck", str(path), "--allow-command", "--seed", "1"])[0] == 0
    assert run_cli(["recheck", "--rerun", str(path), "--allow-command"])[0] == 0
