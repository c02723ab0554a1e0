"""Importance sampling (grey box) against plain sampling (black box) on rare events.

Run: python benchmarks/bench_greybox.py [--quick]

Issue 43, items 3 and 5. Two tables, every case in one run:

1. Samples and seconds to bound ``P(S | D)`` to a relative width ``(high − low) / P`` of 10 %,
   each side at α = 1e-3.
2. Samples and seconds (per side) to reach an ε lower bound on a neighbouring pair, with
   α = 0.05 in all (α/2 per side).

Plain sampling: Clopper–Pearson at the expected number of hits (``round(n P)``, exact ``P``
from ``dpaudit.exact.output_law``), the smallest ``n`` on a grid of ratio 2^(1/4); seconds are
``n`` over the sampler's measured throughput (running 1e15 draws is not an option). Importance
sampling: measured runs of ``importance_sampled_probability`` at ``n = 1000 · 2^j`` until the
target is met; the samples and seconds are those of the run that met it plus the cross-entropy
pilot where there is one (the smaller runs of the search, together at most as many again, are
not counted). Gumbel cases: tilts from the pilot, moved by ``gumbel_dominating_shift``; Laplace
cases: symmetric shifts ±gap/4, no pilot.
Timings are wall-clock on a shared machine and noisy.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

import dpaudit
import mechanisms as M
from dpaudit.auditor.bounds import (
    event_bounds,
    one_sided_lower,
    one_sided_upper,
    privacy_lower_bounds,
)
from dpaudit.auditor.greybox import (
    cross_entropy_tilt,
    gumbel_dominating_shift,
    importance_sampled_probability,
    noisy_max_weight_bound,
)
from dpaudit.catalog import EMNonMonotoneClaimsEpsilon, ReportNoisyMaxHalfNoise

LAMBDA = 0.1
PILOT = 20_000  # runs per cross-entropy round (2 rounds)
WIDTH, ALPHA_P = 0.10, 1e-3
ALPHA_PAIR = 0.05


def item_one(outcomes):
    return outcomes[:, 0] == 1


@dataclass
class Proposal:
    """A tilt on the noise draw (index 0) and its weight bound, with the pilot's cost."""

    shift: np.ndarray
    bound: float
    pilot_samples: int
    pilot_seconds: float


def gumbel_proposal(mechanism, counts, seed):
    """Cross-entropy pilot, then the nearest shift that dominates p on the event."""
    start = time.perf_counter()
    counts = np.asarray(counts, dtype=float)
    base = mechanism.epsilon * (counts - counts.max())
    initial = np.zeros(counts.size)
    initial[1] = max(0.0, base.max() - base[1] - 5.0)  # some pilot runs in the event
    tilt = cross_entropy_tilt(
        mechanism.sample, counts, item_one, initial={0: initial}, samples=PILOT, seed=seed, rounds=2
    )
    shift = gumbel_dominating_shift(base, 1, tilt.tilts[0])
    bound = noisy_max_weight_bound("gumbel", base, 1, shift, mixture=LAMBDA)
    return Proposal(shift, bound, tilt.pilot_samples, time.perf_counter() - start)


def laplace_proposal(mechanism, counts, seed):
    """Symmetric shifts ±gap/4 (no pilot): given x_1 − x_0 > gap the split is uniform."""
    gap = (max(counts) - counts[1]) / mechanism.scale
    shift = np.array([-gap / 4.0, gap / 4.0]) * mechanism.scale
    bound = noisy_max_weight_bound(
        "laplace", counts, 1, shift, mixture=LAMBDA, scale=mechanism.scale
    )
    return Proposal(shift, bound, 0, 0.0)


def throughput(mechanism, counts, rows=1_000_000):
    """Plain runs per second, event included (best of 2)."""
    best = math.inf
    for seed in range(2):
        rng = np.random.default_rng(seed)
        start = time.perf_counter()
        item_one(mechanism.sample(counts, rows, rng)).sum()
        best = min(best, time.perf_counter() - start)
    return rows / best


def grid_search(ok, start=100.0, stop=1e22):
    """The smallest ``n`` on the grid ``start · 2^(j/4)`` with ``ok(n)``; None past ``stop``."""
    n = start
    while n <= stop:
        if ok(int(n)):
            return int(n)
        n *= 2.0**0.25
    return None


def plain_width_samples(p, alpha):
    def ok(n):
        hits = round(n * p)
        return (one_sided_upper(hits, n, alpha) - one_sided_lower(hits, n, alpha)) / p <= WIDTH

    return grid_search(ok)


def plain_epsilon_samples(p, q, target, claim):
    def ok(n):
        found = event_bounds(round(n * p), n, round(n * q), n, ALPHA_PAIR / 2, claim, 0.0)[2]
        return found >= target

    return grid_search(ok)


def doubling(run, limit):
    """``run(n)`` for n = 1000, 2000, ... up to ``limit``: ``(n, seconds, met)`` of the last run."""
    n = 1_000
    while True:
        start = time.perf_counter()
        met = run(n)
        seconds = time.perf_counter() - start
        if met or 2 * n > limit:
            return n, seconds, met
        n *= 2


def show(row):
    """One table row; the ratios are blank where importance sampling missed the target."""
    if row["met"]:
        ratios = f"{row['plain_n'] / row['is_n']:>10.3g}{row['plain_s'] / row['is_s']:>10.3g}"
    else:
        ratios = f"{'-':>10}{'-':>10}"
    print(
        f"{row['case']:<34}{row['target']:>9}{row['plain_n']:>11.3g}{row['plain_s']:>11.3g}"
        f"{row['is_n']:>10.3g}{row['is_s']:>8.2f}{ratios}"
        f"{row['plain_rate']:>10.3g}{row['is_rate']:>10.3g}  {row['note']}"
    )


