"""JointPrepared: the per-histogram tables of JOINT, built once and reused by every sample.

The mixture of uniform laws on {gap <= u_t} (docs/joint.md, "How sampling works").
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from .grid import _log_mixture


@dataclass(frozen=True, eq=False)
class JointPrepared:
    """Per-histogram work of JOINT, done once and reused for every sample of a batch.

    Attributes
    ----------
    order : item ids in rank order (count high first, ties to the lower id) —
        only the items that can appear in an outcome within the truncation.
    sorted_counts : their counts, in rank order.
    grid : the utility grid u_0 = 0 < ... < u_T (int64; gaps, utility = -u).
    knots : grid indices of the mixture components (ascending, the last is T).
        Every grid index for JointSequence and for small set counts (then the
        mixture is exact and no acceptance step runs); a coarse subset for large
        set counts (docs/joint.md, "Knots").
    log_knot_n : log N(u) at the knots: exact where ``knot_exact``, else an
        upper bound (the acceptance step corrects it).
    knot_exact : whether ``log_knot_n`` is the exact count.
    log_mix : log mixture weights of the components (unnormalised): log(w_t N(u_t))
        on the full grid, log(H_j U_j) on coarse knots.
    log_level : log of the proposal weight of a gap in knot segment j
        (-ε u_{s_j}/2, s_j the segment's first grid index).
    log_tail_bound : log of the bound on the total mass dropped by truncation
        (-inf when nothing was dropped).
    owner : ``(class name, k, epsilon)`` of the mechanism that built it.
    exact_mixture : True when the knots are the whole grid with exact counts.
    acceptance : planned acceptance rate of the coarse proposal (1 when exact).
    """

    order: np.ndarray
    sorted_counts: np.ndarray
    grid: np.ndarray
    knots: np.ndarray
    log_knot_n: np.ndarray
    knot_exact: np.ndarray
    log_mix: np.ndarray
    log_level: np.ndarray
    log_tail_bound: float
    owner: tuple = ()
    exact_mixture: bool = True
    acceptance: float = 1.0
    _full_counter: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = field(
        default=None, repr=False
    )
    _lazy: dict = field(default_factory=dict, repr=False)

    @property
    def log_n(self) -> np.ndarray:
        """log N(u_t) on the whole grid (computed on first use when the knots are coarse)."""
        if self.exact_mixture:
            return self.log_knot_n
        if "log_n" not in self._lazy:
            # Coarse knots (exact_mixture False) are always built with the full counter.
            assert self._full_counter is not None
            self._lazy["log_n"] = self._full_counter(self.sorted_counts, self.grid)
        return self._lazy["log_n"]

    @property
    def log_count_per_utility(self) -> np.ndarray:
        """log of N(u_t) - N(u_{t-1}): the number of outcomes with gap exactly u_t."""
        prev = np.concatenate([[-np.inf], self.log_n[:-1]])
        with np.errstate(divide="ignore"):
            # log(N_t - N_{t-1}) = log N_t + log1p(-N_{t-1}/N_t); the cancellation is
            # harmless: an absolute error e·N_t here moves a bucket probability by at
            # most e, since N_t e^{-ε u_t/2} <= the normaliser.
            # (a count equal to the previous one may come out an ulp below it)
            return self.log_n + np.log1p(-np.exp(np.minimum(prev - self.log_n, 0.0)))

    def log_utility_probabilities(self, epsilon: float) -> np.ndarray:
        """log P(gap = u_t) for each grid value (normalised; utility is -u_t)."""
        log_w = self.log_count_per_utility - epsilon * self.grid / 2.0
        return log_w - logsumexp(log_w)


def _exact_tables(grid: np.ndarray, log_n: np.ndarray, bound: float, epsilon: float) -> dict:
    """JointPrepared fields of the exact mixture: one component per grid value, acceptance 1."""
    return {
        "grid": grid,
        "knots": np.arange(grid.size),
        "log_knot_n": log_n,
        "knot_exact": np.ones(grid.size, dtype=bool),
        "log_mix": _log_mixture(grid, log_n, epsilon),
        "log_level": -epsilon * grid.astype(np.float64) / 2.0,
        "log_tail_bound": float(bound),
        "exact_mixture": True,
        "acceptance": 1.0,
    }
