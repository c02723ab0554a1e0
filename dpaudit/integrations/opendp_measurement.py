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

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import version
from typing import ClassVar

import numpy as np
import opendp.prelude as dp
from opendp.mod import GLOBAL_FEATURES, AtomDomain, Measurement, OpenDPException, VectorDomain

from dpaudit.auditor.run.runner import audit
from mechanisms import (
    PAD,
    AddRemoveUser,
    BoundedChange,
    MixedBatch,
    PrivacyClaim,
    Substitute,
    TopKMechanism,
)
from mechanisms.base import check_rng, check_size
from mechanisms.claims import RELATIONS, NeighbourRelation
from mechanisms.histogram import validate_counts
from mechanisms.profiles import ProfilePoints, ZeroConcentratedDP
from mechanisms.validation import require_choice, require_positive_int, require_probability

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

#: Items of the default histograms when the measurement does not fix them (the auditor's default).
DEFAULT_DOMAIN = 5
#: Largest record domain enumerated without ``records=`` (bounded integers).
MAX_ENUMERATED = 64
#: How the outputs may be read (``"auto"``: guessed from one release; module docstring).
OUTPUTS = ("auto", "items", "values", "keys")
INTEGER_TYPES = frozenset(
    f"{sign}{bits}" for sign in "iu" for bits in ("8", "16", "32", "64", "128", "size")
)
FLOAT_TYPES = frozenset({"f32", "f64"})
#: Steps of the δ grid a curve is sampled at, around the head δ (``delta · 10^j``).
CURVE_STEPS = range(-3, 4)


class NoHistogramReading(ValueError):
    """The measurement's input space, measure or output has no reading as a histogram mechanism."""


def zcdp_claim(measurement, d_in, relation, delta: float) -> PrivacyClaim:
    """OpenDP's ρ = ``map(d_in)`` as a zCDP curve, headed by its point at ``delta``."""
    profile = ZeroConcentratedDP(float(measurement.map(d_in)))
    return PrivacyClaim.from_profile(profile, relation, delta=delta)


def _refuse(what: str, fix: str) -> NoHistogramReading:
    return NoHistogramReading(f"{what}; {fix}")


# --- the input space ------------------------------------------------------------------


@dataclass(frozen=True)
class HistogramReading:
    """How a histogram becomes the measurement's input, and the ``d_in`` of one neighbour step.

    Parameters
    ----------
    kind : ``"counts"`` (the vector), ``"dataset"`` (records) or ``"partitions"`` (a map).
    metric : the metric's name (``"LInfDistance"``, ``"SymmetricDistance"``, ...).
    relation : the neighbour relation the claim is read for.
    d_in : the input distance of one step of ``relation`` under the metric.
    domain_size : items of a histogram (shorter ones are padded with zeros).
    records : the record (dataset) or key (partitions) item ``i`` stands for.
    real : counts are passed as floats (the domain's numbers are floats).
    """

    kind: str
    metric: str
    relation: NeighbourRelation
    d_in: object
    domain_size: int
    records: tuple | None = None
    real: bool = False

    def data(self, counts: np.ndarray):
        """The measurement's input for ``counts`` (at most ``domain_size`` items)."""
        if counts.size > self.domain_size:
            d = self.domain_size
            raise ValueError(
                f"counts has {counts.size} items, more than the {d} the measurement reads "
                f"(its size, records or domain_size); audit histograms of {d} items "
                f"(domain_size={d}, or --domain-size {d})"
            )
        number = float if self.real else int
        values = [number(c) for c in counts] + [number(0)] * (self.domain_size - counts.size)
        if self.kind == "counts":
            return values
        assert self.records is not None  # set for both other readings by read_input
        if self.kind == "dataset":
            return [r for r, c in zip(self.records, counts) for _ in range(int(c))]
        return {key: value for key, value in zip(self.records, values) if value}


def _carrier(domain) -> str:
    return str(domain.carrier_type)


def _metric_name(metric) -> str:
    origin = getattr(metric.type, "origin", None)
    return str(origin if origin is not None else metric.type).rsplit("::", 1)[-1]


