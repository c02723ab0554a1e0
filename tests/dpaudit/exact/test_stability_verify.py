"""Exhaustive exact verification of the stability family, and of broken variants.

The broken variants are small subclasses that override ONE documented hook, so the
sampler and the exact law (registered below for each subclass) carry the same bug; the
catalog can import them from here:

* ``TopStableDeltaNotSplit`` — TS with δ_q solved against δ instead of δ/k̄ (Thm 3.2's
  union bound over the k̄ queries dropped): threshold too low.
* ``RestrictedDomainSkipsOne`` — F measuring the gap to the (k̄+2)-th count instead of
  the (k̄+1)-th (Alg. 1 line 4 off by one towards the tail): an item that is only in the
  top-k̄ of a neighbour gets a gap of up to 1 instead of <= 0.
* ``RestrictedDomainKbarReference`` — F measuring the gap to the k̄-th count instead of the
  (k̄+1)-th. NOT a privacy bug: the gap to h_k̄ is never larger than the gap to h_{k̄+1}
  (h_k̄ >= h_{k̄+1}), so every test is harder to pass; it only costs utility. Verified to
  hold below.
* ``SparseVectorNoThresholdNoise`` — SVT with T̂ = T (no Lap on the threshold): the
  per-query comparisons are no longer coupled and each ⊥ answer leaks.
"""

import pytest

from dpaudit.exact import output_law, verify
from dpaudit.exact.stability_laws import restricted_domain_law, sparse_vector_law, top_stable_law
from mechanisms import GumbelTopK, RestrictedDomain, RestrictedGumbel, SparseVector, TopStable
from mechanisms.claims import BoundedChange


class TopStableDeltaNotSplit(TopStable):
    """TS bug: δ_q solved for δ instead of δ/k̄ (seed 000 Alg. 3 line 2)."""

    def unstable_budget(self) -> float:
        return self.delta


class RestrictedDomainSkipsOne(RestrictedDomain):
    """F bug: gap measured to the (k̄+2)-th count (seed 001 Alg. 1 line 4 off by one)."""

    def reference_position(self) -> int:
        return self.kbar + 2


class RestrictedDomainKbarReference(RestrictedDomain):
    """F variant: gap measured to the k̄-th count (conservative; not a privacy bug)."""

    def reference_position(self) -> int:
        return self.kbar


class SparseVectorNoThresholdNoise(SparseVector):
    """SVT bug: no noise on the threshold (seed 000 Alg. 2 line 1 without Lap)."""

    def threshold_scale(self) -> float:
        return 0.0


output_law.register(TopStableDeltaNotSplit)(top_stable_law)
output_law.register(RestrictedDomainSkipsOne)(restricted_domain_law)
output_law.register(RestrictedDomainKbarReference)(restricted_domain_law)
output_law.register(SparseVectorNoThresholdNoise)(sparse_vector_law)

