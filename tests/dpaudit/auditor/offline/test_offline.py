"""Offline audits: plan files, outcome files in three formats, bounds, refusals.

Statistical tests use fixed seeds, so each is deterministic; the probability that a
seed gives a false failure is stated per test (alpha = 0.05 for a false VIOLATION of a
correct mechanism; for the catalog bug, its measured detection at the stated budget).
"""

import csv
import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import beta

import mechanisms as M
from dpaudit.auditor import VIOLATION, audit
from dpaudit.auditor.offline import (
    FORMAT_VERSION,
    FileDraws,
    OfflineInputError,
    audit_from_samples,
    fill_outcomes,
    outcome_path,
    read_outcomes,
    read_plan,
    write_outcomes,
    write_plan,
)
from dpaudit.catalog import catalog_entry
from dpaudit.neighbours import is_neighbour


@pytest.fixture(scope="module")
def small_plan(tmp_path_factory):
    """A filled plan of GumbelTopK(k=2, ε=1): 8 pairs, CSV files (about 0.3 s)."""
    directory = tmp_path_factory.mktemp("small") / "plan"
    mech = M.GumbelTopK(k=2, epsilon=1.0)
    write_plan(directory, mech, samples=20_000, max_pairs=8, seed=3)
    fill_outcomes(directory, mech)
    return directory


