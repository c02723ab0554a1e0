"""The pytest plugin's false alarms: seeded runs of correct mechanisms, counted as pytest counts them.

Run: python benchmarks/bench_plugin_flakes.py [--runs 200] [--budget 200000] [--alpha 1e-6]

Issue 46, item 3 ("0 red runs in 200 seeded runs on correct mechanisms"). One pytest session, in
a fresh temporary directory with the plugin loaded as users load it (the ``pytest11`` entry
point) and its cache off, runs ``--runs`` tests. Each audits one correct mechanism with the
``dpaudit_audit`` fixture at its own seed, cycling through the mechanisms below, at the
plugin's default false-alarm probability per audit (``--dpaudit-alpha``) and default handling of
INCONCLUSIVE (skip). Every mechanism is correct, so a failed test is a false alarm: the plugin
promises at most ``runs × alpha`` of them in expectation (its terminal summary prints that
union bound). The table gives passed / skipped / failed per mechanism and the session's seconds.

The mechanisms are audited on one given pair each (``restrict=True``), as a maintainer's CI
test would, so a run takes about a second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: (name, constructor source, pair) of each correct mechanism the tests cycle through.
MECHANISMS = (
    ("PermuteAndFlip(epsilon=1)", "M.PermuteAndFlip(epsilon=1.0)", ([2, 1, 0], [3, 1, 0])),
    ("GumbelTopK(k=2, epsilon=0.5)", "M.GumbelTopK(k=2, epsilon=0.5)", ([3, 2, 1], [4, 2, 1])),
    ("ReportNoisyMax(epsilon=1)", "M.ReportNoisyMax(epsilon=1.0)", ([2, 1, 0], [3, 1, 0])),
)

_TEST_FILE = """
import pytest
import mechanisms as M

CASES = {cases}
RUNS = {runs}


@pytest.mark.parametrize("run", range(RUNS))
def test_correct_mechanism(dpaudit_audit, run):
    name, build, pair = CASES[run % len(CASES)]
    dpaudit_audit(eval(build), pairs=[pair], restrict=True, seed=run, samples={budget})
"""


def _session(runs: int, budget: int, alpha: float, folder: Path) -> tuple[dict, float]:
    cases = [[name, build, [list(pair[0]), list(pair[1])]] for name, build, pair in MECHANISMS]
    (folder / "test_flakes.py").write_text(
        _TEST_FILE.format(cases=repr(cases), runs=runs, budget=budget), encoding="utf-8"
    )
    report = folder / "report.json"
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        f"--dpaudit-alpha={alpha}", "--dpaudit-no-cache", "--junit-xml", str(report),
        "test_flakes.py",
    ]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(command, cwd=folder, check=False, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    return _outcomes(report, runs), seconds


def _outcomes(report: Path, runs: int) -> dict:
    import xml.etree.ElementTree as ET

    counts = {name: {"passed": 0, "skipped": 0, "failed": 0} for name, _, _ in MECHANISMS}
    for case in ET.parse(report).getroot().iter("testcase"):
        run = int(case.get("name", "").rsplit("[", 1)[-1].rstrip("]"))
        name = MECHANISMS[run % len(MECHANISMS)][0]
        if case.find("failure") is not None or case.find("error") is not None:
            counts[name]["failed"] += 1
        elif case.find("skipped") is not None:
            counts[name]["skipped"] += 1
        else:
            counts[name]["passed"] += 1
    seen = sum(sum(c.values()) for c in counts.values())
    if seen != runs:
        raise SystemExit(f"the session reported {seen} tests, expected {runs}")
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--budget", type=int, default=200_000, help="samples per audit")
    parser.add_argument("--alpha", type=float, default=1e-6, help="--dpaudit-alpha")
    parser.add_argument("--json", metavar="FILE", help="also write the counts as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        counts, seconds = _session(args.runs, args.budget, args.alpha, Path(folder))
    print(f"{args.runs} seeded runs, {args.budget:,} samples each, --dpaudit-alpha {args.alpha:g}")
    print(f"{'mechanism':32} {'passed':>7} {'skipped':>8} {'failed':>7}")
    for name, c in counts.items():
        print(f"{name:32} {c['passed']:>7} {c['skipped']:>8} {c['failed']:>7}")
    failed = sum(c["failed"] for c in counts.values())
    print(
        f"failed (false alarms): {failed} of {args.runs}; the plugin's union bound "
        f"{args.runs * args.alpha:g}; session {seconds:.0f} s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": counts, "seconds": seconds}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
