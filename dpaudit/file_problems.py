"""A result file read against itself and the rebuilt mechanism, before any witness is sampled.

The recorded claim against the rebuilt mechanism's, the copies of the inputs, the grey-box δ
stage's plan (and the stage run again on its pair), the result recomputed from the file's hits
([`dpaudit.consistency`][dpaudit.consistency]) compared field by field, and the power figures of
files older than format version 5, which are not compared but re-judged under the present rule.
"""

from __future__ import annotations

from dpaudit.auditor.results.result_format import first_difference, short_json, values_close
from dpaudit.consistency import copies_disagree, recomputed_result

#: Result fields that carry the audit's power: their meaning changed in format version 3 (per
#: event, at every Q of the event's interval), and a result field, ``event_power``, was added.
_POWER_FIELDS = ("detectable_epsilon", "detectable_delta", "q_low", "p_high")


_POWER_RESULT_FIELDS = (
    "detectable_epsilon",
    "detectable_delta",
    "event_power",
    "power_shortfall",
    "verdict",
    "exit_status",
    "explanation",
)


def _power_fields_of_older_version(data: dict, rebuilt) -> tuple[tuple[str, ...], str | None]:
    """Paths not compared for a file older than format version 5, and the note saying so.

    Bounds, hits and violations are recomputed as before; only the power figures (computed at
    ``Q̂`` and as a minimum over events before version 3; before version 5, an event left at an
    earlier look was ``left`` whatever its power there) are not compared, and the note states
    the verdict the present power rule gives the same evidence.
    """
    version = int(data.get("format_version", 0))
    if version >= 5:
        return (), None
    if version >= 3:
        # Before version 5 an event whose pair was left at an earlier look was "left" whatever
        # its power there, and the headline detectable δ was taken over the events drawn to the
        # end: the witnesses' figures are as before, the result's own are not compared.
        note = (
            f"format version {version}: an event left at an earlier look was labelled 'left' "
            "whatever its power there, so the result's power figures are not compared; under "
            f"the present rule (a left event keeps the power of its own look) it is "
            f"{rebuilt.verdict.upper()}"
        )
        if data.get("verdict") != rebuilt.verdict:
            note += f", not the recorded {str(data.get('verdict')).upper()}"
        return _POWER_RESULT_FIELDS, note
    skip = list(_POWER_RESULT_FIELDS)
    for where in ("epsilon_witness", "delta_witness"):
        skip += [f"{where}.{name}" for name in _POWER_FIELDS]
    for i in range(len(data.get("witnesses") or [])):
        skip += [f"witnesses[{i}].{name}" for name in _POWER_FIELDS]
    note = (
        f"format version {data.get('format_version', 0)}: its power figures were computed at "
        "the observed Q and as a minimum over events, so they are not compared; under the "
        f"present rule (power on every event, at every Q of its interval) it is "
        f"{rebuilt.verdict.upper()}"
    )
    if data.get("verdict") == rebuilt.verdict:
        return tuple(skip), note
    return tuple(skip), note + f", not the recorded {str(data.get('verdict')).upper()}"


def _grey_plan_problems(data: dict, sampler) -> list[str]:
    """``evidence.options.grey_delta`` against what the rebuilt mechanism plans (from version 4):
    the stage's α share is derived from the mechanism and ``black_box``, never from the file."""
    from dpaudit.auditor.greybox.delta_stage import plans_grey_delta

    evidence = data.get("evidence") or {}
    options = evidence.get("options")
    if int(data.get("format_version", 0)) < 4 or "offline" in evidence:
        return []
    if not isinstance(options, dict) or not isinstance(options.get("grey_delta"), bool):
        return []  # dpaudit.levels names a missing or malformed option
    planned = plans_grey_delta(sampler, bool(options.get("black_box", False)))
    if options["grey_delta"] == planned:
        return []
    return [
        f"evidence.options.grey_delta: recorded {str(options['grey_delta']).lower()}, but the "
        f"rebuilt mechanism {'plans' if planned else 'does not plan'} the grey-box δ stage "
        f"(black_box = {str(bool(options.get('black_box', False))).lower()}; "
        "dpaudit.auditor.greybox.delta_stage.plans_grey_delta)"
    ]


