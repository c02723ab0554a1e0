"""Which pairs go on to their next look: the pairs nearest the claim, beyond δ, best powered.

The priorities of sequential confirmation
([`confirmation.confirm_sequentially`][dpaudit.auditor.confirm.confirmation.confirm_sequentially]):
how far a pair's witnesses go toward the claim, how far its ``Q = 0`` events go toward a flagged
δ violation, and which pair gives the audit its power.
"""

from __future__ import annotations

import math

from ..search.slots import support_changes

__all__ = ["delta_promise", "focus_pairs", "nearness", "release_unjudged"]


def nearness(witnesses, claim, assured=False) -> float:
    """How far the best event of a pair goes toward the claim (1: at the claim).

    The larger of its lower bounds and its plug-in estimates over the claimed ε and δ:
    the estimates rank pairs whose bounds are all 0. The ε estimate is ``ln(P̂ / Q̂)``
    (``Q̂`` at least one hit's worth); the δ estimate ``P̂ − e^ε Q̂`` less one standard
    error, since on a likely event its noise dwarfs a small δ. ``assured``: the ε
    estimate less one standard error too (``√(1/hits_P + 1/hits_Q)``, the delta method),
    so that a rare event's lucky estimate does not outrank a likely event's steady one.
    """
    eps, delta = float(claim.epsilon), float(claim.delta)
    best = 0.0
    for w in witnesses:
        q = max(w.q_hat, 1.0 / max(w.samples_q, 1))
        estimate = math.log(w.p_hat / q) if w.p_hat > delta and w.p_hat > q else 0.0
        if assured and estimate > 0:
            estimate -= math.sqrt(1.0 / max(w.hits_p, 1) + 1.0 / max(w.hits_q, 1))
        best = max(best, max(w.epsilon_lower, estimate) / max(eps, 1e-12))
        if delta > 0:
            spread = math.sqrt(
                w.p_hat / max(w.samples_p, 1) + math.exp(2 * eps) * w.q_hat / max(w.samples_q, 1)
            )
            excess = w.p_hat - math.exp(eps) * w.q_hat - spread
            best = max(best, max(w.delta_lower, excess) / delta)
    return best


def delta_promise(witnesses, flagged_at) -> float:
    """How far ``Q = 0`` events go toward a flagged δ violation (1: flagged), at best.

    Where δ is spent, a key present on one histogram and absent on the other
    ([`slots.support_changes`][dpaudit.auditor.search.slots.support_changes]), an event never seen
    on the second histogram (``Q̂ = 0``) but seen on the first is the key's release. Its plug-in
    ``P̂`` over ``flagged_at``, the ``P`` that a ``Q = 0`` event needs to be flagged at the last
    look with probability one half ([`statistics.p_needed`][dpaudit.auditor.bounds.statistics.p_needed] at
    ``Q = 0`` and the last look's size and level): above 1, the remaining looks would more likely
    than not flag a violation if ``P`` were as large as it looks. A witness whose histograms have
    the same support scores 0: its ``Q = 0`` events are rare outcomes not yet seen on ``Q``,
    and its δ is measured by [`nearness`][dpaudit.auditor.confirm.focus.nearness].
    """
    best = 0.0
    if not flagged_at < math.inf:
        return best
    for w in witnesses:
        if w.hits_q == 0 and support_changes(w):
            best = max(best, w.p_hat / flagged_at)
    return best


def release_unjudged(witnesses, focus_size) -> bool:
    """Some key's release (``Q = 0`` where the support changes) has fewer than ``focus_size``
    samples: it is judged at the focus look
    ([`delta_promise`][dpaudit.auditor.confirm.focus.delta_promise]), the first large enough to tell
    a release of about δ from none, so power alone does not stop before it."""
    return any(w.hits_q == 0 and w.samples_p < focus_size and support_changes(w) for w in witnesses)


def _holds_on(latest, claim, flagged_at, alone_at) -> bool:
    """Some pair still looks beyond the claim: a key's release that would be flagged
    ([`delta_promise`][dpaudit.auditor.confirm.focus.delta_promise] over 1), an estimate less one
    standard error at ``alone_at`` claims or more, or an event at or beyond the claim
    ([`nearness`][dpaudit.auditor.confirm.focus.nearness] at least 1)."""
    return any(
        delta_promise(ws, flagged_at) > 1
        or (math.isfinite(alone_at) and nearness(ws, claim, assured=True) >= alone_at)
        or nearness(ws, claim) >= 1
        for ws in latest.values()
    )


