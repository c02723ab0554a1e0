"""dpaudit.auditor.greybox.cross_entropy: shifts for a rare event, chosen on a pilot."""

import math

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.greybox.cross_entropy import cross_entropy_tilt
from dpaudit.auditor.greybox.recording import RecordingGenerator
from dpaudit.auditor.greybox.tilted_runs import weighted_runs

SEED = 20261203


def _item(j):
    return lambda outcomes: outcomes[:, 0] == j


def test_cross_entropy_finds_the_gumbel_conditional_shift():
    # Given "item 1 wins" on base a = (0, −7, −7), the winner's noise is Gumbel at
    # ln Σ e^{a_i − a_1} = ln(e^7 + 2), and item 0's noise has mean γ − 1 (its e^{−x} is
    # Gamma(2, 1) to within e^{−7}): the moment shifts are ln(e^7 + 2) and −1.
    tilt = cross_entropy_tilt(
        M.GumbelTopK(k=1, epsilon=1.0).sample, [7, 0, 0], _item(1), initial={0: [0.0, 5.0, 0.0]},
        samples=20_000, seed=SEED, rounds=3,
    )  # fmt: skip
    shift = tilt.tilts[0]
    assert shift[1] == pytest.approx(math.log(math.exp(7) + 2), abs=0.1)
    assert shift[0] == pytest.approx(-1.0, abs=0.1) and abs(shift[2]) < 0.1
    assert tilt.pilot_samples == 60_000 and tilt.rounds[-1].hits > 5_000


def test_the_pilot_draws_on_streams_no_main_run_takes_and_repeats_itself():
    mechanism, counts, initial = M.GumbelTopK(k=1, epsilon=1.0), [7, 0, 0], {0: [0.0, 5.0, 0.0]}
    tilt = cross_entropy_tilt(
        mechanism.sample, counts, _item(1), initial=initial, samples=500, seed=3
    )
    again = cross_entropy_tilt(
        mechanism.sample, counts, _item(1), initial=initial, samples=500, seed=3
    )
    assert np.array_equal(tilt.tilts[0], again.tilts[0])
    assert [r.hits for r in tilt.rounds] == [r.hits for r in again.rounds]
    # The first round draws from the initial tilts: on the main run's streams of the same seed
    # it would have the main run's hits; the pilot key keeps them apart.
    main = weighted_runs(
        mechanism.sample, counts, _item(1), tilts=initial, mixture=0.1, samples=500, seed=3
    )
    assert tilt.rounds[0].hits != int(main.hits.sum()) or tilt.rounds[0].estimate != float(
        main.values.mean()
    )


def test_a_pilot_without_a_hit_or_a_tilt_on_two_draws_is_refused():
    mechanism, counts = M.GumbelTopK(k=1, epsilon=1.0), [30, 0, 0]
    with pytest.raises(ValueError, match="no run of the pilot's round 0 fell in the event"):
        cross_entropy_tilt(mechanism.sample, counts, _item(1), initial={0: 0.0}, samples=50, seed=0)

    class TwoDraws:
        def sample(self, counts, size, rng):
            noise = rng.gumbel(size=(size, 3)) + rng.gumbel(size=(size, 3))
            return np.argmax(np.asarray(counts) + noise, axis=1)[:, None]

    probe = RecordingGenerator(np.random.PCG64(0))
    TwoDraws().sample([0, 0, 0], 2, probe)
    site = probe.draws[0].site
    with pytest.raises(ValueError, match="matched 2 draws of one batch"):
        cross_entropy_tilt(
            TwoDraws().sample, [0, 0, 0], _item(1), initial={site: 1.0}, samples=50, seed=0
        )
