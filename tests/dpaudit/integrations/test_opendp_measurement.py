"""OpenDP measurements built by a user from OpenDP's public constructors, audited by object.

Each claim read from the measurement's map is compared with the paper's formula and, where one
exists, with the hand-written adapter's claim. Audits: OpenDP cannot be seeded, so each run draws
fresh OS entropy; they run at ``alpha = 1e-3``, so a true claim is flagged (VIOLATION) with
probability <= 1e-3 per run. The budgets that must find a violation were measured on seeded numpy
samplers equal in law to the OpenDP measurement (same budget, same alpha, 20 seeds each; the
numbers are in each test's docstring): 0 misses in 20 there, so a miss here is rare but not
bounded by alpha.

Budgets: ~14k OpenDP calls per second on one idle core (vectors), ~3.5k for maps; an audit of
30k samples takes 3-5 s.
"""

import math
import pickle
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import opendp.prelude as dp
import pytest
from goodness_of_fit import assert_sampler_fits, chi_square_pvalue
from opendp.mod import GLOBAL_FEATURES

from dpaudit.auditor.results.result import VIOLATION
from dpaudit.errors import UsageError
from dpaudit.exact import output_law
from dpaudit.integrations.opendp import (
    OpenDPNoisyMax,
    OpenDPNoisyTopKZCDP,
    audit_measurement,
    measurement_mechanism,
)
from dpaudit.integrations.opendp_measurement import NoHistogramReading, OpenDPMeasurement
from dpaudit.user_mechanism import module_mechanism
from mechanisms import (
    AddRemoveUser,
    BoundedChange,
    GumbelTopK,
    MixedBatch,
    PermuteAndFlip,
    PrivacyClaim,
    ProfileClaim,
    Substitute,
)
from mechanisms.profiles import ProfilePoints, ZeroConcentratedDP

ALPHA = 1e-3
SAMPLES = 30_000
#: Audits of a true claim assert only "not VIOLATION", whose false-failure probability is
#: alpha at any budget; they run near the smallest valid budget (8,006 samples for five
#: items, 16,006 for the four-record pipeline), the flagged audits keep ``SAMPLES``.
TRUE_CLAIM_SAMPLES = 10_000
P_REJECT = 1e-4
COUNTS = (3, 2, 1, 0, 0)

dp.enable_features("contrib")  # OpenDP's constructors below are not yet vetted ("contrib")


def _counts_space(monotonic=True):
    return dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int, monotonic=monotonic)


def _noisy_max(scale, monotonic=True, measure=None):
    measure = dp.max_divergence() if measure is None else measure
    return dp.m.make_noisy_max(*_counts_space(monotonic), measure, scale=scale)


def _count_by_categories(scale):
    """Records (strings) -> counts of ``a``, ``b``, ``c`` and of the rest -> discrete Laplace."""
    space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    return space >> dp.t.then_count_by_categories(["a", "b", "c"]) >> dp.m.then_laplace(scale)


def _laplace_threshold(scale, threshold):
    space = (
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
        dp.l01inf_distance(dp.absolute_distance(T=int)),
    )
    return dp.m.make_laplace_threshold(*space, scale=scale, threshold=threshold)


def _discrete_laplace_tail(scale, k):
    """``P(Z >= k)`` for the discrete Laplace ``P(Z = z) ∝ t^|z|``, ``t = e^(-1/scale)``, k >= 1."""
    t = math.exp(-1 / scale)
    return t**k / (1 + t)


@pytest.fixture
def honest_but_curious():
    """``make_user_measurement`` needs this OpenDP feature; disabled again if it was off."""
    was_on = "honest-but-curious" in GLOBAL_FEATURES
    dp.enable_features("honest-but-curious")
    yield
    if not was_on:
        dp.disable_features("honest-but-curious")


# --- (a) report noisy max ---------------------------------------------------------------


