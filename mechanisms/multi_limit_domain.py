"""Pay-what-you-get composition: a session of LimitDomain queries charged by output size.

seed 003 (003_9293f5da18078e1b.txt) Alg. 2 (multiLimitDom_{k*,ℓ*}) and Thm 2, eq. (3).
A session is stateful (its remaining budget changes with every answer), so unlike the
mechanisms it is not a frozen :class:`~mechanisms.TopKMechanism`: the parameters live in
a frozen :class:`MultiLimitDomainConfig`, the state in an immutable
:class:`MultiLimitDomainState` that the session replaces after each answered query, and
the random generator is passed to every call.
"""

from __future__ import annotations

from dataclasses import dataclass

from .accounting import limit_domain_epsilon
from .base import check_rng
from .claims import AddRemoveUser, PrivacyClaim
from .outcomes import BOTTOM
from .validation import require_positive_float, require_positive_int, require_probability

__all__ = [
    "BudgetExhaustedError",
    "MultiLimitDomain",
    "MultiLimitDomainConfig",
    "MultiLimitDomainState",
]


class BudgetExhaustedError(RuntimeError):
    """A query was refused: the session's k* or ℓ* budget cannot pay for it."""


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

    def __post_init__(self):
        require_positive_int("total_k", self.total_k)
        require_positive_int("max_queries", self.max_queries)
        require_positive_float("epsilon", self.epsilon)
        require_probability("delta", self.delta)
        if self.max_items is not None:
            require_positive_int("max_items", self.max_items)
        require_probability("delta_prime", self.delta_prime, allow_zero=True)

    @property
    def claim(self) -> PrivacyClaim:
        """``(ε*, 2ℓ*δ + δ')`` of seed 003 Thm 2, eq. (3) (ε* is Thm 1 eq. 2 with k*)."""
        epsilon_star = limit_domain_epsilon(self.epsilon, self.total_k, self.delta_prime)
        delta_star = min(1.0, 2 * self.max_queries * self.delta + self.delta_prime)
        return PrivacyClaim(epsilon_star, delta_star, AddRemoveUser(self.max_items))


@dataclass(frozen=True)
class MultiLimitDomainState:
    """What a session has left and what it has released so far.

    Parameters
    ----------
    remaining_k : k* minus the items released so far (⊥ is free).
    remaining_queries : ℓ* minus the queries answered so far.
    outcomes : the answered queries' outcomes, in order.
    """

    remaining_k: int
    remaining_queries: int
    outcomes: tuple[tuple[int, ...], ...] = ()


class MultiLimitDomain:
    """A multiLimitDom session: LimitDomain queries paid for by the items they return.

    seed 003 (003_9293f5da18078e1b.txt) Alg. 2, Thm 2 eq. (3). Each :meth:`query` runs
    ``LimitDomain(k=k_i, kbar=k̄_i, epsilon, delta, max_items)`` on the histogram given,
    then subtracts the number of items returned (⊥ not counted) from k* and 1 from ℓ*.
    A query is refused with :class:`BudgetExhaustedError` — and charged nothing — when
    k* or ℓ* is used up or ``k_i`` exceeds the remaining k*. The whole session, however
    the queries are chosen, satisfies :attr:`claim` = ``(ε*, 2ℓ*δ + δ')``.

    Parameters (keyword only)
    ----------
    total_k, max_queries, epsilon, delta, max_items=None, delta_prime=0.0 :
        see :class:`MultiLimitDomainConfig`.

    Example
    -------
    >>> session = MultiLimitDomain(total_k=10, max_queries=3, epsilon=0.5, delta=1e-6)
    >>> session.query(counts, k=4, kbar=20, rng=rng)   # doctest: +SKIP
    """

    def __init__(self, *, total_k: int, max_queries: int, epsilon: float, delta: float,
                 max_items: int | None = None, delta_prime: float = 0.0):
        self.config = MultiLimitDomainConfig(total_k=total_k, max_queries=max_queries,
                                             epsilon=epsilon, delta=delta,
                                             max_items=max_items, delta_prime=delta_prime)
        self.state = MultiLimitDomainState(self.config.total_k, self.config.max_queries)

    @classmethod
    def from_config(cls, config: MultiLimitDomainConfig) -> MultiLimitDomain:
        """A fresh session with the budgets of ``config``."""
        if not isinstance(config, MultiLimitDomainConfig):
            raise TypeError(f"config must be a MultiLimitDomainConfig, got {type(config).__name__}")
        return cls(total_k=config.total_k, max_queries=config.max_queries,
                   epsilon=config.epsilon, delta=config.delta, max_items=config.max_items,
                   delta_prime=config.delta_prime)

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

    def limit_domain(self, k: int, kbar: int):
        """The LimitDomain mechanism one query with ``(k, kbar)`` runs (seed 003 Alg. 1)."""
        from .limit_domain import LimitDomain  # sibling module; imported on use

        return LimitDomain(k=k, kbar=kbar, epsilon=self.config.epsilon, delta=self.config.delta,
                           max_items=self.config.max_items)

    def query(self, counts, *, k: int, kbar: int, rng) -> tuple[int, ...]:
        """Answer one top-k query with LimitDomain and charge its output size.

        Parameters
        ----------
        counts : the histogram of this query (may depend on earlier answers).
        k : k_i >= 1, at most the remaining k*.
        kbar : k̄_i, passed to LimitDomain.
        rng : numpy.random.Generator.

        Returns the outcome tuple (items in selection order, ``BOTTOM`` last on an early stop).
        Raises :class:`BudgetExhaustedError` when the query cannot be paid for.
        """
        check_rng(rng)
        k = require_positive_int("k", k)
        state = self.state
        if state.remaining_queries == 0:
            raise BudgetExhaustedError(
                f"query budget max_queries={self.config.max_queries} is used up")
        if state.remaining_k == 0:
            raise BudgetExhaustedError(f"item budget total_k={self.config.total_k} is used up")
        if k > state.remaining_k:
            raise BudgetExhaustedError(
                f"k={k} exceeds the remaining item budget {state.remaining_k} "
                f"(of total_k={self.config.total_k})")
        outcome = tuple(int(i) for i in self.limit_domain(k, kbar).run(counts, rng))
        released = sum(1 for item in outcome if item != BOTTOM)
        # state changes only after the mechanism has answered (a bad histogram costs nothing)
        self.state = MultiLimitDomainState(state.remaining_k - released,
                                           state.remaining_queries - 1,
                                           state.outcomes + (outcome,))
        return outcome
