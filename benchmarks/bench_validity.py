"""Validity of the adaptive audit's bounds against exact laws (issue 20), over many audits.

The full sweep of tests/dpaudit/auditor/test_budget_and_power.py::
test_adaptive_bounds_are_valid_against_exact_laws (the slow step runs the first 250 audits):
audit ``i`` (0 <= i < AUDITS) is ``dpaudit.audit(mech, samples=n, seed=i, alpha=0.2,
domain_size=d)`` of the correct mechanism ``i mod 3`` of GumbelTopK(k=1, ε=1) (d 3, 12k
samples), LimitDomain(k=1, k̄=2, ε=1, δ=1e-2) (d 4, 12k) and noisy counts of GumbelTopK's
item (ε_counts = 1; d 3, 20k), with sequential confirmation, data-dependent stopping and
focus. An audit is on the wrong side when some witness's ``p_low`` is above its event's
exact P or ``q_high`` below its exact Q (an event over a learned score has no closed form and
is not checked). Prints the count per mechanism and in all, against the binomial 99.9 %
quantile of Bin(AUDITS, alpha) that the test allows.

``--detection`` runs instead the full sweep of tests/dpaudit/auditor/test_event_power.py::
test_exact_detection_over_many_passed_audits (the slow step runs seeds 0-59): for seeds
0-119, PermuteAndFlip(ε=1) and the exponential mechanism (ε=1) audited on the one pair
(2, 1, 0) vs (3, 1, 0) with 200k samples; for every PASSED audit and every event labelled
``epsilon``, the exact probability that the audit's rule flags the event when its true ε is
the event's detectable ε. Prints the audits passed (the test asks for 5/6 of them) and the
worst probability (the test asks for >= 0.9).

Usage: python benchmarks/bench_validity.py [--audits 500] [--alpha 0.2]
       python benchmarks/bench_validity.py --detection [--seeds 120]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.stats import beta as beta_law
from scipy.stats import binom

import dpaudit
import mechanisms as M
from dpaudit.auditor.events import events_hits
from dpaudit.auditor.statistics import one_sided_lower, one_sided_upper
from dpaudit.auditor.verdicts import PASSED
from dpaudit.exact import output_law, working_precision
from dpaudit.exact.value_laws import value_event_probability


def _exact_pq(mech, w):
    """The exact ``(P, Q)`` of a witness's event, None for an event over a learned score."""
    if hasattr(w.event, "encoder"):
        with working_precision():
            p = value_event_probability(mech, w.counts, w.event)
            q = value_event_probability(mech, w.counts2, w.event)
        return None if p is None or q is None else (float(p), float(q))
    law_p = output_law(mech, np.array(w.counts))
    law_q = output_law(mech, np.array(w.counts2))
    p = sum(float(v) for o, v in law_p.items() if events_hits([w.event], {o: 1})[0])
    q = sum(float(v) for o, v in law_q.items() if events_hits([w.event], {o: 1})[0])
    return p, q


def wrong_side(result, mech) -> bool:
    """Some witness's p_low above its exact P or q_high below its exact Q."""
    for w in result.witnesses:
        exact = _exact_pq(mech, w)
        if exact is not None and (w.p_low > exact[0] + 1e-12 or w.q_high < exact[1] - 1e-12):
            return True
    return False


def _flag_probability(w, p, q, claim_epsilon, claim_delta) -> float:
    """Exact probability that the audit's rule flags the event (``p_low − δ > e^ε q_high``) when
    ``P = p`` and ``Q = q``, at the event's sample sizes and level (as in the test)."""
    alpha = float(beta_law.sf(w.q_high, w.hits_q + 1, w.samples_q - w.hits_q))
    n_p, n_q = w.samples_p, w.samples_q
    spread = 12 * math.sqrt(n_q * q * (1 - q)) + 20
    ks = np.arange(max(0, int(n_q * q - spread)), min(n_q, int(n_q * q + spread)) + 1)
    targets = claim_delta + math.exp(claim_epsilon) * np.asarray(
        one_sided_upper(ks.astype(float), n_q, alpha)
    )
    lows = np.asarray(one_sided_lower(np.arange(n_p + 1, dtype=float), n_p, alpha))
    need = np.searchsorted(lows, targets, side="right")
    flagged = np.where(need <= n_p, binom.sf(need - 1, n_p, p), 0.0)
    return float(np.sum(binom.pmf(ks, n_q, q) * flagged))