@pytest.mark.parametrize(
    "monotonic, relation, epsilon",
    [
        (True, AddRemoveUser(), 1 / 2.0),  # d_in / scale
        (False, BoundedChange(1), 2 / 2.0),  # range distance 2 d_in / scale
    ],
)
def test_noisy_max_claim_is_read_from_its_map(monotonic, relation, epsilon):
    """make_noisy_max(scale 2) read by object: ε = range distance / scale (McKenna & Sheldon
    2020), the claim of the hand-written ``OpenDPNoisyMax``; one item id per release."""
    mech = measurement_mechanism(_noisy_max(2.0, monotonic))
    assert mech.claim == PrivacyClaim(epsilon, 0.0, relation)
    assert mech.claim == OpenDPNoisyMax(2.0, monotonic).claim
    assert (mech.width, mech.value_width, mech.encoding.kind) == (1, 0, "items")
    batch = mech.sample(COUNTS, 50, np.random.default_rng(0))
    assert batch.shape == (50, 1) and set(batch[:, 0]) <= set(range(5))


def test_noisy_max_halved_claim_is_flagged():
    """make_noisy_max(scale 1) claimed at ε/2 = 0.5 (true ε = 1): VIOLATION at 30k samples.

    Seeded PermuteAndFlip(1) (equal in law) with the same budget: VIOLATION 20/20.
    """
    result = audit_measurement(
        _noisy_max(1.0), claim=(0.5, 0.0, AddRemoveUser()), samples=SAMPLES, alpha=ALPHA
    )
    assert result.verdict == VIOLATION, result.explanation
    assert 0.5 < result.epsilon_lower <= 1.0
    assert result.evidence["opendp"]["reading"] == "counts"


def test_noisy_max_true_claim_is_not_violated():
    """The claim read (ε = 1): not VIOLATION (false failure <= alpha = 1e-3)."""
    result = audit_measurement(_noisy_max(1.0), samples=TRUE_CLAIM_SAMPLES, alpha=ALPHA)
    assert result.verdict != VIOLATION, result.explanation
    assert result.epsilon_lower <= 1.0


# --- (b) a pipeline: records -> counts by category -> discrete Laplace ---------------------


@pytest.mark.parametrize(
    "neighbours, epsilon",
    [
        (None, 1 / 2.0),  # add/remove one record: L1 sensitivity 1 of the counts
        (Substitute(1), 2 / 2.0),  # one record changed: symmetric distance 2
    ],
)
def test_pipeline_claim_is_read_from_its_map(neighbours, epsilon):
    """count_by_categories >> laplace(scale 2): ε = Δ₁/scale (Dwork & Roth 2014, Thm 3.6), the
    L1 sensitivity Δ₁ being the symmetric distance; the release is 4 values."""
    records = ["a", "b", "c", "z"]  # "z" is counted with the rest
    mech = measurement_mechanism(_count_by_categories(2.0), neighbours=neighbours, records=records)
    assert mech.claim == PrivacyClaim(epsilon, 0.0, neighbours or AddRemoveUser(1))
    assert (mech.width, mech.value_width, mech.encoding.kind) == (0, 4, "values")
    assert mech.reading.data(np.array([2, 0, 1, 3])) == ["a", "a", "c", "z", "z", "z"]
    batch = mech.sample([2, 0, 1, 3], 20, np.random.default_rng(0))
    assert isinstance(batch, MixedBatch) and batch.values.shape == (20, 4)
    assert np.all(batch.values == np.round(batch.values))  # integer noise on integer counts


def test_pipeline_halved_claim_is_flagged_and_true_claim_is_not():
    """The pipeline at scale 1 (ε = 1): claimed at 0.5, VIOLATION; its own claim, not VIOLATION.

    Seeded numpy counts + discrete Laplace(1) with the same budget: VIOLATION 20/20 at 0.5.
    The true claim is flagged with probability <= alpha = 1e-3.
    """
    records = ["a", "b", "c", "z"]
    halved = audit_measurement(
        _count_by_categories(1.0),
        records=records,
        claim=(0.5, 0.0, AddRemoveUser(1)),
        samples=SAMPLES,
        alpha=ALPHA,
    )
    assert halved.verdict == VIOLATION, halved.explanation
    assert halved.evidence["opendp"]["reading"] == "dataset"
    true = audit_measurement(
        _count_by_categories(1.0), records=records, samples=2 * TRUE_CLAIM_SAMPLES, alpha=ALPHA
    )
    assert true.verdict != VIOLATION, true.explanation


