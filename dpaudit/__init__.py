"""dpaudit: verify and audit differentially private top-k selection.

* :mod:`dpaudit.exact` — exact (mpmath) output laws, privacy profiles and
  exhaustive verification on tiny domains;
* :mod:`dpaudit.neighbours` — neighbouring-histogram relations, pair families, searches;
* :mod:`dpaudit.audit` — the empirical auditor; the package is itself callable:
  ``dpaudit.audit(mech, ...) -> AuditResult``;
* :mod:`dpaudit.catalog` — deliberately broken mechanisms the auditor must catch;
* :mod:`dpaudit.metrics`, :mod:`dpaudit.report`, :mod:`dpaudit.testing`, :mod:`dpaudit.data`.
"""

from . import (
    audit,  # callable package: dpaudit.audit(mech, ...)
    exact,
    neighbours,
)

__all__ = ["audit", "exact", "neighbours"]
