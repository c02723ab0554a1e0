"""The grey-box view of a live audit: coupled runs on the audit's own pairs.

Issue 43, items 2 and 4. A live audit of a Python mechanism that draws only from the ``rng``
it is given (checked first, [`replay.check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng])
also runs each pair it confirmed, and the first candidates it screened, on one recorded stream
for both neighbours ([`coupling.coupled_runs`][dpaudit.auditor.greybox.coupling.coupled_runs], after
Re:cord-play, Cebere et al., PETS 2026). Where the two traces part, the control flow reads the
data, and the call site is named; draws whose law moves only in a location are priced
([`laws.draw_cost`][dpaudit.auditor.greybox.laws.draw_cost]) and composed per run.

What it is and is not: evidence about the code, recorded in the result beside the verdict. It
spends no α and changes no bound or verdict, because a branch on the data is not by itself a
violation (FixedThreshold reads its domain from the data and δ pays for it); the sampled bounds
decide. The runs draw on their own seed stream (spawn key ``SCAN_KEY``), so every sampled
tally is the same with the scan on or off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .coupling import coupled_runs

__all__ = ["MAX_SCANNED", "SCAN_KEY", "SCAN_RUNS", "GreyBoxScan", "PairScan", "scan_pairs"]

#: Spawn key of the scan's stream (apart from every phase's, the replay check's 98, the pairs' 99).
SCAN_KEY = 97
#: Coupled runs per pair: a branch on the data alone parts the traces in the first run, one on
#: noisy values in a share of them.
SCAN_RUNS = 8
#: Pairs scanned at most: the confirmed ones first, then the candidates in screening order.
MAX_SCANNED = 48


@dataclass(frozen=True)
class PairScan:
    """What the coupled runs of one pair found (only pairs with a finding are kept).

    Parameters
    ----------
    counts, counts2 : the pair.
    divergent_runs : how many of the runs' traces parted (0: the draws never read the data).
    divergence : the first divergence in words (``Divergence.__str__``), "" if none.
    site : ``file:line`` of the first divergent call, "" if none or unknown.
    priced_epsilon : the largest composition over a run of the priced draws' pure ε (0.0 if
        none moved; ``inf`` for an unbounded shift, Gaussian or Gumbel).
    priced_site : the call site of the costliest priced draw ("" if none).
    """

    counts: tuple
    counts2: tuple
    divergent_runs: int
    divergence: str
    site: str
    priced_epsilon: float
    priced_site: str

    def to_dict(self) -> dict:
        return {
            "counts": list(self.counts),
            "counts2": list(self.counts2),
            "divergent_runs": self.divergent_runs,
            "divergence": self.divergence,
            "site": self.site,
            "priced_epsilon": self.priced_epsilon if math.isfinite(self.priced_epsilon) else "inf",
            "priced_site": self.priced_site,
        }

    @classmethod
    def from_dict(cls, data: dict) -> PairScan:
        return cls(
            tuple(int(v) for v in data["counts"]),
            tuple(int(v) for v in data["counts2"]),
            int(data["divergent_runs"]),
            str(data["divergence"]),
            str(data["site"]),
            float(data["priced_epsilon"]),
            str(data["priced_site"]),
        )


@dataclass(frozen=True)
class GreyBoxScan:
    """The grey-box scan of an audit: which pairs' draws read the data, and where.

    Parameters
    ----------
    runs : coupled runs per pair.
    pairs_scanned : pairs run (confirmed first, then candidates).
    findings : the scanned pairs with a divergence or a priced draw, in scan order.
    skipped : why no scan ran ("" when it ran): a ``--command`` child, a library that
        cannot be seeded, ``--black-box``, or the error the mechanism raised.
    """

    runs: int
    pairs_scanned: int
    findings: tuple[PairScan, ...] = ()
    skipped: str = ""

    @property
    def divergent(self) -> tuple[PairScan, ...]:
        """The pairs whose traces parted in some run."""
        return tuple(f for f in self.findings if f.divergent_runs)

    def priced_above(self, epsilon: float) -> tuple[PairScan, ...]:
        """The pairs whose priced draws alone compose to more than ``epsilon``."""
        return tuple(f for f in self.findings if f.priced_epsilon > epsilon)

    def sentence(self, claim_epsilon: float) -> str:
        """What the scan found, in one or two sentences (the result's ``grey box:`` line)."""
        if self.skipped:
            return f"not run ({self.skipped})"
        said = [
            f"{self.pairs_scanned} pairs run on one stream for both neighbours, {self.runs} times "
            "each"
        ]
        divergent = self.divergent
        if divergent:
            first = divergent[0]
            said.append(
                f"the draws read the data on {len(divergent)} of them; first on "
                f"{list(first.counts)} vs {list(first.counts2)}: {first.divergence}. A branch "
                "on the data is a bug where the design fixes its draws first, and allowed where "
                "the claim pays for it (a domain or a stop read from the data): the sampled "
                "bounds decide"
            )
        else:
            said.append("no run's draws read the data (same calls, shapes and scales)")
        costly = self.priced_above(claim_epsilon)
        if costly:
            worst = max(costly, key=lambda f: f.priced_epsilon)
            said.append(
                f"draws whose location moves compose to ε = {worst.priced_epsilon:.3g} on "
                f"{list(worst.counts)} vs {list(worst.counts2)} (costliest at "
                f"{worst.priced_site}): above the claim, the stage to blame if the release is "
                "post-processing of these draws; loose for a noisy argmax"
            )
        return "; ".join(said) + "."

    def to_dict(self) -> dict:
        return {
            "runs": self.runs,
            "pairs_scanned": self.pairs_scanned,
            "findings": [f.to_dict() for f in self.findings],
            "skipped": self.skipped,
        }

    @classmethod
    def from_dict(cls, data: dict) -> GreyBoxScan:
        return cls(
            int(data["runs"]),
            int(data["pairs_scanned"]),
            tuple(PairScan.from_dict(f) for f in data.get("findings", ())),
            str(data.get("skipped", "")),
        )


def _pair_scan(runs_found) -> PairScan | None:
    divergence = runs_found.divergence
    costliest = max(runs_found.costs, key=lambda c: c.epsilon, default=None)
    priced = runs_found.max_run_epsilon
    if divergence is None and priced <= 0.0:
        return None
    return PairScan(
        tuple(int(v) for v in runs_found.counts),
        tuple(int(v) for v in runs_found.counts2),
        len(runs_found.divergences),
        "" if divergence is None else str(divergence),
        "" if divergence is None else divergence.site,
        float(priced),
        "" if costliest is None or priced <= 0.0 else costliest.site,
    )


def scan_pairs(
    mechanism: Any,
    pairs: Sequence[Any],
    *,
    seed: int,
    runs: int = SCAN_RUNS,
    max_pairs: int = MAX_SCANNED,
) -> GreyBoxScan:
    """Run the first ``max_pairs`` distinct ``pairs`` coupled, ``runs`` times each.

    Issue 43, item 2; see the module docstring for what a finding means.

    Parameters
    ----------
    mechanism : the auditable mechanism (``sample(counts, size, rng)``), already checked to draw
        only from its ``rng``.
    pairs : objects with ``counts`` and ``counts2`` (``NeighbourPair``, ``Witness``), in the
        order to scan; repeats are run once.
    seed : the audit's root seed; pair ``i`` runs on child ``i`` of
        ``SeedSequence(seed, spawn_key=(SCAN_KEY,))``.
    runs : coupled runs per pair (>= 1).
    max_pairs : pairs run at most (>= 1).
    """
    distinct: list[tuple[tuple, tuple]] = []
    for pair in pairs:
        key = (tuple(pair.counts), tuple(pair.counts2))
        if key not in distinct:
            distinct.append(key)
        if len(distinct) >= max_pairs:
            break
    streams = np.random.SeedSequence(int(seed), spawn_key=(SCAN_KEY,)).spawn(len(distinct))
    findings: list[PairScan] = []
    for done, ((counts, counts2), stream) in enumerate(zip(distinct, streams)):
        try:
            found = coupled_runs(mechanism, counts, counts2, seed=stream, size=runs)
        except Exception as error:  # the mechanism's own error: the sampled audit ran regardless
            return GreyBoxScan(runs, done, tuple(findings), f"the mechanism raised {error!r}")
        scanned = _pair_scan(found)
        if scanned is not None:
            findings.append(scanned)
    return GreyBoxScan(runs, len(distinct), tuple(findings))
