"""Did this commit break privacy? Two audits of one claim compared event by event (issue 46).

Two ways to get the two sides:

* [`compare_results`][dpaudit.compare.compare_results] — two stored results (the JSON of
  ``dpaudit audit --json``) of the same claim and neighbour relation; the (pair, event)s that
  both audits confirmed are compared on their stored counts;
* [`compare_with_baseline`][dpaudit.compare.compare_with_baseline] — the re-test: every
  (pair, event) of a baseline result is drawn again, on fresh samples, from the new mechanism,
  and compared with the baseline's stored counts. Every baseline event is compared (two audits
  of different mechanisms often confirm different events, which leaves the first route
  little to compare).

A (pair, event) is its two histograms, in either order, and its event
([`Event.to_dict`][dpaudit.auditor.values.outcome_events.Event.to_dict]); its privacy loss is
``|ln(P / Q)|`` (the neighbour relations are symmetric, so the loss counts in both directions)
and, when the claimed δ is above 0, its δ at the claimed ε,
``max(0, P − e^ε Q, Q − e^ε P)``. The test of each (pair, event) is
[`growth_p_value`][dpaudit.loss_growth.growth_p_value]: one-sided Wald tests that the loss grew,
Bonferroni over the matched (pair, event)s. "Worse" means: with confidence ``1 − alpha`` in
all, the new version loses more privacy on some matched event; "no significant change" means
no such event was found, not that nothing changed. The test's assumptions are in
[`growth_p_value`][dpaudit.loss_growth.growth_p_value]'s
docstring and in ``docs/guide/compare.md``.
"""

from __future__ import annotations

import json
import math
import secrets
from typing import Any

import numpy as np

from dpaudit.auditor.bounds.statistics import event_bounds
from dpaudit.auditor.results.result import AuditResult
from dpaudit.auditor.results.witness import Witness
from dpaudit.auditor.sources.sampling import sample_counts
from dpaudit.auditor.values.outcome_events import Event, events_hits
from dpaudit.comparison import Comparison, EventChange, claim_text, witness_text
from dpaudit.loss_growth import Tally, growth_p_value
from dpaudit.rebuild import CannotRecheck, audited_mechanism
from dpaudit.recheck import load_result, load_result_data

__all__ = [
    "COMPARE_KEY",
    "DEFAULT_ALPHA",
    "CannotRecheck",
    "Comparison",
    "EventChange",
    "IncomparableResults",
    "compare_results",
    "compare_with_baseline",
    "growth_p_value",
    "require_same_claim",
]

#: Level of a comparison in all: a CI gate fails a harmless change with probability <= 1%.
DEFAULT_ALPHA = 0.01

#: The re-test's streams are ``SeedSequence(seed, spawn_key=(COMPARE_KEY, i))``: never one of
#: an audit's own (``dpaudit.auditor.planning.plan.PHASES`` and the keys 97-99), so a re-test from the
#: audit's seed still draws fresh samples.
COMPARE_KEY = 46


class IncomparableResults(ValueError):
    """The two sides audit different claims or relations (the CLI's usage error)."""


# -- matching ----------------------------------------------------------------------------------


def _event_key(event: Event) -> str:
    """The event as canonical JSON: equal events, equal keys."""
    return json.dumps(event.to_dict(), sort_keys=True)


def _histogram(counts) -> tuple[int, ...]:
    return tuple(int(c) for c in counts)


def _key(w: Witness) -> tuple:
    """``(histogram, histogram, event)``, the two histograms in a fixed order (either order of a
    pair is the same pair: the neighbour relations are symmetric)."""
    return (*sorted((_histogram(w.counts), _histogram(w.counts2))), _event_key(w.event))


def _forward(w: Witness) -> bool:
    """The witness lists its pair in the fixed order of [`_key`][dpaudit.compare._key]."""
    return _histogram(w.counts) <= _histogram(w.counts2)