def _default_relation(metric: str, monotonic: bool) -> NeighbourRelation:
    if metric == "LInfDistance":
        return AddRemoveUser() if monotonic else BoundedChange(1)
    if metric == "ChangeOneDistance":
        return Substitute(1)
    return AddRemoveUser(1)


def _items_of(relation: NeighbourRelation, metric: str) -> int:
    """``Δ`` of ``relation`` (``2Δ`` for a substitution), refused when unbounded."""
    if isinstance(relation, BoundedChange):
        raise _refuse(
            f"{relation} moves every count at once: no bounded {metric} distance",
            "give neighbours=AddRemoveUser(Δ) or Substitute(Δ)",
        )
    if relation.max_items is None:
        raise _refuse(
            f"{relation} touches any number of items: no bounded {metric} distance",
            f"give neighbours={type(relation).__name__}(Δ) with Δ items per user",
        )
    return relation.max_items * (2 if isinstance(relation, Substitute) else 1)


def _root(items: int, real: bool, metric: str):
    """``√items`` as the metric's distance type, rounded up (an integer one must be exact)."""
    if real:
        root_up = math.sqrt(items)
        return root_up if root_up * root_up >= items else math.nextafter(root_up, math.inf)
    root = math.isqrt(items)
    if root * root != items:
        raise _refuse(
            f"one neighbour step moves the counts by an L2 distance of √{items}, which the "
            f"integer {metric} cannot state",
            "give neighbours with a perfect square of items, or build the measurement on a "
            "float L2 distance (T=float)",
        )
    return root


def _counts_reading(measurement, relation, domain_size) -> HistogramReading:
    domain, metric = measurement.input_domain, measurement.input_metric
    name, kind = _metric_name(metric), str(metric.distance_type)
    real = _carrier(domain.element_domain) in FLOAT_TYPES
    distance = float if kind in FLOAT_TYPES else int
    monotonic = name == "LInfDistance" and metric == dp.linf_distance(T=kind, monotonic=True)
    relation = relation if relation is not None else _default_relation(name, monotonic)
    if name == "LInfDistance":
        if isinstance(relation, AddRemoveUser):
            d_in = distance(1)
        elif monotonic:
            raise _refuse(
                f"a monotonic L∞ distance is infinite for {relation} (counts move both ways)",
                "audit it under neighbours=AddRemoveUser(), or build the measurement with "
                "monotonic=False",
            )
        else:
            d_in = distance(relation.max_change if isinstance(relation, BoundedChange) else 1)
    elif name == "L1Distance":
        d_in = distance(_items_of(relation, name))
    else:  # L2Distance (read_input sends only these three here)
        d_in = _root(_items_of(relation, name), distance is float, name)
    size = domain.size
    if size is not None and domain_size is not None and domain_size != size:
        raise _refuse(
            f"histograms of {domain_size} items (domain_size, or the length of counts) but "
            f"the input domain holds vectors of {size} counts",
            f"give histograms of {size} items",
        )
    return HistogramReading(
        "counts", name, relation, d_in, size or domain_size or DEFAULT_DOMAIN, real=real
    )


def _enumerated(element) -> tuple:
    """Every record of a finite record domain (``bool``, integers with narrow bounds)."""
    kind = _carrier(element)
    if kind == "bool":
        return (False, True)
    bounds = None
    if kind in INTEGER_TYPES:
        try:
            bounds = element.bounds
        except OpenDPException:
            bounds = None
    if bounds is None or bounds[1] - bounds[0] + 1 > MAX_ENUMERATED:
        what = "float" if kind in FLOAT_TYPES else "unbounded" if bounds is None else "large"
        raise _refuse(
            f"the input domain holds {what} records ({element!r}): a histogram needs a "
            "finite record domain to enumerate",
            "pass records=[...] (the record each item stands for), or bound the domain "
            f"(at most {MAX_ENUMERATED} integers)",
        )
    return tuple(range(int(bounds[0]), int(bounds[1]) + 1))


