"""Real DP libraries as audit clients: throughput, power, verdicts, exact ε and chi-square.

Plain script: ``python benchmarks/bench_library_audits.py [section ...]`` with sections
``throughput``, ``chi2``, ``exact``, ``power``, ``audits``, ``workers`` (default: all
but ``workers``). Prints one table per section:

* ``throughput`` — samples per second of each adapter in :mod:`dpaudit.integrations`
  (one library call per sample) next to dpaudit's vectorised mechanism of the same law;
* ``chi2`` — each library's frequencies against the exact law of our reading of it,
  and against the nearest wrong reading (Gumbel instead of exponential noise, or ε
  off by 2);
* ``exact`` — OpenDP noisy top-k (k = 2, scale 2): exact ε on a family of
  BoundedChange(1) pairs, and the worst add/remove pair on 3 items with counts <= 4;
* ``power`` — the audits of the tests run on SEEDED numpy samplers with the same
  laws (seeds 0-9, same budget and alpha): how far each verdict is from flipping;
* ``audits`` — the library audits of the slow tests, once each (OpenDP is not seeded);
* ``workers`` — one OpenDP audit with ``workers=1`` and ``workers=2``.

Timings are wall-clock and depend on the machine's load.
"""

from __future__ import annotations

import itertools
import sys
import time
from dataclasses import dataclass

import numpy as np

import dpaudit
from dpaudit.exact import epsilon_from_laws, output_law
from dpaudit.integrations.diffprivlib import DiffprivlibExponential, diffprivlib_version
from dpaudit.integrations.opendp import (
    OpenDPNoisyMax,
    OpenDPNoisyTopK,
    opendp_version,
    peeled_permute_and_flip_law,
)
from mechanisms import (
    PAD,
    AddRemoveUser,
    BoundedChange,
    ExponentialMechanism,
    GumbelTopK,
    PermuteAndFlip,
    PrivacyClaim,
    count_outcomes,
)

sys.path.insert(0, "tests")
from goodness_of_fit import chi_square_pvalue

COUNTS = (3, 2, 1, 0, 0)
ALPHA = 1e-3
OPENDP_SAMPLES = 250_000
DIFFPRIVLIB_SAMPLES = 500_000


@dataclass(frozen=True)
class PeeledExponentialNoise:
    """Seeded sampler of OpenDP top-k's law: k rounds of argmax of c + Exp(scale), with removal."""

    k: int = 2
    scale: float = 2.0

    @property
    def width(self):
        return self.k

    @property
    def claim(self):
        return PrivacyClaim(self.k / self.scale, 0.0, AddRemoveUser())

    def sample(self, counts, size, rng):
        counts = np.asarray(counts, dtype=float)
        out = np.full((size, self.k), PAD, dtype=np.int64)
        alive = np.ones((size, counts.size), dtype=bool)
        for column in range(min(self.k, counts.size)):
            noise = rng.exponential(self.scale, (size, counts.size))
            noisy = np.where(alive, counts + noise, -np.inf)
            out[:, column] = pick = noisy.argmax(axis=1)
            alive[np.arange(size), pick] = False
        return out


# (name, library adapter, seeded sampler of the same law, claim override, relation, budget)
CASES = [
    (
        "opendp top-k, monotone claim, AddRemoveUser",
        OpenDPNoisyTopK(2, 2.0, True),
        PeeledExponentialNoise(),
        None,
        None,
        OPENDP_SAMPLES,
    ),
    (
        "opendp top-k, monotone claim, BoundedChange(1)",
        OpenDPNoisyTopK(2, 2.0, True),
        PeeledExponentialNoise(),
        None,
        BoundedChange(1),
        OPENDP_SAMPLES,
    ),
    (
        "opendp noisy max scale 1",
        OpenDPNoisyMax(1.0, True),
        PermuteAndFlip(1.0, True),
        (1.0, 0.0, AddRemoveUser()),
        None,
        OPENDP_SAMPLES,
    ),
    (
        "opendp noisy max scale 1, claim halved",
        OpenDPNoisyMax(1.0, True),
        PermuteAndFlip(1.0, True),
        (0.5, 0.0, AddRemoveUser()),
        None,
        OPENDP_SAMPLES,
    ),
    (
        "diffprivlib EM eps 1",
        DiffprivlibExponential(1.0),
        ExponentialMechanism(0.5, False),
        (1.0, 0.0, BoundedChange(1)),
        None,
        DIFFPRIVLIB_SAMPLES,
    ),
    (
        "diffprivlib EM eps 1, claim halved",
        DiffprivlibExponential(1.0),
        ExponentialMechanism(0.5, False),
        (0.5, 0.0, BoundedChange(1)),
        None,
        DIFFPRIVLIB_SAMPLES,
    ),
    (
        "diffprivlib EM monotone, AddRemoveUser",
        DiffprivlibExponential(1.0, monotonic=True),
        ExponentialMechanism(1.0, True),
        (1.0, 0.0, AddRemoveUser()),
        None,
        DIFFPRIVLIB_SAMPLES,
    ),
    (
        "diffprivlib EM monotone, BoundedChange(1)",
        DiffprivlibExponential(1.0, monotonic=True),
        ExponentialMechanism(1.0, True),
        (1.0, 0.0, AddRemoveUser()),
        BoundedChange(1),
        DIFFPRIVLIB_SAMPLES,
    ),
]


