"""Pay-what-you-get composition: a session of LimitDomain queries charged by output size.

seed 003 (003_9293f5da18078e1b.txt) Alg. 2 (multiLimitDom_{k*,ℓ*}) and Thm 2, eq. (3).
A session is stateful (its remaining budget changes with every answer), so unlike the
mechanisms it is not a frozen [`TopKMechanism`][mechanisms.TopKMechanism]: the parameters live in
a frozen [`MultiLimitDomainConfig`][mechanisms.session_config.MultiLimitDomainConfig], the state in
an immutable [`MultiLimitDomainState`][mechanisms.multi_limit_domain.MultiLimitDomainState] that the
session replaces after each answered query, and the random generator is passed to every call. The
whole transcript of a session under a stated analyst policy is a mechanism in its own right:
[`mechanisms.session_transcript.MultiLimitDomainTranscript`][mechanisms.session_transcript.MultiLimitDomainTranscript].

The charge is ``|o_i|``, the length of the answer **including ⊥** (Alg. 2 line 5,
``k* ← k* − |o_i|``; Alg. 1 returns ``{i(1), ..., i(j), ⊥}`` on an early stop). ⊥ is
itself a selection of the exponential mechanism over the top-k̄ items and ⊥ (Lemma 4.2),
so Thm 2's count of at most k* selections needs it charged. A session that lets ⊥
through free (catalog entry ``pwyg-free-bottom``) has, on ``h = (15, 0)`` vs ``(16, 0)``
with ``total_k=1, max_queries=5, epsilon=1, delta=1e-6``, an exact δ of 0.0586 at its
claimed ε = 1, against a claimed 1e-5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .base import check_rng
from .claims import PrivacyClaim
from .session_config import MultiLimitDomainConfig
from .session_transcript import MultiLimitDomainTranscript

if TYPE_CHECKING:
    from .limit_domain import LimitDomain
from .validation import require_positive_int

__all__ = [
    "BudgetExhaustedError",
    "MultiLimitDomain",
    "MultiLimitDomainConfig",
    "MultiLimitDomainState",
]


class BudgetExhaustedError(RuntimeError):
    """A query was refused: the session's k* or ℓ* budget cannot pay for it."""


@dataclass(frozen=True)
class MultiLimitDomainState:
    """What a session has left and what it has released so far.

    Parameters
    ----------
    remaining_k : k* minus the lengths of the answers so far (⊥ counts as one output).
    remaining_queries : ℓ* minus the queries answered so far.
    outcomes : the answered queries' outcomes, in order.
    """

    remaining_k: int
    remaining_queries: int
    outcomes: tuple[tuple[int, ...], ...] = ()


