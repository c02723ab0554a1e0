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

import json
import math
import secrets
from dataclasses import dataclass

import mpmath
import numpy as np

from dpaudit.auditor.confirm.confirmation import curve_exceeded
from dpaudit.auditor.results.result_format import first_difference, short_json, values_close
from dpaudit.consistency import copies_disagree, recomputed_result
from dpaudit.rebuild import CannotRecheck, audited_mechanism

__all__ = [
    "CannotRecheck",
    "RecheckResult",
    "WitnessCheck",
    "audited_mechanism",
    "load_result",
    "load_result_data",
    "recheck",
]

#: Histograms with more items than this are re-checked by sampling.
EXACT_MAX_ITEMS = 10


@dataclass(frozen=True)
class WitnessCheck:
    """One witness re-checked: by which route, the numbers, and whether it agrees."""

    index: int
    route: str  # "exact" or "sampled"
    p: float  # exact P, or the fresh estimate
    q: float
    p_low: float  # the recorded one-sided bounds
    q_high: float
    agrees: bool
    epsilon: float  # exact ε of the event at the claimed δ, or the fresh lower bound
    violates: bool  # the event exceeds the claim (exactly, or on the fresh samples)
    detail: str = ""
    missed: bool = False  # agrees, but the recorded interval misses the exact P or Q

    def to_dict(self) -> dict:
        return {
            k: (v if not isinstance(v, float) or math.isfinite(v) else str(v))
            for k, v in self.__dict__.items()
        }


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


