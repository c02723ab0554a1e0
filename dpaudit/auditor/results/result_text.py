"""How an [`AuditResult`][dpaudit.auditor.results.result.AuditResult] reads: the text summary, a
one-line repr, the Jupyter table, and the witness shown first.

Kept apart from the result's data ([`result`][dpaudit.auditor.results.result]) so that the record and its
wording change independently; every function takes the result and returns text. The explanation
is [`explanation`][dpaudit.auditor.results.explanation]'s, the power and futility sentences
[`power_text`][dpaudit.auditor.results.power_text]'s, the grey-box ones
[`grey_text`][dpaudit.auditor.results.grey_text]'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .grey_text import grey_box_text, grey_delta_text
from .power_text import futility_text, needed_text
from .witness import Witness

if TYPE_CHECKING:
    from .result import AuditResult

__all__ = [
    "headline_witness",
    "html",
    "refined_text",
    "short_repr",
    "summary_text",
]


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
        lines.append(f"  stopped:    {stopped} (power needs {needed_text(result)})")
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
        rows.append(("stopped", f"{stopped} (power needs {needed_text(result)})"))
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
