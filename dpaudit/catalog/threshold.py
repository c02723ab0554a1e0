"""Broken thresholds: Top-Stable, the restricted-domain framework and FixedThreshold, each one hook off.

Seed 000 Alg. 3 lines 2-3, Thm 3.2; seed 001 Alg. 1 line 3; seed 002 App. F, Lemma F.2.
Each overrides one documented hook of the project's mechanism and so inherits its exact law.
"""

from dataclasses import dataclass
from typing import ClassVar

import mechanisms as M
from mechanisms import tail_bounds

from ..exact.fixed_threshold_laws import fixed_threshold_law
from ..exact.law import output_law
from .entry import CatalogEntry


@dataclass(frozen=True)
class TopStableDeltaQAgainstDelta(M.TopStable):
    """BUG: Top-Stable solving δ_q against δ instead of δ/k̄ (line 2), claiming (ε, δ).

    Seed 000 (000_4bf15007bce596ab.txt) Alg. 3 line 2 and Thm 3.2: each of the
    k̄ positions may release an unstable set with probability <= δ/k̄; against δ
    the threshold T is lower and the unstable releases add up to about k̄·δ.
    The exact law is [`mechanisms.TopStable`][mechanisms.TopStable]'s (it reads ``delta_q``).
    """

    def unstable_budget(self) -> float:
        return self.delta  # the bug: should be self.delta / self.kbar


class TopStableThresholdNoHalf(M.TopStable):
    """BUG: TS with T = ln(1/δ_q)/ε₂ instead of ln(1/δ_q)/(ε₂/2) (Alg. 3 line 3): T halved.

    The threshold only keeps unstable releases below δ/k̄ at its full height; at half of
    it an item outside the true top-k̄ is released far more often (a δ-type violation).
    Overrides the documented ``threshold`` hook, so it inherits TopStable's exact law.
    """

    @property
    def threshold(self) -> float:
        return tail_bounds.tail_threshold(self.epsilon2, self.delta_q)


class _FrameworkThresholdNoHalf(M.RestrictedDomain):
    """BUG: F with T = ln(1/δ_q)/ε_R instead of ln(1/δ_q)/(ε_R/2) (seed 001 Alg. 1 line 3)."""

    @property
    def threshold(self) -> float:
        return tail_bounds.tail_threshold(self.epsilon, self.delta_q)


class RestrictedGumbelThresholdNoHalf(M.RestrictedGumbel):
    """BUG: RG whose framework threshold misses the 1/2 of seed 001 Alg. 1 line 3 (T halved)."""

    def _wrap(self, mechanism):
        return _FrameworkThresholdNoHalf(
            mechanism=mechanism,
            kbar=self.kbar,
            epsilon=self.epsilon_r,
            delta=self.delta_r,
            calibration=self.calibration,
        )


@dataclass(frozen=True)
class FixedThresholdNoMargin(M.FixedThreshold):
    """BUG: FixedThreshold with τ = ln(k̄/(2δ))/ε, the "+1" of the threshold dropped.

    Seed 002 (002_a192ff3c12785105.txt) App. F, Lemma F.2 item 2 (as reconstructed
    in [`mechanisms.fixed_threshold`][mechanisms.fixed_threshold]): an item in one strict domain but
    not in its neighbour's has count ``h_(k̄+1) + 1``, so the threshold must sit
    ``1 + ln(k̄/(2δ))/ε`` above ``h_(k̄+1)`` for that item to pass with probability
    ``<= δ/k̄``. Without the 1 it passes with probability ``e^ε δ/k̄``; the claim
    stays Thm 5's ``(k̄ε, δ)``. The exact law is FixedThreshold's (it reads ``margin``).
    """

    margin: ClassVar[float] = 0.0  # the bug: should be 1 (Lemma F.2 item 2)


output_law.register(FixedThresholdNoMargin)(fixed_threshold_law)


ENTRIES: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        "topstable-delta-q-vs-delta",
        "Top-Stable solves δ_q against δ instead of δ/k̄",
        lambda: TopStableDeltaQAgainstDelta(k=1, kbar=3, epsilon=1.0, delta=1e-2),
        ((5, 5, 5, 5, 5), (5, 5, 5, 5, 6)),
        "000 Alg. 3 line 2, Thm 3.2",
    ),
    CatalogEntry(
        "topstable-threshold-no-half",
        "Top-Stable's threshold ln(1/δ_q)/ε₂ misses the 1/2 (T halved)",
        lambda: TopStableThresholdNoHalf(k=1, kbar=2, epsilon=1.0, delta=1e-3),
        ((0, 0, 0, 0), (0, 0, 1, 0)),
        "000 Alg. 3 line 3, Thm 3.2",
    ),
    CatalogEntry(
        "restricted-gumbel-threshold-no-half",
        "RestrictedGumbel's framework threshold ln(1/δ_q)/ε_R misses the 1/2 (T halved)",
        lambda: RestrictedGumbelThresholdNoHalf(
            k=1, kbar=2, epsilon=0.5, delta=0.0, epsilon_r=0.5, delta_r=1e-3
        ),
        ((0, 0, 0, 0), (0, 0, 1, 0)),
        "001 Alg. 1 line 3, Thm 2, Thm 6",
    ),
    CatalogEntry(
        "fixed-threshold-no-margin",
        "FixedThreshold's τ without the +1 of Lemma F.2 (item 2)",
        lambda: FixedThresholdNoMargin(kbar=2, epsilon=1.0, delta=1e-3),
        ((0, 0, 0, 1, 1), (0, 0, 0, 0, 0)),
        "002 App. F, Lemma F.2, Thm 5 (reconstructed)",
        # A δ-type bug at δ = 1e-3: its witness event has P ≈ 3e-3, Q = 0, seen a few times
        # in a few hundred screening samples; 4M samples keep it on every seed (2M: 4/5).
        {"samples": 4_000_000},
    ),
)
