"""Loading the shared data sets: seconds and peak memory, and the top-(k̄+1) for k̄ = 100.

Run: ``python benchmarks/bench_data.py``. Each measurement runs in a fresh Python process,
so its peak resident memory (``ru_maxrss``) is its own. Routes, per data set:

* numpy   — ``dpaudit.data.load_histogram`` (gzip + numpy) then ``mechanisms.top_counts``;
* duckdb  — ``dpaudit.data.load_top_counts`` (SQL ORDER BY … LIMIT k̄+1, no histogram in Python);
* log     — ``dpaudit.data.load_log_histogram`` (DuckDB GROUP BY, what ``dpaudit select`` reads).

Both top-(k̄+1) routes must agree (checked).
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
from dpaudit import data
import mechanisms as M
name, route = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if route == "numpy":
    top = M.top_counts(data.load_histogram(name), 101)
    result = top.counts.tolist()
elif route == "duckdb":
    result = data.load_top_counts(name, 101).counts.tolist()
else:
    result = sorted(data.load_log_histogram(name).counts.tolist(), reverse=True)[:101]
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "top": result}))
"""


def main() -> None:
    from dpaudit import data

    names = data.available_datasets()
    if not names:
        sys.exit("no shared data sets found (../shared/data beside the checkout, or $DPAUDIT_DATA)")
    print(
        f"{'data set':<15}{'route':<8}{'seconds':>9}{'peak MB':>9}  top count, count at k̄+1 = 101"
    )
    for name in names:
        tops = {}
        for route in ("numpy", "duckdb", "log"):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, name, route],
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(out.stdout)
            tops[route] = row["top"]
            print(
                f"{name:<15}{route:<8}{row['seconds']:>9.2f}{row['peak_mb']:>9.0f}  "
                f"{row['top'][0]:,}, {row['top'][-1]:,}"
            )
        assert tops["numpy"] == tops["duckdb"] == tops["log"], f"{name}: routes disagree"


if __name__ == "__main__":
    main()
