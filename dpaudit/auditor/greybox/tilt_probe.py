"""First tilts for a rare event: which noise draw to shift, and by how much.

Issue 43, item 3, step 1 of [`structural_delta`][dpaudit.auditor.greybox.structural_delta]: find
the batch size at which the mechanism's noise is tiltable (a location-family draw with one row per
run), then, for each part of the event, the smallest shift of one coordinate of those draws (a
growing multiple of its scale) that reaches it. The cross-entropy pilot refines these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mechanisms import PAD

from .declared_support import DeclaredSupportError
from .recording import Draw, RecordingGenerator
from .tilted_generator import LOCATION_FAMILIES, TiltKey
from .tilted_runs import WeightedRuns, weighted_runs

__all__ = [
    "ALL_SHIFTED",
    "PROBE_HITS",
    "PROBE_ROWS",
    "PROBE_SHIFTS",
    "coordinate_shift",
    "draw_coordinates",
    "draw_scale",
    "efficiency",
    "probe_tilts",
    "probe_ways",
    "tiltable_chunk",
    "tiltable_draws",
]

#: Probe shifts, in units of each draw's scale, tried in increasing order.
PROBE_SHIFTS = (2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18, 20, 23, 26, 29, 32, 40, 48, 64, 80, 96, 128)
#: Runs per probe of one shift.
PROBE_ROWS = 32
#: The share of a probe's runs in the event that makes its shift the first tilt.
PROBE_HITS = 0.1
#: The mixture weight of the probes and checks: (almost) every row takes the shifted law.
ALL_SHIFTED = 1e-9


def tiltable_draws(sample: Any, counts: Any, rows: int, seed: np.random.SeedSequence) -> list[Draw]:
    """The location-family draws with one row per run, in two batches on two streams alike.

    A draw whose rows are a data- or noise-dependent subset of the runs (a second stage on the
    runs that passed a test) may hold all of them in one batch by chance; asking for the same
    index, site and shape in two batches leaves such draws out in all but unlucky cases, and a
    probe whose tilt then does not fit is skipped.
    """
    traces = []
    for stream in seed.spawn(2):
        rng = RecordingGenerator(np.random.PCG64(stream))
        sample(counts, rows, rng)
        traces.append({(d.index, d.method, d.site, d.shape): d for d in rng.draws})
    first, second = traces
    return [
        d
        for key, d in first.items()
        if key in second
        and d.method in LOCATION_FAMILIES
        and len(d.shape) in (1, 2)
        and d.shape[0] == rows
    ]


def tiltable_chunk(
    sample: Any, counts: Any, chunk: int, seed: np.random.SeedSequence
) -> tuple[int, list[Draw]]:
    """The largest batch size ``<= chunk`` (halving) at which some noise draw is one row per run.

    A mechanism may switch to another exact route at large batches (the Plackett–Luce table of
    the limited domains: one uniform per run, nothing to tilt); its law is the same at every size.
    """
    rows = chunk
    while True:
        draws = tiltable_draws(sample, counts, rows, seed)
        if draws:
            return rows, draws
        if rows == 1:
            raise ValueError(
                "the mechanism makes no gumbel/laplace/logistic/normal draw with one row per run "
                "at any batch size: there is no noise to tilt"
            )
        rows //= 2


def draw_scale(draw: Draw) -> float:
    """The largest scale of ``draw`` (1 for a law without one)."""
    return float(np.max(np.asarray(draw.parameters().get("scale", 1.0), dtype=np.float64)))


def coordinate_shift(draw: Draw, column: int | None, amount: float) -> np.ndarray:
    """A shift of ``amount`` on one ``column`` of ``draw`` (the whole draw if it has one column)."""
    width = draw.shape[1] if len(draw.shape) == 2 else None
    if width is None:
        return np.array(amount)
    shift = np.zeros(width)
    shift[column] = amount
    return shift


def draw_coordinates(draws: list[Draw]) -> list[tuple[Draw, int | None]]:
    """Every ``(draw, column)`` that a probe may shift (``None``: a draw of one column)."""
    return [
        (d, column)
        for d in draws
        for column in (range(d.shape[1]) if len(d.shape) == 2 else [None])
    ]


def efficiency(values: np.ndarray) -> float:
    """``(Σ Y)² / (n Σ Y²)`` in [0, 1]: the share of the runs that count, 0 without a hit."""
    square = float(np.square(values).sum())
    return float(values.sum()) ** 2 / (values.size * square) if square > 0.0 else 0.0


def _probe(
    sample: Callable[..., Any],
    counts: np.ndarray,
    first_item: Any,
    tilt: dict[TiltKey, np.ndarray],
    stream: np.random.SeedSequence,
    rows: int,
) -> tuple[np.ndarray, WeightedRuns] | None:
    """``PROBE_ROWS`` runs (almost) all under ``tilt``: each run's first gap item, and the runs.

    None when the tilt does not fit the draw (not one row per run in this batch); a false
    declared support propagates.
    """
    seen: list[np.ndarray] = []

    def any_gap_item(outcomes: Any) -> np.ndarray:
        first = np.asarray(first_item(outcomes))
        seen.append(first)
        return first != PAD

    try:
        runs = weighted_runs(
            sample,
            counts,
            any_gap_item,
            tilts=tilt,
            mixture=ALL_SHIFTED,
            samples=PROBE_ROWS,
            seed=stream,
            chunk=min(rows, PROBE_ROWS),
        )
    except DeclaredSupportError:
        raise
    except ValueError:
        return None
    return np.concatenate(seen), runs


def probe_tilts(
    sample: Callable[..., Any],
    counts: np.ndarray,
    first_item: Any,
    items: list[int],
    draws: list[Draw],
    seed: np.random.SeedSequence,
    rows: int,
) -> tuple[dict[int, dict[TiltKey, np.ndarray]], int]:
    """First tilts for the parts ``S_j``: per item, the smallest single-coordinate shift reaching it.

    ``first_item(outcomes)`` gives each run's first gap item (``PAD`` if none). Each coordinate of
    the tiltable draws is shifted up and down by 2, 3, 4, 5, 6, 8, ... of its scale (almost every
    run shifted); for each item, at the first multiple where some shift puts a tenth of its runs
    in ``S_j``, the one of largest ``(Σ Y)² / (n Σ Y²)`` is kept (a shift whose weights vanish,
    as a Gumbel moved down, scores 0 and is never kept). The smallest such shift, because
    overshooting is worse than falling short: a Gumbel moved by ``s`` past the event's threshold
    ``t`` gives weights up to ``e^{-s + e^{s - t}}`` on rare hits that carry the mean, while one
    moved short of it has weights below ``e^{-s + 1}`` on its hits, and the cross-entropy pilot
    moves a short shift up. Returns ``({item: {draw index: shift}}, runs spent)``; an item no
    shift reached is missing.
    """
    spent = 0
    coordinates = draw_coordinates(draws)
    streams = iter(seed.spawn(len(PROBE_SHIFTS) * 2 * len(coordinates)))
    found: dict[int, dict[TiltKey, np.ndarray]] = {}
    for multiple in PROBE_SHIFTS:
        best: dict[int, tuple[float, dict[TiltKey, np.ndarray]]] = {}
        for draw, column in coordinates:
            for sign in (1.0, -1.0):
                tilt: dict[TiltKey, np.ndarray] = {
                    draw.index: coordinate_shift(draw, column, sign * multiple * draw_scale(draw))
                }
                spent += PROBE_ROWS
                probed = _probe(sample, counts, first_item, tilt, next(streams), rows)
                if probed is None:
                    continue  # the draw is not one row per run in this batch: not tiltable
                first, runs = probed
                for item in items:
                    if item in found:
                        continue
                    hits = first == item
                    score = efficiency(np.where(hits, runs.weights, 0.0))
                    if hits.mean() >= PROBE_HITS and score > best.get(item, (0.0, {}))[0]:
                        best[item] = (score, tilt)
        found.update({item: tilt for item, (_, tilt) in best.items()})
        if len(found) == len(items):
            break
    return found, spent


def probe_ways(
    sample: Callable[..., Any],
    counts: np.ndarray,
    first_item: Any,
    items: list[int],
    draws: list[Draw],
    seed: np.random.SeedSequence,
    rows: int,
) -> tuple[dict[int, list[tuple[Draw, int | None, float]]], int]:
    """Every single-coordinate shift that reaches each part: the ways into ``S_j``, one by one.

    As [`probe_tilts`][dpaudit.auditor.greybox.tilt_probe.probe_tilts], but each coordinate and
    sign keeps climbing ``PROBE_SHIFTS`` until it has reached every item (a tenth of its runs in
    ``S_j``) or the list ends, and each item keeps every ``(draw, column, multiple)`` that reached
    it, at its smallest multiple (signed, in units of the draw's scale). For
    [`mixture_cross_entropy`][dpaudit.auditor.greybox.mixture_fit.mixture_cross_entropy]: one
    component per way. Returns ``({item: ways}, runs spent)``; an item no way reached is missing.
    """
    spent = 0
    coordinates = [(d, c, sign) for d, c in draw_coordinates(draws) for sign in (1.0, -1.0)]
    streams = iter(seed.spawn(len(PROBE_SHIFTS) * len(coordinates)))
    ways: dict[int, list[tuple[Draw, int | None, float]]] = {}
    done: dict[int, set[int]] = {i: set() for i in range(len(coordinates))}
    for multiple in PROBE_SHIFTS:
        for number, (draw, column, sign) in enumerate(coordinates):
            stream = next(streams)
            if len(done[number]) == len(items):
                continue
            shift = sign * multiple * draw_scale(draw)
            spent += PROBE_ROWS
            tilt: dict[TiltKey, np.ndarray] = {draw.index: coordinate_shift(draw, column, shift)}
            probed = _probe(sample, counts, first_item, tilt, stream, rows)
            if probed is None:
                done[number] = set(items)  # not one row per run in this batch: not tiltable
                continue
            first = probed[0]
            for item in items:
                if item not in done[number] and (first == item).mean() >= PROBE_HITS:
                    done[number].add(item)
                    ways.setdefault(item, []).append((draw, column, sign * multiple))
    return ways, spent
