"""The two facts a TopStable certifier would rest on (docs/certify.md, "TopStable: not yet").

1. TS's law (seed 000, 000_4bf15007bce596ab.txt, Alg. 3) depends on a histogram only through the
   top k̄ item ids in rank order (the sets f_i, line 5) and the gaps q_i = h_i − h_(i+1) − 1
   (line 6): items below rank k̄ + 1 and a common shift of the counts do not enter.
2. The tail collapses: if f_k̄(D) = f_k̄(D') and ε >= ε₂/2, the δ of the pair at ε is at most the
   probability φ(q_k̄) that the first test (position k̄) fails, on either side.
"""

import itertools
import random
from fractions import Fraction

import numpy as np

from dpaudit.exact import laplace_calculus, output_law
from dpaudit.exact.law import working_precision
from dpaudit.exact.profile import hockey_stick
from mechanisms import TopStable

MECH = TopStable(k=2, kbar=3, epsilon=1.0, delta=1e-3)


def _key(counts) -> tuple:
    top, gaps = MECH.positions(np.asarray(counts, dtype=np.int64))
    return tuple(int(i) for i in top.items[: MECH.kbar]), tuple(int(q) for q in gaps)


def test_the_law_depends_only_on_the_top_ids_and_the_gaps():
    """Every histogram on 4 items with counts <= 3: equal (top k̄ ids, q) means equal laws."""
    seen: dict[tuple, dict] = {}
    for counts in itertools.product(range(4), repeat=4):
        law = output_law(MECH, np.asarray(counts, dtype=np.int64))
        key = _key(counts)
        if key in seen:
            assert law == seen[key], (counts, key)
        else:
            seen[key] = law
    assert len(seen) < 4**4  # some histograms did share a key


def _fails_first_test(q: int):
    """P[q + Lap(2/ε₂) <= T + Lap(1/ε₁)]: the test at position k̄ fails (Alg. 3 lines 3, 7)."""
    return laplace_calculus.probability_threshold_pattern(
        [q],
        Fraction(MECH.gap_scale()),
        [False],
        Fraction(MECH.threshold),
        Fraction(MECH.threshold_scale()),
    )


def test_a_stable_top_kbar_bounds_delta_by_the_first_tests_failure():
    """Random pairs on 5 items, h_3 − h_4 in [20, 60]: δ(ε) <= the first test's failure."""
    rng = random.Random(45)
    checked, informative = 0, 0
    while checked < 30:
        h4 = rng.randrange(5)
        levels = [h4, h4 + rng.randrange(20, 61)]
        for _ in range(2):  # ties and gaps of 1 above make f_1, f_2 unstable: δ > 0
            levels.append(levels[-1] + rng.choice([0, 1, rng.randrange(40)]))
        counts = sorted([*levels, rng.randrange(h4 + 1)], reverse=True)
        rng.shuffle(counts)
        counts2 = [c + rng.randrange(2) for c in counts]
        (ids, q), (ids2, q2) = _key(counts), _key(counts2)
        if set(ids) != set(ids2) or counts == counts2:
            continue
        checked += 1
        with working_precision():
            law, law2 = output_law(MECH, counts), output_law(MECH, counts2)
            tail = max(_fails_first_test(q[-1]), _fails_first_test(q2[-1]))
            for epsilon in (MECH.epsilon2 / 2, 1.0):
                for a, b in ((law, law2), (law2, law)):
                    delta = hockey_stick(a, b, epsilon)
                    assert delta <= tail * (1 + 1e-20), (counts, counts2, epsilon)
                    informative += bool(delta > 0 and tail < 0.5)
    assert informative >= 10  # the bound was tested where it bites, not only where it is 1
