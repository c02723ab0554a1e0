"""A user's own mechanisms, audited from the CLI as ``user_mechanisms:NAME`` (tests only)."""

import numpy as np

import mechanisms as M
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio


def rnm_per_call(counts, rng):
    """Report noisy max, one sample per call: Laplace(2/ε) with ε = 1."""
    noisy = np.asarray(counts) + rng.laplace(0.0, 2.0, size=len(counts))
    return (int(np.argmax(noisy)),)


def rnm_batched(counts, size, rng):
    """The same, a batch per call."""
    noisy = np.asarray(counts) + rng.laplace(0.0, 2.0, size=(size, len(counts)))
    return np.argmax(noisy, axis=1)


def argmax_batched(counts, size, rng):
    """No noise at all: not private."""
    return np.full((size, 1), int(np.argmax(counts)), dtype=np.int64)


def limit_domain():
    """A factory."""
    return M.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)


GUMBEL = M.GumbelTopK(k=2, epsilon=0.5)


def rnm_noisy_max_value(counts, size, rng):
    """DP-Sniper's ReportNoisyMax3: releases only the noisy maximum (a float); true ε 2.5.

    Discrete Laplace noise (ratio e^{-1/2}, the analogue of scale 2): its true ε is 2.5 on
    doubles too (a double-precision Laplace sample would be porous, Mironov 2012).
    """
    noise = discrete_laplace(discrete_laplace_ratio(0.5), (size, len(counts)), rng)
    return (np.asarray(counts) + noise).max(axis=1).astype(float)


def rnm_with_value_per_call(counts, rng):
    """Report noisy max with its noisy value, one release per call: ``((item,), (value,))``."""
    noisy = np.asarray(counts, dtype=float) + rng.laplace(0.0, 2.0, size=len(counts))
    winner = int(np.argmax(noisy))
    return (winner,), (float(noisy[winner]),)


# -- broken on purpose: the CLI must report each as "could not run" (exit 4), never a verdict --


def raises_in_sample(counts, size, rng):
    """A batched function whose own code fails."""
    return np.asarray(counts)[size + len(counts)]  # IndexError, raised here


def failing_factory():
    """A factory that cannot build its mechanism."""
    raise RuntimeError("the factory's configuration file is missing")


def out_of_memory(counts, size, rng):
    """A batched function that runs out of memory."""
    raise MemoryError


def nan_values(counts, size, rng):
    """Releases a value that is NaN for every outcome (a numerical bug)."""
    return np.full(size, np.nan)


def some_nan_values(counts, size, rng):
    """Releases the noisy maximum, NaN whenever it is above the top count."""
    noisy = np.asarray(counts, dtype=float) + rng.laplace(0.0, 2.0, size=(size, len(counts)))
    top = noisy.max(axis=1)
    return np.where(top > max(counts), np.nan, top)


def ids_out_of_range(counts, size, rng):
    """Returns an item id outside the domain."""
    return np.full((size, 1), len(counts) + 7, dtype=np.int64)
