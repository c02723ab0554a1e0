"""Start-up of the command line: import times and the wall time of ``python -m dpaudit``.

Prints, in one run and on the same machine state:

1. the cumulative import time (``python -X importtime``, median of ``RUNS`` fresh
   interpreters) of ``numpy`` (the floor any numerical tool pays), of ``dpaudit.cli`` and
   of ``mechanisms`` (paid once a mechanism is named), and the heavy modules that
   ``import dpaudit.cli`` loaded (there should be none);
2. the wall time (median of ``RUNS``) of ``python -m dpaudit --version``, ``--help``,
   ``audit --help``, a usage error (``audit --samples 0``), and a usage error that names a
   mechanism (``audit GumbelTopKK``: imports ``mechanisms``), next to
   ``python -c "import numpy"`` and ``python -c pass``.

The goal (issue 24): ``--version``, ``--help`` and usage errors under 0.5 s on an idle
2-core machine. Timings on a shared machine are noisy: compare rows of one run.

    python benchmarks/bench_startup.py [RUNS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 7

#: Modules that must not be imported by ``import dpaudit.cli``.
HEAVY = ("statsmodels", "pandas", "scipy", "matplotlib", "tqdm", "dask", "duckdb", "mpmath")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))


def import_seconds(module: str) -> float:
    """Cumulative import time of ``module`` in a fresh interpreter (``-X importtime``)."""
    process = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    for line in reversed(process.stderr.splitlines()):
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1]) / 1e6
    raise RuntimeError(f"no import time for {module}")


def heavy_modules_of(module: str) -> list[str]:
    code = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=ENV, check=True
    ).stdout.split()
    return sorted({m.split(".")[0] for m in loaded if m.split(".")[0] in HEAVY})


def wall_seconds(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, capture_output=True, env=ENV, check=False)
    return time.perf_counter() - started


def median(function, *args) -> float:
    return statistics.median(function(*args) for _ in range(RUNS))


def main() -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load:.2f}, "
        f"median of {RUNS} runs"
    )
    print()
    print(f"{'import (python -X importtime)':<44}{'seconds':>9}")
    for module in ("numpy", "dpaudit.cli", "mechanisms"):
        print(f"{module:<44}{median(import_seconds, module):>9.3f}")
    heavy = heavy_modules_of("dpaudit.cli")
    print(f"heavy modules loaded by `import dpaudit.cli`: {', '.join(heavy) or 'none'}")
    print()
    print(f"{'wall time of':<44}{'seconds':>9}")
    python = [sys.executable]
    rows = [
        ("python -c pass", [*python, "-c", "pass"]),
        ('python -c "import numpy"', [*python, "-c", "import numpy"]),
        ("python -m dpaudit --version", [*python, "-m", "dpaudit", "--version"]),
        ("python -m dpaudit --help", [*python, "-m", "dpaudit", "--help"]),
        ("python -m dpaudit audit --help", [*python, "-m", "dpaudit", "audit", "--help"]),
        (
            "python -m dpaudit audit --samples 0",
            [*python, "-m", "dpaudit", "audit", "--samples", "0"],
        ),
        ("python -m dpaudit audit GumbelTopKK", [*python, "-m", "dpaudit", "audit", "GumbelTopKK"]),
    ]
    for label, argv in rows:
        print(f"{label:<44}{median(wall_seconds, argv):>9.3f}")


if __name__ == "__main__":
    main()
