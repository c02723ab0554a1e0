"""Reading outcome files (CSV, JSON lines, Parquet) into validated batches."""

from __future__ import annotations

import csv
import json
import os
import re

import numpy as np

from mechanisms import PAD, MixedBatch

from ..sources.blackbox import validate_batch
from .files import _INTEGER, _INTEGER_TYPES, _duckdb, _first_line, _sql_path
from .plan import OfflineInputError


def _read_mixed(path, width, value_width, domain_size, connection) -> MixedBatch:
    """A file of a plan with values: item columns o*, value columns v* (or JSON lines)."""
    ext = path.rsplit(".", 1)[-1].lower()
    if ext == "jsonl":
        mixed = _read_mixed_jsonl(path, width, value_width)
    else:
        mixed = _read_mixed_table(path, ext, width, value_width, connection)
    try:
        validate_batch(mixed.items, domain_size=domain_size, name=path)
    except ValueError as error:
        raise OfflineInputError(
            str(error).replace(" returned the outcome", ": the outcome")
        ) from None
    return mixed


def _read_mixed_jsonl(path, width, value_width) -> MixedBatch:
    """JSON lines ``{"items": [...], "values": [...]}``."""
    items, values = [], []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                ids, vals = row["items"], row["values"]
                if not (
                    isinstance(ids, list)
                    and all(isinstance(v, int) and not isinstance(v, bool) for v in ids)
                ):
                    raise TypeError
                if not (
                    isinstance(vals, list)
                    and len(vals) == value_width
                    and all(
                        v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                        for v in vals
                    )
                ):
                    raise TypeError
            except (json.JSONDecodeError, KeyError, TypeError):
                raise OfflineInputError(
                    f'{path}: line {number}: {line.strip()[:60]!r} is not {{"items": [integer '
                    f'ids], "values": [{value_width} numbers or null]}}'
                ) from None
            if len(ids) > width:
                raise OfflineInputError(f"{path}: line {number} holds more than {width} items")
            items.append(ids + [PAD] * (width - len(ids)))
            values.append([np.nan if v is None else float(v) for v in vals])
    return MixedBatch(
        np.array(items, dtype=np.int64).reshape(len(items), width),
        np.array(values, dtype=np.float64).reshape(len(values), value_width),
    )


def _read_mixed_table(path, ext, width, value_width, connection) -> MixedBatch:
    """CSV or Parquet columns ``o0..`` (item ids) then ``v0..`` (numbers), read by DuckDB."""
    source = (
        f"read_csv('{_sql_path(path)}', header=true, delim=',', all_varchar=true)"
        if ext == "csv"
        else f"read_parquet('{_sql_path(path)}')"
    )
    try:
        names = [
            row[0] for row in connection.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        ]
        want = [f"o{j}" for j in range(width)] + [f"v{j}" for j in range(value_width)]
        if names != want:
            raise OfflineInputError(
                f"{path}: columns {names}; this plan's files have columns {want}"
            )
        casts = [
            f"COALESCE(TRY_CAST(NULLIF(trim(CAST({n} AS VARCHAR)), '') AS BIGINT), {PAD})"
            for n in want[:width]
        ]
        casts += [
            f"TRY_CAST(NULLIF(trim(CAST({n} AS VARCHAR)), '') AS DOUBLE)" for n in want[width:]
        ]
        # Integers by pattern (a cast would round '1.5'), numbers by a cast ('nan' is NaN).
        text = [f"trim(coalesce(CAST({n} AS VARCHAR), ''))" for n in want]
        checks = [f"NOT regexp_full_match({t}, '({_INTEGER})?')" for t in text[:width]]
        checks += [f"({t} <> '' AND {c} IS NULL)" for t, c in zip(text[width:], casts[width:])]
        bad = connection.execute(
            f"SELECT count(*) FROM {source} WHERE {' OR '.join(checks) or 'false'}"
        ).fetchone()[0]
        if bad:
            raise OfflineInputError(
                f"{path}: {bad} rows hold an item id that is not an "
                "integer or a value that is not a number"
            )
        found = connection.execute(
            f"SELECT {', '.join(f'{c} AS c{j}' for j, c in enumerate(casts))} FROM {source}"
        ).fetchnumpy()
    except OfflineInputError:
        raise
    except _duckdb().Error as error:  # duckdb.Error: unreadable file, ragged rows
        raise OfflineInputError(f"{path}: {_first_line(error)}") from None
    n = len(found["c0"]) if found else 0
    items = (
        np.column_stack([np.asarray(found[f"c{j}"], dtype=np.int64) for j in range(width)])
        if width
        else np.zeros((n, 0), dtype=np.int64)
    )
    # DuckDB returns NULLs (empty cells) as masked entries: those are missing values.
    values = np.column_stack(
        [
            np.ma.filled(np.ma.asarray(found[f"c{width + j}"], dtype=np.float64), np.nan)
            for j in range(value_width)
        ]
    )
    return MixedBatch(items, values)