def file_problems(data, sampler, claim, relation, notes):
    """``(rebuilt result, level, problems, notes)``: the file read against itself and the
    rebuilt mechanism (claim, copies, the grey-box stage's plan and rerun, the recomputed result)."""
    problems = []
    recorded = data["claim"]
    if not (
        values_close(float(recorded["epsilon"]), float(claim.epsilon))
        and values_close(float(recorded["delta"]), float(claim.delta))
        and recorded["neighbours"] == str(relation)
    ):
        problems.append(
            f"claim: the file records ({recorded['epsilon']:g}, {recorded['delta']:g}), "
            f"{recorded['neighbours']}, but the rebuilt mechanism's claim is "
            f"({claim.epsilon:g}, {claim.delta:g}), {relation}"
        )
    problems += copies_disagree(data)
    problems += _grey_plan_problems(data, sampler)
    rebuilt, level, found = recomputed_result(data, claim, relation)
    problems += found
    if not found:
        problems += grey_rerun_problems(data, sampler, claim, level)
    notes = (*notes, *level.notes)
    skip, power_note = _power_fields_of_older_version(data, rebuilt)
    difference = first_difference(data, rebuilt.to_dict(), skip=("format_version", "claim", *skip))
    if difference:
        problems.append(difference)
    problems += _passes_beyond_the_present_rule(data, rebuilt)
    if power_note:  # before the level's notes, which say how the level was derived
        notes = (*notes[: len(notes) - len(level.notes)], power_note, *level.notes)
    return rebuilt, level, problems, notes


def _passes_beyond_the_present_rule(data: dict, rebuilt) -> list[str]:
    """A version 3-4 file may not record a PASS that the present power rule does not grant.

    Its power figures are not compared (``_power_fields_of_older_version``), but the present rule
    covers every event the old one did and more, so a genuine file of those versions that PASSED
    still PASSES; a file that lowered its ``format_version`` to skip the comparison does not.
    """
    version = int(data.get("format_version", 0))
    if 3 <= version < 5 and data.get("verdict") == "passed" and rebuilt.verdict != "passed":
        return [
            f"the file records PASSED, but its evidence under the present power rule is "
            f"{rebuilt.verdict.upper()}; a file of format version {version} may record no more "
            "than that rule grants (a left event only gained power in version 5)"
        ]
    return []


#: The fields of the grey-box δ stage's record that ``recheck`` compares with the stage run again.
GREY_RERUN_FIELDS = ("items", "runs", "hits", "lower", "estimate", "detectable_delta", "violation")


def grey_rerun_problems(data: dict, sampler, claim, level) -> list[str]:
    """The grey-box δ stage run again on the file's pair, from the audit's seed and budget.

    Its bound rests on weighted runs the file does not hold (only each part's sum), so it is
    re-derived by running the stage, not read: the same mechanism, pair, seed, level and sizes
    give the same record (a few seconds). The pair itself is checked by ``grey_delta_problems``
    (neighbours under the relation); any pair across the declared support's edge bounds δ.
    """
    from dpaudit.auditor.greybox.delta_stage import pair_record, usable

    record = ((data.get("evidence") or {}).get("greybox") or {}).get("delta")
    options = (data.get("evidence") or {}).get("options") or {}
    if not usable(record) or level.grey_alpha <= 0.0:
        return []
    try:
        d, d2 = (tuple(int(c) for c in h) for h in record["pair"])
        again = pair_record(
            sampler,
            d,
            d2,
            claim,
            alpha=level.grey_alpha,
            seed=int(data["seed"]),
            samples=int(options["samples"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        return [f"evidence.greybox.delta: the stage could not run again on its pair ({error!r})"]
    where = "evidence.greybox.delta"
    if not usable(again):
        return [
            f"{where}: recorded a bound, but the stage run again gives none ({short_json(again)})"
        ]
    problems = []
    for name in GREY_RERUN_FIELDS:
        recorded, rerun = record.get(name), again.get(name)
        if isinstance(rerun, float) and isinstance(recorded, (int, float)):
            same = not isinstance(recorded, bool) and values_close(float(recorded), rerun)
        else:
            same = recorded == rerun
        if not same:
            problems.append(
                f"{where}.{name}: recorded {short_json(recorded)}, but the stage run again on its pair "
                f"from seed {data['seed']} gives {short_json(rerun)}"
            )
    return problems
