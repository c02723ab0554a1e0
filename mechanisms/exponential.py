"""The exponential mechanism and its top-k forms: peeling and one-shot Gumbel.

Seed 003 (003_9293f5da18078e1b.txt), Section 4.1: with quality score
``q(h, i) = h_i`` the exponential mechanism picks item ``i`` with probability
``∝ exp(ε h_i)``, the same law as adding ``Gumbel(1/ε)`` noise to every count
and reporting the argmax. Lemma 4.1: it is 2ε-DP, and ε-DP when ``q`` is
monotonic (every count moves the same way when a user is added or removed,
our [`AddRemoveUser`][mechanisms.claims.AddRemoveUser]). Lemma 4.2: peeling k times is
equal in law to the one-shot Gumbel top-k. Both are ε- (or 2ε-) range-bounded
(Lemma 4.3), so k of them compose by Lemma 4.4 / Thm 1 eq. 2
([`mechanisms.accounting.limit_domain_epsilon`][mechanisms.accounting.limit_domain_epsilon]).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from . import accounting
from .base import TopKMechanism, check_rng, check_size
from .claims import AddRemoveUser, BoundedChange, PrivacyClaim
from .histogram import validate_counts
from .outcomes import PAD
from .validation import (
    require_bool,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = [
    "ExponentialMechanism",
    "GumbelTopK",
    "PeelingEM",
    "require_finite_log_weights",
    "sample_categorical",
]

# Rows of a (rows, d) work array per chunk: bounds memory at ~8 MB of float64.
_CHUNK_CELLS = 1 << 20


def _em_claim(epsilon: float, k: int, monotonic: bool, delta_prime: float) -> PrivacyClaim:
    """k-fold composition of ε-range-bounded EMs (seed 003 Lemma 4.1, 4.3, 4.4, Cor. 4.1).

    A monotonic score (add/remove one user moves all counts the same way) costs ε
    per selection; a non-monotonic one (counts move independently) costs 2ε.
    """
    per_selection = epsilon if monotonic else 2.0 * epsilon
    eps = accounting.limit_domain_epsilon(per_selection, k, delta_prime)
    neighbours = AddRemoveUser() if monotonic else BoundedChange(1)
    return PrivacyClaim(eps, float(delta_prime), neighbours)


def _log_weights(counts: np.ndarray, epsilon: float) -> np.ndarray:
    """``ε (c_i − max c)``: log-weights of the exponential mechanism, max 0 (no overflow)."""
    counts = counts.astype(np.float64)
    with np.errstate(over="ignore"):
        return require_finite_log_weights(epsilon * (counts - counts.max()), epsilon)


def require_finite_log_weights(log_weights: np.ndarray, epsilon: float) -> np.ndarray:
    """Reject an ε so large that ε × (score range) overflows float64.

    The law then depends on score gaps float64 cannot represent (after the
    top item is drawn, the next draw compares e^{-ε·1} with e^{-ε·2}), so no
    exact sampling is possible; fail loudly instead of returning a wrong law.
    """
    if not np.all(np.isfinite(log_weights)):
        raise ValueError(
            f"epsilon={epsilon!r} is too large for these counts: epsilon times the count "
            "range overflows float64"
        )
    return log_weights


def sample_categorical(log_weights: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` independent draws of an index with probability ``∝ exp(log_weights)``.

    Inverse CDF: one uniform per draw and a binary search in the cumulative
    weights, O(d + size log d). Log-weights are shifted so the largest is 0,
    so the cumulative sum cannot overflow and its total is >= 1.
    """
    log_weights = np.asarray(log_weights, dtype=np.float64)
    weights = np.exp(log_weights - log_weights.max())
    cdf = np.cumsum(weights)
    draws = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        pick = np.searchsorted(cdf, rng.random(todo.size) * cdf[-1], side="right")
        # u * total can round up to the total (probability ~1e-16): redraw
        # those, which keeps the law exact; zero-weight items never win.
        ok = pick < cdf.size
        ok[ok] = weights[pick[ok]] > 0
        draws[todo[ok]] = pick[ok]
        todo = todo[~ok]
    return draws


@dataclass(frozen=True)
class ExponentialMechanism(TopKMechanism):
    """One selection: item ``i`` with probability ∝ exp(ε c_i) (Gumbel scale 1/ε).

    Seed 003 (003_9293f5da18078e1b.txt) Def. 4.1 with q(h, i) = h_i, Lemma 4.1:
    ε-DP under add/remove of one user (monotonic score), 2ε-DP when counts may
    move independently (BoundedChange(1)).

    Parameters
    ----------
    epsilon : ε > 0 of the exponential mechanism.
    monotonic : claim under AddRemoveUser() with ε (True) or BoundedChange(1) with 2ε (False).
    """

    epsilon: float
    monotonic: bool = True

    ordered: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "monotonic", require_bool("monotonic", self.monotonic))

    @property
    def width(self) -> int:
        return 1

    @property
    def claim(self) -> PrivacyClaim:
        return _em_claim(self.epsilon, 1, self.monotonic, 0.0)

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        counts = validate_counts(counts)
        size = check_size(size)
        rng = check_rng(rng)
        return sample_categorical(_log_weights(counts, self.epsilon), size, rng)[:, None]