def _by_key(witnesses) -> dict[tuple, Witness]:
    """The first witness of each (pair, event): a file's repeats are the same samples."""
    found: dict[tuple, Witness] = {}
    for w in witnesses:
        found.setdefault(_key(w), w)
    return found


def _changes(pairs, epsilon: float, delta: float, alpha: float) -> tuple[EventChange, ...]:
    """Test every ``(old witness, new witness, swapped)``; Bonferroni over them."""
    tests = len(pairs)
    changes = []
    for old, new, swapped in pairs:
        p = growth_p_value(Tally.of(old), Tally.of(new, swapped), epsilon, delta)
        adjusted = min(1.0, tests * p)
        changes.append(EventChange(old, new, swapped, p, adjusted, adjusted <= alpha))
    return tuple(changes)


def _check_alpha(alpha: float) -> float:
    if not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return float(alpha)


def _as_result(source, label: str) -> AuditResult:
    if isinstance(source, AuditResult):
        return source
    try:
        return load_result(source)
    except ValueError as error:
        raise ValueError(f"{label}: {error}") from None


def _same_claim(a: tuple[float, float, str], b: tuple[float, float, str]) -> bool:
    return (
        math.isclose(a[0], b[0], rel_tol=1e-9, abs_tol=1e-15)
        and math.isclose(a[1], b[1], rel_tol=1e-9, abs_tol=1e-300)
        and a[2] == b[2]
    )


def require_same_claim(old: AuditResult, new: AuditResult) -> None:
    """Raise [`IncomparableResults`][dpaudit.compare.IncomparableResults] unless the two audits
    tested one claim under one neighbour relation (what makes their events comparable)."""
    mine = (old.claim_epsilon, old.claim_delta, old.neighbours)
    theirs = (new.claim_epsilon, new.claim_delta, new.neighbours)
    if not _same_claim(mine, theirs):
        raise IncomparableResults(
            f"the two results audit different claims: old {claim_text(*mine)}, new "
            f"{claim_text(*theirs)}; audit both versions at one claim (dpaudit audit --claim "
            "EPS,DELTA, and --relation) to compare them"
        )


def compare_results(old, new, *, alpha: float = DEFAULT_ALPHA) -> Comparison:
    """Compare two stored audits of one claim, (pair, event) by (pair, event) (issue 46).

    Parameters
    ----------
    old, new : [`AuditResult`][dpaudit.auditor.AuditResult] s, their ``to_dict()``, or the paths
        of the JSON ``dpaudit audit --json`` wrote.
    alpha : level of the comparison in all (Bonferroni over the matched (pair, event)s).

    The (pair, event)s both confirmed are tested with
    [`growth_p_value`][dpaudit.loss_growth.growth_p_value] on their stored counts (the two audits'
    samples are independent). Audits of two different mechanisms often confirm different
    events; then few or none match, and the re-test
    ([`compare_with_baseline`][dpaudit.compare.compare_with_baseline]) is the route that
    compares them. Raises [`IncomparableResults`][dpaudit.compare.IncomparableResults] when the
    claims or neighbour relations differ.
    """
    alpha = _check_alpha(alpha)
    old, new = _as_result(old, "old"), _as_result(new, "new")
    require_same_claim(old, new)
    old_rows, new_rows = _by_key(old.witnesses), _by_key(new.witnesses)
    matched = [
        (w, new_rows[key], _forward(w) != _forward(new_rows[key]))
        for key, w in old_rows.items()
        if key in new_rows
    ]
    notes = [
        f"the {side} audit was interrupted: its counts are those drawn until then"
        for side, result in (("old", old), ("new", new))
        if result.interrupted
    ]
    return Comparison(
        old.mechanism,
        new.mechanism,
        old.claim_epsilon,
        old.claim_delta,
        old.neighbours,
        alpha,
        "stored",
        _changes(matched, old.claim_epsilon, old.claim_delta, alpha),
        tuple(witness_text(w) for key, w in old_rows.items() if key not in new_rows),
        tuple(witness_text(w) for key, w in new_rows.items() if key not in old_rows),
        notes=tuple(notes),
    )


