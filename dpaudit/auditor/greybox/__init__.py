"""The grey box: a mechanism's own randomness, recorded, replayed and coupled on neighbours.

DESIGN.md, "Black box and grey box"; issue 43. A Python mechanism takes
``rng: numpy.random.Generator`` and draws only from it; the grey box hands it a
[`RecordingGenerator`][dpaudit.auditor.greybox.recording.RecordingGenerator] and reads the trace.

Modules, one job each: [`recording`][dpaudit.auditor.greybox.recording] (the generator and its
[`Draw`][dpaudit.auditor.greybox.recording.Draw] records), [`sites`][dpaudit.auditor.greybox.sites]
(the ``file:line`` a draw came from), [`traces`][dpaudit.auditor.greybox.traces] (where two traces
part), [`laws`][dpaudit.auditor.greybox.laws] (the privacy cost of a draw whose location moves),
[`replay`][dpaudit.auditor.greybox.replay] (the same stream twice,
[`check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng]; one stream
on both neighbours, [`coupled_runs`][dpaudit.auditor.greybox.replay.coupled_runs]).
"""

from .laws import PRICED, DrawCost, draw_cost
from .recording import NOT_RECORDED, RECORDED_METHODS, Draw, RecordingGenerator
from .replay import (
    CoupledRuns,
    Divergence,
    OutsideRandomnessError,
    ReplayCheck,
    check_draws_only_from_rng,
    coupled_runs,
)
from .traces import TraceDifference, first_difference, law_parameters

__all__ = [
    "NOT_RECORDED",
    "PRICED",
    "RECORDED_METHODS",
    "CoupledRuns",
    "Divergence",
    "Draw",
    "DrawCost",
    "OutsideRandomnessError",
    "RecordingGenerator",
    "ReplayCheck",
    "TraceDifference",
    "check_draws_only_from_rng",
    "coupled_runs",
    "draw_cost",
    "first_difference",
    "law_parameters",
]
