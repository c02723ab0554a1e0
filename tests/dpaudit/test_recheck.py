"""dpaudit recheck: an audit's evidence recomputed exactly or on fresh samples."""

import json

import pytest
from forgeries import (
    DROPPED,
    FORGERIES,
    LEVEL_FORGERIES,
    forge,
    genuine,
    most_separating,
    run_cli,
)

import dpaudit
import mechanisms as M
from dpaudit.catalog import catalog_entry
from dpaudit.cli import main
from dpaudit.recheck import CannotRecheck, recheck
from dpaudit.rerun import rerun


@pytest.fixture(scope="module")
def violation_json(tmp_path_factory):
    path = tmp_path_factory.mktemp("recheck") / "r.json"
    assert (
        main(
            [
                "audit",
                "catalog:joint-no-half",
                "--samples",
                "300000",
                "--no-progress",
                "--json",
                str(path),
            ]
        )
        == 1
    )
    return path


def test_exact_recheck_of_a_violation_agrees_and_reproduces_it(violation_json, capsys):
    outcome = recheck(violation_json)
    assert outcome.checks and all(c.route == "exact" for c in outcome.checks)
    # The exact probabilities sit inside the recorded one-sided bounds (probability >= 1 − α).
    assert outcome.agrees and outcome.violation_reproduced
    assert main(["recheck", str(violation_json)]) == 0
    assert "violation reproduced" in capsys.readouterr().out


def test_sampled_recheck_agrees_on_fresh_samples(violation_json, capsys):
    # Fisher's tests at 1e-3 in all (Bonferroni over both sides of every witness); fixed seed.
    outcome = recheck(violation_json, exact=False, seed=2)
    assert all(c.route == "sampled" for c in outcome.checks)
    assert outcome.agrees
    # A sequential audit stops at the first look where a bound crosses the claim, so fresh
    # samples of the witness's own size reproduce the crossing only about half the time;
    # reproducing it takes more samples than the audit needed to see it.
    assert recheck(violation_json, exact=False, seed=2, samples=100_000).violation_reproduced
    assert main(["recheck", str(violation_json), "--sampled", "--seed", "2", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["agrees"] is True


def test_tampered_evidence_disagrees(violation_json, tmp_path):
    data = json.loads(violation_json.read_text())
    for w in data["witnesses"]:
        w["p_low"] = min(1.0, w["p_hat"] * 3)  # claims far more than the truth
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data))
    assert not recheck(forged).agrees
    assert main(["recheck", str(forged)]) == 1


def test_a_correct_mechanism_passes_recheck_without_a_violation():
    result = dpaudit.audit(M.GumbelTopK(k=2, epsilon=0.5), samples=200_000, seed=4)
    outcome = recheck(result)
    assert outcome.agrees and not outcome.violation_reproduced


def test_black_boxes_need_the_mechanism_passed(tmp_path, capsys):
    result = dpaudit.audit(
        lambda counts, rng: (int(rng.integers(len(counts))),),
        claim=(0.5, 0.0),
        width=1,
        samples=20_000,
        domain_size=3,
    )
    with pytest.raises(CannotRecheck, match=r"mechanism=\.\.\."):
        recheck(result)
    entry = catalog_entry("em-non-monotone")
    assert recheck(
        dpaudit.audit(entry.build(), samples=50_000, seed=1), entry.build(), seed=1
    ).checks
    assert main(["recheck", str(tmp_path / "missing.json")]) == 2
    (tmp_path / "junk.json").write_text("{}")
    assert main(["recheck", str(tmp_path / "junk.json")]) == 2
    assert "not a dpaudit audit result" in capsys.readouterr().err


@pytest.fixture(scope="module")
def genuine_files(tmp_path_factory):
    """The issue's two genuine results, on small budgets (tests/forgeries.py)."""
    return genuine(tmp_path_factory.mktemp("genuine"))