def rate(mech, n, repeat=3):
    best = float("inf")
    for seed in range(repeat):
        start = time.perf_counter()
        mech.sample(COUNTS, n, np.random.default_rng(seed))
        best = min(best, time.perf_counter() - start)
    return n / best


def throughput():
    print(
        f"\n## throughput on counts {COUNTS} (opendp {opendp_version()}, "
        f"diffprivlib {diffprivlib_version()})"
    )
    print("| adapter | samples/s | same law, vectorised | samples/s |\n| --- | ---: | --- | ---: |")
    pairs = [
        (OpenDPNoisyTopK(2, 2.0), PeeledExponentialNoise(), 20_000),
        (OpenDPNoisyMax(1.0), PermuteAndFlip(1.0), 20_000),
        (DiffprivlibExponential(1.0), ExponentialMechanism(0.5, False), 100_000),
    ]
    for adapter, reference, n in pairs:
        print(
            f"| {adapter} | {rate(adapter, n):,.0f} | {type(reference).__name__} | "
            f"{rate(reference, 1_000_000):,.0f} |"
        )


def chi2(n_opendp=100_000, n_diffprivlib=200_000):
    print("\n## chi-square p-values (right reading should be large, wrong reading ~0)")
    print(
        "| library | n | right reading | p | wrong reading | p |\n"
        "| --- | ---: | --- | ---: | --- | ---: |"
    )
    rows = [
        (
            OpenDPNoisyTopK(2, 2.0, True),
            n_opendp,
            "peeled PF(2)",
            lambda m: m.exact_law(COUNTS),
            "GumbelTopK(2, 1/2)",
            output_law(GumbelTopK(2, 0.5), COUNTS),
        ),
        (
            OpenDPNoisyTopK(2, 2.0, False),
            n_opendp,
            "peeled PF(2)",
            lambda m: m.exact_law(COUNTS),
            "GumbelTopK(2, 1/2)",
            output_law(GumbelTopK(2, 0.5), COUNTS),
        ),
        (
            OpenDPNoisyMax(1.0),
            n_opendp,
            "PermuteAndFlip(1)",
            lambda m: m.exact_law(COUNTS),
            "ExponentialMechanism(1)",
            output_law(ExponentialMechanism(1.0), COUNTS),
        ),
        (
            OpenDPNoisyMax(1.0, True, "make_report_noisy_max_gumbel"),
            n_opendp,
            "PermuteAndFlip(1)",
            lambda m: m.exact_law(COUNTS),
            "ExponentialMechanism(1)",
            output_law(ExponentialMechanism(1.0), COUNTS),
        ),
        (
            DiffprivlibExponential(1.0),
            n_diffprivlib,
            "EM(1/2)",
            lambda m: m.exact_law(COUNTS),
            "EM(1)",
            output_law(ExponentialMechanism(1.0), COUNTS),
        ),
        (
            DiffprivlibExponential(1.0, monotonic=True),
            n_diffprivlib,
            "EM(1)",
            lambda m: m.exact_law(COUNTS),
            "EM(1/2)",
            output_law(ExponentialMechanism(0.5), COUNTS),
        ),
    ]
    for mech, n, right_name, right, wrong_name, wrong in rows:
        observed = count_outcomes(mech.sample(COUNTS, n, np.random.default_rng(0)))
        print(
            f"| {mech} | {n:,} | {right_name} | {chi_square_pvalue(right(mech), observed):.3g} | "
            f"{wrong_name} | {chi_square_pvalue(wrong, observed):.3g} |"
        )


