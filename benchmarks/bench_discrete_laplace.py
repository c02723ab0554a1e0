"""Speed of the exact geometric sampler behind discrete Laplace noise, against counting trials.

Run: python benchmarks/bench_discrete_laplace.py [--quick]

Both routes draw G with ``P(G = g) = (1 − r) r^g`` exactly (``r = numerator / 2^53``):
``mechanisms.discrete_laplace.geometric_draws`` inverts one 64-bit word against integer thresholds;
the baseline, written out here (the route it replaced), counts Bernoulli(r) trials on 53-bit
integers until the first failure (``1/(1 − r)`` words a draw, one vector round per success). Each row times both in this run
(best of 3, wall clock, noisy on a shared machine) and prints the draws per second, the ratio,
and the words a draw reads.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_laplace import best_of

from mechanisms.discrete_laplace import RATIO_BITS, discrete_laplace_ratio, geometric_draws


def counted_trials(numerator: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """The baseline: G counts successes of ``U53 < numerator`` before the first failure.

    ``U53`` is the raw word's top 53 bits (what ``rng.integers(0, 2^53)`` returns on PCG64),
    compared as ``word < numerator · 2^11``: the sampler this module used before.
    """
    raw, below = rng.bit_generator.random_raw, np.uint64(numerator << (64 - RATIO_BITS))
    out = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    successes = 0
    while active.size:
        success = raw(active.size) < below
        if successes:
            out[active[~success]] = successes
        active = active[success]
        successes += 1
    return out


class _CountingWords:
    """A generator stand-in that counts the 64-bit words the sampler reads."""

    bit_generator = None

    def __init__(self, seed: int):
        self._rng = np.random.default_rng(seed)
        self.words = 0

    def integers(self, low, high, size, dtype):
        self.words += size
        return self._rng.integers(low, high, size=size, dtype=dtype)


def calls_of(sampler, numerator: int, batch: int, calls: int):
    """A thunk: ``calls`` calls of ``sampler(numerator, batch, rng)`` on a seeded generator."""
    rng = np.random.default_rng(1)
    return lambda: [sampler(numerator, batch, rng) for _ in range(calls)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer draws per row")
    args = parser.parse_args()
    total = 200_000 if args.quick else 2_000_000
    print(f"{total:,} draws a row; batch = draws per call (the audits call with 1e4-1e6)")
    print(
        f"{'ε/Δ':>7} {'batch':>9} {'inversion /s':>13} {'trials /s':>11} {'ratio':>7} "
        f"{'words/draw':>11} {'trial words':>12}"
    )
    for epsilon in (0.01, 0.025, 0.1, 0.5, 2.0):
        numerator = discrete_laplace_ratio(epsilon)
        r = numerator / 2**RATIO_BITS
        counter = _CountingWords(0)
        geometric_draws(numerator, 100_000, counter)  # type: ignore[arg-type]
        for batch in (10_000, 1_000_000):
            calls = max(1, total // batch)
            inversion = best_of(calls_of(geometric_draws, numerator, batch, calls))
            trials = best_of(calls_of(counted_trials, numerator, batch, calls))
            draws = calls * batch
            print(
                f"{epsilon:>7g} {batch:>9,} {draws / inversion:>13,.0f} {draws / trials:>11,.0f} "
                f"{trials / inversion:>6.1f}× {counter.words / 100_000:>11.5f} {1 / (1 - r):>12.1f}"
            )


if __name__ == "__main__":
    main()
