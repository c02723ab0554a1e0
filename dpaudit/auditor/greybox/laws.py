"""The privacy cost of one draw whose law moves with the data by a known parameter.

Issue 43, item 2(b). Two coupled runs make the same call with the same shape and the same law
parameters except the ones listed in ``PRICED``: the location ``loc`` of Laplace, logistic, normal
and Gumbel noise (numpy's own location parameter; a scale, a rate or a probability that moves with
the data is a divergence instead), and the probabilities ``p`` of ``choice`` (the exponential
mechanism drawn as a categorical). Each draw's elements are independent, so the cost of a draw is
that of the product law.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .recording import Draw
from .traces import law_parameters

__all__ = ["PRICED", "DrawCost", "draw_cost"]

#: ``{method: parameters}`` whose difference between the two runs is priced, not divergent.
PRICED: Mapping[str, tuple[str, ...]] = {
    "laplace": ("loc",),
    "logistic": ("loc",),
    "normal": ("loc",),
    "gumbel": ("loc",),
    "choice": ("p",),
}


@dataclass(frozen=True)
class DrawCost:
    """The privacy cost of one draw whose law differs between the two runs only in ``PRICED``.

    Issue 43, item 2(b); the parameters priced are ``PRICED``, the laws are in
    [`draw_cost`][dpaudit.auditor.greybox.laws.draw_cost].

    Parameters
    ----------
    run : which coupled run (0-based).
    index : the draw's position in that run's trace.
    site : ``file:line`` of the call.
    method : the ``Generator`` method.
    parameter : the parameter that moved ("loc" or "p").
    epsilon : the draw's pure ε: the supremum over outputs of ``|ln f(x) / f'(x)|``
        (``inf`` when unbounded: Gaussian and Gumbel shifts, or a support that moves).
    exact : True if ``epsilon`` is that supremum, False if only an upper bound.
    mu : for normal draws, the Gaussian-DP μ of the shift (``epsilon`` is then ``inf``).
    law : how the cost was computed, in words.
    """

    run: int
    index: int
    site: str
    method: str
    parameter: str
    epsilon: float
    exact: bool
    mu: float | None
    law: str

    def __str__(self) -> str:
        cost = (
            f"μ = {self.mu:.4g} (Gaussian DP)" if self.mu is not None else f"ε = {self.epsilon:.4g}"
        )
        bound = "" if self.exact else " (upper bound)"
        return f"run {self.run} draw #{self.index} {self.method} at {self.site}: {cost}{bound}"


def _ratios(law: dict[str, Any], law2: dict[str, Any], shape: tuple[int, ...]) -> np.ndarray:
    """``|Δloc| / scale`` per element of the draw; ``inf`` where a location is not finite."""
    loc = np.broadcast_to(np.asarray(law["loc"], dtype=np.float64), shape)
    loc2 = np.broadcast_to(np.asarray(law2["loc"], dtype=np.float64), shape)
    scale = np.broadcast_to(np.asarray(law["scale"], dtype=np.float64), shape)
    same = (loc == loc2) | (np.isnan(loc) & np.isnan(loc2))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.abs(loc - loc2) / scale
    ratio = np.where(np.isfinite(loc) & np.isfinite(loc2), ratio, np.inf)
    return np.where(same, 0.0, np.where(np.isnan(ratio), np.inf, ratio))


def _categorical(law: dict[str, Any]) -> np.ndarray:
    p = law.get("p")
    if p is None:  # numpy: uniform over the population
        return np.full(int(law["a"]), 1.0 / max(int(law["a"]), 1))
    return np.asarray(p, dtype=np.float64).ravel()


def draw_cost(draw: Draw, draw2: Draw, *, run: int = 0) -> DrawCost | None:
    """The pure ε (or Gaussian-DP μ) of ``draw`` against ``draw2``; None if their laws agree.

    ``draw`` and ``draw2`` are one call of the two coupled runs, equal in method, shape and every
    parameter outside ``PRICED`` (checked first by
    [`traces.first_difference`][dpaudit.auditor.greybox.traces.first_difference]). With ``Δ`` the
    location difference and ``b`` the scale, per element, summed over the draw's independent
    elements:

    * Laplace: ``ε = Σ |Δ|/b``, exact (Dwork & Roth 2014, *The Algorithmic Foundations
      of Differential Privacy*, Thm 3.6: ``ln f/f'`` is ``|Δ|/b``-Lipschitz and reaches
      it in either tail).
    * logistic: ``ε = Σ |Δ|/b``, exact: ``d/dx ln f = −tanh(z/2)/b`` is bounded by ``1/b``
      and approaches it in both tails.
    * normal: ``ε = ∞``; ``μ = ‖Δ/σ‖₂`` is exact in Gaussian DP (Dong, Roth & Su, JRSS-B
      84(1), 2022, Thm 2.7 and Cor. 3.3 for the product).
    * Gumbel: ``ε = ∞``. With ``t = (loc − loc')/b > 0``, ``ln f/f' = t − e^{−z'}(e^{t} − 1)``:
      at most ``t`` towards the upper tail, unbounded below in the lower one, so a
      released Gumbel-noised value is not ε-DP for any ε. Its argmax (top-k) is: the
      Gumbel-max trick is the exponential mechanism (seed 003, Lemma 4.2), a cost this
      per-draw view cannot see.
    * ``choice(a, p)``: ``ε₁ = max_i |ln p_i − ln p'_i|`` (``p=None`` is uniform); with
      replacement ``n ε₁`` for ``n`` items, exact; without, ``(2n − 1) ε₁``, an upper bound
      (each later pick renormalises by a sum that moves by at most ``e^{ε₁}``).

    A location that is NaN or infinite on one side only costs ``ε = ∞`` (the output is
    NaN or infinite on one side only).

    Parameters
    ----------
    draw, draw2 : the same call in the two coupled runs (``counts``, ``counts2``).
    run : which coupled run, recorded in the result.
    """
    priced = PRICED.get(draw.method)
    if priced is None or draw2.method != draw.method:
        return None
    law, law2 = law_parameters(draw), law_parameters(draw2)
    shape = tuple(draw.shape)
    if draw.method == "choice":
        return _choice_cost(draw, law, law2, run)
    ratio = _ratios(law, law2, shape)
    if not np.any(ratio):
        return None
    epsilon, mu, law_text = _location_cost(draw.method, ratio)
    return DrawCost(
        run=run,
        index=draw.index,
        site=draw.site,
        method=draw.method,
        parameter="loc",
        epsilon=epsilon,
        exact=True,
        mu=mu,
        law=law_text,
    )


def _location_cost(method: str, ratio: np.ndarray) -> tuple[float, float | None, str]:
    """``(ε, μ, law)`` of a location shift of ``ratio`` scales per element (see ``draw_cost``)."""
    if method == "laplace":
        return (
            float(ratio.sum()),
            None,
            f"Laplace location shift: ε = Σ|Δloc|/scale over {ratio.size} elements",
        )
    if method == "logistic":
        return (
            float(ratio.sum()),
            None,
            f"logistic location shift: ε = Σ|Δloc|/scale over {ratio.size} elements",
        )
    if method == "normal":
        return (
            math.inf,
            float(np.sqrt(np.sum(np.square(ratio)))),
            "Gaussian location shift: μ = ‖Δloc/σ‖₂ (Gaussian DP); no finite pure ε",
        )
    return (
        math.inf,
        None,
        (
            "Gumbel location shift: ln f/f' is at most Σ|Δloc|/scale towards the upper "
            "tail and unbounded in the lower tail; no finite pure ε for the released value "
            "(its argmax is the exponential mechanism)"
        ),
    )


def _choice_cost(
    draw: Draw, law: dict[str, Any], law2: dict[str, Any], run: int
) -> DrawCost | None:
    p, p2 = _categorical(law), _categorical(law2)
    if p.shape != p2.shape:
        return None  # a different population: a divergence, not a price
    if np.array_equal(p, p2):
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.abs(np.log(p) - np.log(p2))
    gap = np.where(p == p2, 0.0, np.where(np.isnan(gap), np.inf, gap))
    one = float(gap.max())
    size = draw.parameters().get("size")
    n = 1 if size is None else math.prod(int(v) for v in np.atleast_1d(size))
    replace = bool(law.get("replace", True))
    if replace or n <= 1:
        epsilon, exact, how = n * one, True, f"{n} draws with replacement: ε = n·max|Δ ln p|"
    else:
        epsilon, exact = (2 * n - 1) * one, False
        how = f"{n} draws without replacement: ε <= (2n − 1)·max|Δ ln p|"
    return DrawCost(
        run=run,
        index=draw.index,
        site=draw.site,
        method="choice",
        parameter="p",
        epsilon=epsilon,
        exact=exact,
        mu=None,
        law=f"categorical: {how}",
    )
