"""Certified worst cases: a rigorous ``[lower, upper]`` on the worst privacy loss of a family.

[`certify_worst_case`][dpaudit.exact.certify.certify_worst_case] bounds the worst δ at ε (or ε
at δ) over *every* neighbouring pair of LimitDom (seed 003, 003_9293f5da18078e1b.txt, Alg. 1) on
d items with any counts, by branch and bound: the pairs reduce to finitely many shapes over boxes
of count gaps ([`shapes`][dpaudit.exact.certify.shapes]), each region is bounded above with
rounded-up arithmetic on the exact laws ([`bounds`][dpaudit.exact.certify.bounds]), and the
lower end is the exact value of a reported pair. The certificate (the leaf regions and their
bounds) is rechecked by [`recheck_certificate`][dpaudit.exact.certify.recheck_certificate].
TopStable (seed 000, Alg. 3) has its own shapes and search
([`certify_top_stable`][dpaudit.exact.certify.certify_top_stable]): rigorous, not yet tight.
The mathematics is on the docs page ``certify.md``.
"""

from __future__ import annotations

from ...provenance import mechanism_spec
from .certificate import (
    CertificateCheck,
    exact_value,
    read_certificate,
    recheck_certificate,
    write_certificate,
)
from .result import CertifiedInterval
from .search import branch_and_bound
from .shapes import LimitDomainModel
from .top_stable_search import TopStableCertificate, certify_top_stable, recheck_top_stable

__all__ = [
    "CertificateCheck",
    "CertifiedInterval",
    "LimitDomainModel",
    "TopStableCertificate",
    "certify_top_stable",
    "certify_worst_case",
    "read_certificate",
    "recheck_certificate",
    "recheck_top_stable",
    "write_certificate",
]


def certify_worst_case(
    mechanism,
    d: int | None = None,
    *,
    quantity: str = "epsilon",
    at: float | None = None,
    rtol: float = 0.01,
    seconds: float = 600.0,
    model: LimitDomainModel | None = None,
) -> CertifiedInterval:
    """Certify the worst ε at δ (or δ at ε) over every neighbouring pair on ``d`` items.

    Parameters
    ----------
    mechanism : a ``LimitDomain`` (or, with ``model``, any mechanism whose exact law is that
        model's: used to recompute the lower end's pair with ``dpaudit.exact.output_law``).
    d : number of items (>= k̄ + 1), or None for every d >= 2 k̄; counts are unbounded.
    quantity : ``"epsilon"``: worst ε at δ = ``at`` (default the claim's δ); ``"delta"``: worst
        δ at ε = ``at`` (default the claim's ε). Both directions of every pair count.
    rtol : stop once the upper end is within ``rtol`` (relative) of the lower end.
    seconds : time budget of the search (the interval stays rigorous, only wider, on expiry).
    model : the family as the certifier sees it (default: from ``mechanism`` and ``d``).
    """
    model = LimitDomainModel.from_mechanism(mechanism, d) if model is None else model
    if at is None:
        claim = mechanism.claim
        at = float(claim.delta if quantity == "epsilon" else claim.epsilon)
    found = branch_and_bound(model, quantity, float(at), rtol=rtol, seconds=seconds)
    if found.best_shape is None or found.best_point is None:
        raise RuntimeError("no realisable pair was evaluated: the family is empty")
    gaps = dict(zip(found.best_shape.free, found.best_point))
    realised = found.best_shape.realise(model, gaps)
    if realised is None:  # only realisable shapes supply lower bounds
        raise AssertionError("the best shape could not be realised")
    counts, counts2, _ = realised
    pair = (tuple(int(c) for c in counts), tuple(int(c) for c in counts2))
    lower = exact_value(mechanism, pair, quantity, float(at))
    return CertifiedInterval(
        mechanism=repr(mechanism),
        model=model,
        quantity=quantity,
        at=float(at),
        lower=lower,
        upper=found.upper,
        pair=pair,
        leaves=found.leaves,
        converged=found.converged,
        seconds=found.seconds,
        regions=found.regions,
        mechanism_spec=mechanism_spec(mechanism),
    )