def compare_with_baseline(
    baseline,
    mechanism=None,
    *,
    samples: int | None = None,
    alpha: float = DEFAULT_ALPHA,
    seed: int | None = None,
    allow_command: bool = False,
) -> Comparison:
    """Re-test a baseline's (pair, event)s on a new mechanism with fresh samples (issue 46).

    Each histogram of the baseline's witnesses is sampled once from the new mechanism (events
    on one histogram share its samples; Bonferroni holds under that dependence), every
    baseline (pair, event) is counted on them and compared with the baseline's stored counts
    by [`growth_p_value`][dpaudit.loss_growth.growth_p_value]. The new side's bounds are
    one-sided Clopper-Pearson bounds at ``alpha / (2 M)`` each for ``M`` (pair, event)s.

    Parameters
    ----------
    baseline : the old [`AuditResult`][dpaudit.auditor.AuditResult], its ``to_dict()``, or the
        path of its JSON.
    mechanism : the new version, anything [`dpaudit.audit`][dpaudit.auditor.audit] accepts (a
        plain callable is wrapped as the baseline's audit wrapped its own, from
        ``evidence.options``); default: rebuilt from the baseline's recorded spec by the code
        installed now (the commit under test).
    samples : fresh samples per histogram (default: the most the baseline drew on it).
    alpha : level of the comparison in all.
    seed : seed of the fresh samples (default: fresh entropy, recorded in the result).
    allow_command : run a recorded ``--command`` child again (with ``mechanism=None``).

    Raises [`IncomparableResults`][dpaudit.compare.IncomparableResults] when the new mechanism's
    claim (or the claim the baseline was told to audit) or relation is not the baseline's, and
    [`CannotRecheck`][dpaudit.rebuild.CannotRecheck] when the mechanism cannot be rebuilt or
    raises while sampling.
    """
    alpha = _checked(alpha, samples, seed)
    data = load_result_data(baseline)
    old = _as_result(data, "baseline")
    given, sampler, declared, relation, notes = audited_mechanism(
        data, mechanism, allow_command=allow_command
    )
    try:
        theirs = _claim_of(old, declared, relation)
        fresh_seed, drawn, retested = _retest(old, sampler, samples, seed, alpha)
    finally:
        if mechanism is None and hasattr(given, "close"):
            given.close()  # a rebuilt --command child
    return Comparison(
        old.mechanism,
        _label(given, declared, data),
        old.claim_epsilon,
        old.claim_delta,
        old.neighbours,
        alpha,
        "re-test",
        _changes(retested, old.claim_epsilon, old.claim_delta, alpha),
        seed=fresh_seed,
        samples=sum(n for n, _ in drawn.values()),
        notes=_notes(notes, given, theirs),
    )


def _checked(alpha, samples, seed) -> float:
    """``alpha`` checked, and ``samples`` and ``seed`` refused when out of range."""
    alpha = _check_alpha(alpha)
    if samples is not None and int(samples) < 1:
        raise ValueError(f"samples must be >= 1, got {samples!r}")
    if seed is not None and int(seed) < 0:
        raise ValueError(f"seed must be >= 0, got {seed!r}")
    return alpha


def _claim_of(old, declared, relation) -> tuple[float, float, str]:
    """The new mechanism's claim, refused unless it is the baseline's."""
    mine = (old.claim_epsilon, old.claim_delta, old.neighbours)
    theirs = (float(declared.epsilon), float(declared.delta), str(relation))
    if not _same_claim(mine, theirs):
        raise IncomparableResults(
            f"the new mechanism claims {claim_text(*theirs)} but the baseline audited "
            f"{claim_text(*mine)}; compare versions of one claim (audit the baseline "
            "with --claim EPS,DELTA to fix the claim for both)"
        )
    return theirs


