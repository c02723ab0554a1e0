"""The auditor's result: bounds, the witnessing pairs and events, the verdict and its power.

Three verdicts (exit statuses of ``dpaudit audit`` in brackets):

* ``VIOLATION`` [1] — a confirmed bound exceeds the claim: with confidence ``1 − alpha``
  the mechanism is not (ε, δ)-DP under the stated relation;
* ``PASSED`` [0] — no violation, AND the audit had power on every confirmed event
  ([`AuditResult.event_power`][dpaudit.auditor.results.result.AuditResult.event_power]: ε power, δ
  power, or no room for a true ε above ``power_factor`` × the claim): some confirmed event tells the
  two histograms of its pair apart (its confidence intervals do not overlap), the largest over
  the events with ε power of the smallest true ε this audit flags with probability 0.9 at every
  ``Q`` in the event's interval (the *detectable ε*,
  [`dpaudit.auditor.bounds.statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon])
  is at most ``power_factor`` times the claimed ε, and the smallest true δ at the claimed ε it flags
  with probability 0.9 (the *detectable δ*,
  [`dpaudit.auditor.bounds.statistics.detectable_delta`][dpaudit.auditor.bounds.statistics.detectable_delta]) is
  at most ``power_factor`` times the claimed δ — unless the claimed δ is 0 (every violation is then
  an ε violation) or the user accepted an ε-only pass (``epsilon_only=True``, recorded);
* ``INCONCLUSIVE`` [3] — no violation, but no power (no confirmed event separates its
  pair, the detectable ε is above ``power_factor`` × the claim, or the detectable δ is
  above ``power_factor`` × the claimed δ: the result then says which δ it could resolve
  and roughly what budget the claimed one needs), or the run was interrupted. A
  confirmation whose remaining looks could neither confirm a violation nor reach that
  power stops early for futility ([`futility`][dpaudit.auditor.confirm.futility]), and the result says so.

A pass is evidence about the pairs and events this audit probed, not a proof: only
``dpaudit.exact.verify`` (on small families) or a proof covers every pair.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..bounds.statistics import DETECTION_PROBABILITY
from . import result_text
from .explanation import explanation
from .power import DEFAULT_POWER_FACTOR, delta_within_power, event_power, events_shortfall
from .result_format import FORMAT_VERSION, check_format_version
from .verdicts import INCONCLUSIVE, PASSED, VIOLATION, exit_status_of
from .witness import Witness, _finite, _number

__all__ = [
    "INCONCLUSIVE",
    "PASSED",
    "VIOLATION",
    "AuditResult",
    "Witness",
    "exit_status_of",
]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of [`dpaudit.audit`][dpaudit.auditor.audit]: verdict, bounds, power and the full evidence.

    ``epsilon_lower`` is a lower bound on the mechanism's ε at the claimed δ,
    ``delta_lower`` on its δ at the claimed ε; both hold together with
    probability >= ``confidence = 1 − alpha`` (Bonferroni over the
    ``events_confirmed`` events bounded on fresh samples). ``verdict`` is one of
    ``VIOLATION``, ``PASSED``, ``INCONCLUSIVE`` (module docstring).
    ``detectable_epsilon`` is the largest, over the confirmed events with ε power, of the
    smallest true ε this audit flags with probability ``detection_probability`` (0.9) at every
    ``Q`` in the event's interval; ``detectable_delta`` the smallest such true δ at the claimed
    ε over the events; ``event_power`` says what each event gives a pass; ``epsilon_only`` records that the user accepted
    a pass on ε alone; ``samples_requested`` is the budget asked for (``samples`` what was
    drawn, never more); ``separated`` whether some confirmed event tells its
    two histograms apart. ``evidence`` holds what a second reviewer needs to re-check
    the run: relation, seed, versions, the mechanism's spec, the command line, the date.
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
    detectable_epsilon: float = math.inf
    separated: bool = False
    power_factor: float = DEFAULT_POWER_FACTOR
    restricted: bool = False
    evidence: dict = field(default_factory=dict, repr=False)
    detectable_delta: float = math.inf
    epsilon_only: bool = False
    samples_requested: int | None = None
    detection_probability: float = DETECTION_PROBABILITY

    @classmethod
    def from_summary(
        cls,
        summary: Mapping,
        *,
        mechanism: str,
        claim,
        relation,
        alpha: float,
        witnesses: Sequence[Witness],
        samples: int,
        seconds: float,
        pairs_screened: int,
        seed: int | None,
        power_factor: float,
        restricted: bool,
        evidence: dict,
        interrupted: bool = False,
        epsilon_only: bool = False,
        samples_requested: int | None = None,
    ) -> AuditResult:
        """The result of an audit: the one place an [`AuditResult`][dpaudit.auditor.results.result.AuditResult] is assembled.

        ``summary`` holds [`confirmation.summarise`][dpaudit.auditor.confirm.confirmation.summarise]'s
        headline numbers of ``witnesses`` (an entry named like a field is taken as that field);
        ``claim`` and ``relation`` are what was audited; the others are the fields of the same
        names.
        """
        headline = {f.name: summary[f.name] for f in dataclasses.fields(cls) if f.name in summary}
        for name in ("epsilon_lower", "delta_lower", "detectable_epsilon", "detectable_delta"):
            if name in headline:
                headline[name] = float(headline[name])
        return cls(
            mechanism=mechanism,
            claim_epsilon=float(claim.epsilon),
            claim_delta=float(claim.delta),
            neighbours=str(relation),
            alpha=float(alpha),
            samples=int(samples),
            seconds=float(seconds),
            pairs_screened=int(pairs_screened),
            events_confirmed=len(witnesses),
            seed=None if seed is None else int(seed),
            interrupted=bool(interrupted),
            witnesses=tuple(witnesses),
            power_factor=float(power_factor),
            restricted=bool(restricted),
            evidence=evidence,
            epsilon_only=bool(epsilon_only),
            samples_requested=None if samples_requested is None else int(samples_requested),
            **headline,
        )

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def verdict(self) -> str:
        """``VIOLATION``, ``PASSED`` or ``INCONCLUSIVE`` (module docstring)."""
        if self.violation:
            return VIOLATION
        if self.interrupted or not self.separated:
            return INCONCLUSIVE
        if self.power_shortfall is not None:
            return INCONCLUSIVE
        return PASSED

    @property
    def delta_resolved(self) -> bool:
        """The audit had power on δ: a true δ above ``power_factor`` × the claim is flagged.

        A claimed δ of 0 needs nothing more (any violation is then an ε violation).
        """
        return delta_within_power(self.detectable_delta, self.claim_delta, self.power_factor)

    @property
    def event_power(self) -> tuple[str, ...]:
        """What each confirmed event (``witnesses[i]``) gives a pass, one word each
        ([`event_power`][dpaudit.auditor.results.power.event_power])."""
        return event_power(self.witnesses, self.claim_epsilon, self.claim_delta, self.power_factor)

    @property
    def events_left_early(self) -> tuple[int, ...]:
        """Indices of the confirmed events a pass does not cover: no power, and their pair
        was left at an earlier look ([`event_power`][dpaudit.auditor.results.power.event_power]
        ``"left"``); the text names them."""
        return tuple(i for i, label in enumerate(self.event_power) if label == "left")

    @property
    def events_without_power(self) -> tuple[int, ...]:
        """Indices of the confirmed events without power
        ([`event_power`][dpaudit.auditor.results.result.AuditResult.event_power] ``"none"``)."""
        return tuple(i for i, label in enumerate(self.event_power) if label == "none")

    @property
    def power_shortfall(self) -> str | None:
        """``"epsilon"`` or ``"delta"`` when the audit lacked power on it, else None.

        ([`events_shortfall`][dpaudit.auditor.results.power.events_shortfall]): an event without power
        ([`event_power`][dpaudit.auditor.results.result.AuditResult.event_power] ``"none"``) is an ε
        shortfall (its true ε could exceed ``power_factor`` × the claim unflagged).
        """
        return events_shortfall(
            self.event_power,
            self.detectable_delta,
            self.claim_delta,
            self.power_factor,
            self.epsilon_only,
        )

    @property
    def samples_for_power(self) -> float:
        """Roughly the budget that would give the audit its power (``inf`` if unknown).

        On what lacks power
        ([`power_shortfall`][dpaudit.auditor.results.result.AuditResult.power_shortfall]; this budget when
        nothing does): on a δ witness (``Q`` about 0) the detectable δ falls like ``1 / n``, so the
        budget scales by ``detectable δ / (power_factor × δ)``; the detectable ε's excess
        ``e^{ε_d} − e^ε`` over the claim is a few standard errors of ``P̂ / Q̂``, which fall like
        ``1 / √n``, so the budget scales by the square of that excess over
        ``e^{power_factor ε} − e^ε``. A rough figure, to size a rerun.
        """
        if not self.samples:
            return math.inf
        if self.power_shortfall == "epsilon":
            claimed = math.exp(self.claim_epsilon)
            target = math.exp(self.power_factor * self.claim_epsilon) - claimed
            # Sized on the events that block the pass (``"none"``) where their figure is finite.
            blocking = [
                w.detectable_epsilon
                for w, label in zip(self.witnesses, self.event_power)
                if label == "none" and math.isfinite(w.detectable_epsilon)
            ]
            detectable = max(blocking, default=self.detectable_epsilon)
            if target <= 0 or not math.isfinite(detectable):
                return math.inf
            excess = math.exp(detectable) - claimed
            return self.samples * max((excess / target) ** 2, 1.0)
        target = self.power_factor * self.claim_delta
        if target <= 0 or not math.isfinite(self.detectable_delta):
            return math.inf
        return self.samples * max(self.detectable_delta / target, 1.0)

    @property
    def futility(self) -> dict | None:
        """Why confirmation stopped for futility ([`futility`][dpaudit.auditor.confirm.futility]), None if it did not."""
        return ((self.evidence or {}).get("confirmation_looks") or {}).get("futility")

    @property
    def exit_status(self) -> int:
        """0 passed, 1 violation, 3 inconclusive (2 is the CLI's usage error)."""
        return exit_status_of(self.verdict)

    @property
    def explanation(self) -> str:
        """One sentence: what the verdict means and does not mean, and what to try next."""
        return explanation(self)

    def __str__(self) -> str:
        return result_text.summary_text(self)

    def to_dict(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "mechanism": self.mechanism,
            "claim": {
                "epsilon": self.claim_epsilon,
                "delta": self.claim_delta,
                "neighbours": self.neighbours,
            },
            "verdict": self.verdict,
            "exit_status": self.exit_status,
            "explanation": self.explanation,
            "violation": self.violation,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "epsilon_lower": _finite(self.epsilon_lower),
            "delta_lower": self.delta_lower,
            "detectable_epsilon": _finite(self.detectable_epsilon),
            "detectable_delta": _finite(self.detectable_delta),
            "detection_probability": self.detection_probability,
            "epsilon_only": self.epsilon_only,
            "power_shortfall": self.power_shortfall,
            "event_power": list(self.event_power),
            "separated": self.separated,
            "power_factor": self.power_factor,
            "restricted": self.restricted,
            "epsilon_witness": None
            if self.epsilon_witness is None
            else self.epsilon_witness.to_dict(),
            "delta_witness": None if self.delta_witness is None else self.delta_witness.to_dict(),
            "witnesses": [w.to_dict() for w in self.witnesses],
            "samples": self.samples,
            "samples_requested": self.samples_requested,
            "seconds": self.seconds,
            "pairs_screened": self.pairs_screened,
            "events_confirmed": self.events_confirmed,
            "seed": self.seed,
            "interrupted": self.interrupted,
            "evidence": self.evidence,
        }

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> AuditResult:
        """Rebuild a result from ``to_dict`` / the JSON that ``dpaudit audit --json`` writes.

        A file of a newer ``format_version`` than this dpaudit's is refused
        ([`result_format`][dpaudit.auditor.results.result_format]).
        """
        check_format_version(data)
        witnesses = tuple(Witness.from_dict(w) for w in data.get("witnesses", []))

        def find(entry):
            if entry is None:
                return None
            rebuilt = Witness.from_dict(entry)
            return next((w for w in witnesses if w == rebuilt), rebuilt)

        claim = data["claim"]
        return cls(
            mechanism=data["mechanism"],
            claim_epsilon=float(claim["epsilon"]),
            claim_delta=float(claim["delta"]),
            neighbours=claim["neighbours"],
            epsilon_lower=_number(data["epsilon_lower"]),
            delta_lower=float(data["delta_lower"]),
            violation=bool(data["violation"]),
            alpha=float(data["alpha"]),
            epsilon_witness=find(data.get("epsilon_witness")),
            delta_witness=find(data.get("delta_witness")),
            samples=int(data["samples"]),
            seconds=float(data["seconds"]),
            pairs_screened=int(data["pairs_screened"]),
            events_confirmed=int(data["events_confirmed"]),
            seed=data.get("seed"),
            interrupted=bool(data.get("interrupted", False)),
            witnesses=witnesses,
            detectable_epsilon=_number(data.get("detectable_epsilon", "inf")),
            separated=bool(data.get("separated", False)),
            power_factor=float(data.get("power_factor", 2.0)),  # results written before 1.25
            restricted=bool(data.get("restricted", False)),
            evidence=data.get("evidence", {}),
            detectable_delta=_number(data.get("detectable_delta", "inf")),
            epsilon_only=bool(data.get("epsilon_only", False)),
            samples_requested=data.get("samples_requested"),
            detection_probability=float(data.get("detection_probability", DETECTION_PROBABILITY)),
        )

    @property
    def headline_witness(self) -> Witness | None:
        """The witness shown first ([`result_text.headline_witness`][dpaudit.auditor.results.result_text.headline_witness])."""
        return result_text.headline_witness(self)

    def __repr__(self) -> str:
        """One line: verdict, mechanism, claim, bound, budget and the headline witness."""
        return result_text.short_repr(self)

    def _repr_html_(self) -> str:
        """A table for Jupyter: the verdict in colour, the bounds, the headline witness."""
        return result_text.html(self)
