"""How a result reads: its summary, one-line repr, Jupyter table and one-sentence explanation.

Through [`AuditResult`][dpaudit.auditor.AuditResult]'s own faces (``str``, ``repr``,
``_repr_html_``, ``explanation``, ``headline_witness``), which the text module writes.
"""

import dataclasses

import pytest

from dpaudit.auditor import AuditResult, Witness
from dpaudit.auditor.values.outcome_events import ItemAt

STRONG = Witness(
    (0, 3), (1, 2), ItemAt(0, 0), 900, 1000, 100, 1000, 0.87, 0.13, 1.9, 0.52, "explicit", 1.1, 0.01
)
WEAK = Witness(
    (0, 3), (1, 3), ItemAt(1, 0), 520, 1000, 480, 1000, 0.47, 0.53, 0.0, 0.0, "random", 1.2, 0.02
)


def _result(**given) -> AuditResult:
    fields = {
        "mechanism": "Demo(epsilon=1)",
        "claim_epsilon": 1.0,
        "claim_delta": 1e-6,
        "neighbours": "add/remove one user (unrestricted)",
        "epsilon_lower": STRONG.epsilon_lower,
        "delta_lower": STRONG.delta_lower,
        "violation": True,
        "alpha": 0.05,
        "epsilon_witness": STRONG,
        "delta_witness": STRONG,
        "samples": 2_000_000,
        "seconds": 1.5,
        "pairs_screened": 7,
        "events_confirmed": 2,
        "seed": 3,
        "witnesses": (STRONG, WEAK),
        "separated": True,
    }
    return AuditResult(**(fields | given))


def test_the_summary_lists_claim_verdict_bounds_witness_and_budget():
    result = _result()
    lines = str(result).splitlines()
    assert lines[0] == "audit of Demo(epsilon=1)"
    assert lines[1] == "  claim:      (1, 1e-06)-DP, add/remove one user (unrestricted)"
    assert lines[2] == "  verdict:    VIOLATION (confidence 0.95)"
    assert "  ε lower bound at δ=1e-06: 1.9" in lines
    assert "  pair:       [0, 3] vs [1, 2]  (explicit)" in lines
    assert any(
        line.startswith("  counts:     900/1000 (P̂=0.9, ≥0.87) vs 100/1000 (Q̂=0.1, ≤0.13)")
        for line in lines
    )
    budget = next(line for line in lines if line.startswith("  budget:"))
    assert (
        budget
        == "  budget:     2,000,000 samples, 1.50 s, 7 pairs screened, 2 events confirmed, seed 3"
    )
    assert lines[-1] == f"  meaning:    {result.explanation}"


def test_the_budget_line_says_restricted_interrupted_and_what_was_asked():
    result = _result(
        restricted=True, interrupted=True, samples_requested=3_000_000, violation=False
    )
    budget = next(line for line in str(result).splitlines() if line.startswith("  budget:"))
    assert "2,000,000 samples (of 3,000,000 asked)" in budget
    assert budget.endswith(", restricted to the pairs given, INTERRUPTED (partial result)")


def test_a_violation_says_not_dp_with_its_confidence_and_scope():
    text = _result().explanation
    assert text.startswith("With confidence 0.95 the mechanism is NOT (1, 1e-06)-DP: ")
    assert "`dpaudit recheck`" in text and "pairs given" not in text
    assert "on the pairs given" in _result(restricted=True).explanation


def test_inconclusive_without_separation_says_why_and_what_to_try():
    result = _result(violation=False, separated=False)
    assert result.verdict == "inconclusive"
    text = result.explanation
    assert text.startswith(
        "Inconclusive: no violation found, but no confirmed event told the two histograms"
    )
    assert "Try more samples" in text and "`dpaudit verify`" in text


def test_an_interrupted_run_says_so():
    text = _result(violation=False, interrupted=True).explanation
    assert text.startswith("Inconclusive: no violation found, but the run was interrupted")


def test_a_pass_names_its_power_and_its_limits():
    covered = dataclasses.replace(WEAK, detectable_epsilon=1.1, detectable_delta=1e-6)
    result = _result(
        violation=False,
        epsilon_lower=0.0,
        delta_lower=0.0,
        epsilon_witness=covered,
        delta_witness=covered,
        witnesses=(covered,),
        detectable_epsilon=1.1,
        detectable_delta=1e-6,
    )
    assert result.verdict == "passed", result.power_shortfall
    text = result.explanation
    assert text.startswith(
        "No violation, and the audit had power on each of the 1 confirmed events"
    )
    assert text.endswith("use `dpaudit verify` for exhaustive exact checks on small domains.")


def test_an_epsilon_shortfall_names_the_detectable_epsilon():
    result = _result(
        violation=False,
        detectable_epsilon=3.0,
        witnesses=(),
        epsilon_witness=WEAK,
        delta_witness=WEAK,
    )
    assert result.power_shortfall == "epsilon"
    assert "was ε = 3, above 1.25 × the claim" in result.explanation


def test_repr_is_one_line_with_the_headline_witness():
    text = repr(_result())
    assert "\n" not in text
    assert text.startswith("<AuditResult VIOLATION: ") and text.endswith(">")
    for part in (
        "VIOLATION",
        "Demo(epsilon=1)",
        "claim (1, 1e-06)",
        "ε ≥ 1.9 at confidence 0.95",
        "2,000,000 samples",
        "witness [0, 3] vs [1, 2]",
    ):
        assert part in text, part


def test_the_table_escapes_the_mechanism_and_shows_the_verdict():
    page = _result(mechanism="<Demo & co>")._repr_html_()
    assert "&lt;Demo &amp; co&gt;" in page and "<Demo & co>" not in page
    assert "VIOLATION" in page and "2,000,000 samples" in page


def test_the_headline_witness_is_the_epsilon_witness_for_readable_events():
    assert _result().headline_witness is STRONG
    assert _result(epsilon_witness=None, witnesses=()).headline_witness is None


@pytest.mark.parametrize("lacking", ["epsilon", "delta", "separation"])
def test_a_futility_stop_is_told_with_its_look(lacking):
    evidence = {
        "confirmation_looks": {
            "sizes": [100, 200, 400],
            "futility": {"look": 1, "flag_chance": 0.001, "lacking": lacking},
        }
    }
    result = _result(violation=False, separated=False, evidence=evidence)
    stopped = next(line for line in str(result).splitlines() if line.startswith("  stopped:"))
    assert stopped.startswith(
        "  stopped:    for futility after look 2 of 3: the looks ahead could flag no event"
    )
    assert "(probability <= 0.001 even at its confidence limits)" in stopped
    assert "Confirmation stopped early for futility after look 2 of 3" in result.explanation
    assert "stopped:" not in str(_result(violation=False, separated=False))
