"""dpaudit.auditor.greybox.declaration_check: a declared support tested where it would fail."""

from dataclasses import dataclass

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.greybox.declaration_check import Declared, check_declaration
from dpaudit.auditor.greybox.declared_support import DeclaredSupportError
from dpaudit.auditor.greybox.part_bounds import GapItemBound
from mechanisms import top_counts


def _side(mechanism, counts):
    counts = tuple(counts)
    return Declared(np.array(counts), counts, frozenset(mechanism.output_support(counts)))


def _part(width):
    """A part whose proposal leaves the mechanism's one Gumbel draw where it is."""
    return GapItemBound(3, 2, 0, {0: np.zeros(width)}, 1.0, 0.0, 0.0, 0.0)


def test_an_event_is_never_hit_and_refuses_an_outcome_outside_the_support():
    side = Declared(np.array([1, 1]), (1, 1), frozenset({0, 1}))
    assert side.event("plain")(np.array([[0], [1]])).tolist() == [False, False]
    with pytest.raises(DeclaredSupportError, match="output_support"):
        side.event("plain")(np.array([[2]]))


def test_a_true_declaration_passes_and_the_runs_are_counted():
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-6)
    d, d2 = _side(mechanism, [4, 4, 4, 5, 5, 5]), _side(mechanism, [4] * 6)
    spent = check_declaration(
        mechanism.sample, d, d2, [_part(4)], check_runs=300, rows=32, seed=np.random.SeedSequence(1)
    )
    assert spent > 300 + 2 * 300  # the tilted runs, the probes and both plain runs


@dataclass(frozen=True)
class _UnderDeclared(M.LimitDomain):
    """Declares one item fewer than its limited domain: a false structural zero."""

    def output_support(self, counts):
        return frozenset(int(i) for i in top_counts(counts, self.kbar + 1).items[: self.kbar - 1])


def test_a_false_declaration_is_caught():
    mechanism = _UnderDeclared(k=1, kbar=3, epsilon=1.0, delta=0.1)  # item 0 in 2 % of runs
    d, d2 = _side(mechanism, [5, 6, 6, 4, 0, 0]), _side(mechanism, [5, 5, 5, 4, 0, 0])
    with pytest.raises(DeclaredSupportError, match=r"\(plain run\)"):
        check_declaration(
            mechanism.sample,
            d,
            d2,
            [_part(4)],
            check_runs=500,
            rows=32,
            seed=np.random.SeedSequence(0),
        )
