"""The run's record of audits and its lines in pytest's terminal summary.

Each audit leaves a record in its test's ``user_properties`` (``("dpaudit", {...})``), so the
records reach the terminal summary from ``pytest-xdist`` workers too, and a JUnit XML report
carries them. The summary's last line bounds the chance that the run raised a false alarm: at
most the sum of the audits' ``alpha`` (a union bound; with the default 1e-6, a hundred audits
fail a correct suite at most once in ten thousand runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .run import AuditOutcome

__all__ = ["PROPERTY", "AuditLog", "record"]

#: The name of an audit's record in ``user_properties``.
PROPERTY = "dpaudit"


def record(nodeid: str, audit: AuditOutcome) -> dict:
    """The record of one [`AuditOutcome`][dpaudit.pytest_plugin.run.AuditOutcome] of test ``nodeid``
    (JSON values only: xdist sends it to the controller)."""
    result = audit.result
    return {
        "nodeid": nodeid,
        "verdict": result.verdict,
        "mechanism": result.mechanism,
        "alpha": result.alpha,
        "samples": result.samples,
        "seconds": result.seconds,
        "cached": audit.cached,
        "file": None if audit.file is None else str(audit.file),
    }


def _line(entry: dict) -> str:
    source = "cached" if entry["cached"] else f"{entry['seconds']:.1f} s"
    return (
        f"{entry['verdict'].upper():<12} {entry['nodeid']}: {entry['mechanism']} "
        f"(alpha {entry['alpha']:g}, {entry['samples']:,} samples, {source})"
    )


class AuditLog:
    """The audits of this run, gathered from the test reports; written in the terminal summary."""

    def __init__(self) -> None:
        self.records: list[dict] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":  # the last report of a test holds all its records
            for name, value in report.user_properties:
                if name == PROPERTY and isinstance(value, dict):
                    self.records.append(value)

    def false_alarm(self) -> float:
        """The probability that this run raised a false VIOLATION, at most: the sum of the alphas."""
        return min(1.0, sum(float(entry["alpha"]) for entry in self.records))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.records:
            return  # the plugin says nothing when no test audited
        terminalreporter.write_sep("-", "dpaudit audits")
        for entry in self.records:
            terminalreporter.write_line(_line(entry))
        cached = sum(bool(entry["cached"]) for entry in self.records)
        terminalreporter.write_line(
            f"dpaudit: {len(self.records)} audits ({cached} from the cache); false-alarm "
            f"probability of this run at most {self.false_alarm():.3g} "
            "(union bound: the sum of the audits' alpha)"
        )
