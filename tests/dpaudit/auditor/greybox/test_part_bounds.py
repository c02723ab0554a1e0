"""dpaudit.auditor.greybox.part_bounds: one part of a structural zero's event, bounded alone."""

import math

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.greybox.part_bounds import (
    PartRuns,
    first_gap_item,
    one_shift,
    part_event,
    shifted_part_bound,
    way_component,
)
from dpaudit.auditor.greybox.recording import RecordingGenerator
from mechanisms import PAD


def test_each_run_s_first_gap_item_after_the_check():
    checked = []
    first_item = first_gap_item(frozenset({3, 4}), checked.append)
    outcomes = np.array([[0, 3, 4], [1, 2, 0], [4, 3, 0]])
    assert first_item(outcomes).tolist() == [3, PAD, 4]
    assert len(checked) == 1 and checked[0] is outcomes
    assert part_event(first_item, 4)(outcomes).tolist() == [False, False, True]


def test_a_way_in_as_a_shift_or_as_a_tilt_of_the_same_mean():
    rng = RecordingGenerator(np.random.PCG64(0))
    rng.laplace(0.0, 2.0, size=(5, 3))
    draw = rng.draws[0]
    shift = one_shift(draw, 1, 3.0)
    assert list(shift) == [0] and shift[0].tolist() == [0.0, 6.0, 0.0]  # 3 scales of 2
    theta = way_component(draw, 1, 3.0)[0][1]
    assert 2 * theta / (1 - theta**2) == pytest.approx(3.0)  # the tilted Laplace's mean


def test_a_part_s_lower_bound_is_below_its_exact_probability():
    # GumbelTopK on (7, 0, 0): P(item 1) = 1/(e^7 + 2). One shift of item 1's noise reaches it.
    mechanism, counts = M.GumbelTopK(k=1, epsilon=1.0), np.array([7, 0, 0])
    exact = 1.0 / (math.exp(7) + 2)
    seeds = tuple(np.random.SeedSequence(4).spawn(2))
    settings = PartRuns(rows=1_000, runs=4_000, pilot_runs=1_000, mixture=0.1, alpha=1e-3)
    part, spent = shifted_part_bound(
        mechanism.sample, counts, lambda o: o[:, 0] == 1, 1, {0: np.array([0.0, 5.0, 0.0])},
        settings, seeds,
    )  # fmt: skip
    assert part.item == 1 and part.runs == 4_000 and spent == 3_000
    assert 0.0 < part.lower <= exact
    assert part.estimate == pytest.approx(exact, rel=0.2)
    assert part.hits > 400 and not part.components
