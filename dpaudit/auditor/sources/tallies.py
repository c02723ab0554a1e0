"""Tallies pooled over successive draws, each event's hits kept running.

A sequential confirmation bounds the same events on tallies that grow look by look
([`sequential`][dpaudit.auditor.bounds.sequential]). An event's hits are a sum over outcomes, so its hits
on the pool are its hits on the pool before the look plus its hits on the look's draw: a
[`PooledCounter`][dpaudit.auditor.sources.tallies.PooledCounter] counts each draw once for the events
already asked about, and an event asked about for the first time once on the whole pool. This relies
on the [`outcome_events.Event`][dpaudit.auditor.values.outcome_events.Event] contract that ``mask`` decides each outcome by
itself.
"""

from __future__ import annotations

from collections import Counter

from ..interfaces import Tally
from ..values.outcome_events import counted_hits

__all__ = ["PooledCounter", "pool_into"]


def _frozen(self, *args, **kwargs):
    raise TypeError(
        "a PooledCounter does not change in place (its events' hits would go stale): "
        "pool a draw with .plus(drawn), or change a plain Counter(...) of it"
    )


class PooledCounter(Counter):
    """``{outcome: count}`` pooled over draws, with the running hits of the events asked.

    Read like any ``collections.Counter``; it does not change in place
    ([`plus`][dpaudit.auditor.sources.tallies.PooledCounter.plus] returns the pool with one more draw;
    ``Counter(pooled)`` is a mutable copy), so the hits it keeps are always those of its counts.

    Parameters
    ----------
    counts : ``{outcome: count}`` of the first draw (a mapping).
    """

    def __init__(self, counts=None):
        dict.__init__(self)
        if counts:
            dict.update(self, counts)
        # id(event) -> (event, hits): the event is held so that its id stays its own.
        self._hits: dict[int, tuple] = {}

    def running_hits(self, events) -> list[int]:
        """Hits of each event: kept ones as they are, new ones counted on the pool once."""
        new = {id(e): e for e in events if id(e) not in self._hits}
        if new:
            hits = counted_hits(list(new.values()), self).tolist()
            self._hits.update(zip(new, zip(new.values(), hits)))
        return [self._hits[id(e)][1] for e in events]

    def plus(self, drawn) -> PooledCounter:
        """The pool with ``drawn`` added (``{outcome: count}``); the kept hits count it once."""
        pooled = PooledCounter(self)
        get, put = dict.get, dict.__setitem__  # the pool is new: it may still change
        for key, count in drawn.items():
            put(pooled, key, get(pooled, key, 0) + count)
        kept = [event for event, _ in self._hits.values()]
        if kept:
            added = counted_hits(kept, drawn).tolist()
            pooled._hits = {
                key: (event, hits + more)
                for (key, (event, hits)), more in zip(self._hits.items(), added)
            }
        return pooled

    __setitem__ = __delitem__ = update = subtract = clear = pop = popitem = _frozen
    setdefault = __ior__ = __iand__ = __iadd__ = __isub__ = _frozen


def pool_into(pooled: dict, drawn: dict) -> None:
    """Add the tallies ``drawn`` to ``pooled`` (both ``{histogram: Tally}``)."""
    for h, (counter, n) in drawn.items():
        if h in pooled:
            old, m = pooled[h]
            base = old if isinstance(old, PooledCounter) else PooledCounter(old)
            pooled[h] = Tally(base.plus(counter), m + n)
        else:
            pooled[h] = Tally(PooledCounter(counter), n)
