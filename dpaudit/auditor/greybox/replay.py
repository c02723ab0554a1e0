"""One stream twice: a mechanism that draws from anything but its ``rng`` is refused.

DESIGN.md, "Black box and grey box"; issue 43, item 1.
[`check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng] runs a
sampler twice on the same seed: a mechanism that draws only from the ``rng`` it is given gives the
same outcomes and the same trace; one that draws elsewhere (numpy's global generator, ``random``, a
generator of its own, OS entropy) is refused for the grey box, with the evidence. One stream on
both neighbours is [`coupling`][dpaudit.auditor.greybox.coupling].
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.errors import UsageError
from mechanisms import MixedBatch
from mechanisms.validation import require_positive_int

from .inputs import Seed, sample_method, seed_sequence
from .recording import RecordingGenerator
from .traces import first_difference

__all__ = ["OutsideRandomnessError", "ReplayCheck", "check_draws_only_from_rng", "frozen_state"]


class OutsideRandomnessError(UsageError):
    """A mechanism draws from a source other than the ``rng`` it is given: no grey box."""


def _seed_text(stream: np.random.SeedSequence) -> str:
    """A seed on one line: ``3``, or ``3 (spawn key 98)`` for a spawned stream."""
    key = tuple(int(k) for k in stream.spawn_key)
    return f"{stream.entropy}" + (f" (spawn key {', '.join(map(str, key))})" if key else "")


def frozen_state(value: Any) -> Any:
    """A comparable copy of a generator state (dicts, tuples and arrays inside)."""
    if isinstance(value, dict):
        return tuple(sorted((k, frozen_state(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return tuple(frozen_state(v) for v in value)
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return value


def _global_states() -> tuple[Any, Any]:
    """The states of numpy's global generator and of ``random``."""
    # Reading the global generator's state (not drawing) is the point here.
    return frozen_state(np.random.get_state(legacy=False)), random.getstate()  # noqa: NPY002


def _parts(batch: Any) -> list[np.ndarray]:
    """A batch as 2-D blocks of rows: items (and values, for a ``MixedBatch``)."""
    blocks = [batch.items, batch.values] if isinstance(batch, MixedBatch) else [batch]
    parts = []
    for block in blocks:
        array = np.asarray(block)
        parts.append(array.reshape(array.shape[0], -1) if array.ndim else array.reshape(1, 1))
    return parts


def _row(parts: list[np.ndarray], row: int) -> tuple:
    cells = [v for part in parts for v in part[row].tolist()]
    return tuple(cells)


def _first_differing_row(batch: Any, batch2: Any) -> tuple[int, tuple, tuple] | None:
    """``(row, outcome, outcome2)`` of the first row where two batches differ; None if equal."""
    parts, parts2 = _parts(batch), _parts(batch2)
    if [p.shape for p in parts] != [p.shape for p in parts2]:
        shapes = [p.shape for p in parts], [p.shape for p in parts2]
        return 0, (f"shape {shapes[0]}",), (f"shape {shapes[1]}",)
    differ = np.zeros(parts[0].shape[0], dtype=bool)
    for part, part2 in zip(parts, parts2):
        equal = part == part2
        if part.dtype.kind in "fc":
            equal |= np.isnan(part) & np.isnan(part2)
        differ |= ~equal.all(axis=1)
    if not differ.any():
        return None
    row = int(np.flatnonzero(differ)[0])
    return row, _row(parts, row), _row(parts2, row)


@dataclass(frozen=True)
class ReplayCheck:
    """Whether a sampler drew only from the ``rng`` it was given, in two runs on one seed.

    DESIGN.md, "Black box and grey box"; issue 43, item 1. A refusal is proof (the same
    stream gave two outcomes, or a global generator moved); a pass is evidence on these
    counts and this size only: randomness from elsewhere that never changes an outcome
    here is not seen, nor is a generator the mechanism seeds with a constant of its own.

    Parameters
    ----------
    seed : the seed both runs drew from.
    size : outcomes per run.
    reasons : why the sampler is refused; empty if it is not.
    row : the first row where the two runs' outcomes differ (None if they agree).
    outcome, outcome2 : that row in the first and the second run.
    draws : the method calls recorded in the first run.
    consumed : whether the first run read the stream at all (calls or raw words).
    """

    seed: Seed
    size: int
    reasons: tuple[str, ...]
    row: int | None
    outcome: tuple | None
    outcome2: tuple | None
    draws: int
    consumed: bool

    @property
    def refused(self) -> bool:
        """True if the sampler draws from a source other than its ``rng``."""
        return bool(self.reasons)

    @property
    def note(self) -> str:
        """What the pass covers, when the runs drew nothing or only raw words."""
        if not self.consumed:
            return (
                "it drew nothing from rng: a deterministic mechanism, or one that draws only "
                "from a source it seeds itself (replay cannot tell these apart)"
            )
        if not self.draws:
            return "it read only raw bit-generator words (not recorded as calls)"
        return ""

    @property
    def message(self) -> str:
        """The refusal in one paragraph (empty when not refused)."""
        if not self.refused:
            return ""
        return (
            f"the mechanism is refused: {'; '.join(self.reasons)}. Its samples would not follow "
            "the audit's seed streams (worker processes may even repeat each other's draws), so "
            "no verdict, recheck or replay could be trusted. Draw every random number from the "
            "rng passed to sample(counts, size, rng) (DESIGN.md, Randomness)"
        )

    def require(self) -> ReplayCheck:
        """This check; if refused, ``OutsideRandomnessError`` with the message.

        Raises [`OutsideRandomnessError`][dpaudit.auditor.greybox.replay.OutsideRandomnessError]
        with [`message`][dpaudit.auditor.greybox.replay.ReplayCheck.message] when
        [`refused`][dpaudit.auditor.greybox.replay.ReplayCheck.refused].
        """
        if self.refused:
            raise OutsideRandomnessError(self.message)
        return self


