"""The slots of the pairs screening kept: the pairs the user named, one pair for δ, one for ε.

Each rule looks only at what the user gave and at screening's samples, so the bounds stay
valid.
"""

from __future__ import annotations

import numpy as np

from dpaudit.neighbours.pairs import NAMED

from .screening import survivors

__all__ = ["support_changes", "with_delta_slot", "with_epsilon_slot", "with_named_pairs"]


def support_changes(pair) -> bool:
    """Some item is present (count > 0) on one histogram of ``pair`` and absent on the other.

    ``pair``: anything with ``counts`` and ``counts2`` (a pair, a witness).
    """
    return bool(np.any((np.asarray(pair.counts) == 0) != (np.asarray(pair.counts2) == 0)))


def with_named_pairs(kept, scored, keep):
    """``kept``, with the pairs the user named (``pairs=``) confirmed first, up to ``keep``.

    A pair the user names is the one they suspect: confirming it costs one slot and
    answers their question, whereas screening it against hundreds of candidates on a
    few hundred samples can drop it (a sparse vector's leak at ε = 0.1 needs millions
    of samples to show). The named pairs come first, those screening kept, then the
    others best first by [`survivors`][dpaudit.auditor.search.screening.survivors]' rankings, in the slots
    of the worst screened pairs. When screening kept ``keep`` named pairs already (the user named
    that many or more), its choice stands, as with ``restrict=True``. The choice looks only at what
    the user gave and at screening's samples, so the bounds stay valid.

    Parameters
    ----------
    kept : the pairs screening kept, best first.
    scored : ``{pair: scores}`` ([`screen_scores`][dpaudit.auditor.search.screening.screen_scores]) of
        every screened pair.
    keep : pairs carried to selection and confirmation.
    """
    named_kept = [p for p in kept if p.family == NAMED]
    missing = [p for p in scored if p.family == NAMED and p not in kept]
    room = keep - len(named_kept)
    if not missing or room <= 0:
        return kept
    extra = survivors(missing, [scored[p] for p in missing], min(room, len(missing)))
    return [*named_kept, *extra, *(p for p in kept if p.family != NAMED)][:keep]


def with_delta_slot(kept, scored, claim):
    """``kept``, its last pair given to the best pair whose support changes, if none has.

    Where δ is spent — a key present with a small count against the same histogram
    without it, released with a small probability that is 0 without it — an event has
    ``Q = 0`` and ``P`` of the order of δ: screening's few hundred samples per histogram
    never see it. When the claim has ``δ > 0``, one confirmed pair is such a pair, so that
    the audit can flag a δ violation and resolve the claimed δ
    ([`statistics.detectable_delta`][dpaudit.auditor.bounds.statistics.detectable_delta]): the best one by
    screening's δ score, then by its beyond-the-claim score, then in candidate order.

    Parameters
    ----------
    kept : the pairs screening kept.
    scored : ``{pair: scores}`` ([`screen_scores`][dpaudit.auditor.search.screening.screen_scores]) of
        every screened pair, in candidate order (a pair's latest round).
    claim : the claim audited.
    """
    if float(claim.delta) <= 0 or not kept or any(support_changes(p) for p in kept):
        return kept
    return _last_slot_to(kept, scored, support_changes, lambda s: (-s[3], -s[0]))


def with_epsilon_slot(kept, scored, claim):
    """``kept``, its last pair given to the best pair whose support stays, if every one changes.

    The mirror of [`with_delta_slot`][dpaudit.auditor.search.slots.with_delta_slot]. A pair whose
    support changes is where δ is spent, but its events have ``Q = 0`` (or ``Q`` of the order of δ):
    they resolve δ and tell nothing of ε, so an audit that keeps only such pairs cannot reach power
    on ε ([`statistics.detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon] of a
    ``Q = 0`` event is several times the claim) and ends INCONCLUSIVE on a correct mechanism. When
    the claim has ``δ > 0`` and more than one pair is kept, one confirmed pair keeps its support:
    the best one by screening's cautious ε score, then its plug-in ε score, then in candidate order.
    The other kept pairs still chase δ.

    Parameters
    ----------
    kept : the pairs screening kept (after
        [`with_delta_slot`][dpaudit.auditor.search.slots.with_delta_slot]).
    scored : ``{pair: scores}`` ([`screen_scores`][dpaudit.auditor.search.screening.screen_scores]) of
        every screened pair, in candidate order (a pair's latest round).
    claim : the claim audited.
    """
    if float(claim.delta) <= 0 or len(kept) < 2:
        return kept
    if not all(support_changes(p) for p in kept):
        return kept
    return _last_slot_to(kept, scored, lambda p: not support_changes(p), lambda s: (-s[1], -s[2]))


def _last_slot_to(kept, scored, eligible, rank):
    """``kept`` with its last pair replaced by the eligible screened pair not kept that
    ranks first (``rank(scores)`` ascending, then candidate order); unchanged if none."""
    options = [(pair, s) for pair, s in scored.items() if eligible(pair) and pair not in kept]
    # A pair the user named keeps its slot (``with_named_pairs``).
    if not options or kept[-1].family == NAMED:
        return kept
    best = min(range(len(options)), key=lambda i: (*rank(options[i][1]), i))
    return [*kept[:-1], options[best][0]]
