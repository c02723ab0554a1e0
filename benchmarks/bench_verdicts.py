"""The default audit on correct mechanisms: verdict, power on ε and δ, samples and seconds.

For a fixed list of correct mechanisms (below) and seeds 0-2,
``dpaudit.audit(mech, seed=s, **options)`` with only the options a mechanism needs (the
corpus entries' ``audit_options``) and every other option at its default. Every mechanism
is correct, so a VIOLATION is a false alarm; an INCONCLUSIVE says which half lacked power:

* ``ε`` — the detectable ε is above ``power_factor`` × the claimed ε;
* ``δ`` — the detectable δ (at the claimed ε) is above ``power_factor`` × the claimed δ;
* ``ε+δ`` — both; ``sep`` — no confirmed event told its two histograms apart.

The summary also counts the INCONCLUSIVE for δ whose claimed δ is beyond the reach of the
confirmation's looks (one pair at the last look could not resolve ``power_factor`` × the claim:
``confirmation_looks.delta_within_reach``), and the INCONCLUSIVE rate among the other audits.

The list: the correct twins of :data:`dpaudit.corpus.CORPUS` that release a selection (the
value releases' twins with ``--values``), among them Lyu–Su–Li Alg. 1 (the correct sparse
vector at ε = 0.1, ``svt-lyu-alg1``); a correct noisy histogram at ε = 0.1 (the corpus's
discrete Laplace histogram, ``histogram-dpsniper``, and one discrete Laplace count); the
correct twins of the threshold bugs of :mod:`dpaudit.catalog.threshold`; and reference
mechanisms of :mod:`mechanisms` at the claims their tests use; with ``--values``, the correct
twins of the catalog's value releases (``rnm-releases-noisy-max-correct``,
``noisy-counts-half-noise-correct``). Seconds are wall-clock on a
shared machine.

With ``--epsilon-only`` every audit accepts a pass on ε alone, as a reviewer does explicitly
(``dpaudit audit --epsilon-only``) for a claimed δ no sampling budget can resolve: the rate of
INCONCLUSIVE left is then the one a reviewer meets after that choice.

Usage: python benchmarks/bench_verdicts.py [--seeds 0 1 2] [--only NAME ...] [--budget B]
[--values] [--epsilon-only] [--workers N] [--list]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import dpaudit
import mechanisms as M
from dpaudit.catalog import catalog_entry
from dpaudit.corpus import CORPUS

_SHORT = {"violation": "VIOL", "passed": "PASS", "inconclusive": "INC"}


@dataclass(frozen=True)
class Case:
    """One correct mechanism: a name, how to build it, the options its audit needs."""

    name: str
    build: Callable
    options: dict = field(default_factory=dict)
    values: bool = False


def _corpus_twins() -> list[Case]:
    cases, seen = [], set()
    for entry in CORPUS:
        if entry.twin is None:
            continue
        twin = entry.twin()
        if twin.name in seen:
            continue
        seen.add(twin.name)
        cases.append(Case(twin.name, entry.twin, dict(entry.audit_options), twin.values > 0))
    return cases


def _threshold_twins() -> list[Case]:
    # The correct mechanisms of dpaudit.catalog.threshold's bugs, at the bugs' parameters.
    return [
        Case("topstable-k1-kbar3", lambda: M.TopStable(k=1, kbar=3, epsilon=1.0, delta=1e-2)),
        Case("topstable-k1-kbar2", lambda: M.TopStable(k=1, kbar=2, epsilon=1.0, delta=1e-3)),
        Case(
            "restricted-gumbel-k1",
            lambda: M.RestrictedGumbel(
                k=1, kbar=2, epsilon=0.5, delta=0.0, epsilon_r=0.5, delta_r=1e-3
            ),
        ),
        Case("fixed-threshold", lambda: M.FixedThreshold(kbar=2, epsilon=1.0, delta=1e-3)),
    ]


def _reference() -> list[Case]:
    # The claims of tests/dpaudit/auditor/test_audit_slow.py's correct mechanisms.
    return [
        Case("gumbel-top2", lambda: M.GumbelTopK(k=2, epsilon=1.0)),
        Case("exponential", lambda: M.ExponentialMechanism(epsilon=1.0)),
        Case("peeling-em-top2", lambda: M.PeelingEM(k=2, epsilon=0.7)),
        Case("report-noisy-max", lambda: M.ReportNoisyMax(epsilon=1.0)),
        Case("permute-and-flip", lambda: M.PermuteAndFlip(epsilon=1.0)),
        Case("laplace-top2", lambda: M.LaplaceTopK(k=2, epsilon=1.0)),
        Case("limit-domain-2-3", lambda: M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)),
        Case("limit-domain-3-10", lambda: M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=1e-6)),
        Case("topstable-k2-kbar4", lambda: M.TopStable(k=2, kbar=4, epsilon=1.0, delta=1e-3)),
        Case(
            "restricted-gumbel-k2",
            lambda: M.RestrictedGumbel(
                k=2, kbar=4, epsilon=1.0, delta=1e-3, epsilon_r=1.0, delta_r=1e-3
            ),
        ),
        Case(
            "sparse-vector-0.1",
            lambda: M.SparseVector(threshold=3.0, epsilon1=0.05, epsilon2=0.05),
            {"domain_size": 10},
        ),
    ]


#: Catalog entries whose correct twins release values: tests/dpaudit/auditor/test_value_audits.py
#: requires a PASS at the default budget on seeds 0-4 (noisy-counts: 0-2, and INCONCLUSIVE on 3
#: and 4, issue 42); the slow step runs seed 0 (and seed 3 of noisy-counts). The sweep:
#: ``--values --only rnm-releases-noisy-max-correct noisy-counts-half-noise-correct --seeds 0 1 2
#: 3 4``.
_CATALOG_VALUE_TWINS = ("rnm-releases-noisy-max", "noisy-counts-half-noise")


def _catalog_twins() -> list[Case]:
    return [
        Case(f"{name}-correct", catalog_entry(name).correct, values=True)
        for name in _CATALOG_VALUE_TWINS
    ]


def _histograms() -> list[Case]:
    # A correct noisy histogram at ε = 0.1: value releases, audited on the value path.
    return [Case("noisy-count-0.1", lambda: M.NoisyCount(epsilon=0.1), values=True)]


#: Corpus twins that are value releases but belong to the default list (the issue's
#: correct noisy histogram at ε = 0.1).
_REQUIRED_VALUES = {"histogram-dpsniper"}


def cases(*, values: bool) -> list[Case]:
    """The benchmark's list: value releases only when ``values`` or required by name."""
    every = _corpus_twins() + _threshold_twins() + _reference() + _histograms() + _catalog_twins()
    return [c for c in every if values or not c.values or c.name in _REQUIRED_VALUES]


