"""The exact law our reading of OpenDP's pure-DP ``make_noisy_top_k`` predicts.

McKenna & Sheldon (2020), Alg. 1 (seed 001_49698e97f2ea8cba.txt §7, ref. [27]), peeled ``k``
times; what OpenDP samples is read in the module docstring of
[`dpaudit.integrations.opendp`][dpaudit.integrations.opendp].
"""

from __future__ import annotations

import mpmath

from dpaudit.exact.laplace_laws import permute_and_flip_law
from dpaudit.exact.law import working_precision
from mechanisms.histogram import validate_counts
from mechanisms.validation import require_positive_int

__all__ = ["peeled_permute_and_flip_law"]


def peeled_permute_and_flip_law(counts, scale, k: int) -> dict[tuple[int, ...], mpmath.mpf]:
    """Exact law of ``k`` rounds of permute-and-flip with removal (OpenDP's pure-DP top-k).

    McKenna & Sheldon (2020), Alg. 1 (seed 001_49698e97f2ea8cba.txt §7, ref. [27]),
    run ``k`` times, each round on the items not yet chosen with the flip
    probabilities recomputed against the largest remaining count: the probability
    of the ordered outcome ``(i_1, …, i_k)`` is the product over rounds of the
    single-round law
    ([`dpaudit.exact.laplace_laws.permute_and_flip_law`][dpaudit.exact.laplace_laws.permute_and_flip_law])
    of ``i_r`` among the remaining items. Computed at ``dpaudit.exact.DEFAULT_DIGITS`` digits;
    ``min(k, d)`` items per outcome.

    Parameters
    ----------
    counts : the histogram (non-negative integers).
    scale : the flip scale: item ``r`` is kept with probability ``exp((c_r − c*)/scale)``.
    k : number of rounds (>= 1).
    """
    counts = [int(c) for c in validate_counts(counts)]
    k = require_positive_int("k", k)
    law: dict[tuple[int, ...], mpmath.mpf] = {}
    with working_precision():

        def extend(prefix, remaining, probability):
            if len(prefix) == k or not remaining:
                law[tuple(prefix)] = probability
                return
            round_law = permute_and_flip_law([counts[i] for i in remaining], scale)
            for (j,), p in round_law.items():
                extend(prefix + [remaining[j]], remaining[:j] + remaining[j + 1 :], probability * p)

        extend([], list(range(len(counts))), mpmath.mpf(1))
    return law
