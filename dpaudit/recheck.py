"""Re-check an audit's evidence: exactly where the law is known, else on fresh samples.

An :class:`~dpaudit.auditor.AuditResult` (or the JSON ``dpaudit audit --json`` wrote)
keeps every confirmed witness in full: both histograms, the event as its complete list
of outcomes (or its structural rule), hits and sample sizes. :func:`recheck` rebuilds the
mechanism (from the recorded spec of a built-in or catalog mechanism, or the one you
pass) and, per witness:

* exact route — when :func:`dpaudit.exact.output_law` knows the mechanism (or, for an
  event over real values, :mod:`dpaudit.exact.value_laws` has it in closed form) and the
  histograms are small: the event's exact probabilities P and Q. The witness agrees when
  its one-sided bounds hold (``p_low <= P`` and ``Q <= q_high``); the exact ε of the
  event at the claimed δ, ``ln((P − δ)/Q)``, says whether the event truly violates;
* sampled route — otherwise: fresh samples from a new seed, the event's hits counted,
  and Fisher's exact test (scipy) of the original against the fresh counts on each side;
  the fresh counts also give new one-sided bounds, valid on their own because the event
  is fixed before they are drawn, so a violation can be re-confirmed independently.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import mpmath
import numpy as np

__all__ = ["RecheckResult", "WitnessCheck", "load_result", "recheck"]

#: Histograms with more items than this are re-checked by sampling.
EXACT_MAX_ITEMS = 10


@dataclass(frozen=True)
class WitnessCheck:
    """One witness re-checked: by which route, the numbers, and whether it agrees."""

    index: int
    route: str  # "exact" or "sampled"
    p: float  # exact P, or the fresh estimate
    q: float
    p_low: float  # the original one-sided bounds
    q_high: float
    agrees: bool
    epsilon: float  # exact ε of the event at the claimed δ, or the fresh lower bound
    violates: bool  # the event exceeds the claim (exactly, or on the fresh samples)
    detail: str = ""

    def to_dict(self) -> dict:
        return {
            k: (v if not isinstance(v, float) or math.isfinite(v) else str(v))
            for k, v in self.__dict__.items()
        }


@dataclass(frozen=True)
class RecheckResult:
    """Outcome of :func:`recheck`: every witness re-checked, agreement and reproduction."""

    mechanism: str
    verdict: str
    checks: tuple[WitnessCheck, ...]

    @property
    def agrees(self) -> bool:
        """Every witness's recorded evidence is consistent with the re-check."""
        return all(c.agrees for c in self.checks)

    @property
    def violation_reproduced(self) -> bool:
        return any(c.violates for c in self.checks)

    def __str__(self) -> str:
        lines = [f"recheck of the audit of {self.mechanism} (verdict {self.verdict.upper()})"]
        for c in self.checks:
            lines.append(
                f"  #{c.index} {c.route:>7}: P={c.p:.6g} (recorded ≥ {c.p_low:.6g}), "
                f"Q={c.q:.6g} (recorded ≤ {c.q_high:.6g}), ε={c.epsilon:.4g}"
                f"{' VIOLATES' if c.violates else ''} -> {'agrees' if c.agrees else 'DISAGREES'}"
                + (f" ({c.detail})" if c.detail else "")
            )
        lines.append(
            f"  result: evidence {'agrees' if self.agrees else 'DISAGREES'}; "
            f"violation {'reproduced' if self.violation_reproduced else 'not reproduced'}"
        )
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "mechanism": self.mechanism,
            "verdict": self.verdict,
            "agrees": self.agrees,
            "violation_reproduced": self.violation_reproduced,
            "checks": [c.to_dict() for c in self.checks],
        }

    def __repr__(self) -> str:
        """One line: agreement, the audit re-checked, and whether its violation reproduced."""
        from dpaudit._display import one_line, shorten

        routes = sorted({c.route for c in self.checks})
        return one_line(
            "RecheckResult",
            "AGREES" if self.agrees else "DISAGREES",
            [
                f"audit of {shorten(self.mechanism, 60)} (verdict {self.verdict.upper()})",
                f"{len(self.checks)} witnesses re-checked ({', '.join(routes) or 'none'})",
                "violation reproduced" if self.violation_reproduced else "no violation reproduced",
            ],
        )

    def _repr_html_(self) -> str:
        """A table for Jupyter: one row per re-checked witness."""
        from dpaudit._display import html_table

        rows = [
            (
                f"#{c.index} ({c.route})",
                f"P={c.p:.6g} (recorded ≥ {c.p_low:.6g}), Q={c.q:.6g} (recorded ≤ "
                f"{c.q_high:.6g}), ε={c.epsilon:.4g}{' VIOLATES' if c.violates else ''} → "
                f"{'agrees' if c.agrees else 'DISAGREES'}" + (f" ({c.detail})" if c.detail else ""),
            )
            for c in self.checks
        ]
        rows.append(("violation", "reproduced" if self.violation_reproduced else "not reproduced"))
        return html_table(
            f"recheck of the audit of {self.mechanism} (verdict {self.verdict.upper()})",
            "AGREES" if self.agrees else "DISAGREES",
            rows,
        )


