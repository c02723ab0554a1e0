"""DataSynthesizer's PrivBayes counts noised at the scale for probabilities, n times too little.

DataResponsibly/DataSynthesizer issue 34: PrivBayes (Zhang et al., SIGMOD 2014, Alg. 1) adds
Laplace noise of scale 2(d − k)/(nε) to the joint distributions, whose L1 sensitivity under
substitution is 2/n; DataSynthesizer's ``lib/PrivBayes.py`` adds that noise to the counts
(sensitivity 2), so each of its d − k noisy tables spends n times its share ε/(d − k). The
release here is one table, at ``describe_dataset_in_correlated_attribute_mode``'s default
ε = 0.1 with d − k = 1 (two attributes, degree 1: one two-way table of four cells), the noisy
counts with negative ones set to 0 as the code does; the normalised conditionals that follow
are post-processing of it.
"""

from __future__ import annotations

import functools

import numpy as np

from mechanisms import Substitute, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from ..entry import CorpusEntry, TrueGuarantee, black_box
from ..exact import laplace_cdf, laplace_pdf, log_ratio, working_precision

#: ``describe_dataset_in_correlated_attribute_mode``'s default ε; d − k = 1 noisy table.
PRIVBAYES_EPSILON, PRIVBAYES_TABLES = 0.1, 1


def _privbayes_counts(counts, size, rng, *, per_row, exact=False):
    """A noisy count table as DataSynthesizer releases it: Laplace noise of scale
    2(d − k)/(nε) (``per_row``: n = counts.sum(), the rows), or the fix the issue asks for,
    2(d − k)/ε, drawn as discrete Laplace (``exact``); negative noisy counts set to 0."""
    q = validate_counts(counts)
    # An empty table has no neighbour under substitution; it is released as if n = 1.
    rows = max(int(q.sum()), 1)
    scale = 2 * PRIVBAYES_TABLES / ((rows if per_row else 1) * PRIVBAYES_EPSILON)
    if exact:
        noise = discrete_laplace(discrete_laplace_ratio(1.0 / scale), (size, q.size), rng)
    else:
        noise = rng.laplace(scale=scale, size=(size, q.size))
    return np.maximum(q + noise, 0.0)


def _privbayes(name, *, per_row, exact=False):
    function = functools.partial(_privbayes_counts, per_row=per_row, exact=exact)
    return black_box(
        function,
        claim=(PRIVBAYES_EPSILON / PRIVBAYES_TABLES, 0.0, Substitute(1)),
        width=0,
        name=name,
        values=4,
    )


#: Twenty rows, one moved from cell 0 to cell 1: the scale is 2/(20 · 0.1) = 1.
PRIVBAYES_PAIR = ((20, 0, 0, 0), (19, 1, 0, 0))
#: A witness output: cell 0 above both counts, cell 1 clipped to 0 (both log ratios at 1/b).
_PRIVBAYES_POINT = 25


def privbayes_point_loss(pair, scale, point=_PRIVBAYES_POINT):
    """Exact log ratio of the law of (cell 0 = ``point``, cell 1 = 0) on ``pair``: the density
    of cell 0 times the mass P(q₁ + L <= 0) that the code's clipping puts on 0 (mpmath)."""
    (a, b) = pair
    with working_precision():
        p = laplace_pdf(point - a[0], scale) * laplace_cdf(-a[1], scale)
        q = laplace_pdf(point - b[0], scale) * laplace_cdf(-b[1], scale)
        return log_ratio(p, q)


def _privbayes_exact():
    rows = sum(PRIVBAYES_PAIR[0])
    scale = 2 * PRIVBAYES_TABLES / (rows * PRIVBAYES_EPSILON)
    return privbayes_point_loss(PRIVBAYES_PAIR, scale), 0.0


ENTRIES = (
    CorpusEntry(
        name="privbayes-count-scale-over-n",
        family="histogram",
        bug="noisy counts with PrivBayes's Laplace scale for probabilities, 2(d − k)/(nε): "
        "n times too little noise on counts of sensitivity 2",
        source="DataResponsibly/DataSynthesizer issue 34 (Wrong Conditional Distributions "
        "Sensitivity: lib/PrivBayes.py laplace_noise_parameter = 2 * (num_attributes - k) / "
        "(num_tuples * epsilon) added to counts), default ε = 0.1, one table (d − k = 1)",
        build=lambda: _privbayes("privbayes-count-scale-over-n", per_row=True),
        true=TrueGuarantee(
            sum(PRIVBAYES_PAIR[0]) * PRIVBAYES_EPSILON,
            0.0,
            "exact: closed form nε/(d − k) on a pair of n rows (L1 distance 2, scale "
            "2(d − k)/(nε)); on the pair's 20 rows 2.0, reached at (cell 0 = 25, cell 1 "
            "clipped to 0): mpmath. Unbounded as n grows",
            _privbayes_exact,
        ),
        pair=PRIVBAYES_PAIR,
        twin=lambda: _privbayes("privbayes-count-scale", per_row=False, exact=True),
        twin_source="the scale issue 34 asks for, 2(d − k)/ε on counts (sensitivity 2 under "
        "substitution), with integer (discrete Laplace) noise so that it is DP on doubles",
        audit_options={"domain_size": 4},
    ),
)
