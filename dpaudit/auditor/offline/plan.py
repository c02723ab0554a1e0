"""The offline plan: the histograms, pairs and sample sizes fixed before anything is drawn.

Reference: [`dpaudit.auditor.offline`][dpaudit.auditor.offline] (the validity rules);
``plan.json``'s format.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace

import numpy as np

from dpaudit.neighbours.candidates import candidate_pairs
from dpaudit.provenance import mechanism_spec, relation_to_dict, versions
from mechanisms import PrivacyClaim
from mechanisms.claims import RELATIONS
from mechanisms.validation import require_nonnegative_int, require_positive_int

from ..planning.plan import MIN_PER_HISTOGRAM, AuditPlan
from ..run.schedule import histograms_of
from ..sources.blackbox import make_claim

FORMAT = "dpaudit-offline-plan"
FORMAT_VERSION = 1
#: The two splits, in the order they are used; their seed streams in ``fill_outcomes``.
SPLITS = ("select", "confirm")
#: Accepted outcome file formats (the file name's extension).
EXTENSIONS = ("csv", "jsonl", "parquet")
#: Candidate pairs of a plan (the live audit screens up to 600; every offline pair costs
#: confirm samples that are used only if the pair is kept).
DEFAULT_MAX_PAIRS = 40
#: Share of the budget in the select split (rank pairs and choose events).
DEFAULT_SELECT_SHARE = 0.5
#: A run of identical rows in two files is refused when independent draws of the law
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


def _digest(data: dict) -> str:
    body = {k: v for k, v in data.items() if k != "plan_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _dpaudit_version() -> str:
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

    Reference: the live pipeline of [`runner`][dpaudit.auditor.run.runner] (DESIGN.md, "How the auditor
    is organised") with screening and selection merged into one non-adaptive select split.

    Parameters
    ----------
    mechanism : a dpaudit mechanism describing the system (its claim, width, ``kbar``/``k``
        steer the default pair families), or None: then give ``claim`` and ``width``.
    claim : ``(ε, δ)`` or ``(ε, δ, relation)`` (instead of the mechanism's).
    width : the longest outcome (instead of the mechanism's).
    neighbours : the relation (default: the claim's; add/remove for a bare claim).
    counts, pairs, restrict : as in [`AuditOptions`][dpaudit.auditor.planning.options.AuditOptions] (given pairs come
        first and are never thinned; ``restrict`` keeps only them).
    samples : total outcomes over all histograms and both splits (a target: each histogram
        and split gets at least ``MIN_PER_HISTOGRAM``).
    alpha : failure probability of the audit.
    seed : root seed: thins the default pairs (as the live audit does), and is
        [`fill_outcomes`][dpaudit.auditor.offline.fill_outcomes]'s default seed.
    keep, events_per_pair : pairs kept (on the select split) for confirmation; events per pair.
    max_pairs : cap on the candidate pairs (``DEFAULT_MAX_PAIRS``).
    domain_size, name : items of the default histograms; the system's name in the report.
    select_share : share of ``samples`` in the select split; the rest is the confirm split.
    values : real values per outcome (default: the mechanism's ``value_width``, else 0);
        outcome files then carry value columns (``OUTCOME_FORMAT``).
    """
    _check_options(select_share, max_pairs, seed, samples, alpha, keep, events_per_pair)
    system = _describe_system(mechanism, claim, width, name, values, neighbours)
    found = _candidates(system, seed, counts, pairs, restrict, domain_size, max_pairs)
    histograms = histograms_of(found)
    data = {
        **_header(system, histograms),
        **_settings(alpha, seed, keep, events_per_pair, samples, select_share, restrict),
        **_files(found, histograms, samples, select_share),
    }
    data["plan_sha256"] = _digest(data)
    return data


def _candidates(system, seed, counts, pairs, restrict, domain_size, max_pairs) -> list:
    """The plan's candidate pairs: the live audit's, without the threshold search (it draws)."""
    # The live audit's pair stream (spawn key 99).
    pair_rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(99,)))
    return candidate_pairs(
        system.hints,
        system.relation,
        counts=counts,
        pairs=pairs,
        restrict=restrict,
        domain_size=domain_size,
        max_pairs=int(max_pairs),
        rng=pair_rng,
    )


