"""OpenDP's noisy top-k and report-noisy-max measurements as dpaudit mechanisms.

Any other measurement is audited by object:
[`audit_measurement`][dpaudit.integrations.opendp_measurement.audit_measurement] and
[`measurement_mechanism`][dpaudit.integrations.opendp_measurement.measurement_mechanism] (re-exported
here) read its input space as a histogram, its claim from its map and its releases as outcomes
([`opendp_measurement`][dpaudit.integrations.opendp_measurement]). The adapters below add what
a reading cannot: the law OpenDP samples, checked by chi-square, and exact references.

Only OpenDP's public Python API is used (``opendp.prelude``: ``vector_domain``,
``linf_distance``, ``measurements.make_noisy_top_k`` / ``make_noisy_max`` /
``make_report_noisy_max_gumbel``, ``Measurement.map``). The histogram of counts is
the score vector; the input metric is ``LInfDistance(monotonic=...)``, so a
distance of 1 is exactly one of dpaudit's relations:

* ``monotonic=True`` — every count moves by at most 1, all in the same direction:
  [`AddRemoveUser`][mechanisms.AddRemoveUser] (unrestricted add/remove of one user);
* ``monotonic=False`` — every count moves by at most 1 either way:
  [`BoundedChange`][mechanisms.BoundedChange] ``(1)``.

The claimed ε is OpenDP's own privacy map at ``d_in = 1`` (never typed in here).

What OpenDP 0.16 samples with the pure-DP measure (``max_divergence``), read from
its source (``rust/src/measurements/noisy_top_k``) and checked by the chi-square
tests in ``tests/dpaudit/integrations/test_opendp.py``: ``k`` rounds of
permute-and-flip with removal (McKenna & Sheldon 2020, Alg. 1; seed
001_49698e97f2ea8cba.txt §7 ref. [27]), each keeping a visited item ``r`` with
probability ``exp(−(c* − c_r)/scale)``, i.e. report-noisy-max with
Exponential(scale) noise, fresh in every round. Its privacy map is
``k · range_distance(d_in) / scale`` with range distance ``d_in`` (monotonic) or
``2 d_in`` (not monotonic). ``make_report_noisy_max_gumbel`` is, despite its name,
a deprecated alias of ``make_noisy_max`` with ``max_divergence``: the same
exponential-noise law, not Gumbel noise.

zCDP measurements (``zero_concentrated_divergence``), audited under their own maps read
as ρ-zCDP curves
([`mechanisms.profiles.ZeroConcentratedDP`][mechanisms.profiles.ZeroConcentratedDP], converted to
(ε, δ(ε)) with Canonne, Kamath & Steinke 2020, Prop. 7):

* [`OpenDPNoisyTopKZCDP`][dpaudit.integrations.opendp.OpenDPNoisyTopKZCDP] — ``make_noisy_top_k``
  with the zCDP measure: OpenDP then adds Gumbel(scale) noise (the exponential mechanism, peeled),
  the law of [`mechanisms.GumbelTopK`][mechanisms.GumbelTopK] with ε = 1/scale, checked by
  chi-square in the tests; its map is ``k · (range distance / scale)² / 8`` (bounded range to zCDP,
  Cesar & Rogers 2021, ALT: an ε-bounded-range mechanism is ε²/8-zCDP);
* [`OpenDPGaussianCounts`][dpaudit.integrations.opendp.OpenDPGaussianCounts] — ``make_gaussian`` on
  the integer count vector: discrete Gaussian noise of scale σ on every count (Canonne, Kamath &
  Steinke 2020), map ``d_in² / (2σ²)`` at the L2 distance ``d_in`` one user moves the counts.

Building a measurement calls ``dp.enable_features("contrib")`` (these constructors
are not yet vetted by OpenDP), which stays enabled in the process.

Randomness: OpenDP draws from the operating system's cryptographic generator and
offers no seed. The ``rng`` argument of ``sample`` is therefore not used for the
draws (it is still type-checked): audits are valid — the auditor's bounds only
need independent samples — but not reproducible bit for bit, and tests of these
adapters assert verdicts and goodness of fit only, with a stated false-failure
probability.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import mpmath
import numpy as np

from dpaudit.integrations.opendp_build import (
    NOISY_MAX_CONSTRUCTORS,
    build_measurement,
    opendp_version,
    relation_of,
    selection_batch,
)
from dpaudit.integrations.opendp_laws import peeled_permute_and_flip_law
from dpaudit.integrations.opendp_measurement import (
    audit_measurement,
    measurement_mechanism,
    zcdp_claim,
)
from mechanisms import (
    AddRemoveUser,
    GumbelTopK,
    MixedBatch,
    PermuteAndFlip,
    PrivacyClaim,
    TopKMechanism,
)
from mechanisms.base import check_rng, check_size
from mechanisms.histogram import validate_counts
from mechanisms.validation import (
    require_bool,
    require_positive_float,
    require_positive_int,
    require_probability,
)

__all__ = [
    "OpenDPGaussianCounts",
    "OpenDPNoisyMax",
    "OpenDPNoisyTopK",
    "OpenDPNoisyTopKZCDP",
    "audit_measurement",
    "measurement_mechanism",
    "opendp_version",
    "peeled_permute_and_flip_law",
]


class _OpenDPSelection(TopKMechanism):
    """Shared body: one OpenDP call per sample, the claim from OpenDP's privacy map.

    Subclasses are frozen dataclasses with the fields ``scale`` and ``monotonic``; this base
    is not a dataclass, so declaring them here adds no field (nor changes the field order).
    """

    scale: float
    monotonic: bool

    #: Outputs come from outside: check ids against the histogram, not only the structure.
    outcome_validation: ClassVar[str] = "strict"
    #: OpenDP draws from the OS's cryptographic generator, not from ``rng``: the auditor's
    #: same-seed replay check is skipped for it (its samples are independent, not replayable).
    seeded_by_rng: ClassVar[bool] = False
    #: One FFI call per sample (~70 µs): ship every chunk to the workers, and keep them small.
    parallel_min_chunk: ClassVar[int] = 1
    preferred_chunk: ClassVar[int] = 5_000
    ordered: ClassVar[bool] = True

    def _constructor(self) -> str:
        raise NotImplementedError

    def _k(self) -> int:
        raise NotImplementedError

    @property
    def measurement(self):
        """The OpenDP measurement (built once per process)."""
        return build_measurement(
            self._constructor(), self._k(), float(self.scale), bool(self.monotonic)
        )

    @property
    def claim(self) -> PrivacyClaim:
        """``(map(1), 0, relation)``: OpenDP's own privacy map at distance 1."""
        return PrivacyClaim(float(self.measurement.map(1)), 0.0, relation_of(self.monotonic))

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` calls of the measurement; ``rng`` is unused (OpenDP cannot be seeded)."""
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        return selection_batch(self.measurement, [int(c) for c in counts], size, self.width)


@dataclass(frozen=True)
class OpenDPNoisyTopK(_OpenDPSelection):
    """OpenDP's ``make_noisy_top_k`` with ``max_divergence``: the ``k`` best items in order.

    Law: ``k`` rounds of permute-and-flip with removal (module docstring;
    [`peeled_permute_and_flip_law`][dpaudit.integrations.opendp_laws.peeled_permute_and_flip_law]).
    Claim: OpenDP's map at ``d_in = 1``, ``k/scale`` with ``monotonic=True`` under
    [`AddRemoveUser`][mechanisms.AddRemoveUser], ``2k/scale`` with ``monotonic=False`` under
    ``BoundedChange(1)``. Not reproducible from ``rng`` (module docstring).

    Parameters
    ----------
    k : number of items released (>= 1).
    scale : OpenDP's noise scale (> 0).
    monotonic : ``LInfDistance(monotonic=...)``: the relation the claim is stated under.
    """

    k: int
    scale: float
    monotonic: bool = True

    def __post_init__(self):
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "scale", require_positive_float("scale", self.scale))
        object.__setattr__(self, "monotonic", require_bool("monotonic", self.monotonic))

    @property
    def width(self) -> int:
        return self.k

    def _constructor(self) -> str:
        return "make_noisy_top_k"

    def _k(self) -> int:
        return self.k

    def exact_law(self, counts) -> dict[tuple[int, ...], mpmath.mpf]:
        """The law our reading of OpenDP predicts ([`peeled_permute_and_flip_law`][dpaudit.integrations.opendp_laws.peeled_permute_and_flip_law])."""
        return peeled_permute_and_flip_law(counts, self.scale, self.k)

    def __str__(self) -> str:
        return (
            f"OpenDP make_noisy_top_k(k={self.k}, scale={self.scale:g}, monotonic={self.monotonic})"
        )


@dataclass(frozen=True)
class OpenDPNoisyMax(_OpenDPSelection):
    """OpenDP's ``make_noisy_max`` with ``max_divergence`` (or its deprecated alias): one item.

    Law: permute-and-flip, i.e. the argmax of ``counts + Exponential(scale)``
    (McKenna & Sheldon 2020, Alg. 1; seed 001_49698e97f2ea8cba.txt §7 ref. [27]),
    the law of [`mechanisms.PermuteAndFlip`][mechanisms.PermuteAndFlip] with the same scale (see
    [`reference`][dpaudit.integrations.opendp.OpenDPNoisyMax.reference]). Claim: OpenDP's map at
    ``d_in = 1``: ``1/scale`` (monotonic, AddRemoveUser) or ``2/scale`` (BoundedChange(1)).
    Not reproducible from ``rng`` (module docstring).

    Parameters
    ----------
    scale : OpenDP's noise scale (> 0).
    monotonic : ``LInfDistance(monotonic=...)``: the relation the claim is stated under.
    constructor : ``"make_noisy_max"`` or the deprecated ``"make_report_noisy_max_gumbel"``.
    """

    scale: float
    monotonic: bool = True
    constructor: str = "make_noisy_max"

    def __post_init__(self):
        object.__setattr__(self, "scale", require_positive_float("scale", self.scale))
        object.__setattr__(self, "monotonic", require_bool("monotonic", self.monotonic))
        if self.constructor not in NOISY_MAX_CONSTRUCTORS:
            raise ValueError(
                f"constructor must be one of {NOISY_MAX_CONSTRUCTORS}, got {self.constructor!r}"
            )

    @property
    def width(self) -> int:
        return 1

    def _constructor(self) -> str:
        return self.constructor

    def _k(self) -> int:
        return 1

    def reference(self) -> PermuteAndFlip:
        """Built-in mechanism of the same law: [`mechanisms.PermuteAndFlip`][mechanisms.PermuteAndFlip], same scale."""
        return PermuteAndFlip((1.0 if self.monotonic else 2.0) / self.scale, self.monotonic)

    def exact_law(self, counts) -> dict[tuple[int, ...], mpmath.mpf]:
        """The law this adapter's reading of OpenDP predicts: [`reference`][dpaudit.integrations.opendp.OpenDPNoisyMax.reference]'s exact law."""
        from dpaudit.exact import output_law

        return output_law(self.reference(), validate_counts(counts))

    def __str__(self) -> str:
        return f"OpenDP {self.constructor}(scale={self.scale:g}, monotonic={self.monotonic})"


@dataclass(frozen=True)
class OpenDPNoisyTopKZCDP(_OpenDPSelection):
    """OpenDP's ``make_noisy_top_k`` with ``zero_concentrated_divergence``: Gumbel noise.

    Law: the ``k`` largest of ``counts + Gumbel(scale)`` in order, the law of
    [`mechanisms.GumbelTopK`][mechanisms.GumbelTopK] ``(k, 1/scale)``
    ([`reference`][dpaudit.integrations.opendp.OpenDPNoisyTopKZCDP.reference]). Claim: ρ-zCDP with
    ρ = OpenDP's map at ``d_in = 1`` (``k/(8 scale²)`` monotonic, ``k/(2 scale²)`` not), as a curve
    ([`ProfileClaim`][mechanisms.ProfileClaim]) whose head point is read at ``delta``. Not
    reproducible from ``rng`` (module docstring).

    Parameters
    ----------
    k : number of items released (>= 1).
    scale : OpenDP's Gumbel scale (> 0).
    monotonic : ``LInfDistance(monotonic=...)``: AddRemoveUser (True) or BoundedChange(1).
    delta : δ of the claim's head (ε, δ) point, in (0, 1); the curve is the whole claim.
    """

    k: int
    scale: float
    monotonic: bool = True
    delta: float = 1e-6

    def __post_init__(self):
        object.__setattr__(self, "k", require_positive_int("k", self.k))
        object.__setattr__(self, "scale", require_positive_float("scale", self.scale))
        object.__setattr__(self, "monotonic", require_bool("monotonic", self.monotonic))
        object.__setattr__(self, "delta", require_probability("delta", self.delta))

    @property
    def width(self) -> int:
        return self.k

    def _constructor(self) -> str:
        return "make_noisy_top_k/zCDP"

    def _k(self) -> int:
        return self.k

    @property
    def claim(self) -> PrivacyClaim:
        """ρ = OpenDP's ``map(1)`` as a zCDP curve under the relation of ``monotonic``."""
        return zcdp_claim(self.measurement, 1, relation_of(self.monotonic), self.delta)

    def reference(self) -> GumbelTopK:
        """Built-in mechanism of the same law: [`mechanisms.GumbelTopK`][mechanisms.GumbelTopK] ``(k, 1/scale)``."""
        return GumbelTopK(self.k, 1.0 / self.scale)

    def __str__(self) -> str:
        return (
            f"OpenDP make_noisy_top_k(k={self.k}, scale={self.scale:g}, "
            f"monotonic={self.monotonic}, zCDP)"
        )


@dataclass(frozen=True)
class OpenDPGaussianCounts(TopKMechanism):
    """OpenDP's ``make_gaussian`` on the count vector: every count with discrete Gaussian noise.

    Releases the noisy counts of items ``0 .. d-1`` (values only; items past the end of
    a shorter histogram count 0, items past ``d`` are not released). A user touches at
    most ``max_items`` items and adds 1 to each, so the L2 distance is ``√max_items``;
    OpenDP's integer L2 metric takes integer distances, so ``max_items`` must be a
    perfect square. Claim: ρ = OpenDP's ``map(√max_items)`` under
    ``AddRemoveUser(max_items)``, as a zCDP curve headed at ``delta``.
    Not reproducible from ``rng`` (module docstring).

    Parameters
    ----------
    scale : σ of the discrete Gaussian (> 0).
    d : number of counts released (>= 1).
    max_items : Δ, items one user touches (a perfect square, default 1).
    delta : δ of the claim's head (ε, δ) point, in (0, 1).
    """

    #: Not seeded by ``rng`` (the module docstring): no same-seed replay check.
    seeded_by_rng: ClassVar[bool] = False

    scale: float
    d: int = 5
    max_items: int = 1
    delta: float = 1e-6

    outcome_validation: ClassVar[str] = "strict"
    parallel_min_chunk: ClassVar[int] = 1
    preferred_chunk: ClassVar[int] = 2_000
    ordered: ClassVar[bool] = True

    def __post_init__(self):
        object.__setattr__(self, "scale", require_positive_float("scale", self.scale))
        object.__setattr__(self, "d", require_positive_int("d", self.d))
        max_items = require_positive_int("max_items", self.max_items)
        if math.isqrt(max_items) ** 2 != max_items:
            raise ValueError(
                f"max_items must be a perfect square (OpenDP's integer L2 distance is "
                f"√max_items), got {self.max_items!r}"
            )
        object.__setattr__(self, "max_items", max_items)
        object.__setattr__(self, "delta", require_probability("delta", self.delta))

    @property
    def width(self) -> int:
        return 0

    @property
    def value_width(self) -> int:
        return self.d

    @property
    def measurement(self):
        """The OpenDP measurement (built once per process)."""
        return build_measurement("make_gaussian", 0, float(self.scale), False)

    @property
    def claim(self) -> PrivacyClaim:
        """ρ = OpenDP's ``map(√Δ)`` as a zCDP curve under ``AddRemoveUser(Δ)``."""
        return zcdp_claim(
            self.measurement, math.isqrt(self.max_items), AddRemoveUser(self.max_items), self.delta
        )

    def sample(self, counts, size: int, rng: np.random.Generator) -> MixedBatch:
        """``size`` calls of the measurement; ``rng`` is unused (OpenDP cannot be seeded)."""
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        scores = [int(c) for c in counts[: self.d]] + [0] * max(0, self.d - counts.size)
        measurement = self.measurement
        values = np.array([measurement(scores) for _ in range(size)], dtype=np.float64)
        return MixedBatch(np.zeros((size, 0), dtype=np.int64), values.reshape(size, self.d))

    def __str__(self) -> str:
        return (
            f"OpenDP make_gaussian(scale={self.scale:g}, d={self.d}, "
            f"max_items={self.max_items}, zCDP)"
        )
