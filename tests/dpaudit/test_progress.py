"""Progress bars: shown on stderr when asked for, even on a terminal that reports no size."""

import os

import mechanisms as M
from dpaudit.exact import worst_case
from dpaudit.progress import progress_bar


def test_a_bar_counts_to_its_total_on_stderr(capsys):
    bar = progress_bar(10, "pair", desc="work")
    bar.update(10)
    bar.close()
    err = capsys.readouterr().err
    assert "work" in err and "10/10" in err and "pair" in err


def test_a_terminal_without_rows_still_gets_a_bar(capsys, monkeypatch):
    # tqdm hides a bar at nrows 0 (an unsized pseudo-terminal); the fallback height keeps it.
    monkeypatch.setattr(os, "get_terminal_size", lambda *_: os.terminal_size((0, 0)))
    bar = progress_bar(3, "sample")
    assert bar.nrows == 24
    bar.update(3)
    bar.close()
    assert "3/3" in capsys.readouterr().err


def test_worst_case_shows_the_pairs_it_scores_only_when_asked(capsys):
    mech = M.TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    quiet = worst_case(mech, d=3, max_count=6, budget=60, confirm=1)
    assert capsys.readouterr().err == ""
    shown = worst_case(mech, d=3, max_count=6, budget=60, confirm=1, progress=True)
    err = capsys.readouterr().err
    assert "worst-case search" in err and "pair" in err
    assert shown.pair == quiet.pair  # the bar changes nothing of the search