def _records(element, records, domain_size) -> tuple:
    """The records item ``i`` stands for: given, or enumerated from a finite record domain."""
    if records is None:
        found = _enumerated(element)
    else:
        found = tuple(records)
        if not found or len(set(found)) != len(found):
            raise ValueError(f"records must be distinct values, at least one, got {records!r}")
        strangers = [r for r in found if not _member(element, r)]
        if strangers:
            raise ValueError(f"records {strangers[:3]!r} are not members of the domain {element!r}")
    if domain_size is not None and domain_size != len(found):
        raise ValueError(
            f"histograms of {domain_size} items (domain_size, or the length of counts) but "
            f"{len(found)} records: make them agree"
        )
    return found


def _member(domain, value) -> bool:
    try:
        return bool(domain.member(value))
    except OpenDPException:
        return False


def _dataset_reading(measurement, relation, records, domain_size) -> HistogramReading:
    domain, metric = measurement.input_domain, measurement.input_metric
    name = _metric_name(metric)
    if domain.size is not None:
        raise _refuse(
            f"the input domain fixes the dataset size at {domain.size} records, but dpaudit's "
            "neighbouring histograms vary in total",
            "build the measurement on a vector domain without size",
        )
    relation = relation if relation is not None else _default_relation(name, False)
    if name in ("SymmetricDistance", "InsertDeleteDistance"):
        d_in = _items_of(relation, name)
    elif name == "ChangeOneDistance":
        if not isinstance(relation, Substitute):
            raise _refuse(
                f"change_one_distance is infinite for {relation} (datasets of different sizes)",
                "audit it under neighbours=Substitute(Δ), or build it on dp.symmetric_distance()",
            )
        d_in = _items_of(relation, name) // 2
    else:
        raise _refuse(
            f"input_metric {metric!r} on a vector has no histogram reading",
            "use dp.symmetric_distance(), dp.insert_delete_distance() or "
            "dp.change_one_distance() (records), or dp.l1_distance, dp.l2_distance or "
            "dp.linf_distance (counts)",
        )
    found = _records(domain.element_domain, records, domain_size)
    return HistogramReading("dataset", name, relation, d_in, len(found), found)


def _map_types(domain) -> tuple[str, str] | None:
    carrier = _carrier(domain)
    if not (carrier.startswith("HashMap<") and carrier.endswith(">")):
        return None
    key, _, value = carrier[len("HashMap<") : -1].partition(", ")
    values = [dp.atom_domain(T=value)]
    if value in FLOAT_TYPES:
        values.append(dp.atom_domain(T=value, nan=False))
    expected = (dp.map_domain(dp.atom_domain(T=key), v) for v in values)
    return (key, value) if any(domain == e for e in expected) else None


def _partitions_reading(measurement, relation, records, domain_size) -> HistogramReading:
    domain, metric = measurement.input_domain, measurement.input_metric
    types = _map_types(domain)
    name = _metric_name(metric)
    if types is None or types[1] not in INTEGER_TYPES | FLOAT_TYPES:
        raise _refuse(
            f"input_domain {domain!r} is not a map of unbounded keys to counts",
            "use dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))",
        )
    key, value = types
    real = value in FLOAT_TYPES
    relation = relation if relation is not None else AddRemoveUser(1)
    if name not in ("L01InfDistance", "L02InfDistance"):
        raise _refuse(
            f"input_metric {metric!r} on a map of counts has no histogram reading",
            "use dp.l01inf_distance or dp.l02inf_distance",
        )
    items = _items_of(relation, name)
    # the distance type is (u32, T, T), T that of the inner absolute distance
    distance = float if str(metric.distance_type).endswith(("f32)", "f64)")) else int
    norm = _root(items, distance is float, name) if name == "L02InfDistance" else distance(items)
    d_in = (items, norm, distance(1))
    if records is None:
        d = domain_size or DEFAULT_DOMAIN
        if key == "String":
            records = tuple(str(i) for i in range(d))
        elif key in INTEGER_TYPES:
            records = tuple(range(d))
        else:
            raise _refuse(
                f"keys of type {key} cannot be numbered",
                "pass records=[...] (the key of each item)",
            )
    found = _records(dp.atom_domain(T=key), records, domain_size)
    return HistogramReading("partitions", name, relation, d_in, len(found), found, real)


