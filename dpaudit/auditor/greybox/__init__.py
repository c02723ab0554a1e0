"""The grey box: a mechanism's own randomness, recorded, replayed and coupled on neighbours.

DESIGN.md, "Black box and grey box"; issue 43. A Python mechanism takes
``rng: numpy.random.Generator`` and draws only from it; the grey box hands it a
[`RecordingGenerator`][dpaudit.auditor.greybox.recording.RecordingGenerator] and reads the trace.

Modules, one job each: [`recording`][dpaudit.auditor.greybox.recording] (the generator and its
[`Draw`][dpaudit.auditor.greybox.recording.Draw] records), [`sites`][dpaudit.auditor.greybox.sites]
(the ``file:line`` a draw came from), [`traces`][dpaudit.auditor.greybox.traces] (where two traces
part), [`laws`][dpaudit.auditor.greybox.laws] (the privacy cost of a draw whose location moves),
[`replay`][dpaudit.auditor.greybox.replay] (the same stream twice,
[`check_draws_only_from_rng`][dpaudit.auditor.greybox.replay.check_draws_only_from_rng]),
[`coupling`][dpaudit.auditor.greybox.coupling] (one stream on both neighbours,
[`coupled_runs`][dpaudit.auditor.greybox.coupling.coupled_runs]),
[`importance`][dpaudit.auditor.greybox.importance] (rare events: bounded weights, betting
bounds) with [`tilted_generator`][dpaudit.auditor.greybox.tilted_generator] (a batch's draws
shifted, from a defensive mixture), [`tilted_runs`][dpaudit.auditor.greybox.tilted_runs] (weighted
runs, chunk by chunk) and [`cross_entropy`][dpaudit.auditor.greybox.cross_entropy] (the shifts,
from a pilot), [`tilt_mixture`][dpaudit.auditor.greybox.tilt_mixture]
(a mixture of exponential tilts of Laplace draws, for events a sum of draws reaches), [`argmax_weights`][dpaudit.auditor.greybox.argmax_weights]
(the weight bound over a noisy-argmax event), [`structural_delta`][dpaudit.auditor.greybox.structural_delta]
(the δ a mechanism that declares its output support spends where a neighbour's probability is 0)
[`structural_pairs`][dpaudit.auditor.greybox.structural_pairs] (the pairs where that happens) and
[`delta_stage`][dpaudit.auditor.greybox.delta_stage] (that bound as a stage of every audit).
"""

from .argmax_weights import gumbel_dominating_shift, noisy_max_weight_bound
from .coupling import CoupledRuns, Divergence, coupled_runs
from .cross_entropy import CrossEntropyRound, CrossEntropyTilt, cross_entropy_tilt
from .declared_support import DeclaredSupportError
from .importance import ImportanceSampledProbability, importance_sampled_probability
from .laws import PRICED, DrawCost, draw_cost
from .mixture_fit import MixtureFit, mixture_cross_entropy
from .part_bounds import GapItemBound
from .recording import NOT_RECORDED, RECORDED_METHODS, Draw, RecordingGenerator
from .replay import OutsideRandomnessError, ReplayCheck, check_draws_only_from_rng
from .structural_delta import StructuralDelta, structural_delta
from .structural_pairs import rank_structural_pairs, support_edge_pair
from .tilt_mixture import MixtureTiltedGenerator, mixture_runs
from .tilted_generator import LOCATION_FAMILIES, TiltedDraw, TiltedGenerator
from .tilted_runs import WeightedRuns, weighted_runs
from .traces import TraceDifference, first_difference, law_parameters

__all__ = [
    "LOCATION_FAMILIES",
    "NOT_RECORDED",
    "PRICED",
    "RECORDED_METHODS",
    "CoupledRuns",
    "CrossEntropyRound",
    "CrossEntropyTilt",
    "DeclaredSupportError",
    "Divergence",
    "Draw",
    "DrawCost",
    "GapItemBound",
    "ImportanceSampledProbability",
    "MixtureFit",
    "MixtureTiltedGenerator",
    "OutsideRandomnessError",
    "RecordingGenerator",
    "ReplayCheck",
    "StructuralDelta",
    "TiltedDraw",
    "TiltedGenerator",
    "TraceDifference",
    "WeightedRuns",
    "check_draws_only_from_rng",
    "coupled_runs",
    "cross_entropy_tilt",
    "draw_cost",
    "first_difference",
    "gumbel_dominating_shift",
    "importance_sampled_probability",
    "law_parameters",
    "mixture_cross_entropy",
    "mixture_runs",
    "noisy_max_weight_bound",
    "rank_structural_pairs",
    "structural_delta",
    "support_edge_pair",
    "weighted_runs",
]
