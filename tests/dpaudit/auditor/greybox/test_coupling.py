"""dpaudit.auditor.greybox.coupling: one stream on both neighbours, divergences and priced draws."""

import math
import os

import numpy as np
import pytest
from helpers import Batched, line_of

import mechanisms as M
from dpaudit.auditor import as_auditable
from dpaudit.auditor.greybox.coupling import coupled_runs


def not_a_mechanism(counts, size, rng):
    return np.zeros((size, 1), dtype=np.int64)


# -- coupled runs --


def skips_zero_counts(counts, rng):
    """Report noisy max that adds no noise to a count of 0 (the bug: a branch on the data)."""
    noisy = []
    for count in counts:
        if count == 0:
            noisy.append(0.0)
            continue
        noisy.append(count + rng.laplace(0.0, 2.0))
    return (int(np.argmax(noisy)),)


def noise_per_nonzero_item(counts, size, rng):
    """The domain read from the data: one noise draw per nonzero count."""
    items = np.flatnonzero(counts)
    noisy = counts[items] + rng.laplace(0.0, 2.0, (size, items.size))
    return items[np.argmax(noisy, axis=1)][:, None]


def scale_from_the_data(counts, size, rng):
    """Noise scaled by the largest count (a sensitivity read from the data)."""
    noisy = counts + rng.laplace(0.0, max(counts.max(), 1) / 2.0, (size, counts.size))
    return np.argmax(noisy, axis=1)[:, None]


def raises_on_empty(counts, size, rng):
    noise = rng.laplace(0.0, 1.0, (size, counts.size))
    if counts.sum() == 0:
        raise ZeroDivisionError("no users")
    return np.argmax(counts / counts.sum() + noise, axis=1)[:, None]


def raw_words_from_the_data(counts, size, rng):
    rng.bit_generator.random_raw(int(counts[0]) + 1)
    return np.zeros((size, 1), dtype=np.int64)


def test_a_noise_draw_skipped_on_a_zero_count_diverges_in_one_run():
    sampler = as_auditable(skips_zero_counts, claim=(1.0, 0.0), width=1).mechanism
    result = coupled_runs(sampler, [3, 0, 2], [3, 1, 2], seed=0, size=1)
    divergence = result.divergence
    assert result.diverged and result.divergent_share == 1.0
    assert (divergence.run, divergence.index, divergence.kind) == (0, 2, "missing")
    assert divergence.site == line_of(skips_zero_counts, "rng.laplace")
    assert [d.method for d in divergence.trace] == ["laplace"] * 2
    assert [d.method for d in divergence.trace2] == ["laplace"] * 3
    assert divergence.draw is None and divergence.draw2.method == "laplace"
    assert f"at {divergence.site}" in str(divergence)


def test_a_domain_read_from_the_data_diverges_in_shape():
    result = coupled_runs(Batched(noise_per_nonzero_item), [3, 0, 2], [3, 1, 2], seed=0)
    divergence = result.divergence
    assert (divergence.index, divergence.kind) == (0, "shape")
    assert "(1, 2) on counts, (1, 3) on counts2" in divergence.detail
    assert divergence.site == line_of(noise_per_nonzero_item, "rng.laplace")


def test_a_scale_read_from_the_data_diverges_in_a_parameter():
    result = coupled_runs(Batched(scale_from_the_data), [4, 2], [5, 2], seed=0)
    assert result.divergence.kind == "parameter"
    assert "parameter scale is 2.0 on counts, 2.5 on counts2" in result.divergence.detail


def test_an_exception_on_one_side_only_diverges_where_it_was_raised():
    result = coupled_runs(Batched(raises_on_empty), [1, 0], [0, 0], seed=0)
    divergence = result.divergence
    assert divergence.kind == "exception" and "ZeroDivisionError: no users" in divergence.detail
    assert "raised on counts2, not on counts" in divergence.detail
    assert divergence.site == line_of(raises_on_empty, "raise ZeroDivisionError")
    with pytest.raises(ZeroDivisionError):  # raising on both sides is the mechanism's error
        coupled_runs(Batched(raises_on_empty), [0, 0], [0, 0], seed=0)


def test_raw_words_that_depend_on_the_data_diverge_without_a_call_site():
    result = coupled_runs(Batched(raw_words_from_the_data), [1, 0], [2, 0], seed=0)
    assert result.divergence.kind == "raw" and result.divergence.site == ""


NEIGHBOURS = [
    ([4, 3, 3, 1, 0], [4, 3, 2, 1, 0]),  # a tie broken
    ([4, 3, 3, 1, 0], [5, 4, 4, 2, 1]),  # every count up (add one user)
    ([1, 0, 0, 0, 0], [0, 0, 0, 0, 0]),  # to the empty histogram
    ([2, 2, 2, 2, 2], [2, 2, 2, 2, 3]),  # the last item into the top k̄
    ([9, 4, 4, 4, 0], [9, 4, 4, 4, 1]),  # a zero count becomes 1
]


