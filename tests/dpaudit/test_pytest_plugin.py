"""The pytest plugin (``dpaudit.pytest_plugin``, issue 46 item 3), run on inner test files.

Each inner run is a pytest session of its own (``pytester``, in this process) in a fresh
directory, so its cache starts empty. Measured on 2 cores at alpha 1e-6:
``PermuteAndFlip(ε=1)`` on the pair ``[2, 1, 0]`` vs ``[3, 1, 0]`` PASSES with 200,000 samples
(seeds 0 to 19) and is INCONCLUSIVE with 20,000 (seed 0); the catalog's ``rnm-half-noise`` on its
own pair is a VIOLATION with 200,000.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import dpaudit
import mechanisms
from dpaudit.catalog import catalog_entry
from dpaudit.cli import main as dpaudit_main
from dpaudit.pytest_plugin import run as plugin_run  # loaded here, kept by pytester's runs
from dpaudit.pytest_plugin.cache import cache_key
from dpaudit.pytest_plugin.settings import Settings, audit_options

pytest_plugins = ["pytester"]

assert plugin_run  # the auditor stays imported across the inner runs

#: A correct mechanism, the pair where its output moves, and a budget that gives it power.
CORRECT = """
import pytest
import mechanisms

PAIR = {"pairs": [([2, 1, 0], [3, 1, 0])], "restrict": True}


@pytest.mark.dpaudit(budget=200_000, **PAIR)
def test_permute_and_flip_is_private(dpaudit_audit):
    result = dpaudit_audit(mechanisms.PermuteAndFlip(epsilon=1.0))
    assert result.verdict == "passed"
"""

#: A mechanism that writes down every batch it draws (to ``draws.txt``), to see the cache at work.
COUNTED = """
import pytest
import mechanisms


class Counted(mechanisms.PermuteAndFlip):
    def sample(self, counts, size, rng):
        with open("draws.txt", "a") as file:
            file.write(f"{size}\\n")
        return super().sample(counts, size, rng)


@pytest.mark.dpaudit(budget=200_000, pairs=[([2, 1, 0], [3, 1, 0])], restrict=True, seed=SEED)
def test_counted(dpaudit_audit):
    dpaudit_audit(Counted(epsilon=1.0))
"""

#: Too few samples for power on that pair: INCONCLUSIVE.
SHORT = """
import pytest
import mechanisms


@pytest.mark.dpaudit(samples=20_000, pairs=[([2, 1, 0], [3, 1, 0])], restrict=True)
def test_short(dpaudit_audit):
    dpaudit_audit(mechanisms.PermuteAndFlip(epsilon=1.0))
"""


def _counted(seed: int = 0) -> str:
    return COUNTED.replace("SEED", str(seed))


def _draws(pytester: pytest.Pytester) -> int:
    """Batches the mechanism drew since the last call (and forget them)."""
    path = pytester.path / "draws.txt"
    if not path.exists():
        return 0
    draws = len(path.read_text().split())
    path.unlink()
    return draws


def _summary(result: pytest.RunResult) -> list[str]:
    """The plugin's lines of the terminal summary."""
    lines = result.outlines
    if not any("dpaudit audits" in line for line in lines):
        return []
    start = next(i for i, line in enumerate(lines) if "dpaudit audits" in line)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("dpaudit: "))
    return lines[start + 1 : end + 1]


def test_a_correct_mechanism_passes_and_the_summary_states_the_false_alarm_probability(pytester):
    pytester.makepyfile(test_correct=CORRECT)
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)
    summary = _summary(result)
    assert len(summary) == 2
    assert summary[0].startswith("PASSED       test_correct.py::test_permute_and_flip_is_private")
    assert "PermuteAndFlip(epsilon=1.0" in summary[0]
    assert "alpha 1e-06" in summary[0]
    assert summary[1] == (
        "dpaudit: 1 audits (0 from the cache); false-alarm probability of this run at most "
        "1e-06 (union bound: the sum of the audits' alpha)"
    )


def test_a_broken_mechanism_fails_with_its_witness_in_the_message(pytester):
    pytester.makepyfile(
        test_broken="""
        import pytest
        from dpaudit.catalog import catalog_entry

        ENTRY = catalog_entry("rnm-half-noise")


        @pytest.mark.dpaudit(budget=200_000, pairs=[ENTRY.pair], restrict=True)
        def test_half_noise(dpaudit_audit):
            dpaudit_audit(ENTRY.build())
        """
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *PrivacyViolation: privacy claim violated:",
            "E *verdict: *VIOLATION*",
            "E *ε lower bound at δ=0: *",
            "E *pair: *[[]*] vs [[]*]*",
            "E *event: *output in*",
            "E *counts: *P̂=*Q̂=*",
        ]
    )
    out = result.stdout.str()
    assert "[0, 2, 2, 2, 2]" in out and "[1, 1, 1, 1, 1]" in out
    assert "verdict from the cache" not in out
    assert _summary(result)[0].startswith("VIOLATION    test_broken.py::test_half_noise")

    again = pytester.runpytest("-q")
    again.assert_outcomes(failed=1)
    assert "verdict from the cache (key " in again.stdout.str()
    assert "the mechanism was not sampled" in again.stdout.str()


