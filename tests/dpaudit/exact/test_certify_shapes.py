"""The reduction of LimitDom pairs to shapes over gap boxes, checked against the exact laws."""

import itertools
import math
import random

import numpy as np
import pytest

from dpaudit.exact import output_law
from dpaudit.exact.certify.bounds import law_bounds, log_ratio_upper, point_law
from dpaudit.exact.certify.cover import enumerate_shapes, locate
from dpaudit.exact.certify.shapes import LimitDomainModel
from mechanisms import BOTTOM, LimitDomain

MECH = LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)


def _mapped(law: dict, ids: dict) -> dict:
    return {tuple(BOTTOM if v == BOTTOM else ids[v] for v in o): p for o, p in law.items()}


def _assert_same(mine: dict, exact: dict) -> None:
    keys = set(mine) | set(exact)
    assert max(abs(mine.get(o, 0.0) - float(exact.get(o, 0))) for o in keys) < 1e-12


@pytest.mark.parametrize(("d", "max_count"), [(4, 3), (5, 2), (6, 1)])
def test_every_pair_of_a_small_family_is_a_shape_with_the_same_laws(d, max_count):
    """Exhaustive: each (D, D + 1_S) lands in an enumerated shape whose laws are the pair's."""
    model = LimitDomainModel.from_mechanism(MECH, d)
    shapes = set(enumerate_shapes(model))
    exact_laws: dict = {}  # a histogram's exact law, computed once (each recurs across pairs)

    def exact(counts: np.ndarray) -> dict:
        key = tuple(int(c) for c in counts)
        if key not in exact_laws:
            exact_laws[key] = output_law(MECH, counts)
        return exact_laws[key]

    for counts in itertools.product(range(max_count + 1), repeat=d):
        a = np.array(counts)
        for subset in itertools.product((0, 1), repeat=d):
            if not any(subset):
                continue
            b = a + np.array(subset)
            shape, gaps, ids = locate(model, a, b)
            if shape.above + shape.below + sum(shape.x) == 0:
                # S touches no item that matters: the same law on both sides, δ = 0.
                _assert_same({o: float(p) for o, p in exact(a).items()}, exact(b))
                continue
            assert shape in shapes
            law_d, law_d2 = shape.laws(model)
            point = tuple(float(gaps[i]) for i in shape.free)
            _assert_same(_mapped(point_law(law_d, point, 1.0), ids), exact(a))
            _assert_same(_mapped(point_law(law_d2, point, 1.0), ids), exact(b))


def test_realised_pairs_have_the_model_laws_and_locate_back():
    model = LimitDomainModel.from_mechanism(MECH, None)
    shapes = enumerate_shapes(model)
    rng = random.Random(1)
    for shape in rng.sample(shapes, 200):
        gaps = {i: rng.randint(2, 9) for i in shape.free}
        counts, counts2, ids = shape.realise(model, gaps)
        found, found_gaps, _ = locate(model, counts, counts2)
        assert (found, found_gaps) == (shape, gaps)
        law_d, law_d2 = shape.laws(model)
        point = tuple(float(gaps[i]) for i in shape.free)
        _assert_same(_mapped(point_law(law_d, point, 1.0), ids), output_law(MECH, counts))
        _assert_same(_mapped(point_law(law_d2, point, 1.0), ids), output_law(MECH, counts2))


def test_outcome_probability_is_not_monotone_in_a_later_item_weight():
    """P((a, b)) = w_a/W · w_b/(W − w_a) rises then falls in w_b: no corner rule for maxima."""
    w_a, rest = 1.0, 1.0

    def p(w_b):
        total = w_a + w_b + rest
        return w_a / total * w_b / (total - w_a)

    assert p(1.0) > p(0.1) and p(1.0) > p(10.0)


def test_box_bounds_enclose_every_integer_point():
    """Vertex minima (log-concavity), tangent and factor-wise maxima, and the ratio bound."""
    model = LimitDomainModel.from_mechanism(MECH, None)
    shapes = [s for s in enumerate_shapes(model) if s.free]
    rng = random.Random(2)
    for shape in rng.sample(shapes, 60):
        box = tuple((lo, lo + rng.randint(0, 6)) for lo in (rng.randint(2, 8) for _ in shape.free))
        law_d, law_d2 = shape.laws(model)
        bp, bq = law_bounds(law_d, box, 1.0), law_bounds(law_d2, box, 1.0)
        ratio = log_ratio_upper(law_d, law_d2, box, 1.0)
        for point in itertools.product(*[range(int(lo), int(hi) + 1) for lo, hi in box]):
            p = point_law(law_d, tuple(map(float, point)), 1.0)
            q = point_law(law_d2, tuple(map(float, point)), 1.0)
            for law, bounds in ((p, bp), (q, bq)):
                for outcome, value in law.items():
                    lo, hi = bounds.bounds[outcome]
                    assert lo <= value <= hi
            for outcome, bound in ratio.items():
                assert math.log(p[outcome] / q[outcome]) <= bound
