"""Any OpenDP measurement audited by object: its input space read as a histogram.

[`measurement_mechanism`][dpaudit.integrations.opendp_measurement.measurement_mechanism] turns an
OpenDP ``Measurement`` into a dpaudit mechanism from the measurement's own public description
(``input_domain``, ``input_metric``, ``output_measure``, ``map``); nothing is typed in by hand.
[`audit_measurement`][dpaudit.integrations.opendp_measurement.audit_measurement] audits it.
Three readings of the input space (``Δ``: the items one user touches, the relation's
``max_items``):

| input domain | input metric | histogram | ``d_in`` per relation |
| --- | --- | --- | --- |
| vector of numbers (the counts) | ``linf_distance`` (``monotonic``) | the vector | 1 (add/remove, substitute); ``m`` (bounded change ``m``) |
| vector of numbers | ``l1_distance`` / ``l2_distance`` | the vector | ``Δ`` / ``√Δ`` (add/remove), ``2Δ`` / ``√(2Δ)`` (substitute) |
| vector of records | ``symmetric_distance`` / ``insert_delete_distance`` | multiplicities of ``records`` | ``Δ`` (add/remove), ``2Δ`` (substitute) |
| vector of records | ``change_one_distance`` | multiplicities of ``records`` | ``Δ`` (substitute) |
| map key → count | ``l01inf_distance`` / ``l02inf_distance`` | counts of the keys ``records`` | ``(Δ, Δ, 1)`` / ``(Δ, √Δ, 1)`` (add/remove), twice ``Δ`` (substitute) |

Default relation: ``AddRemoveUser()`` for a monotonic L∞ metric, ``BoundedChange(1)`` for a
non-monotonic one (as [`OpenDPNoisyMax`][dpaudit.integrations.opendp.OpenDPNoisyMax] reads them),
``Substitute(1)`` for ``change_one_distance``, ``AddRemoveUser(1)`` otherwise. A record dataset is
the records of the items in item order, ``counts[i]`` copies of ``records[i]``; a map holds the
keys of the non-zero counts. Records are enumerated only for a finite record domain (``bool``,
integers with bounds spanning at most ``MAX_ENUMERATED``); otherwise the caller names them.

The claim is the map at that ``d_in``, in the measurement's own measure: ``ε`` for
``max_divergence``; ``(ε, δ)`` for ``approximate(max_divergence)``; ρ for
``zero_concentrated_divergence``, a ρ-zCDP curve
([`zcdp_claim`][dpaudit.integrations.opendp_measurement.zcdp_claim]); for
``smoothed_max_divergence`` the curve's points at ``δ = delta · 10^j`` (``|j| <= 3``,
[`mechanisms.profiles.ProfilePoints`][mechanisms.profiles.ProfilePoints]); for
``approximate(zero_concentrated_divergence)``, whose map is ``(ρ, δ₀)``, the points
``(ε_ρ(δ), δ₀ + δ)`` at the same ``δ``. The head point is at ``delta`` (``δ₀ + delta``).

Outputs: an int or a vector of ints are item ids when the input is a count vector under L∞ (the
space of OpenDP's selections, ``make_noisy_max`` and ``make_noisy_top_k``), numbers otherwise; a
vector of numbers is values ([`mechanisms.MixedBatch`][mechanisms.MixedBatch],
``value_width``); a dict key → number is the released keys as items (ascending) with their values
in the same slots (NaN at PAD). ``output=`` overrides the guess. Anything else is refused.

OpenDP cannot be seeded (module docstring of [`dpaudit.integrations.opendp`][dpaudit.integrations.opendp]):
audits are valid, not reproducible bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import version
from typing import ClassVar

import numpy as np
import opendp.prelude as dp
from opendp.mod import GLOBAL_FEATURES, Measurement

from dpaudit.auditor.run.runner import audit
from mechanisms import MixedBatch, PrivacyClaim, TopKMechanism
from mechanisms.base import check_rng, check_size
from mechanisms.claims import RELATIONS, NeighbourRelation
from mechanisms.histogram import validate_counts
from mechanisms.validation import require_choice, require_positive_int, require_probability

from .opendp_claim import CURVE_STEPS, read_claim, zcdp_claim  # noqa: F401
from .opendp_input import (  # noqa: F401
    DEFAULT_DOMAIN,
    FLOAT_TYPES,
    INTEGER_TYPES,
    MAX_ENUMERATED,
    HistogramReading,
    NoHistogramReading,
    read_input,
)
from .opendp_output import OUTPUTS, ReleaseEncoding, read_output

__all__ = [
    "MAX_ENUMERATED",
    "HistogramReading",
    "NoHistogramReading",
    "OpenDPMeasurement",
    "ReleaseEncoding",
    "audit_measurement",
    "measurement_mechanism",
    "read_claim",
    "read_input",
    "read_output",
    "zcdp_claim",
]


def _rebuild(text: str, features: list[str], *fields):
    """A pickled adapter rebuilt in another process (its features enabled again there)."""
    dp.enable_features(*features)
    return OpenDPMeasurement(dp.deserialize(text), *fields)


@dataclass(frozen=True)
class OpenDPMeasurement(TopKMechanism):
    """An OpenDP measurement as a dpaudit mechanism: input, claim and output read from it.

    The reading (module docstring) is done at construction, so a measurement with no histogram
    reading is refused there with the reason and the fix. One OpenDP call per sample; ``rng``
    is type-checked but unused (OpenDP cannot be seeded). Pickles (for ``workers > 1``) when
    ``dp.serialize`` can encode the measurement, else sampling stays in one process.

    Parameters
    ----------
    measurement : an OpenDP ``Measurement``.
    neighbours : the relation the claim is read for (default: the metric's, module docstring).
    delta : δ of a curve claim's head point (zCDP, smoothed; added to the map's own δ₀ for
        approximate zCDP), in (0, 1).
    records : the record (vector of records) or key (map) each item stands for.
    domain_size : items of a histogram when the domain does not fix them (default 5).
    output : ``"auto"``, ``"items"``, ``"values"`` or ``"keys"`` (module docstring).
    """

    measurement: Measurement = field(hash=False)  # OpenDP objects do not hash
    neighbours: NeighbourRelation | None = None
    delta: float = 1e-6
    records: tuple | None = None
    domain_size: int | None = None
    output: str = "auto"

    seeded_by_rng: ClassVar[bool] = False
    parallel_min_chunk: ClassVar[int] = 1
    preferred_chunk: ClassVar[int] = 2_000

    def __post_init__(self):
        if not isinstance(self.measurement, Measurement):
            raise ValueError(
                "measurement must be an OpenDP Measurement (dp.m.make_..., or a chain ending "
                f"in one), got {type(self.measurement).__name__}"
            )
        if self.neighbours is not None and not isinstance(self.neighbours, RELATIONS):
            raise ValueError(
                "neighbours must be AddRemoveUser, BoundedChange or Substitute, "
                f"got {self.neighbours!r}"
            )
        object.__setattr__(self, "delta", require_probability("delta", self.delta))
        if self.records is not None:
            object.__setattr__(self, "records", tuple(self.records))
        if self.domain_size is not None:
            require_positive_int("domain_size", self.domain_size)
        require_choice("output", self.output, OUTPUTS)
        _ = self.claim, self.encoding  # read now: a measurement with no reading is refused here

    @cached_property
    def reading(self) -> HistogramReading:
        """The input space read as a histogram ([`read_input`][dpaudit.integrations.opendp_measurement.read_input])."""
        return read_input(self.measurement, self.neighbours, self.records, self.domain_size)

    @cached_property
    def encoding(self) -> ReleaseEncoding:
        """How the releases are read ([`read_output`][dpaudit.integrations.opendp_measurement.read_output])."""
        return read_output(self.measurement, self.reading, self.output)

    @cached_property
    def claim(self) -> PrivacyClaim:
        """The privacy map at the reading's ``d_in`` ([`read_claim`][dpaudit.integrations.opendp_measurement.read_claim])."""
        return read_claim(self.measurement, self.reading, self.delta)

    @property
    def width(self) -> int:
        return self.encoding.width

    @property
    def ordered(self) -> bool:  # type: ignore[override]
        """Item ids in release order, except released keys (ascending sets)."""
        return self.encoding.kind != "keys"

    @property
    def outcome_validation(self) -> str:
        """``"strict"`` (ids checked against the histogram), ``"transcript"`` for several ids.

        A release of several ids may be a composition's answers concatenated (ids repeat, as
        in a session transcript); ids are still checked against the histogram when encoded.
        """
        multiple = self.encoding.kind == "items" and self.encoding.width > 1
        return "transcript" if multiple else "strict"

    @property
    def value_width(self) -> int:
        return self.encoding.value_width

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray | MixedBatch:
        """``size`` calls of the measurement; ``rng`` is unused (OpenDP cannot be seeded)."""
        counts = validate_counts(counts)
        size, rng = check_size(size), check_rng(rng)
        data = self.reading.data(counts)
        measurement = self.measurement
        # The loop is the edge of the library: one public call per release.
        return self.encoding.encode([measurement(data) for _ in range(size)], self.reading)

    def __reduce__(self):
        try:
            text = dp.serialize(self.measurement)
        except Exception as error:  # OpenDP raises a bare Exception for what it cannot encode
            raise TypeError(f"the OpenDP measurement does not serialize: {error}") from None
        fields = (self.neighbours, self.delta, self.records, self.domain_size, self.output)
        return (_rebuild, (text, sorted(GLOBAL_FEATURES), *fields))

    def __str__(self) -> str:
        measurement = self.measurement
        return (
            f"OpenDP measurement ({measurement.input_domain!r}, {measurement.input_metric!r} "
            f"-> {measurement.output_measure!r}) at d_in={self.reading.d_in!r}"
        )


