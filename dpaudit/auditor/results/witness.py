"""One confirmed event of an audit: its pair, its tallies and the bounds they give."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..values.outcome_events import Event, event_from_dict

__all__ = ["Witness"]


def _finite(x):
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _number(x) -> float:
    return float(x)  # float("inf") reads the "inf" that _finite writes


@dataclass(frozen=True, repr=False)
class Witness:
    """One confirmed (pair, event): counts on fresh samples and the bounds they give.

    ``P`` is the event's probability on ``counts``, ``Q`` on ``counts2``. ``event`` is the
    full event ([`dpaudit.auditor.values.outcome_events`][dpaudit.auditor.values.outcome_events]): ``event.to_dict()`` lists every
    outcome, so anyone can recompute its probabilities (``dpaudit recheck``).
    """

    counts: tuple
    counts2: tuple
    event: Event
    hits_p: int
    samples_p: int
    hits_q: int
    samples_q: int
    p_low: float
    q_high: float
    epsilon_lower: float
    delta_lower: float
    family: str = ""
    detectable_epsilon: float = math.inf
    detectable_delta: float = math.inf
    q_low: float = 0.0
    p_high: float = 1.0

    @property
    def p_hat(self) -> float:
        return self.hits_p / self.samples_p if self.samples_p else float("nan")

    @property
    def q_hat(self) -> float:
        return self.hits_q / self.samples_q if self.samples_q else float("nan")

    @property
    def separates(self) -> bool:
        """The intervals do not overlap: the event tells the two histograms apart."""
        return self.p_low > self.q_high

    @property
    def has_epsilon_power(self) -> bool:
        """The event's detectable ε is finite and some mechanism can carry it at every ``Q`` of
        its interval: ``detectable ε <= ln(1 / q_high)`` (``P <= 1`` caps the ratio at ``1 / Q``).
        An event without it is never the source of the headline detectable ε."""
        return math.isfinite(self.detectable_epsilon) and (
            self.q_high <= 0 or self.detectable_epsilon <= -math.log(self.q_high)
        )

    @property
    def epsilon_upper(self) -> float:
        """``ln(p_high / q_low)``: the event's own upper confidence bound on ``ln(P / Q)`` (``inf``
        with no hit on Q). Each side is a one-sided bound at the event's level, so a true ratio
        above it is seen with probability at most twice that level."""
        if self.q_low <= 0.0:
            return math.inf
        return math.log(max(self.p_high, 0.0) / self.q_low) if self.p_high > 0 else -math.inf

    def __repr__(self) -> str:
        # The generated repr printed every field of the event, every edge of a value event's
        # encoder included (thousands of characters); this one names the event as the report does.
        return (
            f"Witness(counts={list(self.counts)}, counts2={list(self.counts2)}, "
            f"event={self.describe_event(limit=3)!r}, hits_p={self.hits_p}/{self.samples_p}, "
            f"hits_q={self.hits_q}/{self.samples_q}, epsilon_lower={self.epsilon_lower:.4g}, "
            f"delta_lower={self.delta_lower:.4g})"
        )

    def describe_event(self, limit: int | None = 5) -> str:
        return self.event.describe(limit=limit)

    def to_dict(self) -> dict:
        return {
            "counts": [int(c) for c in self.counts],
            "counts2": [int(c) for c in self.counts2],
            "family": self.family,
            "event": self.event.to_dict(),
            "event_text": self.describe_event(limit=None),
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
            "detectable_epsilon": _finite(self.detectable_epsilon),
            "detectable_delta": _finite(self.detectable_delta),
            "q_low": self.q_low,
            "p_high": self.p_high,
            "separates": self.separates,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Witness:
        """Rebuild a witness from ``to_dict`` (e.g. from an audit's JSON file)."""
        return cls(
            tuple(data["counts"]),
            tuple(data["counts2"]),
            event_from_dict(data["event"]),
            int(data["hits_p"]),
            int(data["samples_p"]),
            int(data["hits_q"]),
            int(data["samples_q"]),
            float(data["p_low"]),
            float(data["q_high"]),
            _number(data["epsilon_lower"]),
            float(data["delta_lower"]),
            data.get("family", ""),
            _number(data.get("detectable_epsilon", "inf")),
            _number(data.get("detectable_delta", "inf")),
            float(data.get("q_low", 0.0)),
            float(data.get("p_high", 1.0)),
        )
