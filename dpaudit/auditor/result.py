"""The auditor's result: bounds, the witnessing pairs and events, the verdict and its power.

Three verdicts (exit statuses of ``dpaudit audit`` in brackets):

* ``VIOLATION`` [1] — a confirmed bound exceeds the claim: with confidence ``1 − alpha``
  the mechanism is not (ε, δ)-DP under the stated relation;
* ``PASSED`` [0] — no violation, AND the audit had power: some confirmed event tells the
  two histograms of its pair apart (its confidence intervals do not overlap), the smallest
  true ε this audit flags with probability 0.9 on one of its events (the *detectable ε*,
  :func:`dpaudit.auditor.statistics.detectable_epsilon`) is at most ``power_factor`` times
  the claimed ε, and the smallest true δ at the claimed ε it flags with probability 0.9
  (the *detectable δ*, :func:`dpaudit.auditor.statistics.detectable_delta`) is at most
  ``power_factor`` times the claimed δ — unless the claimed δ is 0 (every violation is then
  an ε violation) or the user accepted an ε-only pass (``epsilon_only=True``, recorded);
* ``INCONCLUSIVE`` [3] — no violation, but no power (no confirmed event separates its
  pair, the detectable ε is above ``power_factor`` × the claim, or the detectable δ is
  above ``power_factor`` × the claimed δ: the result then says which δ it could resolve
  and roughly what budget the claimed one needs), or the run was interrupted.

A pass is evidence about the pairs and events this audit probed, not a proof: only
``dpaudit.exact.verify`` (on small families) or a proof covers every pair.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .events import Event, event_from_dict
from .result_format import FORMAT_VERSION, check_format_version
from .statistics import DETECTION_PROBABILITY

__all__ = [
    "DEFAULT_POWER_FACTOR",
    "INCONCLUSIVE",
    "PASSED",
    "VIOLATION",
    "AuditResult",
    "Witness",
    "exit_status_of",
    "power_shortfall",
]

VIOLATION = "violation"
PASSED = "passed"
INCONCLUSIVE = "inconclusive"

_EXIT_STATUS = {PASSED: 0, VIOLATION: 1, INCONCLUSIVE: 3}

#: A pass needs detectable ε and δ within this factor of the claim.
DEFAULT_POWER_FACTOR = 1.25


def exit_status_of(verdict: str) -> int:
    """``dpaudit audit``'s exit status for a verdict: 0 passed, 1 violation, 3 inconclusive."""
    return _EXIT_STATUS[verdict]


@dataclass(frozen=True)
class Witness:
    """One confirmed (pair, event): counts on fresh samples and the bounds they give.

    ``P`` is the event's probability on ``counts``, ``Q`` on ``counts2``. ``event`` is the
    full event (:mod:`dpaudit.auditor.events`): ``event.to_dict()`` lists every outcome,
    so anyone can recompute its probabilities (``dpaudit recheck``).
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
            "separates": self.separates,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Witness:
        """Rebuild a witness from :meth:`to_dict` (e.g. from an audit's JSON file)."""
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
        )


def _delta_resolved(detectable_delta, claim_delta, power_factor) -> bool:
    return claim_delta <= 0 or detectable_delta <= power_factor * claim_delta


def power_shortfall(
    detectable_epsilon, detectable_delta, claim_epsilon, claim_delta, power_factor, epsilon_only
) -> str | None:
    """``"epsilon"`` or ``"delta"`` when an audit with these detectable values lacks power.

    The one definition of "the audit had power" (module docstring), shared by
    :attr:`AuditResult.verdict` and the sequential confirmation's stopping rule.
    """
    if not detectable_epsilon <= power_factor * claim_epsilon:
        return "epsilon"
    if not epsilon_only and not _delta_resolved(detectable_delta, claim_delta, power_factor):
        return "delta"
    return None


