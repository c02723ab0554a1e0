"""Independent exact counts of JOINT's outcomes as Python integers (the tests' reference route).

Seed 004 (004_96d6a41600571c16.txt) Lemma 5: an outcome's gap is the largest
a_i - b_i, with a the top-k counts and b the outcome's counts, both sorted
decreasingly. These counts use exact integer arithmetic only and share no code
with mechanisms/joint/.
"""

from __future__ import annotations

import math

import numpy as np


def count_blocks(counts) -> tuple[list[int], list[int]]:
    """(distinct count values, decreasing; how many items hold each)."""
    values, mult = np.unique(np.asarray(counts), return_counts=True)
    return values[::-1].tolist(), mult[::-1].tolist()


def sequence_count(values_desc, mult, k, u) -> int:
    """N_seq(u), the ordered k-sequences of gap <= u: Π_i (m_i(u) - i + 1)."""
    sorted_counts = []
    for v, n in zip(values_desc, mult):
        sorted_counts.extend([v] * n)
        if len(sorted_counts) >= k:
            break
    total = 1
    for i, a in enumerate(sorted_counts[:k]):
        m = sum(n for v, n in zip(values_desc, mult) if v >= a - u)
        total *= m - i
    return total


def set_count(values_desc, mult, k, u) -> int:
    """N_set(u), the k-sets of gap <= u: choose how many items per count value.

    ways[j] = number of j-subsets of the value blocks so far whose sorted
    counts satisfy b_i >= a_i - u for every i <= j (Lemma 5's gap <= u).
    """
    top = []
    for v, n in zip(values_desc, mult):
        top.extend([v] * min(n, k - len(top)))
        if len(top) == k:
            break
    ways = [1] + [0] * k
    for v, n in zip(values_desc, mult):
        binom = [math.comb(n, t) for t in range(min(n, k) + 1)]
        new = [0] * (k + 1)
        for j in range(k + 1):
            if ways[j]:
                for t in range(min(n, k - j) + 1):
                    # the new items occupy sorted places j+1..j+t, all with count v
                    if t and top[j + t - 1] - v > u:
                        break
                    new[j + t] += ways[j] * binom[t]
        ways = new
    return ways[k]
