"""Re-check an audit's evidence from first principles, trusting nothing the file asserts.

An :class:`~dpaudit.auditor.AuditResult` (or the JSON ``dpaudit audit --json`` wrote) keeps
every confirmed witness in full: both histograms, the event, hits and sample sizes.
:func:`recheck` treats the file as a claim by its author and recomputes everything a
reader could be misled by:

1. the mechanism is rebuilt from its recorded spec (or the one you pass), and the claim
   and neighbour relation are taken from the REBUILT mechanism (or from the claim the
   audit was explicitly told to audit, ``evidence.options.claim``); a file whose
   recorded claim differs is refused;
2. every witness's bounds are recomputed from its hits and sample sizes, at the level the
   auditor uses (``alpha / (2 M)``, ``M`` the events planned — live audits,
   :meth:`dpaudit.auditor.plan.AuditPlan.alpha_each` — or confirmed — offline audits),
   with the auditor's own functions (:func:`dpaudit.auditor.statistics.event_bounds`,
   :func:`~dpaudit.auditor.statistics.detectable_epsilon`); ``events_confirmed`` must
   be the number of witnesses, and that level must be a valid Bonferroni level for them;
3. the headline figures and the verdict are recomputed from the witnesses
   (:func:`dpaudit.auditor.confirmation.summarise`, :attr:`AuditResult.verdict`) and
   compared, field by field, with what the file says (the file's ``verdict``,
   ``violation``, ``explanation``, ``epsilon_witness`` ... included); the copies of the
   seed, alpha and power factor in the file must agree with each other;
4. each witness is then checked against the mechanism itself:

   * exact route — when :func:`dpaudit.exact.output_law` knows the mechanism (or, for an
     event over real values, :mod:`dpaudit.exact.value_laws` has it in closed form) and
     the histograms are small: the event's exact P and Q. The recorded hits must be
     plausible draws of Binomial(n, P) and Binomial(n, Q) (scipy's two-sided exact
     binomial test, each of the ``2 M`` tests at ``alpha / (2 M)``, so a genuine file is
     refused here with probability at most ``alpha``), and the recorded one-sided bounds
     must cover P and Q;
   * sampled route — otherwise: fresh samples from a seed drawn from fresh entropy
     (``numpy.random.SeedSequence()``; reported, and accepted back as ``seed=`` to
     repeat the re-check), Fisher's exact test of the recorded against the fresh counts
     (each at ``alpha / (2 M)``), and fresh one-sided bounds, valid on their own because
     the event is fixed before they are drawn.

What this cannot see: witnesses that were confirmed and then left out of the file, with
``events_confirmed`` lowered to match (the remaining ones are a consistent, smaller
audit). Only :func:`dpaudit.rerun.rerun` (``dpaudit recheck --rerun``), which repeats the
audit from spec + seed + options, sees those.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
from dataclasses import dataclass

import mpmath
import numpy as np

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

#: Relative tolerance of a recomputed number against the recorded one (JSON keeps doubles
#: exactly; this only absorbs last-digit differences between library versions).
RELATIVE_TOLERANCE = 1e-9


class CannotRecheck(Exception):
    """The audited mechanism cannot be rebuilt, or raised when run (``dpaudit recheck``: exit 4)."""


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

    def to_dict(self) -> dict:
        return {
            k: (v if not isinstance(v, float) or math.isfinite(v) else str(v))
            for k, v in self.__dict__.items()
        }


@dataclass(frozen=True)
class RecheckResult:
    """Outcome of :func:`recheck`: consistency problems, every witness re-checked, reproduction.

    ``problems`` lists, first one first, every way the file disagrees with what its own
    numbers and the rebuilt mechanism imply; ``seed`` is the fresh seed of the sampled
    route (None when every witness was checked exactly); ``digest`` the file's
    :func:`dpaudit.auditor.result_format.result_digest`; ``level`` the recomputed
    per-interval level ``alpha_each``; ``test_alpha`` the level of the re-check's tests.
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
                f"{' VIOLATES' if c.violates else ''} -> {'agrees' if c.agrees else 'DISAGREES'}"
                + (f" ({c.detail})" if c.detail else "")
            )
        if self.agrees:
            lines.append(
                "  result: evidence agrees; violation "
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
            "violation_reproduced": self.violation_reproduced,
            "problems": list(self.problems),
            "seed": self.seed,
            "digest": self.digest,
            "level": self.level,
            "test_alpha": self.test_alpha,
            "notes": list(self.notes),
            "checks": [c.to_dict() for c in self.checks],
        }


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
    """An :class:`AuditResult` from itself, its ``to_dict()``, or a JSON file path."""
    from dpaudit.auditor import AuditResult

    if isinstance(source, AuditResult):
        return source
    data = load_result_data(source)
    try:
        return AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as error:
        label = source if isinstance(source, str) else "the result"
        raise ValueError(f"{label!r} is not a dpaudit audit result: {error}") from None


