"""What an audit's plan says its evidence must look like, checked against the evidence.

The recorded options validated as the audit validated them (``audit_options``); a live audit's
confirmation: the level of each look, the pairs kept and events per pair, the looks' sizes
against the schedule the budget gives (``live_level``); an offline audit's witnesses against the
plan directory they were read from (``offline_plan_problems``). [`dpaudit.levels`][dpaudit.levels]
derives the level of a result's bounds with these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.auditor.results.result_format import short_json, values_close

if TYPE_CHECKING:
    from dpaudit.auditor.planning.options import AuditOptions

__all__ = ["audit_options", "live_level", "offline_plan_problems"]


def offline_plan_problems(alpha: float, offline: dict, directory: str, witnesses) -> list[str]:
    """The result against the plan it was read from: digest, alpha, pairs, sizes, events."""
    from dpaudit.auditor.offline.plan import OfflineInputError, read_plan
    from dpaudit.auditor.offline.source import FileSchedule, plan_pairs

    try:
        plan = read_plan(directory)
    except OfflineInputError as error:
        return [f"evidence.offline.directory: {error}"]
    if plan["plan_sha256"] != offline.get("plan_sha256"):
        return [
            f"evidence.offline.plan_sha256: recorded {short_json(offline.get('plan_sha256'))}, but "
            f"the plan in {directory} is {plan['plan_sha256']}"
        ]
    schedule = FileSchedule.of(plan)
    problems = []
    if not values_close(alpha, schedule.alpha):
        problems.append(f"alpha: recorded {short_json(alpha)}, but the plan's is {schedule.alpha}")
    planned = max(1, min(schedule.keep, schedule.n_pairs)) * schedule.events_per_pair
    if len(witnesses) > planned:
        problems.append(
            f"witnesses: {len(witnesses)} confirmed events, but the plan confirms at most {planned}"
        )
    pairs = {frozenset((p.counts, p.counts2)) for p in plan_pairs(plan)}
    sizes = schedule.confirm_sizes
    for i, w in enumerate(witnesses):
        if frozenset((tuple(w.counts), tuple(w.counts2))) not in pairs:
            problems.append(f"witnesses[{i}]: not a pair of the plan in {directory}")
        elif (w.samples_p, w.samples_q) != (sizes[tuple(w.counts)], sizes[tuple(w.counts2)]):
            problems.append(
                f"witnesses[{i}]: {w.samples_p} and {w.samples_q} samples, but the plan's "
                f"confirm split has {sizes[tuple(w.counts)]} and {sizes[tuple(w.counts2)]}"
            )
    return problems


def audit_options(options: dict) -> AuditOptions:
    """The recorded options that fix the plan, validated as the audit validated them."""
    from dpaudit.auditor.planning.options import AuditOptions

    def number(name, kind=int):
        value = options[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} is {short_json(value)}, not a number")
        if kind is int and value != int(value):
            raise ValueError(f"{name} is {short_json(value)}, not a whole number")
        return kind(value)

    return AuditOptions(
        samples=number("samples"),
        alpha=number("alpha", float),
        keep=number("keep"),
        events_per_pair=number("events_per_pair"),
        looks=number("looks"),
        grey_delta=bool(options.get("grey_delta", False)),
        search=bool(options.get("search", True)),
        restrict=bool(options.get("restrict", False)),
    )


def live_level(options: AuditOptions, data: dict, looks, witnesses, relation):
    """``(alpha_each / looks, events covered, problems)`` of a live audit's confirmation."""
    plan = options.plan()
    pairs = int(data["pairs_screened"])
    each = plan.alpha_each(pairs)
    covered = round(plan.blackbox_alpha / (2 * each))
    level = each / plan.looks
    problems = _pair_problems(options, pairs, witnesses)
    if witnesses or looks is not None:
        problems += _looks_problems(options, pairs, looks, witnesses, relation, level)
    return level, covered, problems


def _pair_problems(options: AuditOptions, pairs: int, witnesses, where: str = "witnesses"):
    """Witnesses from more pairs than were kept, or more events on one pair than planned."""
    per_pair: dict = {}
    for w in witnesses:
        key = frozenset((tuple(w.counts), tuple(w.counts2)))
        per_pair[key] = per_pair.get(key, 0) + 1
    kept = max(1, min(options.keep, pairs))
    problems = []
    if len(per_pair) > kept:
        problems.append(
            f"{where}: events on {len(per_pair)} pairs, but the plan keeps {kept} "
            f"(keep = {options.keep}, {pairs} pairs screened)"
        )
    most = max(per_pair.values(), default=0)
    if most > options.events_per_pair:
        problems.append(
            f"{where}: {most} events on one pair, but the plan confirms at most "
            f"events_per_pair = {options.events_per_pair}"
        )
    return problems


def _first_sizes(options: AuditOptions, pairs: int, relation) -> set[int]:
    """Every first look size the plan can give: over the histograms kept, for a release of
    items and of real values (``LiveSchedule.confirm_looks``, ``value_looks``)."""
    from dpaudit.auditor.run.budgeting import stage_budgets

    plan = options.plan()
    firsts = set()
    for values in (False, True):
        confirm = stage_budgets(plan, pairs, options, relation, values)["confirm"]
        for histograms in range(1, 2 * plan.keep + 1):
            firsts.add(plan.confirm_schedule(confirm, histograms).first)
        for kept in range(1, plan.keep + 1):
            budget = 2 * kept * (confirm // (2 * kept))
            firsts.add(plan.confirm_schedule(budget, 2 * kept).first)
    return firsts


def _looks_problems(
    options: AuditOptions,
    pairs: int,
    looks,
    witnesses,
    relation,
    level: float,
    where: str = "evidence.confirmation_looks",
) -> list[str]:
    """The looks record against the schedule the plan gives (module docstring)."""
    from dpaudit.auditor.bounds.sequential import LookSchedule
    from dpaudit.auditor.planning.plan import CONFIRM_GROWTH

    plan = options.plan()
    if not isinstance(looks, dict):
        return [
            f"{where}: not recorded; a live audit confirms in looks (evidence.options.looks = "
            f"{plan.looks}) and records them"
        ]
    problems = []
    if "alpha_each_look" not in looks or not values_close(float(looks["alpha_each_look"]), level):
        problems.append(
            f"{where}.alpha_each_look: recorded {short_json(looks.get('alpha_each_look'))}, "
            f"but the options give {short_json(level)}"
        )
    sizes = looks.get("sizes")
    if not (
        isinstance(sizes, list)
        and sizes
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in sizes)
    ):
        return [*problems, f"{where}.sizes: recorded {short_json(sizes)}, not look sizes"]
    if (
        len(sizes) != plan.looks
        or sizes != LookSchedule(sizes[0], CONFIRM_GROWTH, plan.looks).sizes()
    ):
        problems.append(
            f"{where}.sizes: recorded {short_json(sizes)}, not the {plan.looks} looks of the "
            "options (evidence.options.looks), each twice the one before"
        )
    elif sizes[0] not in _first_sizes(options, pairs, relation):
        problems.append(
            f"{where}.sizes: recorded {short_json(sizes)}, not a schedule the options' budget gives "
            f"(evidence.options.samples = {plan.samples}, {pairs} pairs screened)"
        )
    for i, w in enumerate(witnesses):
        if w.samples_p not in sizes or w.samples_q not in sizes:
            problems.append(
                f"witnesses[{i}]: {w.samples_p} and {w.samples_q} samples, not sizes of the "
                f"looks ({where}.sizes)"
            )
            break
    return problems