def test_a_second_run_is_served_from_the_cache_without_sampling(pytester):
    pytester.makepyfile(test_counted=_counted())
    first = pytester.runpytest("-q")
    first.assert_outcomes(passed=1)
    assert _draws(pytester) > 0
    assert "(0 from the cache)" in _summary(first)[-1]
    assert list((pytester.path / ".pytest_cache" / "d" / "dpaudit").glob("*.json"))

    second = pytester.runpytest("-q")
    second.assert_outcomes(passed=1)
    assert _draws(pytester) == 0
    summary = _summary(second)
    assert summary[0].startswith("PASSED       test_counted.py::test_counted")
    assert summary[0].endswith(", cached)")
    assert "(1 from the cache)" in summary[-1]

    third = pytester.runpytest("-q", "--dpaudit-no-cache")
    third.assert_outcomes(passed=1)
    assert _draws(pytester) > 0


def test_a_changed_source_or_option_is_audited_again(pytester):
    pytester.makepyfile(test_counted=_counted())
    pytester.runpytest("-q").assert_outcomes(passed=1)
    assert _draws(pytester) > 0

    changed = _counted().replace("class Counted(", "# a change\nclass Counted(")
    pytester.makepyfile(test_counted=changed)
    source = pytester.runpytest("-q")
    source.assert_outcomes(passed=1)
    assert _draws(pytester) > 0
    assert "(0 from the cache)" in _summary(source)[-1]

    pytester.makepyfile(test_counted=changed.replace("seed=0", "seed=1"))
    option = pytester.runpytest("-q")
    option.assert_outcomes(passed=1)
    assert _draws(pytester) > 0

    alpha = pytester.runpytest("-q", "--dpaudit-alpha", "1e-5")
    alpha.assert_outcomes(passed=1)
    assert _draws(pytester) > 0
    assert "alpha 1e-05" in _summary(alpha)[0]

    pytester.runpytest("-q", "--dpaudit-alpha", "1e-5").assert_outcomes(passed=1)
    assert _draws(pytester) == 0  # nothing changed since: from the cache


def test_an_inconclusive_audit_fails_skips_or_warns_as_asked(pytester):
    pytester.makepyfile(test_short=SHORT)
    fail = pytester.runpytest("-q", "--dpaudit-inconclusive=fail")
    fail.assert_outcomes(failed=1)
    assert "AuditInconclusive: privacy audit inconclusive" in fail.stdout.str()
    assert _summary(fail)[0].startswith("INCONCLUSIVE test_short.py::test_short")

    # The mode is not part of the cache key: the same audit, judged three other ways.
    skip = pytester.runpytest("-q", "-rs", "--dpaudit-inconclusive=skip")
    skip.assert_outcomes(skipped=1)
    skip.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_short.py:*dpaudit: audit of *INCONCLUSIVE*"])

    default = pytester.runpytest("-q")
    default.assert_outcomes(skipped=1)

    warn = pytester.runpytest("-q", "--dpaudit-inconclusive=warn")
    warn.assert_outcomes(passed=1, warnings=1)
    assert "InconclusiveAuditWarning: dpaudit: audit of" in warn.stdout.str()
    assert "verdict from the cache" in warn.stdout.str()


