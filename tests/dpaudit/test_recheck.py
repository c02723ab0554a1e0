"""dpaudit recheck: an audit's evidence recomputed exactly or on fresh samples."""

import json

import pytest

import dpaudit
import mechanisms as M
from dpaudit.catalog import catalog_entry
from dpaudit.cli import main
from dpaudit.recheck import recheck


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
    # Fisher's test at α = 1e-3 per side per witness: false disagreement <= 2e-3 × 9.
    outcome = recheck(violation_json, exact=False)
    assert all(c.route == "sampled" for c in outcome.checks)
    assert outcome.agrees
    # A sequential audit stops at the first look where a bound crosses the claim, so fresh
    # samples of the witness's own size reproduce the crossing only about half the time;
    # reproducing it takes more samples than the audit needed to see it.
    assert recheck(violation_json, exact=False, samples=100_000).violation_reproduced
    assert main(["recheck", str(violation_json), "--sampled", "--json", "-"]) == 0
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
    with pytest.raises(ValueError, match="pass mechanism="):
        recheck(result)
    entry = catalog_entry("em-non-monotone")
    assert recheck(dpaudit.audit(entry.build(), samples=50_000, seed=1), entry.build()).checks
    assert main(["recheck", str(tmp_path / "missing.json")]) == 2
    (tmp_path / "junk.json").write_text("{}")
    assert main(["recheck", str(tmp_path / "junk.json")]) == 2
    assert "not a dpaudit audit result" in capsys.readouterr().err
