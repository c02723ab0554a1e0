"""Outcome files as a sample source, and the audit that runs the one pipeline over them.

Reference: [`dpaudit.auditor.offline`][dpaudit.auditor.offline] (why the bounds are valid). The
source reads every file once, with exactly the planned rows; it serves the select split to screening
and selection and the confirm split only after selection is closed by the first confirm
draw, after which any further select draw is refused. So nothing is chosen from the
confirm split and no sample size depends on the data: the no-optional-stopping rule is a
property of [`FileDraws`][dpaudit.auditor.offline.source.FileDraws], not of its caller.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from dpaudit.neighbours.pairs import NeighbourPair
from dpaudit.provenance import relation_from_dict
from mechanisms import PrivacyClaim

from ..confirm.confirmation import summarise
from ..interfaces import Tally
from ..results.evidence import evidence_record
from ..results.power import DEFAULT_POWER_FACTOR
from ..results.result import AuditResult
from ..run.pipeline import run_pipeline
from ..sources.sampling import count_batch
from .files import _duckdb, _find_files, check_reuse, file_sha256
from .plan import SPLITS, OfflineInputError, read_plan
from .readers import read_outcomes

__all__ = ["FileDraws", "FileSchedule", "audit_from_samples"]


class FileDraws:
    """The outcome files of a plan, served as tallies: select split first, confirm split last.

    Parameters
    ----------
    directory : a plan's directory with its ``outcomes/`` filled.
    plan : its [`plan.read_plan`][dpaudit.auditor.offline.plan.read_plan] data.
    """

    description = "offline outcome files"

    def __init__(self, directory, plan: dict):
        self.files = _find_files(directory, plan)
        self.width = int(plan["width"])
        self.value_width = int(plan.get("values", 0) or 0)
        self._splits: dict[str, dict[tuple, Any]] = {split: {} for split in SPLITS}
        batches = {}
        connection = None
        if any(not path.endswith(".jsonl") for path in self.files.values()):
            connection = _duckdb().connect()
        for h in plan["histograms"]:
            counts = tuple(int(v) for v in h["counts"])
            for split in SPLITS:
                batch = self._read(plan, h, split, connection)
                batches[(h["id"], split)] = batch
                self._splits[split][counts] = batch
        if connection is not None:
            connection.close()
        check_reuse(batches)
        self._samples = sum(len(b) for b in batches.values())
        self.confirming = False

    def _read(self, plan, h, split, connection):
        path = self.files[(h["id"], split)]
        batch = read_outcomes(
            path,
            width=self.width,
            domain_size=int(plan["domain_size"]),
            connection=connection,
            values=self.value_width,
        )
        if len(batch) != int(h[split]):
            raise OfflineInputError(
                f"{path} holds {len(batch)} outcomes; the plan wants "
                f"exactly {h[split]} (no more, no fewer)"
            )
        return batch

    @property
    def samples(self) -> int:
        """Every outcome read, used or not (the plan's cost)."""
        return self._samples

    def _served(self, phase: str, histograms, per_histogram) -> list:
        if phase == "confirm":
            self.confirming = True
        elif self.confirming:
            raise RuntimeError(
                f"a {phase!r} draw after confirmation began: choices are made on the select "
                "split only, before the confirm split is read"
            )
        split = "confirm" if phase == "confirm" else "select"
        found = [self._splits[split][h] for h in histograms]
        if per_histogram is not None and any(len(b) != per_histogram for b in found):
            raise ValueError(
                f"per_histogram={per_histogram}: outcome files hold the planned rows; pass None"
            )
        return found

    def draw(self, phase, round_, histograms, per_histogram, encoder=None) -> dict[tuple, Tally]:
        batches = self._served(phase, histograms, per_histogram)
        count = count_batch if encoder is None else encoder.count
        return {h: Tally(count(b), len(b)) for h, b in zip(histograms, batches)}

    def raw(self, phase, round_, histograms, per_histogram) -> list:
        return self._served(phase, histograms, per_histogram)


@dataclass(frozen=True)
class FileSchedule:
    """The fixed design of an offline plan (the [`schedule.Schedule`][dpaudit.auditor.run.schedule.Schedule] of files).

    One screening round on the whole select split when there are more pairs than
    ``keep``; events chosen on the select split; predictions for the planned confirm
    sizes; Bonferroni over the events actually chosen (a number the select split fixes).
    """

    keep: int
    events_per_pair: int
    alpha: float
    n_pairs: int
    confirm_sizes: dict

    @classmethod
    def of(cls, plan: dict) -> FileSchedule:
        sizes = {tuple(int(v) for v in h["counts"]): int(h["confirm"]) for h in plan["histograms"]}
        return cls(
            int(plan["keep"]),
            int(plan["events_per_pair"]),
            float(plan["alpha"]),
            len(plan["pairs"]),
            sizes,
        )

    #: An offline plan's selection always picks for δ as well (its design is fixed in advance).
    chases_delta = True

    @property
    def alpha_each(self) -> float:
        """The level the predictions assume (a live plan's [`alpha_each`][dpaudit.auditor.AuditPlan.alpha_each])."""
        return self.alpha / (2 * max(1, min(self.keep, self.n_pairs)) * self.events_per_pair)

    def screen_rounds(self, n_candidates):
        return 1 if n_candidates > self.keep else 0

    def screen_size(self, rounds, n_histograms):
        return None

    def screen_target(self, candidates):
        return min(self.confirm_sizes.values())

    def select_size(self, n_histograms, screened):
        return 0 if screened else None  # screening already drew the whole select split

    def select_target(self, pairs, n_kept):
        return min(self.confirm_sizes[h] for p in pairs for h in (p.counts, p.counts2))

    def confirm_size(self, n_histograms):
        return None

    def confirm_looks(self, n_histograms):
        return None  # one confirmation of the planned size, at the full level

    def confirm_alpha(self, n_chosen):
        return self.alpha / (2 * n_chosen) if n_chosen else self.alpha_each

    def pilot(self, histograms):
        return list(histograms), None

    def learn_size(self, n_kept):
        return None

    def select_extra(self, n_kept):
        return 0

    def pair_confirm_size(self, n_kept):
        return None

    def value_looks(self, n_kept):
        return None  # one confirmation of the planned size per selection

    def samples_left(self, drawn):
        return None  # the files hold what the plan fixed


def plan_pairs(plan: dict) -> list[NeighbourPair]:
    """The candidate pairs a plan fixed, in its order."""
    counts_of = {h["id"]: tuple(int(v) for v in h["counts"]) for h in plan["histograms"]}
    return [NeighbourPair(counts_of[p["p"]], counts_of[p["q"]], p["family"]) for p in plan["pairs"]]


def audit_from_samples(
    directory, *, power_factor=DEFAULT_POWER_FACTOR, evidence=None, epsilon_only=False
) -> AuditResult:
    """Audit from the outcome files of a plan; return the usual [`result.AuditResult`][dpaudit.auditor.results.result.AuditResult].

    Reference: [`dpaudit.auditor.offline`][dpaudit.auditor.offline] (the sample-splitting rules);
    the bounds are those of [`confirmation`][dpaudit.auditor.confirm.confirmation] (one-sided
    Clopper–Pearson, DP-Sniper's ε and δ bounds).

    Parameters
    ----------
    directory : a directory written by [`plan.write_plan`][dpaudit.auditor.offline.plan.write_plan]
        with ``outcomes/`` filled.
    power_factor : PASSED needs a detectable ε <= this × the claimed ε (and δ likewise).
    evidence : extra entries for the result's evidence (e.g. the command line).
    epsilon_only : accept a pass on ε alone when the plan cannot resolve the claimed δ.
    """
    started = time.perf_counter()
    if not (isinstance(power_factor, (int, float)) and power_factor >= 1):
        raise ValueError(f"power_factor must be a number >= 1, got {power_factor!r}")
    plan = read_plan(directory)
    relation = relation_from_dict(plan["relation"])
    claim = PrivacyClaim(float(plan["claim"]["epsilon"]), float(plan["claim"]["delta"]), relation)
    source = FileDraws(directory, plan)
    pairs = plan_pairs(plan)
    findings = run_pipeline(source, pairs, claim, FileSchedule.of(plan))
    offline = {
        "directory": os.path.abspath(os.fspath(directory)),
        "plan_sha256": plan["plan_sha256"],
        "plan_dpaudit_version": plan.get("dpaudit_version"),
        "kept_pairs": [[list(p.counts), list(p.counts2)] for p in findings.kept],
        "files": {os.path.basename(path): file_sha256(path) for path in source.files.values()},
    }
    extra = {"offline": offline, **(evidence or {})}
    return AuditResult.from_summary(
        summarise(findings.witnesses, claim, power_factor),
        mechanism=f"{plan['mechanism']} (offline files)",
        claim=claim,
        relation=relation,
        alpha=float(plan["alpha"]),
        witnesses=findings.witnesses,
        samples=source.samples,
        seconds=time.perf_counter() - started,
        pairs_screened=len(pairs),
        seed=int(plan["seed"]),
        power_factor=power_factor,
        restricted=plan.get("restricted", False),
        epsilon_only=epsilon_only,
        evidence=evidence_record(
            relation, int(plan["seed"]), plan.get("mechanism_spec"), source.description, extra
        ),
    )