def test_result_files_are_written_and_recheck_accepts_them(pytester, capsys):
    pytester.makepyfile(
        test_files="""
        import mechanisms


        def test_two_audits(dpaudit_audit):
            pair = {"pairs": [([2, 1, 0], [3, 1, 0])], "restrict": True, "budget": 200_000}
            mechanism = mechanisms.PermuteAndFlip(epsilon=1.0)
            dpaudit_audit(mechanism, **pair)
            dpaudit_audit(mechanism, claim=(0.5, 0.0), **pair)  # half its claim: a violation
        """
    )
    result = pytester.runpytest("-q", "--dpaudit-results", "results")
    result.assert_outcomes(failed=1)
    assert "at most 2e-06" in _summary(result)[-1]
    passed = pytester.path / "results" / "test_files.py__test_two_audits.json"
    violation = pytester.path / "results" / "test_files.py__test_two_audits-2.json"
    assert set((pytester.path / "results").iterdir()) == {passed, violation}
    assert f"dpaudit recheck {Path('results') / violation.name}" in result.stdout.str()

    for path, verdict in ((passed, "passed"), (violation, "violation")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["verdict"] == verdict
        assert data["alpha"] == 1e-6
        rechecked = dpaudit.recheck(path)  # exact route: 3 items
        assert rechecked.outcome == "consistent", rechecked.first_problem
        assert {c.route for c in rechecked.checks} == {"exact"}
        assert rechecked.violation_reproduced == (verdict == "violation")
        assert dpaudit_main(["recheck", str(path)]) == 0
    assert "violation reproduced" in capsys.readouterr().out


def test_a_seconds_budget_from_the_command_line_is_given_to_the_audit(pytester):
    pytester.makepyfile(
        test_seconds="""
        import mechanisms


        def test_seconds(dpaudit_audit):
            result = dpaudit_audit(
                mechanisms.PermuteAndFlip(epsilon=1.0), pairs=[([2, 1, 0], [3, 1, 0])], restrict=True
            )
            assert result.evidence["budget"]["seconds"] == 1.0
            assert result.verdict == "passed"
        """
    )
    pytester.runpytest("-q", "--dpaudit-budget", "1s").assert_outcomes(passed=1)


def test_options_come_from_the_command_line_then_the_markers_then_the_call(pytester):
    modcol = pytester.getmodulecol(
        """
        import pytest

        pytestmark = pytest.mark.dpaudit(seed=3, alpha=1e-4, inconclusive="warn")


        @pytest.mark.dpaudit(seed=5, samples=1000)
        def test_f(dpaudit_audit):
            pass


        def test_g(dpaudit_audit):
            pass


        @pytest.mark.dpaudit(7)
        def test_positional(dpaudit_audit):
            pass
        """,
        configargs=("--dpaudit-budget", "1s", "--dpaudit-inconclusive", "fail"),
    )
    first, module_only, positional = pytester.genitems([modcol])
    settings = Settings.from_config(first.config)
    assert settings.budget == "1s" and settings.inconclusive == "fail"
    assert settings.cache is not None and settings.cache.name == "dpaudit"
    options, mode = audit_options(settings, first, {})
    assert options == {"alpha": 1e-4, "seed": 5, "samples": 1000}  # samples: no command-line budget
    assert mode == "warn"
    options, mode = audit_options(settings, first, {"seed": 9, "inconclusive": "skip"})
    assert options["seed"] == 9 and mode == "skip"
    options, mode = audit_options(settings, module_only, {})
    assert options == {"alpha": 1e-4, "seed": 3, "budget": "1s"} and mode == "warn"
    with pytest.raises(pytest.UsageError, match="keywords only"):
        audit_options(settings, positional, {"seed": 1, "samples": 10})
    with pytest.raises(pytest.UsageError, match="inconclusive= must be one of"):
        audit_options(settings, first, {"inconclusive": "ignore"})


def test_the_cache_key_follows_the_parameters_and_the_options():
    options = {"alpha": 1e-6, "budget": 200_000, "pairs": [([2, 1, 0], [3, 1, 0])]}
    key = cache_key(mechanisms.PermuteAndFlip(epsilon=1.0), options)
    assert key is not None and len(key) == 64
    assert cache_key(mechanisms.PermuteAndFlip(epsilon=1.0), dict(options)) == key
    assert cache_key(mechanisms.PermuteAndFlip(epsilon=0.9), options) != key
    assert cache_key(mechanisms.PermuteAndFlip(epsilon=1.0), {**options, "seed": 1}) != key
    method = cache_key(mechanisms.PermuteAndFlip(epsilon=1.0).sample, options)
    assert method != cache_key(mechanisms.PermuteAndFlip(epsilon=0.5).sample, options)
    # A catalog class is re-exported under another __module__: its methods give its source.
    assert cache_key(catalog_entry("rnm-half-noise").build(), options) is not None

    def noisy_max(scale):
        def mechanism(counts, rng):
            return (int(np.argmax(np.asarray(counts) + rng.laplace(0, scale, len(counts)))),)

        return mechanism

    assert cache_key(noisy_max(2.0), options) == cache_key(noisy_max(2.0), options)
    assert cache_key(noisy_max(1.0), options) != cache_key(noisy_max(2.0), options)
    namespace: dict = {}
    exec("def typed_in(counts, rng):\n    return (0,)\n", namespace)  # no source file
    assert cache_key(namespace["typed_in"], options) is None


def test_the_plugin_does_nothing_unless_a_test_audits(pytester):
    pytester.makepyfile(
        """
        import pytest


        @pytest.mark.dpaudit(budget=1000)
        def test_marked_but_not_auditing():
            pass


        def test_plain():
            pass
        """
    )
    result = pytester.runpytest("-q", "--strict-markers")
    result.assert_outcomes(passed=2)
    assert "dpaudit" not in result.stdout.str()
    assert not (pytester.path / ".pytest_cache" / "d" / "dpaudit").exists()
    markers = pytester.runpytest("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.dpaudit(**options): audit options*"])
    bad = pytester.runpytest("-q", "--dpaudit-alpha", "2")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "--dpaudit-alpha must be in (0, 1), got 2.0" in bad.stderr.str()
