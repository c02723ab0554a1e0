"""Reused rows across offline outcome files (dpaudit.auditor.offline.reuse), and what stays unseen."""

import shutil
from pathlib import Path

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.offline import (
    OfflineInputError,
    audit_from_samples,
    fill_outcomes,
    outcome_path,
    read_plan,
    write_plan,
)
from dpaudit.auditor.offline.reuse import find_reuse

GUMBEL = M.GumbelTopK(k=2, epsilon=1.0)


def _files(seed, n=1250, histograms=4):
    rng = np.random.default_rng(seed)
    counts = [np.array([3, 2, 2, 1, 0]) + i for i in range(histograms)]
    return {
        (f"h{i}", split): GUMBEL.sample(c, n, rng)
        for i, c in enumerate(counts)
        for split in ("select", "confirm")
    }


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    directory = tmp_path_factory.mktemp("reuse") / "plan"
    write_plan(directory, GUMBEL, samples=20_000, max_pairs=8, seed=3)
    fill_outcomes(directory, GUMBEL)
    return directory


def test_a_confirm_file_shifted_by_one_row_is_refused(plan, tmp_path):
    # The select rows moved up by one, plus one fresh row: the forged confirm file.
    target = tmp_path / "copy"
    shutil.copytree(plan, target)
    h = read_plan(target)["histograms"][0]["id"]
    select, confirm = (Path(outcome_path(target, h, split)) for split in ("select", "confirm"))
    rows = select.read_text().splitlines(True)  # a header, then one outcome per row
    fresh = confirm.read_text().splitlines(True)[-1]
    confirm.write_text("".join(rows[:1] + rows[2:] + [fresh]))
    with pytest.raises(
        OfflineInputError,
        match=rf"outcomes/{h}\.confirm is outcomes/{h}\.select shifted by 1 row \(\d+ of \d+ "
        r"aligned rows equal; p = .* < .*\): every file must be drawn with fresh randomness",
    ):
        audit_from_samples(target)
    assert audit_from_samples(plan).events_confirmed  # the genuine files are accepted


def test_independent_files_are_not_refused():
    # Level 1e-6 per family (Bonferroni over every file pair and offset): 20 fixed seeds.
    assert not any(find_reuse(_files(seed)) for seed in range(20))


@pytest.mark.parametrize("offset", [0, 1, 7, -3, 400])
def test_copies_at_any_offset_are_found(offset):
    files = _files(1)
    select = files[("h1", "select")]
    fresh = files[("h1", "confirm")]
    if offset >= 0:
        copied = np.vstack([fresh[:offset], select])[: len(select)]
    else:
        copied = np.vstack([select[-offset:], fresh[:-offset]])
    files[("h1", "confirm")] = copied
    (found,) = find_reuse(files)
    assert (found.first, found.second, found.offset) == (
        ("h1", "select"),
        ("h1", "confirm"),
        offset,
    )
    assert found.equal == len(select) - abs(offset)
    assert found.kind == ("copy" if offset == 0 else "shifted copy")


def test_rows_of_one_histogram_in_another_and_a_file_repeating_itself():
    files = _files(2)
    files[("h3", "confirm")] = files[("h0", "select")].copy()
    (found,) = find_reuse(files)
    assert {found.first, found.second} == {("h0", "select"), ("h3", "confirm")}
    files = _files(2)
    half = files[("h2", "select")][:625]
    files[("h2", "select")] = np.vstack([half, half])
    (found,) = find_reuse(files)
    assert found.first == found.second == ("h2", "select") and found.offset == 625


def test_a_shuffled_copy_of_real_values_is_found_but_of_integers_is_not():
    rng = np.random.default_rng(4)
    items = _files(3)
    mixed = {
        k: M.MixedBatch(v, rng.standard_normal((len(v), 1)).round(12)) for k, v in items.items()
    }
    order = rng.permutation(1250)
    select = mixed[("h1", "select")]
    mixed[("h1", "confirm")] = M.MixedBatch(select.items[order], select.values[order])
    (found,) = find_reuse(mixed)
    assert found.kind == "repeated real rows" and found.equal == 1250
    # Integer outcomes: a permuted copy has the law of fresh draws (module docstring).
    items[("h1", "confirm")] = rng.permutation(items[("h1", "select")])
    assert find_reuse(items) == []


def test_a_constant_law_agrees_by_necessity_and_is_not_refused():
    constant = np.tile([0, 1], (1000, 1))
    assert find_reuse({("h0", "select"): constant, ("h0", "confirm"): constant.copy()}) == []
