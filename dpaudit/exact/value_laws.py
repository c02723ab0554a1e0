"""Exact probabilities of events over real-valued releases (mpmath, closed form).

The auditor reduces a release with real values to keys of a learned encoder
(:mod:`dpaudit.auditor.value_encoding`); its events are unions of cells that are
products of intervals (one per value column), thresholds on one value, or events on
the items alone. For the value-releasing mechanisms of this project the law of a cell
is closed form, so the auditor's evidence on them can be checked exactly:

* :class:`mechanisms.NoisyCountsRelease` — the selector's exact law
  (:func:`dpaudit.exact.output_law`) times, for each released item, the Laplace
  probability of its noisy count's interval, ``F(b − c) − F(a − c)`` with
  ``F(x) = ½ e^{x/s}`` (x < 0), ``1 − ½ e^{−x/s}`` (x >= 0);
* report-noisy-max releasing its noisy maximum (DP-Sniper's ReportNoisyMax3, catalog
  ``rnm-releases-noisy-max``): ``P(max < t) = Π_i F(t − c_i)``.

Events over the learned score are not product sets; for those this module returns
None and a re-check samples instead. Precision: ``mpmath.mp.dps`` of the caller
(:func:`dpaudit.exact.working_precision` gives 50 digits).
"""

from __future__ import annotations

import mpmath
import numpy as np

from mechanisms import PAD, NoisyCountsRelease

__all__ = ["laplace_cdf", "value_event_probability"]


def laplace_cdf(x, loc, scale) -> mpmath.mpf:
    """``P(loc + Lap(scale) < x)`` exactly (±inf allowed)."""
    if x == np.inf:
        return mpmath.mpf(1)
    if x == -np.inf:
        return mpmath.mpf(0)
    z = (mpmath.mpf(x) - mpmath.mpf(loc)) / mpmath.mpf(scale)
    return mpmath.exp(z) / 2 if z < 0 else 1 - mpmath.exp(-z) / 2


def _interval(encoder, column, code):
    edges = encoder.edges[column]
    low = edges[code - 2] if code >= 2 else -np.inf
    high = edges[code - 1] if code - 1 < len(edges) else np.inf
    return low, high


def _noisy_counts_cell(mech, law, histogram, key, encoder):
    w = encoder.width
    items = tuple(v for v in key[1 : 1 + w] if v != PAD)
    codes = key[1 + w :]
    p = law.get(items, mpmath.mpf(0))
    if p == 0:
        return p
    scale = mech.noise_scale
    for column, code in enumerate(codes):
        item = key[1 + column] if column < w else PAD
        if item < 0:  # no value at ⊥ / PAD: NaN, code 0
            if code != 0:
                return mpmath.mpf(0)
            continue
        if code == 0:
            return mpmath.mpf(0)
        count = histogram[item] if item < len(histogram) else 0
        low, high = _interval(encoder, column, code)
        p *= laplace_cdf(high, count, scale) - laplace_cdf(low, count, scale)
    return p


def _noisy_counts_threshold(mech, law, histogram, event):
    encoder, column = event.encoder, event.column
    edge = encoder.edges[column][event.code - 2]
    total = mpmath.mpf(0)
    for items, p in law.items():
        if column >= len(items) or items[column] < 0:
            continue
        item = items[column]
        count = histogram[item] if item < len(histogram) else 0
        below = laplace_cdf(edge, count, mech.noise_scale)
        total += p * ((1 - below) if event.above else below)
    return total


def _max_value_cell(mech, histogram, key, encoder):
    code = key[1 + encoder.width]
    if code == 0:
        return mpmath.mpf(0)
    low, high = _interval(encoder, 0, code)
    scale = 2 / mpmath.mpf(mech.epsilon)

    def below(t):
        return mpmath.fprod(laplace_cdf(t, c, scale) for c in histogram)

    return below(high) - below(low)


def value_event_probability(mech, counts, event):
    """``P(event)`` for ``mech`` on ``counts`` exactly, or None where not closed form."""
    from dpaudit.auditor.value_encoding import VIEW_BINS, OnItems, ValueRegion, ValueThreshold
    from dpaudit.catalog import ReportNoisyMaxFloatValue

    from .law import output_law

    histogram = [int(c) for c in np.asarray(counts)]
    if isinstance(event, ValueRegion) and event.view != VIEW_BINS:
        return None
    if isinstance(event, ValueThreshold) and event.column < 0:
        return None
    if isinstance(mech, NoisyCountsRelease):
        law = {tuple(k): v for k, v in output_law(mech.selector, np.asarray(counts)).items()}
        if isinstance(event, ValueRegion):
            return mpmath.fsum(
                _noisy_counts_cell(mech, law, histogram, key, event.encoder) for key in event.keys
            )
        if isinstance(event, ValueThreshold):
            return _noisy_counts_threshold(mech, law, histogram, event)
        if isinstance(event, OnItems):
            return mpmath.fsum(p for items, p in law.items() if event.event.contains(items))
        return None
    if isinstance(mech, ReportNoisyMaxFloatValue):
        if isinstance(event, ValueRegion):
            return mpmath.fsum(
                _max_value_cell(mech, histogram, key, event.encoder) for key in event.keys
            )
        if isinstance(event, ValueThreshold):
            edge = event.encoder.edges[0][event.code - 2]
            below = mpmath.fprod(
                laplace_cdf(edge, c, 2 / mpmath.mpf(mech.epsilon)) for c in histogram
            )
            return (1 - below) if event.above else below
    return None
