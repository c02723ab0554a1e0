"""``dpaudit.errors``: the one-line CouldNotRun and where the user's exception was raised."""

import ast
import os
import sys
from pathlib import Path

import dpaudit.errors
from dpaudit.errors import CouldNotRun, UsageError, could_not_run, user_frame


def _raised_in(filename: str, statement: str) -> BaseException:
    """What ``statement`` raises when run from code compiled as ``filename``.

    The error is caught inside that code, so its traceback holds that file's frames only.
    """
    source = f"def go():\n    try:\n        {statement}\n    except Exception as error:\n        return error\n"
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["go"]()


def _raise_in_user_file(tmp_path, statement: str) -> BaseException:
    return _raised_in(str(tmp_path / "user_code.py"), statement)


def test_user_frame_names_the_user_file_and_line(tmp_path):
    error = _raise_in_user_file(tmp_path, "raise ValueError('bad')")
    where = user_frame(error)
    assert where is not None
    assert where.endswith("user_code.py:3")


def test_frames_inside_dpaudit_are_not_user_code():
    inside = os.path.join(os.path.dirname(dpaudit.errors.__file__), "not_a_module.py")
    assert user_frame(_raised_in(inside, "raise ValueError('tool bug')")) is None


def test_frames_of_the_standard_library_are_not_user_code():
    inside = os.path.join(os.path.dirname(os.__file__), "not_a_module.py")
    assert user_frame(_raised_in(inside, "raise ValueError('x')")) is None


def test_frames_of_generated_code_are_not_user_code():
    assert user_frame(_raised_in("<string>", "raise ValueError('x')")) is None


def test_user_frame_of_an_error_never_raised_is_none():
    assert user_frame(ValueError("never raised")) is None


def test_user_frame_reads_a_remote_traceback_in_the_cause(tmp_path):
    remote_file = tmp_path / "remote_mech.py"
    remote = (
        "Traceback (most recent call last):\n"
        f'  File "{remote_file}", line 17, in sample\n'
        "    raise ValueError('x')\n"
        "ValueError: x\n"
    )
    error = RuntimeError("worker failed")
    error.__cause__ = Exception(remote)
    where = user_frame(error)
    assert where is not None and where.endswith("remote_mech.py:17")


def test_could_not_run_names_the_exception_the_place_and_the_message(tmp_path):
    error = _raise_in_user_file(tmp_path, "raise ZeroDivisionError('divide   by\\n zero')")
    message = str(could_not_run(error, what="the sampling"))
    assert message.startswith(
        "the sampling could not run: the mechanism raised ZeroDivisionError at "
    )
    assert "user_code.py:3" in message
    # Whitespace runs and newlines fold to one space: the message is one line.
    assert message.endswith(": divide by zero")
    assert "\n" not in message


def test_could_not_run_without_a_user_frame_names_only_the_type():
    message = str(could_not_run(KeyError("k")))
    assert message == "the audit could not run: KeyError: 'k'"


def test_could_not_run_of_an_empty_message_says_so():
    assert str(could_not_run(RuntimeError())).endswith("RuntimeError: (no message)")


def test_could_not_run_cuts_a_long_message_to_300_characters():
    text = "x" * 1000
    message = str(could_not_run(RuntimeError(text)))
    tail = message.rsplit(": ", 1)[1]
    assert len(tail) == 300 and tail.endswith("...")
    assert tail[:297] == text[:297]


def test_could_not_run_of_memory_error_names_the_knobs_to_lower():
    message = str(could_not_run(MemoryError(), what="the screening"))
    assert message.startswith("the screening ran out of memory")
    assert "--samples" in message and "--domain-size" in message


def test_could_not_run_passes_a_could_not_run_through_unchanged():
    original = CouldNotRun("already one line")
    assert could_not_run(original) is original


def test_usage_error_prog_is_per_instance():
    error = UsageError("bad")
    error.prog = "dpaudit audit"
    assert UsageError("other").prog is None


def test_the_module_imports_only_the_standard_library():
    tree = ast.parse(Path(dpaudit.errors.__file__).read_text())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    imported |= {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported, "the module imports something"
    assert {name.split(".")[0] for name in imported} <= sys.stdlib_module_names