def test_composition_claim_adds_up_and_may_repeat_items():
    """make_composition of two noisy maxes (scale 2): ε = 2 · 1/2 (basic composition); the
    release is two item ids that may be equal (checked as a transcript, not as a top-k)."""
    composed = dp.c.make_composition([_noisy_max(2.0), _noisy_max(2.0)])
    mech = measurement_mechanism(composed)
    assert mech.claim == PrivacyClaim(1.0, 0.0, AddRemoveUser())
    assert (mech.width, mech.outcome_validation) == (2, "transcript")
    batch = mech.sample([5, 0, 0], 200, np.random.default_rng(0))
    assert (batch[:, 0] == batch[:, 1]).any()


# --- (c) noisy max under zCDP --------------------------------------------------------------


def test_zcdp_noisy_max_claim_is_read_from_its_map():
    """make_noisy_max(scale 0.5, zCDP): ρ = (d_in/scale)²/8 (bounded range to zCDP, Cesar &
    Rogers 2021), as a zCDP curve headed at δ = 1e-6, equal to ``OpenDPNoisyTopKZCDP``'s."""
    mech = measurement_mechanism(_noisy_max(0.5, measure=dp.zero_concentrated_divergence()))
    claim = mech.claim
    assert isinstance(claim, ProfileClaim) and claim.neighbours == AddRemoveUser()
    assert claim.profile.rho == pytest.approx((1 / 0.5) ** 2 / 8, rel=1e-12)
    assert claim == OpenDPNoisyTopKZCDP(1, 0.5).claim
    assert claim.delta == 1e-6


def test_zcdp_noisy_max_samples_gumbel_noise():
    """OpenDP 0.16.0's make_noisy_max under zCDP samples the exponential mechanism (Gumbel
    noise), whose ε²/8 is sound: opendp/opendp#2911 (permute-and-flip under an ε²/8 claim, in
    0.15.1) is fixed here. Chi-square at p < 1e-4 on 5k samples (false failure <= 1e-4 per
    run); permute-and-flip's law of the same scale is rejected (noncentrality ~299 on 4 df at
    5k: missed with probability ~1e-36, 0 misses in 400 simulated runs)."""
    mech = measurement_mechanism(_noisy_max(1.0, measure=dp.zero_concentrated_divergence()))
    batch = mech.sample(COUNTS, 5_000, np.random.default_rng(0))
    assert_sampler_fits(output_law(GumbelTopK(1, 1.0), COUNTS), batch, P_REJECT)
    assert chi_square_pvalue(output_law(PermuteAndFlip(1.0), COUNTS), batch) < P_REJECT


def test_zcdp_noisy_max_halved_pure_claim_is_flagged_and_its_curve_is_not():
    """Gumbel noise of scale 0.5 is ε = 2 pure DP under monotone changes (the exponential
    mechanism, McSherry & Talwar 2007): claimed at ε = 1, VIOLATION; its ρ = 0.5 curve, not.

    A halved ρ is not tested: the curve's δ(ε) is far above what this mechanism reaches. Seeded
    GumbelTopK(1, 2) with the same budget: VIOLATION 20/20 at ε = 1. The curve is flagged with
    probability <= alpha = 1e-3.
    """
    measurement = _noisy_max(0.5, measure=dp.zero_concentrated_divergence())
    halved = audit_measurement(
        measurement, claim=(1.0, 0.0, AddRemoveUser()), samples=SAMPLES, alpha=ALPHA
    )
    assert halved.verdict == VIOLATION, halved.explanation
    assert 1.0 < halved.epsilon_lower <= 2.0
    curve = audit_measurement(measurement, samples=TRUE_CLAIM_SAMPLES, alpha=ALPHA)
    assert curve.verdict != VIOLATION, curve.explanation


# --- (d) thresholds: partition selection on a map of counts --------------------------------


