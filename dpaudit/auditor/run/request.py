"""What the caller of [`audit`][dpaudit.auditor.run.runner.audit] asked for, named and frozen.

The keywords of ``audit`` land in two values: the ones that shape the plan in
[`AuditOptions`][dpaudit.auditor.planning.options.AuditOptions], the rest (the mechanism and how
to wrap it, how to sample it, what to record) in [`AuditRequest`][dpaudit.auditor.run.request.AuditRequest].
Each keyword is documented on the field of its name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..planning.options import DEFAULT_SAMPLES, AuditOptions
from ..planning.plan import Budget
from .budgeting import asked_budget

__all__ = ["AuditRequest"]

#: The keywords of ``audit`` that are options (``samples`` is resolved with ``budget`` first).
_OPTION_NAMES = frozenset(field.name for field in dataclasses.fields(AuditOptions)) - {
    "samples",
    "grey_delta",
}


@dataclass(frozen=True)
class AuditRequest:
    """The arguments of one [`audit`][dpaudit.auditor.run.runner.audit] call, by name.

    Built by [`from_arguments`][dpaudit.auditor.run.request.AuditRequest.from_arguments], which
    validates the options and the budget before any other work.
    """

    mechanism: Any
    """A mechanism (``sample(counts, size, rng)`` and ``claim``), a plain callable
    ``f(counts, rng) -> outcome tuple``, or with ``batched=True`` a callable
    ``f(counts, size, rng) -> (size, width) array`` (then give ``claim`` and ``width``)."""
    options: AuditOptions
    """The options of the audit: every keyword of ``audit`` named by one of its fields."""
    budget: Budget
    """The budget asked for: ``samples=`` (total mechanism samples, all phases and both sides,
    never exceeded: screening thins the candidate pairs to fit it, and a budget too small for a
    valid audit of ``keep`` pairs is refused with the minimum; ``AuditResult.samples`` is what was
    drawn) or ``budget=``, the same budget or wall-clock seconds: ``2e7``, ``"2e7"``, ``"60s"``
    ([`plan.Budget`][dpaudit.auditor.planning.plan.Budget]; seconds become samples by a timed
    pilot, recorded in the result's evidence). Give one of them; default ``DEFAULT_SAMPLES``."""
    claim: Any = None
    """``(ε, δ)`` or ``(ε, δ, relation)`` to audit instead of ``mechanism.claim``."""
    width: int | None = None
    """Longest outcome of a plain callable."""
    neighbours: Any = None
    """Relation to audit under (default: the claim's)."""
    name: str | None = None
    """The mechanism's name in the result (default: its own)."""
    batched: bool = False
    """``mechanism`` is a batched callable ``f(counts, size, rng)``."""
    values: int = 0
    """Real values per outcome of a plain callable (its returns are then ``(item ids, values)``;
    with ``width=0`` a number or float array). A mechanism declares them by a ``value_width``
    attribute and returns a [`mechanisms.MixedBatch`][mechanisms.MixedBatch]. Values are binned
    and scored by encoders learned on samples drawn before the ones they reduce
    ([`values`][dpaudit.auditor.values])."""
    progress: bool = False
    """Show a tqdm bar on stderr."""
    executor: Any = None
    """An executor with ``draw(histograms, per_histogram, seeds)`` (default: local)."""
    client: Any = None
    """A ``dask.distributed.Client``: sample on that cluster
    ([`dask_executor`][dpaudit.auditor.sources.dask_executor]); same seed, same result as
    in-process."""
    resume: Any = None
    """A DuckDB file ([`checkpoint`][dpaudit.checkpoint]): finished chunks are appended to it, and
    a rerun with the same file continues where an interrupted run stopped, with the same result; a
    file from another plan (mechanism, options, seed, version) is refused."""
    evidence: Mapping | None = None
    """Extra entries for the result's evidence (e.g. the command line)."""
    black_box: bool = False
    """Sample the mechanism as a black box only: no same-seed replay check and no grey-box scan.
    By default a Python mechanism seeded by its ``rng`` is checked to draw only from it (refused
    otherwise,
    [`greybox.replay.check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng]),
    and the confirmed pairs and first candidates are run coupled on one stream for both neighbours
    ([`greybox.scan`][dpaudit.auditor.greybox.scan]); what that finds is in
    ``evidence["greybox"]`` and the text's ``grey box:`` line, and changes no verdict. A mechanism
    that declares its output support also gets the structural-δ stage
    ([`greybox.delta_stage`][dpaudit.auditor.greybox.delta_stage]), with a tenth of ``alpha`` (the
    sampled bounds take the rest): its bound on δ at the claimed ε enters the headline and the
    verdict, its record is ``evidence["greybox"]["delta"]``."""

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> AuditRequest:
        """The request of ``audit``'s ``arguments`` (``{keyword: value}``, every keyword given)."""
        asked = asked_budget(arguments["samples"], arguments["budget"])
        given = {name: arguments[name] for name in _OPTION_NAMES}
        flags = {"epsilon_only": bool(given["epsilon_only"]), "refine": bool(given["refine"])}
        options = AuditOptions(samples=asked.samples or DEFAULT_SAMPLES, **{**given, **flags})
        own = {field.name for field in dataclasses.fields(cls)} - {"options", "budget"}
        return cls(options=options, budget=asked, **{name: arguments[name] for name in own})
