"""``dpaudit compare`` (issue 46): exit 1 for halved noise, 0 for a rename, 2 for misuse.

The two stored audits and their budgets are those of ``tests/dpaudit/test_compare.py``
(whose docstring gives the measured reliability); here the files go through the command line.
"""

import json
import re

import pytest
from forgeries import run_cli

import dpaudit
import mechanisms as M
from dpaudit.cli import SUBCOMMAND_MODULES, main

PAIR = ([2, 1, 0], [3, 1, 0])
AUDIT = {"claim": (1.0, 0.0), "samples": 200_000, "pairs": [PAIR], "restrict": True}


class RenamedPermuteAndFlip(M.PermuteAndFlip):
    """PermuteAndFlip under another name."""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """old.json (ε = 1), halved.json (ε = 2: half the noise), renamed.json; all at (1, 0)."""
    folder = tmp_path_factory.mktemp("compare")
    built = {
        "old": (M.PermuteAndFlip(epsilon=1.0), 0),
        "halved": (M.PermuteAndFlip(epsilon=2.0), 0),
        "renamed": (RenamedPermuteAndFlip(epsilon=1.0), 1),
    }
    paths = {}
    for name, (mechanism, seed) in built.items():
        paths[name] = str(folder / f"{name}.json")
        with open(paths[name], "w", encoding="utf-8") as handle:
            handle.write(dpaudit.audit(mechanism, seed=seed, **AUDIT).to_json())
    paths["folder"] = str(folder)
    return paths


def test_registered():
    assert "compare" in SUBCOMMAND_MODULES


def test_halved_noise_is_exit_1_with_a_table_and_a_summary(files, capsys):
    assert main(["compare", files["old"], files["halved"]]) == 1
    out = capsys.readouterr().out.splitlines()
    # How many events each audit confirms on the pair is selection's choice; at least one of
    # them must be significantly worse, and the witness pair's row says so.
    assert re.match(
        r"result: SIGNIFICANTLY WORSE on [1-9]\d* of \d+ matched \(pair, event\)", out[-1]
    )
    header = next(line for line in out if line.startswith("#  pair"))
    for column in ("event", "ε est. old → new", "ε ≥ old → new", "p (adj.)", "verdict"):
        assert column in header
    assert any(re.match(r"\d+  3,1,0 -> 2,1,0 \*", line) and "WORSE" in line for line in out)


def test_a_rename_is_exit_0_no_significant_change(files):
    status, line = run_cli(["compare", files["old"], files["renamed"]])
    assert status == 0 and line.startswith("result: no significant change (2 matched")


@pytest.mark.parametrize(
    "mechanism",
    [
        ["--mechanism", "PermuteAndFlip --epsilon 2"],
        ["--mechanism", "PermuteAndFlip", "--epsilon", "2"],
    ],
    ids=["quoted", "following"],
)
def test_the_re_test_on_the_new_mechanism_is_exit_1(files, mechanism):
    status, line = run_cli(["compare", files["old"], *mechanism, "--seed", "1"])
    assert status == 1 and line.startswith("result: SIGNIFICANTLY WORSE on 3 of 3")


def test_the_re_test_of_the_installed_code_is_exit_0(files):
    status, line = run_cli(["compare", files["old"], "--seed", "2"])
    assert status == 0 and "no significant change" in line


