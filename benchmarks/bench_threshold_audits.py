"""Default audits of the threshold mechanisms and the free-⊥ session, per seed (plain script).

The full sweep of tests/dpaudit/auditor/test_threshold_audits.py (the slow step audits seeds
0-1 there): for seeds 0-4, ``dpaudit.audit(mech, seed=s)`` with every option at its default
on TopStable(k=2, k̄=3, ε=1, δ=1e-3), TopStable(k=2, k̄=5, ε=1, δ=1e-6), StabilityRelease(k=2,
ε=1, δ=1e-3) and RestrictedGumbel(k=2, k̄=4, ε=0.5, δ=1e-3, ε_r=0.5, δ_r=5e-4), and the default
session audit (budget 1e7, as in the test) of the free-⊥ session and of its fix
(MultiLimitDomain) under RepeatQuery(k=1, k̄=1). Each row: verdict, ε lower bound, the exact ε
at the claimed δ of the bound's own witness pair (``dpaudit.exact.epsilon_at``; a valid bound
never exceeds it but with probability α), samples and seconds. The last lines check the
test's requirements on all the seeds:

* TopStable(k̄=3): never a VIOLATION, ε lower >= 0.30 and >= 0.40 (70 % of its worst case
  0.5742) on at least 4 of 5 seeds;
* TopStable(k̄=5): INCONCLUSIVE or a positive bound on every seed;
* StabilityRelease: ε lower > 0.5 on every seed; RestrictedGumbel: PASSED with ε lower > 0.4;
* free-⊥ session: VIOLATION with ε lower > 2 (exact 3.31); its fix: never a VIOLATION;
* every bound of TopStable(k̄=3), StabilityRelease and RestrictedGumbel at most its witness's
  exact ε.

Seconds are wall-clock on a shared machine.

Usage: python benchmarks/bench_threshold_audits.py [--seeds 0 1 2 3 4] [--no-sessions]
"""

from __future__ import annotations

import argparse
import time

import dpaudit
import mechanisms as M
from dpaudit.catalog.sessions import FreeBottomSession
from dpaudit.exact import epsilon_at

_SHORT = {"violation": "VIOL", "passed": "PASS", "inconclusive": "INC"}

#: Bounds the test does not check against their witness's exact ε.
_UNCHECKED = {"topstable-k2-kbar5"}

#: The session audits' budget (a fifth of the default), as in the test.
SESSION_BUDGET = 10_000_000


def _witness_exact(mech, result) -> float | None:
    """The exact ε at the claimed δ of the bound's witness pair (None: no witness)."""
    witness = result.epsilon_witness
    if witness is None:
        return None
    return float(epsilon_at(mech, witness.counts, witness.counts2, result.claim_delta))


def _row(name, seed, result, exact, seconds):
    shown = "-" if exact is None else f"{exact:.4f}"
    print(
        f"{name:22s} {seed:4d} {_SHORT[result.verdict]:7s} {result.epsilon_lower:8.4f} "
        f"{shown:>8s} {result.samples:10d} {seconds:6.1f}",
        flush=True,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--no-sessions", action="store_true", help="skip the session audits")
    args = parser.parse_args(argv)
    mechs = {
        "topstable-k2-kbar3": M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3),
        "topstable-k2-kbar5": M.TopStable(k=2, kbar=5, epsilon=1.0, delta=1e-6),
        "stability-release-k2": M.StabilityRelease(k=2, epsilon=1.0, delta=1e-3),
        "restricted-gumbel-k2": M.RestrictedGumbel(
            k=2, kbar=4, epsilon=0.5, delta=1e-3, epsilon_r=0.5, delta_r=5e-4
        ),
    }
    header = (
        f"{'mechanism':22s} seed verdict  {'ε lower':>8s} {'exact':>8s} {'samples':>10s} {'s':>6s}"
    )
    print(header)
    print("-" * len(header))
    results: dict[str, list] = {name: [] for name in mechs}
    above_exact = 0
    for name, mech in mechs.items():
        for seed in args.seeds:
            started = time.perf_counter()
            result = dpaudit.audit(mech, seed=seed)
            seconds = time.perf_counter() - started
            exact = None if name in _UNCHECKED else _witness_exact(mech, result)
            if name not in _UNCHECKED:  # no witness: the bound must be 0
                above_exact += result.epsilon_lower > (0.0 if exact is None else exact + 1e-12)
            results[name].append(result)
            _row(name, seed, result, exact, seconds)
    sessions: dict[str, list] = {"free-bottom-session": [], "multi-limit-domain": []}
    if not args.no_sessions:
        params = {"total_k": 1, "max_queries": 5, "epsilon": 1.0, "delta": 1e-6}
        policy = M.RepeatQuery(k=1, kbar=1)
        builds = {
            "free-bottom-session": lambda: FreeBottomSession(**params),
            "multi-limit-domain": lambda: M.MultiLimitDomain(**params),
        }
        for name, build in builds.items():
            for seed in args.seeds:
                started = time.perf_counter()
                result = dpaudit.audit_session(build, policy, seed=seed, samples=SESSION_BUDGET)
                seconds = time.perf_counter() - started
                sessions[name].append(result)
                _row(name, seed, result, None, seconds)
    print("-" * len(header))
    n = len(args.seeds)
    top3 = results["topstable-k2-kbar3"]
    print(
        f"topstable-k2-kbar3: violations {sum(r.verdict == 'violation' for r in top3)}; "
        f"ε lower >= 0.30 on {sum(r.epsilon_lower >= 0.30 for r in top3)}/{n}, "
        f">= 0.40 on {sum(r.epsilon_lower >= 0.40 for r in top3)}/{n} (needs {n - 1})"
    )
    top5 = results["topstable-k2-kbar5"]
    zero = sum(r.verdict != "inconclusive" and r.epsilon_lower <= 0 for r in top5)
    print(f"topstable-k2-kbar5: passed with a zero bound on {zero}/{n} (needs 0)")
    stable = results["stability-release-k2"]
    gumbel = results["restricted-gumbel-k2"]
    print(
        f"stability-release-k2: ε lower > 0.5 on {sum(r.epsilon_lower > 0.5 for r in stable)}/{n}; "
        f"restricted-gumbel-k2: PASSED with ε lower > 0.4 on "
        f"{sum(r.verdict == 'passed' and r.epsilon_lower > 0.4 for r in gumbel)}/{n}"
    )
    if not args.no_sessions:
        broken, fixed = sessions["free-bottom-session"], sessions["multi-limit-domain"]
        flagged = sum(r.verdict == "violation" and r.epsilon_lower > 2.0 for r in broken)
        print(
            f"free-bottom-session: flagged with ε lower > 2 on {flagged}/{n}; "
            f"multi-limit-domain flagged on {sum(r.verdict == 'violation' for r in fixed)}/{n}"
        )
    checked = (len(mechs) - len(_UNCHECKED)) * n
    print(f"bounds above their witness's exact ε: {above_exact} (of {checked} audits)")


if __name__ == "__main__":
    main()
