"""The grey-box stages of a result in words: the scan's sentence and the δ stage's bound.

Read from the result's ``evidence["greybox"]`` ([`greybox.scan`][dpaudit.auditor.greybox.scan],
[`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .result import AuditResult

__all__ = ["grey_box_text", "grey_delta_record", "grey_delta_text", "witness_violates"]


def grey_box_text(result: AuditResult) -> str | None:
    """The grey-box scan's sentence ([`greybox.scan`][dpaudit.auditor.greybox.scan]), or None
    when the result records none (offline audits, older files)."""
    from ..greybox.scan import GreyBoxScan

    recorded = (result.evidence or {}).get("greybox")
    if not recorded:
        return None
    return GreyBoxScan.from_dict(recorded).sentence(result.claim_epsilon)


def grey_delta_record(result: AuditResult) -> dict | None:
    """The grey-box δ stage's record when it holds a bound
    ([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]), else None."""
    from ..greybox.delta_stage import usable

    record = ((result.evidence or {}).get("greybox") or {}).get("delta")
    return record if usable(record) else None


def witness_violates(result: AuditResult) -> bool:
    return any(
        w.delta_lower > result.claim_delta and w.epsilon_lower > result.claim_epsilon
        for w in result.witnesses
    )


def grey_delta_text(result: AuditResult) -> str | None:
    """The grey-box δ stage's sentence (the result's ``grey box δ:`` line), or None when the
    result records no stage."""
    record = ((result.evidence or {}).get("greybox") or {}).get("delta")
    if not isinstance(record, dict):
        return None
    error = record.get("declaration_error")
    if error is not None:
        return (
            f"NOT USED, the mechanism's declared output support is FALSE: {error['text']}. "
            "The sampled bounds alone decide the verdict"
        )
    if "lower" not in record:
        return f"not run ({record.get('skipped', 'unknown')})"
    level = 1.0 - float(record["alpha"])
    return (
        f"P >= {float(record['lower']):.4g} (at {level:.4g}) for outcomes holding items "
        f"{record['items']} on {record['pair'][0]} vs {record['pair'][1]}, where the declared "
        f"support gives Q = 0: δ >= that at ε = {result.claim_epsilon:.3g}; detectable δ "
        f"{float(record['detectable_delta']):.4g}; {record['runs']:,} importance-sampled runs "
        f"(+{record['pilot_runs']:,} pilot, {record['check_runs']:,} checking the declaration), "
        f"seed stream {record['seed_key']}"
    )