def audited_mechanism(data: dict, mechanism=None, *, allow_command: bool = False):
    """``(mechanism as given to audit, sampler, claim, relation, notes)`` of a result dict.

    The mechanism is ``mechanism`` if given (anything :func:`dpaudit.audit` accepts),
    else rebuilt from ``evidence.mechanism_spec`` (built-in and catalog classes) or
    ``evidence.mechanism_source`` (``module:attr`` or ``--command`` of the CLI,
    :mod:`dpaudit.user_source`). The claim is the mechanism's own, or the one the audit
    was told to audit (``evidence.options.claim``); never the file's ``claim`` block.
    A recorded ``--command`` is run again only with ``allow_command=True``. Raises
    :class:`CannotRecheck` when nothing can be rebuilt.
    """
    from dpaudit.auditor.blackbox import as_auditable
    from dpaudit.auditor.evidence import rebuild_mechanism, relation_from_dict

    evidence = data.get("evidence") or {}
    options = evidence.get("options") or {}
    notes = []
    if mechanism is None:
        spec = evidence.get("mechanism_spec")
        source = evidence.get("mechanism_source")
        child = str((spec or {}).get("class", "")).endswith(":SubprocessMechanism")
        try:
            if source is not None:
                from dpaudit.user_source import rebuild_user_mechanism

                mechanism = rebuild_user_mechanism(source, allow_command=allow_command)
            elif child and not allow_command:
                raise CannotRecheck(
                    "the audit ran a child process whose command the result file names; a "
                    "recheck runs it again only when allowed (--allow-command, "
                    "allow_command=True)"
                )
            elif spec is not None:
                mechanism = rebuild_mechanism(spec)
                if child:  # the spec keeps its claim as a plain tuple
                    from dpaudit.auditor.blackbox import make_claim

                    mechanism = dataclasses.replace(
                        mechanism, declared_claim=make_claim(mechanism.declared_claim)
                    )
            else:
                raise CannotRecheck(
                    "the result records no rebuildable mechanism (a black box from Python?): "
                    "recheck it from Python with recheck(result, mechanism=...)"
                )
        except (ValueError, TypeError, ImportError, AttributeError) as error:
            raise CannotRecheck(f"cannot rebuild the audited mechanism: {error}") from None
    claim = None
    if options.get("claim") is not None:
        claim = (
            *map(float, options["claim"]),
            relation_from_dict(options.get("claim_relation") or {"kind": "add-remove"}),
        )
    elif not hasattr(mechanism, "claim"):
        # A plain callable has no claim of its own; only the file can say what was claimed.
        recorded = data["claim"]
        claim = (float(recorded["epsilon"]), float(recorded["delta"]))
        notes.append("a plain callable has no claim of its own: the recorded claim is used")
    try:
        sampler, declared, _ = as_auditable(
            mechanism,
            claim,
            options.get("width"),
            options.get("name"),
            bool(options.get("batched", False)),
            int(options.get("values", 0) or 0),
        )
    except (ValueError, TypeError) as error:
        raise CannotRecheck(f"cannot audit the rebuilt mechanism: {error}") from None
    relation = declared.neighbours
    if options.get("neighbours") is not None:
        relation = relation_from_dict(options["neighbours"])
    if options.get("claim") is not None:
        notes.append(
            f"the audit was told to audit the claim ({declared.epsilon:g}, {declared.delta:g})"
            + (
                f" instead of the mechanism's own ({mechanism.claim.epsilon:g}, "
                f"{mechanism.claim.delta:g})"
                if hasattr(mechanism, "claim")
                else ""
            )
        )
    return mechanism, sampler, declared, relation, tuple(notes)


