"""Building OpenDP's measurements (once per process) and calling them for a batch of releases.

The constructors and metrics are those of [`dpaudit.integrations.opendp`][dpaudit.integrations.opendp]
(its module docstring says what each samples); only OpenDP's public Python API is used.
"""

from __future__ import annotations

import functools

import numpy as np
import opendp.prelude as dp

from mechanisms import PAD, AddRemoveUser, BoundedChange

__all__ = [
    "NOISY_MAX_CONSTRUCTORS",
    "build_measurement",
    "opendp_version",
    "relation_of",
    "selection_batch",
]

#: The constructors ``OpenDPNoisyMax`` may call (the current name and its deprecated alias).
NOISY_MAX_CONSTRUCTORS = ("make_noisy_max", "make_report_noisy_max_gumbel")


def opendp_version() -> str:
    """The installed OpenDP version (for the audit's evidence)."""
    from importlib.metadata import version

    return version("opendp")


@functools.lru_cache(maxsize=64)
def build_measurement(constructor: str, k: int, scale: float, monotonic: bool):
    """Build (once per process) an OpenDP measurement on integer score vectors.

    Cached because OpenDP objects wrap C pointers and do not pickle: the adapters
    keep only their parameters, and each worker process builds its own measurement.
    """
    dp.enable_features("contrib")  # these constructors are not yet vetted ("contrib")
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int, monotonic=monotonic)
    if constructor == "make_noisy_top_k":
        return dp.m.make_noisy_top_k(*space, dp.max_divergence(), k=k, scale=scale)
    if constructor == "make_noisy_top_k/zCDP":
        return dp.m.make_noisy_top_k(*space, dp.zero_concentrated_divergence(), k=k, scale=scale)
    if constructor == "make_gaussian":
        # one user moves the count vector by an L2 distance, not L-infinity
        counts_space = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int)
        return dp.m.make_gaussian(*counts_space, scale=scale)
    if constructor == "make_noisy_max":
        return dp.m.make_noisy_max(*space, dp.max_divergence(), scale=scale)
    if constructor == "make_report_noisy_max_gumbel":
        return dp.m.make_report_noisy_max_gumbel(*space, scale=scale, optimize="max")
    raise ValueError(f"unknown OpenDP constructor {constructor!r}")


def relation_of(monotonic: bool) -> AddRemoveUser | BoundedChange:
    """The relation a distance of 1 in ``LInfDistance(monotonic=...)`` is (module docstring of
    [`dpaudit.integrations.opendp`][dpaudit.integrations.opendp])."""
    return AddRemoveUser() if monotonic else BoundedChange(1)


def selection_batch(measurement, scores: list[int], size: int, width: int) -> np.ndarray:
    """``size`` releases of a selection ``measurement`` on ``scores``, ``PAD`` past the items.

    Parameters
    ----------
    measurement : an OpenDP measurement releasing ``min(width, len(scores))`` item ids.
    scores : the counts, as Python ints.
    size : number of releases.
    width : the outcome width.
    """
    out = np.full((size, width), PAD, dtype=np.int64)
    taken = min(width, len(scores))
    if size and taken:
        # The loop is the edge of the library: one public call per release.
        out[:, :taken] = np.array(
            [measurement(scores) for _ in range(size)], dtype=np.int64
        ).reshape(size, taken)
    return out
