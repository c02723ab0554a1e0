"""Exhaustive verification of pay-what-you-get sessions over budgets and analyst policies.

Seed 003 (003_9293f5da18078e1b.txt) Alg. 2 with Thm 2's claim: a session of budget k* items
and ℓ* queries, run by any analyst policy, is (ε*, δ*)-DP. For every budget up to the given
ones and every policy, [`verify`][dpaudit.exact.verify] checks the claim on every neighbouring
pair of a small family, with the transcript's exact law
([`transcript_law`][dpaudit.exact.session_laws.transcript_law]). One sweep serves the test suite
(three items) and `benchmarks/bench_session_verify.py` (four items).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mechanisms.analyst_policies import RepeatQuery, ScriptedQueries, WidenAfterBottom
from mechanisms.multi_limit_domain import MultiLimitDomain
from mechanisms.validation import require_positive_int

from .verify import VerificationResult, verify

__all__ = ["DEFAULT_POLICIES", "SessionSweep", "verify_sessions"]

#: Repeat, widen after ⊥ and a scripted sequence: the policies of the session tests.
DEFAULT_POLICIES = (
    RepeatQuery(k=1, kbar=1),
    RepeatQuery(k=2, kbar=2),
    WidenAfterBottom(k=1, kbar=1, step=1, max_kbar=3),
    WidenAfterBottom(k=2, kbar=2, step=1, max_kbar=3),
    ScriptedQueries(((1, 1), (2, 2), (1, 3), (3, 3))),
)


@dataclass(frozen=True)
class SessionSweep:
    """The verification of every (k*, ℓ*, policy) of a sweep.

    Parameters
    ----------
    cases : ``(total_k, max_queries, policy, result)`` for every session verified.
    """

    cases: tuple[tuple[int, int, Any, VerificationResult], ...]

    @property
    def holds(self) -> bool:
        """Every session's claim holds on every pair of the family."""
        return all(bool(result.holds) for *_, result in self.cases)

    @property
    def worst_delta_ratio(self) -> float:
        """The largest ``δ(ε*) / δ*`` over the sessions (at most 1 when every claim holds)."""
        return max(float(result.delta_at_epsilon / result.delta) for *_, result in self.cases)

    def failures(self) -> list[str]:
        """One line per session whose claim fails, naming its budget and policy."""
        return [
            f"total_k={k}, max_queries={queries}, {policy!r}: {result}"
            for k, queries, policy, result in self.cases
            if not result.holds
        ]


def verify_sessions(
    epsilon: float,
    delta: float,
    *,
    d: int,
    max_count: int,
    max_total_k: int = 3,
    max_queries: int = 4,
    policies: Sequence[Any] = DEFAULT_POLICIES,
) -> SessionSweep:
    """Verify every session with ``k* <= max_total_k``, ``ℓ* <= max_queries`` under each policy.

    Seed 003 Alg. 2 / Thm 2. A policy that asks more items per query than ``k*`` (``policy.k``
    above ``total_k``) is skipped for that budget. Exact: the family has every histogram on
    ``d`` items with counts up to ``max_count`` and every neighbour.

    Parameters
    ----------
    epsilon, delta : the session's claim (ε*, δ*).
    d, max_count : the family of histograms.
    max_total_k, max_queries : the largest budgets, each from 1.
    policies : the analyst policies (``mechanisms.analyst_policies``).
    """
    max_total_k = require_positive_int("max_total_k", max_total_k)
    max_queries = require_positive_int("max_queries", max_queries)
    if not policies:
        raise ValueError("policies must name at least one analyst policy")
    cases = []
    for total_k in range(1, max_total_k + 1):
        for queries in range(1, max_queries + 1):
            for policy in policies:
                if getattr(policy, "k", 0) > total_k:
                    continue
                session = MultiLimitDomain(
                    total_k=total_k, max_queries=queries, epsilon=epsilon, delta=delta
                )
                result = verify(
                    session.transcript_mechanism(policy), d=d, max_count=max_count, progress=False
                )
                cases.append((total_k, queries, policy, result))
    return SessionSweep(tuple(cases))
