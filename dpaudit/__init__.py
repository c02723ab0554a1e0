"""dpaudit: verify and audit differentially private top-k selection.

* :mod:`dpaudit.exact` — exact (mpmath) output laws, privacy profiles and
  exhaustive verification on tiny domains;
* :mod:`dpaudit.neighbours` — neighbouring-histogram relations, pair families, searches;
* :mod:`dpaudit.auditor` — the empirical auditor; its entry point is re-exported
  here as the function ``dpaudit.audit(mech, ...) -> AuditResult``;
* :mod:`dpaudit.catalog` — deliberately broken mechanisms the auditor must catch;
* :mod:`dpaudit.corpus` — real, documented bugs rebuilt from public trackers and papers;
* :mod:`dpaudit.metrics`, :mod:`dpaudit.report`, :mod:`dpaudit.testing`, :mod:`dpaudit.data`.
"""

from . import auditor, exact, neighbours
from .auditor import AuditResult, audit, audit_session, batched
from .recheck import recheck

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