def _finite(x):
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _number(x) -> float:
    return float(x)  # float("inf") reads the "inf" that _finite writes


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`dpaudit.audit`: verdict, bounds, power and the full evidence.

    ``epsilon_lower`` is a lower bound on the mechanism's ε at the claimed δ,
    ``delta_lower`` on its δ at the claimed ε; both hold together with
    probability >= ``confidence = 1 − alpha`` (Bonferroni over the
    ``events_confirmed`` events bounded on fresh samples). ``verdict`` is one of
    :data:`VIOLATION`, :data:`PASSED`, :data:`INCONCLUSIVE` (module docstring).
    ``detectable_epsilon`` is the smallest true ε on one of the confirmed events that
    this audit flags with probability ``detection_probability`` (0.9), ``detectable_delta``
    the same for a true δ at the claimed ε; ``epsilon_only`` records that the user accepted
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
        """The result of an audit: the one place an :class:`AuditResult` is assembled.

        ``summary`` holds :func:`.confirmation.summarise`'s headline numbers of
        ``witnesses`` (an entry named like a field is taken as that field); ``claim`` and
        ``relation`` are what was audited; the others are the fields of the same names.
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
        """:data:`VIOLATION`, :data:`PASSED` or :data:`INCONCLUSIVE` (module docstring)."""
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
        return _delta_resolved(self.detectable_delta, self.claim_delta, self.power_factor)

    @property
    def power_shortfall(self) -> str | None:
        """``"epsilon"`` or ``"delta"`` when the audit lacked power on it, else None."""
        return power_shortfall(
            self.detectable_epsilon,
            self.detectable_delta,
            self.claim_epsilon,
            self.claim_delta,
            self.power_factor,
            self.epsilon_only,
        )

    @property
    def samples_for_delta(self) -> float:
        """Roughly the budget that would resolve the claimed δ (``inf`` if unknown).

        On a δ witness (``Q`` about 0) the detectable δ falls like ``1 / n``, so the budget
        scales by ``detectable δ / (power_factor × δ)``; a rough figure, to size a rerun.
        """
        target = self.power_factor * self.claim_delta
        if target <= 0 or not math.isfinite(self.detectable_delta) or not self.samples:
            return math.inf
        return self.samples * max(self.detectable_delta / target, 1.0)

    @property
    def exit_status(self) -> int:
        """0 passed, 1 violation, 3 inconclusive (2 is the CLI's usage error)."""
        return exit_status_of(self.verdict)

    @property
    def explanation(self) -> str:
        """One sentence: what the verdict means and does not mean, and what to try next."""
        claim = f"({self.claim_epsilon:.4g}, {self.claim_delta:.3g})"
        scope = " on the pairs given" if self.restricted else ""
        if self.verdict == VIOLATION:
            return (
                f"With confidence {self.confidence:.4g} the mechanism is NOT {claim}-DP: "
                f"the witness event below has P >= e^ε Q + δ beyond the claim{scope}; "
                "recompute it with `dpaudit recheck` or exactly with dpaudit.exact."
            )
        chance = f"{self.detection_probability:.0%}"
        if self.verdict == PASSED:
            if self.claim_delta <= 0:
                on_delta = ""
            elif self.delta_resolved:
                on_delta = f" and a true δ of {self.detectable_delta:.3g} or more at ε"
            else:
                on_delta = (
                    f" (ε only, as asked: it could resolve a δ of {self.detectable_delta:.3g}, "
                    f"not the claimed {self.claim_delta:.3g})"
                )
            return (
                f"No violation{scope}, and the audit had power: it would have flagged, with "
                f"probability {chance}, a true ε of {self.detectable_epsilon:.3g} or more"
                f"{on_delta} on its confirmed events (<= {self.power_factor:g} × the claim). "
                "This covers the pairs and events probed, not every pair: use `dpaudit "
                "verify` for exhaustive exact checks on small domains."
            )
        if self.interrupted:
            reason = "the run was interrupted before confirmation finished"
        elif not self.separated:
            reason = (
                "no confirmed event told the two histograms of its pair apart, so the "
                "audit never saw the mechanism's output move"
            )
        elif self.power_shortfall == "epsilon":
            reason = (
                f"the smallest violation it could detect (with probability {chance}) was "
                f"ε = {self.detectable_epsilon:.3g}, above {self.power_factor:g} × the claim"
            )
        else:
            needed = self.samples_for_delta
            budget = f"roughly {needed:.2g} samples" if math.isfinite(needed) else "far more"
            return (
                f"Inconclusive for δ: no violation found{scope} and ε had power, but the "
                f"smallest δ it could resolve (with probability {chance}) was "
                f"{self.detectable_delta:.3g}, above {self.power_factor:g} × the claimed "
                f"{self.claim_delta:.3g}; resolving the claimed δ needs {budget} (a larger "
                "budget), or accept an ε-only pass explicitly (epsilon_only=True, "
                "--epsilon-only)."
            )
        return (
            f"Inconclusive: no violation found{scope}, but {reason}. Try more samples, "
            "other pairs (--counts/--pair near where the output changes), or `dpaudit "
            "verify` for an exact check."
        )

    def __str__(self) -> str:
        lines = [
            f"audit of {self.mechanism}",
            f"  claim:      ({self.claim_epsilon:.6g}, {self.claim_delta:.6g})-DP, {self.neighbours}",
            f"  verdict:    {self.verdict.upper()} (confidence {self.confidence:.4g})",
            f"  ε lower bound at δ={self.claim_delta:.3g}: {self.epsilon_lower:.6g}",
            f"  δ lower bound at ε={self.claim_epsilon:.3g}: {self.delta_lower:.6g}",
            (
                f"  detectable: a true ε >= {self.detectable_epsilon:.4g} or δ >= "
                f"{self.detectable_delta:.4g} would have been flagged "
                f"(probability {self.detection_probability:.0%})"
                + (", ε-only pass accepted" if self.epsilon_only else "")
            ),
        ]
        w = self.headline_witness
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
        d = self.delta_witness
        if (
            d is not None
            and d is not w
            and (w is None or d.event != w.event or d.counts != w.counts)
        ):
            lines += [
                (
                    f"  δ witness:  {list(d.counts)} vs {list(d.counts2)}, {d.describe_event()}: "
                    f"{d.hits_p}/{d.samples_p} vs {d.hits_q}/{d.samples_q}"
                ),
            ]
        lines.append(
            f"  budget:     {self.samples:,} samples"
            + (
                f" (of {self.samples_requested:,} asked)"
                if self.samples_requested is not None
                else ""
            )
            + f", {self.seconds:.2f} s, "
            f"{self.pairs_screened} pairs screened, {self.events_confirmed} events confirmed, "
            f"seed {self.seed}"
            + (", restricted to the pairs given" if self.restricted else "")
            + (", INTERRUPTED (partial result)" if self.interrupted else "")
        )
        lines.append(f"  meaning:    {self.explanation}")
        return "\n".join(lines)

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
        """Rebuild a result from :meth:`to_dict` / the JSON that ``dpaudit audit --json`` writes.

        A file of a newer ``format_version`` than this dpaudit's is refused
        (:mod:`.result_format`).
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
        """The witness shown first: the ε witness, or a readable one that also violates.

        A value audit's strongest event may read its learned score (a fitted linear
        combination of values and items); when some event a person can read (a value or an
        item above or below an edge) also violates the claim, the most violating of those is
        the headline. Otherwise the ε witness is, and ``__str__`` shows the score's weights.
        """
        w = self.epsilon_witness
        if w is None or not _reads_learned_score(w.event):
            return w
        readable = [
            x
            for x in self.witnesses
            if not _reads_learned_score(x.event)
            and (x.epsilon_lower > self.claim_epsilon or x.delta_lower > self.claim_delta)
        ]
        return max(readable, key=lambda x: (x.epsilon_lower, x.delta_lower), default=w)

    def __repr__(self) -> str:
        """One line: verdict, mechanism, claim, bound, budget and the headline witness."""
        from dpaudit._display import one_line, shorten

        w = self.headline_witness
        return one_line(
            "AuditResult",
            self.verdict.upper(),
            [
                shorten(self.mechanism, 60),
                f"claim ({self.claim_epsilon:.4g}, {self.claim_delta:.3g})",
                f"ε ≥ {self.epsilon_lower:.4g} at confidence {self.confidence:.4g}",
                f"{self.samples:,} samples",
                None
                if w is None
                else f"witness {list(w.counts)} vs {list(w.counts2)}: "
                + shorten(w.describe_event(), 60),
            ],
        )

    def _repr_html_(self) -> str:
        """A table for Jupyter: the verdict in colour, the bounds, the headline witness."""
        from dpaudit._display import html_table

        w = self.headline_witness
        rows = [
            ("claim", f"({self.claim_epsilon:.6g}, {self.claim_delta:.6g})-DP, {self.neighbours}"),
            (f"ε lower bound at δ={self.claim_delta:.3g}", f"{self.epsilon_lower:.6g}"),
            (f"δ lower bound at ε={self.claim_epsilon:.3g}", f"{self.delta_lower:.6g}"),
            ("detectable ε", f"{self.detectable_epsilon:.4g}"),
            (f"detectable δ at ε={self.claim_epsilon:.3g}", f"{self.detectable_delta:.4g}"),
            ("confidence", f"{self.confidence:.4g}"),
        ]
        if w is not None:
            rows += [
                ("pair", f"{list(w.counts)} vs {list(w.counts2)} ({w.family})"),
                ("event", w.describe_event()),
                ("score", _score_text(w.event)),
                ("counts", f"{w.hits_p}/{w.samples_p} vs {w.hits_q}/{w.samples_q}"),
            ]
        rows.append(
            (
                "budget",
                f"{self.samples:,} samples, {self.seconds:.2f} s, {self.pairs_screened} pairs "
                f"screened, {self.events_confirmed} events confirmed, seed {self.seed}",
            )
        )
        return html_table(
            f"audit of {self.mechanism}", self.verdict.upper(), rows, self.explanation
        )


def _reads_learned_score(event) -> bool:
    """The event is over a value audit's learned score, which only its weights explain."""
    from .value_encoding import VIEW_SCORE, ValueRegion, ValueThreshold

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
