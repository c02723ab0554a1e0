"""Joint and JointSequence: the exponential mechanism over size-k sets and ordered k-sequences.

Seed 004 Definition 3 with the utility u* of Lemma 5 (sensitivity 1), sampled
as in docs/joint.md instead of Algorithm 1's overflowing path counts (Sec. 5).
"""

import hashlib
import itertools
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, logsumexp

from ..base import TopKMechanism, check_rng, check_size
from ..claims import AddRemoveUser, PrivacyClaim
from ..histogram import validate_counts
from ..validation import require_positive_float, require_positive_int
from . import limits
from .bounds import _fast_bounds, _log_binomial, _sequence_bounds, _sequence_log_n
from .grid import _cut_index, _log_mixture, _prefix_sizes, _utility_grid
from .knots import coarse_tables
from .prepared import JointPrepared, _exact_tables
from .set_count import _planned_work, _set_forward, _set_row_work
from .set_sampling import _uniform_sets
from .shuffles import _prefix_shuffle

_CACHE_SIZE = 4


def joint_epsilon(epsilon: float, sensitivity: int = 1) -> float:
    """Privacy of the exponential mechanism with weights exp(ε u / 2) and utility sensitivity Δ.

    Seed 004 Definition 3 (McSherry-Talwar): weights exp(ε u/(2Δ_u)) give ε-DP;
    here the weights are exp(ε u/2), so the guarantee is ε·Δ_u, and Lemma 5
    gives Δ_{u*} = 1 under add/remove-one-user.

    Parameters
    ----------
    epsilon : the ε in the weights exp(ε u/2) (> 0).
    sensitivity : Δ_u of the utility (>= 1).
    """
    epsilon = require_positive_float("epsilon", epsilon)
    sensitivity = require_positive_int("sensitivity", sensitivity)
    return epsilon * sensitivity


def _counts_key(counts: np.ndarray) -> bytes:
    return hashlib.blake2b(counts.tobytes(), digest_size=16).digest() + str(counts.size).encode()


@dataclass(frozen=True)
class _JointBase(TopKMechanism):
    k: int
    epsilon: float
    _cache: OrderedDict = field(default_factory=OrderedDict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))

    @property
    def width(self) -> int:
        return self.k

    @property
    def claim(self) -> PrivacyClaim:
        """(ε, 0) under add/remove-one-user: seed 004 Definition 3 with Δ_{u*} = 1 (Lemma 5)."""
        return PrivacyClaim(joint_epsilon(self.epsilon, 1), 0.0, AddRemoveUser())

    def _owner(self) -> tuple:
        return (type(self).__name__, self.k, self.epsilon)

    # -- per-histogram preparation -------------------------------------------------
    def _log_outcomes(self, d: int) -> float:
        raise NotImplementedError

    def _count(self, sorted_counts, grid, tail):
        """(grid, log N on it, log relative truncation bound): the counting pass."""
        raise NotImplementedError

    def _tables(self, sorted_counts: np.ndarray, grid: np.ndarray, tail: float) -> dict:
        """Fields of JointPrepared: by default the exact mixture over the whole (cut) grid."""
        grid, log_n, bound = self._count(sorted_counts, grid, tail)
        return _exact_tables(grid, log_n, bound, self.epsilon)

    def _validated(self, counts: ArrayLike) -> np.ndarray:
        counts = validate_counts(counts)
        if self.k > counts.size:
            raise ValueError(f"k must be <= the number of items d={counts.size}, got {self.k}")
        return counts

    def _grid(self, counts):
        """(order, sorted_counts, grid, tail) of a validated histogram: everything before counting.

        ``tail`` bounds (in log) the mass of outcomes with a gap beyond the grid;
        the normaliser is >= 1 (the true top-k has gap 0), so the grid stops
        where the number of outcomes times e^{-ε u/2} drops below e^{-LOG_TAIL}.
        """
        d = counts.size
        log_outcomes = self._log_outcomes(d)
        u_cut = int(min(2.0 * (log_outcomes + limits.LOG_TAIL) / self.epsilon, 2.0**62))
        kth = int(np.partition(counts, d - self.k)[d - self.k])  # k-th largest count
        max_gap = int(counts.max()) - int(counts.min())
        # Only items with count >= a_k - u_cut can sit in an outcome of gap <= u_cut
        # (position k is the loosest), so only they are ranked: O(d) selection plus
        # a sort of the survivors instead of a full O(d log d) sort.
        lower = kth - u_cut
        candidates = np.flatnonzero(counts >= lower) if lower > counts.min() else None
        if candidates is None:
            # stable sort of -counts: count high first, ties keep the lower id first
            order = np.argsort(-counts, kind="stable")
        else:
            order = candidates[np.argsort(-counts[candidates], kind="stable")]
        sorted_counts = counts[order]
        grid = _utility_grid(sorted_counts, self.k, u_cut)
        tail = -np.inf if max_gap <= u_cut else log_outcomes - self.epsilon * (u_cut + 1) / 2.0
        return order, sorted_counts, grid, tail

    def prepare(self, counts: ArrayLike) -> JointPrepared:
        """The per-histogram tables (cached: the last few histograms are kept)."""
        if isinstance(counts, JointPrepared):
            if counts.owner != self._owner():
                raise ValueError(
                    f"counts is a JointPrepared built for {counts.owner}, not {self._owner()}"
                )
            return counts
        counts = self._validated(counts)
        key = _counts_key(counts)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        order, sorted_counts, grid, tail = self._grid(counts)
        parts = self._tables(sorted_counts, grid, tail)
        grid = parts["grid"]
        # Items ranked beyond the largest prefix of the kept grid never appear.
        reach = int(
            np.searchsorted(-sorted_counts, grid[-1] - sorted_counts[self.k - 1], side="right")
        )
        prepared = JointPrepared(
            order=order[:reach],
            sorted_counts=sorted_counts[:reach],
            owner=self._owner(),
            **parts,
        )
        self._cache[key] = prepared
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return prepared

    def _components(
        self, prepared: JointPrepared, size: int, rng: np.random.Generator
    ) -> np.ndarray:
        weights = np.exp(prepared.log_mix - prepared.log_mix.max())
        cdf = np.cumsum(weights)
        draws = rng.random(size) * cdf[-1]
        return np.minimum(np.searchsorted(cdf, draws, side="right"), cdf.size - 1)

    def utility_law(self, counts):
        """(utility values, log P(utility)) of the sampler's own tables, utility = -gap."""
        prepared = self.prepare(counts)
        return -prepared.grid, prepared.log_utility_probabilities(self.epsilon)


