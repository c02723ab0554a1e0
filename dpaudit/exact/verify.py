"""Exhaustive exact verification of a privacy claim on a bounded family of histograms.

For every histogram with ``d`` items and counts ``<= max_count`` and every
neighbour of it (adding and removing a user, or the relation given), the
exact laws give the exact privacy profile of the pair (Balle & Wang 2018,
Thm 5). The claim ``(ε, δ)`` holds on the family iff the exact δ at the
claimed ε stays ``<= δ`` on every pair (DESIGN.md, "What verified means",
item 2). The result also reports the exact ε at the claimed δ, which shows
how loose the claim is — and says which family it covered, since small
count ranges hide worst cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath
import numpy as np

from mechanisms.claims import BoundedChange, NeighbourRelation
from mechanisms.validation import require_nonnegative_float, require_probability

from ..neighbours.relations import count_histograms, neighbour_pairs
from .fixed_point import from_fixed2
from .law import output_law, working_precision
from .profile import worst_event
from .verify_blocks import (
    ABSOLUTE_TOLERANCE,
    DEFAULT_BLOCK,
    RELATIVE_TOLERANCE,
    merge_blocks,
    verify_block,
    verify_blocks,
)

__all__ = ["ABSOLUTE_TOLERANCE", "RELATIVE_TOLERANCE", "VerificationResult", "verify"]


def _json_number(value) -> float | str:
    value = mpmath.mpf(value)
    return "inf" if mpmath.isinf(value) else float(value)


@dataclass(frozen=True)
class VerificationResult:
    """Outcome of [`verify`][dpaudit.exact.verify.verify]: the verdict, the worst pairs and the family covered.

    Parameters
    ----------
    mechanism : ``repr`` of the mechanism checked.
    epsilon, delta : the (ε, δ) checked (the mechanism's claim unless overridden).
    relation : the neighbour relation the pairs were built with.
    d, max_count : the family: every histogram on ``d`` items with counts
        ``<= max_count``, and every neighbour of each.
    histograms : ``(max_count + 1) ** d``, the histograms in the family.
    laws : distinct histograms whose exact law was computed (the family and
        the neighbours that leave it).
    pairs : unordered neighbouring pairs checked (both directions each).
    holds : whether the exact δ at ε is ``<= delta`` (up to the tolerance)
        on every pair.
    violations : pairs on which it is not.
    delta_at_epsilon : the largest exact δ(ε) over all pairs.
    delta_pair : ``(c, c')`` attaining it, ordered so that
        ``δ = Σ_o max(0, P_c(o) − e^ε P_c'(o))``.
    delta_event : the outcomes ``{o : P_c(o) > e^ε P_c'(o)}`` witnessing it.
    epsilon_at_delta : the largest exact ε(δ) over all pairs (``inf`` possible).
    epsilon_pair : ``(c, c')`` attaining it, in the direction that attains it.
    law_class : the class whose registered exact law was used. Laws are
        inherited by subclasses (``functools.singledispatch``), so a subclass
        that changes the sampler without registering its own law is checked
        against its parent's law; ``__str__`` flags that case.
    """

    mechanism: str
    epsilon: float
    delta: float
    relation: NeighbourRelation
    d: int
    max_count: int
    histograms: int
    laws: int
    pairs: int
    holds: bool
    violations: int
    delta_at_epsilon: mpmath.mpf = field(repr=False)
    delta_pair: tuple[tuple[int, ...], tuple[int, ...]] | None
    delta_event: tuple[tuple[int, ...], ...]
    epsilon_at_delta: mpmath.mpf = field(repr=False)
    epsilon_pair: tuple[tuple[int, ...], tuple[int, ...]] | None
    law_class: str = ""

    @property
    def family(self) -> str:
        """Plain-words description of the family of pairs covered."""
        return (
            f"every histogram on d={self.d} items with counts <= {self.max_count} "
            f"({self.histograms} histograms) and every neighbour of each under "
            f"{self.relation} ({self.pairs} pairs, both directions, {self.laws} laws)"
        )

    def __str__(self) -> str:
        verdict = "HOLDS" if self.holds else f"VIOLATED on {self.violations} of {self.pairs} pairs"
        lines = [f"{self.mechanism}"]
        if self.law_class and not self.mechanism.startswith(self.law_class + "("):
            lines.append(
                f"NOTE: exact law inherited from {self.law_class}; make sure it models "
                "this subclass"
            )
        lines += [
            f"claim: ({self.epsilon:.6g}, {self.delta:.6g})-DP -> {verdict}",
            f"family: {self.family}",
            (
                f"worst exact delta at epsilon={self.epsilon:.6g}: "
                f"{mpmath.nstr(self.delta_at_epsilon, 8)}"
            ),
        ]
        if self.delta_pair is not None and self.delta_at_epsilon > 0:
            lines.append(
                f"    on pair c={list(self.delta_pair[0])} -> c'={list(self.delta_pair[1])}"
            )
            lines.append(f"    event: {list(self.delta_event)}")
        elif self.delta_pair is not None:
            lines.append("    (zero on every pair)")
        lines.append(
            f"worst exact epsilon at delta={self.delta:.6g}: {mpmath.nstr(self.epsilon_at_delta, 8)}"
        )
        if self.epsilon_pair is not None:
            lines.append(
                f"    on pair c={list(self.epsilon_pair[0])} -> c'={list(self.epsilon_pair[1])}"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready summary (numbers as floats, ``"inf"`` for infinity; exact values as strings)."""

        def pair(value):
            return None if value is None else [list(value[0]), list(value[1])]

        return {
            "mechanism": self.mechanism,
            "law_class": self.law_class,
            "claim": {"epsilon": self.epsilon, "delta": self.delta},
            "family": {
                "d": self.d,
                "max_count": self.max_count,
                "relation": str(self.relation),
                "relation_type": type(self.relation).__name__,
                "relation_parameter": (
                    self.relation.max_change
                    if isinstance(self.relation, BoundedChange)
                    else self.relation.max_items
                ),
                "histograms": self.histograms,
                "laws": self.laws,
                "pairs": self.pairs,
                "description": self.family,
            },
            "holds": self.holds,
            "violations": self.violations,
            "delta_at_epsilon": _json_number(self.delta_at_epsilon),
            "delta_at_epsilon_exact": mpmath.nstr(self.delta_at_epsilon, 30),
            "delta_pair": pair(self.delta_pair),
            "delta_event": [list(o) for o in self.delta_event],
            "epsilon_at_delta": _json_number(self.epsilon_at_delta),
            "epsilon_at_delta_exact": mpmath.nstr(self.epsilon_at_delta, 30),
            "epsilon_pair": pair(self.epsilon_pair),
        }

    def __repr__(self) -> str:
        """One line: verdict, mechanism, claim, family and the worst exact values."""
        from dpaudit.display import one_line, shorten

        verdict = "HOLDS" if self.holds else "VIOLATED"
        return one_line(
            "VerificationResult",
            verdict,
            [
                shorten(self.mechanism, 60),
                f"claim ({self.epsilon:.4g}, {self.delta:.3g})",
                f"d={self.d}, counts <= {self.max_count}, {self.pairs:,} pairs",
                f"worst δ at ε: {mpmath.nstr(self.delta_at_epsilon, 4)}",
                f"worst ε at δ: {mpmath.nstr(self.epsilon_at_delta, 4)}",
                None if self.holds else f"{self.violations} violating pairs",
            ],
        )

    def _repr_html_(self) -> str:
        """A table for Jupyter: the verdict in colour, the family, the worst pairs."""
        from dpaudit.display import html_table

        def pair(value):
            return None if value is None else f"{list(value[0])} → {list(value[1])}"

        verdict = "HOLDS" if self.holds else f"VIOLATED on {self.violations} of {self.pairs} pairs"
        return html_table(
            self.mechanism,
            verdict,
            [
                ("claim", f"({self.epsilon:.6g}, {self.delta:.6g})-DP"),
                ("family", self.family),
                (f"worst exact δ at ε={self.epsilon:.6g}", mpmath.nstr(self.delta_at_epsilon, 8)),
                ("  on pair", pair(self.delta_pair)),
                (f"worst exact ε at δ={self.delta:.6g}", mpmath.nstr(self.epsilon_at_delta, 8)),
                ("  on pair", pair(self.epsilon_pair)),
                ("exact law", self.law_class),
            ],
        )


def verify(
    mech,
    d: int = 5,
    max_count: int = 3,
    neighbours=None,
    progress: bool = True,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    client=None,
    block: int = DEFAULT_BLOCK,
    resume=None,
) -> VerificationResult:
    """Check ``mech``'s privacy claim exactly on every neighbouring pair of a bounded family.

    Exhaustive over every histogram with ``d`` items and counts ``<= max_count``
    and every neighbour of each
    ([`dpaudit.neighbours.neighbour_pairs`][dpaudit.neighbours.neighbour_pairs]); each pair's exact
    privacy profile in both directions (Balle & Wang 2018, Thm 5) comes from
    ``dpaudit.exact.output_law``; each histogram's law is computed once (per block of pairs). Exact
    ε at δ uses the closed-form piecewise solution of
    [`dpaudit.exact.epsilon_at`][dpaudit.exact.epsilon_at], skipped (soundly) on pairs whose δ at
    the current worst ε already meets δ.

    Parameters
    ----------
    mech : a mechanism with a registered exact law and a ``claim``.
    d : number of items (>= 1).
    max_count : largest count in the family (>= 0).
    neighbours : ``AddRemoveUser`` / ``BoundedChange`` / ``Substitute``; default ``mech.claim.neighbours``.
    progress : show a tqdm progress bar on stderr.
    epsilon, delta : check this (ε, δ) instead of the claim's.
    client : a ``dask.distributed.Client``: the pairs are split into blocks of ``block``
        pairs, one task each, and the worst cases merged in pair order — the same result as
        one pass in this process.
    block : pairs per task (with ``client`` or ``resume``).
    resume : a DuckDB file: finished blocks are appended, and a rerun with the same file
        skips them (same result); a file from another check is refused.
    """
    claim = mech.claim
    epsilon = require_nonnegative_float("epsilon", claim.epsilon if epsilon is None else epsilon)
    delta = require_probability(
        "delta", claim.delta if delta is None else delta, allow_zero=True, allow_one=True
    )
    relation = claim.neighbours if neighbours is None else neighbours
    low, high = neighbour_pairs(d, max_count, relation)
    cache: dict = {}
    if client is None and resume is None:
        blocks = [verify_block(mech, low, high, 0, epsilon, delta, progress, cache)]
    else:
        family = (d, max_count, relation)
        blocks = verify_blocks(
            mech, low, high, epsilon, delta, client, int(block), resume, family, progress
        )
    return _result(mech, blocks, cache, epsilon, delta, relation, d, max_count, int(low.shape[0]))


def _result(mech, blocks, cache, epsilon, delta, relation, d, max_count, n_pairs):
    """The VerificationResult of the merged ``blocks``, with the event of the worst δ pair."""
    worst_delta, delta_pair, worst_eps, eps_pair, violations, n_laws = merge_blocks(blocks)
    with working_precision():
        worst_delta = from_fixed2(max(worst_delta, 0))
        event = ()
        if delta_pair is not None:
            laws = [
                cache[h][0] if h in cache else output_law(mech, np.asarray(h, dtype=np.int64))
                for h in delta_pair
            ]
            event = worst_event(laws[0], laws[1], epsilon)
    return VerificationResult(
        mechanism=repr(mech),
        epsilon=epsilon,
        delta=delta,
        relation=relation,
        d=int(d),
        max_count=int(max_count),
        histograms=count_histograms(d, max_count),
        laws=n_laws,
        pairs=n_pairs,
        holds=violations == 0,
        violations=violations,
        delta_at_epsilon=worst_delta,
        delta_pair=delta_pair,
        delta_event=event,
        epsilon_at_delta=max(worst_eps, mpmath.mpf(0)),
        epsilon_pair=eps_pair,
        law_class=_law_owner(type(mech)),
    )


def _law_owner(cls) -> str:
    """Name of the class in ``cls``'s MRO whose law ``output_law`` dispatches to."""
    implementation = output_law.dispatch(cls)
    for base in cls.__mro__:
        if output_law.registry.get(base) is implementation:
            return base.__name__
    return ""
