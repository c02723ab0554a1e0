"""Curve claims (dpaudit.auditor.confirm.curves): bounds beyond δ(ε) at some ε.

Audits of curve claims are tested in tests/dpaudit/auditor/test_curve_claims.py.
"""

from dpaudit.auditor.confirm.curves import curve_evidence, curve_exceeded, curve_violated
from dpaudit.auditor.results.witness import Witness
from mechanisms import AddRemoveUser, PrivacyClaim
from mechanisms.profiles import ZeroConcentratedDP

CURVE = PrivacyClaim.from_profile(ZeroConcentratedDP(0.5), AddRemoveUser(1), delta=1e-6)
POINT = PrivacyClaim(1.0, 1e-6, AddRemoveUser(1))


def _witness(p_low, q_high):
    return Witness((1, 0), (0, 0), None, 1, 1, 0, 1, p_low, q_high, 0.0, 0.0)


def test_a_curve_is_exceeded_by_bounds_far_apart_and_not_by_close_ones():
    assert curve_exceeded(CURVE, 0.8, 0.05)
    assert not curve_exceeded(CURVE, 0.55, 0.45)
    assert not curve_exceeded(POINT, 0.8, 0.05)  # a single point is tested by summarise
    assert curve_violated([_witness(0.55, 0.45), _witness(0.8, 0.05)], CURVE)


def test_the_evidence_names_the_witness_that_exceeds_most():
    record = curve_evidence([_witness(0.55, 0.45), _witness(0.8, 0.05)], CURVE)
    assert record["witness"] == 1 and record["excess"] > 0
    assert record["delta_allowed"] == CURVE.profile.delta_at(record["epsilon"])
    assert curve_evidence([], CURVE) == {"profile": record["profile"]}
    assert curve_evidence([_witness(0.8, 0.05)], POINT) is None
