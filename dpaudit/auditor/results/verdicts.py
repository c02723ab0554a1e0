"""The three verdicts of an audit and the exit statuses ``dpaudit audit`` gives them."""

from __future__ import annotations

__all__ = ["INCONCLUSIVE", "PASSED", "VIOLATION", "exit_status_of"]

VIOLATION = "violation"
PASSED = "passed"
INCONCLUSIVE = "inconclusive"

_EXIT_STATUS = {PASSED: 0, VIOLATION: 1, INCONCLUSIVE: 3}


def exit_status_of(verdict: str) -> int:
    """``dpaudit audit``'s exit status for a verdict: 0 passed, 1 violation, 3 inconclusive."""
    return _EXIT_STATUS[verdict]
