"""The audit result's JSON format: its version, the compatibility rule, a canonical digest.

``dpaudit audit --json`` writes ``result.AuditResult.to_dict``; ``dpaudit recheck``
and [`result.AuditResult.from_dict`][dpaudit.auditor.results.result.AuditResult.from_dict] read it back,
possibly years later, with another version of dpaudit. The rule that keeps old files readable (as
dp_accounting's ``dp_event.py`` keeps its events):

* fields of the result, of its witnesses, of its evidence, and event kinds
  ([`events`][dpaudit.auditor.values.outcome_events]) are NEVER removed or renamed, and their meaning never
  changes;
* a new field is optional when read (a file without it is read with a stated default);
* ``FORMAT_VERSION`` is raised by one whenever a field or an event kind is added,
  and a reader refuses a file whose version is newer than its own (it would silently
  drop what it does not know);
* a file without ``format_version`` is version 0 (written before the field existed);
* a field whose absence would change the level ``dpaudit recheck`` recomputes the bounds at is
  required from the version that requires it (its default would hand a file a level it never had):
  an older file without it is refused naming the field, or read with a default the re-check
  states in a note ([`dpaudit.levels`][dpaudit.levels]).

Versions: 1 records ``evidence.options`` (the rerun options); 2 records every option the level
depends on (``samples``, ``alpha``, ``keep``, ``events_per_pair``, ``looks`` and ``refine``,
false when off), and requires them; 3 computes the power per event (each witness's
``detectable_epsilon`` and ``detectable_delta`` at every Q of its interval, its ``q_low``, the
result's ``event_power``; the headline detectable ε is the largest over the events with ε power),
so ``recheck`` of an older file does not compare its power figures and says so in a note; 4 adds
the grey-box δ stage (``evidence.greybox.delta``) and the option its α share depends on,
``evidence.options.grey_delta``, required from 4 (an older file had no stage: off); 5 labels an
event whose pair confirmation left at an earlier look by the power it has at that look (``left``
only when it has none) and takes the headline detectable δ over the events a pass covers, so
``recheck`` of a version 3 or 4 file does not compare the result's power figures (``event_power``,
the headline detectable ε and δ, the verdict and its text) and says so in a note. ``ADDED_FIELDS``
names what each version added and what its absence means, so that a rerun compares an older file
as its version holds the result.

The digest ([`result_digest`][dpaudit.auditor.results.result_format.result_digest]) names a result's
content: the SHA-256 of its canonical JSON (keys sorted, no whitespace, UTF-8) without the fields
that change from run to run of the same audit (``VOLATILE_FIELDS``: the wall-clock time and the
date). Two results with the same digest hold the same evidence.
"""

from __future__ import annotations

import hashlib
import json
import math

__all__ = [
    "ADDED_FIELDS",
    "FORMAT_VERSION",
    "RELATIVE_TOLERANCE",
    "VOLATILE_FIELDS",
    "as_of_version",
    "canonical_json",
    "check_format_version",
    "first_difference",
    "json_float",
    "result_digest",
    "short_json",
    "values_close",
    "without_volatile",
]

#: Version of the result JSON written by this dpaudit (module docstring for the rule).
FORMAT_VERSION = 5

#: Fields a version added, with the value an older file means by leaving them out:
#: ``{version: ((path, default), ...)}`` (a rerun of an older file compares them only when set).
ADDED_FIELDS: dict = {
    2: (("evidence.options.refine", False),),
    3: (),
    4: (("evidence.options.grey_delta", False),),
    5: (),
}

#: Paths (top-level field, or ``evidence.<key>``) that differ between two runs of one audit.
VOLATILE_FIELDS = ("seconds", "evidence.date")


def check_format_version(data: dict) -> int:
    """The ``format_version`` of a result dict (0 when absent); a newer one is refused."""
    version = data.get("format_version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise ValueError(f"format_version must be an integer >= 0, got {version!r}")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"the result has format_version {version}, newer than this dpaudit reads "
            f"({FORMAT_VERSION}); upgrade dpaudit to read it"
        )
    return version