def exact():
    print("\n## exact ε of OpenDP noisy top-k (k=2, scale 2, claim 1 under AddRemoveUser)")
    print("| pair (BoundedChange(1)) | exact ε |\n| --- | ---: |")
    for d in (3, 5):
        for m in (4, 8, 12, 16):
            c = (m,) * (d - 2) + (m - 1, 1)
            c2 = (m + 1,) * (d - 2) + (m - 2, 0)
            eps = epsilon_from_laws(
                peeled_permute_and_flip_law(c, 2.0, 2), peeled_permute_and_flip_law(c2, 2.0, 2), 0
            )
            print(f"| {c} vs {c2} | {float(eps):.6f} |")
    worst, where = 0.0, None
    for c in itertools.product(range(5), repeat=3):
        for s in itertools.product((0, 1), repeat=3):
            if any(s):
                c2 = tuple(a + b for a, b in zip(c, s))
                eps = float(
                    epsilon_from_laws(
                        peeled_permute_and_flip_law(c, 2.0, 2),
                        peeled_permute_and_flip_law(c2, 2.0, 2),
                        0,
                    )
                )
                if eps > worst:
                    worst, where = eps, (c, c2)
    print(f"\nworst add/remove pair, d = 3, counts <= 4: {where[0]} vs {where[1]}: ε = {worst:.6f}")


def power(seeds=range(10)):
    print(
        f"\n## power: seeded samplers of the same laws, seeds {seeds.start}-{seeds.stop - 1}, "
        f"alpha {ALPHA}"
    )
    batch = PeeledExponentialNoise().sample(COUNTS, 200_000, np.random.default_rng(7))
    observed = count_outcomes(batch)
    p_value = chi_square_pvalue(peeled_permute_and_flip_law(COUNTS, 2.0, 2), observed)
    print(f"PeeledExponentialNoise vs exact peeled PF law, 200k samples, seed 7: p = {p_value:.3g}")
    print(
        "| case | budget | verdicts | ε lower bound | detectable ε |\n"
        "| --- | ---: | --- | --- | --- |"
    )
    for name, _, reference, claim, relation, budget in CASES:
        results = [
            dpaudit.audit(
                reference, claim=claim, neighbours=relation, samples=budget, alpha=ALPHA, seed=seed
            )
            for seed in seeds
        ]
        verdicts = {r.verdict: sum(q.verdict == r.verdict for q in results) for r in results}
        lows = [r.epsilon_lower for r in results]
        dets = [r.detectable_epsilon for r in results]
        print(
            f"| {name} | {budget:,} | {verdicts} | {min(lows):.3f}-{max(lows):.3f} | "
            f"{min(dets):.3f}-{max(dets):.3f} |"
        )


def audits():
    print("\n## library audits (alpha 1e-3, seed 0; OpenDP draws are not seeded)")
    print(
        "| case | verdict | ε lower bound | detectable ε | samples | seconds | witness pair |\n"
        "| --- | --- | ---: | ---: | ---: | ---: | --- |"
    )
    for name, adapter, _, claim, relation, budget in CASES:
        r = dpaudit.audit(
            adapter, claim=claim, neighbours=relation, samples=budget, alpha=ALPHA, seed=0
        )
        w = r.epsilon_witness
        pair = f"{w.counts} vs {w.counts2}" if w else "-"
        print(
            f"| {name} | {r.verdict} | {r.epsilon_lower:.3f} | {r.detectable_epsilon:.3f} | "
            f"{r.samples:,} | {r.seconds:.1f} | {pair} |",
            flush=True,
        )


def workers():
    print("\n## workers (OpenDP top-k, AddRemoveUser)")
    for n in (1, 2):
        r = dpaudit.audit(OpenDPNoisyTopK(2, 2.0), samples=OPENDP_SAMPLES, alpha=ALPHA, workers=n)
        print(
            f"workers={n}: {r.verdict}, {r.samples:,} samples in {r.seconds:.1f} s "
            f"({r.samples / r.seconds:,.0f}/s)",
            flush=True,
        )


SECTIONS = {
    "throughput": throughput,
    "chi2": chi2,
    "exact": exact,
    "power": power,
    "audits": audits,
    "workers": workers,
}

if __name__ == "__main__":
    chosen = sys.argv[1:] or ["throughput", "chi2", "exact", "power", "audits"]
    for section in chosen:
        SECTIONS[section]()
