"""Analyst policies of pay-what-you-get sessions (seed 003 Alg. 2 line 3)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import BOTTOM
from mechanisms.analyst_policies import (
    FunctionPolicy,
    RepeatQuery,
    ScriptedQueries,
    SessionQuery,
    WidenAfterBottom,
    as_policy,
)


def test_repeat_query_asks_what_is_left_and_stops_when_spent():
    policy = RepeatQuery(k=3, kbar=5)
    assert policy.next_query((), 10, 4) == SessionQuery(3, 5)
    assert policy.next_query(((0, 1, 2),), 2, 3) == SessionQuery(2, 5)
    assert policy.next_query((), 0, 3) is None
    assert policy.next_query((), 3, 0) is None
    assert RepeatQuery.budget_only


def test_scripted_queries_follow_the_script_then_stop():
    policy = ScriptedQueries(((2, 3), (1, 1), (4, 6)))
    assert policy.next_query((), 10, 5) == SessionQuery(2, 3)
    assert policy.next_query(((BOTTOM,),), 9, 4) == SessionQuery(1, 1)
    assert policy.next_query(((BOTTOM,), (0,)), 3, 3) == SessionQuery(3, 6)  # k capped at 3
    assert policy.next_query(((BOTTOM,), (0,), (1, 2)), 1, 2) is None


def test_widen_after_bottom_depends_on_the_answers_not_only_the_budget():
    policy = WidenAfterBottom(k=2, kbar=2, step=1, max_kbar=3)
    assert not WidenAfterBottom.budget_only
    # same budgets, different answers -> different queries
    assert policy.next_query(((0, BOTTOM),), 3, 3) == SessionQuery(2, 3)
    assert policy.next_query(((0, 1),), 3, 3) == SessionQuery(2, 2)
    assert policy.next_query(((BOTTOM,), (BOTTOM,), (BOTTOM,)), 3, 3) == SessionQuery(
        2, 3
    )  # capped
    assert policy.next_query(((BOTTOM,),), 1, 3) == SessionQuery(1, 3)


def test_function_policies_are_wrapped_and_checked():
    policy = as_policy(lambda answers, k_left, q_left: (1, 2) if len(answers) < 2 else None)
    assert isinstance(policy, FunctionPolicy)
    assert policy.next_query((), 3, 3) == SessionQuery(1, 2)
    assert policy.next_query(((0,), (1,)), 1, 1) is None
    with pytest.raises(ValueError, match="must return"):
        as_policy(lambda *args: "three").next_query((), 3, 3)
    with pytest.raises(ValueError, match="policy must be"):
        as_policy(42)


@given(k=st.integers(-3, 5), kbar=st.integers(-3, 5))
@settings(max_examples=60, deadline=None)
def test_bad_queries_are_rejected_by_name(k, kbar):
    if k >= 1 and kbar >= k:
        assert SessionQuery(k, kbar) == SessionQuery(k, kbar)
        return
    with pytest.raises(ValueError, match="kbar" if k >= 1 else "k must"):
        SessionQuery(k, kbar)
    with pytest.raises(ValueError):
        RepeatQuery(k=k, kbar=kbar)


def test_bad_scripts_and_widening_are_rejected():
    with pytest.raises(ValueError, match="queries"):
        ScriptedQueries(())
    with pytest.raises(ValueError, match="queries"):
        ScriptedQueries((3,))
    with pytest.raises(ValueError, match="step"):
        WidenAfterBottom(k=1, kbar=1, step=-1)
    with pytest.raises(ValueError, match="max_kbar"):
        WidenAfterBottom(k=1, kbar=3, max_kbar=2)