def test_laplace_threshold_claim_is_read_from_its_map():
    """make_laplace_threshold(scale 1, threshold 2) on a map: ε = 1/scale and OpenDP's δ =
    P(Z >= threshold) for discrete Laplace noise Z (the tail beyond the threshold)."""
    mech = measurement_mechanism(_laplace_threshold(1.0, 2), domain_size=3)
    epsilon, delta = mech.claim[:2]
    assert mech.claim.neighbours == AddRemoveUser(1)
    assert mech.reading.d_in == (1, 1, 1)  # (l0, l1, l∞) of one user touching one key
    assert epsilon == 1.0 and delta == pytest.approx(_discrete_laplace_tail(1.0, 2), rel=1e-12)
    assert (mech.width, mech.value_width, mech.encoding.kind) == (3, 3, "keys")
    assert not mech.ordered
    assert mech.reading.data(np.array([2, 0, 1])) == {"0": 2, "2": 1}


def test_laplace_threshold_releases_the_mass_at_the_threshold():
    """OpenDP 0.16.0 releases a key whose noisy count EQUALS the threshold, so a new key of
    count 1 is released with P(Z >= threshold - 1) = 0.269, e times the δ its map states:
    opendp/opendp#2922 is present in 0.16.0. 4000 releases of {"0": 1}: the rate's 5-sigma
    band (±0.035) excludes the map's δ = 0.099 (false failure < 1e-6)."""
    mech = measurement_mechanism(_laplace_threshold(1.0, 2), domain_size=1)
    batch = mech.sample([1], 4_000, np.random.default_rng(0))
    released = batch.items[:, 0] == 0
    true = _discrete_laplace_tail(1.0, 1)
    assert abs(released.mean() - true) < 5 * math.sqrt(true * (1 - true) / 4_000)
    assert (batch.values[released, 0] == 2).any()  # a release at exactly the threshold
    assert mech.claim.delta < true / 2.5


def test_laplace_threshold_map_claim_is_flagged_and_the_corrected_delta_is_not():
    """The audit finds #2922 by itself: the claim read, (1, 0.099), is VIOLATION; with the
    threshold's mass counted, δ = P(Z >= 1) = 0.269, it is not (false failure <= 1e-3).

    Seeded numpy threshold with the same noise and budget: VIOLATION 20/20 for the map's claim.
    """
    measurement = _laplace_threshold(1.0, 2)
    read = audit_measurement(measurement, domain_size=3, samples=20_000, alpha=ALPHA)
    assert read.verdict == VIOLATION, read.explanation
    assert read.evidence["opendp"]["output"] == "keys"
    corrected = (1.0, _discrete_laplace_tail(1.0, 1), AddRemoveUser(1))
    fixed = audit_measurement(
        measurement, domain_size=3, claim=corrected, samples=17_000, alpha=ALPHA
    )  # the smallest valid budget here is 16,006; "not VIOLATION" holds w.p. 1 - alpha at any
    assert fixed.verdict != VIOLATION, fixed.explanation


def test_gaussian_threshold_claim_is_an_approximate_zcdp_curve():
    """make_gaussian_threshold(scale 1, threshold 3): map (ρ, δ₀) = (1/(2σ²), P(N(0,1) >= 2));
    the claim is the points (ε_ρ(δ), δ₀ + δ), headed at δ₀ + 1e-6.

    #2922 in its Gaussian form: a new key of count 1 is released with the discrete Gaussian's
    P(Z >= 2) = 0.0586, not δ₀ = 0.0228. 4000 releases: the 5-sigma band (±0.019) excludes δ₀
    (false failure < 1e-6).
    """
    space = (
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
        dp.l02inf_distance(dp.absolute_distance(T=int)),
    )
    mech = measurement_mechanism(
        dp.m.make_gaussian_threshold(*space, scale=1.0, threshold=3), domain_size=1
    )
    claim = mech.claim
    spent = math.erfc(2 / math.sqrt(2)) / 2
    assert isinstance(claim.profile, ProfilePoints)
    assert claim.delta == pytest.approx(spent + 1e-6, rel=1e-6)  # OpenDP rounds δ₀ up
    assert claim.epsilon == pytest.approx(ZeroConcentratedDP(0.5).epsilon_at(1e-6), rel=1e-9)
    weights = {z: math.exp(-(z**2) / 2) for z in range(-40, 41)}
    true = sum(w for z, w in weights.items() if z >= 2) / sum(weights.values())
    released = mech.sample([1], 4_000, np.random.default_rng(0)).items[:, 0] == 0
    assert abs(released.mean() - true) < 5 * math.sqrt(true * (1 - true) / 4_000)
    assert true - claim.delta > 5 * math.sqrt(true * (1 - true) / 4_000)


