"""The plugin's cache of verdicts: an audit of unchanged code with unchanged options is not run
again.

The key is the SHA-256 of the mechanism's code and setting
([`fingerprint`][dpaudit.pytest_plugin.fingerprint]), the audit's options and the versions of
dpaudit and its numerical libraries ([`dpaudit.provenance.versions`][dpaudit.provenance.versions]);
the entry is the result's ``to_dict()``, read back with
[`AuditResult.from_dict`][dpaudit.auditor.AuditResult.from_dict].
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from dpaudit.auditor import AuditResult
from dpaudit.provenance import versions

from .fingerprint import canonical, code_digest
from .results import write_json

__all__ = ["KEY_FORMAT", "VerdictCache", "cache_key"]

#: Bumped when what goes into a key changes, so old entries are not read.
KEY_FORMAT = 1


def cache_key(mechanism, options: dict) -> str | None:
    """The cache key of auditing ``mechanism`` with ``options``; None when its code cannot be read
    (then the audit is run and not cached).

    Parameters
    ----------
    mechanism : anything [`dpaudit.audit`][dpaudit.auditor.audit] accepts.
    options : the keywords the audit is run with.
    """
    parts = {
        "format": KEY_FORMAT,
        "code": code_digest(mechanism),
        "setting": canonical(mechanism),
        "options": canonical(options),
        "versions": versions(),
    }
    if any(value is None for value in parts.values()):
        return None
    blob = canonical(parts)
    return None if blob is None else hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class VerdictCache:
    """One JSON file per key in ``directory``.

    Parameters
    ----------
    directory : ``--dpaudit-cache-dir``, or ``dpaudit/`` in pytest's cache.
    """

    directory: Path

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> AuditResult | None:
        """The cached result of ``key``; None when absent or unreadable (then audited again)."""
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
            if entry.get("key") != key:
                return None
            return AuditResult.from_dict(entry["result"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, key: str, result: AuditResult) -> None:
        """Cache ``result`` under ``key``."""
        write_json(self._path(key), {"key": key, "result": result.to_dict()})
