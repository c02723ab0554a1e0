"""dpaudit: verify and audit differentially private top-k selection.

* :mod:`dpaudit.exact` — exact (mpmath) output laws, privacy profiles and
  exhaustive verification on tiny domains;
* :mod:`dpaudit.neighbours` — neighbouring-histogram relations and pairs;
* the empirical auditor and the catalog of broken mechanisms arrive in
  :mod:`dpaudit.audit` and :mod:`dpaudit.catalog`.
"""

from . import exact

__all__ = ["exact"]
