"""The plugin's command-line options and the audit options of one test, merged in one place.

Precedence, lowest first: the command line (``--dpaudit-alpha``, ``--dpaudit-budget``), the
test's ``@pytest.mark.dpaudit(...)`` markers (the closest last), the keywords of the
``dpaudit_audit(...)`` call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = [
    "INCONCLUSIVE_MODES",
    "MARKER",
    "Settings",
    "add_options",
    "audit_options",
    "check_options",
]

#: What an INCONCLUSIVE audit does to its test (``--dpaudit-inconclusive``); the first is the default.
INCONCLUSIVE_MODES = ("skip", "fail", "warn")

#: The marker's line in ``pytest --markers``.
MARKER = (
    "dpaudit(**options): audit options (budget=, samples=, alpha=, seed=, claim=, pairs=, "
    "inconclusive=, ... of dpaudit.audit) for the dpaudit_audit fixture of this test"
)

#: The false-alarm probability of one audit when neither the command line nor the test sets it.
DEFAULT_ALPHA = 1e-6


@dataclass(frozen=True)
class Settings:
    """The session's plugin settings, from the command line.

    Parameters
    ----------
    alpha : false-alarm probability of each audit (``--dpaudit-alpha``).
    budget : samples or seconds of each audit that gives neither ``samples`` nor ``budget``
        (``--dpaudit-budget``; None: ``dpaudit.testing.assert_private``'s default).
    inconclusive : what an INCONCLUSIVE verdict does, one of ``INCONCLUSIVE_MODES``.
    results : directory for each audit's result JSON (``--dpaudit-results``), or None.
    cache : directory of cached verdicts, or None for no cache.
    """

    alpha: float = DEFAULT_ALPHA
    budget: str | None = None
    inconclusive: str = INCONCLUSIVE_MODES[0]
    results: Path | None = None
    cache: Path | None = None

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        """The settings of ``config``'s command line (the cache under pytest's own by default)."""
        results = config.getoption("dpaudit_results")
        return cls(
            alpha=config.getoption("dpaudit_alpha"),
            budget=config.getoption("dpaudit_budget"),
            inconclusive=config.getoption("dpaudit_inconclusive"),
            results=None if results is None else Path(results),
            cache=_cache_dir(config),
        )


def _cache_dir(config: pytest.Config) -> Path | None:
    """``--dpaudit-cache-dir``, else ``dpaudit/`` in pytest's cache (None: no cache)."""
    if config.getoption("dpaudit_no_cache"):
        return None
    given = config.getoption("dpaudit_cache_dir")
    if given is not None:
        return Path(given)
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    return None if cache is None else Path(cache.mkdir("dpaudit"))


def check_options(config: pytest.Config) -> None:
    """Refuse a ``--dpaudit-alpha`` outside (0, 1) before any test runs."""
    alpha = config.getoption("dpaudit_alpha")
    if not (math.isfinite(alpha) and 0.0 < alpha < 1.0):
        raise pytest.UsageError(f"--dpaudit-alpha must be in (0, 1), got {alpha!r}")


def add_options(parser: pytest.Parser) -> None:
    """Register the ``--dpaudit-*`` options."""
    group = parser.getgroup("dpaudit", "dpaudit privacy audits (the dpaudit_audit fixture)")
    group.addoption(
        "--dpaudit-alpha",
        type=float,
        default=DEFAULT_ALPHA,
        help="false-alarm probability of each audit: a correct mechanism fails its test with "
        "at most this probability (default %(default)g)",
    )
    group.addoption(
        "--dpaudit-budget",
        default=None,
        metavar="BUDGET",
        help="samples (200000, 2e5) or seconds (60s) of each audit that sets neither samples "
        "nor budget (default: dpaudit.testing.assert_private's samples)",
    )
    group.addoption(
        "--dpaudit-inconclusive",
        choices=INCONCLUSIVE_MODES,
        default=INCONCLUSIVE_MODES[0],
        help="what an INCONCLUSIVE audit does to its test (default %(default)s)",
    )
    group.addoption(
        "--dpaudit-results",
        default=None,
        metavar="DIR",
        help="write each audit's result JSON here (check one with: dpaudit recheck FILE)",
    )
    group.addoption(
        "--dpaudit-cache-dir",
        default=None,
        metavar="DIR",
        help="cache of verdicts, keyed by the mechanism's code, the audit options and the "
        "versions (default: dpaudit/ in pytest's cache; pytest --cache-clear empties it)",
    )
    group.addoption(
        "--dpaudit-no-cache",
        action="store_true",
        default=False,
        help="audit every mechanism again, reading and writing no cached verdict",
    )


def audit_options(settings: Settings, node: pytest.Item, given: dict) -> tuple[dict, str]:
    """``(keywords for assert_private, inconclusive mode)`` of one ``dpaudit_audit`` call.

    Parameters
    ----------
    settings : the session's settings (the command line).
    node : the test; its ``dpaudit`` markers' keywords override the command line.
    given : the call's keywords, which override the markers.
    """
    options: dict = {"alpha": settings.alpha}
    for marker in reversed(list(node.iter_markers("dpaudit"))):  # the closest last
        if marker.args:
            raise pytest.UsageError(
                f"{node.nodeid}: @pytest.mark.dpaudit takes keywords only "
                f"(budget=..., alpha=...), got positional {marker.args!r}"
            )
        options.update(marker.kwargs)
    options.update(given)
    if "samples" not in options and "budget" not in options and settings.budget is not None:
        options["budget"] = settings.budget
    mode = options.pop("inconclusive", settings.inconclusive)
    if mode not in INCONCLUSIVE_MODES:
        raise pytest.UsageError(
            f"{node.nodeid}: inconclusive= must be one of {', '.join(INCONCLUSIVE_MODES)}, "
            f"got {mode!r}"
        )
    return options, mode