@pytest.mark.parametrize(
    "mechanism",
    [
        M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3),
        M.GumbelTopK(k=2, epsilon=0.5),
        M.ReportNoisyMax(epsilon=1.0),
    ],
    ids=lambda m: type(m).__name__,
)
def test_reference_mechanisms_draw_the_same_whatever_the_data(mechanism):
    # Each draws one array of a shape fixed by (k, k̄, d) at location 0, then post-processes.
    for counts, counts2 in NEIGHBOURS:
        for a, b in ((counts, counts2), (counts2, counts)):
            result = coupled_runs(mechanism, a, b, seed=5, size=10)
            assert not result.diverged, str(result.divergence)
            assert result.costs == () and result.max_run_epsilon == 0.0


def test_a_data_dependent_domain_diverges_in_correct_mechanisms_too():
    # FixedThreshold and StrictLimitDomain draw noise only for the items strictly above
    # h_(k̄+1) (their strict domain): the δ of their claims pays for that branch. A
    # divergence is data-dependent control flow, not a verdict.
    for mechanism in (
        M.FixedThreshold(kbar=3, epsilon=1.0, delta=1e-3),
        M.StrictLimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3),
    ):
        result = coupled_runs(mechanism, [1, 0, 0, 0, 0], [0, 0, 0, 0, 0], seed=0)
        assert result.divergence.kind == "shape", type(mechanism).__name__
        path = result.divergence.site.rsplit(":", 1)[0]
        assert os.path.basename(os.path.dirname(os.path.abspath(path))) == "mechanisms"


def laplace_release(counts, size, rng):
    """The Laplace mechanism with the data as the location: noisy counts, scale 2."""
    return rng.laplace(loc=counts.astype(float), scale=2.0, size=(size, counts.size))


def gaussian_release(counts, size, rng):
    return rng.normal(loc=counts.astype(float), scale=4.0, size=(size, counts.size))


def clipped_mean(counts, size, rng):
    """The mean of the nonzero counts, clipped to [0, 5]: NaN when none, and clip keeps NaN."""
    positive = counts[counts > 0]
    with np.errstate(invalid="ignore"):
        mean = np.clip(positive.sum() / positive.size, 0.0, 5.0)
    return rng.laplace(mean, 1.0, size)


def test_a_location_shift_is_priced_per_draw_with_its_site():
    result = coupled_runs(Batched(laplace_release), [3, 1, 2], [3, 2, 3], seed=0, size=4)
    assert not result.diverged and len(result.costs) == 4
    assert {cost.run for cost in result.costs} == {0, 1, 2, 3}
    cost = result.costs[0]
    assert cost.epsilon == pytest.approx(1.0) and cost.exact  # |Δ|₁ / b = 2 / 2
    assert cost.site == line_of(laplace_release, "rng.laplace")
    assert result.run_epsilon(0) == pytest.approx(1.0) == result.max_run_epsilon
    assert result.exceeding(0.5) == result.costs and result.exceeding(1.0) == ()


def test_a_gaussian_shift_is_priced_in_gaussian_dp():
    result = coupled_runs(Batched(gaussian_release), [3, 1], [6, 5], seed=0)
    assert result.max_run_mu == pytest.approx(1.25)  # ‖(3, 4)‖₂ / 4
    assert math.isinf(result.max_run_epsilon)


def test_a_nan_that_passes_a_clip_costs_infinity_at_its_draw():
    result = coupled_runs(Batched(clipped_mean), [1, 0, 0], [0, 0, 0], seed=0)
    (cost,) = result.costs
    assert math.isinf(cost.epsilon) and cost.site == line_of(clipped_mean, "rng.laplace")


def test_the_same_seed_gives_the_same_result():
    sampler = as_auditable(skips_zero_counts, claim=(1.0, 0.0), width=1).mechanism
    one = coupled_runs(sampler, [3, 0, 2], [3, 1, 2], seed=11, size=3)
    two = coupled_runs(sampler, [3, 0, 2], [3, 1, 2], seed=np.random.SeedSequence(11), size=3)
    assert [(d.run, d.index, d.kind, d.site) for d in one.divergences] == [
        (d.run, d.index, d.kind, d.site) for d in two.divergences
    ]
    assert one.counts == (3, 0, 2) and one.counts2 == (3, 1, 2)


def test_bad_arguments_name_themselves_and_the_fix():
    with pytest.raises(ValueError, match=r"mechanism must have sample.*as_auditable"):
        coupled_runs(not_a_mechanism, [1], [2], seed=0)
    with pytest.raises(ValueError, match="seed"):
        coupled_runs(M.ReportNoisyMax(epsilon=1.0), [1], [2], seed=-1)
    with pytest.raises(ValueError, match="size"):
        coupled_runs(M.ReportNoisyMax(epsilon=1.0), [1], [2], seed=0, size=0)
    with pytest.raises(ValueError, match="values must be True or False"):
        coupled_runs(M.ReportNoisyMax(epsilon=1.0), [1], [2], seed=0, values=1)
