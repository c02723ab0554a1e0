"""What gives an audit its power (dpaudit.auditor.results.power)."""

import math

from dpaudit.auditor.results.power import (
    DEFAULT_POWER_FACTOR,
    EVENT_POWER_LABELS,
    delta_within_power,
    event_power,
    events_shortfall,
    power_shortfall,
)
from dpaudit.auditor.results.witness import Witness


def _witness(
    hits_p, hits_q, n, det_eps=math.inf, det_delta=math.inf, q_low=0.0, p_high=1.0, q_high=1.0
):
    return Witness(
        (1,),
        (0,),
        None,
        hits_p,
        n,
        hits_q,
        n,
        0.0,
        q_high,
        0.0,
        0.0,
        "",
        det_eps,
        det_delta,
        q_low,
        p_high,
    )


def test_each_event_gets_the_first_label_that_holds():
    eps, delta, factor = 1.0, 1e-5, DEFAULT_POWER_FACTOR
    witnesses = [
        _witness(500, 300, 1_000, det_eps=1.1, q_high=0.3),  # ε power within 1.25 claims
        _witness(500, 0, 1_000, det_delta=1e-5),  # δ power
        _witness(900, 800, 1_000, q_low=0.5),  # ln 2 <= 1.25: no room for ε
        _witness(900, 800, 1_000, q_low=0.1, p_high=0.2),  # ln(0.2/0.1) <= 1.25
        _witness(9, 1, 100),  # drawn less than the others: left at an earlier look
        _witness(900, 1, 1_000),  # nothing
    ]
    labels = event_power(witnesses, eps, delta, factor)
    assert labels == ("epsilon", "delta", "bounded", "below", "left", "none")
    assert set(labels) <= set(EVENT_POWER_LABELS)


def test_shortfalls_name_what_lacks_power():
    assert events_shortfall(("epsilon", "none"), 0.0, 1e-5, 1.25, False) == "epsilon"
    assert events_shortfall((), 0.0, 1e-5, 1.25, False) == "epsilon"
    assert events_shortfall(("epsilon",), 1e-4, 1e-5, 1.25, False) == "delta"
    assert events_shortfall(("epsilon",), 1e-4, 1e-5, 1.25, True) is None
    assert power_shortfall(1.3, 0.0, 1.0, 1e-5, 1.25, False) == "epsilon"
    assert delta_within_power(math.inf, 0.0, 1.25)
    assert not delta_within_power(1.3e-5, 1e-5, 1.25)
