"""Auditing releases with real values: encoders, events over keys, verdicts, evidence."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpaudit
import mechanisms as M
from dpaudit.auditor.values import (
    VIEW_BINS,
    VIEW_FLOAT,
    VIEW_ITEM_TAILS,
    VIEW_LOW_BITS,
    VIEW_SCORE,
    ItemValueThreshold,
    ValueEncoder,
    ValueRegion,
    ValueThreshold,
    as_mixed_batch,
    fit_encoder,
    value_candidate_events,
)
from dpaudit.auditor.values.encoders import unique_rows
from dpaudit.auditor.values.outcome_events import event_from_dict, events_hits
from dpaudit.auditor.values.score import fit_linear_score
from dpaudit.catalog import catalog_entry
from dpaudit.cli import main

USER = "user_mechanisms"


# ---------------------------------------------------------------------------
# Batches and encoders


def test_mixed_batch_checks_its_shapes():
    with pytest.raises(ValueError, match="rows"):
        M.MixedBatch(np.zeros((3, 1), dtype=np.int64), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="integer ids"):
        M.MixedBatch(np.zeros((2, 1)), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="real numbers"):
        M.MixedBatch(np.zeros((2, 1), dtype=np.int64), np.array([["a"], ["b"]]))
    batch = M.MixedBatch(np.array([[3, M.PAD]]), np.array([2.5, np.nan])[None, :])
    assert batch.row(0)[0] == (3,) and np.isnan(batch.row(0)[1][1])


def test_as_mixed_batch_accepts_the_documented_returns_and_names_the_mechanism():
    values = np.arange(4.0)
    assert as_mixed_batch(values, 4, 0, 1, "f").values.shape == (4, 1)
    pair = as_mixed_batch((np.array([[1], [0], [2], [1]]), values[:, None]), 4, 2, 1, "f")
    assert pair.items.shape == (4, 2) and (pair.items[:, 1] == M.PAD).all()
    with pytest.raises(ValueError, match="f returned items of shape"):
        as_mixed_batch(values[:3], 4, 0, 1, "f")
    with pytest.raises(ValueError, match="f declares 1 value"):
        as_mixed_batch(np.zeros((4, 1), dtype=np.int64), 4, 1, 1, "f")


@settings(max_examples=60)
@given(
    hnp.arrays(
        np.int64, st.tuples(st.integers(0, 300), st.integers(1, 5)), elements=st.integers(-2, 40)
    )
)
def test_packed_unique_rows_equal_numpy_unique(rows):
    got, counts = unique_rows(rows)
    if rows.shape[0] == 0:
        assert got.shape[0] == 0
        return
    want, want_counts = np.unique(rows, axis=0, return_counts=True)
    assert np.array_equal(got, want) and np.array_equal(counts, want_counts)


def test_encoder_keys_equal_direct_binning_and_round_trip_through_json():
    rng = np.random.default_rng(2)
    items = rng.integers(0, 3, size=(5_000, 2))
    values = rng.normal(size=(5_000, 2))
    values[::7, 1] = np.nan
    batch = M.MixedBatch(items, values)
    encoder = fit_encoder(2, 2, batch, M.MixedBatch(items[::-1], values[::-1] + 0.3))
    assert encoder.score is not None
    tally = encoder.count(batch)
    assert sum(n for k, n in tally.items() if k[0] == VIEW_BINS) == 5_000
    assert sum(n for k, n in tally.items() if k[0] == VIEW_SCORE) == 5_000
    # An independent route: count value 1 >= an edge directly on the raw values.
    for code in (2, 4, len(encoder.edges[0]) + 1):
        event = ValueThreshold(encoder, 0, code, True)
        direct = int((values[:, 0] >= encoder.edges[0][code - 2]).sum())
        assert events_hits([event], tally)[0] == direct
    missing = ValueRegion(
        encoder, VIEW_BINS, frozenset(k for k in tally if k[0] == VIEW_BINS and k[-1] == 0)
    )
    assert events_hits([missing], tally)[0] == int(np.isnan(values[:, 1]).sum())
    again = ValueEncoder.from_dict(json.loads(json.dumps(encoder.to_dict())))
    assert again == encoder and again.count(batch) == tally


def test_candidate_event_hits_equal_a_recount():
    rng = np.random.default_rng(4)
    p = M.MixedBatch(rng.integers(0, 4, size=(4_000, 1)), rng.laplace(1.0, 1.0, size=(4_000, 1)))
    q = M.MixedBatch(rng.integers(0, 4, size=(3_000, 1)), rng.laplace(0.0, 1.0, size=(3_000, 1)))
    encoder = fit_encoder(1, 1, p, q, bins=16, score_bins=16)
    cp, cq = encoder.count(p), encoder.count(q)
    events, hp, hq = value_candidate_events(encoder, cp, 4_000, cq, 3_000)
    assert len(events) > 40
    # the new kinds are among them: values given their item, and the float views
    # (numpy's Laplace with loc 1 vs 0 is a model the float view fits)
    assert any(isinstance(e, ItemValueThreshold) for e in events)
    assert {VIEW_ITEM_TAILS, VIEW_FLOAT, VIEW_LOW_BITS} <= {
        e.view for e in events if isinstance(e, ValueRegion)
    }
    assert np.array_equal(hp, events_hits(events, cp)) and np.array_equal(
        hq, events_hits(events, cq)
    )
    # regions are prefixes of the rankings learned on the learning samples (p, q here)
    for event in events:
        if isinstance(event, ValueRegion):
            ranked = encoder.rankings[event.view]
            assert any(event.keys == frozenset(r[: len(event.keys)]) for r in ranked)
    # every kind rebuilds from its JSON and describes itself
    for event in events:
        assert event_from_dict(json.loads(json.dumps(event.to_dict()))) == event
        assert event.describe()


def test_learned_score_weights_the_informative_value():
    rng = np.random.default_rng(0)
    n = 20_000
    items = np.zeros((n, 0), dtype=np.int64)
    p = np.column_stack([rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)])
    q = np.column_stack([rng.normal(0.0, 1.0, n), rng.normal(0.0, 1.0, n)])
    score = fit_linear_score(items, p, items, q)
    # features: value 1, value 2, then the two missing-value flags (constant here)
    assert score.weights[0] > 0.5 and abs(score.weights[1]) < 0.1 * score.weights[0]


# ---------------------------------------------------------------------------
# Black boxes that release values


def test_per_call_black_box_with_values_and_its_errors():
    from user_mechanisms import rnm_with_value_per_call

    box = dpaudit.auditor.as_auditable(rnm_with_value_per_call, (1.0, 0.0), 1, values=1).mechanism
    batch = box.sample(np.array([3, 1, 0]), 50, np.random.default_rng(0))
    assert batch.items.shape == (50, 1) and batch.values.shape == (50, 1)

    def wrong(counts, rng):
        return (0,), (1.0, 2.0)

    bad = dpaudit.auditor.as_auditable(wrong, (1.0, 0.0), 1, values=1).mechanism
    with pytest.raises(ValueError, match="exactly 1 values"):
        bad.sample(np.array([1, 2]), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="width must be"):
        dpaudit.auditor.as_auditable(wrong, (1.0, 0.0), 0)  # width 0 needs values


# ---------------------------------------------------------------------------
# Audits


def test_noisy_counts_half_noise_is_flagged_and_its_twin_passes():
    # Neighbours of one histogram only (the default families run in the slow CLI test). At
    # 300k the broken release was flagged above its claim (ε >= 1.38 > 1.2) on seeds 0-19.
    entry = catalog_entry("noisy-counts-half-noise")
    base = {"samples": 300_000, "seed": 0, "counts": [3, 2, 2, 0, 0], "restrict": True}
    broken = dpaudit.audit(entry.build(), **base)
    assert broken.violation and broken.epsilon_lower > entry.build().claim.epsilon, str(broken)
    correct = dpaudit.audit(entry.correct(), **base)
    # A pass needs power on every confirmed event (AuditResult.event_power); at this budget
    # some event lacks it, so an INCONCLUSIVE naming it is the honest verdict (the former
    # PASS sentence was untrue of that event).
    assert not correct.violation
    assert correct.verdict == "passed" or correct.events_without_power, str(correct)
    # The bound is valid: below the correct release's claim.
    assert correct.epsilon_lower <= entry.correct().claim.epsilon


def test_recheck_confirms_value_evidence_exactly():
    entry = catalog_entry("rnm-releases-noisy-max")
    result = dpaudit.audit(entry.build(), samples=300_000, seed=1)
    assert result.violation
    check = dpaudit.recheck(json.loads(json.dumps(result.to_dict())), samples=50_000, seed=1)
    routes = {c.route for c in check.checks}
    assert check.agrees and check.violation_reproduced and "exact" in routes, str(check)
    exact = [c for c in check.checks if c.route == "exact"]
    # No event's exact ε can exceed the true ε = dε/2 = 2.5 of this mechanism.
    assert max(c.epsilon for c in exact) <= 2.5 + 1e-9


def test_same_seed_same_result_with_values_and_workers():
    from user_mechanisms import rnm_noisy_max_value

    claim = (1.0, 0.0, M.BoundedChange(1))
    one = dpaudit.audit(
        rnm_noisy_max_value,
        claim=claim,
        width=0,
        values=1,
        batched=True,
        samples=200_000,
        seed=5,
        domain_size=5,
    )
    two = dpaudit.audit(
        rnm_noisy_max_value,
        claim=claim,
        width=0,
        values=1,
        batched=True,
        samples=200_000,
        seed=5,
        domain_size=5,
        workers=2,
    )
    assert one.witnesses == two.witnesses and one.samples == two.samples
    assert one.epsilon_lower == two.epsilon_lower


def test_value_mechanism_from_the_cli(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    status = main(
        [
            "audit",
            f"{USER}:rnm_noisy_max_value",
            "--claim",
            "1,0",
            "--relation",
            "bounded-change",
            "--width",
            "0",
            "--values",
            "1",
            "--samples",
            "300000",
            "--domain-size",
            "5",
            "--no-progress",
            "--json",
            "-",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert status == 1 and data["verdict"] == "violation" and data["epsilon_lower"] > 1.5
    status = main(
        ["audit", f"{USER}:rnm_noisy_max_value", "--claim", "1,0", "--width", "0", "--no-progress"]
    )
    err = capsys.readouterr().err
    assert status == 2 and "error" in err.lower() and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_dp_sniper_report_noisy_max_3_at_its_budget():
    # Target: RNM3 (5 counts, Laplace(2/ε), the noisy max as a float, ε = 1,
    # counts move ±1 either way) as a float-returning black box: ε lower bound >= 2.3 with
    # 12.5M samples on at least 4 of 5 seeds (true 2.5; DP-Sniper: 2.21 with 125.6M).
    # Each bound is valid at 95 %, so none may exceed 2.5 but with probability <= 0.05 each.
    from user_mechanisms import rnm_noisy_max_value

    claim = (1.0, 0.0, M.BoundedChange(1))
    bounds = []
    for seed in range(5):
        result = dpaudit.audit(
            rnm_noisy_max_value,
            claim=claim,
            width=0,
            values=1,
            batched=True,
            samples=12_500_000,
            seed=seed,
            domain_size=5,
        )
        assert result.violation
        bounds.append(result.epsilon_lower)
    print("RNM3 ε lower bounds:", [round(b, 4) for b in bounds])
    assert sum(b >= 2.3 for b in bounds) >= 4, bounds
    assert sum(b > 2.5 for b in bounds) <= 1, bounds


# Requirement: a correct twin is never flagged, and passes at the default budget. The
# noisy-counts twin's true ε sits near its claim, so which seeds leave one event without power
# (INCONCLUSIVE, naming it) moves with any change of the looks: before futility's fix of this
# round (issue 42) seeds 3 and 4 did, after it seed 0 does and seed 3 passes. The slow step asks
# a pass on one of two seeds, both never flagged (which seed passes also moves with numpy's SIMD
# path: with AVX-512, seed 0 passes and seed 3 is INCONCLUSIVE); `python benchmarks/bench_verdicts.py --values
# --only rnm-releases-noisy-max-correct noisy-counts-half-noise-correct --seeds 0 1 2 3 4` measures
# the rate on every seed (run it after any change to the value path or the pass rule).
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "seeds"), [("rnm-releases-noisy-max", (0,)), ("noisy-counts-half-noise", (0, 3))]
)
def test_correct_twins_pass_at_the_default_budget(name, seeds):
    entry = catalog_entry(name)
    results = [dpaudit.audit(entry.correct(), seed=seed) for seed in seeds]
    for result in results:
        assert not result.violation, str(result)
    assert any(result.verdict == "passed" for result in results), "\n".join(map(str, results))


@pytest.mark.slow
def test_value_audit_on_a_dask_cluster_equals_in_process():
    from dpaudit.auditor.sources.dask_executor import local_cluster_client

    entry = catalog_entry("noisy-counts-half-noise")
    local = dpaudit.audit(entry.build(), samples=300_000, seed=3, chunk=50_000)
    client = local_cluster_client(2)
    try:
        remote = dpaudit.audit(entry.build(), samples=300_000, seed=3, chunk=50_000, client=client)
    finally:
        client.close()
        client.cluster.close()
    assert remote.witnesses == local.witnesses and remote.epsilon_lower == local.epsilon_lower


def test_integer_audits_do_not_touch_the_value_path():
    # The learn phase only exists for value mechanisms: an integer audit draws no value events.
    result = dpaudit.audit(M.GumbelTopK(k=1, epsilon=1.0), samples=100_000, seed=0)
    assert result.witnesses and all(not hasattr(w.event, "encoder") for w in result.witnesses)
    assert result.samples <= 100_000 == result.samples_requested
