"""SmartNoise-core's simple geometric mechanism: noise censored at ±(upper − lower), unclamped.

opendp/smartnoise-core's simple geometric mechanism (``runtime/src/utilities/noise.rs``
``sample_simple_geometric_mechanism``) adds two-sided geometric noise (ratio α = e^{−ε/Δ})
drawn with at most ``upper − lower`` Bernoulli trials: the noise is 0 with probability
(1 − α)/(1 + α), else a fair sign times the trials to the first success, censored at
R = upper − lower (the tail beyond R lumped on ±R). Shipped as ``data + noise`` with no
clamp, the lumps at v ± R are outputs that v ∓ 1 cannot produce, so ε-DP fails at every ε
(PR 318, "clamp simple geometric mechanism based on sampling bounds": with min == max the
noise is 0). PR 318 clamped the release to [lower, upper]; issue 358 (PR 359) adds the
clamp of the input, without which a count beyond the bounds puts a lump inside them again.
The release here is the count of item 0 at the docstring's own example
``simple_geometric_mechanism(0.1, 1., 0, 10, true)``: ε = 0.1, sensitivity 1, bounds [0, 10].
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

from mechanisms import validate_counts

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import log_ratio, working_precision
from .counts import RELATION

#: The example in ``simple_geometric_mechanism``'s docstring: ε = 0.1, sensitivity 1, [0, 10].
GEOMETRIC_EPSILON, GEOMETRIC_BOUNDS = 0.1, (0, 10)


def censored_geometric(size, rng, *, alpha, trials):
    """SmartNoise-core's ``sample_simple_geometric_mechanism`` noise, ``size`` draws.

    0 when a uniform falls below (1 − α)/(1 + α); otherwise a fair sign times the number of
    Bernoulli(1 − α) trials to the first success, ``trials`` when none of them succeeds
    (``sample_geometric_censored``; no trial at all when ``trials`` is 0).
    """
    zero = rng.random(size) < (1 - alpha) / (1 + alpha)
    sign = 2 * rng.integers(2, size=size) - 1
    run = np.minimum(rng.geometric(1 - alpha, size=size), trials)
    return np.where(zero, 0, sign * run)


def _geometric_release(counts, size, rng, *, clamp_output, clamp_input):
    """Item 0's count plus the censored noise, as SmartNoise shipped it (no clamp), after PR
    318 (``clamp_output``) and after PR 359 (``clamp_input`` too)."""
    lower, upper = GEOMETRIC_BOUNDS
    value = int(validate_counts(counts)[0])
    if clamp_input:
        value = min(max(value, lower), upper)
    alpha = math.exp(-GEOMETRIC_EPSILON)  # scale Δ/ε = 10, α = e^{−1/scale}
    out = value + censored_geometric(size, rng, alpha=alpha, trials=upper - lower)
    if clamp_output:
        out = np.clip(out, lower, upper)
    return out.astype(float)


def _smartnoise_geometric(name, *, clamp_output, clamp_input):
    function = functools.partial(
        _geometric_release, clamp_output=clamp_output, clamp_input=clamp_input
    )
    return black_box(
        function, claim=(GEOMETRIC_EPSILON, 0.0, RELATION), width=0, name=name, values=1
    )


def censored_geometric_law(value, *, clamp_output, clamp_input):
    """Exact law {output: probability} of ``_geometric_release`` on count ``value``
    (mpmath, ``DIGITS`` digits), at ``GEOMETRIC_BOUNDS``
    (R = 10 trials; the formulas need R >= 1): P(0) = (1 − α)/(1 + α),
    P(±g) = (1 − α)α^g/(1 + α) for 0 < g < R, P(±R) = α^R/(1 + α)."""
    lower, upper = GEOMETRIC_BOUNDS
    trials = upper - lower
    if clamp_input:
        value = min(max(value, lower), upper)
    law: dict[int, mpmath.mpf] = {}
    with working_precision():
        alpha = mpmath.exp(-mpmath.mpf(GEOMETRIC_EPSILON))
        for g in range(-trials, trials + 1):
            if g == 0:
                p = (1 - alpha) / (1 + alpha)
            elif abs(g) < trials:
                p = (1 - alpha) * alpha ** abs(g) / (1 + alpha)
            else:
                p = alpha**trials / (1 + alpha)
            out = value + g
            if clamp_output:
                out = min(max(out, lower), upper)
            law[out] = law.get(out, mpmath.mpf(0)) + p
    return law


def _law_guarantee(pair, **clamps):
    """(ε, δ at the claimed ε) of the release on ``pair``, both orders, from the exact laws."""
    laws = [censored_geometric_law(counts[0], **clamps) for counts in pair]
    with working_precision():
        factor = mpmath.exp(mpmath.mpf(GEOMETRIC_EPSILON))
        epsilon, delta = 0.0, mpmath.mpf(0)
        for p, q in (laws, laws[::-1]):
            for out, mass in p.items():
                epsilon = max(epsilon, log_ratio(mass, q.get(out, 0)))
            delta = max(delta, mpmath.fsum(max(0, m - factor * q.get(o, 0)) for o, m in p.items()))
        return epsilon, float(delta)


#: Counts 0 and 1: the unclamped release puts a lump on 11 (count 1) that count 0 never reaches.
GEOMETRIC_PAIR = ((1, 0, 0, 0, 0), (0, 0, 0, 0, 0))
#: Counts 11 and 10: beyond the upper bound, the release clamped at its output only still puts
#: count 11's lower lump on 1, inside [0, 10], and count 10's on 0, which count 11 never reaches.
GEOMETRIC_BEYOND_PAIR = ((11, 0, 0, 0, 0), (10, 0, 0, 0, 0))


def _geometric_entry(name, *, bug, source, clamp_output, delta, basis, pair):
    """A SmartNoise geometric bug (input never clamped) with its twin: both clamps."""
    clamps = {"clamp_output": clamp_output, "clamp_input": False}
    return CorpusEntry(
        name=name,
        family="histogram",
        bug=bug,
        source=source,
        build=lambda: _smartnoise_geometric(name, **clamps),
        true=TrueGuarantee(math.inf, delta, basis, lambda: _law_guarantee(pair, **clamps)),
        pair=pair,
        twin=lambda: _smartnoise_geometric(
            "smartnoise-geometric-clamped", clamp_output=True, clamp_input=True
        ),
        twin_source="smartnoise-core after PR 318 and PR 359 (issue 358): input and output "
        "clamped to [lower, upper], so both lumps fall on the bounds (ε-DP; opendp/opendp "
        "issue 114: 'two clamps, one on the input, one on the output')",
    )


ENTRIES = (
    _geometric_entry(
        "smartnoise-geometric-censored",
        bug="two-sided geometric noise censored at ±(upper − lower) and added with no clamp: "
        "the censored tails are outputs the neighbouring count cannot produce",
        source="opendp/smartnoise-core PR 318 and issue 319 (clamp simple geometric mechanism "
        "based on sampling bounds; min == max gave zero noise), runtime/src/utilities/noise.rs "
        "sample_simple_geometric_mechanism at its docstring's example (ε = 0.1, bounds [0, 10])",
        clamp_output=False,
        delta=0.3638103553639766,
        basis="exact: the laws of counts 1 and 0 (mpmath, 20 digits): output 11, count 1's "
        "lump α^10/(1 + α), is never output by count 0 (ε = ∞); δ at ε = 0.1 adds count 1's "
        "lower lump against count 0's geometric mass at −9",
        pair=GEOMETRIC_PAIR,
    ),
    _geometric_entry(
        "smartnoise-geometric-input-unclamped",
        bug="censored geometric noise with the release clamped to [lower, upper] but not the "
        "input: a count beyond the bounds puts its censored tail inside them",
        source="opendp/smartnoise-core issue 358 and PR 359 (hardened geometric mechanism, "
        "item 2: the input should be clamped to keep the tail bin of the censored geometric "
        "out of the output domain), at the docstring's example (ε = 0.1, bounds [0, 10])",
        clamp_output=True,
        delta=0.19312905011639028,
        basis="exact: the laws of counts 11 and 10 (mpmath, 20 digits): count 10's lower lump "
        "α^10/(1 + α) falls on 0, which count 11 never outputs (ε = ∞, δ at ε = 0.1 is that "
        "lump); counts within [0, 10] keep the claim",
        pair=GEOMETRIC_BEYOND_PAIR,
    ),
)
