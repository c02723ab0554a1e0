"""What an audit result's own numbers imply: bounds, headline, verdict, level, copies of inputs.

Reference: [`dpaudit.auditor.confirm.confirmation`][dpaudit.auditor.confirm.confirmation] (one-sided Clopper–Pearson
bounds at ``alpha / (2 M)``, the headline of [`summarise`][dpaudit.auditor.confirm.confirmation.summarise])
and [`dpaudit.auditor.results.result`][dpaudit.auditor.results.result] (the verdict). ``recomputed_result``
rebuilds, from a result's hits and sample sizes, its grey-box δ bound
([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage], checked against the level its plan
gives it) and a claim, the result the auditor would have written, so that [`dpaudit.recheck.recheck`][dpaudit.recheck.recheck] can compare it field by field
with the file.
"""

from __future__ import annotations

import dataclasses
import shlex
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit.auditor.results.result_format import json_float, short_json, values_close
from dpaudit.levels import Level, derived_level, possible, rebounded

if TYPE_CHECKING:
    from dpaudit.auditor import AuditResult

__all__ = ["copies_disagree", "grey_delta_problems", "recomputed_result", "result_at_level"]


def _seed_in_command(command: str):
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    if tokens[:2] != ["dpaudit", "audit"] or any(t.startswith("--from-samples") for t in tokens):
        return None
    for i, token in enumerate(tokens):
        if token == "--seed" and i + 1 < len(tokens):
            return tokens[i + 1]
        if token.startswith("--seed="):
            return token.split("=", 1)[1]
    return "0"  # the CLI's default


def copies_disagree(data: dict) -> list[str]:
    """Where the seed, alpha, power factor or restriction recorded in several places differ."""
    evidence = data.get("evidence") or {}
    options = evidence.get("options") or {}
    problems = []
    copies = {
        "seed": [
            ("evidence.seed", evidence.get("seed")),
            ("evidence.options.seed", options.get("seed")),
        ],
        "alpha": [("evidence.options.alpha", options.get("alpha"))],
        "power_factor": [("evidence.options.power_factor", options.get("power_factor"))],
        "restricted": [("evidence.options.restrict", options.get("restrict"))],
    }
    if "offline" not in evidence:
        command_seed = _seed_in_command(str(evidence.get("command", "")))
        if command_seed is not None:
            copies["seed"].append(("the --seed of evidence.command", int(command_seed)))
    for field, others in copies.items():
        for where, value in others:
            if value is not None and not values_close(data.get(field), value):
                problems.append(
                    f"{field}: recorded {short_json(data.get(field))}, but {where} is {short_json(value)}"
                )
    return problems


def recomputed_result(data: dict, claim, relation) -> tuple[AuditResult, Level, list[str]]:
    """The result its own witnesses imply under ``claim``; the level
    ([`dpaudit.levels.derived_level`][dpaudit.levels.derived_level]); problems found."""
    from dpaudit.auditor import AuditResult
    from dpaudit.neighbours.relations import is_neighbour

    loaded = AuditResult.from_dict(data)
    level = derived_level(data, loaded.witnesses, claim, relation)
    for i, w in enumerate(loaded.witnesses):
        if not possible(w):
            return loaded, level, [f"witnesses[{i}]: hits outside 0..samples or no samples"]
    problems = list(level.problems)
    if len(loaded.witnesses) > level.covered:
        problems.append(
            f"witnesses: {len(loaded.witnesses)} confirmed events, but the bounds' level "
            f"alpha / (2 x {level.covered}) covers only {level.covered} (Bonferroni)"
        )
    for i, w in enumerate(loaded.witnesses):
        if len(w.counts) != len(w.counts2) or not is_neighbour(
            np.asarray(w.counts), np.asarray(w.counts2), relation
        ):
            problems.append(
                f"witnesses[{i}]: {list(w.counts)} and {list(w.counts2)} are not neighbours "
                f"under {relation}"
            )
    grey = ((loaded.evidence or {}).get("greybox") or {}).get("delta")
    problems += grey_delta_problems(grey, level.grey_alpha, claim, relation)
    return result_at_level(loaded, level.alpha_each, claim, relation), level, problems


