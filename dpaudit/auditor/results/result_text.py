"""How an [`AuditResult`][dpaudit.auditor.results.result.AuditResult] reads: its one-sentence explanation,
the text summary, a one-line repr, the Jupyter table, and the witness shown first.

Kept apart from the result's data ([`result`][dpaudit.auditor.results.result]) so that the record and its
wording change independently; every function takes the result and returns text.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .verdicts import PASSED, VIOLATION
from .witness import Witness

if TYPE_CHECKING:
    from .result import AuditResult

__all__ = [
    "explanation",
    "futility_text",
    "headline_witness",
    "html",
    "refined_text",
    "short_repr",
    "summary_text",
]


def _curve_name(profile: dict) -> str:
    """A curve claim in words, from its evidence ([`mechanisms.profiles.profile_to_dict`][mechanisms.profiles.profile_to_dict])."""
    if profile.get("kind") == "zcdp":
        return f"{profile['rho']:.4g}-zCDP"
    if profile.get("kind") == "gdp":
        return f"{profile['mu']:.4g}-GDP"
    return "points " + ", ".join(f"({e:.4g}, {d:.3g})" for e, d in profile.get("points", []))


def explanation(result: AuditResult) -> str:
    """One sentence: what the verdict means and does not mean, and what to try next."""
    claim = f"({result.claim_epsilon:.4g}, {result.claim_delta:.3g})"
    scope = " on the pairs given" if result.restricted else ""
    curve = (result.evidence or {}).get("claim_curve") or {}
    if result.verdict == VIOLATION and curve.get("excess", 0.0) > 0:
        return (
            f"With confidence {result.confidence:.4g} the mechanism does NOT keep its claimed "
            f"curve δ(ε) ({_curve_name(curve['profile'])}): at ε = {curve['epsilon']:.4g} "
            f"witnesses[{curve['witness']}] has P − e^ε Q >= {curve['excess'] + curve['delta_allowed']:.3g}"
            f" > δ(ε) = {curve['delta_allowed']:.3g}{scope}; recompute it with `dpaudit "
            "recheck` or exactly with dpaudit.exact."
        )
    grey = _grey_delta(result)
    if result.verdict == VIOLATION and grey is not None and not _witness_violates(result):
        return (
            f"With confidence {result.confidence:.4g} the mechanism is NOT {claim}-DP: on the "
            f"grey-box pair {grey['pair'][0]} vs {grey['pair'][1]} the outcomes holding items "
            f"{grey['items']} have P >= {grey['lower']:.3g} > δ, where the mechanism declares "
            f"Q = 0{scope} (evidence.greybox.delta; the bound rests on that declaration, which "
            "the stage tested); repeat it with `dpaudit recheck --rerun`."
        )
    if result.verdict == VIOLATION:
        return (
            f"With confidence {result.confidence:.4g} the mechanism is NOT {claim}-DP: "
            f"the witness event (pair, event and counts in this result) has P >= e^ε Q + δ beyond the claim{scope}; "
            "recompute it with `dpaudit recheck` or exactly with dpaudit.exact."
        )
    chance = f"{result.detection_probability:.0%}"
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
    if not result.separated:
        reason = (
            "no confirmed event told the two histograms of its pair apart, so the "
            "audit never saw the mechanism's output move"
        )
    elif result.power_shortfall == "epsilon" and result.events_without_power:
        reason = (
            f"it had no power on {_events(result.events_without_power)}: a true ε above "
            f"{result.power_factor:g} × the claim there would not have been flagged with "
            f"probability {chance} at every Q in the event's interval"
        )
    elif result.power_shortfall == "epsilon":
        reason = (
            f"the smallest violation it could detect (with probability {chance}) was "
            f"ε = {result.detectable_epsilon:.3g}, above {result.power_factor:g} × the claim; "
            f"power needs {_needed(result)}"
        )
    else:
        return (
            f"Inconclusive for δ: no violation found{scope} and ε had power, but the "
            f"smallest δ it could resolve (with probability {chance}) was "
            f"{result.detectable_delta:.3g}, above {result.power_factor:g} × the claimed "
            f"{result.claim_delta:.3g}; resolving the claimed δ needs {_needed(result)} (a "
            "larger budget), or accept an ε-only pass explicitly (epsilon_only=True, "
            f"--epsilon-only).{_futility_sentence(result)} {_second_test_sentence(result)}"
        )
    return (
        f"Inconclusive: no violation found{scope}, but {reason}.{_futility_sentence(result)} "
        "Try more samples, other pairs (--counts/--pair near where the output changes), or "
        "`dpaudit verify` for an exact check (no α spent). "
        f"{_second_test_sentence(result)}"
    )


def _events(indices) -> str:
    """``witnesses[0, 2]``: the confirmed events by their index in the result."""
    return f"witnesses[{', '.join(str(i) for i in indices)}]"


def power_sentence(result: AuditResult) -> str:
    """What a pass covers, event by event, in the words of
    [`AuditResult.event_power`][dpaudit.auditor.results.result.AuditResult.event_power]: the text, the
    HTML report and ``assert_private`` all use this sentence."""
    chance = f"{result.detection_probability:.0%}"
    labels = result.event_power
    of = {kind: [i for i, label in enumerate(labels) if label == kind] for kind in set(labels)}
    parts = []
    if of.get("epsilon"):
        parts.append(
            f"at every Q in the event's confidence interval it would have flagged, with "
            f"probability {chance}, a true ε of {result.detectable_epsilon:.3g} or more "
            f"(<= {result.power_factor:g} × the claim) on {_events(of['epsilon'])}"
        )
    delta_events = of.get("delta", [])
    if delta_events:
        worst = max(result.witnesses[i].detectable_delta for i in delta_events)
        parts.append(
            f"a true δ of {worst:.3g} or more at ε (<= {result.power_factor:g} × the claimed δ) "
            f"on {_events(delta_events)}"
        )
    if of.get("bounded"):
        parts.append(
            f"no mechanism can carry a true ε above {result.power_factor:g} × the claim on "
            f"{_events(of['bounded'])} (Q is too large there)"
        )
    if of.get("below"):
        parts.append(
            f"the event's own confidence bounds put its ε at most {result.power_factor:g} × the "
            f"claim on {_events(of['below'])}"
        )
    if of.get("left"):
        parts.append(
            f"not covered: {_events(of['left'])}, whose pairs confirmation left at an earlier "
            "look for pairs nearer the claim (fewer samples), without power or bounds there"
        )
    if result.claim_delta > 0 and not result.delta_resolved:
        parts.append(
            f"ε only, as asked: it could resolve a δ of {result.detectable_delta:.3g}, "
            f"not the claimed {result.claim_delta:.3g}"
        )
    elif (grey := _grey_delta(result)) is not None and float(grey["detectable_delta"]) <= min(
        (w.detectable_delta for w in result.witnesses), default=math.inf
    ):
        parts.append(
            f"a true δ of {result.detectable_delta:.3g} or more at ε on the grey-box pair "
            "(evidence.greybox.delta)"
        )
    elif (
        result.claim_delta > 0
        and not delta_events
        and len(of.get("left", [])) < len(result.witnesses)
    ):
        # The headline detectable δ is the smallest over the covered events: name one of them.
        left = set(of.get("left", []))
        covered = [i for i in range(len(result.witnesses)) if i not in left]
        best = min(covered, key=lambda i: result.witnesses[i].detectable_delta)
        parts.append(f"a true δ of {result.detectable_delta:.3g} or more at ε on {_events([best])}")
    return "; ".join(parts)


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


def _needed(result: AuditResult) -> str:
    """The budget power needs, in words ([`result.AuditResult.samples_for_power`][dpaudit.auditor.results.result.AuditResult.samples_for_power])."""
    needed = result.samples_for_power
    return f"roughly {needed:.2g} samples" if math.isfinite(needed) else "far more samples"


def futility_text(result: AuditResult) -> str | None:
    """Where and why confirmation stopped for futility ([`futility`][dpaudit.auditor.confirm.futility]), or None."""
    record = result.futility
    if record is None:
        return None
    looks = len(((result.evidence or {}).get("confirmation_looks") or {}).get("sizes", []))
    return (
        f"for futility after look {int(record['look']) + 1} of {looks}: the looks ahead "
        f"could flag no event going on (probability <= {record['flag_chance']:g} even at its "
        f"confidence limits), and even the last look would have left {_LACKING[record['lacking']]}"
    )


# What a pass would still lack, as futility records it (futility.Futility.lacking).
_LACKING = {
    "epsilon": "an event with neither ε power nor bounds below the power factor × the claim",
    "delta": "δ short of power",
    "separation": "no event telling its two histograms apart",
}


def _futility_sentence(result: AuditResult) -> str:
    text = futility_text(result)
    return "" if text is None else f" Confirmation stopped early {text}."


def summary_text(result: AuditResult) -> str:
    lines = [
        f"audit of {result.mechanism}",
        f"  claim:      ({result.claim_epsilon:.6g}, {result.claim_delta:.6g})-DP, {result.neighbours}",
        f"  verdict:    {result.verdict.upper()} (confidence {result.confidence:.4g})",
        f"  ε lower bound at δ={result.claim_delta:.3g}: {result.epsilon_lower:.6g}",
        f"  δ lower bound at ε={result.claim_epsilon:.3g}: {result.delta_lower:.6g}",
        (
            f"  detectable: a true ε >= {result.detectable_epsilon:.4g} or δ >= "
            f"{result.detectable_delta:.4g} would have been flagged "
            f"(probability {result.detection_probability:.0%})"
            + (", ε-only pass accepted" if result.epsilon_only else "")
        ),
    ]
    w = result.headline_witness
    if w is not None:
        score = _score_text(w.event)
        lines += [
            f"  pair:       {list(w.counts)} vs {list(w.counts2)}  ({w.family})",
            f"  event:      {w.describe_event()}",
            *([f"  score:      {score}"] if score else []),
            (
                f"  counts:     {w.hits_p}/{w.samples_p} (P̂={w.p_hat:.4g}, ≥{w.p_low:.4g}) vs "
                f"{w.hits_q}/{w.samples_q} (Q̂={w.q_hat:.4g}, ≤{w.q_high:.4g})"
            ),
        ]
    if (refined := refined_text(result)) is not None:
        lines.append(f"  refined:    {refined}")
    if (stopped := futility_text(result)) is not None:
        lines.append(f"  stopped:    {stopped} (power needs {_needed(result)})")
    d = result.delta_witness
    if d is not None and d is not w and (w is None or d.event != w.event or d.counts != w.counts):
        lines += [
            (
                f"  δ witness:  {list(d.counts)} vs {list(d.counts2)}, {d.describe_event()}: "
                f"{d.hits_p}/{d.samples_p} vs {d.hits_q}/{d.samples_q}"
            ),
        ]
    lines.append(
        f"  budget:     {result.samples:,} samples"
        + (
            f" (of {result.samples_requested:,} asked)"
            if result.samples_requested is not None
            else ""
        )
        + f", {result.seconds:.2f} s, "
        f"{result.pairs_screened} pairs screened, {result.events_confirmed} events confirmed, "
        f"seed {result.seed}"
        + (", restricted to the pairs given" if result.restricted else "")
        + (", INTERRUPTED (partial result)" if result.interrupted else "")
    )
    if (grey := grey_box_text(result)) is not None:
        lines.append(f"  grey box:   {grey}")
    if (grey_delta := grey_delta_text(result)) is not None:
        lines.append(f"  grey box δ: {grey_delta}")
    lines.append(f"  meaning:    {result.explanation}")
    return "\n".join(lines)


def grey_box_text(result: AuditResult) -> str | None:
    """The grey-box scan's sentence ([`greybox.scan`][dpaudit.auditor.greybox.scan]), or None
    when the result records none (offline audits, older files)."""
    from ..greybox.scan import GreyBoxScan

    recorded = (result.evidence or {}).get("greybox")
    if not recorded:
        return None
    return GreyBoxScan.from_dict(recorded).sentence(result.claim_epsilon)


def _grey_delta(result: AuditResult) -> dict | None:
    """The grey-box δ stage's record when it holds a bound
    ([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]), else None."""
    from ..greybox.delta_stage import usable

    record = ((result.evidence or {}).get("greybox") or {}).get("delta")
    return record if usable(record) else None


def _witness_violates(result: AuditResult) -> bool:
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


def headline_witness(result: AuditResult) -> Witness | None:
    """The witness shown first: the ε witness, or a readable one that also violates.

    A value audit's strongest event may read its learned score (a fitted linear
    combination of values and items); when some event a person can read (a value or an
    item above or below an edge) also violates the claim, the most violating of those is
    the headline. Otherwise the ε witness is, and ``__str__`` shows the score's weights.
    """
    w = result.epsilon_witness
    if w is None or not _reads_learned_score(w.event):
        return w
    readable = [
        x
        for x in result.witnesses
        if not _reads_learned_score(x.event)
        and (x.epsilon_lower > result.claim_epsilon or x.delta_lower > result.claim_delta)
    ]
    return max(readable, key=lambda x: (x.epsilon_lower, x.delta_lower), default=w)


def short_repr(result: AuditResult) -> str:
    """One line: verdict, mechanism, claim, bound, budget and the headline witness."""
    from dpaudit.display import one_line, shorten

    w = result.headline_witness
    return one_line(
        "AuditResult",
        result.verdict.upper(),
        [
            shorten(result.mechanism, 60),
            f"claim ({result.claim_epsilon:.4g}, {result.claim_delta:.3g})",
            f"ε ≥ {result.epsilon_lower:.4g} at confidence {result.confidence:.4g}",
            f"{result.samples:,} samples",
            None
            if w is None
            else f"witness {list(w.counts)} vs {list(w.counts2)}: "
            + shorten(w.describe_event(), 60),
        ],
    )


def html(result: AuditResult) -> str:
    """A table for Jupyter: the verdict in colour, the bounds, the headline witness."""
    from dpaudit.display import html_table

    w = result.headline_witness
    rows = [
        (
            "claim",
            f"({result.claim_epsilon:.6g}, {result.claim_delta:.6g})-DP, {result.neighbours}",
        ),
        (f"ε lower bound at δ={result.claim_delta:.3g}", f"{result.epsilon_lower:.6g}"),
        (f"δ lower bound at ε={result.claim_epsilon:.3g}", f"{result.delta_lower:.6g}"),
        ("detectable ε", f"{result.detectable_epsilon:.4g}"),
        (f"detectable δ at ε={result.claim_epsilon:.3g}", f"{result.detectable_delta:.4g}"),
        ("confidence", f"{result.confidence:.4g}"),
    ]
    if w is not None:
        rows += [
            ("pair", f"{list(w.counts)} vs {list(w.counts2)} ({w.family})"),
            ("event", w.describe_event()),
            ("score", _score_text(w.event)),
            ("counts", f"{w.hits_p}/{w.samples_p} vs {w.hits_q}/{w.samples_q}"),
        ]
    if (refined := refined_text(result)) is not None:
        rows.append(("refined", refined))
    if (stopped := futility_text(result)) is not None:
        rows.append(("stopped", f"{stopped} (power needs {_needed(result)})"))
    rows.append(
        (
            "budget",
            f"{result.samples:,} samples, {result.seconds:.2f} s, {result.pairs_screened} pairs "
            f"screened, {result.events_confirmed} events confirmed, seed {result.seed}",
        )
    )
    if (grey_delta := grey_delta_text(result)) is not None:
        rows.append(("grey box δ", grey_delta))
    return html_table(
        f"audit of {result.mechanism}", result.verdict.upper(), rows, result.explanation
    )


def refined_text(result: AuditResult) -> str | None:
    """What chose a refined audit's witness (``evidence["refine"]``, [`refine`][dpaudit.auditor.run.refine])."""
    first = (result.evidence or {}).get("refine")
    if not first:
        return None
    verdict = "a violation" if first.get("violation") else "no violation"
    return (
        f"witness chosen by a first audit of {first['samples']:,} samples ({verdict}, ε >= "
        f"{first['epsilon_lower']:.4g} over {first['events_confirmed']} events, not counted); "
        f"bounds from {first['samples_per_side']:,} fresh samples per side at the full α; "
        "verdict, bounds and power are this one event's"
    )


