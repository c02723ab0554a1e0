"""One confirmed event of an audit (dpaudit.auditor.results.witness)."""

import json
import math

from golden.cases import path

from dpaudit.auditor.results.witness import Witness


def _witnesses(name):
    data = json.loads(path(name).read_text(encoding="utf-8"))
    return [Witness.from_dict(w) for w in data["witnesses"]]


def test_a_witness_reads_back_from_its_dict():
    for name in ("selection_limit_domain", "value_noisy_counts"):
        for witness in _witnesses(name):
            assert Witness.from_dict(witness.to_dict()) == witness


def test_the_repr_names_the_event_briefly_even_for_a_value_event():
    # A value event's full field dump lists every edge of its encoder; the repr names it as the
    # report does, with the pair and the bounds.
    witness = _witnesses("value_noisy_counts")[0]
    text = repr(witness)
    assert len(text) < 400 < len(str(witness.event.to_dict())), text
    assert str(list(witness.counts)) in text and str(list(witness.counts2)) in text
    assert f"{witness.epsilon_lower:.4g}" in text and witness.describe_event(limit=3) in text


def test_epsilon_power_needs_a_detectable_epsilon_some_mechanism_can_carry():
    witness = _witnesses("selection_limit_domain")[0]
    q_high = 0.01  # P <= 1 caps ln(P/Q) at ln(100) = 4.6 on this event
    carried = Witness(**{**vars(witness), "q_high": q_high, "detectable_epsilon": 4.0})
    beyond = Witness(**{**vars(witness), "q_high": q_high, "detectable_epsilon": 5.0})
    never = Witness(**{**vars(witness), "detectable_epsilon": math.inf})
    assert carried.has_epsilon_power and not beyond.has_epsilon_power
    assert not never.has_epsilon_power