def result_at_level(result: AuditResult, level: float, claim, relation) -> AuditResult:
    """``result`` with every witness's bounds, the headline and the verdict recomputed from
    its hits at ``level`` under ``claim`` and ``relation``."""
    from dpaudit.auditor.confirm.confirmation import summarise
    from dpaudit.auditor.greybox.delta_stage import with_grey_delta

    witnesses = [rebounded(w, level, claim) for w in result.witnesses]
    grey = ((result.evidence or {}).get("greybox") or {}).get("delta")
    summary = with_grey_delta(summarise(witnesses, claim, result.power_factor), grey, claim)
    return dataclasses.replace(
        result,
        claim_epsilon=float(claim.epsilon),
        claim_delta=float(claim.delta),
        neighbours=str(relation),
        epsilon_lower=float(summary["epsilon_lower"]),
        delta_lower=float(summary["delta_lower"]),
        violation=summary["violation"],
        epsilon_witness=summary["epsilon_witness"],
        delta_witness=summary["delta_witness"],
        witnesses=tuple(witnesses),
        events_confirmed=len(witnesses),
        detectable_epsilon=float(summary["detectable_epsilon"]),
        detectable_delta=float(summary["detectable_delta"]),
        separated=summary["separated"],
    )


def grey_delta_problems(record: Any, alpha: float, claim: Any, relation: Any) -> list[str]:
    """The grey-box δ stage's record ([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage])
    against the level ``alpha`` the plan gives it and its own parts."""
    from dpaudit.auditor.greybox.delta_stage import usable
    from dpaudit.auditor.greybox.structural_delta import detectable_delta
    from dpaudit.neighbours.relations import is_neighbour

    where = "evidence.greybox.delta"
    if record is None:
        return []
    if not isinstance(record, dict):
        return [f"{where}: recorded {short_json(record)}, not a record of the grey-box δ stage"]
    if alpha <= 0.0:
        if usable(record):
            return [
                f"{where}: a bound, but the plan holds no α for it (evidence.options.grey_delta "
                "is off)"
            ]
        return []
    if "alpha" in record and not values_close(float(record["alpha"]), alpha):
        return [
            f"{where}.alpha: recorded {short_json(record['alpha'])}, but the plan gives {alpha:g}"
        ]
    if not usable(record):
        return []
    try:
        d, d2, parts, recorded = _grey_record(record)
    except (KeyError, TypeError, ValueError) as error:
        return [f"{where}: not the record of the grey-box δ stage ({error!r})"]
    problems = []
    if len(d) != len(d2) or not is_neighbour(np.array(d), np.array(d2), relation):
        problems.append(
            f"{where}.pair: {list(d)} and {list(d2)} are not neighbours under {relation}"
        )
    lower = sum(p.lower for p in parts)
    again = {
        "lower": lower,
        "estimate": sum(p.estimate for p in parts),
        "detectable_delta": json_float(detectable_delta(parts, float(claim.delta), alpha)),
        "violation": lower > float(claim.delta),
    }
    for name, value in again.items():
        if isinstance(value, bool) or isinstance(recorded[name], (bool, str)):
            same = recorded[name] == value
        else:
            same = values_close(float(recorded[name]), float(value))
        if not same:
            problems.append(
                f"{where}.{name}: recorded {short_json(recorded[name])}, recomputed {short_json(value)} "
                f"(from its parts at the plan's α = {alpha:g})"
            )
    return problems


def _grey_record(record: dict):
    """``(d, d2, parts, recorded figures)`` of the stage's record (KeyError, TypeError or
    ValueError when it is not one)."""
    from dpaudit.auditor.greybox.structural_delta import GapItemBound

    d, d2 = (tuple(int(c) for c in h) for h in record["pair"])
    parts = tuple(
        GapItemBound(
            int(p["item"]),
            int(p["runs"]),
            int(p["hits"]),
            {},
            float(p["scale"]),
            float(p["estimate"]),
            float(p["lower"]),
            float(p["variance"]),
        )
        for p in record["parts"]
    )
    recorded = {k: record[k] for k in ("lower", "estimate", "detectable_delta", "violation")}
    return d, d2, parts, recorded
