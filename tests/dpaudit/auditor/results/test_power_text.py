"""The power and futility sentences (dpaudit.auditor.results.power_text)."""

import math

from helpers import one_witness_result

from dpaudit.auditor.results.power_text import (
    events_text,
    futility_text,
    needed_text,
    power_sentence,
)
from dpaudit.auditor.results.result import Witness

_WITNESS = Witness(
    (1, 0), (0, 0), None, 500, 1000, 300, 1000, 0.4, 0.3, 0.0, 0.0, "x", 1.1, math.inf
)


def _result(**changes):
    fields = {"violation": False, "detectable_epsilon": 1.1, "separated": True}
    return one_witness_result(_WITNESS, **{**fields, **changes})


def test_the_power_sentence_names_the_events_with_power():
    assert power_sentence(_result()) == (
        "at every Q in the event's confidence interval it would have flagged, with probability "
        "90%, a true ε of 1.1 or more (<= 1.25 × the claim) on witnesses[0]"
    )
    assert events_text([0, 2]) == "witnesses[0, 2]"


def test_futility_and_the_budget_power_needs():
    assert futility_text(_result()) is None
    looks = {"sizes": [1, 2, 4], "futility": {"look": 1, "flag_chance": 0.01, "lacking": "delta"}}
    text = futility_text(_result(evidence={"confirmation_looks": looks}))
    assert text.startswith("for futility after look 2 of 3")
    assert text.endswith("would have left δ short of power")
    assert needed_text(_result(samples=0)) == "far more samples"
