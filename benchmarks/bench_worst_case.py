"""Speed and reach of the worst-case searches (dpaudit.exact.worst_case, local search pairs).

Plain script: ``python benchmarks/bench_worst_case.py [--audit | --default]``. Prints

1. the time per law of :func:`dpaudit.exact.float_law` against the mpmath
   :func:`dpaudit.exact.output_law` (ratio from the same run) for TopStable and
   RestrictedGumbel;
2. ``worst_case`` on TopStable(k=2, k̄=3, ε=1, δ=1e-3), d = 5, counts <= 100, 20 000 pairs,
   seeds 0-1: seconds and the exact ε at δ found (the staircase (60, 36, 4, 4, 0) vs (61, 36, 4, 5, 0) has 0.5742);
3. with ``--audit``: for seeds 0-4, a local search from samples alone (own seed stream,
   1000 pairs x 2000 draws per histogram) then ``dpaudit.audit(mechanism, pairs=found)``:
   the best exact ε among the pairs found and the audit's ε lower bound;
4. with ``--default``: the default audits ``dpaudit.audit(mechanism, seed=s)``, s = 0-4, of
   TopStable, StabilityRelease and RestrictedGumbel (the local search is one of their
   phases): ε lower bound, exact ε at δ of the witness pair, samples, seconds; then the cost
   of the local-search phase on small default audits (200k samples, seeds 0-4), timed with
   and without it (``dpaudit.auditor.run.local_search_share(0)``) in the same run.

Timings are wall-clock and depend on the load of the machine.
"""

from __future__ import annotations

import contextlib
import sys
import time

import numpy as np

import dpaudit
import mechanisms as M
from dpaudit.auditor import count_batch
from dpaudit.exact import epsilon_at, float_law, output_law, worst_case
from dpaudit.neighbours import local_search_pairs
from dpaudit.neighbours.local_pairs import sampled_epsilon

TOP_STABLE = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
RESTRICTED_GUMBEL = M.RestrictedGumbel(
    k=2, kbar=4, epsilon=0.5, delta=1e-3, epsilon_r=0.5, delta_r=5e-4
)


def per_law(law, mechanism, histograms) -> float:
    start = time.perf_counter()
    for counts in histograms:
        law(mechanism, counts)
    return (time.perf_counter() - start) / len(histograms)


def law_speed() -> None:
    rng = np.random.default_rng(0)
    histograms = [rng.integers(0, 100, size=6) for _ in range(20)]
    print("law                 float64 (ms)   mpmath (ms)   ratio")
    for name, mechanism in (("TopStable", TOP_STABLE), ("RestrictedGumbel", RESTRICTED_GUMBEL)):
        fast = per_law(float_law, mechanism, histograms)
        exact = per_law(output_law, mechanism, histograms)
        print(f"{name:18s} {fast * 1e3:12.3f} {exact * 1e3:13.3f} {exact / fast:7.1f}x")


def search_reach() -> None:
    for seed in (0, 1):
        start = time.perf_counter()
        found = worst_case(TOP_STABLE, d=5, max_count=100, seed=seed, budget=20_000)
        print(
            f"worst_case TopStable seed {seed}: eps {float(found.epsilon_at_delta):.4f} on "
            f"{list(found.pair[0])} vs {list(found.pair[1])}, "
            f"{time.perf_counter() - start:.1f} s ({found.coverage})"
        )


def audit_reach() -> None:
    for seed in range(5):
        start = time.perf_counter()
        stream = np.random.SeedSequence(seed, spawn_key=(99,))  # the search's own stream
        rng = np.random.default_rng(stream.spawn(1)[0])

        def draw(histograms, n, rng=rng):
            return [(count_batch(TOP_STABLE.sample(np.asarray(h), n, rng)), n) for h in histograms]

        found = local_search_pairs(
            sampled_epsilon(draw, 1e-3, 2_000), 5, 100, TOP_STABLE.claim.neighbours, seed=stream
        )
        best = max(float(epsilon_at(TOP_STABLE, *p.arrays, 1e-3)) for p in found)
        result = dpaudit.audit(TOP_STABLE, pairs=[(p.counts, p.counts2) for p in found], seed=seed)
        w = result.epsilon_witness
        print(
            f"seed {seed}: best exact eps of the pairs found {best:.4f}; audit eps_lower "
            f"{result.epsilon_lower:.4f} ({result.verdict}), witness exact "
            f"{float(epsilon_at(TOP_STABLE, w.counts, w.counts2, 1e-3)):.4f}; "
            f"{time.perf_counter() - start:.0f} s"
        )


def default_audits() -> None:
    stability = M.StabilityRelease(k=2, epsilon=1.0, delta=1e-3)
    print("mechanism          seed  eps_lower  witness exact eps  samples    seconds")
    for name, mechanism in (
        ("TopStable", TOP_STABLE),
        ("StabilityRelease", stability),
        ("RestrictedGumbel", RESTRICTED_GUMBEL),
    ):
        for seed in range(5):
            start = time.perf_counter()
            result = dpaudit.audit(mechanism, seed=seed)
            seconds = time.perf_counter() - start
            w = result.epsilon_witness
            exact = float(epsilon_at(mechanism, w.counts, w.counts2, mechanism.claim.delta))
            print(
                f"{name:18s} {seed:4d} {result.epsilon_lower:10.4f} {exact:18.4f} "
                f"{result.samples:9d} {seconds:9.1f}"
            )
    small_audit_cost()


def small_audit_cost() -> None:
    from dpaudit.auditor.run import local_search_share

    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    seconds = {}
    for label, share in (("with", contextlib.nullcontext), ("without", local_search_share)):
        start = time.perf_counter()
        with share(0.0):  # nullcontext(0.0): the default share
            for seed in range(5):
                dpaudit.audit(mechanism, samples=200_000, seed=seed)
        seconds[label] = (time.perf_counter() - start) / 5
    print(
        f"LimitDomain, 200k samples: {seconds['with']:.2f} s per audit with the local search, "
        f"{seconds['without']:.2f} s without ({seconds['with'] / seconds['without']:.2f}x)"
    )


if __name__ == "__main__":
    if "--default" in sys.argv[1:]:
        default_audits()
        sys.exit()
    law_speed()
    search_reach()
    if "--audit" in sys.argv[1:]:
        audit_reach()
