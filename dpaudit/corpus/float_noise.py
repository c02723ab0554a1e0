"""Textbook floating-point Laplace noise: the doubles it can output depend on the input.

Mironov, "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012,
§3-4: ``x − b·sign(u)·ln(1 − 2|u|)`` evaluated in doubles misses many doubles, and which
ones depends on ``x``; an output reachable from one count and not from its neighbour
breaks ε-DP for every ε. IBM/differential-privacy-library (diffprivlib) issue 19
("Floating-point privacy vulnerabilities") reports its Laplace mechanism, written this way,
open to the attack. The release here is the count of item 0 with that noise
(``AddRemoveUser(1)``: one count moves by at most 1).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from mechanisms import AddRemoveUser, validate_counts

from .entry import CorpusEntry, TrueGuarantee, black_box

__all__ = ["ENTRIES", "reachable", "textbook_laplace"]

EPSILON = 1.0
RELATION = AddRemoveUser(1)
#: numpy's ``random()`` returns k·2^-53, so 1 − 2|u| is j·2^-52 with 1 <= j <= 2^52.
_GRID = 2.0**-52


def textbook_laplace(value, u, scale):
    """The textbook sampler, in the order of operations its code uses (u uniform in [−½, ½))."""
    return value - scale * np.sign(u) * np.log(1 - 2 * np.abs(u))


def _textbook_batch(counts, size, rng, *, scale):
    value = float(validate_counts(counts)[0])
    return textbook_laplace(value, rng.random(size) - 0.5, scale)


def reachable(outputs, value, scale):
    """Whether each double in ``outputs`` is an output of the sampler on ``value``, exactly.

    Inverts y = value ∓ b·ln(m) for m = 1 − 2|u| on its grid j·2^-52 and evaluates the
    sampler's own floating-point expression at the grid points around the real solution
    (the map j → output is monotone, so a window of ±4 points cannot miss one).
    """
    y = np.asarray(outputs, dtype=float)
    found = np.zeros(y.shape, dtype=bool)
    for sign in (1.0, -1.0):
        with np.errstate(over="ignore"):
            m = np.exp((value - y) / (scale * sign))
        centre = np.floor(m / _GRID)
        for step in range(-4, 5):
            j = centre + step
            valid = (j >= 1) & (j <= 2**52)
            grid = np.where(valid, j, 1.0) * _GRID
            # 1 − 2|u| = grid; sign(u) = sign; the sampler's expression on that u.
            out = value - scale * sign * np.log(grid)
            found |= valid & (out == y)
    return found


def _witness():
    """A double that count 0 outputs (u ≈ 0.1, on numpy's grid) and count 1 never does: P >= 2^-53, Q = 0."""
    u = np.floor(0.6 * 2.0**53) * 2.0**-53 - 0.5
    y = textbook_laplace(0.0, u, 1.0 / EPSILON)
    ok = bool(reachable([y], 0.0, 1.0 / EPSILON)[0]) and not bool(
        reachable([y], 1.0, 1.0 / EPSILON)[0]
    )
    return (math.inf if ok else 0.0), 2.0**-53


def _geometric_batch(counts, size, rng, *, scale):
    value = float(validate_counts(counts)[0])
    p = -math.expm1(-1.0 / scale)
    return value + (rng.geometric(p, size=size) - rng.geometric(p, size=size)).astype(float)


ENTRIES = (
    CorpusEntry(
        name="float-laplace-textbook",
        family="float noise",
        bug="Laplace noise by inverse CDF in doubles: which doubles come out depends on the count",
        source="IBM/differential-privacy-library issue 19 (floating-point privacy "
        "vulnerabilities); Mironov, CCS 2012, §3-4",
        build=lambda: black_box(
            functools.partial(_textbook_batch, scale=1.0 / EPSILON),
            claim=(EPSILON, 0.0, RELATION),
            width=0,
            name="float-laplace-textbook",
            values=1,
        ),
        true=TrueGuarantee(
            math.inf,
            0.8,
            "exact: ε = ∞, a double output on count 0 and never on count 1 (found by "
            "inverting the sampler's own double arithmetic). δ at the claimed ε ≈ 0.8 is an "
            "estimate, not exact: 80 % of 200,000 count-0 outputs are unreachable from count 1",
            _witness,
            estimated=("delta",),
        ),
        pair=((0, 0, 0, 0, 0), (1, 0, 0, 0, 0)),
        twin=lambda: black_box(
            functools.partial(_geometric_batch, scale=1.0 / EPSILON),
            claim=(EPSILON, 0.0, RELATION),
            width=0,
            name="float-laplace-geometric",
            values=1,
        ),
        twin_source="diffprivlib's Geometric mechanism: discrete Laplace on integer counts "
        "(ε-DP exactly; Ghosh, Roughgarden, Sundararajan 2009)",
    ),
)
