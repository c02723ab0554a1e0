"""mechanisms.restricted_steps: F's positions-to-items map and STEP 2's halting test."""

import numpy as np

from mechanisms.histogram import as_top_counts
from mechanisms.outcomes import BOTTOM, PAD
from mechanisms.restricted_steps import halting_test, items_of_positions

# counts 5, 9, 7 of items 0, 1, 2: in rank order item 1 (9), item 2 (7), item 0 (5)
TOP = as_top_counts([5, 9, 7], 3)


def test_positions_become_item_ids_in_rank_order():
    batch = np.array([[0, 2], [1, BOTTOM]])
    assert items_of_positions(batch, TOP, ordered=True).tolist() == [[1, 0], [2, BOTTOM]]


def test_a_set_lists_its_items_by_ascending_id_then_its_bottom():
    batch = np.array([[0, 2, PAD], [1, 0, BOTTOM]])
    assert items_of_positions(batch, TOP, ordered=False).tolist() == [
        [0, 1, PAD],
        [1, 2, BOTTOM],
    ]


def test_a_low_threshold_keeps_every_item_and_a_high_one_halts_at_the_first():
    mapped = np.array([[1, 2], [2, 0]])
    rng = np.random.default_rng(0)
    kept = halting_test(mapped, TOP, 0, -1e6, 1.0, 3, rng)
    assert kept.tolist() == [[1, 2, PAD], [2, 0, PAD]]
    halted = halting_test(mapped, TOP, 0, 1e6, 1.0, 3, rng)
    assert halted.tolist() == [[BOTTOM, PAD, PAD], [BOTTOM, PAD, PAD]]


def test_the_threshold_noise_is_drawn_before_the_items_noise():
    mapped = np.array([[1, 2]])
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    halting_test(mapped, TOP, 0, 0.0, 2.0, 2, a)
    b.laplace(0.0, 2.0, 1)
    b.laplace(0.0, 2.0, (1, 2))
    assert a.random() == b.random()