def _read_csv(path, connection) -> np.ndarray:
    with open(path, encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle), None)
    if not header:
        raise OfflineInputError(f"{path} is empty (a CSV outcome file starts with a header row)")
    cells = [h.strip() for h in header if h.strip()]
    if cells and all(re.fullmatch(_INTEGER, h) for h in cells):
        raise OfflineInputError(
            f"{path}: the first line {','.join(header)!r} looks like an "
            "outcome; a CSV outcome file starts with a header row (o0,o1,...)"
        )
    names = [f"c{j}" for j in range(len(header))]
    columns = ", ".join(f"{n}: 'VARCHAR'" for n in names)
    source = (
        f"read_csv('{_sql_path(path)}', header=true, delim=',', quote='\"', "
        f"null_padding=true, auto_detect=false, "
        f"columns={{{columns}}})"
    )
    # Read the file once into a temporary table; integers are checked by a pattern because
    # a cast would round '1.5' and accept '1e3'.
    not_integer = " OR ".join(
        f"(NOT regexp_full_match(coalesce(trim({n}), ''), '({_INTEGER})?'))" for n in names
    )
    try:
        # DuckDB skips blank lines of a file of several columns but reads them as NULL in a
        # file of one column: skip them there too (an empty outcome is written -2, or ",,").
        blank = f" WHERE trim(coalesce({names[0]}, '')) <> ''" if len(names) == 1 else ""
        connection.execute(
            f"CREATE OR REPLACE TEMP TABLE outcome_rows AS SELECT "
            f"row_number() OVER () AS r, * FROM {source}{blank}"
        )
        bad = connection.execute(
            f"SELECT r, {', '.join(names)} FROM outcome_rows WHERE {not_integer} ORDER BY r LIMIT 1"
        ).fetchall()
        if bad:
            value = next(
                v
                for v in bad[0][1:]
                if v is not None and not re.fullmatch(f"({_INTEGER})?", v.strip())
            )
            raise OfflineInputError(
                f"{path}: row {bad[0][0]}: {value!r} is not an integer item id (floats are not "
                "truncated; real-valued outputs are not supported)"
            )
        casts = ", ".join(
            f"COALESCE(CAST(NULLIF(trim({n}), '') AS BIGINT), {PAD}) AS {n}" for n in names
        )
        found = connection.execute(f"SELECT {casts} FROM outcome_rows ORDER BY r").fetchnumpy()
    except OfflineInputError:
        raise
    except _duckdb().Error as error:  # duckdb.Error: ragged rows, bad quoting, unreadable file
        raise OfflineInputError(f"{path}: {_first_line(error)}") from None
    finally:
        connection.execute("DROP TABLE IF EXISTS outcome_rows")
    return np.column_stack([np.asarray(found[n], dtype=np.int64) for n in names])


