"""The level of an audit result's bounds, derived from its plan, never from which fields it has.

``dpaudit recheck`` recomputes every bound at the level the audit used. That level is a function
of the audit's plan, which the result records: its options (``samples``, ``alpha``, ``keep``,
``events_per_pair``, ``looks``, ``refine``) and its number of candidate pairs, or, offline, the
events it confirmed. [`derived_level`][dpaudit.levels.derived_level] takes it from those alone:

* a live audit always confirms in looks (``looks = 1`` is one look at the full level), every bound
  at ``alpha / (2 M) / J``, ``M = min(keep, pairs) × events_per_pair`` the events planned
  (``AuditPlan.alpha_each``) and ``J = looks`` (``LookSchedule.alpha_at``);
* a refined audit (``refine``) bounds its one event at ``alpha / 2`` on fresh samples
  (``dpaudit.auditor.run.refine``);
* with the grey-box δ stage planned (``grey_delta``, from format_version 4: the mechanism declares
  its output support and was audited as a grey box), the sampled bounds above share
  ``(1 − GREY_DELTA_SHARE) alpha`` and the stage's bound holds ``GREY_DELTA_SHARE × alpha``
  (``AuditPlan.blackbox_alpha``, ``AuditPlan.grey_delta_alpha``;
  ``dpaudit.auditor.greybox.delta_stage``); an older file had no stage, and is read with it off;
* an offline audit: Bonferroni over the events it confirmed, ``alpha / (2 M)``, checked against
  its plan directory when it is there (the plan's alpha, pairs, confirm sizes and events), else
  said in a note.

It then checks that the evidence whose shape the plan fixes has that shape, so that no edit of the
options or of the evidence loosens the level unseen. A live audit's looks
(``evidence.confirmation_looks``) must be recorded, ``looks`` sizes of the schedule its budget
gives, each witness at one of them, no pair with more than ``events_per_pair`` witnesses and no
more pairs than ``keep``. A refined result must carry the first phase that chose its witness
(``evidence.refine``): its chosen event is the one witness, bounded on the samples the first
phase left, its own witnesses are bounded at the first phase's level and choose that event; a
refine record without ``refine`` set is refused.

From ``format_version`` 2 every option the level depends on is recorded (``refine`` too, false
when off); a file of an older version that lacks one is refused, naming it, and version 1's
missing ``refine`` is read as off with a note saying so.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpaudit.auditor.results.result_format import first_difference, short_json, values_close
from dpaudit.plan_evidence import audit_options, live_level, offline_plan_problems

if TYPE_CHECKING:
    from dpaudit.auditor.planning.options import AuditOptions
    from dpaudit.auditor.results.witness import Witness

__all__ = ["LEVEL_OPTIONS", "Level", "derived_level", "possible", "rebounded"]

#: The options of a live audit its level is derived from (required from format_version 2).
LEVEL_OPTIONS = ("samples", "alpha", "keep", "events_per_pair", "looks", "refine")


@dataclass(frozen=True)
class Level:
    """The level of a result's bounds and what its plan says of the evidence.

    ``alpha_each`` is the level of each one-sided interval of the witnesses; ``covered`` the
    events the Bonferroni correction covers; ``kind`` ``"live"``, ``"refined"`` or
    ``"offline"``; ``problems`` every way the evidence departs from the plan; ``notes`` what
    was read with a stated default (an older format).
    """

    alpha_each: float
    covered: int
    kind: str
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    grey_alpha: float = 0.0


def possible(w: Witness) -> bool:
    """Hits within ``0..samples``, on at least one sample of ``P``'s side."""
    return bool(0 <= w.hits_p <= w.samples_p and 0 <= w.hits_q <= w.samples_q and w.samples_p)


def rebounded(w: Witness, level: float, claim) -> Witness:
    """``w`` with its bounds and detectable values recomputed from its hits at ``level``."""
    from dpaudit.auditor.bounds.statistics import (
        detectable_delta,
        detectable_epsilon,
        event_bounds,
        one_sided_lower,
        one_sided_upper,
    )

    p_low, q_high, eps_b, delta_b = event_bounds(
        w.hits_p, w.samples_p, w.hits_q, w.samples_q, level, claim.epsilon, claim.delta
    )
    return dataclasses.replace(
        w,
        p_low=float(p_low),
        q_high=float(q_high),
        epsilon_lower=float(eps_b),
        delta_lower=float(delta_b),
        detectable_epsilon=float(
            detectable_epsilon(
                w.hits_q, w.samples_p, w.samples_q, level, claim.epsilon, claim.delta
            )
        ),
        detectable_delta=float(
            detectable_delta(w.hits_q, w.samples_p, w.samples_q, level, claim.epsilon, claim.delta)
        ),
        q_low=float(one_sided_lower(w.hits_q, w.samples_q, level)),
        p_high=float(one_sided_upper(w.hits_p, w.samples_p, level)),
    )


