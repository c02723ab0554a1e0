"""``mechanisms.session_config``: a multiLimitDom session's budgets, charge rule and claim."""

import math
import pickle

import numpy as np
import pytest

from mechanisms import LimitDomain
from mechanisms.claims import AddRemoveUser
from mechanisms.outcomes import BOTTOM, PAD
from mechanisms.session_config import MultiLimitDomainConfig


def _config(**given):
    return MultiLimitDomainConfig(
        **{"total_k": 6, "max_queries": 3, "epsilon": 0.5, "delta": 1e-6} | given
    )


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("total_k", 0, "total_k must be an integer >= 1, got 0"),
        ("max_queries", 1.5, "max_queries must be an integer >= 1, got 1.5"),
        ("epsilon", 0.0, "epsilon must be a finite number > 0, got 0.0"),
        ("delta", 1.0, "delta must be a finite number in (0, 1), got 1.0"),
        ("max_items", 0, "max_items must be an integer >= 1, got 0"),
        ("delta_prime", -0.1, "delta_prime must be a finite number in [0, 1), got -0.1"),
    ],
)
def test_each_bad_parameter_is_named(field, value, message):
    with pytest.raises(ValueError) as caught:
        _config(**{field: value})
    assert str(caught.value) == message


def test_the_config_is_frozen_and_pickles():
    config = _config(max_items=2)
    with pytest.raises(AttributeError):
        config.epsilon = 1.0  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(config)) == config


def test_an_answer_costs_its_length_bottom_included():
    config = _config()
    assert config.charge((3, 1)) == 2
    assert config.charge((3, BOTTOM)) == 2  # ⊥ is charged (Alg. 2 line 5)
    assert config.charge((BOTTOM,)) == 1
    assert config.charge(()) == 0


def test_charges_of_a_batch_agree_with_charge_row_by_row():
    config = _config()
    rng = np.random.default_rng(3)
    batch = rng.integers(-1, 5, size=(50, 4))
    lengths = rng.integers(0, 5, size=50)
    for row, n in zip(batch, lengths, strict=True):
        row[n:] = PAD
    charges = config.charges(batch)
    assert charges.dtype == np.int64
    expected = [config.charge(tuple(int(v) for v in row if v != PAD)) for row in batch]
    assert charges.tolist() == expected == lengths.tolist()


def test_transcript_width_is_total_k():
    assert _config(total_k=9).transcript_width == 9


def test_limit_domain_carries_the_sessions_per_call_parameters():
    config = _config(max_items=2)
    query = config.limit_domain(k=2, kbar=4)
    assert query == LimitDomain(k=2, kbar=4, epsilon=0.5, delta=1e-6, max_items=2)


def test_the_claim_without_delta_prime_is_k_star_epsilon():
    config = _config(max_items=3)
    claim = config.claim
    assert claim.epsilon == pytest.approx(6 * 0.5)
    assert claim.delta == pytest.approx(2 * 3 * 1e-6)  # 2ℓ*δ + δ'
    assert claim.neighbours == AddRemoveUser(3)


def test_the_claim_with_delta_prime_is_the_smallest_composition_bound():
    # Seed 003 Thm 1 eq. 2 with k*: min{k*ε, k*ε tanh(ε/2) + ε√(2k* ln 1/δ'),
    # k*ε²/2 + ε√(½k* ln 1/δ')}, here computed directly.
    k, eps, dp = 50, 0.1, 1e-5
    config = _config(total_k=k, epsilon=eps, delta_prime=dp)
    log = math.log(1 / dp)
    bounds = (
        k * eps,
        k * eps * math.tanh(eps / 2) + eps * math.sqrt(2 * k * log),
        k * eps**2 / 2 + eps * math.sqrt(0.5 * k * log),
    )
    assert min(bounds) < k * eps  # the case where composition helps
    assert config.claim.epsilon == pytest.approx(min(bounds), rel=1e-12)
    assert config.claim.delta == pytest.approx(2 * 3 * 1e-6 + dp)


def test_the_claims_delta_is_capped_at_one():
    assert _config(max_queries=10**6, delta=0.4).claim.delta == 1.0
