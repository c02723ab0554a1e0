"""Write a certificate, read it back, and recheck it: every leaf bound re-derived, the cover checked.

The check trusts nothing in the file but the family it names: it enumerates the shapes of the
model itself ([`enumerate_shapes`][dpaudit.exact.certify.cover.enumerate_shapes]), confirms
that the leaves of each shape cover its whole gap box ``[2, ∞]^free`` (integer points), recomputes
each leaf's bound from the shape and box alone and refuses a leaf whose stated bound is below it,
and, given the mechanism, recomputes the pair of the lower end with ``dpaudit.exact.output_law``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np

from mechanisms import LimitDomain

from ..law import output_law, working_precision
from ..profile import epsilon_from_laws, profile_from_laws
from .bounds import INF, Box
from .cover import enumerate_shapes
from .interval import leaf_holds
from .result import FORMAT, FORMAT_VERSION, CertifiedInterval
from .search import bound_holds
from .shapes import FREE, LimitDomainModel, Shape

__all__ = [
    "CertificateCheck",
    "exact_value",
    "is_certificate",
    "read_certificate",
    "recheck_certificate",
    "write_certificate",
]

# A re-derived bound may differ from the stated one by float noise only (same arithmetic).
_SLACK = 1e-9


@dataclass(frozen=True)
class CertificateCheck:
    """The outcome of rechecking a certificate.

    Parameters
    ----------
    ok : every check passed.
    upper : the largest re-derived leaf bound (the certified upper end).
    lower : the recomputed exact value of the stated pair (None without a mechanism).
    leaves : leaves rechecked.
    problems : what failed, one line each (empty when ``ok``).
    seconds : wall time of the check.
    """

    ok: bool
    upper: float
    lower: mpmath.mpf | None
    leaves: int
    problems: tuple[str, ...]
    seconds: float

    def __str__(self) -> str:
        head = "certificate OK" if self.ok else "certificate REFUSED"
        lines = [
            f"{head}: {self.leaves} leaves rechecked in {self.seconds:.1f} s, "
            f"upper end {self.upper:.10g}"
        ]
        if self.lower is not None:
            lines.append(f"lower end recomputed exactly: {mpmath.nstr(self.lower, 12)}")
        lines += [f"  - {p}" for p in self.problems[:20]]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The check as JSON-ready data."""
        return {
            "ok": self.ok,
            "upper": self.upper,
            "lower": None if self.lower is None else mpmath.nstr(self.lower, 30),
            "leaves": self.leaves,
            "problems": list(self.problems),
            "seconds": self.seconds,
        }


def write_certificate(result: CertifiedInterval, path: str | Path) -> None:
    """Write ``result`` as a JSON certificate."""
    Path(path).write_text(json.dumps(result.to_dict(), indent=1))


def read_certificate(path: str | Path) -> dict:
    """Read a JSON certificate (refusing another format or a newer version)."""
    data = json.loads(Path(path).read_text())
    if data.get("format") != FORMAT or int(data.get("version", 0)) > FORMAT_VERSION:
        raise ValueError(f"{path} is not a {FORMAT} of version <= {FORMAT_VERSION}")
    return data


def _number(value) -> float:
    return INF if value == "inf" else float(value)


def _box(data: list) -> Box:
    return tuple((float(lo), _number(hi)) for lo, hi in data)


def _hole(target: Box, boxes: list[Box]) -> Box | None:
    """A part of ``target`` whose integer points no box of ``boxes`` covers (None: covered)."""
    hits = [
        b
        for b in boxes
        if all(lo <= t_hi and t_lo <= hi for (lo, hi), (t_lo, t_hi) in zip(b, target))
    ]
    if not hits:
        return target
    for b in hits:
        if all(lo <= t_lo and t_hi <= hi for (lo, hi), (t_lo, t_hi) in zip(b, target)):
            return None
    # Some hit cuts the target: split the target at one of its sides and cover both parts.
    for b in hits:
        for i, ((lo, hi), (t_lo, t_hi)) in enumerate(zip(b, target)):
            cut = None
            if t_lo < lo <= t_hi:
                cut = lo - 1
            elif t_lo <= hi < t_hi:
                cut = hi
            if cut is not None:
                left = (*target[:i], (t_lo, cut), *target[i + 1 :])
                right = (*target[:i], (cut + 1, t_hi), *target[i + 1 :])
                return _hole(left, hits) or _hole(right, hits)
    return target


def _box_text(box: Box) -> str:
    sides = ", ".join(f"[{lo:g}, {'inf' if hi == INF else f'{hi:g}'}]" for lo, hi in box)
    return f"({sides})"


def is_certificate(data) -> bool:
    """Whether ``data`` (a JSON value) is a certificate, by its ``format`` field."""
    return isinstance(data, dict) and data.get("format") == FORMAT


def exact_value(mechanism, pair, quantity: str, at: float) -> mpmath.mpf:
    """The exact δ at ε or ε at δ of ``pair`` under ``mechanism`` (``output_law``, mpmath)."""
    with working_precision():
        law_p = output_law(mechanism, np.asarray(pair[0], dtype=np.int64))
        law_q = output_law(mechanism, np.asarray(pair[1], dtype=np.int64))
        if quantity == "delta":
            return profile_from_laws(law_p, law_q, at)
        return epsilon_from_laws(law_p, law_q, at)


