"""An audit is the same for a seed on every CPU numpy dispatches to.

numpy picks its loops by CPU (AVX2, AVX-512, ...): the loops agree on a correctly rounded
operation but not on the order of ties in its default (introsort / SIMD) sort, nor on the last
digit of its vectorized ``log`` and ``exp``. A choice that reads either would make one seed give
two audits, a PASS on one machine and an INCONCLUSIVE on another (the README's main job did,
until selection's argsort became stable). Here the same audit runs in two processes, one with
numpy's AVX-512 loops switched off (``NPY_DISABLE_CPU_FEATURES``), and the two result files
must agree: counts, witnesses and verdicts exactly, floats to the golden files' 1e-9 (the
grey box's importance weights go through ``exp``); on a CPU without AVX-512 there is nothing to compare and the test is skipped.
"""

import json
import os
import subprocess
import sys

import pytest
from test_golden import differences

#: numpy's AVX-512 feature groups; switching off the lowest switches off the loops built on it.
AVX512 = "AVX512_SPR AVX512_ICL X86_V4"
#: Fields that differ between two runs of the same audit by nature, not by path.
RUN_FIELDS = ("seconds", "date", "command", "versions", "engine")


def _numpy_runs_avx512() -> bool:
    from numpy._core._multiarray_umath import __cpu_features__

    return bool(__cpu_features__.get("X86_V4", False))


def _audit(env_extra: dict) -> dict:
    env = {**os.environ, **env_extra}
    argv = ["-m", "dpaudit", "audit", "--no-progress", "--samples", "6000000", "--json", "-"]
    run = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True)
    assert run.returncode in (0, 1, 3), run.stderr[-2000:]
    result = json.loads(run.stdout)
    for field in RUN_FIELDS:
        result.pop(field, None)
        result.get("evidence", {}).pop(field, None)
    return result


@pytest.mark.slow
@pytest.mark.skipif(not _numpy_runs_avx512(), reason="numpy runs no AVX-512 loops on this CPU")
def test_the_default_audit_is_the_same_with_and_without_avx512():
    with_avx512 = _audit({})
    without = _audit({"NPY_DISABLE_CPU_FEATURES": AVX512})
    assert differences(with_avx512, without) == []
