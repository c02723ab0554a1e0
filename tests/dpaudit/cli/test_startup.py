"""Start-up imports nothing heavy (measured in benchmarks/bench_startup.py, not timed here)."""

import os
import subprocess
import sys

import dpaudit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(dpaudit.__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT)
HEAVY = ("statsmodels", "pandas", "scipy", "matplotlib", "tqdm", "dask", "duckdb", "mechanisms")


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=ENV, check=True
    ).stdout
    return {name.split(".")[0] for name in out.split()}


def test_importing_the_cli_loads_no_heavy_module():
    assert _loaded_after("import dpaudit.cli") & set(HEAVY) == set()


def test_help_and_a_usage_error_load_no_heavy_module():
    code = (
        "import contextlib, io\n"
        "from dpaudit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    assert main(['audit', '--samples', '0']) == 2\n"
        "    try:\n"
        "        main(['audit', '--help'])\n"
        "    except SystemExit as exit:\n"
        "        assert exit.code == 0\n"
    )
    assert _loaded_after(code) & set(HEAVY) == set()


def test_python_m_dpaudit_runs_the_cli():
    process = subprocess.run(
        [sys.executable, "-m", "dpaudit", "--version"],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
    assert process.returncode == 0 and process.stdout.startswith("dpaudit ")


def test_lazy_names_are_the_real_ones():
    from dpaudit.auditor import AuditResult, audit
    from dpaudit.recheck import recheck

    assert dpaudit.audit is audit and dpaudit.AuditResult is AuditResult
    assert dpaudit.recheck is recheck  # the function, though the submodule is loaded
    assert set(dpaudit.__all__) <= set(dir(dpaudit))


def test_the_cli_s_own_default_budget_is_the_auditor_s():
    # The CLI spells the default budget again so that start-up need not import the auditor;
    # one idea, one value: the two must not drift apart.
    from dpaudit.auditor import DEFAULT_SAMPLES
    from dpaudit.cli.arguments import DEFAULT_SAMPLES as CLI_DEFAULT_SAMPLES

    assert CLI_DEFAULT_SAMPLES == DEFAULT_SAMPLES