def read_input(measurement, neighbours=None, records=None, domain_size=None) -> HistogramReading:
    """The histogram reading of ``measurement``'s input space (module docstring's table).

    Raises [`NoHistogramReading`][dpaudit.integrations.opendp_measurement.NoHistogramReading]
    with the reason and the fix when there is none.
    """
    domain = measurement.input_domain
    if isinstance(domain, VectorDomain):
        element = domain.element_domain
        kind = _carrier(element)
        if _metric_name(measurement.input_metric) in ("L1Distance", "L2Distance", "LInfDistance"):
            if kind not in INTEGER_TYPES | FLOAT_TYPES:
                raise _refuse(
                    f"input_domain {domain!r} holds {kind}, not counts",
                    "build the measurement on a vector of numbers",
                )
            if records is not None:
                raise ValueError("records= names records or keys; this input is a count vector")
            return _counts_reading(measurement, neighbours, domain_size)
        if not isinstance(element, AtomDomain):
            raise _refuse(
                f"input_domain {domain!r} holds {element!r}, not plain records",
                "build the measurement on dp.vector_domain(dp.atom_domain(...))",
            )
        return _dataset_reading(measurement, neighbours, records, domain_size)
    if _carrier(domain).startswith("HashMap<"):
        return _partitions_reading(measurement, neighbours, records, domain_size)
    raise _refuse(
        f"input_domain {domain!r} is neither a vector (of counts or records) nor a map of counts",
        "build the measurement on a count vector, a record vector or a map key -> count",
    )


# --- the claim ----------------------------------------------------------------------------


def _curve_points(epsilon_at, delta: float, shift: float = 0.0) -> ProfilePoints:
    """``(ε(δ'), shift + δ')`` for ``δ' = delta · 10^j``, ε ascending (curve's points).

    The point at ``delta`` itself must exist; one the curve cannot give further out is left out.
    """
    points: dict[float, float] = {}
    for step in CURVE_STEPS:
        at = delta * 10.0**step
        if not (at > 0 and shift + at < 1):
            continue
        try:
            epsilon = float(epsilon_at(at))
        except OpenDPException:
            if step == 0:
                raise
            continue
        if math.isfinite(epsilon):
            points[epsilon] = min(points.get(epsilon, 1.0), shift + at)
    return ProfilePoints(tuple(sorted(points.items())))


def read_claim(measurement, reading: HistogramReading, delta: float) -> PrivacyClaim:
    """The measurement's privacy map at ``reading.d_in``, in its own measure (module docstring)."""
    measure, relation = measurement.output_measure, reading.relation
    try:
        if measure == dp.max_divergence():
            return PrivacyClaim(float(measurement.map(reading.d_in)), 0.0, relation)
        if measure == dp.zero_concentrated_divergence():
            return zcdp_claim(measurement, reading.d_in, relation, delta)
        if measure == dp.approximate(dp.max_divergence()):
            epsilon, spent = measurement.map(reading.d_in)
            return PrivacyClaim(float(epsilon), float(spent), relation)
        if measure == dp.approximate(dp.zero_concentrated_divergence()):
            rho, spent = measurement.map(reading.d_in)
            curve = _curve_points(ZeroConcentratedDP(float(rho)).epsilon_at, delta, float(spent))
            return PrivacyClaim.from_profile(curve, relation, delta=float(spent) + delta)
        if measure == dp.smoothed_max_divergence():
            profile = measurement.map(reading.d_in)
            return PrivacyClaim.from_profile(
                _curve_points(profile.epsilon, delta), relation, delta=delta
            )
    except OpenDPException as error:
        raise _refuse(
            f"the privacy map failed at d_in={reading.d_in!r} ({error.variant}: "
            f"{str(error.message).strip()})",
            "check the measurement's own map at that distance",
        ) from None
    raise _refuse(
        f"output_measure {measure!r} has no (ε, δ) reading here",
        "cast it to max_divergence, approximate(max_divergence), zero_concentrated_divergence "
        "or smoothed_max_divergence (dp.c.make_zCDP_to_approxDP, dp.c.make_fix_delta, ...)",
    )


# --- the output ---------------------------------------------------------------------------


def _leaves(release, where: str = "release") -> list:
    """The numbers of a release (nested lists flattened), refused when not numbers."""
    if isinstance(release, (list, tuple)):
        return [leaf for i, part in enumerate(release) for leaf in _leaves(part, f"{where}[{i}]")]
    if isinstance(release, numbers.Real):
        return [release]
    raise _refuse(
        f"{where} is a {type(release).__name__}: dpaudit reads item ids, numbers and "
        "dicts of key -> number",
        "post-process the release into those (measurement >> a function)",
    )


