"""Test-only toy mechanisms, results, tallies, strategies and grey-box helpers shared by the
dpaudit tests (importable as ``helpers``; see conftest.py).

No law is registered here: ``output_law`` laws are inherited by subclasses,
so each test module registers :func:`toy_em_law` on its own toy class.
"""

import inspect
from collections import Counter
from dataclasses import dataclass
from types import SimpleNamespace
from typing import ClassVar

import mpmath
import numpy as np
from hypothesis import strategies as st

import mechanisms as M
from dpaudit.auditor.greybox.sites import short_path
from dpaudit.auditor.results.result import AuditResult
from dpaudit.auditor.values.fitting import fit_encoder
from dpaudit.exact import working_precision


@dataclass(frozen=True)
class OneItemToy(M.TopKMechanism):
    """Test-only base: outcomes of one item, claims (ε, 0) under AddRemoveUser(); no sampler."""

    epsilon: float = 1.0
    ordered: ClassVar[bool] = True

    @property
    def width(self):
        return 1

    @property
    def claim(self):
        return M.PrivacyClaim(self.epsilon, 0.0, M.AddRemoveUser())

    def sample(self, counts, size, rng):  # pragma: no cover - not used here
        raise NotImplementedError


@dataclass(frozen=True)
class ToyEM(OneItemToy):
    """Test-only exponential mechanism: one item, P(i) ∝ exp(ε c_i), sampled by Gumbel-max."""

    def sample(self, counts, size, rng):
        counts = M.validate_counts(counts)
        noisy = rng.gumbel(size=(size, counts.size)) + self.epsilon * counts
        return noisy.argmax(axis=1)[:, None].astype(np.int64)


def toy_em_law(mech, counts):
    """Exact law of a one-item exponential mechanism: {(i,): exp(ε c_i) / Σ_j exp(ε c_j)}."""
    with working_precision():
        w = [mpmath.exp(mech.epsilon * int(c)) for c in counts]
        total = mpmath.fsum(w)
        return {(i,): x / total for i, x in enumerate(w)}


def audit_arguments(**given) -> dict:
    """``dpaudit.audit``'s arguments by name, as its body sees them: every keyword at its default
    (a LimitDomain(2, 3, ε=1, δ=1e-3) as the mechanism), overridden by ``given``."""
    from dpaudit.auditor import audit

    parameters = inspect.signature(audit).parameters.values()
    defaults = {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}
    mechanism = M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)
    return {"mechanism": mechanism, **defaults, **given}


def one_witness_result(witness, **fields) -> AuditResult:
    """A violation found by mechanism "m" with one confirmed event, ``witness``: it claims (1, 0)
    under add/remove one user, its bounds are the witness's, 2,000 samples in one second;
    ``fields`` override any of these."""
    values = {
        "mechanism": "m",
        "claim_epsilon": 1.0,
        "claim_delta": 0.0,
        "neighbours": "add/remove one user",
        "epsilon_lower": witness.epsilon_lower,
        "delta_lower": witness.delta_lower,
        "violation": True,
        "alpha": 0.05,
        "epsilon_witness": witness,
        "delta_witness": witness,
        "samples": 2_000,
        "seconds": 1.0,
        "pairs_screened": 1,
        "events_confirmed": 1,
        "witnesses": (witness,),
    }
    return AuditResult(**{**values, **fields})


class Batched:
    """A batched sampler from ``f(counts, size, rng)``, unchecked (the replay reads traces)."""

    def __init__(self, function):
        self.function = function

    def sample(self, counts, size, rng):
        return self.function(np.asarray(counts), size, rng)


def line_of(function, text) -> str:
    """``file:line`` of the first source line of ``function`` containing ``text``, the file as a
    grey-box site names it (whatever the working directory)."""
    lines, first = inspect.getsourcelines(function)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{short_path(inspect.getsourcefile(function))}:{first + offset}"


def screening_encoder(rng):
    """The encoder screening fits to a pilot of 4,000 releases of an item in {0, 1, 2} with a
    Laplace value around it."""
    items = rng.integers(0, 3, size=(4_000, 1))
    pilot = M.MixedBatch(items, rng.laplace(items, 1.0).astype(float))
    return fit_encoder(1, 1, pilot, None, bins=32, score=False)


def value_tally(encoder, rng, n, shift):
    """Encoded tally of ``n`` releases of an item in {0, 1, 2} with a Laplace value around it."""
    items = rng.integers(0, 3, size=(n, 1))
    return encoder.count(M.MixedBatch(items, rng.laplace(shift + items, 1.0).astype(float)))


class ThreeDraws:
    """Laplace, uniform and normal draws over the batch; the outcome reads all three."""

    def sample(self, counts, size, rng):
        noise = rng.laplace(0.0, 2.0, size=(size, len(counts)))
        coin = rng.random(size)
        extra = rng.normal(1.0, 0.5, size=(size, 2))
        noisy = np.asarray(counts) + noise + (coin[:, None] < 0.5) * extra.sum(axis=1)[:, None]
        return np.argmax(noisy, axis=1)[:, None]


# An outcome: up to three distinct items of 0-5, with or without a trailing -1; a tally of up to
# fifteen outcomes, each seen 1-50 times.
_OUTCOMES = st.lists(st.integers(0, 5), max_size=3, unique=True).flatmap(
    lambda items: st.sampled_from([tuple(items), tuple(items) + (-1,)])
)
outcome_counters = st.dictionaries(_OUTCOMES, st.integers(1, 50), min_size=1, max_size=15).map(
    Counter
)


def user_args(**given) -> SimpleNamespace:
    """The parsed options a user mechanism is built from (``dpaudit.user_mechanism``): none given,
    no values, a 60-second timeout; ``given`` overrides them."""
    defaults = {
        "mechanism": None,
        "child_command": None,
        "claim": None,
        "width": None,
        "values": 0,
        "relation": None,
        "timeout": 60.0,
    }
    return SimpleNamespace(**(defaults | given))


def claim_and_width(mechanism) -> tuple:
    """``(ε, δ, neighbours, width)`` of ``mechanism``'s claim and outcome width, to compare at once."""
    claim = mechanism.claim
    return claim.epsilon, claim.delta, claim.neighbours, mechanism.width