def measurement_mechanism(
    measurement,
    *,
    neighbours: NeighbourRelation | None = None,
    delta: float = 1e-6,
    records: Sequence | None = None,
    domain_size: int | None = None,
    output: str = "auto",
) -> OpenDPMeasurement:
    """``measurement`` as an auditable mechanism ([`OpenDPMeasurement`][dpaudit.integrations.opendp_measurement.OpenDPMeasurement]).

    Raises [`NoHistogramReading`][dpaudit.integrations.opendp_measurement.NoHistogramReading]
    (a ``ValueError``) naming the argument and the fix when the input space, the measure or
    the output has no reading as a histogram mechanism (module docstring).
    """
    return OpenDPMeasurement(
        measurement,
        neighbours,
        delta,
        None if records is None else tuple(records),
        domain_size,
        output,
    )


def _evidence(mechanism: OpenDPMeasurement) -> dict:
    measurement = mechanism.measurement
    try:
        serialized = dp.serialize(measurement)
    except Exception:  # not every measurement serializes (chains of partial constructors)
        serialized = None
    d_in = mechanism.reading.d_in
    return {
        "version": version("opendp"),
        "measurement": repr(measurement),
        "reading": mechanism.reading.kind,
        "d_in": list(d_in) if isinstance(d_in, tuple) else d_in,
        "output": mechanism.encoding.kind,
        "serialized": serialized,
    }


