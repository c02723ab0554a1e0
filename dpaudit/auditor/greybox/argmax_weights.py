"""The largest importance weight over a noisy-argmax event, for location-shift proposals.

Issue 43, item 3. A noisy-argmax mechanism reports the item with the largest ``a_i + x_i``, the
noise ``x`` one draw of i.i.d. Gumbel or Laplace elements at scale ``b`` (GumbelTopK's first
pick with ``a = ε c``, ``b = 1``; report-noisy-max with ``a = c``). Runs drawn from the defensive
mixture ``λ p + (1 − λ) p̃``, ``p̃`` the noise shifted by ``σ`` (a
[`TiltedGenerator`][dpaudit.auditor.greybox.tilted_generator.TiltedGenerator] tilt on that draw), weigh
``w(x) = 1 / (λ + (1 − λ) r(x))`` with ``r = p̃/p = Π_i r_i(x_i)``. On the event
``S_j = {a_j + x_j > a_i + x_i for all i ≠ j}`` the weight is at most
``B = 1 / (λ + (1 − λ) inf_{S_j} r)``, and
[`betting_bound`][dpaudit.auditor.bounds.weighted_bounds.betting_bound] needs ``B`` of the order of
``P(S_j)`` to bound a rare ``P(S_j)`` well (its floor is about ``B ln(1/α) / n``).

Each ``ln r_i`` is monotone in ``x_i`` (both families have a monotone likelihood ratio in the
location): nondecreasing for ``σ_i > 0``, nonincreasing for ``σ_i < 0``. For fixed ``x_j`` every
other ``x_i`` ranges over ``x_i < x_j + a_j − a_i``, so the infimum over ``x_i`` is at that
boundary when ``σ_i <= 0`` and at ``x_i → −∞`` when ``σ_i > 0``; what is left is an infimum over
the one variable ``x_j``, computed exactly for each family below. Ties have probability 0.
"""

from __future__ import annotations

import math

import numpy as np

from mechanisms.validation import require_positive_float, require_probability

__all__ = ["gumbel_dominating_shift", "noisy_max_weight_bound"]

#: Families with a derived bound.
_FAMILIES = ("gumbel", "laplace")
# The bound is raised by this relative margin: it covers the rounding of the weights that
# TiltedGenerator computes from scipy's logpdf (relative error of w <= absolute error of ln r).
_MARGIN = 1e-9
# gumbel_dominating_shift stays this far (relative) inside the region where B is finite.
_BACKOFF = 1e-6


def _inputs(method, offsets, item, shift, scale):
    if method not in _FAMILIES:
        raise ValueError(
            f"method must be one of {_FAMILIES} (the families with a derived bound), got {method!r}"
        )
    a = np.asarray(offsets, dtype=np.float64)
    if a.ndim != 1 or a.size < 2 or not np.all(np.isfinite(a)):
        raise ValueError(
            f"offsets must be a 1-D array of at least 2 finite numbers (the a_i of a_i + x_i), "
            f"got {offsets!r}"
        )
    if isinstance(item, bool) or not isinstance(item, (int, np.integer)) or not 0 <= item < a.size:
        raise ValueError(f"item must be an index in [0, {a.size}), got {item!r}")
    try:
        sigma = np.broadcast_to(np.asarray(shift, dtype=np.float64), a.shape).copy()
    except ValueError:
        raise ValueError(
            f"shift must broadcast to the offsets' shape {a.shape}, got {shift!r}"
        ) from None
    if not np.all(np.isfinite(sigma)):
        raise ValueError(f"shift must be finite, got {shift!r}")
    return a, int(item), sigma, require_positive_float("scale", scale)


def _gumbel_limit(a: np.ndarray, j: int, sigma: np.ndarray, b: float) -> float:
    """``ln(1 + Σ_{i≠j} (1 − e^{σ_i/b}) e^{(a_i − a_j)/b})``, the largest ``σ_j/b`` with ``K <= 0``."""
    others = np.arange(a.size) != j
    down = others & (sigma < 0.0)
    terms = np.log(-np.expm1(sigma[down] / b)) + (a[down] - a[j]) / b
    return float(np.logaddexp.reduce(np.concatenate([[0.0], terms])))


def _gumbel_log_inf(a: np.ndarray, j: int, sigma: np.ndarray, b: float) -> float:
    others = np.arange(a.size) != j
    if np.any(sigma[others] > 0.0):
        return -math.inf
    limit = _gumbel_limit(a, j, sigma, b)
    if sigma[j] / b > limit - 1e-12 * (1.0 + abs(limit)):
        return -math.inf
    return float(sigma.sum()) / b


def _laplace_log_ratio(x: np.ndarray, s: float, b: float) -> np.ndarray:
    """``ln p̃/p`` of Laplace(σ, b) against Laplace(0, b): ``(|x| − |x − σ|) / b``."""
    return (np.abs(x) - np.abs(x - s)) / b


def _laplace_log_inf(a: np.ndarray, j: int, sigma: np.ndarray, b: float) -> float:
    others = np.flatnonzero(np.arange(a.size) != j)
    down = [i for i in others if sigma[i] < 0.0]
    constant = -float(sum(sigma[i] for i in others if sigma[i] >= 0.0)) / b
    gaps = {i: a[j] - a[i] for i in down}
    corners = [0.0, sigma[j]]
    for i in down:
        corners += [-gaps[i], sigma[i] - gaps[i]]
    points = np.array(corners)
    points = np.concatenate([points, [points.min() - 1.0, points.max() + 1.0]])
    f = _laplace_log_ratio(points, sigma[j], b) + constant
    for i in down:
        f = f + _laplace_log_ratio(points + gaps[i], sigma[i], b)
    slack = 1e-12 * (1.0 + float(np.abs(points).max()) / b + float(np.abs(sigma).sum()) / b)
    return float(f.min()) - slack


