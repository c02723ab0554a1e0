"""The grey-box δ stage of a live audit: a structural zero, bounded, folded into the result.

Issue 43, item 4. A Python mechanism that declares its output support
([`DeclaresOutputSupport`][mechanisms.base.DeclaresOutputSupport]) and is audited as a grey box
(not ``--black-box``, seeded by its ``rng``, releasing items only) gets, before the sampled
phases, one run of
[`structural_delta`][dpaudit.auditor.greybox.structural_delta.structural_delta]:

* the pair: [`support_edge_pair`][dpaudit.auditor.greybox.structural_pairs.support_edge_pair] from
  the audit's histogram (``counts`` when given, else ``BASE_COUNT`` on every item of the default
  domain), built from the declaration alone: no sample chooses it;
* the streams: ``SeedSequence(seed, spawn_key=(GREY_DELTA_KEY,))``, apart from every sampled
  phase's, so every sampled tally is the same with the stage on or off;
* the level: ``GREY_DELTA_SHARE × alpha`` of the plan
  ([`AuditPlan.grey_delta_alpha`][dpaudit.auditor.planning.plan.AuditPlan.grey_delta_alpha]), the sampled
  bounds sharing the rest (Bonferroni: all hold together at ``1 − alpha``); the plan fixes it
  from the mechanism and the options, so ``dpaudit recheck`` derives it the same way;
* the runs: a fixed share of the budget (``stage_sizes``), on top of it, before the sampled
  phases: when the stage resolves δ, confirmation's stopping rule chases ε's power only (its looks
  are α-spending, so any stopping rule keeps their level).

The bound is a lower bound on δ at the claimed ε (``P(S | D') = 0`` by the declaration), so it
enters the headline like a sampled δ witness: ``delta_lower`` is the larger of the two,
``detectable_delta`` the smaller, and a grey bound above the claimed δ is a VIOLATION
([`with_grey_delta`][dpaudit.auditor.greybox.delta_stage.with_grey_delta]).

A false declaration ([`DeclaredSupportError`][dpaudit.auditor.greybox.declared_support.DeclaredSupportError])
is recorded as a finding and voids the bound; it is not a VIOLATION (the claim is not refuted:
the outcome shows the mechanism's declaration wrong, not its privacy), and the sampled evidence,
valid on its own, still decides the verdict. The record is ``evidence["greybox"]["delta"]``.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

import numpy as np

from mechanisms import DeclaresOutputSupport

from .declared_support import DeclaredSupportError
from .structural_delta import structural_delta
from .structural_pairs import support_edge_pair

__all__ = [
    "BASE_COUNT",
    "GREY_DELTA_KEY",
    "pair_record",
    "plans_grey_delta",
    "resolves_delta",
    "run_grey_delta",
    "stage_sizes",
    "usable",
    "with_grey_delta",
]

#: Spawn key of the stage's streams (apart from the scan's 97, the replay check's 98, the pairs' 99).
GREY_DELTA_KEY = 96
#: The count of every item of the default base histogram (only the counts' differences matter
#: to the limited domains; the stability family's thresholds sit far below it).
BASE_COUNT = 10


def plans_grey_delta(mechanism: Any, black_box: bool) -> bool:
    """Whether an audit of ``mechanism`` plans the stage (and holds its α share).

    From the mechanism and the options alone, so that ``recheck`` derives it from the rebuilt
    mechanism: a declared output support, a grey-box audit, a generator it draws from, items only.
    """
    return (
        not black_box
        and isinstance(mechanism, DeclaresOutputSupport)
        and bool(getattr(mechanism, "seeded_by_rng", True))
        and not int(getattr(mechanism, "value_width", 0) or 0)
    )


def stage_sizes(samples: int) -> dict[str, int]:
    """Main, pilot and check runs for a budget of ``samples``: ``samples / 250`` main runs
    within 10,000..200,000 (0.7 s to 2 s for LimitDomain(3, 10); its detectable δ is 1.4 × the
    claim at 2,000 runs, 1.1 × from 20,000 on)."""
    runs = min(max(int(samples) // 250, 10_000), 200_000)
    return {
        "runs": runs,
        "pilot_runs": min(max(runs // 40, 500), 5_000),
        "check_runs": min(max(runs // 10, 1_000), 20_000),
    }


def _base(mechanism: Any, counts: Any, domain_size: int | None) -> np.ndarray:
    from dpaudit.neighbours.candidates import default_domain

    if counts is not None:
        return np.asarray(counts, dtype=np.int64)
    return np.full(int(domain_size or default_domain(mechanism)), BASE_COUNT, dtype=np.int64)


def run_grey_delta(
    mechanism: Any, plan: Any, relation: Any, claim: Any, *, counts=None, domain_size=None
) -> dict:
    """The stage's record (module docstring): the bound, or why there is none.

    ``plan`` is the audit's [`AuditPlan`][dpaudit.auditor.planning.plan.AuditPlan] (``grey_delta`` set),
    ``claim`` the audited claim, ``relation`` its neighbour relation.
    """
    from dpaudit.neighbours.relations import is_neighbour

    base = _base(mechanism, counts, domain_size)
    pair = support_edge_pair(mechanism, base, getattr(relation, "max_items", None))
    if pair is None:
        return {"skipped": f"no pair across the declared support's edge from {base.tolist()}"}
    d, d2 = pair
    if not is_neighbour(np.array(d), np.array(d2), relation):
        return {"skipped": f"the support-edge pair {list(d)}, {list(d2)} is not one of {relation}"}
    return pair_record(
        mechanism,
        d,
        d2,
        claim,
        alpha=plan.grey_delta_alpha,
        seed=int(plan.seed),
        samples=int(plan.samples),
    )


def pair_record(
    mechanism: Any, d: Any, d2: Any, claim: Any, *, alpha: float, seed: int, samples: int
) -> dict:
    """The stage's record on the pair ``(d, d2)``: its bound at ``alpha`` on the streams of
    ``seed`` (spawn key ``GREY_DELTA_KEY``), sized for a budget of ``samples``
    (``stage_sizes``). Deterministic: ``dpaudit recheck`` runs it again on a file's pair."""
    sizes = stage_sizes(samples)
    record: dict = {"pair": [list(d), list(d2)], "seed_key": [GREY_DELTA_KEY], "alpha": alpha}
    record.update(sizes)
    stream = np.random.SeedSequence(int(seed), spawn_key=(GREY_DELTA_KEY,))
    try:
        found = structural_delta(
            mechanism,
            d,
            d2,
            claim=(float(claim.epsilon), float(claim.delta)),
            alpha=alpha,
            seed=stream,
            **sizes,
        )
    except DeclaredSupportError as error:
        record["declaration_error"] = {
            "text": str(error),
            "counts": list(error.counts),
            "outcome": list(error.outcome),
            "items": sorted(error.items),
            "declared": sorted(error.declared),
            "how": error.how,
        }
        return record
    except Exception as error:  # the mechanism's own or no tilt: the sampled audit stands
        return {**record, "skipped": f"the stage could not run: {error}"}
    record.update(
        items=sorted(found.items),
        runs=found.runs,
        pilot_runs=found.pilot_runs,
        check_runs=found.check_runs,
        hits=found.hits,
        mixture=found.mixture,
        estimate=found.estimate,
        lower=found.lower,
        detectable_delta=_finite(found.detectable_delta),
        violation=bool(found.violation),
        parts=[
            {
                "item": int(p.item),
                "runs": int(p.runs),
                "hits": int(p.hits),
                "scale": float(p.scale),
                "estimate": float(p.estimate),
                "lower": float(p.lower),
                "variance": float(p.variance),
            }
            for p in found.parts
        ],
    )
    if found.unreached:  # parts left out (StructuralDelta.unreached); absent when none is
        record["unreached"] = sorted(found.unreached)
    return record


def _finite(value: float) -> float | str:
    return value if math.isfinite(value) else "inf"


def usable(record: Any) -> TypeGuard[dict]:
    """Whether ``record`` holds a bound (the stage ran, and no declaration was refuted)."""
    return isinstance(record, dict) and "lower" in record and "declaration_error" not in record


def resolves_delta(record: Any, claim: Any, power_factor: float) -> bool:
    """Whether ``record``'s detectable δ is within ``power_factor`` × the claimed δ."""
    return usable(record) and float(record["detectable_delta"]) <= power_factor * float(claim.delta)


def with_grey_delta(summary: dict, record: Any, claim: Any) -> dict:
    """``summary`` (``confirmation.summarise``) with the grey δ bound folded in: the larger
    ``delta_lower``, the smaller ``detectable_delta``, a violation when it exceeds the claimed δ."""
    if not usable(record):
        return summary
    lower = float(record["lower"])
    merged = dict(summary)
    merged["delta_lower"] = max(float(summary["delta_lower"]), lower)
    merged["detectable_delta"] = min(
        float(summary["detectable_delta"]), float(record["detectable_delta"])
    )
    merged["violation"] = bool(summary["violation"]) or lower > float(claim.delta)
    return merged
