"""Audit reports that stand as evidence: Markdown, and a self-contained HTML page.

Both say what was audited and how (claim, relation, seed, α, versions, command line,
date, engine), the verdict with the one sentence of what it means, and every confirmed
event in full — its pair, the family the pair came from, the complete list of outcomes —
with the row that gives the headline bound marked. The HTML page embeds a plot
(matplotlib, Agg, base64 PNG): each event's probabilities with their one-sided bounds
(P from below, Q from above), and each event's ε lower bound, coloured by whether it
exceeds the claim.
"""

from __future__ import annotations

import base64
import html
import io
from typing import cast

__all__ = ["plot_png", "to_html", "to_markdown", "write_report"]


def _headline(result, witness) -> str:
    marks = []
    if witness is result.epsilon_witness:
        marks.append("ε")
    if witness is result.delta_witness:
        marks.append("δ")
    return "headline " + "+".join(marks) if marks else ""


def _event_power_text(result) -> str:
    """The pass sentence's words for what each confirmed event covers (the text's own)."""
    from dpaudit.auditor.results.power_text import power_sentence

    missing = result.events_without_power
    if missing:
        return f"no power on witnesses[{', '.join(map(str, missing))}]" + (
            f"; {power_sentence(result)}" if len(missing) < len(result.witnesses) else ""
        )
    return power_sentence(result) or "no confirmed event"


def _power_facts(result) -> list[tuple[str, str]]:
    """The detectable ε and δ at the audit's power, and the power per event."""
    return [
        (
            "detectable ε (power)",
            (
                f"{result.detectable_epsilon:.4g} at probability "
                f"{result.detection_probability:.0%} (pass needs <= {result.power_factor:g} × claim)"
            ),
        ),
        ("power per event", _event_power_text(result)),
        (
            "detectable δ (power)",
            (
                f"{result.detectable_delta:.4g} at ε = {result.claim_epsilon:.3g}"
                + (", ε-only pass accepted" if result.epsilon_only else "")
                + (
                    f" (pass needs <= {result.power_factor:g} × claim)"
                    if result.claim_delta > 0 and not result.epsilon_only
                    else ""
                )
            ),
        ),
    ]


def _budget_text(result) -> str:
    """Samples (of those asked), seconds and pairs screened, and how the audit was bounded."""
    return (
        f"{result.samples:,} samples"
        + (
            f" (of {result.samples_requested:,} asked)"
            if result.samples_requested is not None
            else ""
        )
        + f", {result.seconds:.2f} s, "
        f"{result.pairs_screened} pairs screened"
        + (", restricted to the pairs given" if result.restricted else "")
        + (", INTERRUPTED" if result.interrupted else "")
    )


def _evidence_facts(result, evidence: dict) -> list[tuple[str, str]]:
    """The refinement, command line and catalog bug, when the evidence records them."""
    facts: list[tuple[str, str]] = []
    if evidence.get("refine"):
        from dpaudit.auditor.results.result_text import refined_text

        # refined_text is None only for a result without a refinement, not the case here
        facts.append(("refined", cast(str, refined_text(result))))
    if evidence.get("command"):
        facts.append(("command line", evidence["command"]))
    catalog = evidence.get("catalog")
    if catalog:
        facts.append(
            (
                "catalog bug",
                (f"{catalog.get('name')}: {catalog.get('bug')} ({catalog.get('reference', '')})"),
            )
        )
    return facts


def _facts(result) -> list[tuple[str, str]]:
    evidence = result.evidence or {}
    versions = evidence.get("versions", {})
    return [
        ("claim", f"({result.claim_epsilon:.6g}, {result.claim_delta:.6g})-DP"),
        ("neighbour relation", result.neighbours),
        ("ε lower bound at δ = " + f"{result.claim_delta:.3g}", f"{result.epsilon_lower:.6g}"),
        ("δ lower bound at ε = " + f"{result.claim_epsilon:.3g}", f"{result.delta_lower:.6g}"),
        *_power_facts(result),
        (
            "confidence",
            (
                f"{result.confidence:.4g} (α = {result.alpha:g}, Bonferroni over "
                f"{result.events_confirmed} events)"
            ),
        ),
        ("budget", _budget_text(result)),
        ("seed", str(result.seed)),
        ("engine", str(evidence.get("engine", ""))),
        ("versions", ", ".join(f"{k} {v}" for k, v in versions.items())),
        ("date", str(evidence.get("date", ""))),
        *_evidence_facts(result, evidence),
    ]


