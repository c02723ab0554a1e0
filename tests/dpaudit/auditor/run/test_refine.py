"""refine=True: one fresh, full-α estimate of the witness a first audit chose."""

import json

import mpmath
import numpy as np
import pytest
from scipy.stats import binom

import dpaudit
import mechanisms as M
from dpaudit.auditor.bounds.statistics import event_bounds
from dpaudit.auditor.planning.plan import PHASES
from dpaudit.auditor.run.refine import choose_witness, first_share, refine_plan
from dpaudit.auditor.sources.executors import LocalExecutor
from dpaudit.cli import main
from dpaudit.exact import output_law, working_precision
from dpaudit.recheck import recheck
from dpaudit.report import to_markdown

PAIR = ([3, 2, 2, 0], [2, 2, 2, 0])
SMALL = {"pairs": [PAIR], "restrict": True, "search": False, "samples": 20_000}


def _comparable(result) -> dict:
    data = result.to_dict()
    for key in ("seconds", "explanation"):
        data.pop(key)
    for key in ("date", "engine"):
        data["evidence"].pop(key)
    return data


def test_same_seed_same_refined_result_on_one_process_and_a_pool(monkeypatch):
    from dpaudit.auditor.sources import sampling

    monkeypatch.setattr(sampling, "PARALLEL_MIN_CHUNK", 2_000)  # use the process pool
    mech = M.GumbelTopK(k=2, epsilon=1.0)
    a = dpaudit.audit(mech, seed=3, refine=True, chunk=4_000, **SMALL)
    b = dpaudit.audit(mech, seed=3, refine=True, chunk=4_000, workers=2, **SMALL)
    c = dpaudit.audit(mech, seed=4, refine=True, chunk=4_000, **SMALL)
    assert _comparable(a) == _comparable(b)
    assert a.witnesses[0].hits_p != c.witnesses[0].hits_p  # the seed matters
    assert a.events_confirmed == 1 and a.evidence["options"]["refine"] is True
    assert a.samples <= 20_000 == a.samples_requested


def test_the_refined_draw_is_fresh_and_bounded_at_the_full_level():
    # Every draw of the first phase is on another stream than the refined one, which
    # draws the chosen pair only, every sample the first phase left, on (refine, 0, i).
    mech = M.GumbelTopK(k=2, epsilon=1.0)
    executor = LocalExecutor(mech, 1, 250_000)
    draws = []
    original = executor.draw

    def recording(histograms, per_histogram, seeds, encoder=None):
        draws.append(([tuple(map(int, h)) for h in histograms], per_histogram, seeds))
        return original(histograms, per_histogram, seeds)

    executor.draw = recording
    result = dpaudit.audit(mech, seed=5, refine=True, executor=executor, **SMALL)
    keys = [s.spawn_key for _, _, seeds in draws for s in seeds]
    refined = [k for k in keys if k[0] == PHASES["refine"]]
    assert refined == [(PHASES["refine"], 0, 0), (PHASES["refine"], 0, 1)]
    assert len(set(keys)) == len(keys)  # no stream drawn twice
    histograms, per_side, _ = draws[-1]
    (w,) = result.witnesses
    record = result.evidence["refine"]
    assert histograms == [w.counts, w.counts2] and w.samples_p == w.samples_q == per_side
    assert per_side == (20_000 - record["samples"]) // 2 == record["samples_per_side"]
    assert record["samples"] <= first_share(20_000, dpaudit.auditor.DEFAULT_SAMPLES)
    # The chosen event, bounded at alpha / 2 per side (no Bonferroni over the first phase).
    assert w.event.to_dict() == record["chosen"]["event"]
    assert record["chosen"] in record["witnesses"] and len(record["witnesses"]) > 1
    p_low, q_high, eps_b, _ = event_bounds(
        w.hits_p, w.samples_p, w.hits_q, w.samples_q, 0.025, 1, 0
    )
    assert (w.p_low, w.q_high, w.epsilon_lower) == (p_low, q_high, eps_b)
    assert result.epsilon_lower == w.epsilon_lower and "refined:" in str(result)
    assert "refined" in result._repr_html_() and "refined" in to_markdown(result)


