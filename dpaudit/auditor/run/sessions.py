"""Auditing interactive mechanisms: a session factory plus an analyst policy.

DESIGN.md: "interactive mechanisms (a pay-what-you-get session) are mechanisms too: the
whole transcript, under a stated analyst policy, gets an exact law, a verify and an audit
like any one-shot mechanism". [`audit_session`][dpaudit.auditor.run.sessions.audit_session] turns a
session into the mechanism "run a fresh session on the histogram, let the analyst ask until it
stops, release every answer", then audits that like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mechanisms import PAD, PrivacyClaim, TopKMechanism, check_rng, check_size
from mechanisms.analyst_policies import AnalystPolicy, as_policy
from mechanisms.multi_limit_domain import BudgetExhaustedError

from ..sources.blackbox import make_claim
from .runner import audit

__all__ = ["SessionBlackBox", "audit_session", "session_transcript_mechanism"]


@dataclass(frozen=True)
class SessionBlackBox(TopKMechanism):
    """Transcripts of any session object, driven one query at a time (the slow, general path).

    A session is anything with ``query(counts, *, k, kbar, rng) -> outcome`` that raises
    [`mechanisms.BudgetExhaustedError`][mechanisms.BudgetExhaustedError] (or returns nothing more)
    once spent. Every sample builds a fresh session with ``factory()``, so this costs a Python loop
    per sample: sessions that offer ``transcript_mechanism(policy)`` (as
    [`mechanisms.MultiLimitDomain`][mechanisms.MultiLimitDomain] does) are sampled batched instead.
    """

    factory: Callable
    policy: AnalystPolicy
    width_: int
    claim_: PrivacyClaim

    ordered: ClassVar[bool] = True
    outcome_validation: ClassVar[str] = "transcript"

    @property
    def width(self) -> int:
        return self.width_

    @property
    def claim(self) -> PrivacyClaim:
        return self.claim_

    def _transcript(self, counts, rng) -> tuple[int, ...]:
        session = self.factory()
        answers: list[tuple[int, ...]] = []
        remaining_k = getattr(session, "remaining_k", None)
        remaining_q = getattr(session, "remaining_queries", None)
        while True:
            query = self.policy.next_query(tuple(answers), remaining_k, remaining_q)
            if query is None:
                break
            try:
                answer = session.query(counts, k=query.k, kbar=query.kbar, rng=rng)
            except BudgetExhaustedError:
                break
            answers.append(tuple(int(i) for i in answer))
            remaining_k = getattr(session, "remaining_k", None)
            remaining_q = getattr(session, "remaining_queries", None)
        flat = tuple(i for answer in answers for i in answer)
        if len(flat) > self.width_:
            raise ValueError(
                f"a session transcript has {len(flat)} entries, more than "
                f"width={self.width_}; pass a larger width to audit_session"
            )
        return flat

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        check_rng(rng)
        size = check_size(size)
        out = np.full((size, self.width_), PAD, dtype=np.int64)
        for row in range(size):
            flat = self._transcript(counts, rng)
            out[row, : len(flat)] = flat
        return out


def session_transcript_mechanism(session_factory, policy, *, claim=None, width=None):
    """The transcript mechanism of ``session_factory()`` sessions under ``policy``.

    Batched (``transcript_mechanism`` of the session) when the session offers it,
    otherwise a [`SessionBlackBox`][dpaudit.auditor.run.sessions.SessionBlackBox], which needs ``claim``
    (or a session ``claim``) and ``width`` (or a session ``config.transcript_width``).
    """
    if not callable(session_factory):
        raise ValueError(
            f"session_factory must be a function returning a fresh session, got {session_factory!r}"
        )
    policy = as_policy(policy)
    session = session_factory()
    if hasattr(session, "transcript_mechanism") and width is None:
        return session.transcript_mechanism(policy)
    declared = claim if claim is not None else getattr(session, "claim", None)
    if declared is None:
        raise ValueError("the session has no claim: pass claim=(epsilon, delta[, relation])")
    if width is None:
        width = getattr(getattr(session, "config", None), "transcript_width", None)
    if width is None:
        raise ValueError("pass width=, the longest transcript (all answers together)")
    return SessionBlackBox(session_factory, policy, int(width), make_claim(declared))


def audit_session(session_factory, policy, *, claim=None, width=None, **options):
    """Audit a whole interactive session under an analyst policy; an [`AuditResult`][dpaudit.auditor.AuditResult].

    Seed 003 (003_9293f5da18078e1b.txt) Alg. 2 and Thm 2 for the pay-what-you-get
    session: the transcript of a fresh session on each histogram, the analyst asking
    queries by ``policy`` until it stops or the budget refuses, is audited as one
    mechanism against the session's claim.

    Parameters
    ----------
    session_factory : a function returning a fresh session, e.g.
        ``lambda: MultiLimitDomain(total_k=1, max_queries=5, epsilon=1, delta=1e-6)``.
    policy : an [`AnalystPolicy`][mechanisms.analyst_policies.AnalystPolicy] or a function
        ``(answers, remaining_k, remaining_queries) -> (k, kbar) | None``.
    claim : ``(ε, δ[, relation])`` to audit instead of the session's own claim.
    width : the longest transcript, for sessions without ``transcript_mechanism``.
    options : passed to [`dpaudit.audit`][dpaudit.auditor.audit] (samples, seed, counts,
        pairs, ...).
    """
    mech = session_transcript_mechanism(session_factory, policy, claim=claim, width=width)
    return audit(mech, claim=claim, **options)
