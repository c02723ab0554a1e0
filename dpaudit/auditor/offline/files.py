"""Outcome files: where they live, how they are written, which DuckDB reads them."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re

import numpy as np

from mechanisms import PAD, MixedBatch

from .plan import EXTENSIONS, SPLITS, OfflineInputError
from .reuse import find_reuse


def outcome_path(directory, histogram_id: str, split: str, ext: str = "csv") -> str:
    """``DIR/outcomes/<id>.<split>.<ext>``."""
    return os.path.join(os.fspath(directory), "outcomes", f"{histogram_id}.{split}.{ext}")


def write_outcomes(path, batch, connection=None) -> None:
    """Write a PAD-padded ``(n, width)`` batch as CSV, JSON lines or Parquet (by extension).

    A [`mechanisms.MixedBatch`][mechanisms.MixedBatch] (a system releasing real values) is written
    with its value columns (``OUTCOME_FORMAT``). ``connection``: a DuckDB connection to reuse
    for Parquet (one is opened if None).
    """
    if isinstance(batch, MixedBatch):
        _write_mixed(path, batch, connection)
        return
    batch = np.asarray(batch, dtype=np.int64)
    path = os.fspath(path)
    ext = path.rsplit(".", 1)[-1].lower()
    if ext == "jsonl":
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(
                json.dumps([v for v in row if v != PAD]) + "\n" for row in batch.tolist()
            )
        return
    if ext not in ("csv", "parquet"):
        raise ValueError(f"outcome files are .csv, .jsonl or .parquet, not {path!r}")
    csv_path = path if ext == "csv" else path + ".tmp.csv"
    text = np.where(batch == PAD, "", batch.astype(str))
    if text.shape[1]:
        text[(batch == PAD).all(axis=1), 0] = str(PAD)  # an empty outcome is not a blank line
    with open(csv_path, "w", encoding="utf-8") as handle:
        handle.write(",".join(f"o{j}" for j in range(batch.shape[1])) + "\n")
        handle.write("".join(",".join(row) + "\n" for row in text))
    if ext == "parquet":
        _csv_to_parquet(
            csv_path, path, {f"o{j}": "BIGINT" for j in range(batch.shape[1])}, connection
        )


def _csv_to_parquet(csv_path, path, types: dict, connection=None) -> None:
    """Convert the CSV just written to Parquet with DuckDB (column ``types``), then remove it."""
    columns = ", ".join(f"{name}: '{kind}'" for name, kind in types.items())
    own = connection is None
    connection = _duckdb().connect() if own else connection
    try:
        connection.execute(
            f"COPY (SELECT * FROM read_csv(?, header=true, delim=',', columns={{{columns}}})) "
            f"TO '{_sql_path(path)}' (FORMAT parquet)",
            [csv_path],
        )
    finally:
        if own:
            connection.close()
        os.remove(csv_path)


def _write_mixed(path, batch: MixedBatch, connection=None) -> None:
    path = os.fspath(path)
    ext = path.rsplit(".", 1)[-1].lower()
    if ext == "jsonl":
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(
                json.dumps(
                    {
                        "items": [v for v in items if v != PAD],
                        "values": [None if math.isnan(v) else v for v in values],
                    }
                )
                + "\n"
                for items, values in zip(batch.items.tolist(), batch.values.tolist())
            )
        return
    if ext not in ("csv", "parquet"):
        raise ValueError(f"outcome files are .csv, .jsonl or .parquet, not {path!r}")
    csv_path = path if ext == "csv" else path + ".tmp.csv"
    items = np.where(batch.items == PAD, "", batch.items.astype(str))
    values = np.where(np.isnan(batch.values), "", np.char.mod("%.17g", batch.values))
    names = [f"o{j}" for j in range(batch.width)] + [f"v{j}" for j in range(batch.value_width)]
    with open(csv_path, "w", encoding="utf-8") as handle:
        handle.write(",".join(names) + "\n")
        handle.write("".join(",".join(row) + "\n" for row in np.hstack([items, values])))
    if ext == "parquet":
        _csv_to_parquet(
            csv_path, path, {n: "BIGINT" if n[0] == "o" else "DOUBLE" for n in names}, connection
        )


def _duckdb():
    import duckdb  # imported on first use: it adds about 0.1 s to every start-up otherwise

    return duckdb


def _sql_path(path: str) -> str:
    return path.replace("'", "''")


_INTEGER = "[+-]?[0-9]+"
_INTEGER_TYPES = {
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
}


def _first_line(error) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _find_files(directory, plan):
    """``{(histogram id, split): path}``; a missing, doubled or unplanned file is an error."""
    folder = os.path.join(os.fspath(directory), "outcomes")
    present = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    wanted = {(h["id"], s) for h in plan["histograms"] for s in SPLITS}
    found, missing = {}, []
    for hid, split in sorted(wanted):
        names = [f"{hid}.{split}.{ext}" for ext in EXTENSIONS if f"{hid}.{split}.{ext}" in present]
        if not names:
            missing.append(f"outcomes/{hid}.{split}.csv")
        elif len(names) > 1:
            raise OfflineInputError(
                f"{folder}: {' and '.join(names)} both hold {hid}'s {split} split; keep one"
            )
        else:
            found[(hid, split)] = os.path.join(folder, names[0])
    if missing:
        raise OfflineInputError(
            f"missing outcome file {missing[0]} (or .jsonl/.parquet); "
            f"{len(missing)} of {len(wanted)} files are missing"
        )
    pattern = re.compile(r"(.+)\.(select|confirm)\.(csv|jsonl|parquet)$")
    for name in sorted(present):
        match = pattern.fullmatch(name)
        if match and (match.group(1), match.group(2)) not in wanted:
            raise OfflineInputError(
                f"{folder}/{name} is not in this plan (no histogram "
                f"{match.group(1)!r}); outcomes of another plan?"
            )
    return found


def file_sha256(path) -> str:
    """The SHA-256 hex digest of the file at ``path`` (an offline plan records its files' digests)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_reuse(batches: dict) -> None:
    """Refuse files that share rows beyond chance (copied, shifted or reused rows).

    The tests, and what they cannot see (a shuffled copy of integer outcomes), are those
    of [`dpaudit.auditor.offline.reuse`][dpaudit.auditor.offline.reuse].
    """
    found = find_reuse(batches)
    if found:
        raise OfflineInputError(
            found[0].describe(lambda key: f"outcomes/{key[0]}.{key[1]}")
            + ": every file must be drawn with fresh randomness (the confirm split "
            "independently of the select split), not copied or reused"
        )
