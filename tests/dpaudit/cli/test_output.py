"""``dpaudit.cli.output``: where the summary, ``--json`` and ``--report`` go."""

import json
import os
from types import SimpleNamespace

import pytest

from dpaudit.auditor import AuditResult, Witness
from dpaudit.auditor.values.outcome_events import ItemAt
from dpaudit.cli.errors import UsageError
from dpaudit.cli.output import (
    REPORT_SUFFIXES,
    check_report_path,
    emit_result,
    parameters_line,
    summary_stream,
    write_json,
    write_text,
)
from mechanisms.claims import UNRESTRICTED, PrivacyClaim


def _result(violation: bool) -> AuditResult:
    w = Witness(
        (0, 3), (1, 2), ItemAt(0, 0), 900, 1000, 100, 1000, 0.87, 0.13, 1.9, 0.52, "explicit", 1.2
    )
    return AuditResult(
        "Demo(epsilon=1)", 1.0, 0.0, "each count moves by <= 1", 1.9, 0.52, violation, 0.05,
        w, w, 2000, 0.5, 1, 2, seed=3, witnesses=(w,),
    )  # fmt: skip


def _args(**given):
    return SimpleNamespace(**{"json": None, "report": None} | given)


def test_the_summary_goes_to_stderr_only_when_json_holds_stdout():
    import sys

    assert summary_stream(_args()) is sys.stdout
    assert summary_stream(_args(json="out.json")) is sys.stdout
    assert summary_stream(_args(json="-")) is sys.stderr
    assert summary_stream(SimpleNamespace()) is sys.stdout  # a command without --json


@pytest.mark.parametrize("name", ["r.md", "R.MD", "r.markdown", "r.html", "r.htm", "a.b/r.Html"])
def test_markdown_and_html_reports_are_accepted(tmp_path, name):
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    check_report_path(str(path))
    check_report_path(None)


@pytest.mark.parametrize("name", ["r.txt", "report", "r.md.bak", "folder.md/report"])
def test_another_suffix_is_refused_with_the_fix(tmp_path, name):
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    with pytest.raises(
        UsageError, match=r"--report: .* no \.md or \.html suffix; name the file r\.md"
    ):
        check_report_path(str(path))


def test_a_report_on_stdout_is_refused():
    with pytest.raises(UsageError, match=r"--report needs a file name \(\.md or \.html\)"):
        check_report_path("-")


def test_a_report_in_a_missing_folder_is_refused_before_the_audit(tmp_path):
    with pytest.raises(UsageError, match=r"--report: cannot write .* no directory"):
        check_report_path(str(tmp_path / "nowhere" / "r.md"))


def test_write_text_ends_with_one_newline(tmp_path):
    for text in ("a line", "a line\n"):
        path = tmp_path / "out.txt"
        write_text(str(path), text, "--x")
        assert path.read_text() == "a line\n"


def test_write_text_to_dash_is_stdout(capsys):
    write_text("-", "hello", "--x")
    assert capsys.readouterr().out == "hello\n"


def test_an_unwritable_path_is_a_usage_error_naming_the_option(tmp_path):
    with pytest.raises(UsageError, match=r"^--json: cannot write '.*': ") as caught:
        write_text(str(tmp_path), "{}", "--json")  # a directory
    assert caught.value.__cause__ is None  # one line, no chained traceback


def test_write_json_round_trips(tmp_path):
    data = {"verdict": "PASSED", "epsilon": 0.5, "name": "ε", "pairs": [[0, 1]]}
    path = tmp_path / "r.json"
    write_json(str(path), data)
    assert json.loads(path.read_text(encoding="utf-8")) == data
    assert "ε" in path.read_text(encoding="utf-8")  # not escaped


def test_parameters_line_tells_the_two_epsilons_apart():
    mech = SimpleNamespace(epsilon=0.5, claim=PrivacyClaim(1.5, 1e-6, UNRESTRICTED))
    line = parameters_line(mech)
    assert line is not None
    assert "epsilon=0.5 is the mechanism's own (per-selection) epsilon" in line
    assert line.endswith("the total claim audited is (1.5, 1e-06)")


def test_parameters_line_is_none_without_a_numeric_epsilon():
    assert parameters_line(SimpleNamespace(claim=PrivacyClaim(1.0, 0.0, UNRESTRICTED))) is None
    assert (
        parameters_line(SimpleNamespace(epsilon="1", claim=PrivacyClaim(1.0, 0.0, UNRESTRICTED)))
        is None
    )


# No violation and nothing separated is INCONCLUSIVE (3), not PASSED.
@pytest.mark.parametrize("violation, status", [(True, 1), (False, 3)])
def test_emit_result_prints_writes_and_returns_the_exit_status(tmp_path, capsys, violation, status):
    result = _result(violation)
    json_path, report_path = tmp_path / "r.json", tmp_path / "r.md"
    returned = emit_result(result, _args(json=str(json_path), report=str(report_path)))
    assert returned == status == result.exit_status
    assert capsys.readouterr().out == f"{result}\n"
    assert json.loads(json_path.read_text()) == json.loads(json.dumps(result.to_dict()))
    from dpaudit.report import to_markdown

    assert report_path.read_text() == to_markdown(result).rstrip("\n") + "\n"


def test_emit_result_writes_html_for_an_html_suffix(tmp_path, capsys):
    result = _result(True)
    path = tmp_path / "r.HTM"
    emit_result(result, _args(report=str(path)))
    assert path.read_text().lstrip().lower().startswith("<!doctype html")
    assert not os.path.exists(tmp_path / "r.json")


def test_emit_result_with_json_on_stdout_puts_the_summary_on_stderr(capsys):
    result = _result(False)
    emit_result(result, _args(json="-"))
    captured = capsys.readouterr()
    assert json.loads(captured.out) == json.loads(json.dumps(result.to_dict()))
    assert captured.err == f"{result}\n"


def test_every_report_suffix_is_lower_case_and_dotted():
    assert all(s.startswith(".") and s == s.lower() for s in REPORT_SUFFIXES)
    assert set(REPORT_SUFFIXES.values()) == {"markdown", "html"}
