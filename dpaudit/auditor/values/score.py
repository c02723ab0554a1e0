"""The learned score: a logistic regression of "which histogram produced this sample".

The likelihood-ratio score DP-Sniper (Bichsel et al., S&P 2021) learns, fitted on a
pair's own learning samples; the encoder bins it ([`encoders`][dpaudit.auditor.values.encoders]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechanisms import BOTTOM

__all__ = ["LinearScore", "fit_linear_score"]


@dataclass(frozen=True)
class LinearScore:
    """``weights · standardise(features(items, values))``: a fitted logistic score."""

    vocabulary: tuple[int, ...]  # item ids given their own indicator per position
    means: tuple[float, ...]
    scales: tuple[float, ...]
    weights: tuple[float, ...]

    def features(self, items: np.ndarray, values: np.ndarray) -> np.ndarray:
        return _features(items, values, self.vocabulary)

    def __call__(self, items, values) -> np.ndarray:
        x = (self.features(items, values) - np.asarray(self.means)) / np.asarray(self.scales)
        return x @ np.asarray(self.weights)


def _features(items, values, vocabulary):
    """Values (NaN as 0) with missing-value flags, and per-position item indicators."""
    missing = np.isnan(values)
    parts = [np.where(missing, 0.0, values), missing.astype(np.float64)]
    if items.shape[1] and vocabulary:
        vocab = np.asarray(vocabulary, dtype=np.int64)
        parts.extend(
            (items[:, column, None] == vocab[None, :]).astype(np.float64)
            for column in range(items.shape[1])
        )
    return np.hstack(parts)


def fit_linear_score(items_p, values_p, items_q, values_q, penalty=1e-3, max_vocabulary=24):
    """Logistic regression of "drawn from P" on the learning samples of both sides.

    Fitted with ``scipy.optimize.minimize`` (L-BFGS) on standardised features with a
    small L2 penalty, so that separable or collinear features do not diverge.
    """
    items = np.vstack([items_p, items_q])
    values = np.vstack([values_p, values_q])
    ids, freq = np.unique(items[items >= 0], return_counts=True)
    vocabulary = tuple(int(i) for i in ids[np.argsort(-freq, kind="stable")][:max_vocabulary])
    if BOTTOM in set(items.ravel().tolist()):
        vocabulary = vocabulary + (BOTTOM,)
    x = _features(items, values, vocabulary)
    means = x.mean(axis=0)
    scales = x.std(axis=0)
    scales[scales == 0] = 1.0
    x = (x - means) / scales
    y = np.concatenate([np.ones(len(items_p)), np.zeros(len(items_q))])
    n = float(len(y))

    def loss(w):
        z = x @ w
        # log(1 + e^z) - y z, stably; gradient X^T (sigmoid(z) - y)
        value = np.logaddexp(0.0, z).sum() - y @ z
        grad = x.T @ (1.0 / (1.0 + np.exp(-z)) - y)
        return value / n + 0.5 * penalty * w @ w, grad / n + penalty * w

    from scipy import optimize  # optional: only value audits need it, `import dpaudit` stays light

    result = optimize.minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B")
    return LinearScore(
        vocabulary, tuple(map(float, means)), tuple(map(float, scales)), tuple(map(float, result.x))
    )