def test_recheck_accepts_a_refined_result_and_recomputes_its_bound(tmp_path):
    mech = M.GumbelTopK(k=2, epsilon=1.0)
    result = dpaudit.audit(mech, seed=2, refine=True, **SMALL)
    outcome = recheck(result.to_dict())
    assert outcome.agrees and outcome.level == pytest.approx(0.025)
    assert [c.route for c in outcome.checks] == ["exact"]
    # A refined bound claimed at a level the one event does not have is caught.
    data = json.loads(result.to_json())
    data["witnesses"][0]["epsilon_lower"] += 0.05
    data["epsilon_witness"] = data["delta_witness"] = data["witnesses"][0]
    data["epsilon_lower"] = data["witnesses"][0]["epsilon_lower"]
    assert not recheck(data).agrees


def test_choice_prefers_the_event_whose_refined_bound_promises_most():
    # One witness with a larger estimate on few samples and one slightly smaller on many:
    # at a large refined draw the steady one is predicted to bound higher... unless the
    # lucky one is far beyond it. A δ claim ranks by P − e^ε Q at the claimed ε.
    from dpaudit.auditor.results.result import Witness
    from dpaudit.auditor.values.outcome_events import OutcomeSet

    def witness(hp, n, hq):
        return Witness((1,), (0,), OutcomeSet(frozenset({(1,)})), hp, n, hq, n, 0, 1, 0, 0)

    claim = M.PrivacyClaim(0.1, 0.0, M.AddRemoveUser())
    lucky, steady = (
        witness(
            30,
            1_000,
            20,
        ),
        witness(12_000, 1_000_000, 10_000),
    )
    assert choose_witness([lucky, steady], claim, 10**8, 0.05) is steady
    delta_claim = M.PrivacyClaim(0.1, 1e-3, M.AddRemoveUser())
    released = witness(130, 10_000, 0)  # P = 1.3 %, Q = 0: a key's release
    assert choose_witness([steady, released], delta_claim, 10**6, 0.05) is released
    assert choose_witness([], claim, 10**6, 0.05) is None


def test_a_budget_too_small_for_both_phases_is_refused_with_the_fix():
    mech = M.GumbelTopK(k=2, epsilon=1.0)
    with pytest.raises(ValueError, match=r"samples=.*refine=True.*raise samples to at least"):
        dpaudit.audit(mech, seed=0, refine=True, pairs=[PAIR], restrict=True, samples=1_500)
    default = 5 * 10**7
    plan = refine_plan(9 * 10**8, default, 10**5)
    assert plan.first == 3 * 10**8 and plan.per_side(plan.first) == 3 * 10**8
    assert refine_plan(10**6, default, 10**5).first == 500_000
    assert refine_plan(12 * 10**7, default, 10**5).first == default


def test_value_releases_are_refused_naming_the_option():
    mech = M.NoisyCountsRelease(M.ReportNoisyMax(epsilon=1.0), epsilon_counts=0.5)
    with pytest.raises(ValueError, match="refine=True: this mechanism releases real values"):
        dpaudit.audit(mech, samples=200_000, refine=True)


def test_cli_refine_is_recorded_and_rechecked(tmp_path, capsys):
    path = tmp_path / "r.json"
    status = main(
        ["audit", "catalog:joint-no-half", "--samples", "400000", "--refine"]
        + ["--no-progress", "--json", str(path)]
    )
    data = json.loads(path.read_text())
    assert status == data["exit_status"] and data["evidence"]["options"]["refine"] is True
    assert data["events_confirmed"] == 1
    assert main(["recheck", str(path)]) == 0
    assert main(["recheck", str(path), "--rerun"]) == 0  # the same refined audit again


@pytest.mark.slow
def test_refined_bounds_cover_the_exact_probabilities():
    # 200 refined audits of a correct mechanism with an exact law (Gumbel top-2, the
    # Plackett–Luce law of dpaudit.exact): the fraction whose refined interval misses
    # the exact P or Q of its own event is at most alpha, within the binomial 99.9 %
    # quantile. alpha = 0.2 makes a miscount of the level visible in 200 runs.
    mech = M.GumbelTopK(k=2, epsilon=1.0)
    alpha, runs = 0.2, 200
    with working_precision():
        laws = {tuple(h): output_law(mech, np.array(h)) for h in PAIR}
    missed = 0
    for seed in range(runs):
        result = dpaudit.audit(mech, seed=seed, alpha=alpha, refine=True, **SMALL)
        (w,) = result.witnesses
        with working_precision():
            p = mpmath.fsum(v for o, v in laws[w.counts].items() if w.event.contains(tuple(o)))
            q = mpmath.fsum(v for o, v in laws[w.counts2].items() if w.event.contains(tuple(o)))
        missed += bool(w.p_low > p or w.q_high < q)
    assert missed <= binom.ppf(0.999, runs, alpha)
