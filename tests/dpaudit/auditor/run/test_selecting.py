"""The pipeline's first phases (dpaudit.auditor.run.selecting): screening and selection."""

from collections import Counter
from types import SimpleNamespace

import mechanisms as M
from dpaudit.auditor.interfaces import Tally
from dpaudit.auditor.run.selecting import Screening, screen, select
from dpaudit.neighbours.pairs import NeighbourPair

CLAIM = M.PrivacyClaim(0.1, 0.0, M.BoundedChange(1))
LEAKS = NeighbourPair((1,), (0,), "x")
QUIET = NeighbourPair((2,), (3,), "x")


class _Coin:
    """Outcome (0,) with frequency 0.9 on a histogram whose item 0 counts 1, else 0.1."""

    value_width = 0

    def __init__(self):
        self.draws = []

    def draw(self, phase, round_, histograms, per_histogram, encoder=None):
        self.draws.append((phase, round_, tuple(histograms), per_histogram))
        n = per_histogram
        return {
            h: Tally(
                Counter(
                    {
                        (0,): n * (9 if h == (1,) else 1) // 10,
                        (): n - n * (9 if h == (1,) else 1) // 10,
                    }
                ),
                n,
            )
            for h in histograms
        }


def _schedule(**overrides):
    values = {
        "keep": 1,
        "events_per_pair": 2,
        "chases_delta": True,
        "alpha_each": 0.01,
        "screen_rounds": lambda n: 1,
        "screen_size": lambda rounds, n: 1_000,
        "screen_target": lambda candidates: 10_000,
        "select_size": lambda n, screened: 2_000,
        "select_target": lambda pairs, n_kept: 10_000,
    }
    return SimpleNamespace(**{**values, **overrides})


def test_without_screening_rounds_the_first_candidates_are_kept_undrawn():
    source = _Coin()
    found = screen(source, [QUIET, LEAKS], CLAIM, _schedule(screen_rounds=lambda n: 0))
    assert found == Screening((QUIET,), {}, 0) and not source.draws


def test_screening_keeps_the_leaking_pair_and_selection_draws_once_more():
    source = _Coin()
    screening = screen(source, [QUIET, LEAKS], CLAIM, _schedule())
    assert screening.kept == (LEAKS,) and screening.rounds == 1
    assert set(screening.tallies) == {(1,), (0,)}
    selection = select(source, screening, CLAIM, _schedule())
    assert source.draws[-1] == ("select", 0, ((1,), (0,)), 2_000)
    assert selection.pairs == (LEAKS,) and selection.encoder is None
    assert len(selection.chosen) == 2 and all(c.pair == LEAKS for c in selection.chosen)