def _family_problems(model: LimitDomainModel, mechanism) -> list[str]:
    """The certificate's family against a ``LimitDomain`` mechanism's own (its model)."""
    if mechanism is not None and type(mechanism) is LimitDomain:
        own = LimitDomainModel.from_mechanism(mechanism, model.d)
        if own != model:
            return [f"the family {model.to_dict()} is not that of the mechanism: {own.to_dict()}"]
    return []


def _leaf_problems(model, leaves, quantity, at, arithmetic, by_shape) -> tuple[list[str], float]:
    """Each leaf's stated bound re-derived: ``(problems, largest stated bound)``; the leaves'
    boxes are collected in ``by_shape``."""
    problems: list[str] = []
    upper = -INF
    for n, leaf in enumerate(leaves):
        shape = Shape.from_dict(leaf["shape"])
        box = _box(leaf["box"])
        stated = _number(leaf["upper"])
        if len(box) != sum(1 for c in shape.classes if c == FREE) or any(
            lo < 2 or lo > hi for lo, hi in box
        ):
            problems.append(f"leaf {n}: box {leaf['box']} does not fit its shape")
            continue
        if arithmetic == "interval":
            holds = leaf_holds(model, shape, box, quantity, at, stated)
        else:
            holds = bound_holds(model, shape, box, quantity, at, stated)
        if not holds:
            problems.append(
                f"leaf {n} (free gaps {_box_text(box)}): stated bound {stated!r} is below the "
                "re-derived one"
            )
        upper = max(upper, stated)
        by_shape.setdefault(shape, []).append(box)
    return problems, upper


def _cover_problems(model: LimitDomainModel, by_shape: dict[Shape, list[Box]]) -> list[str]:
    """Leaves of shapes outside the family, and free gaps of a shape that no leaf covers."""
    shapes = enumerate_shapes(model)
    known = set(shapes)
    problems = [
        f"shape {shape.to_dict()} is not a shape of the family"
        for shape in by_shape
        if shape not in known
    ]
    for shape in shapes:
        nfree = sum(1 for c in shape.classes if c == FREE)
        full: Box = ((2.0, INF),) * nfree
        hole = _hole(full, by_shape.get(shape, []))
        if hole is not None:
            problems.append(
                f"shape {shape.to_dict()}: no leaf covers the free gaps {_box_text(hole)}"
            )
    return problems


def _lower_problems(mechanism, data: dict, quantity, at, upper) -> tuple[mpmath.mpf, list[str]]:
    """The pair's exact value recomputed against the stated lower end and the upper end."""
    problems: list[str] = []
    lower = exact_value(mechanism, data["pair"], quantity, at)
    with working_precision():
        stated_lower = mpmath.mpf(data["lower"])
        mismatch = abs(lower - stated_lower) > mpmath.mpf("1e-25") * max(1, abs(stated_lower))
    if mismatch:
        problems.append(f"the pair's exact value {lower} is not the stated lower end")
    if lower > upper * (1 + _SLACK):
        problems.append(f"the pair's exact value {lower} exceeds the upper end {upper}")
    return lower, problems


def recheck_certificate(data: dict, mechanism=None, arithmetic: str = "float") -> CertificateCheck:
    """Re-derive every leaf bound of a certificate and check that the leaves cover the family.

    Parameters
    ----------
    data : the certificate (``read_certificate`` or ``CertifiedInterval.to_dict()``).
    mechanism : the mechanism, to recompute the lower end's pair exactly (optional); a
        ``LimitDomain`` must also have the certificate's family (its model).
    arithmetic : ``"float"`` checks each stated bound with the search's own bound functions
        (doubles with stated margins: δ at ε re-derived, or δ at the stated ε at most δ);
        ``"interval"`` checks each stated bound with the second
        derivation of [`interval`][dpaudit.exact.certify.interval] (mpmath ``iv``; slower).
    """
    if arithmetic not in ("float", "interval"):
        raise ValueError(f"arithmetic must be 'float' or 'interval', got {arithmetic!r}")
    start = time.perf_counter()
    model = LimitDomainModel(**data["model"])
    problems = _family_problems(model, mechanism)
    quantity, at = data["quantity"], float(data["at"])
    by_shape: dict[Shape, list[Box]] = {}
    leaves = data["leaves"]
    found, upper = _leaf_problems(model, leaves, quantity, at, arithmetic, by_shape)
    problems += found + _cover_problems(model, by_shape)
    stated_upper = _number(data["upper"])
    if upper > stated_upper * (1 + _SLACK):
        problems.append(f"stated upper end {stated_upper!r} is below a leaf bound {upper!r}")
    lower = None
    if mechanism is not None:
        lower, found = _lower_problems(mechanism, data, quantity, at, upper)
        problems += found
    return CertificateCheck(
        ok=not problems,
        upper=0.0 if upper == -INF else upper,  # no leaves: nothing bounded
        lower=lower,
        leaves=len(leaves),
        problems=tuple(problems),
        seconds=time.perf_counter() - start,
    )