def load_result(source):
    """An :class:`AuditResult` from itself, its ``to_dict()``, or a JSON file path."""
    from dpaudit.auditor import AuditResult

    if isinstance(source, AuditResult):
        return source
    if isinstance(source, dict):
        return AuditResult.from_dict(source)
    try:
        with open(source, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise ValueError(f"cannot read {source!r}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{source!r} is not JSON: {error}") from None
    try:
        return AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{source!r} is not a dpaudit audit result: {error}") from None


def _exact_probability(law, event) -> mpmath.mpf:
    return mpmath.fsum(p for outcome, p in law.items() if event.contains(tuple(outcome)))


def _value_probabilities(mechanism, witness):
    """Exact ``(P, Q)`` of an event over real values, where closed form (else None)."""
    from dpaudit.exact import working_precision
    from dpaudit.exact.value_laws import value_event_probability

    if not hasattr(witness.event, "encoder"):
        return None
    with working_precision():
        p = value_event_probability(mechanism, witness.counts, witness.event)
        if p is None:
            return None
        return p, value_event_probability(mechanism, witness.counts2, witness.event)


def _has_exact_law(mechanism) -> bool:
    from dpaudit.exact import output_law

    return output_law.dispatch(type(mechanism)) is not output_law.dispatch(object)


def recheck(
    source,
    mechanism=None,
    *,
    samples: int | None = None,
    seed: int | None = None,
    alpha: float = 1e-3,
    exact: bool | None = None,
) -> RecheckResult:
    """Recompute every witness of an audit, exactly or on fresh samples.

    Parameters
    ----------
    source : an AuditResult, its ``to_dict()``, or the path of the JSON ``--json`` wrote.
    mechanism : the mechanism audited (default: rebuilt from the recorded spec).
    samples : fresh samples per histogram for the sampled route (default: as recorded).
    seed : seed of the fresh samples (default: the audit's seed + 1,000,003).
    alpha : level of Fisher's test of recorded against fresh counts (sampled route), and of
        the fresh one-sided bounds (each side at ``alpha / 2``).
    exact : force (True) or forbid (False) the exact route; default: exact when possible.
    """
    from dpaudit.auditor.events import events_hits
    from dpaudit.auditor.evidence import rebuild_mechanism
    from dpaudit.auditor.sampling import sample_counts
    from dpaudit.auditor.statistics import event_bounds

    result = load_result(source)
    if mechanism is None:
        spec = result.evidence.get("mechanism_spec")
        if spec is None:
            raise ValueError(
                "the audit recorded no rebuildable mechanism (a black box?): pass mechanism="
            )
        mechanism = rebuild_mechanism(spec)
    claim_eps, claim_delta = result.claim_epsilon, result.claim_delta
    fresh_seed = (result.seed or 0) + 1_000_003 if seed is None else int(seed)
    use_exact = _has_exact_law(mechanism) if exact is None else bool(exact)
    checks = []
    laws: dict = {}
    for index, w in enumerate(result.witnesses, 1):
        small = max(len(w.counts), len(w.counts2)) <= EXACT_MAX_ITEMS
        valued = _value_probabilities(mechanism, w) if exact is not False and small else None
        if valued is not None or (use_exact and (small or exact)):
            from dpaudit.exact import output_law, working_precision

            with working_precision():
                if valued is not None:
                    p, q = _value_probabilities(mechanism, w)
                else:
                    for h in (w.counts, w.counts2):
                        if h not in laws:
                            laws[h] = output_law(mechanism, np.array(h, dtype=np.int64))
                    p = _exact_probability(laws[w.counts], w.event)
                    q = _exact_probability(laws[w.counts2], w.event)
                slack = mpmath.mpf("1e-30")
                agrees = bool(w.p_low <= p + slack and q <= w.q_high + slack)
                if p - claim_delta <= 0:
                    eps = -math.inf
                elif q == 0:
                    eps = math.inf
                else:
                    eps = float(mpmath.log((p - claim_delta) / q))
                violates = bool(p > mpmath.e**claim_eps * q + claim_delta)
            checks.append(
                WitnessCheck(
                    index, "exact", float(p), float(q), w.p_low, w.q_high, agrees, eps, violates
                )
            )
            continue
        from scipy.stats import fisher_exact

        n_p = int(samples or w.samples_p)
        n_q = int(samples or w.samples_q)
        root = np.random.SeedSequence(fresh_seed, spawn_key=(index,))
        seq_p, seq_q = root.spawn(2)
        # An event over real values carries the encoder its keys are made by.
        encoder = getattr(w.event, "encoder", None)
        counter_p = sample_counts(mechanism.sample, np.array(w.counts), n_p, seq_p, encoder=encoder)
        counter_q = sample_counts(
            mechanism.sample, np.array(w.counts2), n_q, seq_q, encoder=encoder
        )
        hits_p = int(events_hits([w.event], counter_p)[0])
        hits_q = int(events_hits([w.event], counter_q)[0])
        tests = [
            fisher_exact([[w.hits_p, w.samples_p - w.hits_p], [hits_p, n_p - hits_p]]).pvalue,
            fisher_exact([[w.hits_q, w.samples_q - w.hits_q], [hits_q, n_q - hits_q]]).pvalue,
        ]
        agrees = bool(min(tests) > alpha / 2)
        _, _, eps_b, _ = event_bounds(hits_p, n_p, hits_q, n_q, alpha / 2, claim_eps, claim_delta)
        checks.append(
            WitnessCheck(
                index,
                "sampled",
                hits_p / n_p,
                hits_q / n_q,
                w.p_low,
                w.q_high,
                agrees,
                float(eps_b),
                bool(eps_b > claim_eps),
                f"Fisher p = {tests[0]:.3g}, {tests[1]:.3g}; {hits_p}/{n_p} vs {hits_q}/{n_q}",
            )
        )
    return RecheckResult(result.mechanism, result.verdict, tuple(checks))
