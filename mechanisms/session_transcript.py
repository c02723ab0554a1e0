"""The transcript of a pay-what-you-get session, under a fixed analyst, as one mechanism.

Seed 003 (003_9293f5da18078e1b.txt) Alg. 2 and Thm 2, eq. (3). DESIGN.md: "interactive
mechanisms are mechanisms too: the whole transcript, under a stated analyst policy, gets
an exact law, a verify and an audit like any one-shot mechanism". Thm 2's guarantee is a
statement about the transcript ``(o_1, o_2, ...)``, so that is what is released here.

Encoding. A transcript is the concatenation of its answers, padded with PAD: answer i
ends at its ⊥ or after ``k_i`` items, and ``k_i`` is what the (deterministic) policy asked
after answers 1..i-1, so the concatenation decodes uniquely
([`answers`][mechanisms.session_transcript.MultiLimitDomainTranscript.answers]). Item ids repeat
across answers and ⊥ may stand mid-row; ``outcome_validation = "transcript"`` tells the auditor so.
With ⊥ charged, the lengths add up to at most k*, so the width is k*
([`MultiLimitDomainConfig.transcript_width`][mechanisms.session_config.MultiLimitDomainConfig.transcript_width]).

The session ends when the policy stops, when k* or ℓ* is used up, or at the first query
the budget refuses (``k_i`` above the remaining k*): a refused query releases nothing and
an analyst that keeps asking it learns nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .analyst_policies import AnalystPolicy, SessionQuery, as_policy
from .base import TopKMechanism, check_rng, check_size
from .claims import PrivacyClaim
from .histogram import TopCounts, validate_counts
from .outcomes import BOTTOM, PAD
from .session_config import MultiLimitDomainConfig

__all__ = ["MultiLimitDomainTranscript"]


@dataclass(frozen=True)
class MultiLimitDomainTranscript(TopKMechanism):
    """All answers of one multiLimitDom session on one data set, under a fixed analyst policy.

    Seed 003 (003_9293f5da18078e1b.txt) Alg. 2, Thm 2 eq. (3): the claim is the session's,
    ``(ε*, 2ℓ*δ + δ')``, whatever the policy. Every query runs on the same histogram (the
    analyst adapts ``k_i`` and ``k̄_i``, not the data).

    Parameters (keyword only)
    ----------
    config : the session's budgets and charge rule
        ([`MultiLimitDomainConfig`][mechanisms.session_config.MultiLimitDomainConfig]).
    policy : an [`AnalystPolicy`][mechanisms.analyst_policies.AnalystPolicy] or a function
        ``(answers, remaining_k, remaining_queries) -> (k, kbar) | None``.

    Example
    -------
    >>> from mechanisms.analyst_policies import RepeatQuery
    >>> session = MultiLimitDomain(total_k=3, max_queries=4, epsilon=1.0, delta=1e-3)
    >>> transcript = session.transcript_mechanism(RepeatQuery(k=1, kbar=2))
    >>> transcript.sample([5, 3, 0], size=4, rng=rng)   # doctest: +SKIP
    """

    config: MultiLimitDomainConfig
    policy: AnalystPolicy

    ordered: ClassVar[bool] = True
    #: Items repeat across answers and ⊥ may stand mid-row: the auditor checks rows as
    #: transcripts (ids in range), not as one top-k outcome.
    outcome_validation: ClassVar[str] = "transcript"

    def __post_init__(self) -> None:
        if not isinstance(self.config, MultiLimitDomainConfig):
            raise ValueError(
                f"config must be a MultiLimitDomainConfig, got {type(self.config).__name__}"
            )
        object.__setattr__(self, "policy", as_policy(self.policy))

    @property
    def width(self) -> int:
        return self.config.transcript_width

    @property
    def claim(self) -> PrivacyClaim:
        """The session's guarantee: seed 003 Thm 2 eq. (3)."""
        return self.config.claim

    def next_query(
        self, answers: Sequence[tuple[int, ...]], remaining_k: int, remaining_queries: int
    ) -> SessionQuery | None:
        """The query the session answers next, or None when the transcript ends.

        None when the budgets are used up, when the policy stops, or when it asks for
        more than the remaining k* (the session refuses, and the transcript ends there).
        """
        if remaining_k <= 0 or remaining_queries <= 0:
            return None
        query = self.policy.next_query(tuple(answers), int(remaining_k), int(remaining_queries))
        if query is None:
            return None
        if not isinstance(query, SessionQuery):
            raise ValueError(
                f"policy {self.policy!r} returned {query!r}, not a SessionQuery or None"
            )
        if query.k > remaining_k:
            return None
        return query

    def answers(self, transcript: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        """Split a transcript (an outcome tuple of this mechanism) into the session's answers."""
        items = [int(i) for i in transcript if int(i) != PAD]
        answers: list[tuple[int, ...]] = []
        remaining_k, remaining_q = self.config.total_k, self.config.max_queries
        position = 0
        while position < len(items):
            query = self.next_query(answers, remaining_k, remaining_q)
            if query is None:
                raise ValueError(
                    f"{transcript!r} is not a transcript of this session: "
                    f"items left after the session ended"
                )
            taken: list[int] = []
            while position < len(items) and len(taken) < query.k:
                taken.append(items[position])
                position += 1
                if taken[-1] == BOTTOM:
                    break
            answer = tuple(taken)
            answers.append(answer)
            remaining_k -= self.config.charge(answer)
            remaining_q -= 1
        return tuple(answers)

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent session transcripts, as an int64 ``(size, width)`` batch.

        All sessions advance one query per round; within a round the policy is asked once
        per distinct transcript so far (once per budget state for ``budget_only``
        policies) and each distinct ``(k, k̄)`` is one batched LimitDomain call.
        """
        check_rng(rng)
        size = check_size(size)
        if not isinstance(counts, TopCounts):
            counts = validate_counts(counts)
        config = self.config
        width = self.width
        out = np.full((size, width), PAD, dtype=np.int64)
        used = np.zeros(size, dtype=np.int64)  # columns written
        remaining_k = np.full(size, config.total_k, dtype=np.int64)
        remaining_q = np.full(size, config.max_queries, dtype=np.int64)
        ends = np.zeros((size, config.max_queries), dtype=np.int64)  # answer end columns
        active = np.ones(size, dtype=bool)
        for round_ in range(config.max_queries):
            rows = np.flatnonzero(active)
            if rows.size == 0:
                break
            k_of, kbar_of = self._decisions(rows, round_, out, ends, remaining_k, remaining_q)
            active[rows[k_of == 0]] = False
            decided = np.flatnonzero(k_of > 0)
            if decided.size == 0:
                break
            keys = np.unique(np.stack([k_of[decided], kbar_of[decided]], axis=1), axis=0)
            for k, kbar in keys:  # sorted: the same generator state gives the same result
                group = rows[decided[(k_of[decided] == k) & (kbar_of[decided] == kbar)]]
                batch = config.limit_domain(int(k), int(kbar)).sample(counts, group.size, rng)
                for column in range(batch.shape[1]):
                    filled = batch[:, column] != PAD
                    out[group[filled], used[group[filled]] + column] = batch[filled, column]
                used[group] += (batch != PAD).sum(axis=1)
                ends[group, round_] = used[group]
                remaining_k[group] -= config.charges(batch)
                remaining_q[group] -= 1
        return out

    def _decisions(self, rows, round_, out, ends, remaining_k, remaining_q):
        """``(k, k̄)`` per row of ``rows`` for this round; ``k = 0`` where the session ends."""
        if self.policy.budget_only:
            state = np.stack([remaining_k[rows], remaining_q[rows]], axis=1)
        else:
            state = out[rows]  # the transcript so far determines the answers so far
        distinct, first, inverse = np.unique(state, axis=0, return_index=True, return_inverse=True)
        k_choice = np.zeros(distinct.shape[0], dtype=np.int64)
        kbar_choice = np.zeros(distinct.shape[0], dtype=np.int64)
        for g, index in enumerate(first):
            row = rows[index]
            answers, start = [], 0
            for end in ends[row, :round_]:
                answers.append(tuple(int(v) for v in out[row, start:end]))
                start = end
            query = self.next_query(answers, int(remaining_k[row]), int(remaining_q[row]))
            if query is not None:
                k_choice[g], kbar_choice[g] = query.k, query.kbar
        inverse = np.asarray(inverse).reshape(-1)
        return k_choice[inverse], kbar_choice[inverse]
