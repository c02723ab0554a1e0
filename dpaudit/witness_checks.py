"""Each witness of a result checked against the mechanism, and what the checks say of the verdict.

Under the exact law when [`dpaudit.exact.output_law`][dpaudit.exact.output_law] knows the
mechanism and the histograms are small (binomial tests of the recorded hits, and whether the
recorded intervals cover the exact P and Q), else on fresh samples (Fisher's tests against the
recorded hits, fresh bounds). ``verdict_findings`` then weighs the checks against the recomputed
verdict: a VIOLATION the exact law does not reproduce, the grey-box δ stage's bound against the
exact law of its pair, a genuine miss within the audit's alpha.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from dpaudit.auditor.confirm.curves import curve_exceeded
from dpaudit.rebuild import CannotRecheck

#: Histograms with more items than this are re-checked by sampling.
EXACT_MAX_ITEMS = 10


@dataclass(frozen=True)
class WitnessCheck:
    """One witness re-checked: by which route, the numbers, and whether it agrees."""

    index: int
    route: str  # "exact" or "sampled"
    p: float  # exact P, or the fresh estimate
    q: float
    p_low: float  # the recorded one-sided bounds
    q_high: float
    agrees: bool
    epsilon: float  # exact ε of the event at the claimed δ, or the fresh lower bound
    violates: bool  # the event exceeds the claim (exactly, or on the fresh samples)
    detail: str = ""
    missed: bool = False  # agrees, but the recorded interval misses the exact P or Q

    def to_dict(self) -> dict:
        return {
            k: (v if not isinstance(v, float) or math.isfinite(v) else str(v))
            for k, v in self.__dict__.items()
        }


def _exact_probability(law, event) -> mpmath.mpf:
    return mpmath.fsum(p for outcome, p in law.items() if event.contains(tuple(outcome)))


def value_probabilities(mechanism, witness):
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


def has_exact_law(mechanism) -> bool:
    from dpaudit.exact import output_law

    return output_law.dispatch(type(mechanism)) is not output_law.dispatch(object)


def _binomial_pvalue(hits: int, n: int, p) -> float:
    from scipy.stats import binomtest

    p = min(max(float(p), 0.0), 1.0)
    if p == 0.0 or p == 1.0:
        return 1.0 if hits == round(p * n) else 0.0
    return float(binomtest(int(hits), int(n), p).pvalue)


def _exact_check(index, w, p, q, claim, each) -> WitnessCheck:
    slack = mpmath.mpf("1e-30")
    covers = bool(w.p_low <= p + slack and q <= w.q_high + slack)
    tests = (_binomial_pvalue(w.hits_p, w.samples_p, p), _binomial_pvalue(w.hits_q, w.samples_q, q))
    plausible = min(tests) > each
    if p - claim.delta <= 0:
        eps = -math.inf
    elif q == 0:
        eps = math.inf
    else:
        eps = float(mpmath.log((p - claim.delta) / q))
    violates = bool(p > mpmath.e**claim.epsilon * q + claim.delta) or curve_exceeded(
        claim, float(p), float(q)
    )
    detail = f"binomial p = {tests[0]:.3g}, {tests[1]:.3g} (each at {each:.3g})"
    if not plausible:
        detail += "; the recorded hits are not draws of the exact law"
    if not covers:
        detail += "; the recorded interval misses the exact P or Q"
    return WitnessCheck(
        index,
        "exact",
        float(p),
        float(q),
        w.p_low,
        w.q_high,
        plausible,
        eps,
        violates,
        detail,
        missed=not covers,
    )


def exact_witness_check(index, w, sampler, claim, each, valued, laws) -> WitnessCheck:
    """The check of witness ``index`` under the exact law (``valued``: its probabilities over real
    values, else the laws of its histograms, cached in ``laws``)."""
    from dpaudit.exact import output_law, working_precision

    with working_precision():
        if valued is not None:
            p, q = valued
        else:
            for h in (w.counts, w.counts2):
                if h not in laws:
                    laws[h] = output_law(sampler, np.array(h, dtype=np.int64))
            p = _exact_probability(laws[w.counts], w.event)
            q = _exact_probability(laws[w.counts2], w.event)
        return _exact_check(index, w, p, q, claim, each)


def sampled_witness_check(index, w, sampler, claim, each, samples, fresh_seed) -> WitnessCheck:
    """The check of witness ``index`` on fresh samples (stream ``(fresh_seed, index)``): Fisher's
    tests against the recorded hits, and the bound the fresh hits give."""
    from scipy.stats import fisher_exact

    from dpaudit.auditor.bounds.statistics import event_bounds
    from dpaudit.auditor.sources.sampling import sample_counts
    from dpaudit.auditor.values.outcome_events import events_hits

    n_p = int(samples or w.samples_p)
    n_q = int(samples or w.samples_q)
    root = np.random.SeedSequence(fresh_seed, spawn_key=(index,))
    seq_p, seq_q = root.spawn(2)
    # An event over real values carries the encoder its keys are made by.
    encoder = getattr(w.event, "encoder", None)
    try:
        counter_p = sample_counts(sampler.sample, np.array(w.counts), n_p, seq_p, encoder=encoder)
        counter_q = sample_counts(sampler.sample, np.array(w.counts2), n_q, seq_q, encoder=encoder)
    except Exception as error:  # the mechanism's own failure: the re-check could not run
        raise CannotRecheck(f"the mechanism raised {type(error).__name__}: {error}") from error
    hits_p = int(events_hits([w.event], counter_p)[0])
    hits_q = int(events_hits([w.event], counter_q)[0])
    tests = [
        fisher_exact([[w.hits_p, w.samples_p - w.hits_p], [hits_p, n_p - hits_p]]).pvalue,
        fisher_exact([[w.hits_q, w.samples_q - w.hits_q], [hits_q, n_q - hits_q]]).pvalue,
    ]
    agrees = bool(min(tests) > each)
    p_low, q_high, eps_b, _ = event_bounds(
        hits_p, n_p, hits_q, n_q, each, claim.epsilon, claim.delta
    )
    return WitnessCheck(
        index,
        "sampled",
        hits_p / n_p,
        hits_q / n_q,
        w.p_low,
        w.q_high,
        agrees,
        float(eps_b),
        bool(eps_b > claim.epsilon) or curve_exceeded(claim, p_low, q_high),
        f"Fisher p = {tests[0]:.3g}, {tests[1]:.3g} (each at {each:.3g}); "
        f"{hits_p}/{n_p} vs {hits_q}/{n_q}",
    )


def verdict_findings(data, sampler, claim, use_exact, rebuilt, checks, level, problems, notes):
    """``(problems, notes)`` with what the checks say of the verdict: a VIOLATION the exact law
    does not reproduce, the grey-box δ stage's bound against the exact law, a miss within alpha."""
    grey_exact = grey_violation_exactly(data, sampler, claim, use_exact)
    grey_holds = grey_exact is not None and grey_exact[0]
    # Q = 0 as declared, and the bound above the exact P: a miss the stage allows at its alpha.
    grey_miss = grey_exact is not None and not grey_exact[0] and grey_exact[2] == 0.0
    unreproduced = bool(
        rebuilt.violation
        and checks
        and all(c.route == "exact" for c in checks)
        and not any(c.violates for c in checks)
        and not grey_holds
        and not grey_miss
    )
    if grey_miss and grey_exact is not None:
        notes = (
            *notes,
            "a genuine miss within the audit's alpha: evidence.greybox.delta's bound is above "
            f"the exact P(S | D) = {grey_exact[1]:.6g}, which the stage allows with probability "
            "at most its alpha"
            + ("" if any(c.violates for c in checks) else "; the VIOLATION rests on that miss"),
        )
    elif grey_exact is not None and not grey_holds:
        problems.append(
            "evidence.greybox.delta: its bound exceeds the claimed δ, but under the exact law "
            f"P(S | D') = {grey_exact[2]:.3g} > 0: the mechanism's declared output support is false"
        )
    missed = [c for c in checks if c.missed]
    if missed and not problems and all(c.agrees for c in checks):
        notes = (*notes, miss_note(missed, float(data["alpha"]), level, unreproduced))
    elif unreproduced:
        problems.append("violation: no witness's event violates the claim under the exact law")
    return problems, notes