def _read_parquet(path, connection) -> np.ndarray:
    source = f"read_parquet('{_sql_path(path)}')"
    try:
        described = connection.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        names = [row[0] for row in described]
        types = [str(row[1]).upper() for row in described]
        quoted = ['"' + n.replace('"', '""') + '"' for n in names]
        if len(names) == 1 and types[0].endswith("[]"):
            if types[0][:-2] not in _INTEGER_TYPES:
                raise OfflineInputError(
                    f"{path}: column {names[0]!r} holds {types[0]}, not lists of integer item ids"
                )
            longest = connection.execute(f"SELECT max(len({quoted[0]})) FROM {source}").fetchone()[
                0
            ]
            longest = int(longest or 0)
            cells = ", ".join(
                f"COALESCE({quoted[0]}[{j + 1}], {PAD}) AS c{j}" for j in range(max(longest, 1))
            )
            found = connection.execute(f"SELECT {cells} FROM {source}").fetchnumpy()
            return np.column_stack(
                [np.asarray(found[f"c{j}"], dtype=np.int64) for j in range(max(longest, 1))]
            )
        for name, kind in zip(names, types):
            if kind not in _INTEGER_TYPES:
                raise OfflineInputError(
                    f"{path}: column {name!r} holds {kind}, not integer item ids (floats are not "
                    "truncated; real-valued outputs are not supported)"
                )
        cells = ", ".join(f"COALESCE({q}, {PAD}) AS c{j}" for j, q in enumerate(quoted))
        found = connection.execute(f"SELECT {cells} FROM {source}").fetchnumpy()
    except OfflineInputError:
        raise
    except _duckdb().Error as error:  # duckdb.Error: not a Parquet file, unreadable
        raise OfflineInputError(f"{path}: {_first_line(error)}") from None
    return np.column_stack([np.asarray(found[f"c{j}"], dtype=np.int64) for j in range(len(names))])


def _read_jsonl(path) -> np.ndarray:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise OfflineInputError(f"{path}: line {number}: not JSON ({error.msg})") from None
            if isinstance(value, dict):
                value = value.get("outcome")
            if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value
            ):
                raise OfflineInputError(
                    f"{path}: line {number}: {line.strip()[:60]!r} is not a list of integer item "
                    "ids (floats are not truncated; real-valued outputs are not supported)"
                )
            rows.append(value)
    width = max((len(r) for r in rows), default=0)
    batch = np.full((len(rows), max(width, 1)), PAD, dtype=np.int64)
    for i, row in enumerate(rows):
        batch[i, : len(row)] = row
    return batch


def read_outcomes(path, *, width: int, domain_size: int, connection=None, values: int = 0):
    """The outcomes of one file as a PAD-padded int64 ``(n, width)`` batch, validated.

    CSV and Parquet are read with DuckDB, JSON lines with ``json``; every row is checked
    by [`blackbox.validate_batch`][dpaudit.auditor.sources.blackbox.validate_batch] (ids in
    ``[0, domain_size)``, no id twice, ⊥ last). With ``values > 0`` the file carries real values too
    and a [`MixedBatch`][mechanisms.MixedBatch] is returned.
    """
    path = os.fspath(path)
    ext = path.rsplit(".", 1)[-1].lower()
    if values:
        if connection is None and ext != "jsonl":
            connection = _duckdb().connect()
        return _read_mixed(path, int(width), int(values), domain_size, connection)
    if ext == "jsonl":
        batch = _read_jsonl(path)
    else:
        if connection is None:
            connection = _duckdb().connect()
        batch = _read_csv(path, connection) if ext == "csv" else _read_parquet(path, connection)
    if batch.shape[1] > width:
        if (batch[:, width:] != PAD).any():
            row = int(np.flatnonzero((batch[:, width:] != PAD).any(axis=1))[0])
            raise OfflineInputError(
                f"{path}: row {row + 1} holds an outcome longer than the plan's width {width}"
            )
        batch = batch[:, :width]
    elif batch.shape[1] < width:
        batch = np.hstack(
            [batch, np.full((batch.shape[0], width - batch.shape[1]), PAD, dtype=np.int64)]
        )
    try:
        return validate_batch(batch, domain_size=domain_size, name=path)
    except ValueError as error:
        message = str(error).replace(" returned the outcome", ": the outcome")
        raise OfflineInputError(message) from None
