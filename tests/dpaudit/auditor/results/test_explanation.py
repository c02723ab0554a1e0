"""The one-sentence explanation of a verdict (dpaudit.auditor.results.explanation)."""

from helpers import one_witness_result

from dpaudit.auditor.results.explanation import explanation
from dpaudit.auditor.results.result import Witness

_WITNESS = Witness((1, 0), (0, 0), None, 900, 1000, 100, 1000, 0.88, 0.12, 1.9, 0.7, "add/remove")


def _result(**changes):
    return one_witness_result(_WITNESS, **{"separated": True, **changes})


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
