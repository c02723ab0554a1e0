"""δ on structural zeros by importance sampling: LimitDomain at δ = 1e-6 and 1e-10.

Run: python benchmarks/bench_structural_delta.py [--quick]

Also ``TopStable(k=2, kbar=3, epsilon=1, delta)`` on its default support-edge pair
``(10, 10, 10, 11, 11, 11)`` vs ten everywhere, at δ = 1e-3, 1e-6, 1e-10: its parts are reached
through a sum of Laplace draws and bounded from a mixture of exponential tilts.

Issue 43, item 3. For ``LimitDomain(k=3, kbar=10, epsilon=1, delta)`` (the README's main job)
and three support-changing pairs ``(D, D')`` (one user removed from the items that enter the top
k̄; d = 11, 13, 20, so 1, 3 and 10 items leave), each with ``P(S | D) = δ/(1 + δ)`` exactly (the
most a pair can spend: every gap item has count ``h_(k̄+1) + 1``, and the size term of the
threshold is the number of gap items), it prints the exact ``P(S | D)``
(``dpaudit.exact.output_law``), ``structural_delta``'s estimate, lower bound (α = 1e-3),
detectable δ, runs and seconds. Plain sampling at the same α needs about ``ln(1/α)/δ`` runs to
see a lower bound above 0 at all (6.9e6 at δ = 1e-6, 6.9e10 at 1e-10). Timings are wall-clock on
a shared machine and noisy.
"""

from __future__ import annotations

import argparse
import time

import mpmath

import mechanisms as M
from dpaudit.auditor.greybox import structural_delta
from dpaudit.exact import output_law

TOP_STABLE = ([10, 10, 10, 11, 11, 11], [10] * 6)
PAIRS = {
    "d=11, 1 item": ([4] * 10 + [5], [4] * 11),
    "d=13, 3 items": ([4] * 10 + [5] * 3, [4] * 13),
    "d=20, 10 items": ([4] * 10 + [5] * 10, [4] * 20),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 runs instead of 200,000")
    args = parser.parse_args()
    runs = 20_000 if args.quick else 200_000
    print(
        f"{'delta':>6} {'pair':>15} {'exact':>11} {'estimate':>11} {'lower':>11} "
        f"{'low/exact':>9} {'detectable':>11} {'runs':>7} {'pilot':>7} {'checks':>7} {'s':>5}"
    )
    cases = [
        (M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=delta), name, pair)
        for delta in (1e-6, 1e-10)
        for name, pair in PAIRS.items()
    ] + [
        (M.TopStable(k=2, kbar=3, epsilon=1.0, delta=delta), "TopStable 2,3", TOP_STABLE)
        for delta in (1e-3, 1e-6, 1e-10)
    ]
    for mechanism, name, (counts, neighbour) in cases:
        delta = mechanism.claim.delta
        claim = (mechanism.claim.epsilon, delta)
        started = time.perf_counter()
        result = structural_delta(
            mechanism, counts, neighbour, claim=claim, alpha=1e-3, seed=0, runs=runs
        )
        seconds = time.perf_counter() - started
        law = output_law(mechanism, counts)
        exact = float(mpmath.fsum(p for o, p in law.items() if set(o) & result.items))
        print(
            f"{delta:>6.0e} {name:>15} {exact:>11.5g} {result.estimate:>11.5g} "
            f"{result.lower:>11.5g} {result.lower / exact:>9.3f} "
            f"{result.detectable_delta:>11.5g} {result.runs:>7} {result.pilot_runs:>7} "
            f"{result.check_runs:>7} {seconds:>5.1f}"
        )


if __name__ == "__main__":
    main()
