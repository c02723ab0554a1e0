"""The one sentence that says what an audit's verdict means and does not mean, and what to try next.

[`AuditResult.explanation`][dpaudit.auditor.results.result.AuditResult.explanation] reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .grey_text import grey_delta_record, witness_violates
from .power_text import events_text, futility_text, needed_text, power_sentence
from .verdicts import PASSED, VIOLATION

if TYPE_CHECKING:
    from .result import AuditResult

__all__ = ["explanation"]


def _curve_name(profile: dict) -> str:
    """A curve claim in words, from its evidence ([`mechanisms.profiles.profile_to_dict`][mechanisms.profiles.profile_to_dict])."""
    if profile.get("kind") == "zcdp":
        return f"{profile['rho']:.4g}-zCDP"
    if profile.get("kind") == "gdp":
        return f"{profile['mu']:.4g}-GDP"
    return "points " + ", ".join(f"({e:.4g}, {d:.3g})" for e, d in profile.get("points", []))


def explanation(result: AuditResult) -> str:
    """One sentence: what the verdict means and does not mean, and what to try next.

    Parameters
    ----------
    result : the audit's result.
    """
    claim = f"({result.claim_epsilon:.4g}, {result.claim_delta:.3g})"
    scope = " on the pairs given" if result.restricted else ""
    if result.verdict == VIOLATION:
        return _violation(result, claim, scope)
    if result.verdict == PASSED:
        covered = len(result.witnesses) - len(result.events_left_early)
        return (
            f"No violation{scope}, and the audit had power on each of the "
            f"{covered} confirmed events it covers: {power_sentence(result)}. "
            "This covers the pairs and events probed, not every pair: use `dpaudit "
            "verify` for exhaustive exact checks on small domains."
        )
    if result.interrupted:
        return (
            f"Inconclusive: no violation found{scope}, but the run was interrupted before "
            f"confirmation finished. {_continue_sentence(result)}"
        )
    return _inconclusive(result, scope)


def _violation(result: AuditResult, claim: str, scope: str) -> str:
    """The sentence of a VIOLATION: of a curve claim, of the grey-box δ stage, or of a witness."""
    curve = (result.evidence or {}).get("claim_curve") or {}
    if curve.get("excess", 0.0) > 0:
        return (
            f"With confidence {result.confidence:.4g} the mechanism does NOT keep its claimed "
            f"curve δ(ε) ({_curve_name(curve['profile'])}): at ε = {curve['epsilon']:.4g} "
            f"witnesses[{curve['witness']}] has P − e^ε Q >= {curve['excess'] + curve['delta_allowed']:.3g}"
            f" > δ(ε) = {curve['delta_allowed']:.3g}{scope}; recompute it with `dpaudit "
            "recheck` or exactly with dpaudit.exact."
        )
    grey = grey_delta_record(result)
    if grey is not None and not witness_violates(result):
        return (
            f"With confidence {result.confidence:.4g} the mechanism is NOT {claim}-DP: on the "
            f"grey-box pair {grey['pair'][0]} vs {grey['pair'][1]} the outcomes holding items "
            f"{grey['items']} have P >= {grey['lower']:.3g} > δ, where the mechanism declares "
            f"Q = 0{scope} (evidence.greybox.delta; the bound rests on that declaration, which "
            "the stage tested); repeat it with `dpaudit recheck --rerun`."
        )
    return (
        f"With confidence {result.confidence:.4g} the mechanism is NOT {claim}-DP: "
        f"the witness event (pair, event and counts in this result) has P >= e^ε Q + δ beyond the claim{scope}; "
        "recompute it with `dpaudit recheck` or exactly with dpaudit.exact."
    )


def _inconclusive(result: AuditResult, scope: str) -> str:
    """The sentence of an INCONCLUSIVE that ran to its end: what lacked, and what to try."""
    chance = f"{result.detection_probability:.0%}"
    if not result.separated:
        reason = (
            "no confirmed event told the two histograms of its pair apart, so the "
            "audit never saw the mechanism's output move"
        )
    elif result.power_shortfall == "epsilon" and result.events_without_power:
        reason = (
            f"it had no power on {events_text(result.events_without_power)}: a true ε above "
            f"{result.power_factor:g} × the claim there would not have been flagged with "
            f"probability {chance} at every Q in the event's interval"
        )
    elif result.power_shortfall == "epsilon":
        reason = (
            f"the smallest violation it could detect (with probability {chance}) was "
            f"ε = {result.detectable_epsilon:.3g}, above {result.power_factor:g} × the claim; "
            f"power needs {needed_text(result)}"
        )
    else:
        return (
            f"Inconclusive for δ: no violation found{scope} and ε had power, but the "
            f"smallest δ it could resolve (with probability {chance}) was "
            f"{result.detectable_delta:.3g}, above {result.power_factor:g} × the claimed "
            f"{result.claim_delta:.3g}; resolving the claimed δ needs {needed_text(result)} (a "
            "larger budget), or accept an ε-only pass explicitly (epsilon_only=True, "
            f"--epsilon-only).{_futility_sentence(result)} {_second_test_sentence(result)}"
        )
    return (
        f"Inconclusive: no violation found{scope}, but {reason}.{_futility_sentence(result)} "
        "Try more samples, other pairs (--counts/--pair near where the output changes), or "
        "`dpaudit verify` for an exact check (no α spent). "
        f"{_second_test_sentence(result)}"
    )


def _second_test_sentence(result: AuditResult) -> str:
    """The α cost of auditing again after an INCONCLUSIVE that ran to its end."""
    return (
        f"Another audit is a second test at level α = {result.alpha:g}: over both, the chance "
        f"of a false VIOLATION is up to 2α = {2 * result.alpha:g}, since it cannot continue "
        "this one (--resume only finishes an interrupted run of the same plan and budget)."
    )


def _continue_sentence(result: AuditResult) -> str:
    """How an interrupted audit is finished as the same test, from its checkpoint if any."""
    stored = ((result.evidence or {}).get("resume") or {}).get("file")
    where = (
        f"; --resume {stored} continues it from the chunks stored there"
        if stored
        else "; --resume FILE (resume= in Python) keeps the chunks drawn if it stops again"
    )
    return (
        "Rerun the same command to finish this same test (same seed and sample budget: the "
        f"result of an uninterrupted run, no α spent again){where}."
    )


def _futility_sentence(result: AuditResult) -> str:
    """`` Confirmation stopped early …`` when it did, else nothing."""
    text = futility_text(result)
    return "" if text is None else f" Confirmation stopped early {text}."