@pytest.mark.parametrize("which", ["real", "broken", "refined"])
def test_genuine_results_pass_recheck_and_rerun(genuine_files, which):
    # Exact route: the binomial tests refuse a genuine file with probability <= 1e-3.
    status, line = run_cli(["recheck", str(genuine_files[which])])
    assert status == 0 and "evidence agrees" in line
    status, line = run_cli(["recheck", str(genuine_files[which]), "--sampled", "--seed", "7"])
    assert status == 0 and "evidence agrees" in line
    status, line = run_cli(["recheck", "--rerun", str(genuine_files[which])])
    assert status == 0 and line.startswith("rerun agrees: the same result field by field (sha256:")


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_every_forgery_is_refused_by_rerun_and_all_but_dropped_witnesses_by_recheck(
    genuine_files, tmp_path, name
):
    forged = forge(name, genuine_files, tmp_path)
    status, line = run_cli(["recheck", "--rerun", str(forged)])
    assert status == 1 and line.startswith("rerun DISAGREES at "), line
    for route in ([], ["--sampled"]):
        status, line = run_cli(["recheck", str(forged), *route, "--seed", "11"])
        if name in DROPPED:
            # A consistent, smaller audit: nothing in the file contradicts it; only a rerun sees.
            assert status == 0, line
        else:
            assert status == 1 and line.startswith("dpaudit recheck: "), (route, line)


def test_the_named_field_is_the_forged_one(genuine_files, tmp_path):
    swapped = most_separating(json.loads(genuine_files["broken"].read_text(encoding="utf-8")))
    expected = {
        "claim lowered to 1 (bounds recomputed)": (
            "claim: the file records (1, 0)",
            "claim.epsilon",
        ),
        "verdict set to passed": ('verdict: recorded "passed"', "verdict: recorded"),
        "seed changed": ("seed: recorded 4, but evidence.options.seed is 3", "seed: recorded 4"),
        "swapped pair": (f"witnesses[{swapped}] disagrees with the mechanism (exact)", "counts"),
        "every p_low divided by 3": ("p_low: recorded", "p_low: recorded"),
    }
    for name, (plain, again) in expected.items():
        forged = forge(name, genuine_files, tmp_path)
        assert plain in run_cli(["recheck", str(forged)])[1], name
        assert again in run_cli(["recheck", "--rerun", str(forged)])[1], name


@pytest.mark.fresh_entropy
def test_sampled_recheck_draws_a_fresh_seed_and_repeats_with_it(genuine_files):
    first = recheck(genuine_files["broken"], exact=False)
    second = recheck(genuine_files["broken"], exact=False)
    # Two 128-bit entropy draws coincide with probability 2^-128.
    assert first.seed != second.seed
    again = recheck(genuine_files["broken"], exact=False, seed=first.seed)
    assert [c.to_dict() for c in again.checks] == [c.to_dict() for c in first.checks]
    assert f"repeat with --seed {first.seed}" in str(first)


def test_hits_implausible_under_the_exact_law_are_refused(genuine_files):
    # Consistent bounds, but hits far from n·P: only the exact binomial test sees it.
    data = json.loads(genuine_files["broken"].read_text())
    forged = FORGERIES["hits edited, bounds recomputed"][1](data)
    outcome = recheck(forged)
    assert not outcome.problems, outcome.problems  # the file is self-consistent
    assert not outcome.agrees
    assert any("not draws of the exact law" in c.detail for c in outcome.checks)


def test_rerun_says_when_versions_differ(genuine_files):
    data = json.loads(genuine_files["real"].read_text())
    data["evidence"]["versions"]["numpy"] = "0.0.1"
    outcome = rerun(data)
    assert outcome.agrees and "numpy 0.0.1 recorded" in outcome.line
    data["witnesses"][0]["hits_q"] += 1
    outcome = rerun(data)
    assert not outcome.agrees and "versions differ: numpy 0.0.1 recorded" in outcome.line


def test_recheck_prints_the_canonical_digest(genuine_files):
    from dpaudit.auditor.results.result_format import result_digest

    data = json.loads(genuine_files["real"].read_text())
    assert f"digest: {result_digest(data)}" in str(recheck(data))


