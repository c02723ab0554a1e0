"""Confirmation: bound the chosen events on fresh samples; witnesses and the audit's power.

The tester role of DESIGN.md's auditor, second half. Every chosen event gets one-sided
Clopper–Pearson intervals at ``alpha_each`` on samples drawn after it was chosen, so all
bounds hold together with probability ``>= 1 − alpha`` (Bonferroni over the events,
both sides of each). Each witness also records whether it separates its two histograms
and the smallest true ε and δ it would have flagged with probability 0.9
([`statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon],
[`statistics.detectable_delta`][dpaudit.auditor.bounds.statistics.detectable_delta]).
"""

from __future__ import annotations

import math

from ..bounds.statistics import (
    detectable_delta,
    detectable_epsilon,
    event_bounds,
    one_sided_lower,
    one_sided_upper,
)
from ..results.result import DEFAULT_POWER_FACTOR, Witness, event_power
from ..search.slots import support_changes
from ..values.outcome_events import events_hits

__all__ = [
    "affordable",
    "confirm_events",
    "confirm_sequentially",
    "curve_evidence",
    "curve_exceeded",
    "curve_violated",
    "delta_promise",
    "focus_pairs",
    "nearness",
    "next_looks",
    "release_unjudged",
    "summarise",
]


def confirm_events(chosen, samples, alpha_each, claim) -> list[Witness]:
    """Witnesses of the ``chosen`` events on ``samples[histogram] = (Counter, n)``."""
    witnesses = []
    for pair, oriented, event in chosen:
        counter_p, n_p = samples[oriented.counts]
        counter_q, n_q = samples[oriented.counts2]
        hits_p = int(events_hits([event], counter_p)[0])
        hits_q = int(events_hits([event], counter_q)[0])
        p_low, q_high, eps_b, delta_b = event_bounds(
            hits_p, n_p, hits_q, n_q, alpha_each, claim.epsilon, claim.delta
        )
        power = detectable_epsilon(hits_q, n_p, n_q, alpha_each, claim.epsilon, claim.delta)
        power_delta = detectable_delta(hits_q, n_p, n_q, alpha_each, claim.epsilon, claim.delta)
        witnesses.append(
            Witness(
                oriented.counts,
                oriented.counts2,
                event,
                hits_p,
                n_p,
                hits_q,
                n_q,
                float(p_low),
                float(q_high),
                float(eps_b),
                float(delta_b),
                pair.family,
                float(power),
                float(power_delta),
                float(one_sided_lower(hits_q, n_q, alpha_each)),
                float(one_sided_upper(hits_p, n_p, alpha_each)),
            )
        )
    return witnesses


def _pair_histograms(pair) -> tuple:
    return (pair.counts, pair.counts2)


def _pair_look(pair, look_of) -> int:
    """The furthest look either histogram of ``pair`` was brought to (-1: none yet)."""
    return max(look_of.get(h, -1) for h in _pair_histograms(pair))


def _histogram_set(pairs) -> set:
    return {h for pair in pairs for h in _pair_histograms(pair)}