def _copy(small_plan, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(small_plan, target)
    return target


def test_plan_files_are_readable_without_dpaudit(tmp_path):
    # plan.json and histograms.csv read with json/csv only: every pair is a pair of neighbours
    # of the relation, every histogram has one row with its counts and sizes, and the sizes
    # add up to the budget (up to the rounding of the per-histogram shares).
    mech = M.LimitDomain(k=3, kbar=10, epsilon=1.0, delta=1e-6)
    write_plan(tmp_path, mech, samples=300_000, seed=1)
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["format_version"] == FORMAT_VERSION and plan["splits"] == ["select", "confirm"]
    assert plan["claim"] == {"epsilon": mech.claim.epsilon, "delta": mech.claim.delta}
    assert plan["width"] == mech.width and 1 <= len(plan["pairs"]) <= 40
    with open(tmp_path / "histograms.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_id = {r["id"]: r for r in rows}
    assert [r["id"] for r in rows] == [h["id"] for h in plan["histograms"]]
    for h in plan["histograms"]:
        row = by_id[h["id"]]
        assert [int(row[f"c{j}"]) for j in range(plan["domain_size"])] == h["counts"]
        assert int(row["select"]) == h["select"] and int(row["confirm"]) == h["confirm"]
    total = sum(h["select"] + h["confirm"] for h in plan["histograms"])
    assert 300_000 - 2 * len(rows) < total <= 300_000

    def counts(hid):
        return [int(by_id[hid][f"c{j}"]) for j in range(plan["domain_size"])]

    assert all(
        is_neighbour(counts(p["p"]), counts(p["q"]), mech.claim.neighbours) for p in plan["pairs"]
    )
    assert "restricted domain" in {p["family"] for p in plan["pairs"]}  # kbar steers the pairs
    assert (tmp_path / "outcomes").is_dir() and "--from-samples" in (
        tmp_path / "README.txt"
    ).read_text()
    with pytest.raises(OfflineInputError, match="exists"):
        write_plan(tmp_path, mech, samples=300_000)


def test_correct_mechanism_is_not_flagged(small_plan):
    # GumbelTopK is (2, 0)-DP: a VIOLATION has probability <= alpha = 0.05; fixed seed.
    result = audit_from_samples(small_plan)
    assert result.verdict != VIOLATION
    assert result.samples == sum(
        h["select"] + h["confirm"] for h in read_plan(small_plan)["histograms"]
    )
    assert result.pairs_screened == 8 and result.events_confirmed == 6
    assert result.evidence["offline"]["plan_sha256"] == read_plan(small_plan)["plan_sha256"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_catalog_bug_is_flagged_in_every_format(tmp_path, fmt):
    # em-non-monotone is 2ε-DP but claims ε (exact check in test_catalog.py). Default
    # families, 20 pairs, 200k outcomes: flagged with ε lower bound 1.36-1.49 (> 1) on
    # plan seeds 0-4 (measured); the same rows in every format give the same result.
    mech = catalog_entry("em-non-monotone").build()
    write_plan(tmp_path, mech, samples=200_000, max_pairs=20)
    fill_outcomes(tmp_path, mech, fmt=fmt)
    result = audit_from_samples(tmp_path)
    assert result.verdict == VIOLATION and result.epsilon_lower > mech.claim.epsilon
    assert all(name.endswith(fmt) for name in result.evidence["offline"]["files"])


def test_offline_equals_the_live_restricted_audit_on_the_same_samples(tmp_path):
    # One pair, restricted: the live audit has no screening, draws select then confirm on the
    # plan's seed streams; fill_outcomes draws the same rows, so every witness must agree
    # (an independent route: the live runner and its executor).
    mech = M.GumbelTopK(k=2, epsilon=1.0)
    pair = ((3, 2, 2, 0), (3, 2, 3, 0))
    write_plan(
        tmp_path, mech, pairs=[pair], restrict=True, samples=60_000, select_share=0.3, seed=4
    )
    fill_outcomes(tmp_path, mech, fmt="jsonl")
    offline = audit_from_samples(tmp_path)
    # looks=1: one fixed-size confirmation, as the offline plan draws it.
    live = audit(mech, pairs=[pair], restrict=True, samples=60_000, seed=4, search=False, looks=1)
    assert offline.witnesses == live.witnesses and len(offline.witnesses) == 3
    assert (offline.epsilon_lower, offline.verdict, offline.samples) == (
        live.epsilon_lower,
        live.verdict,
        live.samples,
    )


def test_bounds_are_bonferroni_over_the_chosen_events(small_plan):
    # Each witness's P lower bound is the one-sided Clopper–Pearson bound at alpha / (2 M),
    # M = events confirmed; recomputed from the beta quantile (scipy, not statsmodels).
    result = audit_from_samples(small_plan)
    level = result.alpha / (2 * result.events_confirmed)
    for w in result.witnesses:
        expected = beta.ppf(level, w.hits_p, w.samples_p - w.hits_p + 1) if w.hits_p else 0.0
        assert w.p_low == pytest.approx(expected, rel=1e-9, abs=1e-15)
        assert w.q_high == pytest.approx(
            beta.isf(level, w.hits_q + 1, w.samples_q - w.hits_q)
            if w.hits_q < w.samples_q
            else 1.0,
            rel=1e-9,
        )


def test_nothing_is_chosen_from_the_confirm_split(small_plan, tmp_path):
    # Redrawing only the confirm split changes the hits, never the pairs or events chosen.
    other = _copy(small_plan, tmp_path)
    fill_outcomes(other, M.GumbelTopK(k=2, epsilon=1.0), seed=99, splits=("confirm",))
    first, second = audit_from_samples(small_plan), audit_from_samples(other)
    key = [(w.counts, w.counts2, w.event) for w in first.witnesses]
    assert key == [(w.counts, w.counts2, w.event) for w in second.witnesses]
    assert [w.hits_p for w in first.witnesses] != [w.hits_p for w in second.witnesses]


def test_the_files_serve_the_confirm_split_only_after_every_choice(small_plan):
    # The no-optional-stopping rule as a property of the source: the planned rows exactly,
    # the select split before confirmation, and no select draw once confirmation began.
    plan = read_plan(small_plan)
    source = FileDraws(small_plan, plan)
    first = plan["histograms"][0]
    h = tuple(first["counts"])
    assert source.draw("screen", 0, [h], None)[h].n == first["select"]
    assert source.raw("learn", 0, [h], None)[0].shape[0] == first["select"]
    with pytest.raises(ValueError, match="planned rows"):
        source.draw("select", 0, [h], first["select"] + 1)
    assert source.draw("confirm", 0, [h], None)[h].n == first["confirm"]
    with pytest.raises(RuntimeError, match="after confirmation began"):
        source.draw("select", 0, [h], None)
    total = sum(g["select"] + g["confirm"] for g in plan["histograms"])
    assert source.samples == total


def test_three_formats_read_the_same_outcomes(tmp_path):
    batch = np.array([[3, 1, -1], [0, -2, -2], [-1, -2, -2], [-2, -2, -2], [4, 2, 0]])
    for ext in ("csv", "jsonl", "parquet"):
        write_outcomes(tmp_path / f"o.{ext}", batch)
        assert (
            read_outcomes(tmp_path / f"o.{ext}", width=3, domain_size=5).tolist() == batch.tolist()
        )
    # Hand-written variants: -2 pads, fewer columns than the width, a list column, objects.
    (tmp_path / "h.csv").write_text("first,second,third\n3, 1,-1\n0,-2\n-1,,\n-2\n")
    padded = np.hstack([batch[:4], np.full((4, 1), -2)])
    assert read_outcomes(tmp_path / "h.csv", width=4, domain_size=5).tolist() == padded.tolist()
    (tmp_path / "h.jsonl").write_text('{"outcome": [3, 1, -1]}\n\n[0]\n')
    assert (
        read_outcomes(tmp_path / "h.jsonl", width=3, domain_size=5).tolist() == batch[:2].tolist()
    )
    import duckdb

    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT * FROM (VALUES ([3, 1, -1]), ([0]), ([]::BIGINT[])) t(outcome)) "
            f"TO '{tmp_path / 'l.parquet'}' (FORMAT parquet)"
        )
    assert read_outcomes(tmp_path / "l.parquet", width=3, domain_size=5).tolist() == [
        [3, 1, -1],
        [0, -2, -2],
        [-2, -2, -2],
    ]


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("f.csv", "o0,o1\n1,2.0\n", "'2.0' is not an integer"),
        ("f.csv", "o0,o1\n1,1e3\n", "'1e3' is not an integer"),
        ("f.csv", "1,2\n3,4\n", "looks like an outcome"),
        ("f.csv", "o0,o1\n1,7\n", r"ids in \[0, 5\)"),
        ("f.csv", "o0,o1\n-1,2\n", "⊥ \\(-1\\) only last"),
        ("f.csv", "o0,o1\n2,2\n", "no id twice"),
        ("f.csv", "o0,o1,o2,o3\n1,2,3,4\n", "longer than the plan's width 3"),
        ("f.jsonl", "[1, 2.5]\n", "not a list of integer"),
        ("f.jsonl", "[1, true]\n", "not a list of integer"),
        ("f.jsonl", "[1, 2\n", "not JSON"),
    ],
)
def test_bad_outcomes_are_refused(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(OfflineInputError, match=message):
        read_outcomes(tmp_path / name, width=3, domain_size=5)


def test_float_parquet_is_refused(tmp_path):
    import duckdb

    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT 1.5::DOUBLE AS o0) TO '{tmp_path / 'f.parquet'}' (FORMAT parquet)"
        )
    with pytest.raises(OfflineInputError, match="DOUBLE, not integer item ids"):
        read_outcomes(tmp_path / "f.parquet", width=2, domain_size=5)


