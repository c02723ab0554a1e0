"""The budgets and charge rule of a pay-what-you-get session (multiLimitDom), as one frozen value.

Seed 003 (003_9293f5da18078e1b.txt) Alg. 2 line 5 (the charge ``|o_i|``, ⊥ included) and
Thm 2, eq. (3) (the claim). Shared by the session
([`mechanisms.multi_limit_domain`][mechanisms.multi_limit_domain]) and the transcript mechanism
([`mechanisms.session_transcript`][mechanisms.session_transcript]).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .accounting import limit_domain_epsilon
from .claims import AddRemoveUser, PrivacyClaim
from .limit_domain import LimitDomain
from .outcomes import PAD, batch_from_outcomes
from .validation import require_positive_float, require_positive_int, require_probability

__all__ = ["MultiLimitDomainConfig"]


@dataclass(frozen=True)
class MultiLimitDomainConfig:
    """Budgets and per-call parameters of a multiLimitDom session (seed 003 Alg. 2).

    Parameters
    ----------
    total_k : k*, the total number of items the session may release (>= 1).
    max_queries : ℓ*, the number of top-k queries the session may answer (>= 1).
    epsilon : per-selection ε of every LimitDomain call (> 0).
    delta : per-call δ of every LimitDomain call, in (0, 1).
    max_items : Δ, items one user may touch (None: unrestricted); passed to LimitDomain.
    delta_prime : δ' >= 0 spent on composition in Thm 2.
    """

    total_k: int
    max_queries: int
    epsilon: float
    delta: float
    max_items: int | None = None
    delta_prime: float = 0.0

    def __post_init__(self) -> None:
        require_positive_int("total_k", self.total_k)
        require_positive_int("max_queries", self.max_queries)
        require_positive_float("epsilon", self.epsilon)
        require_probability("delta", self.delta)
        if self.max_items is not None:
            require_positive_int("max_items", self.max_items)
        require_probability("delta_prime", self.delta_prime, allow_zero=True)

    def charges(self, batch: np.ndarray) -> np.ndarray:
        """What each answer in a batch costs in k*: its length, ⊥ included (Alg. 2 line 5).

        ``batch`` is an int64 ``(n, width)`` batch of LimitDomain answers padded with PAD.
        The one definition of the charge:
        [`charge`][mechanisms.session_config.MultiLimitDomainConfig.charge], the session and the
        transcript mechanism and its exact law all use it.
        """
        return (np.asarray(batch) != PAD).sum(axis=1).astype(np.int64)

    def charge(self, outcome: Sequence[int]) -> int:
        """What one answer costs in k*: ``|o_i|``, ⊥ included (seed 003 Alg. 2 line 5)."""
        outcome = tuple(int(i) for i in outcome)
        return int(self.charges(batch_from_outcomes([outcome], max(len(outcome), 1)))[0])

    @property
    def transcript_width(self) -> int:
        """The longest transcript (all answers concatenated): k*, since lengths are charged."""
        return self.total_k

    def limit_domain(self, k: int, kbar: int) -> LimitDomain:
        """The LimitDomain one query with ``(k, kbar)`` runs (seed 003 Alg. 1)."""
        return LimitDomain(
            k=k, kbar=kbar, epsilon=self.epsilon, delta=self.delta, max_items=self.max_items
        )

    @property
    def claim(self) -> PrivacyClaim:
        """``(ε*, 2ℓ*δ + δ')`` of seed 003 Thm 2, eq. (3) (ε* is Thm 1 eq. 2 with k*)."""
        epsilon_star = limit_domain_epsilon(self.epsilon, self.total_k, self.delta_prime)
        delta_star = min(1.0, 2 * self.max_queries * self.delta + self.delta_prime)
        return PrivacyClaim(epsilon_star, delta_star, AddRemoveUser(self.max_items))