def noisy_max_weight_bound(method, offsets, item, shift, *, mixture, scale=1.0) -> float:
    """``sup w`` over the runs in which ``item`` has the largest noisy value; at most ``1/λ``.

    For [`importance_sampled_probability`][dpaudit.auditor.greybox.importance.importance_sampled_probability]'s
    ``weight_bound`` when the event is "``item`` is reported first" and the tilt shifts the
    noise draw by ``shift`` (one element per item). With ``z = x/b``:

    * Gumbel: ``ln r_i = σ_i/b − e^{−z_i}(e^{σ_i/b} − 1)``. If some ``σ_i > 0``, ``i ≠ j``, the
      infimum is ``−∞``. Else, on the boundary ``e^{−z_i} = e^{−z_j} e^{(a_i − a_j)/b}`` and
      ``ln r = Σσ/b − e^{−z_j} K`` with
      ``K = (e^{σ_j/b} − 1) + Σ_{i≠j} (e^{σ_i/b} − 1) e^{(a_i − a_j)/b}``: the infimum is
      ``Σσ/b`` (as ``x_j → ∞``) when ``K <= 0``, else ``−∞``. A proposal that only raises
      ``x_j`` has ``K > 0``: it gives ``B = 1/λ``, because ``S_j`` still holds for a low
      ``x_j`` when the others are lower still, and there ``p̃ << p``; lowering the others too
      (``σ_i < 0``) dominates ``p`` on all of ``S_j``
      ([`gumbel_dominating_shift`][dpaudit.auditor.greybox.argmax_weights.gumbel_dominating_shift]).
    * Laplace: ``ln r_i = (|x_i| − |x_i − σ_i|)/b``, piecewise linear, in ``[−|σ_i|, |σ_i|]/b``;
      the function of ``x_j`` left after the reduction is piecewise linear, and its minimum is
      taken over its corners and its two constant tails. It is at most ``0`` (its tails are
      ``(σ_j − D − U)/b`` at ``x_j → ∞`` and ``(D − σ_j − U)/b`` at ``x_j → −∞``, with
      ``D = Σ_{σ_i<0} |σ_i|`` and ``U = Σ_{i≠j, σ_i>0} σ_i``; they sum to ``−2U/b``), so ``B >= 1``:
      a location shift of Laplace noise cannot make an argmax event's weight small everywhere
      on it, and the floor of an upper bound stays about ``ln(1/α)/n``.

    The result is ``1/(λ + (1 − λ) e^{inf ln r})`` raised by a relative ``1e-9`` (for the
    rounding of the computed weights), and never above ``1/λ``.

    Parameters
    ----------
    method : "gumbel" or "laplace", the draw's family.
    offsets : ``a``, one per item: the noisy values are ``a + x`` (only differences matter).
    item : ``j``, the item of the event.
    shift : the tilt's ``σ``, broadcast to the offsets' shape.
    mixture : ``λ`` in (0, 1].
    scale : ``b``, the draw's scale (its location cancels).
    """
    a, j, sigma, b = _inputs(method, offsets, item, shift, scale)
    mixture = require_probability("mixture", mixture, allow_one=True)
    largest = 1.0 / mixture
    if method == "gumbel":
        log_inf = _gumbel_log_inf(a, j, sigma, b)
    else:
        log_inf = _laplace_log_inf(a, j, sigma, b)
    if log_inf == -math.inf or mixture == 1.0:
        return largest
    with np.errstate(over="ignore"):
        ratio = math.exp(log_inf) if log_inf < 700.0 else math.inf
    bound = 1.0 / (mixture + (1.0 - mixture) * ratio)
    return min(largest, bound * (1.0 + _MARGIN))


def gumbel_dominating_shift(offsets, item, shift, *, scale=1.0) -> np.ndarray:
    """``shift`` moved the least so that the Gumbel proposal dominates ``p`` on ``S_item``.

    Each ``σ_i``, ``i ≠ j``, is capped at 0, then ``σ_j`` at ``b ln(1 + Σ_{i≠j} (1 − e^{σ_i/b})
    e^{(a_i − a_j)/b})`` (less a relative ``1e-6``): the largest with ``K <= 0`` in
    [`noisy_max_weight_bound`][dpaudit.auditor.greybox.argmax_weights.noisy_max_weight_bound], so
    the weight bound is ``≈ e^{−Σσ/b} / (1 − λ)`` instead of ``1/λ``. Lowering the others is what
    makes room: with ``σ_i = 0`` for all ``i ≠ j`` the cap on ``σ_j`` is 0.

    Parameters
    ----------
    offsets, item, shift, scale : as for
        [`noisy_max_weight_bound`][dpaudit.auditor.greybox.argmax_weights.noisy_max_weight_bound].
    """
    a, j, sigma, b = _inputs("gumbel", offsets, item, shift, scale)
    others = np.arange(a.size) != j
    sigma[others] = np.minimum(sigma[others], 0.0)
    limit = _gumbel_limit(a, j, sigma, b)
    sigma[j] = min(sigma[j], b * (limit - _BACKOFF * (1.0 + abs(limit))))
    return sigma