def _histograms(pairs) -> int:
    return len(_histogram_set(pairs))


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
    and its δ is measured by [`nearness`][dpaudit.auditor.confirm.confirmation.nearness].
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
    ([`delta_promise`][dpaudit.auditor.confirm.confirmation.delta_promise]), the first large enough to tell
    a release of about δ from none, so power alone does not stop before it."""
    return any(w.hits_q == 0 and w.samples_p < focus_size and support_changes(w) for w in witnesses)


def _holds_on(latest, claim, flagged_at, alone_at) -> bool:
    """Some pair still looks beyond the claim: a key's release that would be flagged
    ([`delta_promise`][dpaudit.auditor.confirm.confirmation.delta_promise] over 1), an estimate less one
    standard error at ``alone_at`` claims or more, or an event at or beyond the claim
    ([`nearness`][dpaudit.auditor.confirm.confirmation.nearness] at least 1)."""
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
    when one would be flagged ([`delta_promise`][dpaudit.auditor.confirm.confirmation.delta_promise] with
    ``flagged_at``; where δ is spent, confirming a δ violation takes the samples a ``P`` of the
    order of δ needs, which no ε pair does; ``inf``: no such pick); the pair whose events
    go furthest toward the claim ([`nearness`][dpaudit.auditor.confirm.confirmation.nearness]: the one that
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
    if going_on is not None and len(going_on) < len(latest):
        current = {p: ws for p, ws in latest.items() if p in going_on}
        if _holds_on(current, claim, flagged_at, alone_at):
            latest = current
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
    field = "detectable_delta" if shortfall == "delta" else "detectable_epsilon"
    # Power is compared among the pairs going on only (see the docstring).
    powered = pairs if going_on is None else [p for p in pairs if p in going_on]
    best = {p: min((getattr(w, field) for w in latest[p]), default=math.inf) for p in powered}
    if min(best.values(), default=math.inf) < math.inf:
        picks.append(min(powered, key=lambda p: (best[p], pairs.index(p))))
    if picks:
        return list(dict.fromkeys(picks))
    return pairs if going_on is None else [p for p in pairs if p in going_on]


def affordable(chosen, drawn_last, cost, room) -> list:
    """The pairs of ``chosen`` (in order) whose ``cost([pair])`` on its own is within
    ``room``; if none, those of ``drawn_last`` (the pairs drawn the step before) that are."""
    found = [p for p in chosen if cost([p]) <= room]
    return found or [p for p in drawn_last if cost([p]) <= room]


def next_looks(group, look_of, last) -> dict:
    """``{histogram: look}``: the look each histogram of ``group`` is brought to next.

    Each pair goes to the look after the furthest of its histograms (``look_of[h]``, -1
    before any), and a histogram two pairs of the group share goes to the later of their
    looks, so both histograms of a pair always end at the same look. Pairs whose look
    would be past ``last`` are left out.
    """
    target: dict = {}
    pairs = [p for p in group if _pair_look(p, look_of) < last]
    for p in pairs:
        j = _pair_look(p, look_of) + 1
        for h in _pair_histograms(p):
            target[h] = max(target.get(h, -1), j)
    changed = True
    while changed:  # lift each pair to its furthest histogram (shared ones may have moved)
        changed = False
        for p in pairs:
            j = max(target[h] for h in _pair_histograms(p))
            for h in _pair_histograms(p):
                if target[h] < j:
                    target[h], changed = j, True
    return target


def confirm_sequentially(
    chosen,
    draw,
    schedule,
    alpha_each,
    claim,
    enough,
    budget,
    focus,
    focus_look=0,
    tester=confirm_events,
    reserve=None,
    futile=None,
):
    """Confirm in looks; stop on ``enough``, for futility, when the budget is spent, or when
    no pair can go further.

    Each pair goes through the looks of ``schedule`` on its own: at each step, every pair
    going on is brought to its next look ``j``, ``schedule.sizes()[j]`` samples per
    histogram (``draw(step, {histogram: (from look, to look)}, pairs) ->
    samples[histogram] = (Counter, n)``, cumulative; -1: no look yet), and its events are
    bounded at ``schedule.alpha_at(alpha_each, j)`` (α-spending,
    [`sequential`][dpaudit.auditor.bounds.sequential]). A pair's samples at look ``j`` are the first
    ``sizes[j]`` of its histograms' streams of fresh draws, and it is bounded at each look at most
    once, so its bounds, read at whichever look it stopped, hold with probability
    ``>= 1 − 2 alpha_each`` per event, whatever the rules decided. While every pair goes
    on, step ``j`` is look ``j`` for all of them. After each step ``enough(witnesses)`` may
    stop the audit (a violation confirmed, or power reached); otherwise, from step
    ``focus_look`` on, ``focus(latest, going_on) -> pairs`` chooses the pairs that go on, by
    priority, among every pair's latest witnesses: a pair left behind comes back, at the
    look after its last, when it ranks first again (a rare event's lucky estimate that took
    the looks and collapsed hands them back); once the pairs going on are all at the last
    look, ``focus(latest, None)`` chooses among the others, so the budget left goes to
    them. A step is drawn for as many of them as its
    cost lets fit in ``budget`` samples, the first that fits at least (when none does, the
    pairs of the step before go on as far as the budget lets them:
    [`affordable`][dpaudit.auditor.confirm.confirmation.affordable]). When
    ``reserve(witnesses of the first pair)`` holds after ``focus_look``, the others are drawn only
    while the first can still reach the last look (the schedule is sized for all pairs up to the
    focus look and one pair to the last,
    [`plan.AuditPlan.confirm_schedule`][dpaudit.auditor.planning.plan.AuditPlan.confirm_schedule]): a pair
    that needs every sample the budget has gets them, instead of an equal share with which no pair
    reaches the end. Decisions depend only on the tallies, so the looks are the same for every
    executor.

    ``tester`` bounds the events at each look
    ([`confirm_events`][dpaudit.auditor.confirm.confirmation.confirm_events]); ``reserve`` None reserves
    nothing. ``futile(witnesses, going on, look)``, after each step when the budget can draw the
    next one, may stop the looks when the pairs that go on can neither confirm a violation nor give
    the audit its power ([`futility.futility`][dpaudit.auditor.confirm.futility.futility]); None never
    stops.

    Returns ``(witnesses, looks, futility)``: the witnesses of every pair at its last
    look, ``{pair index: last look}``, and what ``futile`` returned when it stopped the
    looks (else None).
    """
    pairs = list(dict.fromkeys(pair for pair, _, _ in chosen))
    sizes = schedule.sizes()
    last = len(sizes) - 1
    active = list(pairs)
    latest: dict = {}
    last_look: dict = {}
    look_of: dict = {}  # the look each histogram was last brought to
    drawn_last: list = []

    def cost(group):
        target = next_looks(group, look_of, last)
        return sum(sizes[j] - (sizes[look_of[h]] if h in look_of else 0) for h, j in target.items())

    def movable(group):
        return [p for p in group if _pair_look(p, look_of) < last]

    spent = 0
    stopped = None
    step = 0
    while True:
        if step > 0:
            # A pair too far behind for the budget is passed over; if every pair focus
            # chose is, those drawn the step before go on, as far as the budget goes.
            active = affordable(movable(active), movable(drawn_last), cost, budget - spent)
            if not active:
                break
        reserved = 0
        if step > focus_look and reserve is not None and reserve(latest[active[0]]):
            first = max(next_looks(active[:1], look_of, last).values())
            reserved = (sizes[-1] - sizes[first]) * _histograms(active[:1])
        while step > 0 and len(active) > 1 and spent + cost(active) + reserved > budget:
            active = active[:-1]
        target = next_looks(active, look_of, last)
        spent += cost(active)
        samples = draw(step, {h: (look_of.get(h, -1), j) for h, j in target.items()}, active)
        look_of.update(target)
        drawn_last = list(active)
        for pair in active:
            look = target[pair.counts]
            mine = [c for c in chosen if c[0] == pair]
            latest[pair] = tester(mine, samples, schedule.alpha_at(alpha_each, look), claim)
            last_look[pair] = look
        witnesses = [w for pair in pairs if pair in latest for w in latest[pair]]
        if enough(witnesses):
            break
        if step >= focus_look:
            # The pairs going on first, in their order: ties go to the one drawn so far.
            ranked = active + [p for p in pairs if p in latest and p not in active]
            active = focus({p: latest[p] for p in ranked}, active)
            if not movable(active):
                # Those going on are at the last look: the budget left goes to the others.
                rest = movable(ranked)
                active = focus({p: latest[p] for p in rest}, None) if rest else []
        # Only a step the budget would draw is dropped for futility.
        going = affordable(movable(active), movable(drawn_last), cost, budget - spent)
        if not going:
            break
        if futile is not None:
            stopped = futile(witnesses, [w for p in going for w in latest[p]], last_look[going[0]])
            if stopped is not None:
                break
        step += 1
    witnesses = [w for pair in pairs if pair in latest for w in latest[pair]]
    return witnesses, {pairs.index(p): look for p, look in last_look.items()}, stopped


def curve_exceeded(claim, p_low: float, q_high: float) -> bool:
    """``P >= p_low`` and ``Q <= q_high`` exceed a curve claim δ(ε) at some ε.

    A [`ProfileClaim`][mechanisms.ProfileClaim] (a privacy profile: ρ-zCDP, μ-GDP, a list of
    points) allows δ(ε) at every ε, not only at its head point; the bounds violate it when
    ``p_low − e^ε q_high > δ(ε)`` where that is largest
    ([`mechanisms.profiles.most_violating_epsilon`][mechanisms.profiles.most_violating_epsilon]).
    False for a single-point claim, which [`summarise`][dpaudit.auditor.confirm.confirmation.summarise]
    tests directly. Bounds are clipped to [0, 1] first.
    """
    from mechanisms.claims import ProfileClaim
    from mechanisms.profiles import most_violating_epsilon

    if not isinstance(claim, ProfileClaim):
        return False
    p, q = min(max(p_low, 0.0), 1.0), min(max(q_high, 0.0), 1.0)
    return most_violating_epsilon(claim, p, q)[1] > 0


def curve_violated(witnesses, claim) -> bool:
    """Some witness's bounds exceed a curve claim
    ([`curve_exceeded`][dpaudit.auditor.confirm.confirmation.curve_exceeded]). The bounds hold together with
    probability ``>= 1 − alpha`` whatever ε is read, so this is as valid as the head-point test."""
    return any(curve_exceeded(claim, w.p_low, w.q_high) for w in witnesses)


def curve_evidence(witnesses, claim) -> dict | None:
    """For a curve claim: the profile and where its best witness violates it most.

    ``{"profile": ..., "epsilon": ε*, "delta_allowed": δ(ε*), "excess": ...}`` for the
    witness whose bounds exceed the curve by the most
    ([`mechanisms.profiles.most_violating_epsilon`][mechanisms.profiles.most_violating_epsilon]);
    None for a single-point claim.
    """
    from mechanisms.claims import ProfileClaim
    from mechanisms.profiles import most_violating_epsilon, profile_to_dict

    if not isinstance(claim, ProfileClaim):
        return None
    record: dict = {"profile": profile_to_dict(claim.profile)}
    found = [(most_violating_epsilon(claim, w.p_low, w.q_high), i) for i, w in enumerate(witnesses)]
    if found:
        (epsilon, excess), index = max(found, key=lambda f: f[0][1])
        record.update(
            epsilon=float(epsilon),
            delta_allowed=float(claim.profile.delta_at(epsilon)),
            excess=float(excess),
            witness=int(index),
        )
    return record


def summarise(witnesses, claim, power_factor: float = DEFAULT_POWER_FACTOR) -> dict:
    """Headline numbers: the best ε and δ witnesses, violation, separation, detectable ε and δ.

    The headline detectable ε is the LARGEST over the events with ε power within
    ``power_factor`` × the claim ([`result.event_power`][dpaudit.auditor.results.result.event_power]
    ``"epsilon"``), so that "a true ε of X or more would have been flagged" holds on each of them
    (with none such, the largest over the events drawn to the end with some ε power
    ([`Witness.has_epsilon_power`][dpaudit.auditor.results.witness.Witness.has_epsilon_power]), a figure
    to size a rerun). The detectable δ is the smallest over the events a pass covers (the δ the
    audit can resolve on its best δ event, which the text names): those drawn to the end, and
    those whose pairs were left at an earlier look with power or bounds at that look. Events left
    without them are not covered by a pass (``"left"``).
    """
    labels = event_power(witnesses, claim.epsilon, claim.delta, power_factor)
    covered = [w for w, label in zip(witnesses, labels) if label != "left"]
    most = max((w.samples_p + w.samples_q for w in witnesses), default=0)
    to_end = [w for w in witnesses if w.samples_p + w.samples_q == most]
    powered = [w.detectable_epsilon for w, label in zip(witnesses, labels) if label == "epsilon"]
    eps_w = max(witnesses, key=lambda w: (w.epsilon_lower, w.delta_lower), default=None)
    delta_w = max(witnesses, key=lambda w: (w.delta_lower, w.epsilon_lower), default=None)
    # (ε-bound > ε) and (δ-bound > δ) are the same condition on one event
    # (P_low − δ > e^ε Q_high); testing both guards against rounding.
    violation = any(
        w.delta_lower > claim.delta and w.epsilon_lower > claim.epsilon for w in witnesses
    ) or curve_violated(witnesses, claim)
    return {
        "epsilon_witness": eps_w,
        "delta_witness": delta_w,
        "epsilon_lower": eps_w.epsilon_lower if eps_w else 0.0,
        "delta_lower": delta_w.delta_lower if delta_w else 0.0,
        "violation": bool(violation),
        "separated": any(w.separates for w in witnesses),
        "detectable_epsilon": max(powered)
        if powered
        else max((w.detectable_epsilon for w in to_end if w.has_epsilon_power), default=math.inf),
        "detectable_delta": min((w.detectable_delta for w in covered), default=math.inf),
    }
