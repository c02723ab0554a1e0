"""The best ε lower bound any event of a simple family could give on a variant's witness pair.

When the default audit misses a variant of :mod:`bench_variants`, is the search to blame (a
better pair or event was within reach) or the budget (no event of a reasonable shape can
bound ε above the claim at that many samples)? This asks an oracle: it samples the
variant's witness pair on many samples a side, estimates the probability of every event of
one family, and bounds each event as the audit would with ``n`` fresh samples a side
expected to hit exactly that often (one-sided Clopper–Pearson at ``--alpha-each``, the
level of one confirmed event at the audit's last look). The maximum over the family,
chosen in hindsight on the same samples, is optimistic: a ceiling, not a prediction.

The family, for releases of one item and one value (a sparse vector's first "above" and its
answer, a noisy max and its value): "item ≥ j and value ≤ c", "item ≥ j and value ≥ c",
"item = j and value ≤ c" and "item = j and value ≥ c", for every item j and every c among
``--cuts`` quantiles of the pooled values, plus "no item"; each bounded in the pair's own
direction (P on its first histogram).

Usage: python benchmarks/bench_event_ceiling.py [--variant gap-answer-int-eps0.1]
                                                [--samples 8e6] [--sizes 5e6 2e7] [--seed 1]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_variants import VARIANTS

from dpaudit.auditor.bounds import epsilon_lower_bound, one_sided_lower, one_sided_upper

#: One confirmed event's one-sided level at the default audit's last look (alpha 0.05 over
#: 9 events and both sides, spent over 6 looks), as the audits of bench_variants print it.
ALPHA_EACH = 4.6e-4


def event_rates(items, values, item_ids, cuts):
    """``{name: frequency}`` of every event of the family on one side's samples.

    Per item, the counts of "value <= c" and "value >= c" at every cut come from its sorted
    values (no mask per event: 8e6 samples times a thousand events would not fit).
    """
    n = items.size
    le = np.zeros((len(item_ids), cuts.size))
    ge = np.zeros((len(item_ids), cuts.size))
    for row, j in enumerate(item_ids):
        mine = np.sort(values[items == j])
        le[row] = np.searchsorted(mine, cuts, side="right")
        ge[row] = mine.size - np.searchsorted(mine, cuts, side="left")
    # "item >= j": sums over the items from j up.
    le_from, ge_from = np.cumsum(le[::-1], axis=0)[::-1], np.cumsum(ge[::-1], axis=0)[::-1]
    rates = {"no item": float(np.mean(items < 0))}
    for row, j in enumerate(item_ids):
        for relation, low, high in (("=", le, ge), (">=", le_from, ge_from)):
            for col, c in enumerate(cuts.tolist()):
                rates[f"item {relation} {j}, value <= {c:g}"] = low[row, col] / n
                rates[f"item {relation} {j}, value >= {c:g}"] = high[row, col] / n
    return rates


def ceilings(p, q, n, alpha, delta):
    """ε lower bounds from ``n`` samples a side hitting ``p·n`` and ``q·n`` times, as the
    audit bounds one confirmed event (:mod:`dpaudit.auditor.bounds.statistics`, Clopper–Pearson)."""
    hits_p, hits_q = np.round(p * n), np.round(q * n)
    return epsilon_lower_bound(
        one_sided_lower(hits_p, n, alpha), one_sided_upper(hits_q, n, alpha), delta
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="gap-answer-int-eps0.1")
    parser.add_argument("--samples", type=float, default=8e6, help="estimation samples a side")
    parser.add_argument("--sizes", type=float, nargs="+", default=[5e6, 2e7])
    parser.add_argument("--cuts", type=int, default=40, help="value quantiles cut at")
    parser.add_argument("--alpha-each", type=float, default=ALPHA_EACH)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--top", type=int, default=3)
    args = parser.parse_args(argv)

    variant = next((v for v in VARIANTS if v.name == args.variant), None)
    if variant is None or variant.pair is None:
        raise SystemExit(f"no variant {args.variant!r} with a witness pair")
    mech = variant.build()
    if mech.width != 1 or mech.values != 1:
        raise SystemExit(f"{variant.name} does not release one item and one value")
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    n = int(args.samples)
    sides = [mech.sample(np.array(counts), n, rng) for counts in variant.pair]
    pooled = np.concatenate([s.values[:, 0] for s in sides])
    cuts = np.unique(np.nanquantile(pooled, np.linspace(0.0, 1.0, args.cuts + 1)))
    item_ids = np.unique(np.concatenate([s.items[:, 0] for s in sides]))
    item_ids = item_ids[item_ids >= 0].tolist()
    per_side = [event_rates(s.items[:, 0], s.values[:, 0], item_ids, cuts) for s in sides]
    rates = {name: (per_side[0][name], per_side[1][name]) for name in per_side[0]}
    claim = mech.claim.epsilon
    print(
        f"{variant.name}: claim ε {claim:g}, true ε {variant.true()[0]:.4g}; pair "
        f"{variant.pair[0]} vs {variant.pair[1]}; {len(rates):,} events estimated on {n:,} "
        f"samples a side (seed {args.seed}), bounded at level {args.alpha_each:g}"
    )
    names = list(rates)
    p, q = (np.array([rates[name][side] for name in names]) for side in (0, 1))
    for size in args.sizes:
        lower = ceilings(p, q, int(size), args.alpha_each, mech.claim.delta)
        for i in np.argsort(-lower, kind="stable")[: args.top].tolist():
            print(
                f"  n {size:9.3g} a side: ε >= {lower[i]:.4f} ({lower[i] / claim:.2f} claims)  "
                f"{names[i]}  P {p[i]:.3g}  Q {q[i]:.3g}"
            )
    print(f"seconds: {time.perf_counter() - start:.1f}")


if __name__ == "__main__":
    main()