def as_of_version(data: dict, version: int) -> dict:
    """A copy of ``data`` (written now) as a file of ``version`` would hold it: the fields added
    since (``ADDED_FIELDS``) left out where they hold the value their absence means."""
    out = json.loads(json.dumps(data))
    for added, fields in ADDED_FIELDS.items():
        if added <= version:
            continue
        for path, default in fields:
            *parents, name = path.split(".")
            holder = out
            for key in parents:
                holder = holder.get(key) if isinstance(holder, dict) else None
            if isinstance(holder, dict) and name in holder and holder[name] == default:
                del holder[name]
    return out


def without_volatile(data: dict, volatile=VOLATILE_FIELDS) -> dict:
    """A copy of ``data`` without the ``volatile`` paths (``"a"`` or ``"a.b"``)."""
    out = dict(data)
    for path in volatile:
        head, _, tail = path.partition(".")
        if not tail:
            out.pop(head, None)
        elif isinstance(out.get(head), dict):
            out[head] = {k: v for k, v in out[head].items() if k != tail}
    return out


def canonical_json(data: dict) -> str:
    """Keys sorted, no whitespace, non-ASCII kept: one text per value."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def result_digest(data: dict) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``data`` without its volatile fields."""
    body = canonical_json(without_volatile(data)).encode("utf-8")
    return "sha256:" + hashlib.sha256(body).hexdigest()


#: Relative tolerance of a recomputed number against the recorded one (JSON keeps doubles
#: exactly; this only absorbs last-digit differences between library versions).
RELATIVE_TOLERANCE = 1e-9


def values_close(a, b) -> bool:
    """Whether two JSON values are equal, floats within ``RELATIVE_TOLERANCE`` (NaN equals NaN)."""
    if isinstance(a, float) or isinstance(b, float):
        try:
            x, y = float(a), float(b)
        except (TypeError, ValueError):
            return False
        if math.isnan(x) and math.isnan(y):
            return True
        return x == y or math.isclose(x, y, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-300)
    return a == b


def json_float(value: float) -> float | str:
    """``value`` as the result JSON writes a float: ``"inf"`` when it is not finite."""
    return value if math.isfinite(value) else "inf"


def short_json(value) -> str:
    """``value`` as JSON, cut to 60 characters for a message."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def first_difference(recorded, computed, path="", skip=(), label="recomputed") -> str | None:
    """``path: recorded X, <label> Y`` for the first place two JSON values differ, else None.

    Dicts are walked in the recorded key order (then keys only ``computed`` has), lists
    by index; numbers agree within ``RELATIVE_TOLERANCE``. ``skip`` holds paths
    (``"seconds"``, ``"evidence.date"``) left out.
    """
    if path in skip:
        return None
    if isinstance(recorded, dict) and isinstance(computed, dict):
        for key in list(recorded) + [k for k in computed if k not in recorded]:
            sub = f"{path}.{key}" if path else str(key)
            if sub in skip:
                continue
            if key not in computed:
                return f"{sub}: recorded {short_json(recorded[key])}, not in the {label} result"
            if key not in recorded:
                return f"{sub}: not recorded, {label} {short_json(computed[key])}"
            found = first_difference(recorded[key], computed[key], sub, skip, label)
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(computed, list):
        if len(recorded) != len(computed):
            return f"{path}: recorded {len(recorded)} entries, {label} {len(computed)}"
        for i, (a, b) in enumerate(zip(recorded, computed)):
            found = first_difference(a, b, f"{path}[{i}]", skip, label)
            if found:
                return found
        return None
    if isinstance(recorded, bool) != isinstance(computed, bool) or not values_close(
        recorded, computed
    ):
        return f"{path}: recorded {short_json(recorded)}, {label} {short_json(computed)}"
    return None
