"""What an audit result's own numbers imply: bounds, headline, verdict, level, copies of inputs.

Reference: :mod:`dpaudit.auditor.confirmation` (one-sided Clopper–Pearson bounds at
``alpha / (2 M)``, the headline of :func:`~dpaudit.auditor.confirmation.summarise`) and
:mod:`dpaudit.auditor.result` (the verdict). :func:`recomputed_result` rebuilds, from a
result's hits and sample sizes and a claim, the result the auditor would have written, so
that :func:`dpaudit.recheck.recheck` can compare it field by field with the file.
"""

from __future__ import annotations

import dataclasses
import shlex
from typing import TYPE_CHECKING

import numpy as np

from dpaudit.auditor.result_format import _close, _short

if TYPE_CHECKING:
    from dpaudit.auditor import AuditResult

__all__ = ["bonferroni_level", "copies_disagree", "recomputed_result"]


def bonferroni_level(data: dict, n_witnesses: int) -> tuple[float, int]:
    """``(alpha_each, events the Bonferroni correction covers)`` the auditor used.

    ``alpha_each`` is the level of the witnesses' bounds: ``alpha / (2 M)``, split evenly
    over the looks of a sequential confirmation (``evidence.confirmation_looks``); a
    refined audit's one event at ``alpha / 2`` (:mod:`dpaudit.auditor.refine`).
    """
    from dpaudit.auditor.plan import AuditPlan

    alpha = float(data["alpha"])
    evidence = data.get("evidence") or {}
    options = evidence.get("options") or {}
    if "offline" in evidence or "keep" not in options:
        # Offline audits (and files without options): Bonferroni over the events confirmed.
        covered = max(n_witnesses, 1)
        return alpha / (2 * covered), covered
    if options.get("refine"):
        # One event chosen before its fresh draw, bounded at the full level (auditor.refine).
        return alpha / 2, 1
    plan = AuditPlan(
        samples=max(int(options.get("samples", 1000)), 1000),
        seed=0,
        alpha=alpha,
        keep=int(options["keep"]),
        events_per_pair=int(options["events_per_pair"]),
    )
    level = plan.alpha_each(int(data["pairs_screened"]))
    covered = round(alpha / (2 * level))
    if "confirmation_looks" in evidence:
        # Confirmed in looks: each look's bounds at an even α-spending share of the level
        # (:meth:`dpaudit.auditor.sequential.LookSchedule.alpha_at`).
        level /= max(int(options.get("looks", 1)), 1)
    return level, covered


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
            if value is not None and not _close(data.get(field), value):
                problems.append(
                    f"{field}: recorded {_short(data.get(field))}, but {where} is {_short(value)}"
                )
    return problems


def recomputed_result(data: dict, claim, relation) -> tuple[AuditResult, float, list[str]]:
    """The result its own witnesses imply under ``claim``; the level; problems found."""
    from dpaudit.auditor import AuditResult
    from dpaudit.auditor.confirmation import summarise
    from dpaudit.auditor.statistics import detectable_delta, detectable_epsilon, event_bounds
    from dpaudit.neighbours.relations import is_neighbour

    problems = []
    loaded = AuditResult.from_dict(data)
    level, covered = bonferroni_level(data, len(loaded.witnesses))
    looks = (data.get("evidence") or {}).get("confirmation_looks") or {}
    if "alpha_each_look" in looks and not _close(float(looks["alpha_each_look"]), level):
        problems.append(
            f"evidence.confirmation_looks.alpha_each_look: recorded "
            f"{_short(looks['alpha_each_look'])}, but the options give {_short(level)}"
        )
    if len(loaded.witnesses) > covered:
        problems.append(
            f"witnesses: {len(loaded.witnesses)} confirmed events, but the bounds' level "
            f"alpha / (2 x {covered}) covers only {covered} (Bonferroni)"
        )
    witnesses = []
    for i, w in enumerate(loaded.witnesses):
        if not (0 <= w.hits_p <= w.samples_p and 0 <= w.hits_q <= w.samples_q and w.samples_p):
            problems.append(f"witnesses[{i}]: hits outside 0..samples or no samples")
            return loaded, level, problems
        if len(w.counts) != len(w.counts2) or not is_neighbour(
            np.asarray(w.counts), np.asarray(w.counts2), relation
        ):
            problems.append(
                f"witnesses[{i}]: {list(w.counts)} and {list(w.counts2)} are not neighbours "
                f"under {relation}"
            )
        p_low, q_high, eps_b, delta_b = event_bounds(
            w.hits_p, w.samples_p, w.hits_q, w.samples_q, level, claim.epsilon, claim.delta
        )
        power = detectable_epsilon(
            w.hits_q, w.samples_p, w.samples_q, level, claim.epsilon, claim.delta
        )
        power_delta = detectable_delta(
            w.hits_q, w.samples_p, w.samples_q, level, claim.epsilon, claim.delta
        )
        witnesses.append(
            dataclasses.replace(
                w,
                p_low=float(p_low),
                q_high=float(q_high),
                epsilon_lower=float(eps_b),
                delta_lower=float(delta_b),
                detectable_epsilon=float(power),
                detectable_delta=float(power_delta),
            )
        )
    summary = summarise(witnesses, claim)
    rebuilt = dataclasses.replace(
        loaded,
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
    return rebuilt, level, problems