def _header(system, histograms) -> dict:
    """The plan's first entries: its format, the system, its claim and outcome shape."""
    sizes = {len(h) for h in histograms}
    if len(sizes) != 1:
        raise ValueError(f"the candidate histograms have different lengths {sorted(sizes)}")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "dpaudit_version": _dpaudit_version(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "mechanism": system.label,
        "mechanism_spec": system.spec,
        "claim": {"epsilon": float(system.claim.epsilon), "delta": float(system.claim.delta)},
        "relation": relation_to_dict(system.relation),
        "width": system.width,
        "values": system.values,
        "domain_size": sizes.pop(),
    }


def _settings(alpha, seed, keep, events_per_pair, samples, select_share, restrict) -> dict:
    """The audit's settings as the plan records them."""
    return {
        "alpha": float(alpha),
        "seed": int(seed),
        "keep": int(keep),
        "events_per_pair": int(events_per_pair),
        "samples": int(samples),
        "select_share": float(select_share),
        "restricted": bool(restrict),
    }


def _files(found, histograms, samples, select_share) -> dict:
    """The splits, the outcome files wanted and the pairs' and histograms' tables."""
    select_total = int(float(select_share) * int(samples))
    n_select = max(select_total // len(histograms), MIN_PER_HISTOGRAM)
    n_confirm = max((int(samples) - select_total) // len(histograms), MIN_PER_HISTOGRAM)
    return {
        "splits": list(SPLITS),
        "outcome_files": "outcomes/<histogram id>.<split>.csv|jsonl|parquet",
        "outcome_format": OUTCOME_FORMAT,
        **_tables(found, histograms, n_select, n_confirm),
    }


def _check_options(select_share, max_pairs, seed, samples, alpha, keep, events_per_pair):
    if not 0 < float(select_share) < 1:
        raise ValueError(f"select_share must be in (0, 1), got {select_share!r}")
    require_positive_int("max_pairs", max_pairs)
    require_nonnegative_int("seed", seed)
    # AuditPlan validates samples, alpha, keep and events_per_pair.
    AuditPlan(
        samples=samples,
        seed=int(seed),
        alpha=float(alpha),
        keep=keep,
        events_per_pair=events_per_pair,
    )


@dataclass(frozen=True)
class _System:
    """What a plan records of the system: claim, relation, outcome shape, name, spec."""

    claim: PrivacyClaim
    relation: object
    width: int
    values: int
    label: str
    spec: dict | None
    hints: object  # read for kbar/k by the default pair families


def _describe_system(mechanism, claim, width, name, values, neighbours) -> _System:
    if mechanism is not None:
        declared = (
            mechanism.claim
            if claim is None
            else make_claim(claim, None if len(tuple(claim)) == 3 else mechanism.claim.neighbours)
        )
        width = int(mechanism.width) if width is None else int(width)
        label, spec, hints = name or str(mechanism), mechanism_spec(mechanism), mechanism
    else:
        if claim is None or width is None:
            raise ValueError("without a mechanism, give claim=(epsilon, delta) and width=")
        declared = make_claim(claim)
        width = int(width)
        # No kbar/k: the generic families only.
        label, spec, hints = name or "offline system", None, SimpleNamespace()
    values = int(getattr(mechanism, "value_width", 0) or 0) if values is None else int(values)
    if values < 0:
        raise ValueError(f"values must be an integer >= 0, got {values!r}")
    if width < (0 if values else 1):
        raise ValueError(f"width must be an integer >= {0 if values else 1}, got {width!r}")
    relation = neighbours if neighbours is not None else declared.neighbours
    if not isinstance(relation, RELATIONS):
        raise ValueError(
            f"neighbours must be AddRemoveUser, BoundedChange or Substitute, got {relation!r}"
        )
    return _System(declared, relation, width, values, label, spec, hints)


def _tables(found, histograms, n_select, n_confirm) -> dict:
    """The plan's ``histograms`` (ids h000, ...) and ``pairs`` (p000, ...) entries."""
    digits = max(3, len(str(len(histograms) - 1)))
    ids = {h: f"h{i:0{digits}d}" for i, h in enumerate(histograms)}
    return {
        "histograms": [
            {"id": ids[h], "counts": [int(v) for v in h], "select": n_select, "confirm": n_confirm}
            for h in histograms
        ],
        "pairs": [
            {"id": f"p{i:03d}", "p": ids[p.counts], "q": ids[p.counts2], "family": p.family}
            for i, p in enumerate(found)
        ],
    }


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

    Reference: the module docstring (the plan format); options as in
    [`make_plan`][dpaudit.auditor.offline.plan.make_plan].

    Parameters
    ----------
    directory : the plan's directory (created if missing).
    mechanism : as in [`make_plan`][dpaudit.auditor.offline.plan.make_plan].
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
