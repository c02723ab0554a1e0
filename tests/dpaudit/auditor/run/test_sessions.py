"""Auditing interactive sessions: dpaudit.audit_session (a session factory plus a policy)."""

import numpy as np
import pytest

import dpaudit
import mechanisms as M
from dpaudit.auditor.run.sessions import SessionBlackBox, session_transcript_mechanism
from dpaudit.catalog.sessions import FreeBottomSession
from mechanisms.analyst_policies import RepeatQuery

PARAMS = {"total_k": 1, "max_queries": 5, "epsilon": 1.0, "delta": 1e-6}
PAIR = [([15, 0], [16, 0])]


def test_free_bottom_session_is_flagged_and_the_fixed_one_is_not():
    # alpha = 1e-6 on the correct session: a false VIOLATION has probability <= 1e-6. The broken
    # one's exact ε at δ = 1e-5 is 3.31 on this pair (tests/dpaudit/exact/test_session_laws.py).
    policy = RepeatQuery(k=1, kbar=1)
    broken = dpaudit.audit_session(
        lambda: FreeBottomSession(**PARAMS), policy, pairs=PAIR, samples=400_000, seed=3, alpha=1e-6
    )
    assert broken.violation and 1.0 < broken.epsilon_lower <= 3.31
    fixed = dpaudit.audit_session(
        lambda: M.MultiLimitDomain(**PARAMS),
        policy,
        pairs=PAIR,
        samples=400_000,
        seed=3,
        alpha=1e-6,
    )
    assert not fixed.violation


def test_sessions_with_a_transcript_mechanism_are_sampled_batched():
    mech = session_transcript_mechanism(lambda: M.MultiLimitDomain(**PARAMS), RepeatQuery(1, 1))
    assert isinstance(mech, M.MultiLimitDomainTranscript)
    assert mech.claim == M.MultiLimitDomain(**PARAMS).claim


def test_any_session_object_can_be_driven_query_by_query():
    # The general path drives session.query() itself; its law must be the batched one's.
    # 4,000 transcripts each, two-sample chi-square at p < 1e-6: false failure <= 1e-6.
    from scipy.stats import chi2_contingency

    def factory():
        return FreeBottomSession(**PARAMS)

    general = session_transcript_mechanism(factory, RepeatQuery(1, 1), width=6)
    batched = session_transcript_mechanism(factory, RepeatQuery(1, 1))
    assert isinstance(general, SessionBlackBox)
    a = M.count_outcomes(general.sample([15, 0], 4_000, np.random.default_rng(1)))
    b = M.count_outcomes(batched.sample([15, 0], 4_000, np.random.default_rng(2)))
    keys = sorted(set(a) | set(b))
    table = np.array([[a.get(k, 0) for k in keys], [b.get(k, 0) for k in keys]])
    assert chi2_contingency(table).pvalue > 1e-6


def test_a_session_that_does_not_report_its_budget_is_driven_until_it_refuses():
    # A bare session (query() only, no remaining_k / remaining_queries): the policy asks as if
    # unlimited and the session's own BudgetExhaustedError ends the transcript.
    class ThreeQueries:
        def __init__(self):
            self.asked = 0

        def query(self, counts, *, k, kbar, rng):
            if self.asked == 3:
                raise M.BudgetExhaustedError("three queries only")
            self.asked += 1
            return (self.asked - 1,) * k

    mech = session_transcript_mechanism(ThreeQueries, RepeatQuery(2, 2), claim=(1.0, 1e-6), width=6)
    batch = mech.sample([5, 4, 3], 2, np.random.default_rng(0))
    assert batch.tolist() == [[0, 0, 1, 1, 2, 2]] * 2


def test_session_black_boxes_need_a_claim_and_a_width():
    class Bare:
        def query(self, counts, *, k, kbar, rng):
            return (0,)

    with pytest.raises(ValueError, match="claim"):
        session_transcript_mechanism(Bare, RepeatQuery(1, 1))
    with pytest.raises(ValueError, match="width"):
        session_transcript_mechanism(Bare, RepeatQuery(1, 1), claim=(1.0, 1e-6))
    with pytest.raises(ValueError, match="session_factory"):
        session_transcript_mechanism(M.MultiLimitDomain(**PARAMS), RepeatQuery(1, 1))
