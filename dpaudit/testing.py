"""Helpers for users' own test suites: ``assert_private`` and hypothesis strategies.

    from dpaudit.testing import assert_private

    def test_my_mechanism_is_private():
        assert_private(MyMechanism(epsilon=1.0), samples=500_000, seed=1)

``assert_private`` fails (``AssertionError`` carrying the full
[`AuditResult`][dpaudit.auditor.AuditResult]) when the auditor finds a violation at
confidence ``1 − alpha`` (a correct mechanism fails so with probability at most
``alpha``; its default is 0.001, not the audit's 0.05, because a suite runs many such tests
on every commit and each false failure is a red build), and — unless ``allow_inconclusive=True`` — when the audit is
INCONCLUSIVE: a privacy test that could not see the mechanism's output move, or
could not have detected (with probability 0.9, at every Q in the event's interval) a true ε
or δ ``power_factor`` times the claim on each of its confirmed events
([`AuditResult.event_power`][dpaudit.auditor.results.result.AuditResult.event_power]), proves nothing and should not pass silently (raise the samples, give pairs
near where the output changes, or — when the claimed δ is beyond any sample size —
accept an ε-only pass with ``epsilon_only=True``, which the result records). The
samples asked are never exceeded; a budget too small for a valid audit is refused
(``ValueError`` with the minimum). Use a fixed ``seed`` so a test run is reproducible.
"""

from __future__ import annotations

import numpy as np

from mechanisms import AddRemoveUser, BoundedChange, Substitute
from mechanisms.claims import RELATIONS

__all__ = [
    "AuditInconclusive",
    "PrivacyViolation",
    "assert_private",
    "histograms",
    "neighbouring_pairs",
]


class PrivacyViolation(AssertionError):
    """Raised by [`assert_private`][dpaudit.testing.assert_private]; ``.result`` is the AuditResult."""

    def __init__(self, result):
        super().__init__(f"privacy claim violated:\n{result}")
        self.result = result


class AuditInconclusive(AssertionError):
    """Raised by [`assert_private`][dpaudit.testing.assert_private] when the audit had no power; ``.result`` is the AuditResult."""

    def __init__(self, result):
        super().__init__(f"privacy audit inconclusive:\n{result}")
        self.result = result


def assert_private(
    mechanism, *, samples=500_000, alpha=1e-3, seed=0, allow_inconclusive=False, **options
):
    """Audit ``mechanism`` (or a callable with ``claim=`` and ``width=``); raise unless it passes.

    Parameters
    ----------
    mechanism : a mechanism, or ``f(counts, rng) -> outcome`` with ``claim`` and ``width`` in options.
    samples, alpha, seed : the audit's budget, failure probability and seed.
    allow_inconclusive : return (instead of raising
        [`AuditInconclusive`][dpaudit.testing.AuditInconclusive]) when the audit found no violation
        but had no power.
    options : passed to [`dpaudit.audit`][dpaudit.auditor.audit] (``counts``, ``pairs``, ``claim``,
        ``epsilon_only``, ``power_factor``, ...).

    Returns
    -------
    AuditResult
        The audit's result ([`AuditResult`][dpaudit.auditor.AuditResult]).

    Raises
    ------
    PrivacyViolation
        On a violation.
    AuditInconclusive
        When the audit passed without power, unless ``allow_inconclusive``.
    """
    from dpaudit.auditor import audit

    result = audit(mechanism, samples=samples, alpha=alpha, seed=seed, **options)
    if result.violation:
        raise PrivacyViolation(result)
    if result.verdict != "passed" and not allow_inconclusive:
        raise AuditInconclusive(result)
    return result


def histograms(min_items=1, max_items=8, max_count=20):
    """Hypothesis strategy: 1-D int64 histograms (valid by DESIGN.md's conventions)."""
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    return st.integers(min_items, max_items).flatmap(
        lambda d: arrays(np.int64, d, elements=st.integers(0, max_count))
    )


def neighbouring_pairs(relation=None, min_items=1, max_items=8, max_count=20):
    """Hypothesis strategy: ``(counts, counts2)`` neighbours under ``relation``.

    ``relation``: ``AddRemoveUser(Δ)`` (default unrestricted), ``BoundedChange(m)`` or
    ``Substitute(Δ)`` (needs at least 2 items).
    """
    from hypothesis import strategies as st

    relation = AddRemoveUser() if relation is None else relation
    if not isinstance(relation, RELATIONS):
        raise ValueError(
            f"relation must be AddRemoveUser, BoundedChange or Substitute, got {relation!r}"
        )
    if isinstance(relation, Substitute):
        if max_items < 2:
            raise ValueError(f"Substitute neighbours need max_items >= 2 items, got {max_items}")
        min_items = max(min_items, 2)

    @st.composite
    def build(draw):
        counts = draw(histograms(min_items, max_items, max_count))
        d = counts.size
        if isinstance(relation, BoundedChange):
            m = relation.max_change
            low = np.maximum(-m, -counts)  # stay non-negative
            change = np.array([draw(st.integers(int(lo), m)) for lo in low], dtype=np.int64)
            if not change.any():
                change[draw(st.integers(0, d - 1))] = m
            return counts, counts + change
        if isinstance(relation, Substitute):
            # one record of 1..Δ items leaves items that hold it for as many other items
            limit = d // 2 if relation.max_items is None else min(d // 2, relation.max_items)
            order = draw(st.permutations(range(d)))
            size = draw(st.integers(1, max(limit, 1)))
            step = np.zeros(d, dtype=np.int64)
            step[list(order[:size])] = 1
            step[list(order[size : 2 * size])] = -1
            # the record leaves items that hold at least one count
            counts = np.maximum(counts, (step < 0).astype(np.int64))
            return counts, counts + step
        limit = d if relation.max_items is None else min(d, relation.max_items)
        touched = draw(st.lists(st.integers(0, d - 1), min_size=1, max_size=limit, unique=True))
        step = np.zeros(d, dtype=np.int64)
        step[touched] = 1
        remove = draw(st.booleans()) and bool(np.all(counts[touched] >= 1))
        return counts, (counts - step) if remove else (counts + step)

    return build()