def test_smoothed_and_fixed_delta_claims_are_read_at_delta():
    """make_zCDP_to_approxDP(make_gaussian) has a curve map: the claim is its points, headed at
    ε(1e-6); make_fix_delta of it maps to (ε, δ) directly."""
    gaussian = dp.m.make_gaussian(
        dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=1.0
    )
    smoothed = dp.c.make_zCDP_to_approxDP(gaussian)
    mech = measurement_mechanism(smoothed, domain_size=3)
    epsilon = smoothed.map(1).epsilon(1e-6)
    assert mech.claim.epsilon == pytest.approx(epsilon, rel=1e-9) and mech.claim.delta == 1e-6
    fixed = measurement_mechanism(dp.c.make_fix_delta(smoothed, 1e-6), domain_size=3)
    assert tuple(fixed.claim) == (epsilon, 1e-6, AddRemoveUser(1))
    assert fixed.value_width == 3


# --- readings of the input space --------------------------------------------------------------


@pytest.mark.parametrize(
    "metric, neighbours, d_in",
    [
        (dp.l1_distance(T=int), AddRemoveUser(3), 3),
        (dp.l1_distance(T=int), Substitute(2), 4),
        (dp.l2_distance(T=int), AddRemoveUser(4), 2),
        (dp.l2_distance(T=float), AddRemoveUser(2), math.sqrt(2)),
    ],
)
def test_count_vector_d_in_follows_the_relation(metric, neighbours, d_in):
    """Δ items move the counts by Δ in L1 and √Δ in L2 (2Δ items for a substitution)."""
    kind = "T=int" if "i32" in repr(metric) else "T=float"
    domain = dp.vector_domain(dp.atom_domain(T=int if kind == "T=int" else float, nan=False))
    if "L1" in repr(metric):
        measurement = dp.m.make_laplace(domain, metric, scale=1.0)
    else:
        measurement = dp.m.make_gaussian(domain, metric, scale=1.0)
    mech = measurement_mechanism(measurement, neighbours=neighbours)
    assert mech.reading.d_in == d_in and mech.claim.neighbours == neighbours


def test_bounded_integer_records_are_enumerated():
    """Records of a bounded integer domain are the items, in order, without ``records=``."""
    space = dp.vector_domain(dp.atom_domain(bounds=(0, 3))), dp.symmetric_distance()
    measurement = space >> dp.t.then_count_by_categories([0, 1, 2]) >> dp.m.then_laplace(1.0)
    mech = measurement_mechanism(measurement)
    assert mech.reading.records == (0, 1, 2, 3) and mech.claim.epsilon == 1.0


def test_a_measurement_that_serializes_pickles():
    """Workers rebuild the measurement with ``dp.serialize``; a chain of partial constructors
    does not serialize, and pickling says so (the auditor then samples in one process)."""
    mech = measurement_mechanism(_noisy_max(2.0))
    again = pickle.loads(pickle.dumps(mech))
    assert isinstance(again, OpenDPMeasurement) and again.claim == mech.claim
    with pytest.raises(TypeError, match="does not serialize"):
        pickle.dumps(measurement_mechanism(_count_by_categories(1.0), records=["a", "z"]))


# --- (e) refusals ---------------------------------------------------------------------------


def _float_sum():
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    return space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum() >> dp.m.then_laplace(1.0)