def _global_reasons(
    before: tuple[Any, Any], middle: tuple[Any, Any], after: tuple[Any, Any]
) -> list[str]:
    """Why the sampler is refused if a global generator moved during either run."""
    reasons = []
    if before[0] != middle[0] or middle[0] != after[0]:
        reasons.append(
            "it drew from numpy's global generator (np.random.<method> or np.random.seed)"
        )
    if before[1] != middle[1] or middle[1] != after[1]:
        reasons.append("it drew from Python's random module")
    return reasons


def _trace_reasons(rng: RecordingGenerator, rng2: RecordingGenerator, named: str) -> list[str]:
    """Why the sampler is refused if the two runs' traces, or the amounts of stream read, differ."""
    difference = first_difference(rng.draws, rng2.draws, labels=("first run", "second run"))
    if difference is not None:
        return [
            f"two runs from seed {named} drew differently at call #{difference.index}: "
            f"{difference.detail}"
        ]
    if frozen_state(rng.bit_generator.state) != frozen_state(rng2.bit_generator.state):
        return [
            f"two runs from seed {named} read different amounts of the raw stream "
            "(bit_generator words), so something outside rng decides how many"
        ]
    return []


def check_draws_only_from_rng(
    sampler: Any, counts: Any, *, seed: Seed, size: int = 100
) -> ReplayCheck:
    """Run ``sampler`` twice on fresh recorders of one seed; refuse it if the runs differ.

    DESIGN.md, "Randomness" and "Black box and grey box"; issue 43, item 1. Refused when
    the outcomes differ (the first differing row is reported), when the traces of draws
    differ, when the runs read different amounts of the stream, or when numpy's global
    generator or ``random`` moved while the sampler ran (another thread drawing from
    them meanwhile would be blamed on the sampler). An exception of the sampler propagates.

    Parameters
    ----------
    sampler : an object with ``sample(counts, size, rng)`` (a mechanism, or a function
        wrapped by [`as_auditable`][dpaudit.auditor.as_auditable]).
    counts : the histogram to run on; choose one where the outcome is uncertain (a
        mechanism that almost always gives one outcome hides outside randomness).
    seed : an integer >= 0 or a ``numpy.random.SeedSequence``; both runs use
        ``PCG64(seed)``, the stream of ``numpy.random.default_rng(seed)``.
    size : outcomes per run (>= 1).
    """
    sample = sample_method(sampler)
    size = require_positive_int("size", size)
    stream = seed_sequence(seed)
    named = _seed_text(stream)
    rng = RecordingGenerator(np.random.PCG64(stream))
    rng2 = RecordingGenerator(np.random.PCG64(stream))
    fresh = frozen_state(rng.bit_generator.state)
    before = _global_states()
    batch = sample(counts, size, rng)
    middle = _global_states()
    batch2 = sample(counts, size, rng2)
    after = _global_states()

    reasons = _global_reasons(before, middle, after)
    differing = _first_differing_row(batch, batch2)
    if differing is not None:
        first_row, outcome, outcome2 = differing
        reasons.append(
            f"two runs from seed {named} gave different outcomes, first at row {first_row}: "
            f"{outcome} then {outcome2}, so it draws from a source other than rng "
            "(a global generator, its own default_rng(), a generator kept between calls, "
            "OS entropy)"
        )
    reasons += _trace_reasons(rng, rng2, named)
    state = frozen_state(rng.bit_generator.state)
    return ReplayCheck(
        seed=seed,
        size=size,
        reasons=tuple(reasons),
        row=differing[0] if differing is not None else None,
        outcome=differing[1] if differing is not None else None,
        outcome2=differing[2] if differing is not None else None,
        draws=rng.draw_count,
        consumed=state != fresh,
    )