def test_a_result_without_a_rebuildable_mechanism_could_not_run(genuine_files, tmp_path):
    data = json.loads(genuine_files["real"].read_text())
    data["evidence"]["mechanism_spec"] = {"class": "os:system", "params": {}}
    path = tmp_path / "other.json"
    path.write_text(json.dumps(data))
    assert run_cli(["recheck", str(path)]) == (
        4,
        "dpaudit recheck: could not run: cannot rebuild the audited mechanism: only classes "
        "of mechanisms, dpaudit are rebuilt, not os",
    )
    assert run_cli(["recheck", "--rerun", str(path)])[0] == 4
    assert run_cli(["recheck", "--rerun", "--seed", "3", str(path)])[0] == 2


def test_an_offline_result_is_rechecked_and_rerun_from_its_files(tmp_path):
    plan = tmp_path / "plan"
    argv = ["plan", "GumbelTopK", "--k", "2", "--epsilon", "1", "--samples", "40000"]
    assert run_cli([*argv, "--max-pairs", "8", "--out", str(plan), "--simulate", "csv"])[0] == 0
    path = tmp_path / "off.json"
    assert run_cli(["audit", "--from-samples", str(plan), "--json", str(path)])[0] in (0, 3)
    assert run_cli(["recheck", str(path)])[0] == 0
    assert run_cli(["recheck", "--rerun", str(path)])[0] == 0
    data = json.loads(path.read_text())

    # a witness behind no headline figure (bound or detectable value), so that the edit is
    # named at the witness rather than at the headline it would move
    def behind_none(w):
        return w["epsilon_lower"] < data["epsilon_lower"] and all(
            float(w[key]) > data[key] for key in ("detectable_epsilon", "detectable_delta")
        )

    # The level of an offline audit is checked against its plan: an alpha raised (every bound
    # recomputed at it) or live options added are refused.
    from forgeries import at_level

    raised = at_level(dict(data, alpha=0.2), 0.2 / (2 * len(data["witnesses"])))
    assert recheck(raised).first_problem == "alpha: recorded 0.2, but the plan's is 0.05"
    live = json.loads(json.dumps(data))
    live["evidence"]["options"] = {"looks": 1}
    assert recheck(live).first_problem.startswith("evidence.options: recorded, but an offline")
    i = next(i for i, w in enumerate(data["witnesses"]) if behind_none(w))
    data["witnesses"][i]["hits_q"] += 3
    path.write_text(json.dumps(data))
    status, line = run_cli(["recheck", str(path)])
    assert status == 1 and f"witnesses[{i}]" in line
    status, line = run_cli(["recheck", "--rerun", str(path)])
    assert status == 1 and line.startswith(f"rerun DISAGREES at witnesses[{i}].hits_q")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "selection_limit_domain",
        "threshold_top_stable",
        "value_noisy_counts",
        "catalog_joint_no_half",
        "session_multi_limit_domain",
    ],
)
def test_every_golden_audit_rechecks_and_reruns(name):
    from golden.cases import CASES

    result = CASES[name]()
    outcome = recheck(result, seed=1)
    assert outcome.agrees, str(outcome)
    assert rerun(result).agrees


def test_events_confirmed_and_the_bonferroni_level_are_checked(genuine_files):
    from forgeries import consistent

    data = json.loads(genuine_files["broken"].read_text())
    n, keep = len(data["witnesses"]), data["evidence"]["options"]["keep"]
    assert n > keep
    assert recheck(dict(data, events_confirmed=n + 1)).first_problem == (
        f"events_confirmed: recorded {n + 1}, recomputed {n}"
    )
    impossible = json.loads(json.dumps(data))
    impossible["witnesses"][2]["hits_q"] = impossible["witnesses"][2]["samples_q"] + 1
    assert recheck(impossible).first_problem == (
        "witnesses[2]: hits outside 0..samples or no samples"
    )
    # Fewer planned events: a looser level, bounds recomputed at it, all consistent but the
    # events per pair and their number.
    data["evidence"]["options"]["events_per_pair"] = 1
    outcome = recheck(consistent(data))
    assert outcome.problems == (
        "witnesses: 3 events on one pair, but the plan confirms at most events_per_pair = 1",
        f"witnesses: {n} confirmed events, but the bounds' level alpha / (2 x {keep}) covers "
        f"only {keep} (Bonferroni)",
    )


