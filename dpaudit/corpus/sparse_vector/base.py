"""DP-Sniper's setting and the batched sparse vectors every variant of the family builds on.

``svt_batch`` answers "above"/"below" (ids only, with or without a cutoff), ``svt_value_batch``
also releases a value for the first "above"; ``cutoff_svt`` and ``value_svt`` wrap them as
black boxes claiming ε-DP under ``RELATION``.
"""

from __future__ import annotations

import functools

import numpy as np

from mechanisms import PAD, BoundedChange, MixedBatch, validate_counts
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

from ..entry import black_box

#: DP-Sniper's setting for every sparse-vector case (exp_default.py).
EPSILON, THRESHOLD, QUERIES = 0.1, 1.0, 10
RELATION = BoundedChange(1)
#: The audit options every entry at DP-Sniper's setting runs with.
SETTING = {"domain_size": QUERIES}


def svt_batch(counts, size, rng, *, rho_scale, nu_scale, threshold, cutoff, queries):
    """Ids answered "above" by a sparse vector (numeric answers: none)."""
    q = validate_counts(counts).astype(float)
    if q.size > queries:
        raise ValueError(f"counts has {q.size} queries, more than the {queries} this release takes")
    width = queries if cutoff is None else min(cutoff, queries)
    rho = rng.laplace(scale=rho_scale, size=(size, 1))
    nu = rng.laplace(scale=nu_scale, size=(size, q.size)) if nu_scale else 0.0
    above = q + nu >= threshold + rho
    if cutoff is not None:
        above &= np.cumsum(above, axis=1) <= cutoff  # stop after the c-th "above"
    ids = np.where(above, np.arange(q.size), q.size + 1)
    ids.sort(axis=1)
    ids = ids[:, :width]
    out = np.full((size, width), PAD, dtype=np.int64)
    out[:, : ids.shape[1]] = np.where(ids <= q.size, ids, PAD)
    return out


def _svt_value_batch(counts, size, rng, *, rho_scale, nu_scale, value_scale, threshold, queries):
    """First id answered "above" (c = 1) and a released value: the tested answer, or a fresh one."""
    q = validate_counts(counts).astype(float)
    if q.size > queries:
        raise ValueError(f"counts has {q.size} queries, more than the {queries} this release takes")
    rho = rng.laplace(scale=rho_scale, size=(size, 1))
    noisy = q + rng.laplace(scale=nu_scale, size=(size, q.size))
    above = noisy >= threshold + rho
    hit = above.any(axis=1)
    first = np.argmax(above, axis=1)
    rows = np.arange(size)
    if value_scale is None:  # Roth's variant: the very answer that was compared
        value = noisy[rows, first]
    else:  # NumericalSVT: fresh noise on the released answer, exact on doubles
        # Discrete Laplace with ratio e^{-1/scale}: the integer Laplace mechanism (Ghosh,
        # Roughgarden, Sundararajan 2009), so the released double is DP as a double too;
        # a double Laplace sample would be porous (Mironov 2012) and not ε-DP.
        ratio = discrete_laplace_ratio(1.0 / value_scale)
        value = q[first] + discrete_laplace(ratio, size, rng)
    items = np.full((size, 1), PAD, dtype=np.int64)
    items[hit, 0] = first[hit]
    return MixedBatch(items, np.where(hit, value, np.nan)[:, None])


def cutoff_svt(name, *, rho_scale, nu_scale, cutoff, threshold=THRESHOLD, epsilon=EPSILON):
    function = functools.partial(
        svt_batch,
        rho_scale=rho_scale,
        nu_scale=nu_scale,
        threshold=threshold,
        cutoff=cutoff,
        queries=QUERIES,
    )
    width = QUERIES if cutoff is None else min(cutoff, QUERIES)
    return black_box(function, claim=(epsilon, 0.0, RELATION), width=width, name=name)


def value_svt(name, epsilon, *, rho_scale, nu_scale, queries, value_scale=None):
    """A sparse vector releasing (first above, its value) as a batched black box."""
    function = functools.partial(
        _svt_value_batch,
        rho_scale=rho_scale,
        nu_scale=nu_scale,
        value_scale=value_scale,
        threshold=THRESHOLD,
        queries=queries,
    )
    return black_box(function, claim=(epsilon, 0.0, RELATION), width=1, name=name, values=1)
