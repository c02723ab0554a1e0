"""How often offline audits refuse a confirm file shifted by one row from its select file.

    python benchmarks/bench_offline_reuse.py [RUNS]

For RUNS seeds: a plan of GumbelTopK(k=2, ε=1) (8 pairs, 20,000 samples) filled from the
mechanism; once as drawn (genuine) and once with the first histogram's confirm file
replaced by its select file moved up one row plus one fresh row. Prints how many of each
``audit_from_samples`` refuses (dpaudit.auditor.offline.reuse).
"""

import sys
import tempfile
from pathlib import Path

import mechanisms as M
from dpaudit.auditor.offline import (
    OfflineInputError,
    audit_from_samples,
    fill_outcomes,
    outcome_path,
    read_plan,
    write_plan,
)


def refused(directory) -> bool:
    try:
        audit_from_samples(directory)
    except OfflineInputError as error:
        return "shifted" in str(error) or "same rows" in str(error)
    return False


def main(runs: int) -> None:
    mech = M.GumbelTopK(k=2, epsilon=1.0)
    genuine = shifted = 0
    for seed in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            write_plan(folder, mech, samples=20_000, max_pairs=8, seed=seed)
            fill_outcomes(folder, mech)
            genuine += refused(folder)
            h = read_plan(folder)["histograms"][0]["id"]
            select, confirm = (Path(outcome_path(folder, h, s)) for s in ("select", "confirm"))
            rows = select.read_text().splitlines(True)
            fresh = confirm.read_text().splitlines(True)[-1]
            confirm.write_text("".join(rows[:1] + rows[2:] + [fresh]))
            shifted += refused(folder)
    print(
        f"genuine files refused: {genuine} of {runs}; shifted confirm refused: {shifted} of {runs}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
