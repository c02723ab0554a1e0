"""Broken JOINT: sampling ∝ exp(ε u*) without the 1/2 of the exponential mechanism.

Seed 004 (004_96d6a41600571c16.txt) Lemma 5, Definition 3, Alg. 1 line 3.
"""

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

import mpmath
import numpy as np

from mechanisms import check_rng, check_size, validate_counts

from ..exact.law import output_law, working_precision
from .base import _KOutputsClaimsEpsilon
from .entry import CatalogEntry


@dataclass(frozen=True)
class JointNoHalf(_KOutputsClaimsEpsilon):
    """BUG: JOINT sampling ∝ exp(ε u*) instead of exp(ε u*/2), claiming ε.

    Seed 004 (004_96d6a41600571c16.txt) Lemma 5: u*(S) = −max_i (c_(i) − c_{j_i})
    has sensitivity 1; the EM (Def. 3) needs exp(ε u / (2Δ_u)) — Alg. 1 line 3
    uses exp(−ε M_ij / 2). Without the 1/2 the mechanism is only 2ε-DP.
    Brute force over all k-subsets (small d only). Output: the set, ascending.

    Parameters
    ----------
    k : set size.
    epsilon : ε claimed.
    """

    k: int = 2
    max_subsets: int = 100_000
    ordered: ClassVar[bool] = False

    def _subsets_and_utility(self, counts):
        d = counts.size
        if self.k > d:
            raise ValueError(f"k={self.k} exceeds the number of items d={d}")
        if math.comb(d, self.k) > self.max_subsets:
            raise ValueError(
                f"JointNoHalf enumerates C(d, k) subsets; C({d}, {self.k}) is too many"
            )
        subsets = np.array(list(itertools.combinations(range(d), self.k)), dtype=np.int64)
        true_top = np.sort(counts)[::-1][: self.k]
        chosen = -np.sort(-counts[subsets], axis=1)
        utility = -np.max(true_top[None, :] - chosen, axis=1)
        return subsets, utility

    def sample(self, counts, size, rng):
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        subsets, utility = self._subsets_and_utility(counts)
        logits = self.epsilon * (utility - utility.max()).astype(float)  # the bug: no 1/2
        p = np.exp(logits)
        p /= p.sum()
        return subsets[rng.choice(len(subsets), size=size, p=p)]


@output_law.register(JointNoHalf)
def _law_joint(mech, counts):
    counts = validate_counts(counts)
    subsets, utility = mech._subsets_and_utility(counts)
    with working_precision():
        w = [mpmath.exp(mpmath.mpf(mech.epsilon) * int(u)) for u in utility]
        total = mpmath.fsum(w)
        return {tuple(int(i) for i in s): wi / total for s, wi in zip(subsets, w)}


ENTRIES: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        "joint-no-half",
        "JOINT samples ∝ exp(ε u*) without the factor 1/2",
        lambda: JointNoHalf(k=2, epsilon=1.0),
        ((0, 0, 0, 0, 3), (0, 0, 0, 1, 3)),
        "004 Alg. 1 line 3, Lemma 5",
    ),
)