def _close(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            x, y = float(a), float(b)
        except (TypeError, ValueError):
            return False
        if math.isnan(x) and math.isnan(y):
            return True
        return x == y or math.isclose(x, y, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-300)
    return a == b


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def first_difference(recorded, computed, path="", skip=(), label="recomputed") -> str | None:
    """``path: recorded X, <label> Y`` for the first place two JSON values differ, else None.

    Dicts are walked in the recorded key order (then keys only ``computed`` has), lists
    by index; numbers agree within :data:`RELATIVE_TOLERANCE`. ``skip`` holds paths
    (``"seconds"``, ``"evidence.date"``) left out.
    """
    if path in skip:
        return None
    if isinstance(recorded, dict) and isinstance(computed, dict):
        for key in list(recorded) + [k for k in computed if k not in recorded]:
            sub = f"{path}.{key}" if path else str(key)
            if sub in skip:
                continue
            if key not in computed:
                return f"{sub}: recorded {_short(recorded[key])}, not in the {label} result"
            if key not in recorded:
                return f"{sub}: not recorded, {label} {_short(computed[key])}"
            found = first_difference(recorded[key], computed[key], sub, skip, label)
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(computed, list):
        if len(recorded) != len(computed):
            return f"{path}: recorded {len(recorded)} entries, {label} {len(computed)}"
        for i, (a, b) in enumerate(zip(recorded, computed)):
            found = first_difference(a, b, f"{path}[{i}]", skip, label)
            if found:
                return found
        return None
    if isinstance(recorded, bool) != isinstance(computed, bool) or not _close(recorded, computed):
        return f"{path}: recorded {_short(recorded)}, {label} {_short(computed)}"
    return None


def _level(data: dict, n_witnesses: int) -> tuple[float, int]:
    """``(alpha_each, events the Bonferroni correction covers)`` the auditor used."""
    from dpaudit.auditor.plan import AuditPlan

    alpha = float(data["alpha"])
    evidence = data.get("evidence") or {}
    options = evidence.get("options") or {}
    if "offline" in evidence or "keep" not in options:
        # Offline audits (and files without options): Bonferroni over the events confirmed.
        covered = max(n_witnesses, 1)
        return alpha / (2 * covered), covered
    plan = AuditPlan(
        samples=max(int(options.get("samples", 1000)), 1000),
        seed=0,
        alpha=alpha,
        keep=int(options["keep"]),
        events_per_pair=int(options["events_per_pair"]),
    )
    level = plan.alpha_each(int(data["pairs_screened"]))
    return level, round(alpha / (2 * level))


def _seed_in_command(command: str):
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    if tokens[:2] != ["dpaudit", "audit"] or any(t.startswith("--from-samples") for t in tokens):
        return None
    for i, token in enumerate(tokens):
        if token == "--seed" and i + 1 < len(tokens):
            return tokens[i + 1]
        if token.startswith("--seed="):
            return token.split("=", 1)[1]
    return "0"  # the CLI's default


def _copies_agree(data: dict) -> list[str]:
    """The seed, alpha, power factor and restriction recorded in several places agree."""
    evidence = data.get("evidence") or {}
    options = evidence.get("options") or {}
    problems = []
    copies = {
        "seed": [
            ("evidence.seed", evidence.get("seed")),
            ("evidence.options.seed", options.get("seed")),
        ],
        "alpha": [("evidence.options.alpha", options.get("alpha"))],
        "power_factor": [("evidence.options.power_factor", options.get("power_factor"))],
        "restricted": [("evidence.options.restrict", options.get("restrict"))],
    }
    if "offline" not in evidence:
        command_seed = _seed_in_command(str(evidence.get("command", "")))
        if command_seed is not None:
            copies["seed"].append(("the --seed of evidence.command", int(command_seed)))
    for field, others in copies.items():
        for where, value in others:
            if value is not None and not _close(data.get(field), value):
                problems.append(
                    f"{field}: recorded {_short(data.get(field))}, but {where} is {_short(value)}"
                )
    return problems


def _recomputed(data: dict, claim, relation) -> tuple[object, float, list[str]]:
    """The result its own witnesses imply under ``claim``; the level; problems found."""
    from dpaudit.auditor import AuditResult
    from dpaudit.auditor.confirmation import summarise
    from dpaudit.auditor.statistics import detectable_epsilon, event_bounds
    from dpaudit.neighbours.relations import is_neighbour

    problems = []
    loaded = AuditResult.from_dict(data)
    level, covered = _level(data, len(loaded.witnesses))
    if len(loaded.witnesses) > covered:
        problems.append(
            f"witnesses: {len(loaded.witnesses)} confirmed events, but the bounds' level "
            f"alpha / (2 x {covered}) covers only {covered} (Bonferroni)"
        )
    witnesses = []
    for i, w in enumerate(loaded.witnesses):
        if not (0 <= w.hits_p <= w.samples_p and 0 <= w.hits_q <= w.samples_q and w.samples_p):
            problems.append(f"witnesses[{i}]: hits outside 0..samples or no samples")
            return loaded, level, problems
        if len(w.counts) != len(w.counts2) or not is_neighbour(
            np.asarray(w.counts), np.asarray(w.counts2), relation
        ):
            problems.append(
                f"witnesses[{i}]: {list(w.counts)} and {list(w.counts2)} are not neighbours "
                f"under {relation}"
            )
        p_low, q_high, eps_b, delta_b = event_bounds(
            w.hits_p, w.samples_p, w.hits_q, w.samples_q, level, claim.epsilon, claim.delta
        )
        power = detectable_epsilon(
            w.hits_q, w.samples_p, w.samples_q, level, claim.epsilon, claim.delta
        )
        witnesses.append(
            dataclasses.replace(
                w,
                p_low=float(p_low),
                q_high=float(q_high),
                epsilon_lower=float(eps_b),
                delta_lower=float(delta_b),
                detectable_epsilon=float(power),
            )
        )
    summary = summarise(witnesses, claim)
    rebuilt = dataclasses.replace(
        loaded,
        claim_epsilon=float(claim.epsilon),
        claim_delta=float(claim.delta),
        neighbours=str(relation),
        epsilon_lower=float(summary["epsilon_lower"]),
        delta_lower=float(summary["delta_lower"]),
        violation=summary["violation"],
        epsilon_witness=summary["epsilon_witness"],
        delta_witness=summary["delta_witness"],
        witnesses=tuple(witnesses),
        events_confirmed=len(witnesses),
        detectable_epsilon=float(summary["detectable_epsilon"]),
        separated=summary["separated"],
    )
    return rebuilt, level, problems


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
    violates = bool(p > mpmath.e**claim.epsilon * q + claim.delta)
    detail = f"binomial p = {tests[0]:.3g}, {tests[1]:.3g} (each at {each:.3g})"
    if not plausible:
        detail += "; the recorded hits are not draws of the exact law"
    if not covers:
        detail += "; the recorded bounds do not cover the exact P and Q"
    return WitnessCheck(
        index,
        "exact",
        float(p),
        float(q),
        w.p_low,
        w.q_high,
        covers and plausible,
        eps,
        violates,
        detail,
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

    Parameters
    ----------
    source : an AuditResult, its ``to_dict()``, or the path of the JSON ``--json`` wrote.
    mechanism : the mechanism audited, anything :func:`dpaudit.audit` accepts (a plain
        callable is wrapped as the audit wrapped it, from ``evidence.options``); default:
        rebuilt from the recorded spec.
    samples : fresh samples per histogram for the sampled route (default: as recorded).
    seed : seed of the fresh samples (default: fresh entropy, reported in the result).
    alpha : level of the re-check's tests in all (binomial tests against the exact law,
        Fisher's tests against fresh samples), Bonferroni over the ``2 M`` tests of ``M``
        witnesses; also the level of the fresh bounds.
    exact : force (True) or forbid (False) the exact route; default: exact when possible.
    allow_command : run a recorded ``--command`` child again (:mod:`dpaudit.user_source`).
    """
    from dpaudit.auditor import AuditResult

    data = load_result_data(source)
    try:
        AuditResult.from_dict(data)
    except (KeyError, TypeError, ValueError) as error:
        label = source if isinstance(source, str) else "the result"
        raise ValueError(f"{label!r} is not a dpaudit audit result: {error}") from None
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
    from dpaudit.auditor.events import events_hits
    from dpaudit.auditor.result_format import result_digest
    from dpaudit.auditor.sampling import sample_counts
    from dpaudit.auditor.statistics import event_bounds

    problems = []
    recorded = data["claim"]
    if not (
        _close(float(recorded["epsilon"]), float(claim.epsilon))
        and _close(float(recorded["delta"]), float(claim.delta))
        and recorded["neighbours"] == str(relation)
    ):
        problems.append(
            f"claim: the file records ({recorded['epsilon']:g}, {recorded['delta']:g}), "
            f"{recorded['neighbours']}, but the rebuilt mechanism's claim is "
            f"({claim.epsilon:g}, {claim.delta:g}), {relation}"
        )
    problems += _copies_agree(data)
    rebuilt, level, found = _recomputed(data, claim, relation)
    problems += found
    difference = first_difference(data, rebuilt.to_dict(), skip=("format_version", "claim"))
    if difference:
        problems.append(difference)

    use_exact = _has_exact_law(sampler) if exact is None else bool(exact)
    n_tests = 2 * max(len(rebuilt.witnesses), 1)
    each = float(alpha) / n_tests
    fresh_seed = None
    checks = []
    laws: dict = {}
    for index, w in enumerate(AuditResult.from_dict(data).witnesses, 1):
        small = max(len(w.counts), len(w.counts2)) <= EXACT_MAX_ITEMS
        valued = _value_probabilities(sampler, w) if exact is not False and small else None
        if valued is not None or (use_exact and (small or exact)):
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
                checks.append(_exact_check(index, w, p, q, claim, each))
            continue
        from scipy.stats import fisher_exact

        if fresh_seed is None:
            fresh_seed = int(np.random.SeedSequence().entropy) if seed is None else int(seed)
        n_p = int(samples or w.samples_p)
        n_q = int(samples or w.samples_q)
        root = np.random.SeedSequence(fresh_seed, spawn_key=(index,))
        seq_p, seq_q = root.spawn(2)
        # An event over real values carries the encoder its keys are made by.
        encoder = getattr(w.event, "encoder", None)
        try:
            counter_p = sample_counts(
                sampler.sample, np.array(w.counts), n_p, seq_p, encoder=encoder
            )
            counter_q = sample_counts(
                sampler.sample, np.array(w.counts2), n_q, seq_q, encoder=encoder
            )
        except Exception as error:  # the mechanism's own failure: the re-check could not run
            raise CannotRecheck(f"the mechanism raised {type(error).__name__}: {error}") from error
        hits_p = int(events_hits([w.event], counter_p)[0])
        hits_q = int(events_hits([w.event], counter_q)[0])
        tests = [
            fisher_exact([[w.hits_p, w.samples_p - w.hits_p], [hits_p, n_p - hits_p]]).pvalue,
            fisher_exact([[w.hits_q, w.samples_q - w.hits_q], [hits_q, n_q - hits_q]]).pvalue,
        ]
        agrees = bool(min(tests) > each)
        _, _, eps_b, _ = event_bounds(hits_p, n_p, hits_q, n_q, each, claim.epsilon, claim.delta)
        checks.append(
            WitnessCheck(
                index,
                "sampled",
                hits_p / n_p,
                hits_q / n_q,
                w.p_low,
                w.q_high,
                agrees,
                float(eps_b),
                bool(eps_b > claim.epsilon),
                f"Fisher p = {tests[0]:.3g}, {tests[1]:.3g} (each at {each:.3g}); "
                f"{hits_p}/{n_p} vs {hits_q}/{n_q}",
            )
        )
    if (
        rebuilt.violation
        and checks
        and all(c.route == "exact" for c in checks)
        and not any(c.violates for c in checks)
    ):
        problems.append("violation: no witness's event violates the claim under the exact law")
    return RecheckResult(
        str(data.get("mechanism")),
        rebuilt.verdict,
        tuple(checks),
        tuple(problems),
        fresh_seed,
        result_digest(data),
        level,
        float(alpha),
        notes,
    )
