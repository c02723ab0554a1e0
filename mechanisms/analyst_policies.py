"""Analyst policies: how the analyst of a pay-what-you-get session picks each query.

Seed 003 (003_9293f5da18078e1b.txt) Alg. 2 line 3: "Based on previous outcomes, select
adaptive histogram h_i and parameters k_i, k̄_i". Thm 2 covers every such analyst; to
check a session exactly or audit it, one analyst must be fixed. A policy is a
deterministic rule

    next_query(answers, remaining_k, remaining_queries) -> SessionQuery | None

from the answers so far (a tuple of outcome tuples) and the budgets left to the next
``(k, k̄)``, or ``None`` to stop. Policies are frozen dataclasses, so a transcript
mechanism that holds one is immutable and can be pickled to worker processes.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from .outcomes import BOTTOM
from .validation import require_nonnegative_int, require_positive_int

__all__ = [
    "AnalystPolicy",
    "FunctionPolicy",
    "RepeatQuery",
    "ScriptedQueries",
    "SessionQuery",
    "WidenAfterBottom",
    "as_policy",
]


@dataclass(frozen=True)
class SessionQuery:
    """One top-k query of a session: ``k`` items wanted from the top ``kbar`` (k̄ >= k)."""

    k: int
    kbar: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "kbar", require_positive_int("kbar", self.kbar, minimum=self.k))


class AnalystPolicy(abc.ABC):
    """A deterministic analyst: the next query from the answers so far and the budgets left.

    ``budget_only = True`` declares that the choice depends on the budgets left
    (``remaining_k``, ``remaining_queries``; hence on the number of answers) and not on
    what the answers were; samplers then call the policy once per budget state instead of
    once per distinct transcript. A budget is None when the session does not report it (a
    general session object, which refuses by itself once spent): the policy asks as if it
    were unlimited.
    """

    budget_only: ClassVar[bool] = False

    @abc.abstractmethod
    def next_query(
        self,
        answers: tuple[tuple[int, ...], ...],
        remaining_k: int | None,
        remaining_queries: int | None,
    ) -> SessionQuery | None:
        """The next query, or None to end the session."""


def _spent(remaining_k: int | None, remaining_queries: int | None) -> bool:
    """No k or no query left (a budget the session does not report is never spent here)."""
    return (remaining_k is not None and remaining_k <= 0) or (
        remaining_queries is not None and remaining_queries <= 0
    )


def _capped(k: int, remaining_k: int | None) -> int:
    """``k``, capped at the k left when the session reports it."""
    return k if remaining_k is None else min(k, remaining_k)


@dataclass(frozen=True)
class RepeatQuery(AnalystPolicy):
    """Ask top-``k`` from the top ``kbar`` again and again, asking for what is left at the end.

    The analyst of the free-⊥ counterexample (catalog entry ``pwyg-free-bottom``:
    ``k = k̄ = 1`` until the session is exhausted). ``k`` shrinks to the remaining k* so the last query is never refused.
    """

    k: int
    kbar: int

    budget_only: ClassVar[bool] = True

    def __post_init__(self) -> None:
        SessionQuery(self.k, self.kbar)  # validates k >= 1, kbar >= k

    def next_query(self, answers, remaining_k, remaining_queries):
        if _spent(remaining_k, remaining_queries):
            return None
        return SessionQuery(_capped(self.k, remaining_k), self.kbar)


@dataclass(frozen=True)
class ScriptedQueries(AnalystPolicy):
    """Ask the listed ``(k, kbar)`` queries in order (k capped at what is left), then stop."""

    queries: tuple[tuple[int, int], ...]

    budget_only: ClassVar[bool] = True

    def __post_init__(self) -> None:
        try:
            queries = tuple((int(k), int(kbar)) for k, kbar in self.queries)
        except (TypeError, ValueError):
            raise ValueError(
                f"queries must be a sequence of (k, kbar) pairs, got {self.queries!r}"
            ) from None
        if not queries:
            raise ValueError("queries must hold at least one (k, kbar) pair")
        for k, kbar in queries:
            SessionQuery(k, kbar)
        object.__setattr__(self, "queries", queries)

    def next_query(self, answers, remaining_k, remaining_queries):
        index = len(answers)
        if index >= len(self.queries) or _spent(remaining_k, remaining_queries):
            return None
        k, kbar = self.queries[index]
        return SessionQuery(_capped(k, remaining_k), kbar)


@dataclass(frozen=True)
class WidenAfterBottom(AnalystPolicy):
    """An adaptive analyst: after every answer that ended in ⊥, widen k̄ by ``step``.

    Query i asks ``k = min(k, remaining k*)`` from ``k̄ = kbar + step · (number of
    earlier answers ending in ⊥)``, capped at ``max_kbar`` — the choice depends on what
    the answers were, not only on the budgets (seed 003 Alg. 2, "based on previous
    outcomes").
    """

    k: int
    kbar: int
    step: int = 1
    max_kbar: int | None = None

    def __post_init__(self) -> None:
        SessionQuery(self.k, self.kbar)
        require_nonnegative_int("step", self.step)
        if self.max_kbar is not None:
            require_positive_int("max_kbar", self.max_kbar, minimum=self.kbar)

    def next_query(self, answers, remaining_k, remaining_queries):
        if _spent(remaining_k, remaining_queries):
            return None
        stops = sum(1 for answer in answers if answer and answer[-1] == BOTTOM)
        kbar = self.kbar + self.step * stops
        if self.max_kbar is not None:
            kbar = min(kbar, self.max_kbar)
        k = _capped(self.k, remaining_k)
        return SessionQuery(k, max(kbar, k))


@dataclass(frozen=True)
class FunctionPolicy(AnalystPolicy):
    """A plain function ``f(answers, remaining_k, remaining_queries) -> (k, kbar) | None``."""

    function: Callable

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise ValueError(f"policy must be callable, got {self.function!r}")

    def next_query(self, answers, remaining_k, remaining_queries):
        choice = self.function(answers, remaining_k, remaining_queries)
        if choice is None or isinstance(choice, SessionQuery):
            return choice
        try:
            k, kbar = choice
        except (TypeError, ValueError):
            raise ValueError(
                f"policy {self.function!r} must return (k, kbar) or None, got {choice!r}"
            ) from None
        return SessionQuery(k, kbar)


def as_policy(policy: AnalystPolicy | Callable) -> AnalystPolicy:
    """``policy`` itself if it is an [`AnalystPolicy`][mechanisms.analyst_policies.AnalystPolicy]; a plain function is wrapped."""
    if isinstance(policy, AnalystPolicy):
        return policy
    if callable(policy):
        return FunctionPolicy(policy)
    raise ValueError(
        f"policy must be an AnalystPolicy or a function (answers, remaining_k, "
        f"remaining_queries) -> (k, kbar) | None, got {policy!r}"
    )
