"""One stream on both neighbours: where the draws depend on the data, and what each draw costs.

DESIGN.md, "Black box and grey box"; issue 43, item 2.
[`coupled_runs`][dpaudit.auditor.greybox.coupling.coupled_runs] runs one stream on ``counts`` and
on ``counts2`` (after Re:cord-play, Cebere et al., PETS 2026: record the randomness, replay it on
the neighbour). Where the two traces part (another method, shape, law parameter or call site) the
control flow depends on the data: a [`Divergence`][dpaudit.auditor.greybox.coupling.Divergence]
names the draw. Where they agree except in a location (``laws.PRICED``), each such draw is priced
under its law ([`laws.draw_cost`][dpaudit.auditor.greybox.laws.draw_cost]).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechanisms.validation import require_positive_int

from .inputs import Seed, sample_method, seed_sequence
from .laws import PRICED, DrawCost, draw_cost
from .recording import Draw, RecordingGenerator
from .replay import frozen_state
from .sites import raise_site
from .traces import first_difference

__all__ = ["CoupledRuns", "Divergence", "coupled_runs"]


@dataclass(frozen=True)
class Divergence:
    """Witness that the draws depend on the data: one stream, two neighbours, two traces.

    Issue 43, item 2(a). The first call where the traces of ``counts`` and ``counts2`` part, by
    ``kind``: "method", "shape", "parameter" (a law parameter outside ``laws.PRICED``, such as a
    scale), "site" (the same draw from another line), "missing" (one run stopped drawing), "raw"
    (the same calls, but different amounts of raw bit-generator words; no call site), or "exception"
    (one run raised).

    What it proves: on this pair the sequence of draws is a function of the data, and the draw
    at ``site`` is where. That is a bug where the design fixes its draws before it looks at the
    data (noise, then post-processing). Measured on the reference mechanisms: LimitDomain,
    GumbelTopK, PeelingEM, ExponentialMechanism, ReportNoisyMax, LaplaceTopK, PermuteAndFlip,
    GaussianTopK, StabilityRelease, SparseVector, RestrictedGumbel and RestrictedNormal draw
    arrays whose shapes depend only on their parameters and the domain size (the categorical
    samplers' redraw, when ``u · total`` rounds up to the total, has probability about 1e-16).
    A divergence is not by itself a violation where the design branches on the data and its
    claim pays for it: a domain read from the data (FixedThreshold and StrictLimitDomain draw
    noise only for the items above ``h_(k̄+1)``, which δ covers), a noisy choice of k̄
    (LimitDomainOptimizedKbar), a test on noisy values (TopStable draws its keys only for the
    rows that pass; a sparse vector that draws query by query and stops at its c-th positive
    answer, where the reference SparseVector draws all its noise up front), or rejection
    sampling (Joint). There the witness says where to look, and the audit decides.

    Parameters
    ----------
    run : which coupled run (0-based).
    index : the position of the first divergent call in both traces.
    kind : see above.
    detail : what differs, in words.
    site : ``file:line`` of that call (of the raise, for "exception"; "" for "raw").
    trace : that run's draws on ``counts``.
    trace2 : that run's draws on ``counts2``.
    """

    run: int
    index: int
    kind: str
    detail: str
    site: str
    trace: tuple[Draw, ...]
    trace2: tuple[Draw, ...]

    @property
    def draw(self) -> Draw | None:
        """The divergent call on ``counts`` (None if that run made no such call)."""
        return self.trace[self.index] if self.index < len(self.trace) else None

    @property
    def draw2(self) -> Draw | None:
        """The divergent call on ``counts2`` (None if that run made no such call)."""
        return self.trace2[self.index] if self.index < len(self.trace2) else None

    def __str__(self) -> str:
        where = f" at {self.site}" if self.site else ""
        return (
            f"coupled run {self.run}: the draws depend on the data at call #{self.index}"
            f"{where} ({self.kind}): {self.detail}"
        )


def _as_key(counts: Any) -> Any:
    """``counts`` as a tuple of ints when it is a 1-D histogram; else as given."""
    try:
        array = np.asarray(counts)
    except (TypeError, ValueError):
        return counts
    if array.ndim == 1 and array.dtype.kind in "iuf":
        return tuple(v.item() for v in array)
    return counts


@dataclass(frozen=True)
class CoupledRuns:
    """What ``coupled_runs`` found: divergences and priced draws, run by run.

    Issue 43, item 2.

    ``run_epsilon`` composes a run's priced draws (basic composition of pure ε, valid
    adaptively). It bounds the run's privacy loss only if the release depends on the data
    through these draws' parameters alone: data added after a draw
    (``counts + rng.laplace(0, b)``, how the reference mechanisms draw) leaves the
    parameters equal and is invisible here. It is loose where the release discards
    (report-noisy-max releases an argmax, not the noisy counts). Draws after a priced one
    compare parameters computed from different earlier values (the same random words,
    not the same outputs), so their costs describe this coupling, not the conditional law.

    Parameters
    ----------
    counts, counts2 : the two histograms (tuples of ints when given as 1-D arrays).
    seed : the seed of the runs; run ``r`` draws from ``SeedSequence(seed).spawn(runs)[r]``.
    runs : the number of coupled runs made.
    divergences : one per run whose traces part, in run order.
    costs : the priced draws of the runs that did not diverge.
    """

    counts: Any
    counts2: Any
    seed: Seed
    runs: int
    divergences: tuple[Divergence, ...]
    costs: tuple[DrawCost, ...]

    @property
    def divergence(self) -> Divergence | None:
        """The first divergence (None if every run's traces agree)."""
        return self.divergences[0] if self.divergences else None

    @property
    def diverged(self) -> bool:
        """True if some run's draws depend on the data."""
        return bool(self.divergences)

    @property
    def divergent_share(self) -> float:
        """The fraction of runs that diverged (1.0 for a branch on the data alone)."""
        return len(self.divergences) / self.runs if self.runs else 0.0

    def run_epsilon(self, run: int) -> float:
        """The pure ε of run ``run``'s priced draws, composed (0.0 if none; see the class)."""
        return math.fsum(cost.epsilon for cost in self.costs if cost.run == run)

    @property
    def max_run_epsilon(self) -> float:
        """The largest ``run_epsilon`` over the runs (0.0 if nothing was priced)."""
        return max((self.run_epsilon(run) for run in {c.run for c in self.costs}), default=0.0)

    @property
    def max_run_mu(self) -> float | None:
        """The largest Gaussian-DP μ of a run's normal draws, composed (``√Σμ²``); None if none."""
        mus: dict[int, float] = {}
        for cost in self.costs:
            if cost.mu is not None:
                mus[cost.run] = mus.get(cost.run, 0.0) + cost.mu**2
        return math.sqrt(max(mus.values())) if mus else None

    def exceeding(self, epsilon: float) -> tuple[DrawCost, ...]:
        """The priced draws whose cost alone exceeds ``epsilon``: the stages to blame.

        Parameters
        ----------
        epsilon : a draw's share of the claim (the whole claim when it has one draw).
        """
        return tuple(cost for cost in self.costs if cost.epsilon > epsilon)


def _call(sample: Callable[..., Any], counts: Any, rng: RecordingGenerator) -> Exception | None:
    """Run one outcome; the exception it raises, if any (compared across the two runs)."""
    try:
        sample(counts, 1, rng)
    except Exception as error:  # the mechanism's own error: a divergence if on one side only
        return error
    return None


def _one_run(
    sample: Callable[..., Any],
    counts: Any,
    counts2: Any,
    stream: np.random.SeedSequence,
    run: int,
    values: bool,
) -> tuple[Divergence | None, list[DrawCost]]:
    rng = RecordingGenerator(np.random.PCG64(stream), values=values)
    rng2 = RecordingGenerator(np.random.PCG64(stream), values=values)
    error, error2 = _call(sample, counts, rng), _call(sample, counts2, rng2)
    trace, trace2 = rng.draws, rng2.draws
    if error is not None and error2 is not None:
        raise error
    if error is not None or error2 is not None:
        raised = error if error is not None else error2
        assert raised is not None
        side, other = ("counts", "counts2") if error is not None else ("counts2", "counts")
        index = min(len(trace), len(trace2))
        detail = (
            f"{type(raised).__name__}: {raised} raised on {side}, not on {other} "
            f"(after {len(trace if error is not None else trace2)} draws)"
        )
        return Divergence(run, index, "exception", detail, raise_site(raised), trace, trace2), []
    difference = first_difference(trace, trace2, ignore=PRICED, labels=("counts", "counts2"))
    if difference is not None:
        return (
            Divergence(
                run,
                difference.index,
                difference.kind,
                difference.detail,
                difference.site,
                trace,
                trace2,
            ),
            [],
        )
    if frozen_state(rng.bit_generator.state) != frozen_state(rng2.bit_generator.state):
        detail = (
            "the same calls, but different amounts of raw bit-generator words "
            "(bit_generator.random_raw or the like)"
        )
        return Divergence(run, len(trace), "raw", detail, "", trace, trace2), []
    costs = [draw_cost(a, b, run=run) for a, b in zip(trace, trace2)]
    return None, [cost for cost in costs if cost is not None]


def coupled_runs(
    sampler: Any,
    counts: Any,
    counts2: Any,
    *,
    seed: Seed,
    size: int = 1,
    values: bool = False,
) -> CoupledRuns:
    """Run ``counts`` and ``counts2`` on identical streams; report divergences and priced draws.

    Issue 43, item 2; the coupling of Re:cord-play (Cebere et al., PETS 2026), without annotations:
    the recorder sees every call. Each of the ``size`` runs is one outcome,
    ``sample(counts, 1, rng)`` and ``sample(counts2, 1, rng2)`` with ``rng`` and ``rng2`` in the
    same state (``PCG64`` on the run's child of ``SeedSequence(seed)``), so each run starts coupled
    whatever happened in the last. A run whose traces part gives a
    [`Divergence`][dpaudit.auditor.greybox.coupling.Divergence] (see there for what it proves);
    otherwise its draws whose laws differ in a location are priced
    ([`laws.draw_cost`][dpaudit.auditor.greybox.laws.draw_cost]). A mechanism that raises on both
    histograms raises here.

    Parameters
    ----------
    sampler : an object with ``sample(counts, size, rng)`` (a mechanism, or a function wrapped by
        [`as_auditable`][dpaudit.auditor.as_auditable]); check it first with
        [`check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng],
        since outside randomness also parts traces.
    counts, counts2 : the neighbouring histograms.
    seed : an integer >= 0 or a ``numpy.random.SeedSequence``.
    size : the number of coupled runs (>= 1); a branch on the data alone diverges in
        the first, one on noisy values in some.
    values : record each draw's output in the traces (for reports; slower).
    """
    sample = sample_method(sampler)
    size = require_positive_int("size", size)
    if not isinstance(values, bool):
        raise ValueError(f"values must be True or False, got {values!r}")
    divergences: list[Divergence] = []
    costs: list[DrawCost] = []
    streams: Sequence[np.random.SeedSequence] = seed_sequence(seed).spawn(size)
    for run, stream in enumerate(streams):
        divergence, priced = _one_run(sample, counts, counts2, stream, run, values)
        if divergence is not None:
            divergences.append(divergence)
        costs.extend(priced)
    return CoupledRuns(
        counts=_as_key(counts),
        counts2=_as_key(counts2),
        seed=seed,
        runs=size,
        divergences=tuple(divergences),
        costs=tuple(costs),
    )
