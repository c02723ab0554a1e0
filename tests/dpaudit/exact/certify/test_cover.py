"""dpaudit.exact.certify.cover: LimitDom's pairs covered by shapes, and an actual pair's shape.

The exhaustive check of the reduction (every pair of small families) is in
tests/dpaudit/exact/test_certify_shapes.py.
"""

import pytest

from dpaudit.exact.certify.cover import enumerate_shapes, locate
from dpaudit.exact.certify.shapes import FREE, LimitDomainModel

MODEL = LimitDomainModel(1, 2, 1.0, 3.0)  # k = 1, k̄ = 2, ⊥ score 3 above h_(k̄+1), any Δ


def test_every_shape_is_distinct_and_moves_someone():
    shapes = enumerate_shapes(MODEL)
    assert len(shapes) == len(set(shapes))
    assert all(sum(s.x) + s.above + s.below >= 1 for s in shapes)


def test_a_pair_lands_in_an_enumerated_shape_with_its_free_gaps():
    counts, counts2 = (9, 4, 3, 0), (10, 4, 3, 0)  # gaps 5 (free), 1; S = {item 0}
    shape, gaps, ids = locate(MODEL, counts, counts2)
    assert shape in set(enumerate_shapes(MODEL))
    assert shape.classes == (FREE, 1)
    assert gaps == {0: 5}
    assert ids[0] == 0 and ids[1] == 1 and ids[2] == 2


def test_a_pair_that_is_not_one_user_added_is_refused():
    with pytest.raises(ValueError, match="counts \\+ 1_S for a non-empty S"):
        locate(MODEL, (3, 2, 1), (3, 2, 1))
    with pytest.raises(ValueError, match="counts \\+ 1_S"):
        locate(MODEL, (3, 2, 1), (3, 4, 1))