def _number(value) -> float:
    leaves = _leaves(value)
    if len(leaves) != 1:
        raise ValueError(f"a released key carries {value!r}, not one number")
    return float(leaves[0])


@dataclass(frozen=True)
class ReleaseEncoding:
    """How releases become outcomes: item ids, values, or released keys with their values.

    Parameters
    ----------
    kind : ``"items"``, ``"values"`` or ``"keys"``.
    width : item slots of an outcome.
    value_width : value slots of an outcome.
    """

    kind: str
    width: int
    value_width: int

    def encode(self, releases: list, reading: HistogramReading) -> np.ndarray | MixedBatch:
        """The batch of ``releases`` (an int64 array for items, else a MixedBatch)."""
        size = len(releases)
        if self.kind == "items":
            out = np.full((size, self.width), PAD, dtype=np.int64)
            for row, release in enumerate(releases):
                ids = _leaves(release)
                if len(ids) > self.width or not all(
                    isinstance(i, int) and 0 <= i < reading.domain_size for i in ids
                ):
                    raise ValueError(
                        f"release {release!r} is not at most {self.width} item ids in "
                        f"0..{reading.domain_size - 1}; pass output='values' to read numbers"
                    )
                out[row, : len(ids)] = ids
            return out
        if self.kind == "values":
            values = np.empty((size, self.value_width), dtype=np.float64)
            for row, release in enumerate(releases):
                leaves = _leaves(release)
                if len(leaves) != self.value_width:
                    raise ValueError(
                        f"release {release!r} holds {len(leaves)} numbers, not the "
                        f"{self.value_width} of the first release"
                    )
                values[row] = leaves
            return MixedBatch(np.zeros((size, 0), dtype=np.int64), values)
        items = np.full((size, self.width), PAD, dtype=np.int64)
        values = np.full((size, self.value_width), np.nan)
        index = {key: i for i, key in enumerate(reading.records or ())}
        for row, release in enumerate(releases):
            if not isinstance(release, dict) or not set(release) <= set(index):
                raise ValueError(f"release {release!r} is not a dict of known keys to numbers")
            found = sorted((index[key], _number(v)) for key, v in release.items())
            for slot, (item, value) in enumerate(found):
                items[row, slot], values[row, slot] = item, value
        return MixedBatch(items, values)


def read_output(measurement, reading: HistogramReading, output: str = "auto") -> ReleaseEncoding:
    """The encoding of ``measurement``'s releases, from one release on a probe histogram.

    ``output="auto"``: a dict is keys; ints are item ids on a count vector under L∞, numbers
    otherwise; floats are values (module docstring). The probe counts ``d, d-1, ..., 1``.
    """
    output = require_choice("output", output, OUTPUTS)
    d = reading.domain_size
    release = measurement(reading.data(np.arange(d, 0, -1)))
    if isinstance(release, dict) or output == "keys":
        if not isinstance(release, dict) or reading.kind != "partitions":
            raise _refuse(
                f"output='keys' needs a map input and a dict release, got {type(release).__name__}",
                "pass output='items' or 'values'",
            )
        if output not in ("auto", "keys"):
            raise _refuse(f"the release is a dict, not {output}", "pass output='keys'")
        return ReleaseEncoding("keys", d, d)
    leaves = _leaves(release)
    if not leaves:
        raise _refuse(f"the release {release!r} holds no number", "release ids or numbers")
    ids = all(isinstance(v, int) and not isinstance(v, bool) for v in leaves)
    if output == "auto":
        selection = reading.kind == "counts" and reading.metric == "LInfDistance"
        output = "items" if ids and selection else "values"
    if output == "items":
        if not ids:
            raise _refuse(
                f"output='items' but the release {release!r} holds non-integers",
                "pass output='values'",
            )
        return ReleaseEncoding("items", len(leaves), 0)
    return ReleaseEncoding("values", 0, len(leaves))


# --- the mechanism -------------------------------------------------------------------------


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
