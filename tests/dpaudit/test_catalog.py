"""The catalog of broken mechanisms: exact laws, exact violations, and the auditor flags them."""

import mpmath
import numpy as np
import pytest
from goodness_of_fit import assert_sampler_fits

import dpaudit
from dpaudit.catalog import CATALOG, catalog_entry, check_exact
from dpaudit.exact import output_law
from dpaudit.neighbours import is_neighbour
from mechanisms import TopKMechanism

EXACT = [e for e in CATALOG if e.pair is not None]


def test_catalog_size_and_fields():
    assert len(CATALOG) >= 10
    assert len({e.name for e in CATALOG}) == len(CATALOG)
    for entry in CATALOG:
        mech = entry.build()
        assert isinstance(mech, TopKMechanism) and entry.bug and entry.reference
        assert (type(mech).__doc__ or "").startswith("BUG:")
    with pytest.raises(KeyError):
        catalog_entry("no-such-entry")


@pytest.mark.parametrize("entry", EXACT, ids=lambda e: e.name)
def test_exact_law_sums_to_one_and_matches_sampler(entry):
    mech = entry.build()
    for counts in entry.pair:
        counts = np.array(counts)
        law = output_law(mech, counts)
        assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** -30
        n = 40_000
        # Chi-square goodness of fit at p < 1e-6: false failure <= 1e-6 per histogram.
        assert_sampler_fits(law, mech.sample(counts, n, np.random.default_rng(7)))


@pytest.mark.parametrize("entry", EXACT, ids=lambda e: e.name)
def test_exact_epsilon_exceeds_claim(entry):
    assert is_neighbour(entry.pair[0], entry.pair[1], entry.build().claim.neighbours)
    claimed, exact = check_exact(entry)
    assert exact > claimed


@pytest.mark.parametrize("name", ["em-non-monotone", "limit-domain-no-bottom", "svt-no-query-noise"])
def test_flagged_fast(name):
    # On the entry's witness pair (the default families are exercised by the slow test).
    entry = catalog_entry(name)
    result = dpaudit.audit(entry.build(), samples=100_000, seed=0, pairs=[entry.pair])
    assert result.violation, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("entry", CATALOG, ids=lambda e: e.name)
def test_every_entry_flagged_at_default_budget(entry):
    result = dpaudit.audit(entry.build(), seed=0, **entry.audit_options)
    assert result.violation, str(result)
    if entry.pair is not None:
        # The bound is a lower bound on the mechanism's ε (which is at least the pair's exact ε
        # only on that pair; on others it may be larger), so only check it is above the claim.
        assert result.epsilon_lower > entry.build().claim.epsilon