@dataclass(frozen=True)
class JointSequence(_JointBase):
    """Exponential mechanism over ordered k-sequences of distinct items, weight exp(ε u/2).

    Utility u(s) = -max_i (c_(i) - c_{s_i}) (seed 004 Lemma 5 applied position
    by position; the ordered variant of seed 004 Sec. 5, sampled as in
    Gillenwater et al., ICML 2022, here via cumulative counts in log space).
    Outcomes list items in selection order (position 1 first).

    Parameters
    ----------
    k : sequence length (1 <= k <= d).
    epsilon : ε of the weights exp(ε u/2); the mechanism is ε-DP.
    """

    ordered: ClassVar[bool] = True

    def _log_outcomes(self, d: int) -> float:
        return float(gammaln(d + 1) - gammaln(d - self.k + 1))

    def _count(self, sorted_counts, grid, tail):
        log_n = _sequence_log_n(sorted_counts, self.k, grid)
        # Sum of the mixture terms so far: the mass of outcomes with gap <= u_T at
        # most, hence a lower bound on the normaliser (which is also >= 1).
        z_lower = np.maximum(np.logaddexp.accumulate(_log_mixture(grid, log_n, self.epsilon)), 0.0)
        last, bound = _cut_index(grid, log_n, tail, z_lower, self.epsilon)
        return grid[: last + 1], log_n[: last + 1], bound

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` sequences (int64, (size, k)), each in selection order."""
        rng = check_rng(rng)
        size = check_size(size)
        prepared = self.prepare(counts)
        comp = self._components(prepared, size, rng)
        uniforms = rng.random((size, self.k))
        neg = -prepared.sorted_counts
        top = prepared.sorted_counts[: self.k]
        highs = np.empty((size, self.k), dtype=np.int64)
        chunk = max(1, 4_000_000 // self.k)
        for start in range(0, size, chunk):
            highs[start : start + chunk] = _prefix_sizes(
                neg, top, prepared.grid[comp[start : start + chunk]]
            )
        return prepared.order[_prefix_shuffle(highs, uniforms)]


@dataclass(frozen=True)
class Joint(_JointBase):
    """JOINT of seed 004: exponential mechanism over size-k sets, weight exp(ε u*(S)/2).

    u*(S) = -max_i (c_i - c_{j_i}) with S's counts sorted decreasingly (seed 004
    Lemma 5, Δ = 1); ε-DP by Definition 3. Sampled exactly for any histogram,
    ties included, without overflow (docs/joint.md), replacing Algorithm 1's
    overflowing path counts (Sec. 5). Outcomes are ascending item ids.

    The exact set count is a banded dynamic programme over tie blocks; when
    counting every utility value is planned above FULL_COUNT_WORK cells, the
    sampler counts a few knots only and corrects by rejection (docs/joint.md,
    "Knots"): exact law, no refusal at the seed's sizes.

    Parameters
    ----------
    k : set size (1 <= k <= d).
    epsilon : ε of the weights exp(ε u*/2); the mechanism is ε-DP.
    """

    ordered: ClassVar[bool] = False

    def _log_outcomes(self, d: int) -> float:
        return float(gammaln(d + 1) - gammaln(d - self.k + 1) - gammaln(self.k + 1))

    def _plan(self, sorted_counts, grid, tail):
        """Bounds, a cut that is surely late enough, and the chunked counting plan with its cost.

        Returns (log upper bound on N per row, log lower bound on Z, last row
        that can be needed, chunk boundaries, estimated cells, blocks and
        banded table cells of that last row).
        """
        k = self.k
        log_seq, last_prefix, slack = _sequence_bounds(sorted_counts, k, grid)
        log_upper = np.minimum(log_seq, _log_binomial(last_prefix, k))
        log_lower = np.maximum(log_seq - gammaln(k + 1), _log_binomial(k + slack, k))
        # any single term e^{-ε u/2} N(u) is <= Z; and Z >= 1
        half_grid = self.epsilon * grid / 2.0
        z_apriori = max(0.0, float(np.max(log_lower - half_grid)))
        last, _ = _cut_index(grid, log_upper, tail, np.full(grid.size, z_apriori), self.epsilon)
        # The peak of e^{-ε u/2} N(u) lies between the peaks of the two bounds;
        # exact counts at a few probes there give a much better lower bound on Z,
        # hence a much earlier sure cut, for a few rows of work.
        peaks = sorted(
            (
                int(np.argmax((log_lower - half_grid)[: last + 1])),
                int(np.argmax((log_upper - half_grid)[: last + 1])),
            )
        )
        probes = np.unique(np.linspace(peaks[0], peaks[1], 8).round().astype(np.int64))
        cells, blocks, _ = _set_row_work(sorted_counts, k, int(grid[probes[-1]]))
        if probes.size * cells + blocks * limits.BLOCK_OVERHEAD_CELLS <= limits.MAX_SET_DP_WORK / 8:
            exact = _set_forward(sorted_counts, k, grid[probes])[0]
            z_apriori = max(z_apriori, float(np.max(exact - half_grid[probes])))
            last, _ = _cut_index(grid, log_upper, tail, np.full(grid.size, z_apriori), self.epsilon)
        work, bounds = _planned_work(sorted_counts, k, grid, last)
        _, blocks, table = _set_row_work(sorted_counts, k, int(grid[last]))
        return log_upper, z_apriori, last, bounds, work, blocks, table

    def dp_work(self, counts: ArrayLike) -> tuple[float, int]:
        """(estimated set-counting DP cell updates, tie blocks) for ``counts``, without counting.

        The estimate covers every grid value the truncation could need (it uses
        a cheap lower bound on the normaliser; counting usually stops earlier).
        Above FULL_COUNT_WORK ``prepare`` switches to coarse knots; ``prepare``
        raises ValueError only when one grid value's sampling table exceeds
        MAX_SET_TABLE cells.
        """
        _, sorted_counts, grid, tail = self._grid(self._validated(counts))
        plan = self._plan(sorted_counts, grid, tail)
        return plan[4], plan[5]

    def _count(self, sorted_counts, grid, tail):
        if sorted_counts.size == self.k:
            # Only k items are within reach (k = d, or the rest lie beyond the grid):
            # the one set within reach is the true top-k, of gap 0.
            return grid[:1], np.zeros(1), float(tail)
        log_upper, z_apriori, last, bounds, work, blocks, table = self._plan(
            sorted_counts, grid, tail
        )
        if work > limits.MAX_SET_DP_WORK or table > limits.MAX_SET_TABLE:
            raise ValueError(
                f"Joint(k={self.k}, epsilon={self.epsilon}) on d={sorted_counts.size}+ items "
                f"would need ~{work:.1e} set-counting DP cell updates (limit MAX_SET_DP_WORK="
                f"{limits.MAX_SET_DP_WORK:.0e}, ~10 s) over up to {last + 1} utility values and "
                f"{blocks} tie blocks, and {table:.1e}-cell sampling tables (limit "
                f"{limits.MAX_SET_TABLE:.0e}); use JointSequence (ordered k-sequences, O(grid*k)), "
                f"a smaller k, or a larger epsilon"
            )
        log_n = np.full(last + 1, -np.inf)
        log_w = _log_mixture(grid, np.zeros(grid.size), self.epsilon)
        z_exact = -np.inf
        for a, b in itertools.pairwise(bounds):
            log_n[a:b] = _set_forward(sorted_counts, self.k, grid[a:b])[0]
            # Σ_{t<b} w_t N(u_t) is the mass of some outcomes of gap < u_b: <= Z
            z_exact = float(np.logaddexp(z_exact, logsumexp(log_w[a:b] + log_n[a:b])))
            z_lower = np.full(grid.size, max(z_exact, z_apriori))
            cut, bound = _cut_index(
                grid, np.concatenate([log_n[:b], log_upper[b:]]), tail, z_lower, self.epsilon
            )
            if cut < b or b == last + 1:
                cut = min(cut, b - 1)
                return grid[: cut + 1], log_n[: cut + 1], bound
        raise AssertionError("unreachable: the plan's last chunk ends the count")

    def _tables(self, sorted_counts: np.ndarray, grid: np.ndarray, tail: float) -> dict:
        """Exact mixture when counting every grid value is cheap, else coarse knots (class docstring)."""
        if sorted_counts.size == self.k:
            return super()._tables(sorted_counts, grid, tail)
        upper, lower = _fast_bounds(sorted_counts, self.k, grid)
        half_grid = self.epsilon * grid / 2.0
        z_apriori = max(0.0, float(np.max(lower - half_grid)))
        last, _ = _cut_index(grid, upper, tail, np.full(grid.size, z_apriori), self.epsilon)
        if _planned_work(sorted_counts, self.k, grid, last)[0] <= limits.FULL_COUNT_WORK:
            return super()._tables(sorted_counts, grid, tail)  # the exact mixture
        return coarse_tables(sorted_counts, self.k, self.epsilon, grid, tail, upper, lower, last)

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` sets (int64, (size, k)), each row ascending item ids.

        Exact mixture: per sampled grid value, a uniform set of gap <= u
        (backward sampling over tie blocks). Coarse knots: proposals from the
        knot mixture, each kept with probability
        (N(κ_j)/U_j) · e^{-ε g(S)/2}/ℓ_{j'(S)} (docs/joint.md, "Knots").
        """
        rng = check_rng(rng)
        size = check_size(size)
        prepared = self.prepare(counts)
        k = self.k
        if size == 0:
            return np.empty((0, k), dtype=np.int64)
        sorted_counts = prepared.sorted_counts
        gaps = prepared.grid[prepared.knots]
        if prepared.exact_mixture:
            comp = self._components(prepared, size, rng)
            ranks, _ = _uniform_sets(sorted_counts, k, gaps, comp, rng)
        else:
            parts, need = [], size
            top = sorted_counts[:k]
            while need:
                proposals = int(np.ceil(need / max(prepared.acceptance, 0.05) * 1.25)) + 4
                proposals = min(proposals, max(need, 4_000_000 // k))
                comp = self._components(prepared, proposals, rng)
                ranks, log_n = _uniform_sets(sorted_counts, k, gaps, comp, rng, merge=True)
                gap = np.max(top[None, :] - sorted_counts[np.sort(ranks, axis=1)], axis=1)
                segment = np.searchsorted(gaps, gap, side="left")
                log_accept = -self.epsilon * gap / 2.0 - prepared.log_level[segment]
                log_accept += np.where(
                    prepared.knot_exact[comp], 0.0, log_n - prepared.log_knot_n[comp]
                )
                keep = np.flatnonzero(rng.random(proposals) < np.exp(log_accept))[:need]
                parts.append(ranks[keep])
                need -= keep.size
            ranks = np.concatenate(parts)
        out = prepared.order[ranks]
        out.sort(axis=1)
        return out
