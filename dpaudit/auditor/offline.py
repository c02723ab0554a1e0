"""Offline audits: a plan of histograms and sample sizes, outcome files, bounds from the files.

For systems that cannot be driven by the auditor (issue 12). The live audit
(:mod:`.runner`) is adaptive: screening picks pairs before selection and confirmation
draw, which needs round trips to the system. The offline audit is NON-adaptive:

1. :func:`write_plan` (``dpaudit plan``) fixes everything in advance: the claim, the
   relation, alpha, the candidate pairs (default families thinned to ``max_pairs``, or
   the user's ``counts``/``pairs``), every distinct histogram with an id, and for each
   histogram the number of outcomes wanted in each of two splits, ``select`` and
   ``confirm``. Files: ``DIR/plan.json``, ``DIR/histograms.csv``, ``DIR/README.txt``.
2. The user runs the system and writes ``DIR/outcomes/<id>.<split>.{csv,jsonl,parquet}``:
   one outcome per row, exactly the planned number of rows (:data:`OUTCOME_FORMAT`).
   :func:`fill_outcomes` does this with any dpaudit mechanism (tests, examples).
3. :func:`audit_from_samples` (``dpaudit audit --from-samples DIR``) validates the files,
   ranks the pairs with the screening scorer (:func:`.screening.screen_scores`,
   :func:`.screening.survivors`) and chooses events (:func:`.screening.choose_events`)
   on the ``select`` split ONLY, then bounds the chosen events on the ``confirm`` split
   (:func:`.confirmation.confirm_events`) with one-sided Clopper–Pearson intervals at
   ``alpha / (2 M)``, ``M`` the number of chosen events (Bonferroni).

Why the bounds are valid (hold together with probability >= 1 − alpha):

* every choice — the kept pairs, the events and their number ``M`` — is a function of
  the plan and the select split only; nothing is chosen from the confirm split;
* the sample sizes are fixed by the plan before anything is drawn (a file with more or
  fewer rows is refused), so there is no optional stopping;
* IF the confirm rows are drawn independently of the select rows (fresh randomness), then
  conditionally on the select split the confirm rows of histogram ``c`` are i.i.d. draws
  of the system on ``c``, independent of the choices; each of the ``2 M`` one-sided
  intervals then covers with probability >= 1 − alpha / (2 M) given the choices, and by
  the union bound all of them cover with probability >= 1 − alpha, given the select split
  and hence unconditionally (the proof of :mod:`.confirmation`, with the select split in
  the role of the screening and selection phases).

What the user must guarantee (the files cannot show it all):

* every row is one run of the system on exactly that histogram, with fresh randomness
  (no cached outputs, no seed shared between rows, files or splits);
* the confirm split is drawn independently of the select split: never copy, reuse,
  subsample or reorder select rows into the confirm files (or rows of one histogram into
  another's); identical files, or files sharing their first rows, beyond what chance
  explains are refused (:func:`_check_reuse`), but a shuffled copy cannot be detected;
* one set of outcome files per plan: drawing new files until the verdict changes voids
  the confidence (``r`` attempts: failure probability up to ``r · alpha``). ``plan.json``
  carries a digest of its content, and an edited plan is refused.

Trade-off: without round trips the confirm split is drawn for EVERY histogram but used
only for the ``keep`` pairs kept, so an offline audit of ``TOTAL`` samples confirms on
fewer samples than a live one (40 pairs, keep 2: about 4 histograms out of ~60).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import re
import time
from datetime import UTC, datetime
from types import SimpleNamespace

import numpy as np

from mechanisms import PAD, AddRemoveUser, BoundedChange, MixedBatch

from .blackbox import make_claim, validate_batch
from .confirmation import confirm_events, summarise
from .plan import AuditPlan
from .result import DEFAULT_POWER_FACTOR, AuditResult
from .sampling import DEFAULT_CHUNK, count_batch
from .screening import choose_events, screen_scores, survivors

__all__ = [
    "DEFAULT_MAX_PAIRS",
    "DEFAULT_SELECT_SHARE",
    "EXTENSIONS",
    "FORMAT",
    "FORMAT_VERSION",
    "MIN_PER_HISTOGRAM",
    "OUTCOME_FORMAT",
    "SPLITS",
    "OfflineInputError",
    "audit_from_samples",
    "fill_outcomes",
    "make_plan",
    "outcome_path",
    "read_outcomes",
    "read_plan",
    "write_outcomes",
    "write_plan",
]

#: ``plan.json``'s "format" and "format_version": a plan of another version is refused.
FORMAT = "dpaudit-offline-plan"
FORMAT_VERSION = 1
#: The two splits, in the order they are used; their seed streams in :func:`fill_outcomes`.
SPLITS = ("select", "confirm")
#: Accepted outcome file formats (the file name's extension).
EXTENSIONS = ("csv", "jsonl", "parquet")
#: Candidate pairs of a plan (the live audit screens up to 600; every offline pair costs
#: confirm samples that are used only if the pair is kept).
DEFAULT_MAX_PAIRS = 40
#: Share of the budget in the select split (rank pairs and choose events).
DEFAULT_SELECT_SHARE = 0.5
#: Fewest outcomes per histogram and split (as in the live audit's phases).
MIN_PER_HISTOGRAM = 200
#: A run of identical rows in two files is refused when independent draws of the law
#: the files show would repeat it with probability below this.
REUSE_CHANCE = 1e-9

OUTCOME_FORMAT = (
    "One outcome per row, exactly the planned number of rows. An outcome is the item ids "
    "the system released, in order (0-based, ids in [0, domain_size)), then -1 for ⊥ if ⊥ "
    "was released; shorter outcomes are padded with empty cells (or -2); blank lines are "
    "skipped, so write an empty outcome as -2 (or a line of commas). "
    "CSV: a header row (e.g. o0,o1,...), then one outcome per line, at most `width` "
    'columns. JSON lines: one JSON array of integers per line (or {"outcome": [...]}). '
    "Parquet: integer columns (nulls pad), or one column holding a list of integers. "
    'A plan with "values": N > 0 (a system that releases real numbers) wants them too: '
    "CSV and Parquet columns o0..o{width-1} (items) then v0..v{N-1} (numbers; empty or NaN "
    'where missing); JSON lines {"items": [...], "values": [...]}.'
)


class OfflineInputError(ValueError):
    """Bad plan or outcome files (the CLI reports it on one line, exit status 2)."""


# ---------------------------------------------------------------------------
# The plan.


def _relation_dict(relation) -> dict:
    from .evidence import relation_to_dict

    return relation_to_dict(relation)


def _digest(data: dict) -> str:
    body = {k: v for k, v in data.items() if k != "plan_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _dpaudit_version() -> str:
    from .evidence import versions

    return versions().get("dpaudit", "unknown")


def make_plan(
    mechanism=None,
    *,
    claim=None,
    width=None,
    neighbours=None,
    counts=None,
    pairs=None,
    restrict=False,
    samples=2_000_000,
    alpha=0.05,
    seed=0,
    keep=2,
    events_per_pair=3,
    max_pairs=DEFAULT_MAX_PAIRS,
    domain_size=None,
    select_share=DEFAULT_SELECT_SHARE,
    name=None,
    values=None,
) -> dict:
    """The plan of an offline audit, as the JSON data ``plan.json`` holds.

    Reference: the live pipeline of :mod:`.runner` (DESIGN.md, "How the auditor is
    organised") with screening and selection merged into one non-adaptive select split.

    Parameters
    ----------
    mechanism : a dpaudit mechanism describing the system (its claim, width, ``kbar``/``k``
        steer the default pair families), or None: then give ``claim`` and ``width``.
    claim : ``(ε, δ)`` or ``(ε, δ, relation)`` (instead of the mechanism's).
    width : the longest outcome (instead of the mechanism's).
    neighbours : the relation (default: the claim's; add/remove for a bare claim).
    counts, pairs, restrict : as in :func:`.runner.audit` (given pairs come first and are
        never thinned; ``restrict`` keeps only them).
    samples : total outcomes over all histograms and both splits (a target: each histogram
        and split gets at least :data:`MIN_PER_HISTOGRAM`).
    alpha : failure probability of the audit.
    seed : root seed: thins the default pairs (as the live audit does), and is
        :func:`fill_outcomes`'s default seed.
    keep : pairs kept (on the select split) for confirmation.
    events_per_pair : events chosen per kept pair.
    max_pairs : cap on the candidate pairs (:data:`DEFAULT_MAX_PAIRS`).
    domain_size : items of the default histograms.
    select_share : share of ``samples`` in the select split; the rest is the confirm split.
    name : the system's name in the report.
    values : real values per outcome (default: the mechanism's ``value_width``, else 0);
        outcome files then carry value columns (:data:`OUTCOME_FORMAT`).
    """
    from .evidence import mechanism_spec
    from .runner import candidate_pairs

    if not 0 < float(select_share) < 1:
        raise ValueError(f"select_share must be in (0, 1), got {select_share!r}")
    if not (isinstance(max_pairs, (int, np.integer)) and max_pairs >= 1):
        raise ValueError(f"max_pairs must be an integer >= 1, got {max_pairs!r}")
    if not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    # AuditPlan validates samples, alpha, keep and events_per_pair.
    AuditPlan(
        samples=samples,
        seed=int(seed),
        alpha=float(alpha),
        keep=keep,
        events_per_pair=events_per_pair,
    )
    if mechanism is not None:
        declared = (
            mechanism.claim
            if claim is None
            else make_claim(claim, None if len(tuple(claim)) == 3 else mechanism.claim.neighbours)
        )
        width = int(mechanism.width) if width is None else int(width)
        label = name or str(mechanism)
        spec = mechanism_spec(mechanism)
        hints = mechanism
    else:
        if claim is None or width is None:
            raise ValueError("without a mechanism, give claim=(epsilon, delta) and width=")
        declared = make_claim(claim)
        width = int(width)
        label = name or "offline system"
        spec = None
        hints = SimpleNamespace()  # no kbar/k: the generic families only
    values = int(getattr(mechanism, "value_width", 0) or 0) if values is None else int(values)
    if values < 0:
        raise ValueError(f"values must be an integer >= 0, got {values!r}")
    if width < (0 if values else 1):
        raise ValueError(f"width must be an integer >= {0 if values else 1}, got {width!r}")
    relation = neighbours if neighbours is not None else declared.neighbours
    if not isinstance(relation, (AddRemoveUser, BoundedChange)):
        raise ValueError(f"neighbours must be AddRemoveUser or BoundedChange, got {relation!r}")
    # The live audit's pair stream (spawn key 99), without the threshold search (it draws).
    pair_rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(99,)))
    found = candidate_pairs(
        hints,
        relation,
        counts=counts,
        pairs=pairs,
        restrict=restrict,
        domain_size=domain_size,
        max_pairs=int(max_pairs),
        rng=pair_rng,
    )
    histograms, index = [], {}
    for pair in found:
        for h in (pair.counts, pair.counts2):
            if h not in index:
                index[h] = len(histograms)
                histograms.append(h)
    sizes = {len(h) for h in histograms}
    if len(sizes) != 1:
        raise ValueError(f"the candidate histograms have different lengths {sorted(sizes)}")
    digits = max(3, len(str(len(histograms) - 1)))
    ids = [f"h{i:0{digits}d}" for i in range(len(histograms))]
    select_total = int(float(select_share) * int(samples))
    n_select = max(select_total // len(histograms), MIN_PER_HISTOGRAM)
    n_confirm = max((int(samples) - select_total) // len(histograms), MIN_PER_HISTOGRAM)
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "dpaudit_version": _dpaudit_version(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "mechanism": label,
        "mechanism_spec": spec,
        "claim": {"epsilon": float(declared.epsilon), "delta": float(declared.delta)},
        "relation": _relation_dict(relation),
        "width": width,
        "values": values,
        "domain_size": sizes.pop(),
        "alpha": float(alpha),
        "seed": int(seed),
        "keep": int(keep),
        "events_per_pair": int(events_per_pair),
        "samples": int(samples),
        "select_share": float(select_share),
        "restricted": bool(restrict),
        "splits": list(SPLITS),
        "outcome_files": "outcomes/<histogram id>.<split>.csv|jsonl|parquet",
        "outcome_format": OUTCOME_FORMAT,
        "histograms": [
            {"id": hid, "counts": [int(v) for v in h], "select": n_select, "confirm": n_confirm}
            for hid, h in zip(ids, histograms)
        ],
        "pairs": [
            {
                "id": f"p{i:03d}",
                "p": ids[index[p.counts]],
                "q": ids[index[p.counts2]],
                "family": p.family,
            }
            for i, p in enumerate(found)
        ],
    }
    data["plan_sha256"] = _digest(data)
    return data


_README = """\
dpaudit offline audit plan ({n_hist} histograms, {n_pairs} pairs; see plan.json)

For every histogram id in histograms.csv (columns: id, select, confirm, c0..c{last}),
run the system on that histogram (item j has count cj) and write
  outcomes/<id>.select.<ext>   with exactly <select> outcomes, and
  outcomes/<id>.confirm.<ext>  with exactly <confirm> outcomes,
<ext> one of csv, jsonl, parquet. Draw every outcome with fresh randomness; draw the
confirm files independently of the select files (never copy or reuse rows).
Outcome format: {fmt}
Then: dpaudit audit --from-samples {dir}
"""


def write_plan(directory, mechanism=None, *, overwrite=False, **options) -> dict:
    """Write ``plan.json``, ``histograms.csv``, ``README.txt`` and ``outcomes/`` in ``directory``.

    Reference: the module docstring (the plan format); options as in :func:`make_plan`.

    Parameters
    ----------
    directory : the plan's directory (created if missing).
    mechanism : as in :func:`make_plan`.
    overwrite : replace an existing ``plan.json`` (refused by default: outcome files made
        for the old plan would silently belong to the new one).
    """
    plan = make_plan(mechanism, **options)
    directory = os.fspath(directory)
    path = os.path.join(directory, "plan.json")
    if os.path.exists(path) and not overwrite:
        raise OfflineInputError(f"{path} exists; write the new plan to another directory")
    os.makedirs(os.path.join(directory, "outcomes"), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(plan, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    d = plan["domain_size"]
    table = os.path.join(directory, "histograms.csv")
    with open(table, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "select", "confirm", *[f"c{j}" for j in range(d)]])
        for h in plan["histograms"]:
            writer.writerow([h["id"], h["select"], h["confirm"], *h["counts"]])
    with open(os.path.join(directory, "README.txt"), "w", encoding="utf-8") as handle:
        handle.write(
            _README.format(
                n_hist=len(plan["histograms"]),
                n_pairs=len(plan["pairs"]),
                last=d - 1,
                fmt=OUTCOME_FORMAT,
                dir=directory,
            )
        )
    return plan


def read_plan(directory) -> dict:
    """``plan.json`` of ``directory``, checked: format, version, digest, consistency."""
    path = os.path.join(os.fspath(directory), "plan.json")
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise OfflineInputError(
            f"no plan in {os.fspath(directory)!r}: {path} is missing "
            "(write one with `dpaudit plan`)"
        ) from None
    except (OSError, json.JSONDecodeError) as error:
        raise OfflineInputError(f"cannot read {path}: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise OfflineInputError(f"{path} is not a dpaudit offline plan")
    if data.get("format_version") != FORMAT_VERSION:
        raise OfflineInputError(
            f"{path} is a plan of format version {data.get('format_version')!r} (written by "
            f"dpaudit {data.get('dpaudit_version', 'unknown')}); this dpaudit "
            f"({_dpaudit_version()}) reads version {FORMAT_VERSION}: write a new plan"
        )
    if data.get("plan_sha256") != _digest(data):
        raise OfflineInputError(
            f"{path} was modified after `dpaudit plan` wrote it (digest "
            "mismatch); write a new plan instead of editing it"
        )
    ids = [h["id"] for h in data["histograms"]]
    if len(set(ids)) != len(ids) or any(
        p["p"] not in ids or p["q"] not in ids for p in data["pairs"]
    ):
        raise OfflineInputError(
            f"{path}: histogram ids are not unique or a pair names an unknown id"
        )
    return data


# ---------------------------------------------------------------------------
# Outcome files.


def outcome_path(directory, histogram_id: str, split: str, ext: str = "csv") -> str:
    """``DIR/outcomes/<id>.<split>.<ext>``."""
    return os.path.join(os.fspath(directory), "outcomes", f"{histogram_id}.{split}.{ext}")


def write_outcomes(path, batch, connection=None) -> None:
    """Write a PAD-padded ``(n, width)`` batch as CSV, JSON lines or Parquet (by extension).

    A :class:`mechanisms.MixedBatch` (a system releasing real values) is written with its
    value columns (:data:`OUTCOME_FORMAT`). ``connection``: a DuckDB connection to reuse
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


def _read_mixed(path, width, value_width, domain_size, connection) -> MixedBatch:
    """A file of a plan with values: item columns o*, value columns v* (or JSON lines)."""
    ext = path.rsplit(".", 1)[-1].lower()
    if ext == "jsonl":
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
        mixed = MixedBatch(
            np.array(items, dtype=np.int64).reshape(len(items), width),
            np.array(values, dtype=np.float64).reshape(len(values), value_width),
        )
    else:
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
        mixed = MixedBatch(items, values)
    try:
        validate_batch(mixed.items, domain_size=domain_size, name=path)
    except ValueError as error:
        raise OfflineInputError(
            str(error).replace(" returned the outcome", ": the outcome")
        ) from None
    return mixed


def _duckdb():
    try:
        import duckdb
    except ImportError:
        raise OfflineInputError(
            "CSV and Parquet outcome files need DuckDB: pip install "
            "'dpaudit[data]' (JSON lines need nothing)"
        ) from None
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

    CSV and Parquet are read with DuckDB, JSON lines with :mod:`json`; every row is checked
    by :func:`.blackbox.validate_batch` (ids in ``[0, domain_size)``, no id twice, ⊥ last).
    With ``values > 0`` the file carries real values too and a :class:`MixedBatch` is returned.
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


def _check_reuse(batches: dict) -> None:
    """Refuse two files that share their first rows beyond chance (reused or copied rows).

    Two independent files of a law with outcome probabilities ``p_o`` agree on their
    first ``r`` rows with probability ``(Σ p_o²)^r``; with the ``p_o`` estimated from the
    two files, agreement is refused when that is below :data:`REUSE_CHANCE`. A constant
    law (a deterministic system) agrees by necessity and is never refused.
    """
    if len(batches) < 2:
        return
    if any(isinstance(b, MixedBatch) for b in batches.values()):
        # Real values: independent draws repeat a row of numbers with probability 0.
        batches = {key: np.hstack([b.items, b.values.view(np.int64)]) for key, b in batches.items()}
    r = min(b.shape[0] for b in batches.values())
    if r == 0:
        return
    groups: dict[bytes, list] = {}
    for key, batch in batches.items():
        head = np.ascontiguousarray(batch[:r])
        groups.setdefault(hashlib.sha256(head.tobytes()).digest(), []).append(key)
    for keys in groups.values():
        if len(keys) < 2:
            continue
        first, second = keys[0], keys[1]
        together = count_batch(np.vstack([batches[first], batches[second]]))
        n = sum(together.values())
        collision = sum((c / n) ** 2 for c in together.values())
        if r * math.log(collision) < math.log(REUSE_CHANCE):
            what = (
                "hold the same rows"
                if all(batches[k].shape[0] == r for k in (first, second))
                else f"share their first {r} rows"
            )
            raise OfflineInputError(
                f"outcomes/{first[0]}.{first[1]} and outcomes/{second[0]}.{second[1]} {what}: "
                "every file must be drawn with fresh randomness (the confirm split independently "
                "of the select split), not copied or reused"
            )


def fill_outcomes(
    directory, mechanism, *, seed=None, fmt="csv", splits=SPLITS, chunk=DEFAULT_CHUNK
) -> list[str]:
    """Write every outcome file of the plan in ``directory`` by sampling ``mechanism``.

    For tests and as an example of the user's side. Each (split, histogram) is drawn from
    its own stream, ``SeedSequence(seed, spawn_key=(phase of split, 0, histogram index))``
    (:meth:`.plan.AuditPlan.seed_for`), so the splits are independent; chunk ``i`` uses
    the stream's ``i``-th child, as :class:`.sampling.SamplingJob` does, so a restricted
    plan of one pair gets exactly the rows of the live restricted audit with that seed.

    Parameters
    ----------
    directory : a directory written by :func:`write_plan`.
    mechanism : anything with ``sample(counts, size, rng) -> (size, width)`` batches.
    seed : root seed (default: the plan's).
    fmt : ``csv``, ``jsonl`` or ``parquet``.
    splits : the splits to write.
    chunk : rows per sampling call.
    """
    from .sampling import chunk_sizes

    if fmt not in EXTENSIONS:
        raise ValueError(f"fmt must be one of {', '.join(EXTENSIONS)}, got {fmt!r}")
    plan = read_plan(directory)
    seeds = AuditPlan(
        samples=max(int(plan["samples"]), 1000),
        seed=int(plan["seed"] if seed is None else seed),
        alpha=plan["alpha"],
    )
    written = []
    connection = _duckdb().connect() if fmt == "parquet" else None
    for split in splits:
        for index, h in enumerate(plan["histograms"]):
            counts = np.asarray(h["counts"], dtype=np.int64)
            sizes = chunk_sizes(int(h[split]), int(chunk))
            streams = seeds.seed_for(split, 0, index).spawn(len(sizes))
            if plan.get("values"):
                from .value_encoding import as_mixed_batch

                parts = [
                    as_mixed_batch(
                        mechanism.sample(counts, size, np.random.default_rng(stream)),
                        size,
                        int(plan["width"]),
                        int(plan["values"]),
                        str(mechanism),
                    )
                    for size, stream in zip(sizes, streams)
                ]
                batch = MixedBatch.stack(parts)
            else:
                parts = [
                    np.asarray(
                        mechanism.sample(counts, size, np.random.default_rng(stream)),
                        dtype=np.int64,
                    )
                    for size, stream in zip(sizes, streams)
                ]
                batch = np.vstack(parts) if parts else np.zeros((0, int(plan["width"])), np.int64)
            path = outcome_path(directory, h["id"], split, fmt)
            write_outcomes(path, batch, connection)
            written.append(path)
    if connection is not None:
        connection.close()
    return written


# ---------------------------------------------------------------------------
# The audit.


def _file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _choose_with_values(plan, pairs, batches, counts_of, claim, alpha_planned):
    """Pairs and events of a plan with real values, from the select split only.

    As the live audit (:mod:`.runner`) does: coarse quantile bins of every select file
    pooled rank the pairs; each kept pair's encoder (bins and learned score) is fitted on
    its two select files, its events are chosen on them, and the confirm files are reduced
    by that same, already fixed, encoder. Returns ``([(choice, its confirm counts)], kept)``.
    """
    from .value_encoding import fit_encoder

    width, value_width = int(plan["width"]), int(plan["values"])
    keep, per_pair = int(plan["keep"]), int(plan["events_per_pair"])
    by_counts = {counts_of[hid]: hid for hid in counts_of}
    select = {h: batches[(hid, "select")] for h, hid in by_counts.items()}
    confirm_n = {h: len(batches[(hid, "confirm")]) for h, hid in by_counts.items()}
    n_target = min(confirm_n.values())
    kept = list(pairs)
    if len(pairs) > keep:
        pooled = MixedBatch.stack(select.values())
        coarse = fit_encoder(width, value_width, pooled, None, bins=32, score=False)
        counted = {h: (coarse.count(b), len(b)) for h, b in select.items()}
        kept = survivors(
            pairs,
            screen_scores(pairs, counted, n_target, alpha_planned, claim, encoder=coarse),
            keep,
        )
    chosen = []
    for pair in kept:
        p, q = select[pair.counts], select[pair.counts2]
        encoder = fit_encoder(width, value_width, p, q)
        counted = {
            pair.counts: (encoder.count(p), len(p)),
            pair.counts2: (encoder.count(q), len(q)),
        }
        n_target = min(confirm_n[pair.counts], confirm_n[pair.counts2])
        confirm = {
            h: (encoder.count(batches[(by_counts[h], "confirm")]), confirm_n[h])
            for h in (pair.counts, pair.counts2)
        }
        for choice in choose_events(
            [pair], counted, n_target, alpha_planned, claim, per_pair, encoder=encoder
        ):
            chosen.append((choice, confirm))
    return chosen, kept


def audit_from_samples(
    directory, *, power_factor=DEFAULT_POWER_FACTOR, evidence=None, epsilon_only=False
) -> AuditResult:
    """Audit from the outcome files of a plan; return the usual :class:`.result.AuditResult`.

    Reference: the module docstring (the sample-splitting rules); the bounds are those of
    :mod:`.confirmation` (one-sided Clopper–Pearson, DP-Sniper's ε and δ bounds).

    Parameters
    ----------
    directory : a directory written by :func:`write_plan` with its ``outcomes/`` filled.
    power_factor : PASSED needs a detectable ε <= this × the claimed ε (and δ likewise).
    evidence : extra entries for the result's evidence (e.g. the command line).
    epsilon_only : accept a pass on ε alone when the plan cannot resolve the claimed δ.
    """
    from mechanisms import PrivacyClaim

    from .evidence import relation_from_dict, versions

    started = time.perf_counter()
    if not (isinstance(power_factor, (int, float)) and power_factor >= 1):
        raise ValueError(f"power_factor must be a number >= 1, got {power_factor!r}")
    plan = read_plan(directory)
    relation = relation_from_dict(plan["relation"])
    claim = PrivacyClaim(float(plan["claim"]["epsilon"]), float(plan["claim"]["delta"]), relation)
    files = _find_files(directory, plan)
    from dpaudit.neighbours.pairs import NeighbourPair

    counts_of = {h["id"]: tuple(int(v) for v in h["counts"]) for h in plan["histograms"]}
    pairs = [
        NeighbourPair(counts_of[p["p"]], counts_of[p["q"]], p["family"]) for p in plan["pairs"]
    ]
    value_width = int(plan.get("values", 0) or 0)
    connection = None
    if any(not path.endswith(".jsonl") for path in files.values()):
        connection = _duckdb().connect()
    batches, pooled = {}, {split: {} for split in SPLITS}
    for h in plan["histograms"]:
        for split in SPLITS:
            path = files[(h["id"], split)]
            batch = read_outcomes(
                path,
                width=int(plan["width"]),
                domain_size=int(plan["domain_size"]),
                connection=connection,
                values=value_width,
            )
            if len(batch) != int(h[split]):
                raise OfflineInputError(
                    f"{path} holds {len(batch)} outcomes; the plan wants "
                    f"exactly {h[split]} (no more, no fewer)"
                )
            batches[(h["id"], split)] = batch
            if not value_width:
                pooled[split][counts_of[h["id"]]] = (count_batch(batch), batch.shape[0])
    if connection is not None:
        connection.close()
    _check_reuse(batches)
    keep, per_pair, alpha = int(plan["keep"]), int(plan["events_per_pair"]), float(plan["alpha"])
    # The level the predictions assume (the live audit's AuditPlan.alpha_each).
    alpha_planned = alpha / (2 * max(1, min(keep, len(pairs))) * per_pair)
    if value_width:
        chosen, kept = _choose_with_values(plan, pairs, batches, counts_of, claim, alpha_planned)
    else:
        select, confirm = pooled["select"], pooled["confirm"]
        # Choices on the select split ONLY: rank the pairs, keep `keep`, choose events.
        n_target = min(n for _, n in confirm.values())
        kept = list(pairs)
        if len(pairs) > keep:
            kept = survivors(
                pairs, screen_scores(pairs, select, n_target, alpha_planned, claim), keep
            )
        n_target = min(confirm[h][1] for p in kept for h in (p.counts, p.counts2))
        chosen = [
            (c, confirm)
            for c in choose_events(kept, select, n_target, alpha_planned, claim, per_pair)
        ]
    # Bonferroni over the events chosen (a number fixed by the select split).
    alpha_each = alpha / (2 * len(chosen)) if chosen else alpha_planned
    witnesses = []
    for choice, counts in chosen:
        witnesses += confirm_events([choice], counts, alpha_each, claim)
    summary = summarise(witnesses, claim)
    extra = {
        "offline": {
            "directory": os.path.abspath(os.fspath(directory)),
            "plan_sha256": plan["plan_sha256"],
            "plan_dpaudit_version": plan.get("dpaudit_version"),
            "kept_pairs": [[list(p.counts), list(p.counts2)] for p in kept],
            "files": {os.path.basename(path): _file_sha256(path) for path in files.values()},
        },
    }
    extra.update(evidence or {})
    record = {
        "relation": plan["relation"],
        "seed": int(plan["seed"]),
        "mechanism_spec": plan.get("mechanism_spec"),
        "versions": versions(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "engine": "offline outcome files",
    }
    record.update(extra)
    return AuditResult(
        mechanism=f"{plan['mechanism']} (offline files)",
        claim_epsilon=float(claim.epsilon),
        claim_delta=float(claim.delta),
        neighbours=str(relation),
        epsilon_lower=float(summary["epsilon_lower"]),
        delta_lower=float(summary["delta_lower"]),
        violation=summary["violation"],
        alpha=alpha,
        epsilon_witness=summary["epsilon_witness"],
        delta_witness=summary["delta_witness"],
        samples=int(sum(len(b) for b in batches.values())),
        seconds=time.perf_counter() - started,
        pairs_screened=len(pairs),
        events_confirmed=len(witnesses),
        seed=int(plan["seed"]),
        witnesses=tuple(witnesses),
        detectable_epsilon=float(summary["detectable_epsilon"]),
        detectable_delta=float(summary["detectable_delta"]),
        epsilon_only=bool(epsilon_only),
        separated=summary["separated"],
        power_factor=float(power_factor),
        restricted=bool(plan.get("restricted", False)),
        evidence=record,
    )
