"""The audit result's JSON format: its version, the compatibility rule, a canonical digest.

``dpaudit audit --json`` writes :meth:`.result.AuditResult.to_dict`; ``dpaudit recheck``
and :meth:`.result.AuditResult.from_dict` read it back, possibly years later, with another
version of dpaudit. The rule that keeps old files readable (as dp_accounting's
``dp_event.py`` keeps its events):

* fields of the result, of its witnesses, of its evidence, and event kinds
  (:mod:`.events`) are NEVER removed or renamed, and their meaning never changes;
* a new field is optional when read (a file without it is read with a stated default);
* :data:`FORMAT_VERSION` is raised by one whenever a field or an event kind is added,
  and a reader refuses a file whose version is newer than its own (it would silently
  drop what it does not know);
* a file without ``format_version`` is version 0 (written before the field existed).

The digest (:func:`result_digest`) names a result's content: the SHA-256 of its canonical
JSON (keys sorted, no whitespace, UTF-8) without the fields that change from run to run of
the same audit (:data:`VOLATILE_FIELDS`: the wall-clock time and the date). Two results
with the same digest hold the same evidence.
"""

from __future__ import annotations

import hashlib
import json

__all__ = [
    "FORMAT_VERSION",
    "VOLATILE_FIELDS",
    "canonical_json",
    "check_format_version",
    "result_digest",
    "without_volatile",
]

#: Version of the result JSON written by this dpaudit (module docstring for the rule).
FORMAT_VERSION = 1

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