@dataclass(frozen=True)
class _TopKEM(TopKMechanism):
    """Fields, validation, width, claim and chunked sampling of PeelingEM and GumbelTopK.

    The two are equal in law (seed 003 Lemma 4.2), so they share the claim; they
    differ only in how one chunk of rows draws its ``min(k, d)`` items
    (``_sample_chunk``).
    """

    k: int
    epsilon: float
    monotonic: bool = True
    delta_prime: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "epsilon", require_positive_float("epsilon", self.epsilon))
        object.__setattr__(self, "monotonic", require_bool("monotonic", self.monotonic))
        object.__setattr__(
            self,
            "delta_prime",
            require_probability("delta_prime", self.delta_prime, allow_zero=True),
        )

    @property
    def width(self) -> int:
        return self.k

    @property
    def claim(self) -> PrivacyClaim:
        return _em_claim(self.epsilon, self.k, self.monotonic, self.delta_prime)

    @abc.abstractmethod
    def _sample_chunk(
        self, base: np.ndarray, rows: int, taken: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``(rows, taken)`` item ids in selection order, from log-weights ``base``."""

    def sample(self, counts: ArrayLike, size: int, rng: np.random.Generator) -> np.ndarray:
        counts = validate_counts(counts)
        size = check_size(size)
        rng = check_rng(rng)
        d = counts.size
        taken = min(self.k, d)
        out = np.full((size, self.k), PAD, dtype=np.int64)
        base = _log_weights(counts, self.epsilon)
        chunk = max(1, _CHUNK_CELLS // d)
        for start in range(0, size, chunk):
            stop = min(size, start + chunk)
            out[start:stop, :taken] = self._sample_chunk(base, stop - start, taken, rng)
        return out


@dataclass(frozen=True)
class PeelingEM(_TopKEM):
    """k rounds of the exponential mechanism, each over the items not yet chosen.

    Seed 003 (003_9293f5da18078e1b.txt) Section 4.1 (pEM^k_q), privacy by
    Lemma 4.1 + 4.3 + 4.4 (Cor. 4.1): ``limit_domain_epsilon(ε, k, δ')`` under
    add/remove (monotonic), or with 2ε under BoundedChange(1). Outcomes are in
    selection order; a domain with d < k items yields d items then PAD.

    Parameters
    ----------
    k : number of selections (>= 1).
    epsilon : per-selection ε > 0 (Gumbel scale 1/ε).
    monotonic : see [`ExponentialMechanism`][mechanisms.exponential.ExponentialMechanism].
    delta_prime : δ' >= 0 of the range-bounded composition (0: basic kε).
    """

    ordered: ClassVar[bool] = True

    def _sample_chunk(self, base, rows, taken, rng):
        d = base.size
        logits = np.broadcast_to(base, (rows, d)).copy()
        index = np.arange(rows)
        picked = np.empty((rows, taken), dtype=np.int64)
        for r in range(taken):
            # Renormalise per row to the largest remaining log-weight, so
            # after the dominant items are removed the rest do not vanish
            # in floating point (the peeling law conditions on them).
            shifted = logits - logits.max(axis=1, keepdims=True)
            chosen = _draw_per_row(np.exp(shifted), rng)
            picked[:, r] = chosen
            logits[index, chosen] = -np.inf
        return picked


@dataclass(frozen=True)
class GumbelTopK(_TopKEM):
    """One-shot top-k: add Gumbel(1/ε) to every count, report the k largest in order.

    Seed 003 (003_9293f5da18078e1b.txt) Section 4.1 (M^k_Gumbel); Lemma 4.2:
    equal in law to [`PeelingEM`][mechanisms.exponential.PeelingEM], hence the same claim (Cor. 4.1
    with the range-bounded composition of Lemma 4.4 / Thm 1 eq. 2).

    Parameters
    ----------
    k : number of items reported (>= 1).
    epsilon : per-selection ε > 0 (Gumbel scale 1/ε).
    monotonic : see [`ExponentialMechanism`][mechanisms.exponential.ExponentialMechanism].
    delta_prime : δ' >= 0 of the range-bounded composition (0: basic kε).
    """

    ordered: ClassVar[bool] = True

    def _sample_chunk(self, base, rows, taken, rng):
        # ε c + Gumbel(1) has the same argsort as c + Gumbel(1/ε).
        noisy = base + rng.gumbel(size=(rows, base.size))
        return _top_in_order(noisy, taken)


def _draw_per_row(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row with probability ∝ that row's non-negative ``weights``.

    Inverse CDF per row. ``u * total`` can round up to the row total (or land
    on a zero-weight cell at the end); those rows, of probability ~1e-16, are
    redrawn, which keeps the law exact.
    """
    cdf = np.cumsum(weights, axis=1)
    rows, d = weights.shape
    chosen = np.empty(rows, dtype=np.int64)
    todo = np.arange(rows)
    while todo.size:
        part = cdf[todo]
        pick = (part <= (rng.random(todo.size) * part[:, -1])[:, None]).sum(axis=1)
        ok = pick < d
        ok[ok] = weights[todo[ok], pick[ok]] > 0
        chosen[todo[ok]] = pick[ok]
        todo = todo[~ok]
    return chosen


def _top_in_order(values: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the k largest entries of each row, largest first."""
    d = values.shape[1]
    if k < d:
        top = np.argpartition(-values, k - 1, axis=1)[:, :k]
    else:
        top = np.broadcast_to(np.arange(d), values.shape).copy()
    picked = np.take_along_axis(values, top, axis=1)
    order = np.argsort(-picked, axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1)
