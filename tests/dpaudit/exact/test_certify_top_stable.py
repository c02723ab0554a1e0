"""TopStable's reduction to shapes and the certified bounds built on it (docs/certify.md).

* every add pair of small exhaustive families lands in an enumerated shape, and the shape's law
  at the pair's gaps is the pair's ``output_law`` (ids renamed to ranks);
* each position probability's box range encloses its value at every integer point of the box;
* every leaf bound of a (short, unconverged) certificate is at least the exact ε of pairs that
  land in it, and the recheck refuses a lowered bound and a dropped leaf.
"""

import itertools
import random

import numpy as np
import pytest

from dpaudit.exact import output_law
from dpaudit.exact.certify.top_stable import (
    INF,
    _canonical,
    canonical_shapes,
    enumerate_shapes,
    shape_of_pair,
)
from dpaudit.exact.certify.top_stable_bounds import TopStableBounds
from dpaudit.exact.certify.top_stable_search import (
    certify_top_stable,
    exact_epsilon,
    recheck_top_stable,
)
from dpaudit.exact.law import working_precision
from mechanisms import TopStable

MECH = TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
#: Larger ε and δ: T = 3.5, so pairs with counts below 10 have ε > 0 at δ = 0.05.
LOOSE = TopStable(k=2, kbar=3, epsilon=4.0, delta=0.05)


def _landed(families):
    shapes = set(canonical_shapes(MECH.kbar))
    pairs = 0
    for d, top in families:
        for counts in itertools.product(range(top + 1), repeat=d):
            for s in itertools.product((0, 1), repeat=d):
                counts2 = tuple(a + b for a, b in zip(counts, s))
                found = shape_of_pair(MECH, np.array(counts), np.array(counts2))
                if found is None:
                    continue
                pairs += 1
                assert _canonical(found[0], MECH.kbar) in shapes, (counts, counts2, found)
    return pairs


def test_every_small_pair_lands_in_a_shape():
    """4 items with counts <= 2 and 5 items with counts <= 1: every pair is a listed shape."""
    assert _landed([(4, 2), (5, 1)]) > 1000


@pytest.mark.slow
def test_every_pair_of_wider_families_lands_in_a_shape():
    """4 items with counts <= 3, 5 with counts <= 2, 7 with counts <= 1 (fringes of up to 3)."""
    assert _landed([(4, 3), (5, 2), (7, 1)]) > 24000


def test_shapes_do_not_depend_on_free_gap_values():
    """``enumerate_shapes`` realises free gaps twice and refuses a difference; it ran."""
    shapes = enumerate_shapes(MECH.kbar)
    assert len(shapes) > 500
    assert all(abs(s.offsets[i]) <= 1 for s in shapes for i in s.free)


def _labelled(law, ids_to_label):
    out = {}
    for outcome, p in law.items():
        key = "bottom" if outcome == (-1,) else frozenset(ids_to_label[i] for i in outcome)
        out[key] = p
    return out


def test_the_shape_law_is_the_pairs_output_law():
    """15 random pairs on 6 items with ties and gaps up to 40: equal laws, up to 1e-12."""
    rng = random.Random(45)
    bounds = TopStableBounds(LOOSE)
    checked = 0
    while checked < 15:
        base = rng.randrange(3)
        counts = [base + rng.choice([0, 1, 2, rng.randrange(40)]) for _ in range(6)]
        counts2 = [c + rng.randrange(2) for c in counts]
        found = shape_of_pair(LOOSE, np.array(counts), np.array(counts2))
        if found is None:
            continue
        shape, point = found
        checked += 1
        law_a, law_b = bounds.box_laws(shape, point, point)
        top, _ = LOOSE.positions(np.array(counts))
        top2, _ = LOOSE.positions(np.array(counts2))
        label = {int(i): r for r, i in enumerate(top.items[: LOOSE.kbar])}
        for item, lab in zip(top2.items[: LOOSE.kbar], shape.top):
            assert label.setdefault(int(item), lab) == lab
        with working_precision():
            exact_a = _labelled(output_law(LOOSE, np.array(counts)), label)
            exact_b = _labelled(output_law(LOOSE, np.array(counts2)), label)
        for exact, law in ((exact_a, law_a), (exact_b, law_b)):
            assert set(exact) == {o for o, (_, hi) in law.items() if hi > 1e-200}
            for o, p in exact.items():
                lo, hi = law[o]
                assert lo <= float(p) * (1 + 1e-12) and float(p) <= hi * (1 + 1e-12)
                assert hi - lo <= 1e-12 * max(hi, 1e-300) + 1e-300


