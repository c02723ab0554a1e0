"""Exit statuses a CI gate can trust: a crash is 4 (never 1), Ctrl-C is 3, one line each."""

import functools
import inspect
import os
import signal
import subprocess
import sys
import textwrap

import pytest
import user_mechanisms

import dpaudit.auditor
import dpaudit.cli
from dpaudit.cli import main

FUNCTION = ["--claim", "1,0", "--width", "1", "--samples", "20000", "--no-progress"]


def _line_of(function, text: str) -> int:
    """The line of ``function``'s source that contains ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_mechanism_that_raises_is_4_with_where(capsys):
    status = main(["audit", "user_mechanisms:raises_in_sample", *FUNCTION])
    err = _one_line(capsys)
    line = _line_of(user_mechanisms.raises_in_sample, "return np.asarray")
    assert status == 4 and f"raised IndexError at {_relative('user_mechanisms.py')}:{line}" in err


def _relative(name: str) -> str:
    return os.path.relpath(os.path.join(os.path.dirname(user_mechanisms.__file__), name))


def test_a_factory_that_raises_is_4_with_where(capsys):
    status = main(["audit", "user_mechanisms:failing_factory", "--samples", "20000"])
    err = _one_line(capsys)
    line = _line_of(user_mechanisms.failing_factory, "raise RuntimeError")
    assert status == 4 and f"RuntimeError at {_relative('user_mechanisms.py')}:{line}" in err
    assert "configuration file is missing" in err


def test_out_of_memory_is_4(capsys):
    assert main(["audit", "user_mechanisms:out_of_memory", *FUNCTION]) == 4
    assert "ran out of memory" in _one_line(capsys)


@pytest.mark.parametrize("name", ["nan_values", "some_nan_values"])
def test_nan_values_are_refused_not_read_as_missing(name, capsys):
    argv = ["audit", f"user_mechanisms:{name}", "--claim", "1,0", "--width", "0", "--values", "1"]
    assert main([*argv, "--samples", "20000", "--no-progress"]) == 4
    assert "released NaN as value 0" in _one_line(capsys)


def test_ids_outside_the_domain_are_4(capsys):
    assert main(["audit", "user_mechanisms:ids_out_of_range", *FUNCTION]) == 4
    assert "ids in [0, 5)" in _one_line(capsys)


def test_a_tool_failure_is_4_and_names_the_exception(capsys, monkeypatch):
    # A failure inside the tool, not in user code: int() called with the audit's keywords
    # raises a TypeError from C, so no frame of user code is on the traceback.
    monkeypatch.setattr(dpaudit.auditor, "audit", functools.partial(int))
    assert main(["audit", "GumbelTopK", "--k", "1", "--epsilon", "1", "--samples", "1000"]) == 4
    err = _one_line(capsys)
    assert "could not run: TypeError" in err and "mechanism raised" not in err


def test_ctrl_c_during_start_up_is_3(capsys, monkeypatch):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(dpaudit.cli, "build_parser", interrupted)
    assert main(["audit"]) == 3
    assert "interrupted" in _one_line(capsys)


def test_duckdb_interrupt_is_3_with_the_resume_hint(capsys, monkeypatch, tmp_path):
    class InterruptException(Exception):  # what duckdb raises when Ctrl-C hits a query
        pass

    def interrupted(*args, **kwargs):
        raise InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(dpaudit.auditor, "audit", interrupted)
    resume = str(tmp_path / "a.duckdb")
    argv = ["audit", "GumbelTopK", "--k", "1", "--epsilon", "1", "--resume", resume]
    assert main(argv) == 3
    err = _one_line(capsys)
    assert "interrupted" in err and f"continue from {resume}" in err


@pytest.fixture
def python_ctrl_c():
    """Python's own Ctrl-C handler for the test: a suite started in the background
    (``pytest &`` in a script) inherits SIGINT ignored, and no KeyboardInterrupt would come."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_held_ctrl_c_lets_the_checkpoint_write_finish(tmp_path, python_ctrl_c):
    from dpaudit.checkpoint import ChunkStore, _interrupt_after

    store = ChunkStore(str(tmp_path / "c.duckdb"), "key", {})
    with pytest.raises(KeyboardInterrupt), _interrupt_after():
        os.kill(os.getpid(), signal.SIGINT)  # arrives before the INSERT runs
        store.connection.execute("INSERT INTO chunks VALUES ('a', 1, '[]')")
        written = store.connection.execute("SELECT count(*) FROM chunks").fetchone()[0]
    store.close()
    assert written == 1


def test_a_ctrl_c_ignored_by_the_caller_stays_ignored_while_a_chunk_is_written(tmp_path):
    # Started with SIGINT ignored (nohup, ``cmd &`` in a script), the audit must not start
    # reacting to Ctrl-C while it holds one around a checkpoint write.
    from dpaudit.checkpoint import ChunkStore, _interrupt_after

    store = ChunkStore(str(tmp_path / "c.duckdb"), "key", {})
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with _interrupt_after():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            store.connection.execute("INSERT INTO chunks VALUES ('a', 1, '[]')")
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
    assert store.connection.execute("SELECT count(*) FROM chunks").fetchone()[0] == 1
    store.close()


def test_real_ctrl_c_while_importing_the_mechanisms_is_3(tmp_path):
    # A SIGINT delivered while `mechanisms` (the heaviest start-up import) is being imported:
    # sent by an import hook at that moment, so the test does not depend on timing. The hook
    # first restores the default disposition Python starts from: a suite started in the
    # background inherits SIGINT ignored, and the CLI would never see the signal.
    (tmp_path / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import os, signal, sys

            signal.signal(signal.SIGINT, signal.default_int_handler)

            class _Interrupt:
                def find_spec(self, name, path=None, target=None):
                    if name == "mechanisms":
                        sys.meta_path.remove(self)
                        os.kill(os.getpid(), signal.SIGINT)
                    return None

            sys.meta_path.insert(0, _Interrupt())
            """
        )
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(dpaudit.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), root]))
    process = subprocess.run(
        [sys.executable, "-m", "dpaudit", "audit", "GumbelTopK", "--k", "1", "--epsilon", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert process.returncode == 3, process.stderr
    assert "Traceback" not in process.stderr and "interrupted" in process.stderr
