"""The one-sentence explanation of a verdict (dpaudit.auditor.results.explanation)."""

import dataclasses

from dpaudit.auditor.results.explanation import explanation
from dpaudit.auditor.results.result import AuditResult, Witness


def _result(**changes):
    w = Witness((1, 0), (0, 0), None, 900, 1000, 100, 1000, 0.88, 0.12, 1.9, 0.7, "add/remove")
    result = AuditResult(
        mechanism="m",
        claim_epsilon=1.0,
        claim_delta=0.0,
        neighbours="add/remove one user",
        epsilon_lower=1.9,
        delta_lower=0.7,
        violation=True,
        alpha=0.05,
        epsilon_witness=w,
        delta_witness=w,
        samples=2_000,
        seconds=1.0,
        pairs_screened=1,
        events_confirmed=1,
        witnesses=(w,),
        separated=True,
    )
    return dataclasses.replace(result, **changes)


def test_a_violation_names_the_claim_and_how_to_recheck_it():
    text = explanation(_result(restricted=True))
    assert text.startswith("With confidence 0.95 the mechanism is NOT (1, 0)-DP")
    assert "beyond the claim on the pairs given" in text and "dpaudit recheck" in text


def test_a_curve_violation_names_the_curve_and_the_epsilon():
    curve = {"profile": {"kind": "zcdp", "rho": 0.5}, "epsilon": 1.5, "witness": 0}
    evidence = {"claim_curve": {**curve, "excess": 0.2, "delta_allowed": 0.01}}
    text = explanation(_result(evidence=evidence))
    assert "claimed curve δ(ε) (0.5-zCDP): at ε = 1.5 witnesses[0]" in text
    assert "P − e^ε Q >= 0.21 > δ(ε) = 0.01" in text


def test_inconclusive_says_why_and_what_to_try():
    unseparated = explanation(_result(violation=False, separated=False))
    assert unseparated.startswith("Inconclusive: no violation found, but no confirmed event")
    assert "a second test at level α = 0.05" in unseparated
    interrupted = explanation(_result(violation=False, interrupted=True))
    assert "interrupted before confirmation finished" in interrupted