def focus_pairs(
    latest, claim, shortfall, flagged_at=math.inf, alone_at=math.inf, going_on=None
) -> list:
    """The pairs whose next look informs most: beyond the claimed δ, nearest the claim,
    best powered.

    ``latest[pair] = witnesses`` at the pair's latest look. Kept, in this order of
    priority: the pair whose ``Q = 0`` events go furthest toward a flagged δ violation,
    when one would be flagged ([`delta_promise`][dpaudit.auditor.confirm.focus.delta_promise] with
    ``flagged_at``; where δ is spent, confirming a δ violation takes the samples a ``P`` of the
    order of δ needs, which no ε pair does; ``inf``: no such pick); the pair whose events
    go furthest toward the claim ([`nearness`][dpaudit.auditor.confirm.focus.nearness]: the one that
    can confirm a violation); and the pair with the smallest detectable δ when δ is what still lacks
    power (``shortfall == "delta"``), else the one with the smallest detectable ε (the
    pair that can give the audit its power). Ties go to the earlier pair; a criterion
    where no pair has anything (all 0 or infinite) picks none, and with no pick at all
    the pairs ``going_on`` go on (None: every pair). The first pair is the one
    [`confirm_sequentially`][dpaudit.auditor.confirm.confirmation.confirm_sequentially] may reserve
    the last look for.

    ``alone_at``: when no key's release is that promising and a pair's estimate less one
    standard error (``nearness(..., assured=True)``) reaches ``alone_at`` times the claim,
    the pair where it is largest goes on alone. The looks grow geometrically, so the
    samples a second pair would take are the next look of the first: a bug whose ε is 1.5
    to 2 times the claim on an event of probability about 1 % (a sparse vector's "first
    above at the last query") needs about a million samples per side, one look more than
    two pairs can afford.

    ``going_on``: the pairs drawn at the last step, when others were left behind. While
    one of them still looks beyond the claim (a release that would be flagged, an
    estimate at ``alone_at`` claims less a standard error, or an event at the claim),
    only they compete: a pair left behind must catch up look by look, which a leak already
    in sight should not pay for. Once none does (a lucky estimate collapsed), every pair
    competes, and one left behind comes back. The power pick is always among the pairs
    going on: power grows with samples, which a pair left behind has yet to pay for, and
    detectable values read at different looks compared across pairs made pairs take
    turns, each catching up, without any getting further (an interactive session's
    audit of LimitDomain, `tests/golden`).
    """
    latest = _going_on_if_holding(latest, claim, flagged_at, alone_at, going_on)
    pairs = list(latest)
    picks = []
    promise = {p: delta_promise(latest[p], flagged_at) for p in pairs}
    if max(promise.values(), default=0.0) > 1:
        picks.append(max(pairs, key=lambda p: (promise[p], -pairs.index(p))))
    elif math.isfinite(alone_at):
        sure = {p: nearness(latest[p], claim, assured=True) for p in pairs}
        surest = max(pairs, key=lambda p: (sure[p], -pairs.index(p)), default=None)
        if surest is not None and sure[surest] >= alone_at:
            return [surest]
    near = {p: nearness(latest[p], claim) for p in pairs}
    if max(near.values(), default=0.0) > 0:
        picks.append(max(pairs, key=lambda p: (near[p], -pairs.index(p))))
    picks += _best_powered(latest, pairs, shortfall, going_on)
    if picks:
        return list(dict.fromkeys(picks))
    return pairs if going_on is None else [p for p in pairs if p in going_on]


def _going_on_if_holding(latest, claim, flagged_at, alone_at, going_on) -> dict:
    """``latest`` narrowed to the pairs ``going_on`` while one of them still looks beyond the
    claim (``_holds_on``); else all of it, so that a pair left behind competes again."""
    if going_on is not None and len(going_on) < len(latest):
        current = {p: ws for p, ws in latest.items() if p in going_on}
        if _holds_on(current, claim, flagged_at, alone_at):
            return current
    return latest


def _best_powered(latest, pairs, shortfall, going_on) -> list:
    """``[the pair going on with the smallest detectable δ or ε]`` (``shortfall`` says which;
    ``[]`` when none has any power). Ties go to the earlier pair of ``pairs``."""
    field = "detectable_delta" if shortfall == "delta" else "detectable_epsilon"
    # Power is compared among the pairs going on only (see focus_pairs' docstring).
    powered = pairs if going_on is None else [p for p in pairs if p in going_on]
    best = {p: min((getattr(w, field) for w in latest[p]), default=math.inf) for p in powered}
    if min(best.values(), default=math.inf) < math.inf:
        return [min(powered, key=lambda p: (best[p], pairs.index(p)))]
    return []
