"""Step 4 of the structural δ: test the declared supports where a false one would show.

Issue 43, item 3. The bound of [`structural_delta`][dpaudit.auditor.greybox.structural_delta]
relies on the declaration ``P(S | D') = 0``. This runs ``D'`` where the gap items are likeliest
(under each part's own proposal, and under each probe's shift of ``D'``'s noise), then both
histograms plain; an outcome outside its declared support raises
[`DeclaredSupportError`][dpaudit.auditor.greybox.declared_support.DeclaredSupportError]. A pass
is evidence, not proof.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechanisms import BOTTOM, PAD

from .declared_support import DeclaredSupportError, check_support
from .part_bounds import GapItemBound
from .tilt_mixture import mixture_runs
from .tilt_probe import ALL_SHIFTED, probe_tilts, tiltable_draws
from .tilted_runs import weighted_runs

__all__ = ["Declared", "check_declaration"]


@dataclass(frozen=True, eq=False)
class Declared:
    """One histogram of the pair and the support its mechanism declares on it.

    Parameters
    ----------
    array : the histogram as the mechanism is given it.
    counts : the same, as a tuple of ints (for messages).
    support : ``output_support(counts)``.
    """

    array: np.ndarray
    counts: tuple[int, ...]
    support: frozenset[int]

    def event(self, how: str) -> Any:
        """An event that is never hit and checks every outcome against the support."""

        def event(outcomes: Any) -> np.ndarray:
            check_support(outcomes, self.counts, self.support, how)
            return np.zeros(np.shape(outcomes)[0], dtype=bool)

        return event

    def first_item(self, outcomes: Any) -> np.ndarray:
        """For a probe: checks the outcomes, and finds no gap item in any."""
        check_support(outcomes, self.counts, self.support, "probe")
        return np.full(np.shape(outcomes)[0], PAD)


def _tilted_checks(
    sample: Callable[..., Any],
    d2: Declared,
    parts: list[GapItemBound],
    *,
    check_runs: int,
    rows: int,
    seed: np.random.SeedSequence,
) -> int:
    """``D'`` under each part's proposal: it makes the gap items as likely as a tilt of D's noise can."""
    spent = 0
    share = max(1, check_runs // len(parts))
    for part, stream in zip(parts, seed.spawn(len(parts))):
        try:
            if part.components:
                mixture_runs(
                    sample,
                    d2.array,
                    d2.event(f"tilted for item {part.item}"),
                    components=part.components,
                    shares=part.shares,
                    mixture=ALL_SHIFTED,
                    samples=share,
                    seed=stream,
                    chunk=rows,
                )
            else:
                weighted_runs(
                    sample,
                    d2.array,
                    d2.event(f"tilted for item {part.item}"),
                    tilts=part.tilts,
                    mixture=ALL_SHIFTED,
                    samples=share,
                    seed=stream,
                    chunk=rows,
                )
        except DeclaredSupportError:
            raise
        except ValueError:
            continue  # D''s noise has another shape (a smaller domain): the probes cover it
        spent += share
    return spent


def check_declaration(
    sample: Callable[..., Any],
    d: Declared,
    d2: Declared,
    parts: list[GapItemBound],
    *,
    check_runs: int,
    rows: int,
    seed: np.random.SeedSequence,
) -> int:
    """Run ``D'`` under each part's tilt, under each probe shift, and plain; ``D`` plain.

    Returns the runs spent; raises ``DeclaredSupportError`` at the first outcome that
    contradicts a declaration.

    Parameters
    ----------
    sample : the ``sample(counts, size, rng)`` of the mechanism whose declaration is checked.
    d, d2 : ``D`` and ``D'`` with their declared supports.
    parts : the parts bounded, with their proposals.
    check_runs : runs of ``D'`` under the tilts (shared by the parts), and plain of each side.
    rows : the batch size at which the noise is one row per run.
    seed : the checks' stream.
    """
    tilted_seed, probe_seed, plain_seed, plain_d_seed = seed.spawn(4)
    spent = _tilted_checks(sample, d2, parts, check_runs=check_runs, rows=rows, seed=tilted_seed)
    d2_draws = tiltable_draws(sample, d2.array, rows, probe_seed.spawn(1)[0])
    if d2_draws:
        _, probed = probe_tilts(
            sample, d2.array, d2.first_item, [BOTTOM], d2_draws, probe_seed, rows
        )
        spent += probed
    plain = np.random.Generator(np.random.PCG64(plain_seed))
    check_support(sample(d2.array, check_runs, plain), d2.counts, d2.support, "plain")
    plain_d = np.random.Generator(np.random.PCG64(plain_d_seed))
    check_support(sample(d.array, check_runs, plain_d), d.counts, d.support, "plain")
    return spent + 2 * check_runs
