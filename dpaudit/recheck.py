"""Re-check an audit's evidence from first principles, trusting nothing the file asserts.

An [`AuditResult`][dpaudit.auditor.AuditResult] (or the JSON ``dpaudit audit --json`` wrote) keeps
every confirmed witness in full: both histograms, the event, hits and sample sizes.
[`recheck`][dpaudit.recheck.recheck] treats the file as a claim by its author and recomputes
everything a reader could be misled by:

1. the mechanism is rebuilt from its recorded spec (or the one you pass), and the claim
   and neighbour relation are taken from the REBUILT mechanism (or from the claim the
   audit was explicitly told to audit, ``evidence.options.claim``); a file whose
   recorded claim differs is refused;
2. every witness's bounds are recomputed from its hits and sample sizes, at the level the
   audit's plan gives ([`dpaudit.levels`][dpaudit.levels]: from the recorded options and the
   pairs screened, never from which fields the file has; ``alpha / (2 M) / looks`` live, less
   the grey-box δ stage's share when the rebuilt mechanism plans it (whose bound is checked
   against its parts at that share, then re-derived by running the stage again on the file's
   pair from the audit's seed and budget: the file holds its parts' sums, not its weighted
   runs),
   ``alpha / 2`` for a refined audit's one event, Bonferroni over the events confirmed offline),
   with the auditor's own functions
   ([`dpaudit.auditor.bounds.statistics.event_bounds`][dpaudit.auditor.bounds.statistics.event_bounds],
   [`detectable_epsilon`][dpaudit.auditor.bounds.statistics.detectable_epsilon]); ``events_confirmed`` must
   be the number of witnesses, that level a valid Bonferroni level for them, and the evidence the
   plan shapes (the looks, a refined audit's first phase) the shape the plan gives;
3. the headline figures and the verdict are recomputed from the witnesses
   ([`dpaudit.auditor.confirm.confirmation.summarise`][dpaudit.auditor.confirm.confirmation.summarise],
   [`AuditResult.verdict`][dpaudit.auditor.AuditResult.verdict]) and compared, field by field, with
   what the file says (the file's ``verdict``, ``violation``, ``explanation``,
   ``epsilon_witness`` ... included); the copies of the seed, alpha and power factor in the file
   must agree with each other;
4. each witness is then checked against the mechanism itself:

   * exact route — when [`dpaudit.exact.output_law`][dpaudit.exact.output_law] knows the mechanism
     (or, for an event over real values, [`dpaudit.exact.value_laws`][dpaudit.exact.value_laws] has
     it in closed form) and the histograms are small: the event's exact P and Q. The recorded hits
     must be plausible draws of Binomial(n, P) and Binomial(n, Q) (scipy's two-sided exact
     binomial test, each of the ``2 M`` tests at ``alpha / (2 M)``, so a genuine file is
     refused here with probability at most ``alpha``), and the recorded one-sided bounds
     must cover P and Q;
   * sampled route — otherwise: fresh samples from a seed drawn from fresh entropy
     (``numpy.random.SeedSequence()``; reported, and accepted back as ``seed=`` to
     repeat the re-check), Fisher's exact test of the recorded against the fresh counts
     (each at ``alpha / (2 M)``), and fresh one-sided bounds, valid on their own because
     the event is fixed before they are drawn.

Three outcomes ([`RecheckResult.outcome`][dpaudit.recheck.RecheckResult.outcome], and the exit
status of ``dpaudit recheck``):

* consistent (0): the file is what its own numbers, its plan and the mechanism imply;
* missed (0, with a note): consistent, and its hits are plausible draws of the exact law, but a
  recorded interval misses the exact P or Q. That is a genuine miss, which the audit allows with
  probability at most its own ``alpha`` (a refined audit's one event has both intervals at
  ``alpha / 2``, so about one genuine refined audit in ``1 / alpha`` shows one); the note says
  which interval missed, the alpha, and whether a VIOLATION rests on the miss;
* inconsistent (1): anything else the file's numbers, its plan or the mechanism contradict.

Two levels are at work: the re-check's own tests at its ``alpha`` (a genuine file is refused
with probability at most that), and the audit's intervals at the audit's ``alpha`` (a genuine
file shows a miss with probability at most that, and it is reported as a miss).

What this cannot see: witnesses that were confirmed and then left out of the file, with
``events_confirmed`` lowered to match (the remaining ones are a consistent, smaller
audit). Only ``dpaudit.rerun.rerun`` (``dpaudit recheck --rerun``), which repeats the
audit from spec + seed + options, sees those.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass

from dpaudit.file_problems import file_problems
from dpaudit.rebuild import CannotRecheck, audited_mechanism
from dpaudit.result_files import load_result, load_result_data, not_a_result
from dpaudit.witness_checks import (
    EXACT_MAX_ITEMS,
    WitnessCheck,
    exact_witness_check,
    has_exact_law,
    sampled_witness_check,
    value_probabilities,
    verdict_findings,
)

__all__ = [
    "CannotRecheck",
    "RecheckResult",
    "WitnessCheck",
    "audited_mechanism",
    "load_result",
    "load_result_data",
    "recheck",
]


@dataclass(frozen=True)
class RecheckResult:
    """Outcome of [`recheck`][dpaudit.recheck.recheck]: consistency problems, every witness re-checked, reproduction.

    ``problems`` lists, first one first, every way the file disagrees with what its own
    numbers and the rebuilt mechanism imply; ``seed`` is the fresh seed of the sampled
    route (None when every witness was checked exactly); ``digest`` the file's
    [`dpaudit.auditor.results.result_format.result_digest`][dpaudit.auditor.results.result_format.result_digest];
    ``level`` the recomputed per-interval level ``alpha_each``; ``test_alpha`` the level of the
    re-check's tests.
    """

    mechanism: str
    verdict: str
    checks: tuple[WitnessCheck, ...]
    problems: tuple[str, ...] = ()
    seed: int | None = None
    digest: str = ""
    level: float = math.nan
    test_alpha: float = 1e-3
    notes: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool:
        """The file is consistent and every witness agrees with the mechanism."""
        return not self.problems and all(c.agrees for c in self.checks)

    @property
    def missed(self) -> bool:
        """The evidence agrees, and some recorded interval misses the exact P or Q: a genuine
        miss, which the audit allows with probability at most its alpha."""
        return self.agrees and any(c.missed for c in self.checks)

    @property
    def outcome(self) -> str:
        """``"consistent"``, ``"missed"`` (consistent, with a genuine miss within the audit's
        alpha) or ``"inconsistent"`` (exit status 0, 0 with a note, 1)."""
        if not self.agrees:
            return "inconsistent"
        return "missed" if self.missed else "consistent"

    @property
    def violation_reproduced(self) -> bool:
        return any(c.violates for c in self.checks)

    @property
    def first_problem(self) -> str | None:
        """One line naming what disagrees first (None when everything agrees)."""
        if self.problems:
            return self.problems[0]
        bad = next((c for c in self.checks if not c.agrees), None)
        if bad is None:
            return None
        return (
            f"witnesses[{bad.index - 1}] disagrees with the mechanism ({bad.route}): {bad.detail}"
        )

    def __str__(self) -> str:
        lines = [
            f"recheck of the audit of {self.mechanism} (verdict {self.verdict.upper()})",
            f"  digest: {self.digest}",
            f"  bounds recomputed at alpha_each = {self.level:.6g}; tests at level "
            f"{self.test_alpha:g} in all",
        ]
        if self.seed is not None:
            lines.append(f"  fresh samples from seed {self.seed} (repeat with --seed {self.seed})")
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  PROBLEM: {p}" for p in self.problems]
        for c in self.checks:
            lines.append(
                f"  #{c.index} {c.route:>7}: P={c.p:.6g} (recorded ≥ {c.p_low:.6g}), "
                f"Q={c.q:.6g} (recorded ≤ {c.q_high:.6g}), ε={c.epsilon:.4g}"
                f"{' VIOLATES' if c.violates else ''} -> {_verdict_of(c)}"
                + (f" ({c.detail})" if c.detail else "")
            )
        if self.agrees:
            lines.append(
                "  result: evidence agrees"
                + (
                    ", with a genuine miss within the audit's alpha (note above)"
                    if self.missed
                    else ""
                )
                + "; violation "
                + ("reproduced" if self.violation_reproduced else "not reproduced")
            )
        else:
            lines.append(f"  result: evidence DISAGREES: {self.first_problem}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "mechanism": self.mechanism,
            "verdict": self.verdict,
            "agrees": self.agrees,
            "outcome": self.outcome,
            "missed": self.missed,
            "violation_reproduced": self.violation_reproduced,
            "problems": list(self.problems),
            "seed": self.seed,
            "digest": self.digest,
            "level": self.level,
            "test_alpha": self.test_alpha,
            "notes": list(self.notes),
            "checks": [c.to_dict() for c in self.checks],
        }

    def __repr__(self) -> str:
        """One line: agreement, the audit re-checked, and whether its violation reproduced."""
        from dpaudit.display import one_line, shorten

        routes = sorted({c.route for c in self.checks})
        return one_line(
            "RecheckResult",
            {"consistent": "AGREES", "missed": "AGREES (MISS)"}.get(self.outcome, "DISAGREES"),
            [
                f"audit of {shorten(self.mechanism, 60)} (verdict {self.verdict.upper()})",
                f"{len(self.checks)} witnesses re-checked ({', '.join(routes) or 'none'})",
                "violation reproduced" if self.violation_reproduced else "no violation reproduced",
            ],
        )

    def _repr_html_(self) -> str:
        """A table for Jupyter: one row per re-checked witness."""
        from dpaudit.display import html_table

        rows = [
            (
                f"#{c.index} ({c.route})",
                f"P={c.p:.6g} (recorded ≥ {c.p_low:.6g}), Q={c.q:.6g} (recorded ≤ "
                f"{c.q_high:.6g}), ε={c.epsilon:.4g}{' VIOLATES' if c.violates else ''} → "
                f"{_verdict_of(c)}" + (f" ({c.detail})" if c.detail else ""),
            )
            for c in self.checks
        ]
        rows += [("note", note) for note in self.notes]
        rows.append(("violation", "reproduced" if self.violation_reproduced else "not reproduced"))
        return html_table(
            f"recheck of the audit of {self.mechanism} (verdict {self.verdict.upper()})",
            {"consistent": "AGREES", "missed": "AGREES (MISS)"}.get(self.outcome, "DISAGREES"),
            rows,
        )


def _verdict_of(check: WitnessCheck) -> str:
    if not check.agrees:
        return "DISAGREES"
    return "agrees, its interval MISSES (within the audit's alpha)" if check.missed else "agrees"


def recheck(
    source,
    mechanism=None,
    *,
    samples: int | None = None,
    seed: int | None = None,
    alpha: float = 1e-3,
    exact: bool | None = None,
    allow_command: bool = False,
) -> RecheckResult:
    """Recompute an audit's evidence from first principles (module docstring).

    The [`RecheckResult`][dpaudit.recheck.RecheckResult]'s ``outcome`` is ``"consistent"``,
    ``"missed"`` (consistent, with a genuine miss within the audit's alpha, said in ``notes``) or
    ``"inconsistent"``.

    Parameters
    ----------
    source : an AuditResult, its ``to_dict()``, or the path of the JSON ``--json`` wrote.
    mechanism : the mechanism audited, anything [`dpaudit.audit`][dpaudit.auditor.audit] accepts (a
        plain callable is wrapped as the audit wrapped it, from ``evidence.options``); default:
        rebuilt from the recorded spec.
    samples : fresh samples per histogram for the sampled route (default: as recorded).
    seed : seed of the fresh samples (default: fresh entropy, reported in the result).
    alpha : level of the re-check's tests in all (binomial tests against the exact law,
        Fisher's tests against fresh samples), Bonferroni over the ``2 M`` tests of ``M``
        witnesses; also the level of the fresh bounds.
    exact : force (True) or forbid (False) the exact route; default: exact when possible.
    allow_command : run a recorded ``--command`` child again (``dpaudit.user_source``).
    """
    from dpaudit.auditor import AuditResult

    data = load_result_data(source)
    try:
        AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as error:
        raise not_a_result(source, error) from None
    given, sampler, claim, relation, notes = audited_mechanism(
        data, mechanism, allow_command=allow_command
    )
    try:
        return _recheck(data, sampler, claim, relation, notes, samples, seed, alpha, exact)
    finally:
        if mechanism is None and hasattr(given, "close"):
            given.close()  # a rebuilt --command child


def _recheck(data, sampler, claim, relation, notes, samples, seed, alpha, exact):
    from dpaudit.auditor import AuditResult
    from dpaudit.auditor.results.result_format import result_digest

    rebuilt, level, problems, notes = file_problems(data, sampler, claim, relation, notes)
    witnesses = AuditResult.from_dict(data).witnesses
    if any(not (0 <= w.hits_p <= w.samples_p and 0 <= w.hits_q <= w.samples_q) for w in witnesses):
        witnesses = ()  # impossible counts: nothing to test against the mechanism
    use_exact = has_exact_law(sampler) if exact is None else bool(exact)
    n_tests = 2 * max(len(rebuilt.witnesses), 1)
    each = float(alpha) / n_tests
    fresh_seed = None
    checks = []
    laws: dict = {}
    for index, w in enumerate(witnesses, 1):
        small = max(len(w.counts), len(w.counts2)) <= EXACT_MAX_ITEMS
        valued = value_probabilities(sampler, w) if exact is not False and small else None
        if valued is not None or (use_exact and (small or exact)):
            checks.append(exact_witness_check(index, w, sampler, claim, each, valued, laws))
            continue
        if fresh_seed is None:
            # 128 bits of fresh entropy, as numpy's SeedSequence() draws them.
            fresh_seed = secrets.randbits(128) if seed is None else int(seed)
        checks.append(sampled_witness_check(index, w, sampler, claim, each, samples, fresh_seed))
    problems, notes = verdict_findings(
        data, sampler, claim, use_exact, rebuilt, checks, level, problems, notes
    )
    return RecheckResult(
        str(data.get("mechanism")),
        rebuilt.verdict,
        tuple(checks),
        tuple(problems),
        fresh_seed,
        result_digest(data),
        level.alpha_each,
        float(alpha),
        notes,
    )