def to_markdown(result) -> str:
    """The result as a Markdown document: facts, verdict, every confirmed event in full."""
    lines = [
        f"# Privacy audit: {result.mechanism}",
        "",
        f"**Verdict: {result.verdict.upper()}** — {result.explanation}",
        "",
    ]
    lines += [f"- **{name}:** {value}" for name, value in _facts(result)]
    lines += [
        "",
        "## Confirmed events (fresh samples)",
        "",
        (
            "| # | row | pair (P on first, Q on second) | family | event | P hits / n | Q hits / n "
            "| P ≥ | Q ≤ | ε ≥ | δ ≥ |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, w in enumerate(result.witnesses, 1):
        lines.append(
            f"| {i} | {_headline(result, w)} | {list(w.counts)} vs {list(w.counts2)} | {w.family} | "
            f"{w.describe_event(limit=None)} | {w.hits_p}/{w.samples_p} | {w.hits_q}/{w.samples_q} | "
            f"{w.p_low:.4g} | {w.q_high:.4g} | {w.epsilon_lower:.4g} | {w.delta_lower:.4g} |"
        )
    lines += [
        "",
        (
            "Bounds: one-sided Clopper–Pearson intervals (statsmodels); ε ≥ ln((P_low − δ)/Q_high), "
            "δ ≥ P_low − e^ε Q_high. A violation is reported only when a bound exceeds the claim. "
            "`dpaudit recheck` recomputes every event from the JSON result."
        ),
        "",
    ]
    return "\n".join(lines)


#: Legends go under the x-axis label, where no bar or whisker can be (inside the axes they
#: covered the tallest bar).
_LEGEND_BELOW = {"fontsize": 8, "loc": "upper center", "bbox_to_anchor": (0.5, -0.2), "ncol": 2}


def _probability_bars(ax, rows, xs, labels) -> None:
    """P̂ and Q̂ of each confirmed event, whiskers to their one-sided bounds, on ``ax``."""
    ps = [w.p_hat for _, w in rows]
    qs = [w.q_hat for _, w in rows]
    ax.bar([x - 0.2 for x in xs], ps, width=0.4, label="P̂ on first histogram", color="tab:blue")
    ax.bar([x + 0.2 for x in xs], qs, width=0.4, label="Q̂ on second histogram", color="tab:orange")
    # One-sided bounds: P is bounded from below, Q from above.
    ax.errorbar(
        [x - 0.2 for x in xs],
        ps,
        yerr=[[max(p - w.p_low, 0) for p, (_, w) in zip(ps, rows)], [0] * len(rows)],
        fmt="none",
        ecolor="k",
        capsize=3,
        lolims=False,
    )
    ax.errorbar(
        [x + 0.2 for x in xs],
        qs,
        yerr=[[0] * len(rows), [max(w.q_high - q, 0) for q, (_, w) in zip(qs, rows)]],
        fmt="none",
        ecolor="k",
        capsize=3,
    )
    ax.set_xticks(xs, labels)
    positive = [v for v in ps + qs if v > 0]
    if positive and min(ps + qs) > 0:
        ax.set_yscale("log")
    ax.legend(**_LEGEND_BELOW)


def plot_png(result) -> bytes:
    """PNG bytes of the two-panel plot (event probabilities; ε bounds against the claim)."""
    # A Figure made directly (not through pyplot) renders with Agg into the buffer and
    # leaves the caller's backend alone (inline plots in a notebook keep working).
    from matplotlib.figure import Figure

    rows = list(enumerate(result.witnesses, 1))
    fig = Figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    if rows:
        xs = list(range(len(rows)))
        labels = [f"#{i}" + ("*" if _headline(result, w) else "") for i, w in rows]
        _probability_bars(ax1, rows, xs, labels)
        eps = [min(w.epsilon_lower, 50.0) for _, w in rows]
        colours = [
            "#b00020" if w.epsilon_lower > result.claim_epsilon else "#1b5e20" for _, w in rows
        ]
        ax2.bar(xs, eps, color=colours)
        ax2.set_xticks(xs, labels)
    ax1.set_xlabel("confirmed event (* = headline)")
    ax1.set_ylabel("probability (whisker: one-sided bound)")
    ax1.set_title("P from below, Q from above")
    ax2.axhline(
        result.claim_epsilon,
        color="k",
        linestyle="--",
        label=f"claimed ε = {result.claim_epsilon:.3g}",
    )
    ax2.set_xlabel("confirmed event (* = headline)")
    ax2.set_ylabel(f"ε lower bound at δ = {result.claim_delta:.3g}")
    ax2.set_title("red: exceeds the claim")
    ax2.legend(**_LEGEND_BELOW)
    fig.tight_layout()
    buffer = io.BytesIO()
    # bbox_inches="tight" keeps the legends, which sit below the axes, inside the picture.
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def to_html(result) -> str:
    """A self-contained HTML page: verdict, facts, every event in full, embedded PNG plot."""
    png = base64.b64encode(plot_png(result)).decode("ascii")
    e = html.escape
    colour = {"violation": "#b00020", "passed": "#1b5e20"}.get(result.verdict, "#8a6d00")
    facts = "".join(
        f"<tr><th>{e(name)}</th><td>{e(value)}</td></tr>" for name, value in _facts(result)
    )
    rows = []
    for i, w in enumerate(result.witnesses, 1):
        headline = _headline(result, w)
        style = ' style="background:#fff3cd"' if headline else ""
        rows.append(
            f"<tr{style}><td>{i}</td><td>{e(headline)}</td>"
            f"<td>{e(str(list(w.counts)))} vs {e(str(list(w.counts2)))}</td><td>{e(w.family)}</td>"
            f"<td><details><summary>{e(w.describe_event())}</summary>"
            f"<code>{e(w.describe_event(limit=None))}</code></details></td>"
            f"<td>{w.hits_p}/{w.samples_p}</td><td>{w.hits_q}/{w.samples_q}</td><td>{w.p_low:.4g}</td>"
            f"<td>{w.q_high:.4g}</td><td>{w.epsilon_lower:.4g}</td><td>{w.delta_lower:.4g}</td></tr>"
        )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dpaudit: {e(result.mechanism)}</title>
<style>body{{font-family:sans-serif;max-width:70em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.2em .5em;font-size:.9em;text-align:left}}</style></head><body>
<h1>Privacy audit</h1>
<p><code>{e(result.mechanism)}</code></p>
<p style="font-size:1.3em;color:{colour}"><b>{e(result.verdict.upper())}</b></p>
<p>{e(result.explanation)}</p>
<table>{facts}</table>
<h2>Confirmed events</h2>
<p>The highlighted rows give the headline bounds. Click an event for its full list of outcomes.</p>
<table><tr><th>#</th><th>row</th><th>pair (P on first, Q on second)</th><th>family</th><th>event</th>
<th>P hits/n</th><th>Q hits/n</th><th>P ≥</th><th>Q ≤</th><th>ε ≥</th><th>δ ≥</th></tr>{"".join(rows)}</table>
<h2>Plot</h2>
<img alt="event probabilities with one-sided bounds, and epsilon lower bounds against the claim"
 src="data:image/png;base64,{png}">
<p>One-sided Clopper–Pearson bounds (statsmodels), Bonferroni over the confirmed events;
ε ≥ ln((P_low − δ)/Q_high), δ ≥ P_low − e<sup>ε</sup> Q_high. <code>dpaudit recheck</code>
recomputes every event from the JSON result.</p>
</body></html>
"""


def write_report(result, path) -> None:
    """Write ``path`` as HTML (``.html``/``.htm``) or Markdown (anything else)."""
    text = to_html(result) if str(path).lower().endswith((".html", ".htm")) else to_markdown(result)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