def _reads_learned_score(event) -> bool:
    """The event is over a value audit's learned score, which only its weights explain."""
    from ..values import VIEW_SCORE, ValueRegion, ValueThreshold

    if isinstance(event, ValueThreshold):
        return event.column < 0
    return isinstance(event, ValueRegion) and event.view == VIEW_SCORE


def _score_text(event, limit: int = 4) -> str:
    """``learned score = +1.2·value 1 − 0.8·[item 3 at 1] …`` for an event over the score."""
    if not _reads_learned_score(event) or event.encoder.score is None:
        return ""
    from mechanisms import BOTTOM

    encoder, score = event.encoder, event.encoder.score
    names = [f"value {j + 1}" for j in range(encoder.value_width)]
    names += [f"value {j + 1} missing" for j in range(encoder.value_width)]
    names += [
        f"[{'⊥' if item == BOTTOM else f'item {item}'} at {position + 1}]"
        for position in range(encoder.width)
        for item in score.vocabulary
    ]
    # Weight per raw feature: the score is Σ w · (x − mean) / scale.
    terms = sorted(
        ((w / s, name) for w, s, name in zip(score.weights, score.scales, names) if w != 0),
        key=lambda term: -abs(term[0]),
    )
    shown = " ".join(
        f"{'+' if weight >= 0 else '−'}{abs(weight):.3g}·{name}" for weight, name in terms[:limit]
    )
    more = f" … ({len(terms)} terms)" if len(terms) > limit else ""
    return f"learned score = {shown}{more} + constant"