def derived_level(data: dict, witnesses, claim, relation) -> Level:
    """The level of ``data``'s bounds from its plan, and the plan's checks of its evidence.

    ``witnesses`` are the result's witnesses (``Witness``), ``claim`` and ``relation`` those of
    the rebuilt mechanism (module docstring).
    """
    alpha = float(data["alpha"])
    evidence = data.get("evidence") or {}
    if "offline" in evidence:
        return _offline_level(alpha, evidence, witnesses)
    version = data.get("format_version", 0)
    options, notes = _recorded_options(version, evidence.get("options"))
    checked = _checked_options(options, version)
    if isinstance(checked, str):
        return Level(alpha / 2, 1, "live", (checked,), notes)
    grey_alpha = checked.plan().grey_delta_alpha
    record = evidence.get("refine")
    if not options["refine"]:
        level, covered, problems = live_level(
            checked, data, evidence.get("confirmation_looks"), witnesses, relation
        )
        if record is not None:
            problems.insert(
                0,
                "evidence.refine: a refine record, but evidence.options.refine is off (a "
                "refined audit sets both)",
            )
        return Level(level, covered, "live", tuple(problems), notes, grey_alpha)
    # One event chosen before its fresh draw, bounded at the full level (auditor.run.refine).
    problems = []
    if "confirmation_looks" in evidence:
        problems.append(
            "evidence.confirmation_looks: recorded, but a refined audit's looks are its first "
            "phase's (evidence.refine.confirmation_looks)"
        )
    if record is None:
        if witnesses or not data.get("interrupted"):
            problems.append(
                "evidence.options.refine is on, but the result has no refine record "
                "(evidence.refine): a refined audit records the first phase that chose its "
                "witness"
            )
    else:
        problems += _refine_problems(data, checked, record, witnesses, claim, relation)
    blackbox = checked.plan().blackbox_alpha
    return Level(blackbox / 2, 1, "refined", tuple(problems), notes, grey_alpha)


def _recorded_options(version, recorded) -> tuple[dict, tuple[str, ...]]:
    """The recorded options, version 1's unrecorded ``refine`` read as off, and the note."""
    options = dict(recorded) if isinstance(recorded, dict) else {}
    notes: list[str] = []
    if "refine" not in options and version < 2:
        # Before version 2 the option was written only when on.
        options["refine"] = False
        if isinstance(recorded, dict):
            notes.append(
                f"format_version {version}: evidence.options.refine is not recorded (written "
                "only when on before version 2), read as off"
            )
    return options, tuple(notes)


def _checked_options(options: dict, version) -> AuditOptions | str:
    """The options the level is derived from, validated; or the problem that refuses them."""
    missing = [name for name in LEVEL_OPTIONS if name not in options]
    if missing:
        return (
            f"evidence.options: {', '.join(missing)} not recorded; the level of the bounds "
            f"is derived from them (required from format_version 2, this file is version "
            f"{version}): rerun the audit with this dpaudit"
        )
    grey = options.get("grey_delta", None if version >= 4 else False)
    if not isinstance(grey, bool):
        return (
            f"evidence.options.grey_delta: recorded {short_json(grey)}, not true or false (required "
            f"from format_version 4, this file is version {version})"
        )
    try:
        checked = audit_options({**options, "grey_delta": grey})
    except (TypeError, ValueError) as error:
        return f"evidence.options: {error}"
    refine = options["refine"]
    if not isinstance(refine, bool):
        return f"evidence.options.refine: recorded {short_json(refine)}, not true or false"
    return checked


def _offline_level(alpha: float, evidence: dict, witnesses) -> Level:
    """Bonferroni over the events confirmed, checked against the plan directory when it is
    there; an offline audit records no live options."""
    covered = max(len(witnesses), 1)
    live = [k for k in ("options", "confirmation_looks", "refine") if k in evidence]
    problems = [
        f"evidence.{k}: recorded, but an offline audit (evidence.offline) has no live {k}"
        for k in live
    ]
    offline = evidence["offline"] if isinstance(evidence["offline"], dict) else {}
    directory = offline.get("directory")
    notes: tuple[str, ...] = ()
    if isinstance(directory, str) and os.path.isfile(os.path.join(directory, "plan.json")):
        problems += offline_plan_problems(alpha, offline, directory, witnesses)
    else:
        notes = (
            f"the offline plan {directory!r} is not there: the level is Bonferroni over the "
            f"{len(witnesses)} events the file confirms, unchecked against the plan's alpha, "
            "pairs and sizes (a recheck where the plan directory is, or --rerun, checks them)",
        )
    return Level(alpha / (2 * covered), covered, "offline", tuple(problems), notes)