HEADER = (
    f"{'case':<34}{'target':>9}{'plain n':>11}{'plain s':>11}{'IS n':>10}{'IS s':>8}"
    f"{'n ratio':>10}{'s ratio':>10}{'plain/s':>10}{'IS/s':>10}"
)


def probability_table(limit):
    print(f"\n1. Bounds on P(item 1 first) to relative width {WIDTH:.0%}, α = {ALPHA_P} per side")
    print(HEADER)
    cases = [
        ("GumbelTopK (14,0,0)", M.GumbelTopK(k=1, epsilon=1.0), [14, 0, 0], gumbel_proposal),
        ("GumbelTopK (30,0,0)", M.GumbelTopK(k=1, epsilon=1.0), [30, 0, 0], gumbel_proposal),
        ("rnm-half-noise (12,0)", ReportNoisyMaxHalfNoise(epsilon=1.0), [12, 0], laplace_proposal),
    ]
    for name, mechanism, counts, propose in cases:
        p = float(dpaudit.exact.output_law(mechanism, counts)[(1,)])
        proposal = propose(mechanism, counts, 1)
        kept = {}

        def run(n, mechanism=mechanism, counts=counts, proposal=proposal, kept=kept):
            result = importance_sampled_probability(
                mechanism, counts, item_one, tilts={0: proposal.shift}, mixture=LAMBDA,
                samples=n, seed=n, alpha=ALPHA_P, weight_bound=proposal.bound,
            )  # fmt: skip
            kept["result"] = result
            return result.relative_width <= WIDTH

        n, seconds, met = doubling(run, limit)
        rate = throughput(mechanism, counts)
        plain_n = plain_width_samples(p, ALPHA_P)
        result = kept["result"]
        missed = "" if met else f"NOT MET by n={n:.3g} (width {result.relative_width:.2f}); "
        show(
            {
                "case": f"{name} P={p:.2g}",
                "target": f"{WIDTH:.0%}",
                "plain_n": plain_n,
                "plain_s": plain_n / rate,
                "is_n": n + proposal.pilot_samples,
                "is_s": seconds + proposal.pilot_seconds,
                "plain_rate": rate,
                "is_rate": n / seconds,
                "met": met,
                "note": (
                    f"{missed}B={result.weight_bound:.2g} (B/P={result.weight_bound / p:.2g}), "
                    f"[{result.low / p:.3f}, {result.high / p:.3f}]·P, floor B·ln(1/α)/n = "
                    f"{result.upper_floor:.2g}"
                ),
            }
        )


def pair_table(limit):
    print(f"\n2. ε lower bound on a neighbouring pair (event: item 1), α = {ALPHA_PAIR} in all")
    print(HEADER.replace("plain n", "n/side").replace("IS n", "IS n/side"))
    cases = [
        (
            "em-non-monotone (11,1)/(12,0)",
            EMNonMonotoneClaimsEpsilon(epsilon=1.0),
            1.9,
            gumbel_proposal,
        ),
        (
            "rnm-half-noise (11,1)/(12,0)",
            ReportNoisyMaxHalfNoise(epsilon=1.0),
            1.5,
            laplace_proposal,
        ),
    ]
    d, d2 = [11, 1], [12, 0]
    for name, mechanism, target, propose in cases:
        p = float(dpaudit.exact.output_law(mechanism, d)[(1,)])
        q = float(dpaudit.exact.output_law(mechanism, d2)[(1,)])
        claim = mechanism.claim.epsilon
        proposals = propose(mechanism, d, 1), propose(mechanism, d2, 2)
        kept = {}

        def run(n, mechanism=mechanism, proposals=proposals, target=target, claim=claim, kept=kept):
            sides = [
                importance_sampled_probability(
                    mechanism,
                    counts,
                    item_one,
                    tilts={0: proposal.shift},
                    mixture=LAMBDA,
                    samples=n,
                    seed=n + side,
                    alpha=ALPHA_PAIR / 2,
                    weight_bound=proposal.bound,
                )
                for side, (counts, proposal) in enumerate(zip((d, d2), proposals))
            ]
            found = privacy_lower_bounds(sides[0].bound, sides[1].bound, epsilon=claim, delta=0.0)
            kept["epsilon"] = found.epsilon_lower
            return found.epsilon_lower >= target

        n, seconds, met = doubling(run, limit)
        rate = 1.0 / (1.0 / throughput(mechanism, d) + 1.0 / throughput(mechanism, d2))
        plain_n = plain_epsilon_samples(p, q, target, claim)
        missed = "" if met else f"NOT MET by n={n:.3g}; "
        pilot_n = sum(x.pilot_samples for x in proposals) // 2
        show(
            {
                "case": name,
                "target": f"ε>={target}",
                "plain_n": plain_n,
                "plain_s": plain_n / rate,
                "is_n": n + pilot_n,
                "is_s": seconds + sum(x.pilot_seconds for x in proposals),
                "plain_rate": rate,
                "is_rate": 2 * n / seconds,
                "met": met,
                "note": (
                    f"{missed}exact ε={math.log(p / q):.3f}, P={p:.2g}, Q={q:.2g}, IS ε>={kept['epsilon']:.3f}"
                ),
            }
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="stop importance sampling at 1e6")
    args = parser.parse_args()
    limit = 1_000_000 if args.quick else 8_000_000
    start = time.perf_counter()
    probability_table(limit)
    pair_table(limit)
    print(
        f"\nplain n: Clopper–Pearson at the expected hits; plain s = n / measured runs per second "
        f"(plain/s, both sides for a pair); IS s and IS/s measured (IS n and s include the pilot). "
        f"Total {time.perf_counter() - start:.0f} s."
    )


if __name__ == "__main__":
    main()
