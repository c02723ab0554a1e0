"""Default audits of the mechanisms that declare their output support, at δ = 1e-6 and 1e-10.

Issue 43, done-when 2: ``LimitDomain(k=3, kbar=10, epsilon=1, delta)`` (the README's main job),
``TopStable(k=2, kbar=3, epsilon=1, delta)`` and ``StabilityRelease(k=2, epsilon=1, delta)``,
each audited by ``dpaudit.audit(mechanism, seed=s)`` with every option at its default, on seeds
0-2: the verdict, the ε lower bound, the detectable δ over the claimed δ (a PASS resolves δ when
it is at most the power factor, 1.25), the samples and the seconds. Then the same mechanism
audited against a claim of a third of its δ (``claim=(ε, δ/3)``), which it breaks: the verdict
and the grey-box δ lower bound over δ/3 (flagged when the verdict is VIOLATION). Every mechanism
here is correct at its own claim, so a VIOLATION there is a false alarm. Seconds are wall-clock
on a shared machine.

Usage: python benchmarks/bench_support_audits.py [--seeds 0 1 2] [--deltas 1e-6 1e-10]
                                                 [--only NAME ...] [--workers N]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import dpaudit
import mechanisms as M

FAMILIES = {
    "LimitDomain(3, 10, 1)": lambda delta: M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=delta),
    "TopStable(2, 3, 1)": lambda delta: M.TopStable(k=2, kbar=3, epsilon=1.0, delta=delta),
    "StabilityRelease(2, 1)": lambda delta: M.StabilityRelease(k=2, epsilon=1.0, delta=delta),
}


def _one(job):
    name, delta, seed, third = job
    mechanism = FAMILIES[name](delta)
    epsilon = float(mechanism.claim.epsilon)
    claim = (epsilon, float(mechanism.claim.delta) / 3) if third else None
    started = time.perf_counter()
    result = dpaudit.audit(mechanism, seed=seed, claim=claim, progress=False)
    seconds = time.perf_counter() - started
    grey = (result.evidence or {}).get("greybox", {}).get("delta") or {}
    claimed_delta = float(result.claim_delta)
    return {
        "name": name,
        "delta": delta,
        "seed": seed,
        "third": third,
        "verdict": result.verdict,
        "epsilon_lower": float(result.epsilon_lower),
        "delta_power": float(result.detectable_delta) / claimed_delta,
        "grey_lower": float(grey.get("lower", 0.0)) / claimed_delta,
        "samples": int(result.samples),
        "seconds": seconds,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--deltas", type=float, nargs="+", default=[1e-6, 1e-10])
    parser.add_argument("--only", nargs="+", choices=sorted(FAMILIES), default=sorted(FAMILIES))
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    jobs = [
        (name, delta, seed, third)
        for name in args.only
        for delta in args.deltas
        for third in (False, True)
        for seed in args.seeds
    ]
    header = (
        f"{'mechanism':<24}{'δ':>7}{'claim':>7}{'seed':>5}  {'verdict':<13}{'ε ≥':>7}"
        f"{'det δ/claim':>12}{'grey δ/claim':>13}{'samples':>12}{'s':>6}"
    )
    print(header)
    print("-" * len(header))
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        rows = list(pool.map(_one, jobs))
    for r in rows:
        print(
            f"{r['name']:<24}{r['delta']:>7.0e}{'δ/3' if r['third'] else 'δ':>7}{r['seed']:>5}  "
            f"{r['verdict'].upper():<13}{r['epsilon_lower']:>7.3f}{r['delta_power']:>12.3f}"
            f"{r['grey_lower']:>13.3f}{r['samples']:>12,}{r['seconds']:>6.0f}"
        )
    correct = [r for r in rows if not r["third"]]
    broken = [r for r in rows if r["third"]]
    passed = sum(r["verdict"] == "passed" for r in correct)
    false_alarms = sum(r["verdict"] == "violation" for r in correct)
    flagged = sum(r["verdict"] == "violation" for r in broken)
    print(
        f"correct claims: {passed} of {len(correct)} PASSED, {false_alarms} VIOLATION; "
        f"a third of δ claimed: {flagged} of {len(broken)} flagged"
    )


if __name__ == "__main__":
    main()