def detection(seeds: int) -> None:
    """The exact detection probability of every passed audit's ``epsilon`` events."""
    one_pair = {"pairs": [([2, 1, 0], [3, 1, 0])], "restrict": True, "samples": 200_000}
    mechanisms = [M.PermuteAndFlip(epsilon=1.0), M.ExponentialMechanism(epsilon=1.0)]
    passed, audits, worst = 0, 0, 1.0
    started = time.perf_counter()
    for seed in range(seeds):
        for mechanism in mechanisms:
            result = dpaudit.audit(mechanism, seed=seed, **one_pair)
            audits += 1
            if result.verdict != PASSED:
                continue
            passed += 1
            for w, label in zip(result.witnesses, result.event_power, strict=True):
                if label != "epsilon":
                    continue
                # Q from the exact law; P at the event's detectable ε (the worst it must flag)
                law_q = output_law(mechanism, np.asarray(w.counts2))
                q = float(sum(float(v) for o, v in law_q.items() if w.event.contains(o)))
                p = min(result.claim_delta + math.exp(w.detectable_epsilon) * q, 1.0)
                chance = _flag_probability(w, p, q, result.claim_epsilon, result.claim_delta)
                worst = min(worst, chance)
    print(
        f"{passed}/{audits} audits passed (the test asks for 5/6: {math.ceil(audits * 5 / 6)}); "
        f"worst exact detection probability {worst:.4f} (the test asks for 0.9); "
        f"{time.perf_counter() - started:.0f} s"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audits", type=int, default=500)
    parser.add_argument("--alpha", type=float, default=0.2)
    parser.add_argument("--detection", action="store_true", help="the exact-detection sweep")
    parser.add_argument("--seeds", type=int, default=120, help="--detection's seeds")
    args = parser.parse_args(argv)
    if args.detection:
        detection(args.seeds)
        return
    mechs = [
        ("gumbel-top1", M.GumbelTopK(k=1, epsilon=1.0), 3, 12_000),
        ("limit-domain-1-2", M.LimitDomain(k=1, kbar=2, epsilon=1.0, delta=1e-2), 4, 12_000),
        (
            "noisy-counts-gumbel",
            M.NoisyCountsRelease(M.GumbelTopK(k=1, epsilon=1.0), epsilon_counts=1.0),
            3,
            20_000,
        ),
    ]
    wrong = dict.fromkeys((m[0] for m in mechs), 0)
    runs = dict.fromkeys((m[0] for m in mechs), 0)
    started = time.perf_counter()
    for i in range(args.audits):
        name, mech, d, samples = mechs[i % 3]
        result = dpaudit.audit(mech, samples=samples, seed=i, alpha=args.alpha, domain_size=d)
        wrong[name] += wrong_side(result, mech)
        runs[name] += 1
    seconds = time.perf_counter() - started
    for name, _, _, _ in mechs:
        print(f"{name:22s} {wrong[name]:4d}/{runs[name]:<4d} audits with a bound on the wrong side")
    total = sum(wrong.values())
    bound = binom.ppf(0.999, args.audits, args.alpha)
    verdict = "ok" if total <= bound else "TOO MANY"
    print(
        f"in all: {total}/{args.audits} (alpha {args.alpha}; the 99.9 % quantile of "
        f"Bin({args.audits}, {args.alpha}) is {bound:.0f}: {verdict}); {seconds:.0f} s"
    )


if __name__ == "__main__":
    main()
