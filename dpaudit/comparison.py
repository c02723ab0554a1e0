"""What [`dpaudit.compare`][dpaudit.compare] found: one row per (pair, event), and the verdict.

[`Comparison`][dpaudit.comparison.Comparison] is the result of both routes (two stored audits,
or a baseline re-tested on a new mechanism); ``str()`` gives the table ``dpaudit compare``
prints, ``to_dict()`` its ``--json``. Issue 46.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpaudit.auditor.results.witness import Witness
from dpaudit.loss_growth import MIN_CELL, TEST, Tally

__all__ = ["Comparison", "EventChange", "claim_text", "witness_text"]


@dataclass(frozen=True)
class EventChange:
    """One (pair, event) both sides have: the counts of each, the test and its verdict.

    ``old`` and ``new`` are the witnesses as each side has them (a re-test's ``new`` is drawn
    on the baseline's orientation); ``swapped`` says the new side has the pair the other way
    round (its bounds are then for that direction). ``p_value`` is the row's
    [`growth_p_value`][dpaudit.loss_growth.growth_p_value], ``p_adjusted`` it times the number of
    rows (Bonferroni; at most 1); ``worse`` is ``p_adjusted <= alpha``.
    """

    old: Witness
    new: Witness
    swapped: bool
    p_value: float
    p_adjusted: float
    worse: bool

    @property
    def old_tally(self) -> Tally:
        return Tally.of(self.old)

    @property
    def new_tally(self) -> Tally:
        """The new side's counts in the old side's orientation."""
        return Tally.of(self.new, self.swapped)

    @property
    def few_hits(self) -> bool:
        return self.old_tally.few_hits or self.new_tally.few_hits

    def to_dict(self, epsilon: float, delta: float) -> dict:
        old, new = self.old_tally, self.new_tally
        return {
            "counts": [int(c) for c in self.old.counts],
            "counts2": [int(c) for c in self.old.counts2],
            "event": self.old.event.to_dict(),
            "event_text": self.old.describe_event(limit=None),
            "swapped": self.swapped,
            "old": self.old.to_dict(),
            "new": self.new.to_dict(),
            "epsilon_hat_old": _json_number(old.epsilon_hat()),
            "epsilon_hat_new": _json_number(new.epsilon_hat()),
            "delta_hat_old": old.delta_hat(epsilon) if delta > 0 else None,
            "delta_hat_new": new.delta_hat(epsilon) if delta > 0 else None,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "few_hits": self.few_hits,
            "verdict": "worse" if self.worse else "no significant change",
        }


def _json_number(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


@dataclass(frozen=True)
class Comparison:
    """Outcome of [`compare_results`][dpaudit.compare.compare_results] or
    [`compare_with_baseline`][dpaudit.compare.compare_with_baseline].

    ``changes`` holds the matched (pair, event)s, in the old side's order; ``only_old`` and
    ``only_new`` describe the (pair, event)s one side has and the other has not (not tested).
    ``route`` is ``"stored"`` (two files) or ``"re-test"`` (fresh samples of the new
    mechanism; ``seed`` repeats them). Exit status: 0 no significant change, 1 significantly
    worse somewhere, 3 nothing to compare (no matched (pair, event)).
    """

    old_mechanism: str
    new_mechanism: str
    claim_epsilon: float
    claim_delta: float
    neighbours: str
    alpha: float
    route: str
    changes: tuple[EventChange, ...]
    only_old: tuple[str, ...] = ()
    only_new: tuple[str, ...] = ()
    seed: int | None = None
    samples: int = 0
    notes: tuple[str, ...] = ()

    @property
    def worse(self) -> bool:
        """The new side is significantly worse on some matched (pair, event)."""
        return any(c.worse for c in self.changes)

    @property
    def verdict(self) -> str:
        """``"worse"``, ``"no significant change"`` or ``"nothing compared"``."""
        if self.worse:
            return "worse"
        return "no significant change" if self.changes else "nothing compared"

    @property
    def exit_status(self) -> int:
        """0 no significant change, 1 worse, 3 nothing compared (inconclusive)."""
        return {"worse": 1, "no significant change": 0}.get(self.verdict, 3)

    @property
    def smallest_p(self) -> float:
        return min((c.p_adjusted for c in self.changes), default=math.nan)

    @property
    def summary(self) -> str:
        """The one-line verdict that ends the text."""
        count = len(self.changes)
        rows = f"{count} matched (pair, event){'s' if count != 1 else ''}"
        if self.worse:
            worse = sum(c.worse for c in self.changes)
            return (
                f"SIGNIFICANTLY WORSE on {worse} of {rows} (smallest adjusted p = "
                f"{self.smallest_p:.3g} <= alpha {self.alpha:g})"
            )
        if self.changes:
            return (
                f"no significant change ({rows}; smallest adjusted p = {self.smallest_p:.3g} "
                f"> alpha {self.alpha:g})"
            )
        return (
            "nothing compared: no (pair, event) is in both results; re-test the old result's "
            "events on the new mechanism (dpaudit compare OLD.json --mechanism MECH)"
        )

    def __str__(self) -> str:
        return _text(self)

    def __repr__(self) -> str:
        from dpaudit.display import one_line, shorten

        return one_line(
            "Comparison",
            self.verdict.upper(),
            [
                f"{shorten(self.old_mechanism, 40)} -> {shorten(self.new_mechanism, 40)}",
                f"{len(self.changes)} matched ({self.route})",
                f"smallest adjusted p {self.smallest_p:.3g}" if self.changes else "",
            ],
        )

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "worse": self.worse,
            "exit_status": self.exit_status,
            "summary": self.summary,
            "route": self.route,
            "old_mechanism": self.old_mechanism,
            "new_mechanism": self.new_mechanism,
            "claim": {
                "epsilon": self.claim_epsilon,
                "delta": self.claim_delta,
                "neighbours": self.neighbours,
            },
            "alpha": self.alpha,
            "test": TEST,
            "tests": len(self.changes),
            "seed": self.seed,
            "samples": self.samples,
            "changes": [c.to_dict(self.claim_epsilon, self.claim_delta) for c in self.changes],
            "only_old": list(self.only_old),
            "only_new": list(self.only_new),
            "notes": list(self.notes),
        }


def _histogram(counts) -> str:
    return ",".join(str(int(c)) for c in counts)


def witness_text(w: Witness) -> str:
    """``2,1,0 -> 3,1,0: item 1 is output``: a witness's pair and event on one line."""
    return f"{_histogram(w.counts)} -> {_histogram(w.counts2)}: {w.describe_event(limit=3)}"


def claim_text(epsilon: float, delta: float, neighbours: str) -> str:
    """``(1, 0) under add/remove one user``."""
    return f"({epsilon:g}, {delta:g}) under {neighbours}"


# -- text --------------------------------------------------------------------------------------


def _number(x: float, digits: int = 3) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _text(c: Comparison) -> str:
    """The table: one row per matched (pair, event), then the one-line summary."""
    new_side = "re-tested on fresh samples" if c.route == "re-test" else "new"
    lines = [
        f"old: {c.old_mechanism}",
        f"new: {c.new_mechanism} ({new_side})",
        f"claim {claim_text(c.claim_epsilon, c.claim_delta, c.neighbours)}; alpha {c.alpha:g}",
        f"test: {TEST}",
    ]
    if c.seed is not None:
        lines.append(f"fresh samples from seed {c.seed} (repeat with --seed {c.seed})")
    lines += [f"note: {n}" for n in c.notes]
    with_delta = c.claim_delta > 0
    header = ["#", "pair", "event", "ε est. old → new", "ε ≥ old → new"]
    if with_delta:
        header.append("δ ≥ old → new")
    header += ["p (adj.)", "verdict"]
    table = [header]
    for i, change in enumerate(c.changes, 1):
        old, new = change.old_tally, change.new_tally
        row = [
            str(i),
            f"{_histogram(change.old.counts)} -> {_histogram(change.old.counts2)}"
            + (" *" if change.swapped else ""),
            _cut(change.old.describe_event(limit=3), 28),
            f"{_number(old.epsilon_hat())} → {_number(new.epsilon_hat())}",
            f"{_number(change.old.epsilon_lower)} → {_number(change.new.epsilon_lower)}",
        ]
        if with_delta:
            row.append(f"{_number(change.old.delta_lower)} → {_number(change.new.delta_lower)}")
        row += [
            ("~" if change.few_hits else "") + _number(change.p_adjusted),
            "WORSE" if change.worse else "no significant change",
        ]
        table.append(row)
    if c.changes:
        widths = [max(len(r[k]) for r in table) for k in range(len(header))]
        lines.append("")
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in table]
    if any(ch.swapped for ch in c.changes):
        lines.append(
            "* the new audit has this event on the reversed pair: its bounds are for that direction"
        )
    if any(ch.few_hits for ch in c.changes):
        lines.append(f"~ fewer than {MIN_CELL} hits or misses in some sample: p is approximate")
    for side, rows in (("old", c.only_old), ("new", c.only_new)):
        if rows:
            lines.append(f"only in {side} (not compared): " + "; ".join(rows))
    lines.append(f"result: {c.summary}")
    return "\n".join(lines)
