"""Broken pay-what-you-get sessions: a multiLimitDom session whose charge lets ⊥ through free.

``pwyg-free-bottom``: only the real items of an answer are subtracted from k*, ⊥ is
free — against seed 003
(003_9293f5da18078e1b.txt) Alg. 2 line 5, ``k* ← k* − |o_i|``. ⊥ is a selection of the
exponential mechanism over the top-k̄ and ⊥ (Lemma 4.2), so a session can make up to ℓ*
selections that ε* never counts. The claim stays Thm 2's.
"""

from dataclasses import dataclass

import numpy as np

from mechanisms import BOTTOM, PAD
from mechanisms.analyst_policies import RepeatQuery
from mechanisms.multi_limit_domain import MultiLimitDomain, MultiLimitDomainConfig
from mechanisms.session_transcript import MultiLimitDomainTranscript

from .entry import CatalogEntry

__all__ = [
    "ENTRIES",
    "FreeBottomConfig",
    "FreeBottomSession",
    "FreeBottomTranscript",
    "free_bottom_transcript",
]


@dataclass(frozen=True)
class FreeBottomConfig(MultiLimitDomainConfig):
    """A multiLimitDom configuration whose charge leaves ⊥ out (the bug)."""

    def charges(self, batch) -> np.ndarray:
        batch = np.asarray(batch)
        return ((batch != PAD) & (batch != BOTTOM)).sum(axis=1).astype(np.int64)

    @property
    def transcript_width(self) -> int:
        # each answer may end with a free ⊥: k* items plus one ⊥ per query
        return self.total_k + self.max_queries


class FreeBottomTranscript(MultiLimitDomainTranscript):
    """BUG: a pay-what-you-get transcript whose session lets ⊥ through free (seed 003 Alg. 2)."""


class FreeBottomSession(MultiLimitDomain):
    """A MultiLimitDomain session that charges only the items of an answer, not its ⊥."""

    config_class = FreeBottomConfig

    def transcript_mechanism(self, policy):
        return FreeBottomTranscript(config=self.config, policy=policy)


def free_bottom_transcript(
    total_k=1, max_queries=5, epsilon=1.0, delta=1e-6, k=1, kbar=1
) -> MultiLimitDomainTranscript:
    """The counterexample: k* = 1, ℓ* = 5, an analyst asking top-1 of 1 until the budget is spent."""
    session = FreeBottomSession(
        total_k=total_k, max_queries=max_queries, epsilon=epsilon, delta=delta
    )
    return session.transcript_mechanism(RepeatQuery(k=k, kbar=kbar))


ENTRIES: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        "pwyg-free-bottom",
        "pay-what-you-get session that charges only items, not ⊥ (k* ← k* − |o_i| counts ⊥)",
        free_bottom_transcript,
        ((15, 0), (16, 0)),
        "003 Alg. 2 line 5, Thm 2",
    ),
)
