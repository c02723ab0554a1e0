"""An OpenDP measurement's input space read as a histogram: the data a histogram becomes, and ``d_in``.

Three readings (the table of [`dpaudit.integrations.opendp_measurement`][dpaudit.integrations.opendp_measurement]):
a vector of counts, a vector of records (the multiplicities of ``records``), a map of keys to
counts. ``read_input`` picks the one the measurement's ``input_domain`` and ``input_metric``
allow, with the neighbour relation's ``d_in``, or refuses with the reason and the fix
(``NoHistogramReading``, which the claim and output readings raise too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import opendp.prelude as dp
from opendp.mod import AtomDomain, OpenDPException, VectorDomain

from mechanisms import AddRemoveUser, BoundedChange, Substitute
from mechanisms.claims import NeighbourRelation

__all__ = ["MAX_ENUMERATED", "HistogramReading", "NoHistogramReading", "read_input", "refuse"]

#: Items of the default histograms when the measurement does not fix them (the auditor's default).
DEFAULT_DOMAIN = 5
#: Largest record domain enumerated without ``records=`` (bounded integers).
MAX_ENUMERATED = 64
INTEGER_TYPES = frozenset(
    f"{sign}{bits}" for sign in "iu" for bits in ("8", "16", "32", "64", "128", "size")
)
FLOAT_TYPES = frozenset({"f32", "f64"})


class NoHistogramReading(ValueError):
    """The measurement's input space, measure or output has no reading as a histogram mechanism."""


def refuse(what: str, fix: str) -> NoHistogramReading:
    return NoHistogramReading(f"{what}; {fix}")


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
        raise refuse(
            f"{relation} moves every count at once: no bounded {metric} distance",
            "give neighbours=AddRemoveUser(Δ) or Substitute(Δ)",
        )
    if relation.max_items is None:
        raise refuse(
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
        raise refuse(
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
            raise refuse(
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
        raise refuse(
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
        raise refuse(
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
        raise refuse(
            f"the input domain fixes the dataset size at {domain.size} records, but dpaudit's "
            "neighbouring histograms vary in total",
            "build the measurement on a vector domain without size",
        )
    relation = relation if relation is not None else _default_relation(name, False)
    if name in ("SymmetricDistance", "InsertDeleteDistance"):
        d_in = _items_of(relation, name)
    elif name == "ChangeOneDistance":
        if not isinstance(relation, Substitute):
            raise refuse(
                f"change_one_distance is infinite for {relation} (datasets of different sizes)",
                "audit it under neighbours=Substitute(Δ), or build it on dp.symmetric_distance()",
            )
        d_in = _items_of(relation, name) // 2
    else:
        raise refuse(
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
        raise refuse(
            f"input_domain {domain!r} is not a map of unbounded keys to counts",
            "use dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))",
        )
    key, value = types
    real = value in FLOAT_TYPES
    relation = relation if relation is not None else AddRemoveUser(1)
    if name not in ("L01InfDistance", "L02InfDistance"):
        raise refuse(
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
            raise refuse(
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
                raise refuse(
                    f"input_domain {domain!r} holds {kind}, not counts",
                    "build the measurement on a vector of numbers",
                )
            if records is not None:
                raise ValueError("records= names records or keys; this input is a count vector")
            return _counts_reading(measurement, neighbours, domain_size)
        if not isinstance(element, AtomDomain):
            raise refuse(
                f"input_domain {domain!r} holds {element!r}, not plain records",
                "build the measurement on dp.vector_domain(dp.atom_domain(...))",
            )
        return _dataset_reading(measurement, neighbours, records, domain_size)
    if _carrier(domain).startswith("HashMap<"):
        return _partitions_reading(measurement, neighbours, records, domain_size)
    raise refuse(
        f"input_domain {domain!r} is neither a vector (of counts or records) nor a map of counts",
        "build the measurement on a count vector, a record vector or a map key -> count",
    )
