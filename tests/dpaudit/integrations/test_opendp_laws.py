"""dpaudit.integrations.opendp_laws: k rounds of permute-and-flip with removal, exactly.

The chi-square fits against OpenDP's own samples are in tests/dpaudit/integrations/test_opendp.py.
"""

import mpmath
import pytest

from dpaudit.exact.laplace_laws import permute_and_flip_law
from dpaudit.integrations.opendp_laws import peeled_permute_and_flip_law


def test_one_round_is_permute_and_flip():
    one = peeled_permute_and_flip_law((3, 1, 2), 1.5, 1)
    single = permute_and_flip_law((3, 1, 2), 1.5)
    assert sorted(one) == sorted(single)
    for outcome, p in single.items():
        assert one[outcome] == pytest.approx(p, rel=1e-15)


def test_every_ordered_pair_and_a_total_of_one():
    law = peeled_permute_and_flip_law((2, 1, 0), 1.0, 2)
    assert sorted(law) == [(a, b) for a in range(3) for b in range(3) if a != b]
    assert float(mpmath.fsum(law.values())) == pytest.approx(1.0, abs=1e-30)


def test_the_second_round_runs_on_the_remaining_items():
    # after item 0, the second round is permute-and-flip on counts (1, 0) of items 1, 2
    law = peeled_permute_and_flip_law((2, 1, 0), 1.0, 2)
    first = permute_and_flip_law((2, 1, 0), 1.0)[(0,)]
    second = permute_and_flip_law((1, 0), 1.0)[(0,)]
    assert law[(0, 1)] == pytest.approx(first * second, rel=1e-15)


def test_k_past_the_domain_releases_every_item():
    assert set(map(len, peeled_permute_and_flip_law((1, 1), 2.0, 3))) == {2}