def _first(plan_dir, split="select"):
    return read_plan(plan_dir)["histograms"][0]


def test_wrong_row_counts_missing_and_extra_files_are_refused(small_plan, tmp_path):
    target = _copy(small_plan, tmp_path)
    h = _first(target)
    path = Path(outcome_path(target, h["id"], "select"))
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))
    with pytest.raises(
        OfflineInputError, match=f"holds {h['select'] - 1} outcomes.*exactly {h['select']}"
    ):
        audit_from_samples(target)
    path.write_text("".join(lines))
    shutil.copy(path, outcome_path(target, h["id"], "select", "jsonl"))
    with pytest.raises(OfflineInputError, match="both hold"):
        audit_from_samples(target)
    (target / "outcomes" / f"{h['id']}.select.jsonl").unlink()
    shutil.copy(path, outcome_path(target, "h999", "select"))
    with pytest.raises(OfflineInputError, match="not in this plan"):
        audit_from_samples(target)
    (target / "outcomes" / "h999.select.csv").unlink()
    (target / "outcomes" / f"{h['id']}.confirm.csv").unlink()
    with pytest.raises(
        OfflineInputError, match=f"missing outcome file outcomes/{h['id']}.confirm.csv"
    ):
        audit_from_samples(target)


def test_reused_rows_are_refused_but_a_deterministic_system_is_not(small_plan, tmp_path):
    target = _copy(small_plan, tmp_path)
    h = _first(target)
    shutil.copy(outcome_path(target, h["id"], "select"), outcome_path(target, h["id"], "confirm"))
    with pytest.raises(OfflineInputError, match="hold the same rows"):
        audit_from_samples(target)
    # A deterministic system gives identical files by necessity: not refused.
    constant = tmp_path / "constant"
    write_plan(constant, claim=(1.0, 0.0), width=2, domain_size=3, max_pairs=3, samples=2_000)

    @dataclass(frozen=True)
    class FirstTwo:
        def sample(self, counts, size, rng):
            return np.tile([0, 1], (size, 1))

    fill_outcomes(constant, FirstTwo())
    result = audit_from_samples(constant)
    assert result.verdict != VIOLATION and result.epsilon_lower == 0.0


