"""Audits on a Dask LocalCluster (2 worker processes): identical to in-process, robust."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import dpaudit
import mechanisms as M

distributed = pytest.importorskip("dask.distributed")  # the `dask` extra (in `test`)


@pytest.fixture(scope="module")
def client():
    from dpaudit.auditor.sources.dask_executor import local_cluster_client

    client = local_cluster_client(2)
    yield client
    client.close()
    client.cluster.close()


def test_same_seed_same_result_on_the_cluster(client):
    mech = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    local = dpaudit.audit(mech, seed=11, samples=200_000, chunk=20_000)
    remote = dpaudit.audit(mech, seed=11, samples=200_000, chunk=20_000, client=client)
    assert remote.witnesses == local.witnesses and remote.samples == local.samples
    assert remote.verdict == local.verdict and remote.epsilon_lower == local.epsilon_lower
    assert remote.evidence["engine"].startswith("dask (2 workers")


class Failing(M.TopKMechanism):
    """Raises inside sample(), as a broken mechanism would on a worker."""

    width = 1
    claim = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())

    def sample(self, counts, size, rng):
        raise ArithmeticError("the mechanism's own error")


def test_a_mechanism_error_on_a_worker_stops_the_run_with_that_error(client):
    with pytest.raises(ArithmeticError, match="the mechanism's own error"):
        dpaudit.audit(Failing(), samples=20_000, client=client)


class Gated(M.TopKMechanism):
    """Uniform-ish over the top two items; with a ``gate`` folder, every chunk announces itself
    (a file ``started-<pid>``) and then waits for ``gate/go``, so a test can act mid-run on a
    signal rather than after a guessed delay."""

    width = 1
    claim = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())

    def __init__(self, gate=None):
        self.gate = gate

    def sample(self, counts, size, rng):
        if self.gate is not None:
            (self.gate / f"started-{os.getpid()}").touch()
            deadline = time.monotonic() + 600  # bounds a broken run only
            while not (self.gate / "go").exists():
                assert time.monotonic() < deadline, "the test never opened the gate"
                time.sleep(0.01)
        counts = np.asarray(counts)
        return np.where(rng.random((size, 1)) < 0.5 + 0.01 * counts[:1], 0, 1).astype(np.int64)


def test_a_worker_lost_mid_run_is_survived_with_the_same_result(client, tmp_path):
    kwargs = {"seed": 3, "samples": 40_000, "chunk": 1_000, "domain_size": 3, "search": False}
    local = dpaudit.audit(Gated(), **kwargs)
    # Both workers must be up before the audit broadcasts its mechanism to them: a worker
    # that an earlier test lost may still be restarting, and the copy on the one worker
    # killed below would then be the only one.
    client.wait_for_workers(2, timeout=600)
    pids = list(client.run(os.getpid).values())

    def kill_one_then_open_the_gate():
        # Every chunk waits at the gate, so the audit is certainly running when a worker dies.
        deadline = time.monotonic() + 600
        while not any(tmp_path.glob("started-*")):
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        os.kill(pids[0], signal.SIGKILL)
        (tmp_path / "go").touch()

    killer = threading.Thread(target=kill_one_then_open_the_gate)
    killer.start()
    remote = dpaudit.audit(Gated(tmp_path), client=client, **kwargs)
    killer.join()
    assert any(tmp_path.glob("started-*"))  # the audit reached the workers before the kill
    assert remote.witnesses == local.witnesses and remote.samples == local.samples
    client.wait_for_workers(2, timeout=600)  # the nanny restarts the lost worker
    assert pids[0] not in client.run(os.getpid).values()
