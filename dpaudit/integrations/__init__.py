"""Real DP libraries wrapped as dpaudit black boxes, audited through their public API only.

* [`dpaudit.integrations.opendp`][dpaudit.integrations.opendp] — OpenDP's ``make_noisy_top_k`` and
  ``make_noisy_max`` (and its deprecated alias ``make_report_noisy_max_gumbel``);
* [`dpaudit.integrations.diffprivlib`][dpaudit.integrations.diffprivlib] — diffprivlib's
  ``mechanisms.Exponential``;
* [`dpaudit.integrations.pipelinedp`][dpaudit.integrations.pipelinedp] — PipelineDP's
  ``select_partitions`` and ``aggregate`` count (extra ``pipelinedp``, also part of ``.[test]``);
* [`dpaudit.integrations.python_dp`][dpaudit.integrations.python_dp] — python-dp's partition
  selection strategies (the same extra);
* [`dpaudit.integrations.smartnoise`][dpaudit.integrations.smartnoise] — SmartNoise SQL's
  ``GROUP BY`` count with ``censor_dims`` (an environment of its own: its ``opendp<0.15``
  pin conflicts with ``.[libraries]``).

Each adapter is a frozen dataclass with ``sample(counts, size, rng) -> (size, width)``
int64 and a ``claim`` read from the library itself (its privacy map or its ε
parameter), so ``dpaudit.audit(adapter)`` audits what the library promises. The
submodules import their library at import time; install OpenDP and diffprivlib with
``pip install -e ".[libraries]"`` (pinned versions, also part of ``.[test]``).
This package imports none of them, so ``import dpaudit`` never needs them.
"""

__all__: list[str] = []