@pytest.mark.parametrize(
    "build, options, match",
    [
        (_float_sum, {}, r"float records .* pass records="),
        (lambda: _count_by_categories(1.0), {}, r"unbounded records .* pass records="),
        (
            lambda: dp.m.make_randomized_response_bool(0.75),
            {},
            r"input_domain AtomDomain\(T=bool\) is neither",
        ),
        (
            lambda: _noisy_max(1.0),
            {"neighbours": Substitute(1)},
            r"monotonic L∞ .* monotonic=False",
        ),
        (
            lambda: dp.m.make_laplace(*_l1_space(), scale=1.0),
            {"neighbours": AddRemoveUser()},
            r"any number of items.*AddRemoveUser\(Δ\)",
        ),
        (
            lambda: dp.m.make_gaussian(
                dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=1.0
            ),
            {"neighbours": AddRemoveUser(2)},
            r"√2.*perfect square",
        ),
        (
            lambda: (
                (dp.vector_domain(dp.atom_domain(T=str), size=10), dp.symmetric_distance())
                >> dp.t.then_count()
                >> dp.m.then_laplace(1.0)
            ),
            {"records": ["a"]},
            r"fixes the dataset size at 10",
        ),
    ],
    ids=["float-records", "string-records", "scalar", "monotonic", "unbounded-l1", "l2", "sized"],
)
def test_refusals_name_the_reason_and_the_fix(build, options, match):
    with pytest.raises(NoHistogramReading, match=match):
        measurement_mechanism(build(), **options)


def _l1_space():
    return dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)


def test_unknown_metric_and_measure_are_refused(honest_but_curious):
    """A user-defined metric or privacy measure has no reading: refused, naming which."""
    domain = dp.vector_domain(dp.atom_domain(T=int))
    metric = dp.user_distance("my metric")
    measurement = dp.m.make_user_measurement(
        domain, metric, dp.max_divergence(), function=lambda x: 0, privacy_map=lambda d: 1.0
    )
    with pytest.raises(
        NoHistogramReading, match=r"input_metric .*my metric.* dp\.symmetric_distance"
    ):
        measurement_mechanism(measurement)
    measure = dp.user_divergence("my measure")
    measurement = dp.m.make_user_measurement(
        domain, dp.l1_distance(T=int), measure, function=lambda x: 0, privacy_map=lambda d: 1.0
    )
    with pytest.raises(NoHistogramReading, match=r"output_measure .*my measure"):
        measurement_mechanism(measurement)


def test_a_release_that_is_not_numbers_is_refused(honest_but_curious):
    measurement = dp.m.make_user_measurement(
        dp.vector_domain(dp.atom_domain(T=int)),
        dp.l1_distance(T=int),
        dp.max_divergence(),
        function=lambda x: "top",
        privacy_map=lambda d: 1.0,
    )
    with pytest.raises(NoHistogramReading, match="release is a str"):
        measurement_mechanism(measurement)
    with pytest.raises(ValueError, match="measurement must be an OpenDP Measurement"):
        measurement_mechanism(dp.t.make_count(*_l1_space()[:1], dp.symmetric_distance()))


# --- the command line: module:attr naming a measurement -----------------------------------------


def test_module_attr_naming_a_measurement_is_read(tmp_path, monkeypatch):
    """``dpaudit audit mymod:measurement`` reads the measurement under ``--relation``; a
    measurement with no reading is a usage error that says why."""
    (tmp_path / "user_opendp.py").write_text(
        textwrap.dedent(
            """
            import opendp.prelude as dp

            dp.enable_features("contrib")
            space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
            noisy_max = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=2.0)
            scalar = dp.m.make_randomized_response_bool(0.75)
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    args = SimpleNamespace(
        mechanism="user_opendp:noisy_max", claim=None, width=None, values=0, relation=None
    )
    assert module_mechanism(args).claim == PrivacyClaim(1.0, 0.0, BoundedChange(1))
    args.relation = "add-remove"  # a non-monotonic L∞ metric covers add/remove too, at d_in 1
    assert module_mechanism(args).claim == PrivacyClaim(1.0, 0.0, AddRemoveUser())
    args.mechanism = "user_opendp:scalar"
    with pytest.raises(UsageError, match="user_opendp:scalar: input_domain"):
        module_mechanism(args)
    sys.modules.pop("user_opendp", None)
