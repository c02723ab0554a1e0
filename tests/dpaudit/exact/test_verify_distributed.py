"""Exhaustive verify in blocks: on a Dask LocalCluster, and resumed from a checkpoint file."""

import subprocess
import sys
import textwrap

import pytest

import mechanisms as M
from dpaudit.exact import verify

MECH = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)


def _same(a, b):
    assert (a.holds, a.violations, a.pairs, a.laws) == (b.holds, b.violations, b.pairs, b.laws)
    assert a.delta_at_epsilon == b.delta_at_epsilon and a.epsilon_at_delta == b.epsilon_at_delta
    assert a.delta_pair == b.delta_pair and a.epsilon_pair == b.epsilon_pair
    assert a.delta_event == b.delta_event


def test_verify_on_a_local_cluster_equals_one_pass():
    distributed = pytest.importorskip("dask.distributed")
    from dpaudit.auditor.sources.dask_executor import local_cluster_client

    one_pass = verify(MECH, d=4, max_count=3, progress=False)
    client = local_cluster_client(2)
    try:
        spread = verify(MECH, d=4, max_count=3, progress=False, client=client, block=500)
    finally:
        client.close()
        client.cluster.close()
    assert isinstance(distributed.Client, type)
    _same(spread, one_pass)


SCRIPT = textwrap.dedent("""
    import os, sys
    import mechanisms as M
    from dpaudit import checkpoint
    from dpaudit.exact import verify
    original, puts = checkpoint.BlockStore.put, [0]

    def dying(self, start, text):
        original(self, start, text)
        puts[0] += 1
        if puts[0] == int(sys.argv[2]):
            os._exit(9)

    checkpoint.BlockStore.put = dying
    verify(M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3), d=4, max_count=3,
           progress=False, resume=sys.argv[1], block=300)
""")


def test_verify_killed_midway_resumes_to_the_one_pass_result(tmp_path):
    store = tmp_path / "verify.duckdb"
    blocks = -(-verify(MECH, d=4, max_count=3, progress=False).pairs // 300)
    killed = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(store), str(blocks // 2)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == 9
    resumed = verify(MECH, d=4, max_count=3, progress=False, resume=store, block=300)
    _same(resumed, verify(MECH, d=4, max_count=3, progress=False))
    with pytest.raises(ValueError, match="another audit plan"):
        verify(MECH, d=4, max_count=2, progress=False, resume=store, block=300)


def test_cli_verify_on_a_local_cluster_with_resume(tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    from dpaudit.cli import main

    argv = [
        "verify",
        "LimitDomain",
        "--k",
        "2",
        "--kbar",
        "3",
        "--epsilon",
        "1",
        "--delta",
        "1e-3",
        "--d",
        "3",
        "--max-count",
        "2",
        "--dask",
        "local:2",
        "--resume",
        str(tmp_path / "v.duckdb"),
        "--block",
        "50",
        "--no-progress",
    ]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0  # every block now comes from the file
    assert capsys.readouterr().out == first and "HOLDS" in first
    assert main([a if a != "local:2" else "remote" for a in argv]) == 2