def test_plans_of_another_version_or_edited_are_refused(small_plan, tmp_path):
    target = _copy(small_plan, tmp_path)
    plan = json.loads((target / "plan.json").read_text())
    edited = dict(plan, alpha=0.5)
    (target / "plan.json").write_text(json.dumps(edited))
    with pytest.raises(OfflineInputError, match="modified after"):
        audit_from_samples(target)
    (target / "plan.json").write_text(json.dumps(dict(plan, format_version=FORMAT_VERSION + 1)))
    with pytest.raises(OfflineInputError, match=f"format version {FORMAT_VERSION + 1}"):
        audit_from_samples(target)
    (target / "plan.json").unlink()
    with pytest.raises(OfflineInputError, match=r"plan\.json is missing"):
        audit_from_samples(target)


def test_detectable_epsilon_is_finite_for_a_powered_plan(small_plan):
    # Guards the power computation against the offline sample sizes (n per histogram).
    # (per event: the headline is finite only when some event has ε power at every Q of its
    # interval, which this small plan need not reach)
    result = audit_from_samples(small_plan)
    assert all(not math.isnan(w.detectable_epsilon) for w in result.witnesses)
    assert any(math.isfinite(w.detectable_delta) for w in result.witnesses)


# ---------------------------------------------------------------------------
# Systems that release real values (value columns v0..).


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_values_round_trip_in_every_format(tmp_path, fmt):
    items = np.array([[2, 0], [1, M.BOTTOM], [M.BOTTOM, M.PAD]], dtype=np.int64)
    values = np.array([[3.25, -1e-300], [0.1, np.nan], [np.nan, np.nan]])
    path = tmp_path / f"x.{fmt}"
    write_outcomes(path, M.MixedBatch(items, values))
    back = read_outcomes(path, width=2, domain_size=3, values=2)
    assert np.array_equal(back.items, items)
    assert np.array_equal(np.isnan(back.values), np.isnan(values))
    assert np.array_equal(back.values[~np.isnan(values)], values[~np.isnan(values)])  # exact


@pytest.mark.slow  # 600,000 outcomes through JSON lines; the formats are checked fast on smaller files
def test_value_release_offline_flags_half_noise_and_passes_its_twin(tmp_path):
    # The catalog pair at 300,000 outcomes on the neighbours of one histogram: the
    # half-noise release is flagged (its ε when every count moves is 2 against a claim of
    # 1.2), and the correct twin is not flagged (false alarm <= alpha = 0.05, fixed seed).
    entry = catalog_entry("noisy-counts-half-noise")
    for name, mech, flagged in (("bug", entry.build(), True), ("twin", entry.correct(), False)):
        directory = tmp_path / name
        plan = write_plan(directory, mech, samples=300_000, counts=[3, 2, 2, 0, 0], restrict=True)
        assert plan["values"] == 2
        fill_outcomes(directory, mech, fmt="jsonl")
        result = audit_from_samples(directory)
        assert result.violation is flagged, str(result)


def test_values_offline_are_checked(tmp_path):
    mech = catalog_entry("rnm-releases-noisy-max").build()
    write_plan(tmp_path, mech, samples=20_000, max_pairs=4)
    fill_outcomes(tmp_path, mech)
    path = outcome_path(tmp_path, "h000", "select")
    with open(path) as handle:
        lines = handle.read().splitlines()
    lines[3] = "abc"
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with pytest.raises(OfflineInputError, match="not a number"):
        audit_from_samples(tmp_path)
    with open(path, "w") as handle:
        handle.write("value\n" + "\n".join(lines[1:3]) + "\n")
    with pytest.raises(OfflineInputError, match="columns"):
        audit_from_samples(tmp_path)