def test_bounds_of_a_sequential_confirmation_are_rechecked_at_each_looks_level(genuine_files):
    # Confirmed in looks: each look's bounds at alpha_each / looks (even alpha-spending).
    data = json.loads(genuine_files["broken"].read_text())
    looks = data["evidence"]["confirmation_looks"]
    options = data["evidence"]["options"]
    outcome = recheck(data)
    assert outcome.agrees
    assert outcome.level == pytest.approx(looks["alpha_each_look"])
    assert outcome.level == pytest.approx(
        data["alpha"] / (2 * options["keep"] * options["events_per_pair"]) / options["looks"]
    )
    # A file whose looks claim a looser level than its options give is refused, naming it.
    forged = json.loads(json.dumps(data))
    forged["evidence"]["confirmation_looks"]["alpha_each_look"] *= options["looks"]
    assert recheck(forged).first_problem.startswith(
        "evidence.confirmation_looks.alpha_each_look: recorded"
    )


@pytest.mark.parametrize("name", sorted(LEVEL_FORGERIES))
def test_level_forgeries_are_refused_naming_the_field(genuine_files, tmp_path, name):
    # Each edit recomputes every derived field at the looser level a recheck reading the level
    # off the file gave it (tests/forgeries.py); the level now comes from the plan.
    forged = forge(name, genuine_files, tmp_path)
    outcome = recheck(forged, seed=11)
    assert outcome.outcome == "inconsistent"
    expected = {
        "confirmation_looks deleted": "evidence.confirmation_looks: not recorded",
        "refine set, one witness kept": "evidence.options.refine is on, but the result has no",
        "refine set, with a made-up refine record": "evidence.refine.samples:",
        "refine record dropped": "evidence.options.refine is on, but the result has no",
        "refine flag cleared": "evidence.refine: a refine record, but evidence.options.refine",
        "refine flag and record dropped": "evidence.confirmation_looks: not recorded",
        "looks lowered to 1": "evidence.confirmation_looks.sizes: recorded",
        "looks lowered to 1, sizes rewritten": "evidence.confirmation_looks.sizes: recorded",
        "keep lowered to 1": "witnesses: events on 3 pairs, but the plan keeps 1",
        "events_per_pair lowered to 1": "witnesses: 3 events on one pair",
        "pairs_screened lowered to 1": "evidence.confirmation_looks.sizes: recorded",
    }
    assert outcome.first_problem.startswith(expected[name]), outcome.first_problem


def test_a_refined_record_is_checked_against_its_first_phase(genuine_files):
    data = json.loads(genuine_files["refined"].read_text())
    assert recheck(data).outcome in ("consistent", "missed")
    record = data["evidence"]["refine"]
    for edit, named in (
        (lambda r: r.update(samples_per_side=r["samples_per_side"] - 1), "samples_per_side"),
        (lambda r: r["witnesses"][0].update(p_low=r["witnesses"][0]["p_low"] / 2), "witnesses"),
        (lambda r: r.update(epsilon_lower=r["epsilon_lower"] + 0.5), "epsilon_lower"),
        (lambda r: r["confirmation_looks"].update(sizes=[1]), "confirmation_looks.sizes"),
    ):
        forged = json.loads(json.dumps(data))
        edit(forged["evidence"]["refine"])
        assert f"evidence.refine.{named}" in recheck(forged).first_problem, named
    # The chosen event must be the one the first phase's witnesses choose.
    others = [w for w in record["witnesses"] if w != record["chosen"]]
    forged = json.loads(json.dumps(data))
    forged["evidence"]["refine"]["chosen"] = others[0]
    assert any("evidence.refine.chosen" in p for p in recheck(forged).problems)


