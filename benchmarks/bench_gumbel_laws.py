"""Speed of the exact Gumbel-family laws (dpaudit/exact/gumbel_laws.py).

Prints, per mechanism, the time per law over every histogram on d items with
counts <= C (cold: memo cleared first; warm: second pass), laws per second,
and the ratio to PeelingEM. Timings on a shared machine are noisy.

    python benchmarks/bench_gumbel_laws.py [d] [max_count]
"""

from __future__ import annotations

import itertools
import sys
import time

import numpy as np

import mechanisms as M
from dpaudit.exact import gumbel_laws, output_law


def _histograms(d: int, c: int):
    return [np.array(h) for h in itertools.product(range(c + 1), repeat=d)]


def _time_all(mech, hists) -> float:
    start = time.perf_counter()
    for h in hists:
        output_law(mech, h)
    return time.perf_counter() - start


def main(d: int = 5, c: int = 3) -> None:
    hists = _histograms(d, c)
    mechs = [
        M.PeelingEM(k=2, epsilon=1.0),
        M.ExponentialMechanism(epsilon=1.0),
        M.GumbelTopK(k=2, epsilon=1.0),
        M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3),
        M.StrictLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3),
        M.LimitDomainOptimizedKbar(k=2, kbar_max=4, epsilon=1.0, delta=1e-3),
    ]
    print(f"{len(hists)} histograms, d={d}, counts <= {c}")
    print(
        f"{'mechanism':<28}{'cold ms/law':>12}{'warm ms/law':>12}{'laws/s warm':>13}"
        f"{'vs PeelingEM':>14}"
    )
    base = None
    for mech in mechs:
        gumbel_laws._limit_domain_core.cache_clear()
        cold = _time_all(mech, hists)
        warm = _time_all(mech, hists)
        base = base or warm
        n = len(hists)
        print(
            f"{type(mech).__name__:<28}{1e3 * cold / n:>12.3f}{1e3 * warm / n:>12.3f}"
            f"{n / warm:>13.0f}{warm / base:>14.2f}"
        )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
