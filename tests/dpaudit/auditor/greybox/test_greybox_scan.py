"""dpaudit.auditor.greybox.scan: the grey-box view recorded by every live audit."""

import math

import numpy as np
import pytest

import dpaudit
import mechanisms as M
from dpaudit.auditor import AuditResult, as_auditable
from dpaudit.auditor.greybox.scan import GreyBoxScan, PairScan, scan_pairs
from dpaudit.auditor.greybox.sites import short_path
from dpaudit.neighbours.pairs import NeighbourPair

HERE = short_path(__file__)


def no_noise_on_empty_items(counts, rng):
    # BUG: an item with count 0 gets no noise, so adding its first user changes the draws.
    noisy = [c + (rng.laplace(0, 1.0) if c > 0 else 0.0) for c in counts]
    return (int(np.argmax(noisy)),)


def noise_first(counts, rng):
    # Correct report-noisy-max: one draw per item whatever the counts.
    return (int(np.argmax(np.asarray(counts) + rng.laplace(0, 2.0, len(counts)))),)


def shifted_location(counts, rng):
    # The data enter through the location of the draw: priced, ε = |Δloc| / scale = 4 per item.
    return (int(np.argmax(rng.laplace(4.0 * np.asarray(counts, dtype=float), 1.0))),)


PAIRS = [NeighbourPair((3, 0, 2), (3, 1, 2)), NeighbourPair((3, 2, 2), (3, 2, 1))]


def _auditable(function):
    return as_auditable(function, (1.0, 0.0), 1).mechanism


def test_a_branch_on_the_data_is_found_on_its_pair_with_the_call_site():
    scan = scan_pairs(_auditable(no_noise_on_empty_items), PAIRS, seed=0)
    assert scan.pairs_scanned == 2 and not scan.skipped
    (found,) = scan.divergent  # the second pair has no zero count: no branch there
    assert (found.counts, found.counts2) == (PAIRS[0].counts, PAIRS[0].counts2)
    assert found.divergent_runs == scan.runs  # a branch on the data alone: every run
    assert found.site.startswith(HERE + ":")
    assert "missing" in found.divergence


def test_a_mechanism_that_draws_before_it_reads_the_data_has_no_finding():
    scan = scan_pairs(_auditable(noise_first), PAIRS, seed=0)
    assert scan.findings == () and scan.pairs_scanned == 2
    assert "no run's draws read the data" in scan.sentence(1.0)


def test_a_location_that_moves_is_priced_and_named_when_above_the_claim():
    scan = scan_pairs(_auditable(shifted_location), PAIRS, seed=0)
    assert not scan.divergent
    assert [f.priced_epsilon for f in scan.findings] == pytest.approx([4.0, 4.0])
    assert scan.priced_above(1.0) == scan.findings and scan.priced_above(4.0) == ()
    assert "compose to ε = 4" in scan.sentence(1.0) and HERE in scan.sentence(1.0)


def test_pairs_are_scanned_once_each_and_capped():
    pairs = PAIRS * 5
    assert scan_pairs(_auditable(noise_first), pairs, seed=0).pairs_scanned == 2
    assert scan_pairs(_auditable(noise_first), pairs, seed=0, max_pairs=1).pairs_scanned == 1


def test_the_scan_round_trips_through_json():
    scan = scan_pairs(_auditable(no_noise_on_empty_items), PAIRS, seed=3)
    assert GreyBoxScan.from_dict(scan.to_dict()) == scan
    unbounded = PairScan((1,), (2,), 0, "", "", math.inf, "x.py:1")
    assert PairScan.from_dict(unbounded.to_dict()) == unbounded


def test_a_mechanism_that_raises_is_recorded_not_fatal():
    def raises_on_empty(counts, rng):
        if min(counts) == 0:
            raise ValueError("empty item")
        return (0,)

    # Raising on one side only is a divergence ("exception"); on both, the scan stops.
    scan = scan_pairs(_auditable(raises_on_empty), [NeighbourPair((0, 1), (0, 0))], seed=0)
    assert scan.pairs_scanned == 0 and "raised ValueError" in scan.skipped


def test_an_audit_records_the_scan_and_black_box_skips_it():
    # The scan draws on its own stream: every sampled number is the same with it or without.
    options = {"claim": (1.0, 0.0), "width": 1, "samples": 60_000, "seed": 0, "pairs": PAIRS}
    grey = dpaudit.audit(no_noise_on_empty_items, **options)
    black = dpaudit.audit(no_noise_on_empty_items, black_box=True, **options)
    scan = GreyBoxScan.from_dict(grey.evidence["greybox"])
    assert scan.divergent and "grey box:" in str(grey) and "read the data" in str(grey)
    assert "--black-box" in black.evidence["greybox"]["skipped"]
    assert black.evidence["options"]["black_box"] and not grey.evidence["options"]["black_box"]
    assert [w.to_dict() for w in grey.witnesses] == [w.to_dict() for w in black.witnesses]
    assert grey.verdict == black.verdict
    again = AuditResult.from_dict(grey.to_dict())
    assert again.evidence["greybox"] == grey.evidence["greybox"]


def test_black_box_lets_a_mechanism_that_draws_elsewhere_be_sampled():
    def global_state(counts, rng):
        noise = np.random.laplace(0, 2.0, len(counts))  # noqa: NPY002  draws outside rng
        return (int(np.argmax(np.asarray(counts) + noise)),)

    options = {"claim": (1.0, 0.0), "width": 1, "samples": 60_000, "seed": 0, "pairs": PAIRS}
    with pytest.raises(dpaudit.auditor.greybox.OutsideRandomnessError):
        dpaudit.audit(global_state, **options)
    state = np.random.get_state()  # noqa: NPY002
    try:
        result = dpaudit.audit(global_state, black_box=True, **options)
    finally:
        np.random.set_state(state)  # noqa: NPY002
    assert result.samples > 0 and result.evidence["greybox"]["skipped"]


def test_a_command_child_and_an_unseeded_library_are_not_scanned():
    class Unseeded(M.GumbelTopK):
        seeded_by_rng = False

    result = dpaudit.audit(Unseeded(k=1, epsilon=1.0), samples=60_000, seed=0, pairs=PAIRS)
    assert "cannot be seeded" in result.evidence["greybox"]["skipped"]
