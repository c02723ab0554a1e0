"""The catalog from the CLI: ``dpaudit audit catalog:NAME --seed S --budget 1e7`` per seed.

The full sweep of tests/dpaudit/test_catalog.py::test_every_entry_flagged_from_the_cli,
whose requirement is that the command exits 1 (a VIOLATION, with a bound above the claim)
on every seed 0-4 for every entry of :data:`dpaudit.catalog.CATALOG`; the slow step runs
seed 0 only. For every entry and seed, the same command (the entry's audit options, the
budget 1e7 of the test, every other option at its default) through ``dpaudit.cli.main``:
exit status, verdict, bounds, samples and seconds. The last lines count the entries flagged
on every seed, and name the others. Seconds are wall-clock on a shared machine.

Usage: python benchmarks/bench_catalog.py [--seeds 0 1 2 3 4] [--only NAME ...]
                                          [--budget 1e7]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time

from dpaudit.catalog import CATALOG
from dpaudit.cli import main as cli_main

_SHORT = {"violation": "VIOL", "passed": "PASS", "inconclusive": "INC"}


def _flagged(entry, status: int, data: dict) -> bool:
    """The test's assertion: exit 1, a VIOLATION, and a bound above the claim."""
    claim = entry.build().claim
    above = (
        data["epsilon_lower"] == "inf"
        or data["epsilon_lower"] > claim.epsilon
        or data["delta_lower"] > claim.delta
    )
    return status == 1 and data["verdict"] == "violation" and above


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--only", nargs="+", default=None, help="entry names to run")
    parser.add_argument("--budget", default="1e7", help="the --budget of the command")
    args = parser.parse_args(argv)
    by_name = {e.name: e for e in CATALOG}
    unknown = [n for n in args.only or () if n not in by_name]
    if unknown:
        parser.error(f"--only: no catalog entry {', '.join(unknown)}")
    entries = CATALOG if args.only is None else [by_name[n] for n in args.only]
    header = (
        f"{'entry':40s} seed exit {'verdict':7s} {'ε lower':>8s} {'δ lower':>9s} "
        f"{'samples':>9s} {'s':>6s}"
    )
    print(header)
    print("-" * len(header))
    missed: list[str] = []
    total = 0.0
    for entry in entries:
        every = True
        for seed in args.seeds:
            argv_ = ["audit", f"catalog:{entry.name}", "--seed", str(seed), "--budget", args.budget]
            out, err = io.StringIO(), io.StringIO()
            started = time.perf_counter()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = cli_main([*argv_, "--no-progress", "--json", "-"])
            seconds = time.perf_counter() - started
            if status not in (0, 1):  # an error: its one line, then stop
                raise SystemExit(f"{entry.name} seed {seed}: {err.getvalue().strip()}")
            total += seconds
            data = json.loads(out.getvalue())
            every &= _flagged(entry, status, data)
            print(
                f"{entry.name:40s} {seed:4d} {status:4d} {_SHORT[data['verdict']]:7s} "
                f"{data['epsilon_lower']!s:>8.8s} {data['delta_lower']!s:>9.9s} "
                f"{data['samples']:9d} {seconds:6.1f}",
                flush=True,
            )
        if not every:
            missed.append(entry.name)
    print("-" * len(header))
    print(
        f"entries flagged on every seed: {len(entries) - len(missed)}/{len(entries)}; "
        f"audit seconds in all: {total:.0f}"
    )
    if missed:
        print("not flagged on some seed: " + ", ".join(missed))


if __name__ == "__main__":
    main()
