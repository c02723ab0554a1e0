"""Tallies pooled look by look (dpaudit.auditor.sources.tallies): running hits equal a recount."""

import pickle
from collections import Counter

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.interfaces import Tally
from dpaudit.auditor.sources.tallies import PooledCounter, pool_into
from dpaudit.auditor.values import (
    VIEW_BINS,
    VIEW_ITEM_TAILS,
    ItemValueThreshold,
    ValueRegion,
    ValueThreshold,
    fit_encoder,
)
from dpaudit.auditor.values.outcome_events import (
    BottomAt,
    ItemAt,
    ItemOutput,
    LengthAtLeast,
    OutcomeSet,
    SignedCountAtLeast,
    counted_hits,
    events_hits,
)


def _integer_draw(rng, size):
    # Outcomes of varying length (⊥ last), so that look draws pad to different widths.
    counter: Counter = Counter()
    for _ in range(size):
        length = int(rng.integers(0, 4))
        items = tuple(int(v) for v in rng.choice(6, size=length, replace=False))
        counter[items + ((M.BOTTOM,) if rng.random() < 0.3 else ())] += 1
    return counter


def _integer_events(rng):
    outcomes = [(int(a),) for a in rng.integers(0, 6, size=3)] + [(1, 2), (3, M.BOTTOM)]
    return [
        ItemOutput(int(rng.integers(0, 6))),
        ItemAt(int(rng.integers(0, 6)), int(rng.integers(0, 3))),
        LengthAtLeast(int(rng.integers(1, 4))),
        BottomAt(int(rng.integers(0, 3))),
        SignedCountAtLeast((0, 1), (2,), 1),
        OutcomeSet(frozenset(outcomes)),
    ]


@pytest.mark.parametrize("seed", range(6))
def test_running_hits_over_looks_equal_a_recount_of_the_pool(seed):
    # Six looks on two histograms; events asked first at different looks, some never
    # again, and one histogram skipping looks (a pair that stopped): at every look each
    # event's hits on the pool equal its hits counted on a plain Counter of every draw.
    rng = np.random.default_rng(seed)
    events = _integer_events(rng)
    pooled: dict = {}
    plain = {"a": Counter(), "b": Counter()}
    n = {"a": 0, "b": 0}
    for look in range(6):
        drawn = {}
        for h in ("a", "b"):
            if h == "b" and look in (2, 3):
                continue
            size = int(rng.integers(1, 80))
            drawn[h] = Tally(_integer_draw(rng, size), size)
            plain[h].update(drawn[h].counter)
            n[h] += size
        pool_into(pooled, drawn)
        for h in drawn:
            asked = events[: 1 + (look + seed) % len(events)]
            assert isinstance(pooled[h].counter, PooledCounter)
            assert pooled[h].counter == plain[h] and pooled[h].n == n[h]
            assert list(pooled[h].counter) == list(plain[h])  # the same key order too
            assert events_hits(asked, pooled[h].counter).tolist() == (
                counted_hits(asked, plain[h]).tolist()
            )


@pytest.mark.parametrize("seed", range(3))
def test_running_hits_of_value_events_equal_a_recount(seed):
    # Encoded value draws (every view) pooled over four looks; the value event kinds.
    rng = np.random.default_rng(10 + seed)

    def batch(size, shift):
        items = rng.integers(0, 3, size=(size, 1))
        return M.MixedBatch(items, rng.laplace(shift + items[:, :1], 1.0).astype(float))

    encoder = fit_encoder(1, 1, batch(3_000, 0.5), batch(3_000, 0.0), bins=16, score_bins=16)
    first = encoder.count(batch(2_000, 0.5))
    cells = frozenset(k for k in first if k[0] == VIEW_BINS and k[-1] % 2 == 0)
    events = [
        ValueRegion(encoder, VIEW_BINS, cells),
        ValueThreshold(encoder, 0, 3, True),
        ValueThreshold(encoder, -1, 4, False),
    ]
    tails = [e for e in encoder.item_edges if e[0] == 0]
    if tails:
        events.append(ItemValueThreshold(encoder, 0, tails[0][1], 2, True))
    pooled = {"p": Tally(first, 2_000)}
    plain = Counter(first)
    for look in range(4):
        events_hits(events[: 1 + look], pooled["p"].counter)
        drawn = encoder.count(batch(int(rng.integers(500, 3_000)), 0.5))
        plain.update(drawn)
        pool_into(pooled, {"p": Tally(drawn, drawn.total())})
        assert events_hits(events, pooled["p"].counter).tolist() == (
            counted_hits(events, plain).tolist()
        )
    assert any(k[0] == VIEW_ITEM_TAILS for k in plain)


def test_a_pooled_counter_does_not_change_in_place():
    pooled = PooledCounter({(1,): 3})
    event = ItemOutput(1)
    assert events_hits([event], pooled).tolist() == [3]
    for change in (
        lambda c: c.update({(1,): 1}),
        lambda c: c.__setitem__((1,), 5),
        lambda c: c.pop((1,)),
        lambda c: c.clear(),
        lambda c: c.subtract({(1,): 1}),
    ):
        with pytest.raises(TypeError, match="does not change in place"):
            change(pooled)
    more = pooled.plus({(1,): 2, (2,): 4})
    assert events_hits([event], more).tolist() == [5] and pooled == Counter({(1,): 3})
    copy = Counter(more)
    copy[(1,)] += 1
    assert copy[(1,)] == 6 and more[(1,)] == 5
    assert type(more.copy()) is PooledCounter and more.copy() == more
    again = pickle.loads(pickle.dumps(more))
    assert type(again) is PooledCounter and again == more
    assert events_hits([event], again).tolist() == [5]


def _pool_by_recount(pooled, drawn):
    # Plain Counters merged at every look: every tester call recounts the whole pool.
    for h, (counter, n) in drawn.items():
        old, m = pooled.get(h, (Counter(), 0))
        merged = Counter(old)
        merged.update(counter)
        pooled[h] = Tally(merged, m + n)


def test_a_value_audit_in_looks_equals_one_that_recounts_every_look(monkeypatch):
    # The whole audit (screening, selection, confirmation in looks) with running hits and
    # with plain pooled Counters recounted at each look: the same witnesses and looks.
    import dpaudit
    from dpaudit.auditor.run import pipeline
    from dpaudit.catalog import catalog_entry

    entry = catalog_entry("noisy-counts-half-noise")
    options = {"samples": 300_000, "seed": 1, "counts": [3, 2, 2, 0, 0], "restrict": True}
    running = dpaudit.audit(entry.correct(), chunk=20_000, **options)
    monkeypatch.setattr(pipeline, "pool_into", _pool_by_recount)
    recounted = dpaudit.audit(entry.correct(), chunk=20_000, **options)
    assert max(running.evidence["confirmation_looks"]["last_look_of_pair"].values()) >= 1
    assert running.witnesses == recounted.witnesses and running.samples == recounted.samples
    assert running.evidence["confirmation_looks"] == recounted.evidence["confirmation_looks"]