def test_position_ranges_enclose_every_point_of_a_box():
    """Random boxes of gaps in [-1, 30] (and INF ends): every integer point's π lies inside."""
    rng = random.Random(7)
    bounds = TopStableBounds(LOOSE)
    for _ in range(6):
        lo = tuple(rng.randrange(-1, 8) for _ in range(3))
        hi = tuple(a + rng.randrange(0, 3) for a in lo)
        hi = tuple(INF if rng.random() < 0.2 else b for b in hi)
        ranges = bounds.position_ranges(lo, hi)
        grid = [range(a, (a + 4 if b == INF else b) + 1) for a, b in zip(lo, hi)]
        for q in itertools.product(*grid):
            for (low, high), p in zip(ranges, bounds.positions(q)):
                assert low <= p <= high, (lo, hi, q)
        for (low, high), p in zip(
            ranges, bounds.positions(tuple(INF if b == INF else b for b in hi))
        ):
            assert low <= p <= high


def _leaf_of(cert, shapes, found):
    shape, point = found
    index = shapes.index(_canonical(shape, LOOSE.kbar))
    q = tuple(point[i] for i in shape.free)
    for i, lo, hi, bound in cert.leaves:
        if i == index and all(a <= v <= b for v, a, b in zip(q, lo, hi)):
            return bound
    raise AssertionError(f"no leaf covers {found}")


@pytest.mark.slow
def test_leaf_bounds_hold_on_exact_pairs_and_tampering_is_refused():
    """A 5 s certificate of LOOSE: each of 60 random pairs (counts <= 9, 5 items) has exact ε
    at most its leaf's bound, and the bound of its own point is its exact ε; a lowered bound, a
    dropped leaf and a pair that is not an add pair are refused."""
    pair = ((1, 4, 1, 7, 1), (2, 4, 2, 8, 1))
    cert = certify_top_stable(LOOSE, seconds=5, pair=pair)
    assert cert.lower > 1.0 and cert.upper >= cert.lower
    shapes = canonical_shapes(LOOSE.kbar)
    rng = random.Random(3)
    bounds = TopStableBounds(LOOSE)
    checked = tight = 0
    while checked < 60:
        counts = [rng.randrange(10) for _ in range(5)]
        counts2 = [c + rng.randrange(2) for c in counts]
        found = shape_of_pair(LOOSE, np.array(counts), np.array(counts2))
        if found is None:
            continue
        checked += 1
        exact = exact_epsilon(LOOSE, (counts, counts2), LOOSE.delta)
        bound = _leaf_of(cert, shapes, found)
        assert exact <= bound * (1 + 1e-9) + 1e-9, (counts, counts2, exact, bound)
        assert exact <= cert.upper
        # At the pair's own point the box bound is the exact ε (up to the bisection's 1e-7).
        shape, point = found
        at_point = bounds.epsilon_bound(shape, point, point, LOOSE.delta)
        assert exact <= at_point * (1 + 1e-9) + 1e-9
        if at_point != bounds.half_epsilon2:  # not the collapse's ε₂/2
            assert at_point <= exact + 1e-6
            tight += exact > 0
    assert tight >= 10  # the bound was checked where it is exact and positive

    data = cert.to_dict()
    assert recheck_top_stable(data, LOOSE)[0]
    finite = [i for i, leaf in enumerate(data["leaves"]) if 0 < float(leaf[3]) < float("inf")]
    worst = max(finite, key=lambda i: float(data["leaves"][i][3]))
    lowered = cert.to_dict()
    lowered["leaves"][worst][3] = float(lowered["leaves"][worst][3]) * 0.9
    ok, message = recheck_top_stable(lowered, LOOSE)
    assert not ok and "does not hold" in message
    dropped = cert.to_dict()
    del dropped["leaves"][worst]
    ok, message = recheck_top_stable(dropped, LOOSE)
    assert not ok and "not covered" in message
    moved = cert.to_dict()
    moved["pair"] = [[1, 4, 1, 7, 1], [3, 4, 2, 8, 1]]  # not neighbours
    ok, message = recheck_top_stable(moved, LOOSE)
    assert not ok and "not D, D + 1_S" in message
