"""Golden audit results: a handful of audits whose ``to_dict()`` must not change by accident.

Each case is one way into the auditor (a selection mechanism, a threshold mechanism, a
value release, a catalog violation, a plain callable, an interactive session, and an
offline plan simulated and read back). A refactor keeps their JSON identical (floats within
the stated tolerance of ``tests/test_golden.py``); a change of behaviour that moves them is its
own commit that rewrites them with

    python tests/golden/cases.py --write

and says why. Fields that depend on the clock or the installation (``seconds``, the date,
versions, and the offline case's temporary folder and the hash of its dated plan.json) are
left out.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

import dpaudit
import mechanisms as M
from dpaudit.auditor.results.result import AuditResult
from dpaudit.catalog import catalog_entry

FOLDER = Path(__file__).resolve().parent
#: Evidence entries that depend on when, where and with what the audit ran.
VOLATILE_EVIDENCE = ("date", "versions")


def _stable(result: AuditResult) -> dict:
    data = result.to_dict()
    data.pop("seconds")
    evidence = dict(data["evidence"])
    for key in VOLATILE_EVIDENCE:
        evidence.pop(key, None)
    if "offline" in evidence:  # a temporary folder, and plan.json records when it was written
        volatile = ("directory", "plan_sha256")
        evidence["offline"] = {k: v for k, v in evidence["offline"].items() if k not in volatile}
    data["evidence"] = evidence
    return data


def _coin(counts, rng):
    # Randomised response on "is item 0 the largest?": a plain per-call callable.
    counts = np.asarray(counts)
    top = int(counts.argmax())
    return (top,) if rng.random() < 0.75 else ((top + 1) % len(counts),)


def _offline() -> AuditResult:
    from dpaudit.auditor.offline import audit_from_samples
    from dpaudit.cli import main

    with tempfile.TemporaryDirectory() as folder:
        plan = Path(folder) / "plan"
        argv = [
            "plan",
            "GumbelTopK",
            "--k",
            "2",
            "--epsilon",
            "1",
            "--samples",
            "40000",
            "--max-pairs",
            "8",
            "--seed",
            "3",
            "--out",
            str(plan),
            "--simulate",
            "csv",
        ]
        if main(argv) != 0:
            raise RuntimeError("dpaudit plan --simulate failed")
        return audit_from_samples(plan)


CASES = {
    "selection_limit_domain": lambda: dpaudit.audit(
        M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3), samples=200_000, seed=1
    ),
    "threshold_top_stable": lambda: dpaudit.audit(
        M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3), samples=200_000, seed=2
    ),
    "value_noisy_counts": lambda: dpaudit.audit(
        M.NoisyCountsRelease(M.ReportNoisyMax(epsilon=1.0), epsilon_counts=0.5),
        samples=200_000,
        seed=3,
    ),
    "catalog_joint_no_half": lambda: dpaudit.audit(
        catalog_entry("joint-no-half").build(), samples=200_000, seed=4
    ),
    "callable_randomised_response": lambda: dpaudit.audit(
        _coin, claim=(1.2, 0.0), width=1, samples=60_000, seed=5, domain_size=3
    ),
    "session_multi_limit_domain": lambda: dpaudit.audit_session(
        lambda: M.MultiLimitDomain(total_k=1, max_queries=3, epsilon=1.0, delta=1e-6),
        M.RepeatQuery(k=1, kbar=1),
        samples=100_000,
        seed=6,
    ),
    "offline_gumbel_simulated": _offline,
}


def stable_result(name: str) -> dict:
    """The case's result as JSON data, without the fields of the clock and the installation."""
    return json.loads(json.dumps(_stable(CASES[name]())))


def render(name: str) -> str:
    """The case's stable JSON, as stored in ``tests/golden/<name>.json``."""
    return json.dumps(stable_result(name), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def path(name: str) -> Path:
    return FOLDER / f"{name}.json"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/golden/cases.py --write   (rewrites every golden result)")
    for case in CASES:
        path(case).write_text(render(case), encoding="utf-8")
        print(f"wrote {path(case)}")
