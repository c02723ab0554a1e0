"""The sweep over session budgets and policies (dpaudit.exact.session_verify)."""

import pytest

from dpaudit.exact.session_verify import DEFAULT_POLICIES, SessionSweep, verify_sessions


def test_a_small_sweep_holds_and_skips_policies_asking_more_than_the_budget():
    sweep = verify_sessions(2.0, 1e-2, d=2, max_count=2, max_total_k=1, max_queries=2)
    assert sweep.holds and not sweep.failures()
    assert 0 < sweep.worst_delta_ratio <= 1
    # k* = 1 admits the policies asking one item a query (and the scripted one): per ℓ*.
    admitted = [p for p in DEFAULT_POLICIES if getattr(p, "k", 0) <= 1]
    assert len(sweep.cases) == 2 * len(admitted)
    assert {(k, q) for k, q, _, _ in sweep.cases} == {(1, 1), (1, 2)}


def test_a_failing_case_is_named_with_its_budget_and_policy():
    held = verify_sessions(2.0, 1e-2, d=2, max_count=1, max_total_k=1, max_queries=1)
    total_k, queries, policy, result = held.cases[0]

    class Failed:  # a result whose claim fails, as verify reports one
        holds = False
        delta_at_epsilon = 2 * result.delta
        delta = result.delta

        def __str__(self):
            return "VIOLATED"

    sweep = SessionSweep(((total_k, queries, policy, Failed()), *held.cases[1:]))
    assert not sweep.holds and sweep.worst_delta_ratio == 2
    assert sweep.failures() == [f"total_k={total_k}, max_queries={queries}, {policy!r}: VIOLATED"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"max_total_k": 0}, "max_total_k"),
        ({"max_queries": 0}, "max_queries"),
        ({"policies": ()}, "policies"),
    ],
)
def test_bad_arguments_are_refused_by_name(arguments, message):
    with pytest.raises(ValueError, match=message):
        verify_sessions(1.0, 1e-2, d=2, max_count=1, **arguments)
