import itertools
import math

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import PAD
from mechanisms.plackett_luce import (
    alias_table,
    count_prefix_outcomes,
    outcome_table,
    sample_plackett_luce,
)

# Every goodness-of-fit test below rejects at p < 1e-6 with a fixed seed, so a
# correct sampler fails it with probability <= 1e-6 per test.
P_REJECT = 1e-6


def exact_prefix_law(log_weights, k, stop=None):
    """The Plackett–Luce k-prefix law by brute force over orderings, in mpmath.

    Independent of the code under test: for each ordered selection of
    distinct candidates, multiply w_c / (sum of unused weights), cutting at
    ``stop``.
    """
    with mpmath.workdps(40):
        weights = [mpmath.e ** mpmath.mpf(float(v)) for v in log_weights]
        m = len(weights)
        law = {}

        def extend(prefix, prob):
            if len(prefix) == min(k, m) or (prefix and prefix[-1] == stop):
                law[tuple(prefix)] = law.get(tuple(prefix), 0) + prob
                return
            unused = [c for c in range(m) if c not in prefix]
            total = sum(weights[c] for c in unused)
            for c in unused:
                extend(prefix + [c], prob * weights[c] / total)

        extend([], mpmath.mpf(1))
        return {outcome: float(p) for outcome, p in law.items()}


def assert_fits(batch, law, p_reject=P_REJECT):
    assert_sampler_fits(law, batch, p_reject)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 7), k=st.integers(1, 5), with_stop=st.booleans(), data=st.data())
def test_table_lists_every_outcome_once_and_sums_to_one(m, k, with_stop, data):
    stop = data.draw(st.integers(0, m - 1)) if with_stop else None
    lw = np.array(data.draw(st.lists(st.floats(-5, 5), min_size=m, max_size=m)))
    rows, probs = outcome_table(lw, k, stop)
    assert rows.shape == (count_prefix_outcomes(m, k, stop), k)
    assert len({tuple(r) for r in rows.tolist()}) == rows.shape[0]
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "lw, k, stop",
    [
        ([0.0, -1.0, 0.5, 2.0], 2, None),
        ([0.0, -1.0, 0.5, 2.0, 1.0], 3, 4),
        ([1.0, 1.0, 1.0], 5, 1),  # k > m: rows end when the candidates run out
        ([0.0, -800.0, -1600.0], 3, None),  # weights that underflow jointly
    ],
)
def test_table_probabilities_match_brute_force(lw, k, stop):
    rows, probs = outcome_table(np.array(lw), k, stop)
    table = {tuple(int(v) for v in r if v != PAD): p for r, p in zip(rows, probs)}
    exact = exact_prefix_law(lw, k, stop)
    assert set(table) == set(exact)
    for outcome, p in exact.items():
        assert table[outcome] == pytest.approx(p, rel=1e-12, abs=1e-300)


def test_conditional_draws_survive_dominant_weights():
    # After the dominant candidate the rest must keep their relative odds,
    # even though their first-draw probabilities underflow.
    rows, probs = outcome_table(np.array([0.0, -1000.0, -1001.0]), 2)
    table = {tuple(r): p for r, p in zip(rows.tolist(), probs)}
    assert table[(0, 1)] == pytest.approx(1 / (1 + math.exp(-1)), rel=1e-12)
    assert table[(0, 2)] == pytest.approx(math.exp(-1) / (1 + math.exp(-1)), rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=40).filter(lambda v: sum(v) > 0))
def test_alias_table_reproduces_the_law(values):
    probs = np.array(values)
    keep, alias = alias_table(probs)
    n = probs.size
    rebuilt = keep / n
    np.add.at(rebuilt, alias, (1 - keep) / n)
    np.testing.assert_allclose(rebuilt, probs / probs.sum(), atol=1e-12)
    assert np.all(keep[probs == 0] == 0)


@pytest.mark.parametrize("method", ["table", "gumbel"])
@pytest.mark.parametrize(
    "lw, k, stop",
    [
        (np.log([5.0, 3, 2, 1, 1, 1, 4]), 3, 6),
        (np.array([0.0, -0.5, 1.0, 0.2, -2.0]), 2, None),
        (np.array([2.0, 0.0, 0.1]), 4, 0),
    ],
)
def test_samplers_match_the_exact_law(method, lw, k, stop):
    rng = np.random.default_rng(20261123)
    batch = sample_plackett_luce(lw, k, 100_000, rng, stop=stop, method=method)
    assert batch.shape == (100_000, k) and batch.dtype == np.int64
    assert_fits(batch, exact_prefix_law(lw, k, stop))


def test_labels_relabel_and_keep_pad():
    rng = np.random.default_rng(3)
    labels = np.array([40, 30, -1])
    for method in ("table", "gumbel"):
        batch = sample_plackett_luce(
            np.zeros(3), 3, 2000, rng, stop=2, labels=labels, method=method
        )
        assert set(np.unique(batch)) <= {40, 30, -1, PAD}
        # ⊥ (label -1) is always the last non-PAD element of a row.
        for row in batch[:200]:
            kept = row[row != PAD]
            assert -1 not in kept[:-1]


def test_same_generator_state_gives_same_output():
    lw = np.log([5.0, 3, 2, 1, 4])
    for method in ("auto", "table", "gumbel"):
        a = sample_plackett_luce(lw, 2, 500, np.random.default_rng(9), stop=4, method=method)
        b = sample_plackett_luce(lw, 2, 500, np.random.default_rng(9), stop=4, method=method)
        assert np.array_equal(a, b)


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError, match="method"):
        sample_plackett_luce(np.zeros(3), 2, 10, np.random.default_rng(0), method="sort")


@pytest.mark.parametrize("m, k", [(4, 2), (5, 5), (3, 6), (1, 2)])
def test_outcome_count_formula(m, k):
    # Independent count: the support of the brute-force law.
    assert count_prefix_outcomes(m, k, m - 1) == len(exact_prefix_law(np.zeros(m), k, m - 1))
    assert count_prefix_outcomes(m, k, None) == len(
        list(itertools.permutations(range(m), min(k, m)))
    )