def load_result_data(source) -> dict:
    """The result's JSON dict, from an AuditResult, its ``to_dict()``, or a JSON file path."""
    from dpaudit.auditor import AuditResult

    if isinstance(source, AuditResult):
        return json.loads(source.to_json())
    if isinstance(source, dict):
        return json.loads(json.dumps(source))  # a private copy, as the JSON file would give
    try:
        with open(source, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise ValueError(f"cannot read {source!r}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{source!r} is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{source!r} is not a dpaudit audit result: not a JSON object")
    return data


def load_result(source):
    """An [`AuditResult`][dpaudit.auditor.AuditResult] from itself, its ``to_dict()``, or a JSON file path."""
    from dpaudit.auditor import AuditResult

    if isinstance(source, AuditResult):
        return source
    data = load_result_data(source)
    try:
        return AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as error:
        raise _not_a_result(source, error) from None


def _not_a_result(source, error: Exception) -> ValueError:
    """The refusal of a file or dict that ``AuditResult.from_dict`` cannot read, in words
    (a missing field is named as such, not as the bare ``KeyError`` text ``'claim'``)."""
    label = source if isinstance(source, str) else "the result"
    reason = f"no field {error.args[0]!r}" if isinstance(error, KeyError) else str(error)
    return ValueError(
        f"{label!r} is not a dpaudit audit result ({reason}); give the JSON that "
        "`dpaudit audit --json FILE` or AuditResult.to_dict() wrote"
    )


def _exact_probability(law, event) -> mpmath.mpf:
    return mpmath.fsum(p for outcome, p in law.items() if event.contains(tuple(outcome)))


def _value_probabilities(mechanism, witness):
    """Exact ``(P, Q)`` of an event over real values, where closed form (else None)."""
    from dpaudit.exact import working_precision
    from dpaudit.exact.value_laws import value_event_probability

    if not hasattr(witness.event, "encoder"):
        return None
    with working_precision():
        p = value_event_probability(mechanism, witness.counts, witness.event)
        if p is None:
            return None
        return p, value_event_probability(mechanism, witness.counts2, witness.event)


def _has_exact_law(mechanism) -> bool:
    from dpaudit.exact import output_law

    return output_law.dispatch(type(mechanism)) is not output_law.dispatch(object)


def _binomial_pvalue(hits: int, n: int, p) -> float:
    from scipy.stats import binomtest

    p = min(max(float(p), 0.0), 1.0)
    if p == 0.0 or p == 1.0:
        return 1.0 if hits == round(p * n) else 0.0
    return float(binomtest(int(hits), int(n), p).pvalue)


def _exact_check(index, w, p, q, claim, each) -> WitnessCheck:
    slack = mpmath.mpf("1e-30")
    covers = bool(w.p_low <= p + slack and q <= w.q_high + slack)
    tests = (_binomial_pvalue(w.hits_p, w.samples_p, p), _binomial_pvalue(w.hits_q, w.samples_q, q))
    plausible = min(tests) > each
    if p - claim.delta <= 0:
        eps = -math.inf
    elif q == 0:
        eps = math.inf
    else:
        eps = float(mpmath.log((p - claim.delta) / q))
    violates = bool(p > mpmath.e**claim.epsilon * q + claim.delta) or curve_exceeded(
        claim, float(p), float(q)
    )
    detail = f"binomial p = {tests[0]:.3g}, {tests[1]:.3g} (each at {each:.3g})"
    if not plausible:
        detail += "; the recorded hits are not draws of the exact law"
    if not covers:
        detail += "; the recorded interval misses the exact P or Q"
    return WitnessCheck(
        index,
        "exact",
        float(p),
        float(q),
        w.p_low,
        w.q_high,
        plausible,
        eps,
        violates,
        detail,
        missed=not covers,
    )


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
        raise _not_a_result(source, error) from None
    given, sampler, claim, relation, notes = audited_mechanism(
        data, mechanism, allow_command=allow_command
    )
    try:
        return _recheck(data, sampler, claim, relation, notes, samples, seed, alpha, exact)
    finally:
        if mechanism is None and hasattr(given, "close"):
            given.close()  # a rebuilt --command child


#: Result fields that carry the audit's power: their meaning changed in format version 3 (per
#: event, at every Q of the event's interval), and a result field, ``event_power``, was added.
_POWER_FIELDS = ("detectable_epsilon", "detectable_delta", "q_low", "p_high")
_POWER_RESULT_FIELDS = (
    "detectable_epsilon",
    "detectable_delta",
    "event_power",
    "power_shortfall",
    "verdict",
    "exit_status",
    "explanation",
)


def _power_fields_of_older_version(data: dict, rebuilt) -> tuple[tuple[str, ...], str | None]:
    """Paths not compared for a file older than format version 5, and the note saying so.

    Bounds, hits and violations are recomputed as before; only the power figures (computed at
    ``Q̂`` and as a minimum over events before version 3; before version 5, an event left at an
    earlier look was ``left`` whatever its power there) are not compared, and the note states
    the verdict the present power rule gives the same evidence.
    """
    version = int(data.get("format_version", 0))
    if version >= 5:
        return (), None
    if version >= 3:
        # Before version 5 an event whose pair was left at an earlier look was "left" whatever
        # its power there, and the headline detectable δ was taken over the events drawn to the
        # end: the witnesses' figures are as before, the result's own are not compared.
        note = (
            f"format version {version}: an event left at an earlier look was labelled 'left' "
            "whatever its power there, so the result's power figures are not compared; under "
            f"the present rule (a left event keeps the power of its own look) it is "
            f"{rebuilt.verdict.upper()}"
        )
        if data.get("verdict") != rebuilt.verdict:
            note += f", not the recorded {str(data.get('verdict')).upper()}"
        return _POWER_RESULT_FIELDS, note
    skip = list(_POWER_RESULT_FIELDS)
    for where in ("epsilon_witness", "delta_witness"):
        skip += [f"{where}.{name}" for name in _POWER_FIELDS]
    for i in range(len(data.get("witnesses") or [])):
        skip += [f"witnesses[{i}].{name}" for name in _POWER_FIELDS]
    note = (
        f"format version {data.get('format_version', 0)}: its power figures were computed at "
        "the observed Q and as a minimum over events, so they are not compared; under the "
        f"present rule (power on every event, at every Q of its interval) it is "
        f"{rebuilt.verdict.upper()}"
    )
    if data.get("verdict") == rebuilt.verdict:
        return tuple(skip), note
    return tuple(skip), note + f", not the recorded {str(data.get('verdict')).upper()}"


def _grey_plan_problems(data: dict, sampler) -> list[str]:
    """``evidence.options.grey_delta`` against what the rebuilt mechanism plans (from version 4):
    the stage's α share is derived from the mechanism and ``black_box``, never from the file."""
    from dpaudit.auditor.greybox.delta_stage import plans_grey_delta

    evidence = data.get("evidence") or {}
    options = evidence.get("options")
    if int(data.get("format_version", 0)) < 4 or "offline" in evidence:
        return []
    if not isinstance(options, dict) or not isinstance(options.get("grey_delta"), bool):
        return []  # dpaudit.levels names a missing or malformed option
    planned = plans_grey_delta(sampler, bool(options.get("black_box", False)))
    if options["grey_delta"] == planned:
        return []
    return [
        f"evidence.options.grey_delta: recorded {str(options['grey_delta']).lower()}, but the "
        f"rebuilt mechanism {'plans' if planned else 'does not plan'} the grey-box δ stage "
        f"(black_box = {str(bool(options.get('black_box', False))).lower()}; "
        "dpaudit.auditor.greybox.delta_stage.plans_grey_delta)"
    ]


def _file_problems(data, sampler, claim, relation, notes):
    """``(rebuilt result, level, problems, notes)``: the file read against itself and the
    rebuilt mechanism (claim, copies, the grey-box stage's plan and rerun, the recomputed result)."""
    problems = []
    recorded = data["claim"]
    if not (
        values_close(float(recorded["epsilon"]), float(claim.epsilon))
        and values_close(float(recorded["delta"]), float(claim.delta))
        and recorded["neighbours"] == str(relation)
    ):
        problems.append(
            f"claim: the file records ({recorded['epsilon']:g}, {recorded['delta']:g}), "
            f"{recorded['neighbours']}, but the rebuilt mechanism's claim is "
            f"({claim.epsilon:g}, {claim.delta:g}), {relation}"
        )
    problems += copies_disagree(data)
    problems += _grey_plan_problems(data, sampler)
    rebuilt, level, found = recomputed_result(data, claim, relation)
    problems += found
    if not found:
        problems += _grey_rerun_problems(data, sampler, claim, level)
    notes = (*notes, *level.notes)
    skip, power_note = _power_fields_of_older_version(data, rebuilt)
    difference = first_difference(data, rebuilt.to_dict(), skip=("format_version", "claim", *skip))
    if difference:
        problems.append(difference)
    problems += _passes_beyond_the_present_rule(data, rebuilt)
    if power_note:  # before the level's notes, which say how the level was derived
        notes = (*notes[: len(notes) - len(level.notes)], power_note, *level.notes)
    return rebuilt, level, problems, notes


def _passes_beyond_the_present_rule(data: dict, rebuilt) -> list[str]:
    """A version 3-4 file may not record a PASS that the present power rule does not grant.

    Its power figures are not compared (``_power_fields_of_older_version``), but the present rule
    covers every event the old one did and more, so a genuine file of those versions that PASSED
    still PASSES; a file that lowered its ``format_version`` to skip the comparison does not.
    """
    version = int(data.get("format_version", 0))
    if 3 <= version < 5 and data.get("verdict") == "passed" and rebuilt.verdict != "passed":
        return [
            f"the file records PASSED, but its evidence under the present power rule is "
            f"{rebuilt.verdict.upper()}; a file of format version {version} may record no more "
            "than that rule grants (a left event only gained power in version 5)"
        ]
    return []


def _exact_witness_check(index, w, sampler, claim, each, valued, laws) -> WitnessCheck:
    """The check of witness ``index`` under the exact law (``valued``: its probabilities over real
    values, else the laws of its histograms, cached in ``laws``)."""
    from dpaudit.exact import output_law, working_precision

    with working_precision():
        if valued is not None:
            p, q = valued
        else:
            for h in (w.counts, w.counts2):
                if h not in laws:
                    laws[h] = output_law(sampler, np.array(h, dtype=np.int64))
            p = _exact_probability(laws[w.counts], w.event)
            q = _exact_probability(laws[w.counts2], w.event)
        return _exact_check(index, w, p, q, claim, each)


def _sampled_witness_check(index, w, sampler, claim, each, samples, fresh_seed) -> WitnessCheck:
    """The check of witness ``index`` on fresh samples (stream ``(fresh_seed, index)``): Fisher's
    tests against the recorded hits, and the bound the fresh hits give."""
    from scipy.stats import fisher_exact

    from dpaudit.auditor.bounds.statistics import event_bounds
    from dpaudit.auditor.sources.sampling import sample_counts
    from dpaudit.auditor.values.outcome_events import events_hits

    n_p = int(samples or w.samples_p)
    n_q = int(samples or w.samples_q)
    root = np.random.SeedSequence(fresh_seed, spawn_key=(index,))
    seq_p, seq_q = root.spawn(2)
    # An event over real values carries the encoder its keys are made by.
    encoder = getattr(w.event, "encoder", None)
    try:
        counter_p = sample_counts(sampler.sample, np.array(w.counts), n_p, seq_p, encoder=encoder)
        counter_q = sample_counts(sampler.sample, np.array(w.counts2), n_q, seq_q, encoder=encoder)
    except Exception as error:  # the mechanism's own failure: the re-check could not run
        raise CannotRecheck(f"the mechanism raised {type(error).__name__}: {error}") from error
    hits_p = int(events_hits([w.event], counter_p)[0])
    hits_q = int(events_hits([w.event], counter_q)[0])
    tests = [
        fisher_exact([[w.hits_p, w.samples_p - w.hits_p], [hits_p, n_p - hits_p]]).pvalue,
        fisher_exact([[w.hits_q, w.samples_q - w.hits_q], [hits_q, n_q - hits_q]]).pvalue,
    ]
    agrees = bool(min(tests) > each)
    p_low, q_high, eps_b, _ = event_bounds(
        hits_p, n_p, hits_q, n_q, each, claim.epsilon, claim.delta
    )
    return WitnessCheck(
        index,
        "sampled",
        hits_p / n_p,
        hits_q / n_q,
        w.p_low,
        w.q_high,
        agrees,
        float(eps_b),
        bool(eps_b > claim.epsilon) or curve_exceeded(claim, p_low, q_high),
        f"Fisher p = {tests[0]:.3g}, {tests[1]:.3g} (each at {each:.3g}); "
        f"{hits_p}/{n_p} vs {hits_q}/{n_q}",
    )


def _verdict_findings(data, sampler, claim, use_exact, rebuilt, checks, level, problems, notes):
    """``(problems, notes)`` with what the checks say of the verdict: a VIOLATION the exact law
    does not reproduce, the grey-box δ stage's bound against the exact law, a miss within alpha."""
    grey_exact = _grey_violation_exactly(data, sampler, claim, use_exact)
    grey_holds = grey_exact is not None and grey_exact[0]
    # Q = 0 as declared, and the bound above the exact P: a miss the stage allows at its alpha.
    grey_miss = grey_exact is not None and not grey_exact[0] and grey_exact[2] == 0.0
    unreproduced = bool(
        rebuilt.violation
        and checks
        and all(c.route == "exact" for c in checks)
        and not any(c.violates for c in checks)
        and not grey_holds
        and not grey_miss
    )
    if grey_miss and grey_exact is not None:
        notes = (
            *notes,
            "a genuine miss within the audit's alpha: evidence.greybox.delta's bound is above "
            f"the exact P(S | D) = {grey_exact[1]:.6g}, which the stage allows with probability "
            "at most its alpha"
            + ("" if any(c.violates for c in checks) else "; the VIOLATION rests on that miss"),
        )
    elif grey_exact is not None and not grey_holds:
        problems.append(
            "evidence.greybox.delta: its bound exceeds the claimed δ, but under the exact law "
            f"P(S | D') = {grey_exact[2]:.3g} > 0: the mechanism's declared output support is false"
        )
    missed = [c for c in checks if c.missed]
    if missed and not problems and all(c.agrees for c in checks):
        notes = (*notes, _miss_note(missed, float(data["alpha"]), level, unreproduced))
    elif unreproduced:
        problems.append("violation: no witness's event violates the claim under the exact law")
    return problems, notes


def _recheck(data, sampler, claim, relation, notes, samples, seed, alpha, exact):
    from dpaudit.auditor import AuditResult
    from dpaudit.auditor.results.result_format import result_digest

    rebuilt, level, problems, notes = _file_problems(data, sampler, claim, relation, notes)
    witnesses = AuditResult.from_dict(data).witnesses
    if any(not (0 <= w.hits_p <= w.samples_p and 0 <= w.hits_q <= w.samples_q) for w in witnesses):
        witnesses = ()  # impossible counts: nothing to test against the mechanism
    use_exact = _has_exact_law(sampler) if exact is None else bool(exact)
    n_tests = 2 * max(len(rebuilt.witnesses), 1)
    each = float(alpha) / n_tests
    fresh_seed = None
    checks = []
    laws: dict = {}
    for index, w in enumerate(witnesses, 1):
        small = max(len(w.counts), len(w.counts2)) <= EXACT_MAX_ITEMS
        valued = _value_probabilities(sampler, w) if exact is not False and small else None
        if valued is not None or (use_exact and (small or exact)):
            checks.append(_exact_witness_check(index, w, sampler, claim, each, valued, laws))
            continue
        if fresh_seed is None:
            # 128 bits of fresh entropy, as numpy's SeedSequence() draws them.
            fresh_seed = secrets.randbits(128) if seed is None else int(seed)
        checks.append(_sampled_witness_check(index, w, sampler, claim, each, samples, fresh_seed))
    problems, notes = _verdict_findings(
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


#: The fields of the grey-box δ stage's record that ``recheck`` compares with the stage run again.
GREY_RERUN_FIELDS = ("items", "runs", "hits", "lower", "estimate", "detectable_delta", "violation")


def _grey_rerun_problems(data: dict, sampler, claim, level) -> list[str]:
    """The grey-box δ stage run again on the file's pair, from the audit's seed and budget.

    Its bound rests on weighted runs the file does not hold (only each part's sum), so it is
    re-derived by running the stage, not read: the same mechanism, pair, seed, level and sizes
    give the same record (a few seconds). The pair itself is checked by ``grey_delta_problems``
    (neighbours under the relation); any pair across the declared support's edge bounds δ.
    """
    from dpaudit.auditor.greybox.delta_stage import pair_record, usable

    record = ((data.get("evidence") or {}).get("greybox") or {}).get("delta")
    options = (data.get("evidence") or {}).get("options") or {}
    if not usable(record) or level.grey_alpha <= 0.0:
        return []
    try:
        d, d2 = (tuple(int(c) for c in h) for h in record["pair"])
        again = pair_record(
            sampler,
            d,
            d2,
            claim,
            alpha=level.grey_alpha,
            seed=int(data["seed"]),
            samples=int(options["samples"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        return [f"evidence.greybox.delta: the stage could not run again on its pair ({error!r})"]
    where = "evidence.greybox.delta"
    if not usable(again):
        return [
            f"{where}: recorded a bound, but the stage run again gives none ({short_json(again)})"
        ]
    problems = []
    for name in GREY_RERUN_FIELDS:
        recorded, rerun = record.get(name), again.get(name)
        if isinstance(rerun, float) and isinstance(recorded, (int, float)):
            same = not isinstance(recorded, bool) and values_close(float(recorded), rerun)
        else:
            same = recorded == rerun
        if not same:
            problems.append(
                f"{where}.{name}: recorded {short_json(recorded)}, but the stage run again on its pair "
                f"from seed {data['seed']} gives {short_json(rerun)}"
            )
    return problems


def _grey_violation_exactly(data: dict, sampler, claim, use_exact: bool):
    """``(violates, P, Q)``: whether the grey-box δ stage's violating bound holds under the exact
    law of its pair (``S`` = an outcome holding one of its items), with ``P(S | D)`` and
    ``P(S | D')``; None when it does not violate or no exact law is at hand."""
    from dpaudit.auditor.greybox.delta_stage import usable

    record = ((data.get("evidence") or {}).get("greybox") or {}).get("delta")
    if not usable(record) or not float(record["lower"]) > float(claim.delta) or not use_exact:
        return None
    d, d2 = (np.array(h, dtype=np.int64) for h in record["pair"])
    if len(d) > EXACT_MAX_ITEMS:
        return None
    from dpaudit.exact import output_law, working_precision

    items = {int(i) for i in record["items"]}
    with working_precision():
        p, q = (
            mpmath.fsum(
                pr for outcome, pr in output_law(sampler, h).items() if items & set(outcome)
            )
            for h in (d, d2)
        )
        violates = bool(p - mpmath.e ** mpmath.mpf(claim.epsilon) * q > claim.delta)
        return violates, float(p), float(q)


def _miss_note(missed, alpha: float, level, unreproduced: bool) -> str:
    """The note of a genuine miss: which intervals missed, and the α the audit allowed it."""
    where = "; ".join(
        f"witnesses[{c.index - 1}]'s interval misses the exact "
        + (
            " and ".join(
                text
                for text, miss in (
                    (f"P = {c.p:.6g} (recorded P >= {c.p_low:.6g})", c.p < c.p_low),
                    (f"Q = {c.q:.6g} (recorded Q <= {c.q_high:.6g})", c.q > c.q_high),
                )
                if miss
            )
            or "P or Q"  # a miss below double precision
        )
        for c in missed
    )
    note = (
        f"a genuine miss within the audit's alpha: {where}. The file is consistent and its hits "
        f"are plausible draws of the exact law; the audit allows its intervals to miss with "
        f"probability at most alpha = {alpha:g} in all (each one-sided interval at "
        f"{level.alpha_each:.3g})"
    )
    if unreproduced:
        note += (
            "; its VIOLATION rests on that miss: under the exact law no witness violates the claim"
        )
    return note