def test_json_dash_is_machine_output_alone(files, capsys):
    assert main(["compare", files["old"], files["halved"], "--json", "-"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["verdict"] == "worse" and data["exit_status"] == 1 and data["route"] == "stored"
    assert data["changes"][0]["verdict"] == "worse" and "Wald" in data["test"]
    assert captured.err.splitlines()[-1].startswith("result: SIGNIFICANTLY WORSE")


def test_nothing_in_common_is_exit_3(files, tmp_path):
    with open(files["halved"], encoding="utf-8") as handle:
        data = json.load(handle)
    data.update(witnesses=[], epsilon_witness=None, delta_witness=None, events_confirmed=0)
    (tmp_path / "empty.json").write_text(json.dumps(data))
    status, line = run_cli(["compare", files["old"], str(tmp_path / "empty.json")])
    assert status == 3 and line.startswith("result: nothing compared")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["NEW"], "NEW.json: cannot read 'NEW': No such file or directory; give the JSON"),
        (["OLD_AS_TEXT"], "is not JSON"),
        (["CLAIM_2"], "different claims: old (1, 0)"),
        (["HALVED", "--seed", "3"], "--seed applies to a re-test; with NEW.json"),
        (["HALVED", "--mechanism", "GumbelTopK"], "--mechanism applies to a re-test"),
        (["--epsilon", "2"], "mechanism parameters follow --mechanism MECH"),
        (["--mechanism", "Nope"], "unknown mechanism 'Nope'"),
        (["--mechanism", "PermuteAndFlip --epsilonn 2"], "did you mean --epsilon?"),
        (["--alpha", "2"], "argument --alpha: must lie in (0, 1), got '2'"),
    ],
    ids=[
        "missing",
        "not-json",
        "other-claim",
        "seed-with-new",
        "mechanism-with-new",
        "param-without-mechanism",
        "unknown-mechanism",
        "mistyped-parameter",
        "alpha",
    ],
)
def test_usage_errors_are_exit_2_naming_the_argument_and_the_fix(files, argv, message, capsys):
    folder = files["folder"]
    with open(files["halved"], encoding="utf-8") as handle:
        data = json.load(handle)
    data["claim"]["epsilon"] = 2.0
    with open(f"{folder}/claim2.json", "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    with open(f"{folder}/text.json", "w", encoding="utf-8") as handle:
        handle.write("not json")
    names = {
        "NEW": "NEW",
        "OLD_AS_TEXT": f"{folder}/text.json",
        "CLAIM_2": f"{folder}/claim2.json",
        "HALVED": files["halved"],
    }
    assert main(["compare", files["old"], *[names.get(a, a) for a in argv]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_a_new_mechanism_that_raises_is_exit_4(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["--claim", "1,0", "--width", "1", "--samples", "20000", "--no-progress"]
    assert run_cli(["audit", "user_mechanisms:rnm_batched", *base, "--json", "b.json"])[0] in (0, 3)
    status, line = run_cli(
        ["compare", "b.json", "--mechanism", "user_mechanisms:raises_in_sample", "--seed", "1"]
    )
    assert status == 4 and line.startswith("dpaudit compare: error: the re-test could not run")
    assert "raised IndexError at" in line


def _audit_cli(epsilon, *extra):
    """``dpaudit audit PermuteAndFlip --epsilon EPSILON`` against the claim (1, 0) on PAIR."""
    return run_cli(
        [
            "audit", "PermuteAndFlip", "--epsilon", str(epsilon), "--claim", "1,0",
            "--pair", "2,1,0;3,1,0", "--restrict-to-given", "--samples", "200000",
            "--seed", "3", "--no-progress", *extra,
        ]
    )  # fmt: skip


@pytest.fixture(scope="module")
def quieter(tmp_path_factory):
    """old.json: PermuteAndFlip at ε = 0.5 audited against (1, 0), far inside its claim."""
    path = str(tmp_path_factory.mktemp("baseline") / "old.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(dpaudit.audit(M.PermuteAndFlip(epsilon=0.5), seed=0, **AUDIT).to_json())
    return path


def test_audit_with_a_baseline_fails_a_change_that_loses_privacy_within_the_claim(quieter):
    # ε = 0.5 -> 1: still within the claim (1, 0), so the audit alone does not fail, but it
    # loses significantly more privacy than the baseline on its events: exit 1.
    status, _ = _audit_cli(1.0)
    assert status in (0, 3)
    status, line = _audit_cli(1.0, "--baseline", quieter)
    assert status == 1 and line.startswith("result: SIGNIFICANTLY WORSE")


def test_audit_with_a_baseline_keeps_its_own_status_when_nothing_got_worse(quieter):
    alone, _ = _audit_cli(0.5)
    status, line = _audit_cli(0.5, "--baseline", quieter)
    assert status == alone and "no significant change" in line


def test_audit_baseline_misuse_is_a_usage_error_before_sampling(quieter, tmp_path):
    missing = str(tmp_path / "none.json")
    status, line = _audit_cli(0.5, "--baseline", missing)
    assert status == 2 and "--baseline: cannot read" in line
    other = str(tmp_path / "other.json")
    with open(other, "w", encoding="utf-8") as handle:
        claim = {**AUDIT, "claim": (2.0, 0.0)}
        handle.write(dpaudit.audit(M.PermuteAndFlip(epsilon=0.5), seed=0, **claim).to_json())
    status, line = _audit_cli(0.5, "--baseline", other)
    assert status == 2 and "--baseline" in line