def audit_measurement(
    measurement,
    *,
    counts=None,
    pairs=None,
    neighbours: NeighbourRelation | None = None,
    delta: float = 1e-6,
    records: Sequence | None = None,
    domain_size: int | None = None,
    output: str = "auto",
    **audit_options,
):
    """Audit an OpenDP measurement by object; return the [`AuditResult`][dpaudit.auditor.results.result.AuditResult].

    The mechanism is [`measurement_mechanism`][dpaudit.integrations.opendp_measurement.measurement_mechanism]
    (``neighbours``, ``delta``, ``records``, ``domain_size``, ``output``); the audit is
    [`dpaudit.audit`][dpaudit.auditor.run.runner.audit] with ``counts``, ``pairs`` and
    ``audit_options`` (``samples``, ``alpha``, ``claim``, ...), on histograms of the
    measurement's ``domain_size`` items (the length of ``counts`` or of the first pair by
    default), under ``neighbours`` (the relation the claim is read for), with the
    measurement's description in ``evidence["opendp"]``.
    """
    if domain_size is None and records is None:
        given = counts if counts is not None else pairs[0][0] if pairs else None
        domain_size = None if given is None else len(given)
    mechanism = measurement_mechanism(
        measurement,
        neighbours=neighbours,
        delta=delta,
        records=records,
        domain_size=domain_size,
        output=output,
    )
    evidence = {"opendp": _evidence(mechanism), **(audit_options.pop("evidence", None) or {})}
    return audit(
        mechanism,
        counts=counts,
        pairs=pairs,
        domain_size=mechanism.reading.domain_size,
        evidence=evidence,
        **audit_options,
    )
