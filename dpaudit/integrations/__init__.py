"""Real DP libraries wrapped as dpaudit black boxes, audited through their public API only.

* [`dpaudit.integrations.opendp`][dpaudit.integrations.opendp] — OpenDP's ``make_noisy_top_k`` and
  ``make_noisy_max`` (and its deprecated alias ``make_report_noisy_max_gumbel``);
* [`dpaudit.integrations.diffprivlib`][dpaudit.integrations.diffprivlib] — diffprivlib's
  ``mechanisms.Exponential``.

Each adapter is a frozen dataclass with ``sample(counts, size, rng) -> (size, width)``
int64 and a ``claim`` read from the library itself (its privacy map or its ε
parameter), so ``dpaudit.audit(adapter)`` audits what the library promises. The
submodules import their library at import time; install them with
``pip install -e ".[libraries]"`` (pinned versions, also part of ``.[test]``).
This package imports neither, so ``import dpaudit`` never needs them.
"""

__all__: list[str] = []
