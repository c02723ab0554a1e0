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
    from dpaudit.auditor.dask_executor import local_cluster_client

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


class Slow(M.TopKMechanism):
    """Uniform over the top two items, 20 ms per chunk: a run long enough to lose a worker in."""

    width = 1
    claim = M.PrivacyClaim(1.0, 0.0, M.AddRemoveUser())

    def sample(self, counts, size, rng):
        time.sleep(0.02)
        counts = np.asarray(counts)
        return np.where(rng.random((size, 1)) < 0.5 + 0.01 * counts[:1], 0, 1).astype(np.int64)


def test_a_worker_lost_mid_run_is_survived_with_the_same_result(client):
    mech = Slow()
    kwargs = {"seed": 3, "samples": 40_000, "chunk": 1_000, "domain_size": 3, "search": False}
    local = dpaudit.audit(mech, **kwargs)
    pids = list(client.run(os.getpid).values())

    killed_at = []

    def kill_one():
        time.sleep(1.0)
        os.kill(pids[0], signal.SIGKILL)
        killed_at.append(time.monotonic())

    killer = threading.Thread(target=kill_one)
    killer.start()
    remote = dpaudit.audit(mech, client=client, **kwargs)
    finished_at = time.monotonic()
    killer.join()
    assert killed_at and killed_at[0] < finished_at  # the worker died while the audit ran
    assert remote.witnesses == local.witnesses and remote.samples == local.samples
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the lost worker
    assert pids[0] not in client.run(os.getpid).values()
