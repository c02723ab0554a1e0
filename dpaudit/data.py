"""Real histograms: per-item distinct-user counts of the shared user–item data sets.

The data live OUTSIDE the repository (their terms forbid redistribution): by default in
``../shared/data/NAME/pairs.tsv.gz`` relative to the repository root, or under the
directory named by the environment variable ``DPAUDIT_DATA``. Each file is a gzipped TSV
with header ``user<TAB>item``, one user–item interaction per row.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np

__all__ = [
    "ItemHistogram",
    "available_datasets",
    "data_dir",
    "data_path",
    "load_histogram",
    "load_log_histogram",
    "load_pairs",
    "load_top_counts",
]

_ENV = "DPAUDIT_DATA"


def data_dir() -> Path:
    """``$DPAUDIT_DATA`` if set, else ``<repo>/../shared/data``."""
    env = os.environ.get(_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def data_path(name: str) -> Path:
    """Path of ``NAME/pairs.tsv.gz``; ``FileNotFoundError`` naming the place looked in."""
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ValueError(f"name must be a data set folder name like 'gowalla', got {name!r}")
    path = data_dir() / name / "pairs.tsv.gz"
    if not path.is_file():
        known = ", ".join(available_datasets()) or "none"
        raise FileNotFoundError(
            f"no data set {name!r}: {path} does not exist (set {_ENV} to the folder holding "
            f"NAME/pairs.tsv.gz; found: {known})"
        )
    return path


def available_datasets() -> list[str]:
    """Names of the folders under [`data_dir`][dpaudit.data.data_dir] that hold a ``pairs.tsv.gz``."""
    root = data_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "pairs.tsv.gz").is_file())


def load_pairs(name: str) -> np.ndarray:
    """The distinct ``(user, item)`` rows of data set ``name`` as an int64 ``(n, 2)`` array."""
    with gzip.open(data_path(name), "rb") as handle:
        header = handle.readline().split()
        if [h.lower() for h in header] != [b"user", b"item"]:
            raise ValueError(f"{name}: expected header 'user<TAB>item', got {header!r}")
        values = np.array(handle.read().split(), dtype=np.int64)
    if values.size % 2:
        raise ValueError(f"{name}: a row does not have exactly two fields")
    pairs = values.reshape(-1, 2)
    return np.unique(pairs, axis=0)  # one count per distinct user–item pair


def load_histogram(name: str) -> np.ndarray:
    """Per-item distinct-user counts of data set ``name`` (item ids relabelled 0..d−1 in
    order of their original ids), as a 1-D int64 histogram."""
    pairs = load_pairs(name)
    _, item_index = np.unique(pairs[:, 1], return_inverse=True)
    return np.bincount(item_index.ravel()).astype(np.int64)


def load_top_counts(name: str, size: int):
    """The top ``size`` items of data set ``name`` as a [`mechanisms.TopCounts`][mechanisms.TopCounts], by SQL.

    What a production database returns to a restricted-domain mechanism (seed 003
    Alg. 1 needs only the top k̄+1 counts): DuckDB groups the file and keeps
    ``ORDER BY count DESC, item LIMIT size`` without a histogram ever reaching Python.
    Item ids are relabelled exactly as [`load_histogram`][dpaudit.data.load_histogram] does (dense
    rank of the original id), so the result equals ``top_counts(load_histogram(name), size)``.
    """
    from mechanisms import TopCounts
    from mechanisms.validation import require_positive_int

    size = require_positive_int("size", size)
    import duckdb  # imported on first use: it adds about 0.1 s to every start-up otherwise

    query = """
        WITH pairs AS (
            SELECT DISTINCT "user", item
            FROM read_csv(?, delim = '\t', header = true,
                          columns = {'user': 'BIGINT', 'item': 'BIGINT'})
        ),
        per_item AS (
            SELECT DENSE_RANK() OVER (ORDER BY item) - 1 AS item_id, COUNT(*) AS users
            FROM pairs GROUP BY item
        )
        SELECT item_id, users, (SELECT COUNT(*) FROM per_item) AS d
        FROM per_item ORDER BY users DESC, item_id LIMIT ?
    """
    with duckdb.connect() as connection:
        rows = connection.execute(query, [str(data_path(name)), size]).fetchall()
    items = np.array([r[0] for r in rows], dtype=np.int64)
    counts = np.array([r[1] for r in rows], dtype=np.int64)
    return TopCounts(items, counts, int(rows[0][2]) if rows else 0)


class ItemHistogram:
    """A histogram read from a log, with the item each position stands for.

    ``counts[i]`` is the number of distinct users of item ``names[i]``; items are in the
    order of their names (so ids are stable across runs).
    """

    def __init__(self, counts: np.ndarray, names: list):
        self.counts = counts
        self.names = names

    def __len__(self) -> int:
        return int(self.counts.size)


def _reader(path: Path) -> str:
    suffixes = "".join(path.suffixes).lower()
    if suffixes.endswith(".parquet"):
        return "read_parquet(?)"
    delimiter = "\t" if ".tsv" in suffixes or ".tab" in suffixes else ","
    return f"read_csv(?, delim = '{delimiter}', header = true, all_varchar = true)"


def load_log_histogram(source: str, user_column: str = "user", item_column: str = "item"):
    """Per-item distinct-user counts of a log, with item names, read by DuckDB.

    ``source`` is a shared data set name (``gowalla``, ``lastfm``, ...:
    [`data_path`][dpaudit.data.data_path]) or the path of a CSV, TSV (gzipped or not) or Parquet
    file with a user and an item column. Raises ``ValueError`` (missing columns, empty log,
    unreadable file) and ``FileNotFoundError`` with one-line messages.
    """
    import duckdb  # imported on first use: it adds about 0.1 s to every start-up otherwise

    path = Path(source)
    if not path.is_file():
        if "/" in source or "." in path.name:
            raise FileNotFoundError(f"no file {source!r}")
        path = data_path(source)
    reader = _reader(path)
    with duckdb.connect() as connection:
        try:
            columns = [
                row[0]
                for row in connection.execute(
                    f"DESCRIBE SELECT * FROM {reader}", [str(path)]
                ).fetchall()
            ]
        except duckdb.Error as error:
            raise ValueError(f"cannot read {str(path)!r}: {str(error).splitlines()[0]}") from None
        missing = [c for c in (user_column, item_column) if c not in columns]
        if missing:
            raise ValueError(
                f"{str(path)!r} has no column {', '.join(map(repr, missing))} "
                f"(columns: {', '.join(columns)}); use --user-column/--item-column"
            )
        rows = connection.execute(
            f'SELECT CAST("{item_column}" AS VARCHAR) AS item, COUNT(DISTINCT "{user_column}") '
            f'FROM {reader} WHERE "{item_column}" IS NOT NULL AND "{user_column}" IS NOT NULL '
            f"GROUP BY 1 ORDER BY 1",
            [str(path)],
        ).fetchall()
    if not rows:
        raise ValueError(f"{str(path)!r} holds no user–item rows")
    names = [r[0] for r in rows]
    return ItemHistogram(np.array([r[1] for r in rows], dtype=np.int64), names)
