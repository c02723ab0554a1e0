"""dpaudit: verify and audit differentially private top-k selection.

* [`dpaudit.exact`][dpaudit.exact] — exact (mpmath) output laws, privacy profiles and
  exhaustive verification on tiny domains;
* [`dpaudit.neighbours`][dpaudit.neighbours] — neighbouring-histogram relations, pair families,
  searches;
* [`dpaudit.auditor`][dpaudit.auditor] — the empirical auditor; its entry point is re-exported
  here as the function ``dpaudit.audit(mech, ...) -> AuditResult``;
* [`dpaudit.catalog`][dpaudit.catalog] — deliberately broken mechanisms the auditor must catch;
* ``dpaudit.corpus`` — real, documented bugs rebuilt from public trackers and papers;
* [`dpaudit.metrics`][dpaudit.metrics], [`dpaudit.report`][dpaudit.report],
  [`dpaudit.testing`][dpaudit.testing], [`dpaudit.data`][dpaudit.data].

The names below are loaded on first use (PEP 562): ``import dpaudit`` and the command
line's start-up import nothing heavy; ``dpaudit.audit`` imports the auditor when it is
first read.
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = [
    "AuditResult",
    "audit",
    "audit_session",
    "auditor",
    "batched",
    "exact",
    "neighbours",
    "recheck",
]

#: Where each public name lives: (module, attribute or None for the module itself).
_LAZY = {
    "auditor": ("dpaudit.auditor", None),
    "exact": ("dpaudit.exact", None),
    "neighbours": ("dpaudit.neighbours", None),
    "AuditResult": ("dpaudit.auditor", "AuditResult"),
    "audit": ("dpaudit.auditor", "audit"),
    "audit_session": ("dpaudit.auditor", "audit_session"),
    "batched": ("dpaudit.auditor", "batched"),
    "recheck": ("dpaudit.recheck", "recheck"),
}


def __getattr__(name: str):
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'dpaudit' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value  # the next access is a plain attribute read
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """``dpaudit.recheck`` is the function, as when it was imported eagerly.

    Loading the submodule ``dpaudit.recheck`` binds it on the package under the same name;
    that binding is skipped, so the name keeps meaning the function (the submodule stays
    importable: ``from dpaudit.recheck import RecheckResult``).
    """

    def __setattr__(self, name, value):
        if name == "recheck" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