class MultiLimitDomain:
    """A multiLimitDom session: LimitDomain queries paid for by the items they return.

    seed 003 (003_9293f5da18078e1b.txt) Alg. 2, Thm 2 eq. (3). Each
    [`query`][mechanisms.multi_limit_domain.MultiLimitDomain.query] runs
    ``LimitDomain(k=k_i, kbar=k̄_i, epsilon, delta, max_items)`` on the histogram given, then
    subtracts ``|o_i|``, the length of the answer **with ⊥ counted** (an answer of j < k_i items and
    ⊥ costs j + 1 <= k_i), from k* and 1 from ℓ* (Alg. 2 line 5). A query is refused with
    [`BudgetExhaustedError`][mechanisms.multi_limit_domain.BudgetExhaustedError] — and charged
    nothing — when k* or ℓ* is used up or ``k_i`` exceeds the remaining k*.

    Which analysts the claim covers: Thm 2 holds for any adaptive analyst, i.e. one who
    chooses each query's ``k_i``, ``k̄_i`` and histogram ``h_i`` from the answers so far
    (Alg. 2 line 3, "based on previous outcomes"), as long as the histograms of two
    neighbouring data sets are neighbours under
    [`claim`][mechanisms.multi_limit_domain.MultiLimitDomain.claim]'s relation query by query. The
    whole session then satisfies [`claim`][mechanisms.multi_limit_domain.MultiLimitDomain.claim] =
    ``(ε*, 2ℓ*δ + δ')``. For a given analyst policy the transcript is a mechanism with an exact law,
    an exhaustive ``verify`` and an audit
    ([`transcript_mechanism`][mechanisms.multi_limit_domain.MultiLimitDomain.transcript_mechanism],
    ``dpaudit.audit_session``).

    Parameters (keyword only)
    ----------
    total_k, max_queries, epsilon, delta, max_items=None, delta_prime=0.0 :
        see [`MultiLimitDomainConfig`][mechanisms.session_config.MultiLimitDomainConfig].

    Example
    -------
    >>> session = MultiLimitDomain(total_k=10, max_queries=3, epsilon=0.5, delta=1e-6)
    >>> session.query(counts, k=4, kbar=20, rng=rng)   # doctest: +SKIP
    """

    #: The configuration type (a subclass may change the charge rule, as the catalog does).
    config_class: ClassVar[type[MultiLimitDomainConfig]] = MultiLimitDomainConfig

    def __init__(
        self,
        *,
        total_k: int,
        max_queries: int,
        epsilon: float,
        delta: float,
        max_items: int | None = None,
        delta_prime: float = 0.0,
    ):
        self.config = self.config_class(
            total_k=total_k,
            max_queries=max_queries,
            epsilon=epsilon,
            delta=delta,
            max_items=max_items,
            delta_prime=delta_prime,
        )
        self.state = MultiLimitDomainState(self.config.total_k, self.config.max_queries)

    @classmethod
    def from_config(cls, config: MultiLimitDomainConfig) -> MultiLimitDomain:
        """A fresh session with the budgets (and charge rule) of ``config``."""
        if not isinstance(config, MultiLimitDomainConfig):
            raise TypeError(f"config must be a MultiLimitDomainConfig, got {type(config).__name__}")
        session = cls.__new__(cls)
        session.config = config
        session.state = MultiLimitDomainState(config.total_k, config.max_queries)
        return session

    def __repr__(self) -> str:
        return f"MultiLimitDomain({self.config!r}, {self.state!r})"

    @property
    def claim(self) -> PrivacyClaim:
        """The session's guarantee, seed 003 Thm 2 eq. (3); fixed by the budgets."""
        return self.config.claim

    @property
    def remaining_k(self) -> int:
        return self.state.remaining_k

    @property
    def remaining_queries(self) -> int:
        return self.state.remaining_queries

    @property
    def outcomes(self) -> tuple[tuple[int, ...], ...]:
        return self.state.outcomes

    @property
    def exhausted(self) -> bool:
        """True once no further query can be answered (k* or ℓ* is 0)."""
        return self.state.remaining_k == 0 or self.state.remaining_queries == 0

    def limit_domain(self, k: int, kbar: int) -> LimitDomain:
        """The LimitDomain mechanism one query with ``(k, kbar)`` runs (seed 003 Alg. 1)."""
        return self.config.limit_domain(k, kbar)

    def transcript_mechanism(self, policy):
        """The transcript of a fresh session with these budgets under ``policy``, as a mechanism.

        See
        [`mechanisms.session_transcript.MultiLimitDomainTranscript`][mechanisms.session_transcript.MultiLimitDomainTranscript].
        """
        return MultiLimitDomainTranscript(config=self.config, policy=policy)

    def query(
        self, counts: ArrayLike, *, k: int, kbar: int, rng: np.random.Generator
    ) -> tuple[int, ...]:
        """Answer one top-k query with LimitDomain and charge its output size.

        Parameters
        ----------
        counts : the histogram of this query (may depend on earlier answers).
        k : k_i >= 1, at most the remaining k*.
        kbar : k̄_i, passed to LimitDomain.
        rng : numpy.random.Generator.

        Returns
        -------
        tuple of int
            The outcome (items in selection order, ``BOTTOM`` last on an early stop); it
            costs ``len(outcome)`` of k*.

        Raises
        ------
        BudgetExhaustedError
            When the query cannot be paid for.
        """
        check_rng(rng)
        k = require_positive_int("k", k)
        state = self.state
        if state.remaining_queries == 0:
            raise BudgetExhaustedError(
                f"query budget max_queries={self.config.max_queries} is used up"
            )
        if state.remaining_k == 0:
            raise BudgetExhaustedError(f"item budget total_k={self.config.total_k} is used up")
        if k > state.remaining_k:
            raise BudgetExhaustedError(
                f"k={k} exceeds the remaining item budget {state.remaining_k} "
                f"(of total_k={self.config.total_k})"
            )
        outcome = tuple(int(i) for i in self.limit_domain(k, kbar).run(counts, rng))
        charged = self.config.charge(outcome)
        # state changes only after the mechanism has answered (a bad histogram costs nothing)
        self.state = MultiLimitDomainState(
            state.remaining_k - charged, state.remaining_queries - 1, state.outcomes + (outcome,)
        )
        return outcome
