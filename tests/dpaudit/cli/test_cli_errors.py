"""``dpaudit.cli.errors``: exit statuses, interrupts and the one-line report on stderr."""

import re

from dpaudit.cli import errors
from dpaudit.cli.errors import (
    EXIT_COULD_NOT_RUN,
    EXIT_INCONCLUSIVE,
    EXIT_STATUSES,
    EXIT_USAGE,
    is_interrupt,
    report,
)


def test_exit_statuses_are_distinct_and_not_the_verdicts_0_and_1():
    codes = {EXIT_USAGE, EXIT_INCONCLUSIVE, EXIT_COULD_NOT_RUN}
    assert codes == {2, 3, 4}


def test_the_epilog_names_every_exit_status_once_in_order():
    found = [int(n) for n in re.findall(r"(\d) [a-z]", EXIT_STATUSES)]
    assert found == [0, 1, EXIT_USAGE, EXIT_INCONCLUSIVE, EXIT_COULD_NOT_RUN]


def test_the_table_in_the_docstring_agrees_with_the_constants():
    table = dict(re.findall(r"^\| (\d) \| (\w+)", errors.__doc__ or "", flags=re.M))
    assert table[str(EXIT_USAGE)] == "usage"
    assert table[str(EXIT_INCONCLUSIVE)] == "INCONCLUSIVE"
    assert table[str(EXIT_COULD_NOT_RUN)] == "could"


def test_keyboard_interrupt_is_an_interrupt():
    assert is_interrupt(KeyboardInterrupt())


def test_duckdbs_interrupt_exception_is_recognised_by_name():
    InterruptException = type("InterruptException", (Exception,), {})
    assert is_interrupt(InterruptException("query interrupted"))


def test_other_errors_are_not_interrupts():
    assert not is_interrupt(RuntimeError("InterruptException"))
    assert not is_interrupt(SystemExit(3))


def test_report_prints_one_line_with_the_command(capsys):
    report("audit", "no such file")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "dpaudit audit: error: no such file\n"


def test_report_without_a_command(capsys):
    report(None, "bad")
    assert capsys.readouterr().err == "dpaudit: error: bad\n"


def test_the_errors_are_re_exported_from_dpaudit_errors():
    import dpaudit.errors

    for name in ("CouldNotRun", "UsageError", "could_not_run", "user_frame"):
        assert getattr(errors, name) is getattr(dpaudit.errors, name)
