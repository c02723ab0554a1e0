"""One ``dpaudit_audit(...)`` call: the cached verdict or a fresh audit, written, then judged.

The audit is [`dpaudit.testing.assert_private`][dpaudit.testing.assert_private]'s; a VIOLATION
raises its [`PrivacyViolation`][dpaudit.testing.PrivacyViolation] (the message holds the result:
pair, event, counts and bounds of the witness), an INCONCLUSIVE verdict is failed with its
[`AuditInconclusive`][dpaudit.testing.AuditInconclusive], skipped or warned about.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpaudit.auditor import PASSED, AuditResult
from dpaudit.testing import AuditInconclusive, PrivacyViolation, assert_private

from .cache import VerdictCache, cache_key
from .results import write_json
from .settings import Settings

__all__ = ["AuditOutcome", "InconclusiveAuditWarning", "audit_once", "judge"]


class InconclusiveAuditWarning(UserWarning):
    """An audit was INCONCLUSIVE and ``--dpaudit-inconclusive=warn`` let its test pass."""


@dataclass(frozen=True)
class AuditOutcome:
    """One audit of a test.

    Parameters
    ----------
    result : its result, fresh or cached.
    cached : the result came from the cache (the mechanism was not sampled).
    key : its cache key (None: no cache, or the mechanism's code could not be read).
    file : where its result JSON was written (``--dpaudit-results``), or None.
    """

    result: AuditResult
    cached: bool
    key: str | None
    file: Path | None

    def notes(self) -> list[str]:
        """What the test report says besides the result: the cache, the result file."""
        notes = []
        if self.cached:
            notes.append(
                f"dpaudit: verdict from the cache (key {self.key}); the mechanism was not sampled"
            )
        if self.file is not None:
            notes.append(
                f"dpaudit: result file {self.file} (check it: dpaudit recheck {self.file})"
            )
        return notes


def _fresh(mechanism, options: dict) -> AuditResult:
    """The result of auditing ``mechanism`` with ``options`` (a violation is returned, not
    raised: it is cached and written before the test fails)."""
    keywords = dict(options)
    if "budget" in keywords:
        keywords.setdefault("samples", None)  # one budget: samples= or budget=
    try:
        return assert_private(mechanism, allow_inconclusive=True, **keywords)
    except PrivacyViolation as violation:
        return violation.result


def audit_once(mechanism, options: dict, settings: Settings, file: Path | None) -> AuditOutcome:
    """Audit ``mechanism`` (or take its cached verdict), cache the result and write its file.

    Parameters
    ----------
    mechanism : anything [`dpaudit.audit`][dpaudit.auditor.audit] accepts.
    options : keywords of [`assert_private`][dpaudit.testing.assert_private] (alpha, samples or
        budget, seed, claim, pairs, ...).
    settings : the session's settings (the cache directory).
    file : where to write the result JSON, or None.
    """
    cache = None if settings.cache is None else VerdictCache(settings.cache)
    key = None if cache is None else cache_key(mechanism, options)
    result = None if cache is None or key is None else cache.get(key)
    cached = result is not None
    if result is None:
        result = _fresh(mechanism, options)
        if cache is not None and key is not None and not result.interrupted:
            cache.put(key, result)
    if file is not None:
        write_json(file, result.to_dict())
    return AuditOutcome(result, cached, key, file)


def _with_notes(error: AssertionError, notes: list[str]) -> AssertionError:
    for note in notes:
        error.add_note(note)
    return error


def judge(audit: AuditOutcome, inconclusive: str) -> AuditResult:
    """The result of a PASSED audit; raise on a VIOLATION; an INCONCLUSIVE one as ``inconclusive``.

    Parameters
    ----------
    audit : the test's audit.
    inconclusive : ``"fail"`` ([`AuditInconclusive`][dpaudit.testing.AuditInconclusive]),
        ``"skip"`` (the reason is the result's explanation) or ``"warn"``
        ([`InconclusiveAuditWarning`][dpaudit.pytest_plugin.run.InconclusiveAuditWarning], and the
        result is returned).
    """
    __tracebackhide__ = True  # the test's line, not this one, is where it failed or was skipped
    result = audit.result
    if result.violation:
        raise _with_notes(PrivacyViolation(result), audit.notes())
    if result.verdict == PASSED:
        return result
    if inconclusive == "fail":
        raise _with_notes(AuditInconclusive(result), audit.notes())
    reason = "; ".join(
        [f"dpaudit: audit of {result.mechanism} INCONCLUSIVE: {result.explanation}", *audit.notes()]
    )
    if inconclusive == "skip":
        pytest.skip(reason)
    warnings.warn(InconclusiveAuditWarning(reason), stacklevel=3)
    return result