def _retest(old, sampler, samples, seed, alpha):
    """``(seed, samples drawn, (witness, retested, False) rows)``: the baseline's (pair, event)s
    counted on fresh samples of ``sampler``."""
    rows = list(_by_key(old.witnesses).values())
    fresh_seed = secrets.randbits(128) if seed is None else int(seed)
    each = alpha / (2 * max(len(rows), 1))
    drawn = _draw(sampler, rows, samples, fresh_seed)
    retested = [
        (w, _retested(w, drawn, each, old.claim_epsilon, old.claim_delta), False) for w in rows
    ]
    return fresh_seed, drawn, retested


def _notes(notes, given, declared: tuple[float, float, str]) -> tuple[str, ...]:
    """The rebuild's notes, less "told to audit the claim" when it is the mechanism's own."""
    own = getattr(given, "claim", None)
    epsilon, delta = getattr(own, "epsilon", None), getattr(own, "delta", None)
    if epsilon is not None and _same_claim((epsilon, delta or 0.0, declared[2]), declared):
        return tuple(n for n in notes if not n.startswith("the audit was told to audit"))
    return tuple(notes)


def _label(given, declared, data: dict) -> str:
    from dpaudit.auditor.sources.blackbox import as_auditable

    options = (data.get("evidence") or {}).get("options") or {}
    try:
        return str(
            as_auditable(
                given,
                declared,
                options.get("width"),
                options.get("name"),
                bool(options.get("batched", False)),
                int(options.get("values", 0) or 0),
            ).label
        )
    except (TypeError, ValueError):
        return type(given).__name__


def _encoder_key(event: Event) -> str | None:
    encoder = getattr(event, "encoder", None)
    return None if encoder is None else json.dumps(encoder.to_dict(), sort_keys=True)


def _draw(sampler, rows, samples, seed) -> dict[tuple, tuple[int, dict[str, int]]]:
    """``{(histogram, encoder): (samples drawn, {event key: hits})}`` on fresh samples.

    One draw per histogram (per value encoder, for events over real values), from
    ``SeedSequence(seed, spawn_key=(COMPARE_KEY, i))`` in the order the histograms first occur.
    """
    plan: dict[tuple, dict[str, Any]] = {}
    for w in rows:
        encoder = getattr(w.event, "encoder", None)
        for counts, n in ((w.counts, w.samples_p), (w.counts2, w.samples_q)):
            entry = plan.setdefault(
                (_histogram(counts), _encoder_key(w.event)),
                {"n": 0, "events": {}, "encoder": encoder},
            )
            entry["n"] = max(entry["n"], int(n))
            entry["events"].setdefault(_event_key(w.event), w.event)
    drawn = {}
    for i, (key, entry) in enumerate(plan.items()):
        n = int(samples) if samples is not None else entry["n"]
        stream = np.random.SeedSequence(seed, spawn_key=(COMPARE_KEY, i))
        try:
            counter = sample_counts(
                sampler.sample,
                np.array(key[0], dtype=np.int64),
                n,
                stream,
                encoder=entry["encoder"],
            )
        except Exception as error:  # the mechanism's own failure: the re-test could not run
            raise CannotRecheck(
                f"the new mechanism raised {type(error).__name__}: {error}"
            ) from error
        events = entry["events"]
        hits = events_hits(list(events.values()), counter)
        drawn[key] = (n, {name: int(h) for name, h in zip(events, hits)})
    return drawn


def _retested(w: Witness, drawn, each: float, epsilon: float, delta: float) -> Witness:
    """The baseline witness ``w`` counted again on the fresh samples, with its bounds."""
    event, encoder = _event_key(w.event), _encoder_key(w.event)
    n_p, hits_p = drawn[(_histogram(w.counts), encoder)]
    n_q, hits_q = drawn[(_histogram(w.counts2), encoder)]
    p_low, q_high, eps_lower, delta_lower = event_bounds(
        hits_p[event], n_p, hits_q[event], n_q, each, epsilon, delta
    )
    return Witness(
        w.counts,
        w.counts2,
        w.event,
        hits_p[event],
        n_p,
        hits_q[event],
        n_q,
        float(p_low),
        float(q_high),
        float(eps_lower),
        float(delta_lower),
        w.family,
    )
