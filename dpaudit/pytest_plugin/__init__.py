"""pytest plugin: audit a mechanism inside a test with the ``dpaudit_audit`` fixture (issue 46, item 3).

    import mechanisms
    import pytest

    @pytest.mark.dpaudit(budget=200_000, pairs=[([2, 1, 0], [3, 1, 0])], restrict=True)
    def test_permute_and_flip_is_private(dpaudit_audit):
        dpaudit_audit(mechanisms.PermuteAndFlip(epsilon=1.0))

``dpaudit_audit(mechanism, **options)`` runs
[`dpaudit.testing.assert_private`][dpaudit.testing.assert_private] (the options are those of
[`dpaudit.audit`][dpaudit.auditor.audit]: ``budget`` or ``samples``, ``alpha``, ``seed``, ``claim``,
``pairs`` ...) and returns the [`AuditResult`][dpaudit.auditor.AuditResult] of a PASSED audit. A
VIOLATION fails the test with the witness (pair, event, counts, bounds) in the message. The
``dpaudit`` marker gives a test's (or, as ``pytestmark``, a module's) options; the call's own
keywords override it, and it overrides the command line:

* ``--dpaudit-alpha`` (default 1e-6) — the false-alarm probability of each audit. Flake rate: a
  correct mechanism fails its test with probability at most ``alpha``, so a run of ``N`` audits
  fails a correct suite with probability at most ``N × alpha`` (a union bound, printed in the
  terminal summary; PipelineDP PR 449 asks statistical privacy tests to state this rate);
* ``--dpaudit-budget`` — samples (``200000``) or seconds (``60s``) of each audit that sets neither;
* ``--dpaudit-inconclusive={skip,fail,warn}`` (default ``skip``; per test ``inconclusive=``) —
  an INCONCLUSIVE audit proves nothing, so its test must not pass silently, as a warning lets it;
  failing it turns a budget too small for this machine into a red build that is not about privacy.
  A skip says "not tested" in the report (``-rs`` lists the reason: what the audit lacked and what
  to try next) without either;
* ``--dpaudit-results DIR`` — each audit's result JSON, one file per audit named after the test,
  for ``dpaudit recheck FILE`` (a mechanism defined in a test file is not rebuilt from the file:
  recheck it from Python with ``dpaudit.recheck(FILE, mechanism=...)``);
* ``--dpaudit-cache-dir DIR`` (default: ``dpaudit/`` in pytest's cache, so
  ``pytest --cache-clear`` empties it; none under ``-p no:cacheprovider``) and
  ``--dpaudit-no-cache`` — an audit of unchanged code with unchanged options and versions reuses the
  cached verdict ([`cache`][dpaudit.pytest_plugin.cache]); the report and the summary say so.

The plugin is loaded in every pytest session of an environment where dpaudit is installed (the
``pytest11`` entry point), and does nothing unless a test uses the fixture: it imports the auditor
only then, and prints its summary only when some test audited.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from .results import result_path
from .settings import MARKER, Settings, add_options, audit_options, check_options
from .summary import PROPERTY, AuditLog, record

if TYPE_CHECKING:
    from dpaudit.auditor import AuditResult

__all__ = ["dpaudit_audit"]

_SETTINGS = pytest.StashKey[Settings]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
    check_options(config)
    config.pluginmanager.register(AuditLog(), "dpaudit-audit-log")


def _settings(config: pytest.Config) -> Settings:
    """The session's settings, read when a test first audits (the cache directory is made then)."""
    if _SETTINGS not in config.stash:
        config.stash[_SETTINGS] = Settings.from_config(config)
    return config.stash[_SETTINGS]


@pytest.fixture
def dpaudit_audit(request: pytest.FixtureRequest) -> Callable[..., AuditResult]:
    """Audit a mechanism in this test: ``dpaudit_audit(mechanism, **options) -> AuditResult``.

    Parameters
    ----------
    mechanism : anything [`dpaudit.audit`][dpaudit.auditor.audit] accepts.
    options : keywords of [`dpaudit.audit`][dpaudit.auditor.audit], over the test's ``dpaudit``
        markers and the command line; ``inconclusive=`` ("skip", "fail", "warn") overrides
        ``--dpaudit-inconclusive`` for this call.
    """
    # Imported here, not at the top: pytest loads this plugin in every session, and the auditor
    # (numpy, scipy, DuckDB ...) is needed only by the tests that audit.
    from .run import audit_once, judge

    node = request.node
    settings = _settings(request.config)
    count = 0

    def audit(mechanism: Any, **given: Any) -> AuditResult:
        __tracebackhide__ = True  # a failure points at the test's line
        nonlocal count
        options, mode = audit_options(settings, node, given)
        file = (
            None if settings.results is None else result_path(settings.results, node.nodeid, count)
        )
        count += 1
        done = audit_once(mechanism, options, settings, file)
        node.user_properties.append((PROPERTY, record(node.nodeid, done)))
        return judge(done, mode)

    return audit
