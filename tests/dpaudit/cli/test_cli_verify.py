"""``dpaudit verify``: exit codes 0 (holds) / 1 (violated) / 2 (usage), output and JSON."""

import json
import sys
from dataclasses import dataclass

import pytest
from helpers import OneItemToy, toy_em_law

import mechanisms as M
from dpaudit.cli import main
from dpaudit.exact import output_law
from mechanisms.validation import require_positive_float


@dataclass(frozen=True)
class CliToyEM(OneItemToy):
    """Test-only exponential mechanism, P(i) ∝ exp(ε c_i); claims (ε, 0) under AddRemoveUser(Δ)."""

    max_items: int | None = None

    def __post_init__(self):
        require_positive_float("epsilon", self.epsilon)

    @property
    def claim(self):
        return M.PrivacyClaim(self.epsilon, 0.0, M.AddRemoveUser(self.max_items))


output_law.register(CliToyEM)(toy_em_law)


@dataclass(frozen=True)
class CliNoLaw(OneItemToy):
    """Test-only mechanism without an exact law (not a CliToyEM subclass: laws are inherited)."""


@pytest.fixture
def toy(monkeypatch):
    """Expose the toy classes to the CLI's mechanism lookup for one test."""
    monkeypatch.setattr(M, "CliToyEM", CliToyEM, raising=False)
    monkeypatch.setattr(M, "CliNoLaw", CliNoLaw, raising=False)
    monkeypatch.setattr(M, "__all__", list(M.__all__) + ["CliToyEM", "CliNoLaw"])


def test_claim_that_holds_exits_0(toy, capsys):
    code = main(
        ["verify", "CliToyEM", "--epsilon", "1", "--d", "2", "--max-count", "2", "--no-progress"]
    )
    out = capsys.readouterr()
    assert code == 0
    assert "HOLDS" in out.out and "d=2" in out.out and "counts <= 2" in out.out
    assert out.err == ""


def test_violated_claim_exits_1_and_writes_json(toy, capsys, tmp_path):
    path = tmp_path / "result.json"
    code = main(
        [
            "verify",
            "cli-toy-em",
            "--epsilon=1",
            "--d",
            "2",
            "--max-count",
            "2",
            "--epsilon-check",
            "0.5",
            "--json",
            str(path),
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "VIOLATED" in out
    data = json.loads(path.read_text())
    assert data["holds"] is False and data["violations"] > 0
    assert data["claim"]["epsilon"] == 0.5
    assert len(data["delta_pair"]) == 2


def test_max_items_sets_relation_and_mechanism(toy, capsys):
    code = main(
        [
            "verify",
            "CliToyEM",
            "--epsilon",
            "1",
            "--d",
            "3",
            "--max-count",
            "1",
            "--max-items",
            "1",
            "--json",
            "-",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out[out.index("{") :])
    assert data["family"]["relation_parameter"] == 1
    assert data["mechanism"] == "CliToyEM(epsilon=1.0, max_items=1)"
    # 8 histograms x 3 single-item additions
    assert data["family"]["pairs"] == 8 * 3


def test_bounded_change_relation(toy, capsys):
    code = main(
        [
            "verify",
            "CliToyEM",
            "--epsilon",
            "1",
            "--d",
            "2",
            "--max-count",
            "2",
            "--relation",
            "bounded-change",
            "--no-progress",
        ]
    )
    assert code == 1  # EM is only 2ε-DP when counts may move in opposite directions
    assert "each count moves" in capsys.readouterr().out


def test_progress_bar_only_when_stderr_is_a_terminal(toy, capsys, monkeypatch):
    argv = ["verify", "CliToyEM", "--epsilon", "1", "--d", "2", "--max-count", "1"]
    assert main(argv) == 0
    assert capsys.readouterr().err == ""  # a CI log gets no bar
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(argv) == 0
    assert "pair" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["verify", "NoSuchMechanism"], "unknown mechanism"),
        (["verify", "CliToyEM", "--epsilon", "-1"], "epsilon"),
        (["verify", "CliToyEM", "--bogus", "1"], "unknown option --bogus"),
        (["verify", "CliToyEM", "--d", "0"], "--d"),
        (["verify", "CliToyEM", "--max-count", "-1"], "--max-count"),
        (["verify", "CliToyEM", "--max-items", "zero"], "--max-items"),
        (["verify", "CliNoLaw"], "no exact law"),
        (["verify", "CliToyEM", "--relation", "bounded-change", "--max-items", "2"], "--max-items"),
    ],
)
def test_usage_errors_exit_2(toy, capsys, argv, message):
    assert main(argv + ["--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_bad_option_value_exits_2(toy, capsys):
    assert main(["verify", "CliToyEM", "--d", "five"]) == 2
    err = capsys.readouterr().err
    assert "argument --d: invalid int value: 'five'" in err and err.count("\n") == 1


# --- the done-when, once LimitDomain and its law exist --------------------------


LIMIT_DOMAIN = ["LimitDomain", "--k", "2", "--kbar", "3", "--epsilon", "1", "--delta", "1e-3"]


def test_limit_domain_small_family_exits_0(capsys):
    code = main(["verify", *LIMIT_DOMAIN, "--d", "4", "--max-count", "2", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "HOLDS" in out and "on pair c=" in out and "d=4" in out


def test_limit_domain_max_items_is_passed_to_the_mechanism(capsys):
    code = main(
        [
            "verify",
            *LIMIT_DOMAIN,
            "--d",
            "4",
            "--max-count",
            "1",
            "--max-items",
            "1",
            "--json",
            "-",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out[out.index("{") :])
    assert "max_items=1" in data["mechanism"]
    assert data["family"]["relation_parameter"] == 1


@pytest.mark.slow
def test_limit_domain_done_when_subprocess(tmp_path):
    # The acceptance command, run as a user would (d=5, counts <= 3).
    import subprocess
    import sys

    path = tmp_path / "ld.json"
    script = (
        "import sys, dpaudit.exact.gumbel_laws; from dpaudit.cli import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "verify",
            *LIMIT_DOMAIN,
            "--d",
            "5",
            "--max-count",
            "3",
            "--json",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "HOLDS" in done.stdout and "on pair c=" in done.stdout
    data = json.loads(path.read_text())
    assert data["family"]["histograms"] == 4**5 and data["family"]["pairs"] == 4**5 * 31


def test_substitute_relation(toy, capsys, tmp_path):
    out = tmp_path / "verify.json"
    argv = ["verify", "CliToyEM", "--epsilon", "1", "--d", "2", "--max-count", "2"]
    code = main(argv + ["--relation", "substitute", "--json", str(out), "--no-progress"])
    assert code == 1  # one count down and another up: EM is only 2ε-DP under substitution
    assert "substitute one record" in capsys.readouterr().out
    family = json.loads(out.read_text())["family"]
    assert family["relation_type"] == "Substitute" and family["relation_parameter"] == 1
    # unordered pairs {a, a + (-1, 1)}, a_0 >= 1, with a side in {0,1,2}^2: a in the
    # family (a_0 in {1, 2}: 6 pairs) or a = (3, 0), (3, 1) (2 pairs)
    assert family["pairs"] == 8