def grey_violation_exactly(data: dict, sampler, claim, use_exact: bool):
    """``(violates, P, Q)``: whether the grey-box δ stage's violating bound holds under the exact
    law of its pair (``S`` = an outcome holding one of its items), with ``P(S | D)`` and
    ``P(S | D')``; None when it does not violate or no exact law is at hand."""
    from dpaudit.auditor.greybox.delta_stage import usable

    record = ((data.get("evidence") or {}).get("greybox") or {}).get("delta")
    if not usable(record) or not float(record["lower"]) > float(claim.delta) or not use_exact:
        return None
    d, d2 = (np.array(h, dtype=np.int64) for h in record["pair"])
    if len(d) > EXACT_MAX_ITEMS:
        return None
    from dpaudit.exact import output_law, working_precision

    items = {int(i) for i in record["items"]}
    with working_precision():
        p, q = (
            mpmath.fsum(
                pr for outcome, pr in output_law(sampler, h).items() if items & set(outcome)
            )
            for h in (d, d2)
        )
        violates = bool(p - mpmath.e ** mpmath.mpf(claim.epsilon) * q > claim.delta)
        return violates, float(p), float(q)


def miss_note(missed, alpha: float, level, unreproduced: bool) -> str:
    """The note of a genuine miss: which intervals missed, and the α the audit allowed it."""
    where = "; ".join(
        f"witnesses[{c.index - 1}]'s interval misses the exact "
        + (
            " and ".join(
                text
                for text, miss in (
                    (f"P = {c.p:.6g} (recorded P >= {c.p_low:.6g})", c.p < c.p_low),
                    (f"Q = {c.q:.6g} (recorded Q <= {c.q_high:.6g})", c.q > c.q_high),
                )
                if miss
            )
            or "P or Q"  # a miss below double precision
        )
        for c in missed
    )
    note = (
        f"a genuine miss within the audit's alpha: {where}. The file is consistent and its hits "
        f"are plausible draws of the exact law; the audit allows its intervals to miss with "
        f"probability at most alpha = {alpha:g} in all (each one-sided interval at "
        f"{level.alpha_each:.3g})"
    )
    if unreproduced:
        note += (
            "; its VIOLATION rests on that miss: under the exact law no witness violates the claim"
        )
    return note
