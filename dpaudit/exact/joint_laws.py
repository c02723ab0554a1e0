"""Exact output laws of JOINT (sets) and JointSequence by enumeration (tiny d).

Seed 004 (004_96d6a41600571c16.txt), Definition 3 and Lemma 5: P(o) ∝ exp(ε u(o)/2)
with u*(S) = -max_i (c_(i) - c_{j_i}) (S's counts sorted decreasingly) for sets
and u(s) = -max_i (c_(i) - c_{s_i}) for ordered sequences. The utility is
recomputed here from its definition, independently of the sampler's tables.
"""

from __future__ import annotations

import itertools

import mpmath

from mechanisms import validate_counts
from mechanisms.joint import Joint, JointSequence

from .law import output_law, working_precision

__all__ = ["joint_utility", "joint_utility_law", "sequence_utility"]

#: Refuse enumerations larger than this many outcomes.
MAX_OUTCOMES = 2_000_000


def joint_utility(counts, items) -> int:
    """u*(S) of seed 004 Lemma 5: -max_i (i-th largest count - i-th largest count in S)."""
    top = sorted(counts, reverse=True)
    chosen = sorted((counts[j] for j in items), reverse=True)
    return -max(t - c for t, c in zip(top, chosen))


def sequence_utility(counts, items) -> int:
    """Ordered utility: -max_i (i-th largest count - count of the item in position i)."""
    top = sorted(counts, reverse=True)
    return -max(t - counts[j] for t, j in zip(top, items))


def _law(mech, counts, outcomes, utility):
    counts = [int(c) for c in validate_counts(counts)]
    if mech.k > len(counts):
        raise ValueError(f"k must be <= the number of items d={len(counts)}, got {mech.k}")
    with working_precision():
        half_eps = mpmath.mpf(mech.epsilon) / 2
        weights = {o: mpmath.exp(half_eps * utility(counts, o)) for o in outcomes(len(counts))}
        if len(weights) > MAX_OUTCOMES:
            raise ValueError("too many outcomes to enumerate")
        total = mpmath.fsum(weights.values())
        return {o: w / total for o, w in weights.items()}


def _check_size(mech, counts, count_fn):
    d = len(validate_counts(counts))
    if mech.k <= d and count_fn(d) > MAX_OUTCOMES:
        raise ValueError(
            f"enumerating {count_fn(d)} outcomes is too many for an exact law (max {MAX_OUTCOMES})"
        )


@output_law.register(Joint)
def _joint_law(mech: Joint, counts):
    """Exact law of [`Joint`][mechanisms.Joint]: all k-subsets (ascending tuples), mpmath."""
    import math

    _check_size(mech, counts, lambda d: math.comb(d, mech.k))
    return _law(mech, counts, lambda d: itertools.combinations(range(d), mech.k), joint_utility)


@output_law.register(JointSequence)
def _sequence_law(mech: JointSequence, counts):
    """Exact law of [`JointSequence`][mechanisms.JointSequence]: all ordered k-sequences, mpmath."""
    import math

    _check_size(mech, counts, lambda d: math.perm(d, mech.k))
    return _law(mech, counts, lambda d: itertools.permutations(range(d), mech.k), sequence_utility)


def joint_utility_law(mech, counts) -> dict[int, tuple[int, mpmath.mpf]]:
    """{gap g: (number of outcomes with utility -g, exact P(utility = -g))} from enumeration."""
    law = output_law(mech, counts)
    utility = sequence_utility if mech.ordered else joint_utility
    counts_list = [int(c) for c in validate_counts(counts)]
    result: dict[int, list] = {}
    with working_precision():
        for outcome, p in law.items():
            gap = -utility(counts_list, outcome)
            entry = result.setdefault(gap, [0, mpmath.mpf(0)])
            entry[0] += 1
            entry[1] += p
    return {g: (n, p) for g, (n, p) in sorted(result.items())}
