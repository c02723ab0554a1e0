"""Speed of the accounting solvers (mechanisms.accounting / mechanisms.tail_bounds).

Plain script: ``python benchmarks/bench_accounting.py``. Prints one table: time per call,
calls per second, and the ratio to a reference where there is one (the paper's 1e-4
stepping for Ind, dp_accounting for the analytic Gaussian, the mpmath evaluation for the
optimal-composition δ). Timings are best-of-``repeat`` wall-clock and depend on the load
of the machine.
"""

from __future__ import annotations

import math
import sys
import time

from mechanisms import accounting as A


def per_call(fn, repeat=5, min_time=0.2):
    """Best-of-``repeat`` seconds per call, each repeat running at least ``min_time``."""
    best = math.inf
    for _ in range(repeat):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        best = min(best, elapsed / calls)
    return best


def ind_by_stepping(epsilon_comp, k, delta_comp):
    """seed 001 App. C Alg. 5 as printed (precision p = 1e-4), float arithmetic."""
    epsilon, t_min, p = epsilon_comp / k, 0.0, 0.0001
    while t_min <= epsilon_comp:
        epsilon = epsilon + p
        x = epsilon / (1 - math.exp(-epsilon))
        t_min = min(
            k * epsilon,
            k * (x - 1 - math.log(x)) + epsilon * math.sqrt(k / 2 * math.log(1 / delta_comp)),
        )
    return epsilon - p


def main() -> int:
    rows = []

    def add(name, fn, reference_name=None, reference=None, note=""):
        t = per_call(fn)
        ratio = ""
        if reference is not None:
            ratio = f"{per_call(reference) / t:8.2f}x vs {reference_name}"
        rows.append((name, t, ratio, note))

    for eps_total, k in [(1.0, 50), (4.0, 100)]:
        ours = A.individual_epsilon(eps_total, k, 1e-6)
        stepped = ind_by_stepping(eps_total, k, 1e-6)
        add(
            f"Ind({eps_total}, k={k}) brentq",
            lambda e=eps_total, k=k: A.individual_epsilon(e, k, 1e-6),
            "paper stepping",
            lambda e=eps_total, k=k: ind_by_stepping(e, k, 1e-6),
            note=f"eps {ours:.8f} vs stepping {stepped:.8f}",
        )

    add("restricted_domain_delta_q paper", lambda: A.restricted_domain_delta_q(1e-6))
    add("restricted_domain_delta_q exact", lambda: A.restricted_domain_delta_q(1e-6, "exact"))
    add("top_stable_delta_q paper", lambda: A.top_stable_delta_q(1.0, 1e-6, 100))
    add("log_laplace_difference_tail", lambda: A.log_laplace_difference_tail(0.3, 0.37, 50.0))

    try:
        from dp_accounting.pld import accountant, common

        params = common.DifferentialPrivacyParameters(1.0, 1e-5)
        add(
            "analytic_gaussian_sigma(1, 1e-5)",
            lambda: A.analytic_gaussian_sigma(1.0, 1e-5),
            "dp_accounting",
            lambda: accountant.get_smallest_gaussian_noise(params, 1, 1.0),
        )
    except ImportError:  # dp_accounting is a test extra
        add("analytic_gaussian_sigma(1, 1e-5)", lambda: A.analytic_gaussian_sigma(1.0, 1e-5))

    for k in (100, 1000):
        add(
            f"optimal_composition_delta k={k}",
            lambda k=k: A.optimal_composition_delta(0.1, k, 0.3 * k * 0.1),
            "mpmath exact",
            lambda k=k: A.optimal_composition_delta_mp(0.1, k, 0.3 * k * 0.1),
        )
        add(
            f"optimal_composition_epsilon k={k}",
            lambda k=k: A.optimal_composition_epsilon(0.1, k, 1e-6),
        )

    width = max(len(r[0]) for r in rows)
    print(
        f"{'function':<{width}}  {'us/call':>10}  {'calls/s':>10}  ratio (ref time / ours)   note"
    )
    for name, t, ratio, note in rows:
        print(f"{name:<{width}}  {t * 1e6:10.1f}  {1 / t:10.0f}  {ratio:<24} {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
