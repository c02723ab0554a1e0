"""Benchmark: verdicts of the default (adaptive) audit on ε and δ bugs and their correct twins.

Cases (black boxes written here for measuring; the real-bug corpus lives elsewhere):

* Sparse vector with c = 1 over the counts in item order, ε = 0.1, each count moving by at
  most 1 either way (the queries of Lyu, Su, Li, "Understanding the Sparse Vector
  Technique for Differential Privacy", PVLDB 10(6) 2017): Lee & Clifton's variant (Alg. 4:
  ε₁ = ε/4, ρ ~ Lap(1/ε₁), ν ~ Lap(1/ε₂), ε₂ = 3ε/4; true ε = (1 + 6c)/4 · ε = 0.175 for
  c = 1, their Table 1) and the correct Alg. 1 (ε₁ = ε₂ = ε/2, ν ~ Lap(2c/ε₂)).
* Laplace partition selection: a key (a user touches one) is released when its count plus
  Lap(1/ε) exceeds τ = 1 + ln(1/(2 δ b))/ε; its δ is ½ e^{−ε(τ − 1)} = b δ. The bug has
  b = 3 (a wrong threshold formula, δ three times the claim), the twin b = 1.

Prints, per case and seed, the verdict, bounds, detectable ε and δ (probability 0.9), and
the samples drawn against the budget. Usage:
python benchmarks/bench_adaptive_power.py [--seeds 0,1,2] [--budget 5e7] [--quick]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import dpaudit
import mechanisms as M


class SparseVector:
    """Sparse vector, c = 1: the first item whose noisy count clears the noisy threshold, or ⊥."""

    width = 1

    def __init__(self, epsilon=0.1, lee_clifton=True, threshold=0.0):
        e1, e2 = (epsilon / 4, 3 * epsilon / 4) if lee_clifton else (epsilon / 2, epsilon / 2)
        self.rho_scale = 1 / e1
        self.nu_scale = (1 if lee_clifton else 2) / e2
        self.threshold = threshold
        self.name = "SVT Lee-Clifton (bug)" if lee_clifton else "SVT Alg. 1 (correct)"
        self.claim = M.PrivacyClaim(epsilon, 0.0, M.BoundedChange(1))

    def sample(self, counts, size, rng):
        counts = np.asarray(counts, dtype=float)
        rho = rng.laplace(0, self.rho_scale, size=(size, 1))
        nu = rng.laplace(0, self.nu_scale, size=(size, counts.size))
        above = counts[None, :] + nu >= self.threshold + rho
        first = np.where(above.any(axis=1), above.argmax(axis=1), M.BOTTOM)
        return first.reshape(size, 1).astype(np.int64)


class PartitionSelection:
    """Keys whose count + Lap(1/ε) exceeds τ, ascending; ``factor`` times the claimed δ."""

    def __init__(self, d=5, epsilon=1.0, delta=1e-5, factor=1.0):
        self.width = d
        self.tau = 1 + math.log(1 / (2 * delta * factor)) / epsilon
        self.scale = 1 / epsilon
        self.name = f"partition selection δ={delta:g} ×{factor:g}"
        self.claim = M.PrivacyClaim(epsilon, delta, M.AddRemoveUser(max_items=1))

    def sample(self, counts, size, rng):
        counts = np.asarray(counts, dtype=float)
        noisy = counts[None, :] + rng.laplace(0, self.scale, size=(size, counts.size))
        keep = (noisy > self.tau) & (counts[None, :] > 0)
        order = np.argsort(~keep, axis=1, kind="stable")
        ids = np.take_along_axis(np.broadcast_to(np.arange(counts.size), keep.shape), order, 1)
        packed = np.take_along_axis(keep, order, axis=1)
        out = np.full((size, counts.size), M.PAD, dtype=np.int64)
        out[packed] = ids[packed]
        return out


def cases(quick):
    found = [SparseVector(lee_clifton=True), SparseVector(lee_clifton=False)]
    found += [PartitionSelection(factor=3.0), PartitionSelection(factor=1.0)]
    if not quick:
        found += [PartitionSelection(delta=1e-3, factor=3.0), PartitionSelection(delta=1e-3)]
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--budget", default=None, help="audit budget (default: the auditor's)")
    parser.add_argument("--quick", action="store_true", help="four cases only")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    options = {} if args.budget is None else {"budget": args.budget}
    print("| case | seed | verdict | ε low | δ low | detectable ε | detectable δ | samples | s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for mech in cases(args.quick):
        for seed in seeds:
            start = time.perf_counter()
            r = dpaudit.audit(mech, seed=seed, name=mech.name, **options)
            print(
                f"| {mech.name} | {seed} | {r.verdict} | {r.epsilon_lower:.3f} | "
                f"{r.delta_lower:.2e} | {r.detectable_epsilon:.3f} | {r.detectable_delta:.2e} | "
                f"{r.samples:,} / {r.samples_requested:,} | {time.perf_counter() - start:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
