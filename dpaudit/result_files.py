"""An audit result read back: from an ``AuditResult``, its ``to_dict()`` or the JSON file.

Every reader of a result file ([`recheck`][dpaudit.recheck.recheck], ``rerun``, ``compare``, the
CLI) goes through these, so that a file that is not a result is refused in the same words.
"""

from __future__ import annotations

import json

__all__ = ["load_result", "load_result_data", "not_a_result"]


def load_result_data(source) -> dict:
    """The result's JSON dict, from an AuditResult, its ``to_dict()``, or a JSON file path."""
    from dpaudit.auditor import AuditResult

    if isinstance(source, AuditResult):
        return json.loads(source.to_json())
    if isinstance(source, dict):
        return json.loads(json.dumps(source))  # a private copy, as the JSON file would give
    try:
        with open(source, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise ValueError(f"cannot read {source!r}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{source!r} is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{source!r} is not a dpaudit audit result: not a JSON object")
    return data


def load_result(source):
    """An [`AuditResult`][dpaudit.auditor.AuditResult] from itself, its ``to_dict()``, or a JSON file path."""
    from dpaudit.auditor import AuditResult

    if isinstance(source, AuditResult):
        return source
    data = load_result_data(source)
    try:
        return AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as error:
        raise not_a_result(source, error) from None


def not_a_result(source, error: Exception) -> ValueError:
    """The refusal of a file or dict that ``AuditResult.from_dict`` cannot read, in words
    (a missing field is named as such, not as the bare ``KeyError`` text ``'claim'``)."""
    label = source if isinstance(source, str) else "the result"
    reason = f"no field {error.args[0]!r}" if isinstance(error, KeyError) else str(error)
    return ValueError(
        f"{label!r} is not a dpaudit audit result ({reason}); give the JSON that "
        "`dpaudit audit --json FILE` or AuditResult.to_dict() wrote"
    )