def lacking(result) -> str:
    """Which half lacked power: ``ε``, ``δ``, ``ε+δ``, ``sep`` (``-`` when not INC)."""
    if result.verdict != "inconclusive":
        return "-"
    if result.interrupted:
        return "int"
    on_epsilon = not result.detectable_epsilon <= result.power_factor * result.claim_epsilon
    on_delta = not result.epsilon_only and not result.delta_resolved
    halves = "+".join(h for h, short in (("ε", on_epsilon), ("δ", on_delta)) if short)
    if not result.separated:
        return "sep" + (f"+{halves}" if halves else "")
    return halves or "?"


def delta_out_of_reach(result) -> bool:
    """INCONCLUSIVE for δ with a claimed δ that even one pair drawn to the last look could
    not resolve (``confirmation_looks.delta_within_reach`` false): a budget question, which
    the result answers with the δ it could resolve and the budget the claim needs."""
    looks = result.evidence.get("confirmation_looks") or {}
    return (
        result.verdict == "inconclusive"
        and "δ" in lacking(result)
        and result.claim_delta > 0
        and looks.get("delta_within_reach") is False
    )


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--only", nargs="+", default=None, help="case names to run")
    parser.add_argument("--budget", default=None, help="samples or seconds, e.g. 2e7 or 60s")
    parser.add_argument("--values", action="store_true", help="add the value releases' twins")
    parser.add_argument(
        "--epsilon-only",
        action="store_true",
        help="accept a pass on ε alone (the reviewer's explicit choice, recorded in the result)",
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--list", action="store_true", help="print the case names and stop")
    args = parser.parse_args(argv)
    selected = cases(values=args.values)
    if args.list:
        print("\n".join(c.name for c in selected))
        return
    if args.only is not None:
        unknown = set(args.only) - {c.name for c in selected}
        if unknown:
            parser.error(f"unknown --only {sorted(unknown)}; see --list (and --values)")
        selected = [c for c in selected if c.name in args.only]
    header = (
        f"{'mechanism':38s} {'claim ε,δ':>16s} seed {'verdict':7s} {'ε lower':>8s} "
        f"{'det ε':>7s} {'det δ':>9s} {'lacks':>5s} {'samples':>9s} {'s':>5s}"
    )
    print(header)
    print("-" * len(header))
    counts = {"passed": 0, "inconclusive": 0, "violation": 0}
    short_of: dict[str, int] = {}
    out_of_reach = 0
    total = 0.0
    for case in selected:
        for seed in args.seeds:
            options = dict(case.options)
            if args.budget is not None:
                options["budget"] = args.budget
            if args.epsilon_only:
                options["epsilon_only"] = True
            started = time.perf_counter()
            result = dpaudit.audit(case.build(), seed=seed, workers=args.workers, **options)
            seconds = time.perf_counter() - started
            total += seconds
            counts[result.verdict] += 1
            if result.verdict == "inconclusive":
                short_of[lacking(result)] = short_of.get(lacking(result), 0) + 1
                out_of_reach += delta_out_of_reach(result)
            print(
                f"{case.name:38s} {result.claim_epsilon:>6.4g},{result.claim_delta:<9.3g} "
                f"{seed:4d} {_SHORT[result.verdict]:7s} {result.epsilon_lower:8.4g} "
                f"{_fmt(result.detectable_epsilon):>7s} {_fmt(result.detectable_delta):>9s} "
                f"{lacking(result):>5s} {result.samples:9d} {seconds:5.1f}",
                flush=True,
            )
    audits = sum(counts.values())
    print("-" * len(header))
    rate = counts["inconclusive"] / audits if audits else 0.0
    print(
        f"INCONCLUSIVE: {counts['inconclusive']}/{audits} = {rate:.1%}; "
        f"PASSED {counts['passed']}; audit seconds in all: {total:.0f}"
    )
    if short_of:
        print("INCONCLUSIVE for: " + ", ".join(f"{k} {v}" for k, v in sorted(short_of.items())))
        within = audits - out_of_reach
        rest = counts["inconclusive"] - out_of_reach
        print(
            f"of them, claimed δ beyond the schedule's reach: {out_of_reach}; INCONCLUSIVE among "
            f"the others: {rest}/{within} = {rest / within if within else 0.0:.1%}"
        )
    print(f"violations (false alarms): {counts['violation']}")


if __name__ == "__main__":
    main()