def _refine_problems(data, options: AuditOptions, record, witnesses, claim, relation) -> list:
    """A refined result's first phase against its plan and its one witness (module docstring)."""
    from dpaudit.auditor.planning.options import DEFAULT_SAMPLES
    from dpaudit.auditor.results.witness import Witness
    from dpaudit.auditor.run.refine import choose_witness, first_share

    try:
        first = [Witness.from_dict(w) for w in record["witnesses"]]
        chosen = None if record["chosen"] is None else Witness.from_dict(record["chosen"])
        spent, per_side = int(record["samples"]), int(record["samples_per_side"])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        return [f"evidence.refine: not the record of a refined audit's first phase ({error!r})"]
    for i, w in enumerate(first):
        if not possible(w):
            return [f"evidence.refine.witnesses[{i}]: hits outside 0..samples or no samples"]
    problems = []
    share = first_share(options.samples, DEFAULT_SAMPLES)
    if spent > share:
        problems.append(
            f"evidence.refine.samples: {spent} drawn by the first phase, above its share "
            f"{share} of evidence.options.samples = {options.samples}"
        )
    left = max(options.samples - spent, 0) // 2
    if per_side != left:
        problems.append(
            f"evidence.refine.samples_per_side: recorded {per_side}, but the first phase left "
            f"{left} per side of evidence.options.samples = {options.samples}"
        )
    problems += _refined_draw_problems(data, witnesses, chosen, spent, per_side)
    # The first phase: the audit as usual on its share of the budget (auditor.run.refine.first_phase).
    first_options = dataclasses.replace(options, samples=max(share, 1000), refine=False)
    again, found = _first_phase(data, first_options, record, first, claim, relation)
    problems += found
    if chosen is not None:
        picked = choose_witness(again, claim, per_side, options.plan().blackbox_alpha)
        if not _same_event(picked, chosen):
            problems.append(
                "evidence.refine.chosen: not the event the first phase's witnesses choose "
                "(dpaudit.auditor.run.refine.choose_witness)"
            )
    return problems


def _refined_draw_problems(data, witnesses, chosen, spent: int, per_side: int) -> list[str]:
    """The one witness against the event the first phase chose and the samples it left."""
    if chosen is None:
        if witnesses:
            return [
                "witnesses: recorded, but evidence.refine.chosen is null (the first phase chose "
                "no witness)"
            ]
        return []
    if not witnesses:
        return [
            "witnesses: none, but evidence.refine.chosen names the event the refined draw bounds"
        ]
    problems = []
    w = witnesses[0]
    if not _same_event(w, chosen):
        problems.append(
            "witnesses[0]: not the pair and event evidence.refine.chosen names (a refined "
            "audit bounds that one event)"
        )
    if not w.samples_p == w.samples_q == per_side:
        problems.append(
            f"witnesses[0]: {w.samples_p} and {w.samples_q} samples, but the refined draw "
            f"has {per_side} per side (evidence.refine.samples_per_side)"
        )
    if int(data["samples"]) != spent + 2 * per_side:
        problems.append(
            f"samples: recorded {data['samples']}, but the first phase's {spent} and the "
            f"refined draw's 2 × {per_side} make {spent + 2 * per_side}"
        )
    return problems


def _first_phase(data, first_options: AuditOptions, record, first, claim, relation):
    """``(witnesses rebounded, problems)``: the first phase's live confirmation (its looks, its
    witnesses' bounds at its level, its headline) recomputed, its paths in the record."""
    level, _, found = live_level(
        first_options, data, record.get("confirmation_looks"), first, relation
    )
    problems = [
        p.replace("witnesses", "evidence.refine.witnesses", 1).replace(
            "evidence.confirmation_looks", "evidence.refine.confirmation_looks"
        )
        for p in found
    ]
    again = [rebounded(w, level, claim) for w in first]
    difference = first_difference(
        record["witnesses"], [w.to_dict() for w in again], "evidence.refine.witnesses"
    )
    if difference:
        problems.append(difference)
    return again, problems + _first_summary_problems(record, again, claim)


def _same_event(w, chosen) -> bool:
    """``w`` is the pair and event of ``chosen`` (None is no event)."""
    return w is not None and (w.counts, w.counts2, w.event.to_dict()) == (
        chosen.counts,
        chosen.counts2,
        chosen.event.to_dict(),
    )


def _first_summary_problems(record: dict, witnesses, claim) -> list[str]:
    """The first phase's headline in the record against its witnesses."""
    from dpaudit.auditor.confirm.confirmation import summarise

    summary = summarise(witnesses, claim)
    expected = {
        "events_confirmed": len(witnesses),
        "epsilon_lower": float(summary["epsilon_lower"]),
        "delta_lower": float(summary["delta_lower"]),
        "violation": bool(summary["violation"]),
    }
    return [
        f"evidence.refine.{name}: recorded {short_json(record.get(name))}, recomputed {short_json(value)}"
        for name, value in expected.items()
        if name not in record
        or isinstance(record[name], bool) != isinstance(value, bool)
        or not values_close(record[name], value)
    ]
