"""dpaudit.auditor.greybox.tilted_generator: a batch's draws shifted row by row, and weighted.

Statistical assertions compare a mean with a Hoeffding interval at failure probability 1e-6; the
seeds are fixed, so a pass is a pass on every run.
"""

import math

import numpy as np
import pytest
from helpers import ThreeDraws

from dpaudit.auditor.greybox.recording import RecordingGenerator
from dpaudit.auditor.greybox.tilted_generator import TiltedGenerator, frozen_tilts, tilt_table

SEED = 20261203
LAMBDA = 0.1


def _generator(seed, size, tilts, mixture=LAMBDA, **options):
    mechanism, components = np.random.SeedSequence(seed).spawn(2)
    return TiltedGenerator(
        np.random.PCG64(mechanism),
        size=size,
        tilts=tilts,
        mixture=mixture,
        components=np.random.PCG64(components),
        **options,
    )


def _plain(seed):
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed).spawn(2)[0]))


class PerRun:
    """Draws its noise run by run: no draw holds the batch on its leading axis."""

    def sample(self, counts, size, rng):
        rows = [np.argmax(np.asarray(counts) + rng.laplace(size=len(counts))) for _ in range(size)]
        return np.array(rows, dtype=np.int64)[:, None]


def test_mixture_one_reproduces_numpy_draw_for_draw():
    size = 1_000
    rng = _generator(SEED, size, {0: [5.0, -5.0, 5.0], 2: 3.0}, mixture=1.0, values=True)
    plain = RecordingGenerator(
        np.random.PCG64(np.random.SeedSequence(SEED).spawn(2)[0]), values=True
    )
    mechanism = ThreeDraws()
    assert np.array_equal(
        mechanism.sample([3, 2, 0], size, rng), mechanism.sample([3, 2, 0], size, plain)
    )
    assert [d.method for d in rng.draws] == ["laplace", "random", "normal"]
    for draw, draw2 in zip(rng.draws, plain.draws):
        assert np.array_equal(draw.values, draw2.values)
    assert rng.bit_generator.state == plain.bit_generator.state
    assert np.array_equal(rng.weights(), np.ones(size))
    assert [d.index for d in rng.tilted_draws] == [0, 2] and rng.unmatched == ()


def test_proposal_rows_are_numpys_draw_plus_the_shift():
    size, shift = 2_000, np.array([1.5, -2.0, 0.25])
    rng = _generator(SEED, size, {0: shift}, mixture=0.4)
    values = rng.laplace(0.0, 2.0, size=(size, 3))
    plain = _plain(SEED).laplace(0.0, 2.0, size=(size, 3))
    original = rng.original
    assert np.array_equal(values[original], plain[original])
    assert np.array_equal(values[~original], plain[~original] + shift)
    assert 0.35 < original.mean() < 0.45  # λ = 0.4, 2000 rows: 0.4 ± 4.6 standard errors


def test_gumbel_log_ratio_is_the_closed_form():
    size, sigma = 500, np.array([-1.0, 4.0])
    rng = _generator(SEED, size, {0: sigma})
    x = rng.gumbel(0.5, 2.0, size=(size, 2))
    z = (x - 0.5) / 2.0
    # ln p − ln p̃ = e^{−z}(e^{σ/b} − 1) − σ/b per element.
    expected = (np.exp(-z) * np.expm1(sigma / 2.0) - sigma / 2.0).sum(axis=1)
    assert np.allclose(rng.log_ratio, expected, rtol=1e-9, atol=1e-9)
    weights = rng.weights()
    assert np.allclose(weights, 1.0 / (LAMBDA + (1 - LAMBDA) * np.exp(-expected)))
    assert weights.max() <= 1.0 / LAMBDA


@pytest.mark.parametrize(
    ("method", "shift"),
    [
        ("laplace", [1.0, -2.0, 0.5]),
        ("gumbel", [2.0, -1.0, 0.0]),
        ("normal", 1.5),
        ("logistic", -2.0),
    ],
)
def test_weights_have_mean_one_under_the_mixture(method, shift):
    # Weights lie in [0, 1/λ]; Hoeffding: |mean − 1| <= (1/λ) sqrt(ln(2/1e-6) / (2n)) fails a
    # correct weight with probability <= 1e-6.
    size, mixture = 1_000_000, 0.3
    rng = _generator(SEED, size, {0: shift}, mixture=mixture)
    getattr(rng, method)(0.2, 1.3, size=(size, 3))
    weights = rng.weights()
    radius = (1.0 / mixture) * math.sqrt(math.log(2.0 / 1e-6) / (2.0 * size))
    assert abs(weights.mean() - 1.0) <= radius
    assert weights.std() > 0.3 and weights.max() <= 1.0 / mixture


def test_a_tilt_by_site_shifts_every_draw_at_that_line():
    size = 100
    probe = RecordingGenerator(np.random.PCG64(0))
    ThreeDraws().sample([1, 0], 4, probe)
    site = probe.draws[2].site
    rng = _generator(SEED, size, {site: [0.5, 0.5]})
    ThreeDraws().sample([1, 0], size, rng)
    assert [(d.index, d.method, d.key) for d in rng.tilted_draws] == [(2, "normal", site)]


def test_a_draw_without_the_batch_on_its_leading_axis_is_refused_with_its_site():
    rng = _generator(SEED, 5, {0: 1.0})
    with pytest.raises(
        ValueError,
        match=r"tilted draw #0 laplace at .*test_tilted_generator\.py:\d+ has shape \(2,\)",
    ):
        PerRun().sample([1, 0], 5, rng)


def test_tilts_that_do_not_fit_are_refused():
    rng = _generator(SEED, 10, {0: [1.0, 2.0, 3.0]})
    with pytest.raises(
        ValueError, match=r"shape \(3,\), which does not broadcast to the shape \(2,\)"
    ):
        rng.laplace(size=(10, 2))
    with pytest.raises(ValueError, match="two tilts"):
        probe = RecordingGenerator(np.random.PCG64(0))
        ThreeDraws().sample([1, 0], 4, probe)
        ThreeDraws().sample([1, 0], 10, _generator(SEED, 10, {0: 1.0, probe.draws[0].site: 1.0}))
    with pytest.raises(ValueError, match="tilt key"):
        _generator(SEED, 10, {-1: 1.0})
    with pytest.raises(ValueError, match="mixture"):
        _generator(SEED, 10, {0: 1.0}, mixture=0.0)
    bits = np.random.PCG64(0)
    with pytest.raises(ValueError, match="stream of its own"):
        TiltedGenerator(bits, size=3, tilts={0: 1.0}, mixture=0.5, components=bits)


def test_the_tilt_table_is_read_only_and_keyed_by_int_or_site():
    table = tilt_table({np.int64(2): [1, 2], "file.py:3": 0.5})
    assert list(table) == [2, "file.py:3"] and type(next(iter(table))) is int
    assert table[2].dtype == np.float64 and not table[2].flags.writeable
    frozen = frozen_tilts(table)
    with pytest.raises(TypeError):
        frozen[0] = np.zeros(2)  # type: ignore[index]
    for bad, words in [({}, "non-empty mapping"), ({"": 1.0}, "empty string"),
                       ({1.5: 1.0}, "draw index"), ({0: "x"}, "array of numbers"),
                       ({0: [1.0, np.nan]}, "finite")]:  # fmt: skip
        with pytest.raises(ValueError, match=words):
            tilt_table(bad)