def test_older_formats_are_read_with_a_stated_default_or_refused_naming_the_field(genuine_files):
    data = json.loads(genuine_files["broken"].read_text())
    version1 = json.loads(json.dumps(data))
    version1["format_version"] = 1
    del version1["evidence"]["options"]["refine"]  # written only when on before version 2
    del version1["evidence"]["options"]["grey_delta"]  # added in version 4
    outcome = recheck(version1)
    assert outcome.agrees
    assert "format_version 1: evidence.options.refine is not recorded" in outcome.notes[-1]
    assert rerun(version1).agrees  # the rerun's result compared as version 1 holds it
    assert (
        "evidence.options: refine not recorded"
        in recheck(dict(version1, format_version=2)).first_problem
    )
    del version1["evidence"]["options"]["looks"]
    assert recheck(version1).first_problem.startswith(
        "evidence.options: looks not recorded; the level of the bounds is derived from them "
        "(required from format_version 2, this file is version 1)"
    )
    version0 = json.loads(json.dumps(data))
    del version0["format_version"], version0["evidence"]["options"]
    assert "evidence.options: samples, alpha, keep, events_per_pair, looks not recorded" in (
        recheck(version0).first_problem
    )


def test_a_version_4_file_is_read_without_comparing_the_result_power_figures(genuine_files):
    # Format version 5 labels a left event by the power of its own look: a genuine file of
    # versions 3-4 keeps its witnesses' figures (compared) but not the result's (noted).
    data = json.loads(genuine_files["real"].read_text())
    version4 = dict(json.loads(json.dumps(data)), format_version=4)
    outcome = recheck(version4)
    assert outcome.agrees
    note = next(n for n in outcome.notes if n.startswith("format version 4:"))
    assert "left" in note and data["verdict"].upper() in note and "not the recorded" not in note
    # A witness's own figures are still compared.
    version4["witnesses"][0]["detectable_delta"] *= 2
    assert "detectable_delta" in recheck(version4).first_problem


@pytest.mark.parametrize("which", ["real", "broken"])
def test_lowering_the_format_version_does_not_buy_a_pass(genuine_files, which):
    # Versions 3-4 skip the result's power figures, verdict included; a file that lowers its
    # version to record a PASS its evidence does not earn under the present rule is refused.
    data = json.loads(genuine_files[which].read_text())
    assert data["verdict"] != "passed"
    forged = dict(json.loads(json.dumps(data)), format_version=4, verdict="passed")
    outcome = recheck(forged)
    assert not outcome.agrees
    assert "records PASSED" in outcome.first_problem


# A genuine refined audit whose refined interval misses the exact law: searching seeds 0-399
# of this audit, 17 give an interval that misses the exact law (as two intervals at
# alpha / 2 = 0.025 each allow; the refined event is chosen by power too), and in 9 of them
# (40, 105, 173, 228, 241, 280, 310, 361, 382) the exact Q is above its upper bound.
MISSED = {"pairs": [([3, 2, 2, 0], [2, 2, 2, 0])], "restrict": True, "search": False}


def test_a_genuine_miss_within_the_audits_alpha_exits_0_with_a_note(tmp_path, capsys):
    result = dpaudit.audit(
        M.GumbelTopK(k=2, epsilon=1.0), samples=20_000, refine=True, seed=40, **MISSED
    )
    path = tmp_path / "missed.json"
    path.write_text(result.to_json())
    outcome = recheck(path)
    assert outcome.agrees and outcome.missed and outcome.outcome == "missed"
    (check,) = outcome.checks
    assert check.route == "exact" and check.q > check.q_high and check.agrees
    note = outcome.notes[-1]
    assert note.startswith("a genuine miss within the audit's alpha: witnesses[0]'s interval ")
    assert "alpha = 0.05 in all (each one-sided interval at 0.025)" in note
    assert main(["recheck", str(path), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "missed"
    status, line = run_cli(["recheck", str(path)])
    assert status == 0 and "with a genuine miss within the audit's alpha" in line
    # The same file with its hits edited to stay consistent but implausible is refused.
    data = json.loads(path.read_text())
    data["witnesses"][0]["hits_q"] -= 60
    assert recheck(consistent_refined(data)).outcome == "inconsistent"


def consistent_refined(data):
    from forgeries import at_level

    return at_level(data, data["alpha"] / 2)


@pytest.mark.parametrize("data", [{}, {"verdict": "passed"}])
def test_a_dict_that_is_no_result_is_refused_in_words(data):
    with pytest.raises(ValueError, match=r"is not a dpaudit audit result \(no field 'claim'\)"):
        dpaudit.recheck(data)
