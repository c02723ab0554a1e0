"""The auditor's result: bounds, the witnessing pair and event, the verdict."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

__all__ = ["AuditResult", "Witness"]


@dataclass(frozen=True)
class Witness:
    """One confirmed (pair, event): counts on fresh samples and the bounds they give.

    ``P`` is the event's probability on ``counts``, ``Q`` on ``counts2``.
    """

    counts: tuple
    counts2: tuple
    event: str
    hits_p: int
    samples_p: int
    hits_q: int
    samples_q: int
    p_low: float
    q_high: float
    epsilon_lower: float
    delta_lower: float
    family: str = ""

    @property
    def p_hat(self) -> float:
        return self.hits_p / self.samples_p if self.samples_p else float("nan")

    @property
    def q_hat(self) -> float:
        return self.hits_q / self.samples_q if self.samples_q else float("nan")

    def to_dict(self) -> dict:
        return {
            "counts": list(self.counts),
            "counts2": list(self.counts2),
            "family": self.family,
            "event": self.event,
            "hits_p": self.hits_p,
            "samples_p": self.samples_p,
            "hits_q": self.hits_q,
            "samples_q": self.samples_q,
            "p_hat": self.p_hat,
            "q_hat": self.q_hat,
            "p_low": self.p_low,
            "q_high": self.q_high,
            "epsilon_lower": _finite(self.epsilon_lower),
            "delta_lower": self.delta_lower,
        }


def _finite(x):
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`dpaudit.auditor.audit`.

    ``epsilon_lower`` is a lower bound on the mechanism's ε at the claimed δ,
    ``delta_lower`` on its δ at the claimed ε; both hold together with
    probability >= ``confidence = 1 − alpha`` (Bonferroni over the
    ``events_confirmed`` events bounded on fresh samples). ``violation`` is
    True only when a bound exceeds the claim.
    """

    mechanism: str
    claim_epsilon: float
    claim_delta: float
    neighbours: str
    epsilon_lower: float
    delta_lower: float
    violation: bool
    alpha: float
    epsilon_witness: Witness | None
    delta_witness: Witness | None
    samples: int
    seconds: float
    pairs_screened: int
    events_confirmed: int
    seed: int | None = None
    interrupted: bool = False
    witnesses: tuple = field(default=(), repr=False)

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def verdict(self) -> str:
        return "VIOLATION" if self.violation else "no violation found"

    def __str__(self) -> str:
        lines = [
            f"audit of {self.mechanism}",
            f"  claim:      ({self.claim_epsilon:.6g}, {self.claim_delta:.6g})-DP, {self.neighbours}",
            f"  verdict:    {self.verdict} (confidence {self.confidence:.4g})",
            f"  ε lower bound at δ={self.claim_delta:.3g}: {self.epsilon_lower:.6g}",
            f"  δ lower bound at ε={self.claim_epsilon:.3g}: {self.delta_lower:.6g}",
        ]
        w = self.epsilon_witness
        if w is not None:
            lines += [
                f"  pair:       {list(w.counts)} vs {list(w.counts2)}",
                f"  event:      {w.event}",
                (f"  counts:     {w.hits_p}/{w.samples_p} (P̂={w.p_hat:.4g}, ≥{w.p_low:.4g}) vs "
                 f"{w.hits_q}/{w.samples_q} (Q̂={w.q_hat:.4g}, ≤{w.q_high:.4g})"),
            ]
        d = self.delta_witness
        if d is not None and d is not w and (w is None or d.event != w.event or d.counts != w.counts):
            lines += [
                (f"  δ witness:  {list(d.counts)} vs {list(d.counts2)}, {d.event}: "
                 f"{d.hits_p}/{d.samples_p} vs {d.hits_q}/{d.samples_q}"),
            ]
        lines.append(
            f"  budget:     {self.samples:,} samples, {self.seconds:.2f} s, "
            f"{self.pairs_screened} pairs screened, {self.events_confirmed} events confirmed"
            + (", INTERRUPTED (partial result)" if self.interrupted else "")
        )
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "mechanism": self.mechanism,
            "claim": {"epsilon": self.claim_epsilon, "delta": self.claim_delta, "neighbours": self.neighbours},
            "verdict": self.verdict,
            "violation": self.violation,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "epsilon_lower": _finite(self.epsilon_lower),
            "delta_lower": self.delta_lower,
            "epsilon_witness": None if self.epsilon_witness is None else self.epsilon_witness.to_dict(),
            "delta_witness": None if self.delta_witness is None else self.delta_witness.to_dict(),
            "witnesses": [w.to_dict() for w in self.witnesses],
            "samples": self.samples,
            "seconds": self.seconds,
            "pairs_screened": self.pairs_screened,
            "events_confirmed": self.events_confirmed,
            "seed": self.seed,
            "interrupted": self.interrupted,
        }

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)