TS = {"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 1e-3}
RG = {"k": 2, "kbar": 3, "epsilon": 1.0, "delta": 0.0, "epsilon_r": 1.0, "delta_r": 1e-3}


def _framework(cls):
    return cls(mechanism=GumbelTopK(k=2, epsilon=1.0), kbar=3, epsilon=1.0, delta=1e-3)


# ---- fast: small families (d = 3, counts <= 2) ------------------------------------------


def test_top_stable_holds_and_its_delta_bug_is_caught_on_a_small_family():
    good = verify(TopStable(**TS), d=3, max_count=2, progress=False)
    assert good.holds, good
    bad = verify(TopStableDeltaNotSplit(**TS), d=3, max_count=2, progress=False)
    assert not bad.holds and bad.delta_at_epsilon > 1e-3


def test_sparse_vector_without_threshold_noise_is_caught():
    # seed 000 Alg. 2 (c = 1): claim (ε1 + ε2, 0) for counts moving either way. Without
    # threshold noise each ⊥ answer before the ⊤ costs ε2/2 on its own: 2·0.95 > 2.
    good = SparseVector(threshold=2, epsilon1=0.1, epsilon2=1.9, cutoff=1)
    bad = SparseVectorNoThresholdNoise(threshold=2, epsilon1=0.1, epsilon2=1.9, cutoff=1)
    assert good.claim.neighbours == BoundedChange(1)
    assert verify(good, d=3, max_count=2, progress=False).holds
    assert not verify(bad, d=3, max_count=2, progress=False).holds


# ---- slow: the full family of the brief (d = 5, counts <= 3) -----------------------------


@pytest.mark.slow
def test_top_stable_k2_kbar3_holds_exhaustively():
    result = verify(TopStable(**TS), d=5, max_count=3, progress=False)
    assert result.holds, result


@pytest.mark.slow
def test_restricted_gumbel_k2_kbar3_holds_exhaustively():
    result = verify(RestrictedGumbel(**RG), d=5, max_count=3, progress=False)
    assert result.holds, result


@pytest.mark.slow
def test_top_stable_delta_bug_fails_exhaustively():
    result = verify(TopStableDeltaNotSplit(**TS), d=5, max_count=3, progress=False)
    assert not result.holds


@pytest.mark.slow
def test_framework_reference_off_by_one_towards_the_tail_fails():
    result = verify(_framework(RestrictedDomainSkipsOne), d=5, max_count=2, progress=False)
    assert not result.holds


@pytest.mark.slow
def test_framework_kbar_th_reference_is_conservative_and_holds():
    # The brief expected this variant to fail; it cannot: gap to h_k̄ <= gap to h_{k̄+1}.
    result = verify(_framework(RestrictedDomainKbarReference), d=5, max_count=3, progress=False)
    assert result.holds, result


@pytest.mark.slow
def test_halting_sparse_vector_without_threshold_noise_fails():
    # seed 001 Alg. 2 (monotone queries, add/remove): with T̂ = T the prefix pattern
    # "2 passes then ⊥" has ε = 1.5 > ε1 + ε2 = 1
    bad = SparseVectorNoThresholdNoise(
        threshold=2, epsilon1=0.5, epsilon2=0.5, cutoff=3, halting=True
    )
    assert not verify(bad, d=5, max_count=2, progress=False).holds
    good = SparseVector(threshold=2, epsilon1=0.5, epsilon2=0.5, cutoff=3, halting=True)
    assert verify(good, d=5, max_count=2, progress=False).holds


@pytest.mark.slow
@pytest.mark.parametrize(
    "build",
    [
        lambda: TopStable(**TS, calibration="exact"),
        lambda: RestrictedGumbel(**RG, calibration="exact"),
    ],
    ids=["TopStable", "RestrictedGumbel"],
)
def test_exact_calibration_keeps_the_claim(build):
    # Thm 3.2 / Lemma 2 only need the exact crossing probability <= δ/k̄ (δ_R)
    result = verify(build(), d=5, max_count=2, progress=False)
    assert result.holds, result


@pytest.mark.slow
@pytest.mark.parametrize(
    "build",
    [
        lambda: TopStable(k=2, kbar=3, epsilon=6.0, delta=0.2),
        lambda: TopStable(k=2, kbar=3, epsilon=6.0, delta=0.2, calibration="exact"),
        lambda: TopStable(k=2, kbar=3, epsilon=3.0, delta=0.2, epsilon_em=1.0),
        lambda: RestrictedGumbel(
            k=2, kbar=3, epsilon=0.2, delta=0.0, epsilon_r=6.0, delta_r=0.2, calibration="exact"
        ),
    ],
    ids=["TS", "TS-exact", "TS-em", "RG-exact"],
)
def test_low_thresholds_exercise_the_epsilon_part(build):
    # At ε = 1, δ = 1e-3 the thresholds (T ≈ 31 for TS, ≈ 16 for F) are far above counts
    # <= 3, so almost every outcome is ⊥ and only the δ part is tested. Large ε and δ put
    # T within reach of tiny counts, so the SVT/EM (ε) part is exercised too.
    result = verify(build(), d=5, max_count=2, progress=False)
    assert result.holds, result
    assert result.delta_at_epsilon > 0  # the family does reach the mechanisms' δ part
