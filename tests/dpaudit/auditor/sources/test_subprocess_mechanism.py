"""Mechanisms outside Python: a child process (Perl here) spoken to in JSON lines."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.sources.subprocess_mechanism import (
    _CHILDREN,
    ChildMechanismError,
    SubprocessMechanism,
)
from dpaudit.cli import main

CHILD = Path(__file__).resolve().parents[3] / "children" / "noisy_max.pl"
CLAIM = M.PrivacyClaim(1.0, 0.0, M.BoundedChange(1))
pytestmark = pytest.mark.skipif(shutil.which("perl") is None, reason="perl is part of the image")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_perl_report_noisy_max_is_audited_end_to_end(capsys):
    # Correct (Laplace 2/ε): passes; half the noise (Laplace 1/ε, true ε = 2): flagged.
    argv = [
        "audit",
        "--claim",
        "1,0",
        "--width",
        "1",
        "--relation",
        "bounded-change:1",
        "--domain-size",
        "5",
        "--samples",
        "400000",
        "--no-progress",
    ]
    assert main([*argv, "--command", f"perl {CHILD}"]) == 0
    assert main([*argv, "--command", f"perl {CHILD} 1"]) == 1
    assert "VIOLATION" in capsys.readouterr().out


def test_outcomes_that_are_not_integer_ids_are_refused(tmp_path):
    # A child that answers the right number of outcomes, but with a float id.
    child = tmp_path / "floats.py"
    child.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    n = json.loads(line)['size']\n"
        "    print(json.dumps({'outcomes': [[0.5]] * n}), flush=True)\n"
    )
    mech = SubprocessMechanism([sys.executable, str(child)], CLAIM, 1)
    with pytest.raises(ChildMechanismError, match="integer ids"):
        mech.sample([1, 0], 3, np.random.default_rng(0))


def test_same_seed_same_requests_same_samples():
    mech = SubprocessMechanism(f"perl {CHILD}", CLAIM, 1)
    a = mech.sample([3, 2, 1], 200, np.random.default_rng(5))
    b = mech.sample([3, 2, 1], 200, np.random.default_rng(5))
    mech.close()
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "script, message",
    [
        ("read line; echo 'boom: bad histogram' >&2; exit 3", "exited without answering"),
        ("read line; echo not json", "not a JSON line"),
        ("read line; echo '{\"outcomes\": [[0.5]]}'", 'not {"outcomes"'),
        ('read line; echo \'{"error": "no budget"}\'', "no budget"),
    ],
)
def test_a_failing_child_is_a_clear_error_with_its_stderr(script, message, tmp_path, capsys):
    child = tmp_path / "child.sh"
    child.write_text(script + "\n")
    status = main(
        [
            "audit",
            "--command",
            f"sh {child}",
            "--claim",
            "1,0",
            "--width",
            "1",
            "--samples",
            "20000",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    # A crashed or confused child is "could not run" (4), never a violation or a usage error.
    assert status == 4 and message in err and err.count("\n") == 1
    if "boom" in script:
        assert "boom: bad histogram" in err  # the child's own stderr is quoted


def _wait_for_file(path, process, limit=300.0):
    """Wait until the child has written ``path`` (a readiness signal, not a time estimate).

    ``limit`` only bounds a broken run; a loaded machine that is merely slow waits longer,
    it does not fail. A step of 0.05 s keeps the poll cheap.
    """
    deadline = time.monotonic() + limit
    while not (path.exists() and path.read_text().strip()):
        assert process is None or process.poll() is None, "the audit process ended early"
        assert time.monotonic() < deadline, f"no readiness signal in {path} within {limit:g} s"
        time.sleep(0.05)
    return int(path.read_text().split()[0])


def _gone(pid):
    # A killed child that was reaped, or a zombie whose parent exited, is no longer alive.
    if not _alive(pid):
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z")


def test_a_hanging_child_times_out_and_is_killed(tmp_path):
    # The child writes its own pid once it has the request, then hangs: ``exec`` makes the
    # pid the hanging process itself, so the check below names exactly this child.
    ready = tmp_path / "ready"
    mech = SubprocessMechanism(
        f"sh -c 'read line; echo $$ > {ready}; exec sleep 300'", CLAIM, 1, timeout=1.0
    )
    with pytest.raises(ChildMechanismError, match="no answer within 1 s"):
        mech.sample([1, 0], 10, np.random.default_rng(0))
    assert not _CHILDREN  # forgotten, and ...
    if ready.exists():  # on a very slow machine the time-out may come before the pid is written
        assert _gone(int(ready.read_text()))  # ... no orphan left (its process group is killed)


def test_ctrl_c_kills_the_child(tmp_path):
    # The audit process gets SIGINT while the child works: the audit stops INCONCLUSIVE, no
    # orphan. SIGINT is sent only once the child has read a request (it writes its pid to
    # ``ready``), so the audit is inside sampling whatever the load on the machine. The
    # script first restores Python's Ctrl-C handler: a suite started in the background
    # (``pytest &`` in a script) inherits SIGINT ignored, and the audit would never see it.
    ready = tmp_path / "ready"
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import dpaudit, mechanisms as M\n"
        "from dpaudit.auditor.sources.subprocess_mechanism import SubprocessMechanism\n"
        f"m = SubprocessMechanism(\"sh -c 'read line; echo $$ > {ready}; exec sleep 300'\", "
        "M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser()), 1, timeout=600)\n"
        "r = dpaudit.audit(m, samples=20000, domain_size=2)\n"
        "print(r.verdict)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        child = _wait_for_file(ready, process)
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0 and "inconclusive" in out
    assert _gone(child)


def test_a_child_releasing_values_is_audited_end_to_end(capsys):
    # The Perl report-noisy-max that also releases its noisy maximum (answers carry
    # "values"): DP-Sniper's broken variant, flagged through the value encoders.
    status = main(
        [
            "audit",
            "--command",
            f"perl {CHILD} 2 value",
            "--claim",
            "1,0",
            "--width",
            "1",
            "--values",
            "1",
            "--relation",
            "bounded-change:1",
            "--samples",
            "200000",
            "--domain-size",
            "5",
            "--no-progress",
            "--json",
            "-",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert status == 1 and data["verdict"] == "violation", data["explanation"]


def test_a_child_that_forgets_its_values_is_a_one_line_error(capsys):
    status = main(
        [
            "audit",
            "--command",
            f"perl {CHILD} 2",
            "--claim",
            "1,0",
            "--width",
            "1",
            "--values",
            "1",
            "--samples",
            "20000",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert status == 4 and "values" in err and len(err.splitlines()) == 1


def test_a_spec_recorded_under_the_former_module_path_is_rebuilt_and_rerun_compares_equal():
    # Result files name the class's module; the module moved into sources/, old files still load.
    from dpaudit.provenance import at_present_paths, mechanism_spec, rebuild_mechanism

    mechanism = SubprocessMechanism(("perl", str(CHILD)), CLAIM, 3)
    spec = mechanism_spec(mechanism)
    assert spec["class"] == "dpaudit.auditor.sources.subprocess_mechanism:SubprocessMechanism"
    recorded = dict(spec, **{"class": "dpaudit.auditor.subprocess_mechanism:SubprocessMechanism"})
    rebuilt = rebuild_mechanism(recorded)
    assert type(rebuilt) is SubprocessMechanism
    assert (rebuilt.command, rebuilt.max_width) == (mechanism.command, 3)
    assert at_present_paths({"evidence": {"mechanism_spec": recorded}}) == {
        "evidence": {"mechanism_spec": spec}
    }
