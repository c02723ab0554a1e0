"""``greybox.sites``: a draw's or an exception's site is the first frame outside numpy and
the grey box, relative to the working directory when below it."""

import os

import numpy as np

from dpaudit.auditor.greybox import RecordingGenerator, coupled_runs
from dpaudit.auditor.greybox.sites import is_internal, raise_site, short_path

HERE = os.path.abspath(__file__)


def test_short_path_is_relative_below_the_working_directory(tmp_path, monkeypatch):
    inside = tmp_path / "pkg" / "mech.py"
    monkeypatch.chdir(tmp_path)
    assert short_path(str(inside)) == os.path.join("pkg", "mech.py")
    outside = os.path.join(os.path.dirname(str(tmp_path)), "elsewhere_h44t.py")
    assert short_path(outside) == outside


def test_numpy_and_the_grey_box_are_internal_user_code_is_not():
    import dpaudit.auditor.greybox.replay as replay

    assert is_internal(np.__file__)
    assert is_internal(os.path.join(os.path.dirname(np.__file__), "random", "anything.py"))
    assert is_internal(replay.__file__)
    assert not is_internal(HERE)
    import dpaudit.auditor.run.runner as runner  # the rest of dpaudit is not the grey box

    assert not is_internal(runner.__file__)


def test_raise_site_is_the_innermost_user_frame():
    def user_code():
        np.asarray([1])[5]  # IndexError raised inside numpy's indexing, called from here

    try:
        user_code()
    except IndexError as error:
        site = raise_site(error)
    path, line = site.rsplit(":", 1)
    assert path == short_path(HERE)
    with open(HERE) as source:
        assert "np.asarray([1])[5]" in source.read().splitlines()[int(line) - 1]


def test_raise_site_of_an_error_never_raised_is_empty():
    assert raise_site(ValueError("x")) == ""


def test_a_recorded_draw_is_sited_at_the_calling_line():
    rng = RecordingGenerator(np.random.PCG64(0))
    rng.normal(size=3)  # the site
    (draw,) = rng.draws
    path, line = draw.site.rsplit(":", 1)
    assert path == short_path(HERE)
    with open(HERE) as source:
        assert "rng.normal(size=3)  # the site" in source.read().splitlines()[int(line) - 1]


class RaisesOnSecond:
    """Raises on the neighbour's histogram only: the coupled runs part at an exception."""

    def sample(self, counts, size, rng):
        rng.random(size)
        if counts[0] == 0:
            raise ZeroDivisionError("the neighbour")  # the raise site
        return np.zeros((size, 1), dtype=np.int64)


def test_an_exception_divergence_is_sited_where_it_was_raised():
    found = coupled_runs(RaisesOnSecond(), [1, 1], [0, 1], seed=0, size=1)
    (divergence,) = found.divergences
    assert divergence.kind == "exception"
    path, line = divergence.site.rsplit(":", 1)
    assert path == short_path(HERE)
    with open(HERE) as source:
        assert "# the raise site" in source.read().splitlines()[int(line) - 1]
