"""Audit reports: Markdown, and a self-contained HTML page with an embedded plot.

The plot (matplotlib, Agg backend, embedded as a base64 PNG) shows, for every
confirmed event, its estimated probability on both histograms of the pair with
the one-sided confidence bounds used, and the ε lower bound of each event
against the claimed ε.
"""

from __future__ import annotations

import base64
import html
import io

__all__ = ["plot_png", "to_html", "to_markdown", "write_report"]


def _rows(result):
    rows = []
    for i, w in enumerate(result.witnesses, 1):
        rows.append((i, w))
    return rows


def to_markdown(result) -> str:
    """The result as a Markdown document (summary, witness, confirmed events)."""
    lines = [
        f"# Privacy audit: {result.mechanism}",
        "",
        f"- **Verdict:** {result.verdict} (confidence {result.confidence:.4g})",
        f"- **Claim:** ({result.claim_epsilon:.6g}, {result.claim_delta:.6g})-DP, {result.neighbours}",
        f"- **ε lower bound** at δ = {result.claim_delta:.3g}: {result.epsilon_lower:.6g}",
        f"- **δ lower bound** at ε = {result.claim_epsilon:.3g}: {result.delta_lower:.6g}",
        (f"- **Budget:** {result.samples:,} samples in {result.seconds:.2f} s; "
         f"{result.pairs_screened} pairs screened, {result.events_confirmed} events confirmed "
         f"(Bonferroni){'; interrupted, partial result' if result.interrupted else ''}"),
        "",
        "## Confirmed events (fresh samples)",
        "",
        "| # | pair (P on first, Q on second) | event | P hits / n | Q hits / n | P ≥ | Q ≤ | ε ≥ | δ ≥ |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i, w in _rows(result):
        lines.append(
            f"| {i} | {list(w.counts)} vs {list(w.counts2)} | {w.event} | {w.hits_p}/{w.samples_p} | "
            f"{w.hits_q}/{w.samples_q} | {w.p_low:.4g} | {w.q_high:.4g} | {w.epsilon_lower:.4g} | "
            f"{w.delta_lower:.4g} |"
        )
    lines += [
        "",
        ("Bounds: one-sided Clopper–Pearson intervals; ε ≥ ln((P_low − δ)/Q_high), "
         "δ ≥ P_low − e^ε Q_high. A violation is reported only when a bound exceeds the claim."),
        "",
    ]
    return "\n".join(lines)


def plot_png(result) -> bytes:
    """PNG bytes of the two-panel plot (event probabilities; ε bounds vs the claim)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rows = _rows(result)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    if rows:
        xs = range(len(rows))
        ps = [w.p_hat for _, w in rows]
        qs = [w.q_hat for _, w in rows]
        ax1.bar([x - 0.2 for x in xs], ps, width=0.4, label="P (first histogram)")
        ax1.bar([x + 0.2 for x in xs], qs, width=0.4, label="Q (second histogram)")
        ax1.errorbar([x - 0.2 for x in xs], ps, yerr=[[p - w.p_low for p, (_, w) in zip(ps, rows)], [0] * len(rows)],
                     fmt="none", ecolor="k", capsize=3)
        ax1.errorbar([x + 0.2 for x in xs], qs, yerr=[[0] * len(rows), [w.q_high - q for q, (_, w) in zip(qs, rows)]],
                     fmt="none", ecolor="k", capsize=3)
        ax1.set_xticks(list(xs), [f"#{i}" for i, _ in rows])
        ax1.set_yscale("log" if min(qs + ps) > 0 else "linear")
        ax1.legend(fontsize=8)
        eps = [min(w.epsilon_lower, 50.0) for _, w in rows]
        ax2.bar(list(xs), eps, color="tab:red")
        ax2.set_xticks(list(xs), [f"#{i}" for i, _ in rows])
    ax1.set_title("event probabilities (one-sided bounds)")
    ax2.axhline(result.claim_epsilon, color="k", linestyle="--", label=f"claimed ε = {result.claim_epsilon:.3g}")
    ax2.set_title(f"ε lower bounds at δ = {result.claim_delta:.3g}")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()


def to_html(result) -> str:
    """A self-contained HTML page: summary table, events table, embedded PNG plot."""
    png = base64.b64encode(plot_png(result)).decode("ascii")
    e = html.escape
    colour = "#b00020" if result.violation else "#1b5e20"
    rows = "".join(
        f"<tr><td>{i}</td><td>{e(str(list(w.counts)))} vs {e(str(list(w.counts2)))}</td><td>{e(w.event)}</td>"
        f"<td>{w.hits_p}/{w.samples_p}</td><td>{w.hits_q}/{w.samples_q}</td><td>{w.p_low:.4g}</td>"
        f"<td>{w.q_high:.4g}</td><td>{w.epsilon_lower:.4g}</td><td>{w.delta_lower:.4g}</td></tr>"
        for i, w in _rows(result)
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dpaudit: {e(result.mechanism)}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.2em .5em;font-size:.9em}}</style></head><body>
<h1>Privacy audit</h1>
<p><code>{e(result.mechanism)}</code></p>
<p style="font-size:1.3em;color:{colour}"><b>{e(result.verdict)}</b> (confidence {result.confidence:.4g})</p>
<table>
<tr><th>claim</th><td>({result.claim_epsilon:.6g}, {result.claim_delta:.6g})-DP, {e(result.neighbours)}</td></tr>
<tr><th>ε lower bound at δ = {result.claim_delta:.3g}</th><td>{result.epsilon_lower:.6g}</td></tr>
<tr><th>δ lower bound at ε = {result.claim_epsilon:.3g}</th><td>{result.delta_lower:.6g}</td></tr>
<tr><th>budget</th><td>{result.samples:,} samples, {result.seconds:.2f} s, {result.pairs_screened} pairs screened,
{result.events_confirmed} events confirmed{', interrupted' if result.interrupted else ''}</td></tr>
</table>
<h2>Confirmed events</h2>
<table><tr><th>#</th><th>pair</th><th>event</th><th>P hits/n</th><th>Q hits/n</th><th>P ≥</th><th>Q ≤</th>
<th>ε ≥</th><th>δ ≥</th></tr>{rows}</table>
<h2>Plot</h2>
<img alt="event probabilities and epsilon lower bounds" src="data:image/png;base64,{png}">
<p>One-sided Clopper–Pearson bounds, Bonferroni over the confirmed events;
ε ≥ ln((P_low − δ)/Q_high), δ ≥ P_low − e<sup>ε</sup> Q_high.</p>
</body></html>
"""


def write_report(result, path) -> None:
    """Write ``path`` as HTML (``.html``/``.htm``) or Markdown (anything else)."""
    text = to_html(result) if str(path).lower().endswith((".html", ".htm")) else to_markdown(result)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
