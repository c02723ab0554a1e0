"""SmartNoise SQL's ``GROUP BY`` count with its τ threshold, as installed, as a dpaudit mechanism.

Only SmartNoise SQL's public API is used: ``snsql.from_df`` on a pandas table, a
``snsql.Privacy`` object, a metadata dictionary, ``PrivateReader.execute`` and
``PrivateReader.get_privacy_cost``. Each library call builds a fresh reader.

Encoding. A histogram ``c`` is a table ``T.data(uid, key)`` with ``c_i`` users of key ``i``,
one row each; the metadata declares ``uid`` the private id, ``max_ids: 1`` (a user has at
most one row, so the library's reservoir sampling keeps every row) and ``censor_dims: true``.
The query is ``SELECT key, COUNT(DISTINCT uid) AS n FROM T.data GROUP BY key``: the library
noises each key's user count (its key count) and releases the keys whose noisy count exceeds
``reader.tau``. Adding or removing one user moves one count by one:
[`AddRemoveUser`][mechanisms.AddRemoveUser] ``(1)``. A key with no user is absent and never
released. The outcome is the set of released keys (ascending ids, padded with ``PAD``); the
noisy counts are dropped, which is post-processing: a lower bound on the key set is one on
the release.

Claim: ``reader.get_privacy_cost(query)``, the library's own cost of the query from its
privacy object (its heterogeneous odometer: ``(ε, 1 − (1 − δ/2)(1 − δ))`` for this one-count
query), under ``AddRemoveUser(1)``.

Law (snsql 1.0.10, ``snsql/sql/_mechanisms/laplace.py``): the count gets continuous
Laplace noise of the scale ``reader`` finds by binary search (about ``1/ε``: OpenDP's
``make_laplace``), and a key with ``n`` users is released when ``n + L > τ``,
``τ = 1 − ln(2δ)/ε`` ([`release_probability`][dpaudit.integrations.smartnoise.release_probability]).

``threshold`` is a deliberately broken wrapper: ``censor_dims`` off, the library's noisy
counts taken before its post-processing (``execute(query, postprocess=False)``) and the keys
kept whose noisy count exceeds the wrapper's own ``threshold``. ``threshold = τ`` has the
library's law; ``threshold = τ − 1`` is the off-by-one of opendp/opendp issue 2922 (rebuilt
by hand in ``dpaudit/corpus/partition_selection.py``), ``threshold = ⌊τ⌋`` the truncation of
google/differential-privacy PR 101. The claim stays the cost of the censored query: what the
wrapper's author believes they reproduced. (A ``HAVING`` clause is not the same filter: the
released ``COUNT`` is an ``int``, the noisy value truncated toward zero by the reader's
``convert``, so ``HAVING n > h`` keeps a key when its noisy count is at least ``⌊h⌋ + 1``.)

Randomness: the noise comes from OpenDP (OS entropy, no seed), so ``seeded_by_rng = False``
(the grey-box replay check skips this adapter). Batching: one ``sample`` call runs one query
on ``size`` copies of the histogram, copy ``b``'s key ``i`` numbered ``b·d + i`` with users
of its own. The reader noises each result row by its own ``release`` call on a mechanism
whose scale and τ depend on ``(ε, δ, max_ids)`` only (``PrivateReader._execute_ast``), so one
copy's keys have the law of a query on that histogram alone, and copies are independent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import snsql

from mechanisms import PAD, AddRemoveUser, PrivacyClaim, TopKMechanism

from .budget import empty_releases, validate_budget

__all__ = [
    "QUERY",
    "SmartNoiseGroupByCount",
    "release_probability",
    "smartnoise_tau",
    "smartnoise_version",
]

#: The query every call runs.
QUERY = "SELECT key, COUNT(DISTINCT uid) AS n FROM T.data GROUP BY key"

#: Rows handed to the library per call at most (memory and one pandas query).
MAX_ROWS_PER_CALL = 200_000


def smartnoise_version() -> str:
    """The installed smartnoise-sql and opendp versions (for the audit's evidence)."""
    from importlib.metadata import version

    return f"smartnoise-sql {version('smartnoise-sql')}, opendp {version('opendp')}"


def smartnoise_tau(epsilon: float, delta: float) -> float:
    """τ = 1 − ln(2δ)/ε (``Laplace.threshold`` with ``max_contrib = 1``)."""
    return 1.0 - math.log(2.0 * delta) / epsilon


def release_probability(n: int, scale: float, tau: float) -> float:
    """P(n + L > τ), L ~ Laplace(0, scale); 0 for a key without users."""
    if n == 0:
        return 0.0
    gap = tau - n
    return 0.5 * math.exp(-gap / scale) if gap >= 0 else 1.0 - 0.5 * math.exp(gap / scale)


def _metadata(censor_dims: bool) -> dict[str, Any]:
    table = {
        "row_privacy": False,
        "max_ids": 1,
        "censor_dims": censor_dims,
        "uid": {"type": "int", "private_id": True},
        "key": {"type": "int"},
    }
    return {"": {"T": {"data": table}}}


@dataclass(frozen=True)
class SmartNoiseGroupByCount(TopKMechanism):
    """SmartNoise SQL's ``GROUP BY`` user count with ``censor_dims`` (its τ threshold).

    Parameters
    ----------
    epsilon, delta : the ``snsql.Privacy`` object's ε and δ.
    threshold : ``None`` (the library's own censoring) or the wrapper's own threshold on
        the library's uncensored noisy counts (a broken wrapper, module docstring).
    partitions : the most keys of a histogram audited (the outcome width).
    """

    epsilon: float
    delta: float
    threshold: float | None = None
    partitions: int = 5

    outcome_validation: ClassVar[str] = "strict"
    #: The noise comes from OpenDP's OS entropy; the audit's generator cannot replay it.
    seeded_by_rng: ClassVar[bool] = False
    parallel_min_chunk: ClassVar[int] = 1
    preferred_chunk: ClassVar[int] = 5_000
    ordered: ClassVar[bool] = False

    def __post_init__(self):
        validate_budget(self)
        if self.threshold is not None and not (
            isinstance(self.threshold, int | float) and math.isfinite(self.threshold)
        ):
            raise ValueError(f"threshold must be a finite number or None, got {self.threshold!r}")

    @property
    def width(self) -> int:
        return self.partitions

    def reader(self, frame: pd.DataFrame, *, censor_dims: bool | None = None) -> Any:
        """A fresh ``PrivateReader`` on ``frame`` with this adapter's privacy and metadata."""
        censor = self.threshold is None if censor_dims is None else censor_dims
        privacy = snsql.Privacy(epsilon=self.epsilon, delta=self.delta)
        return snsql.from_df(frame, privacy=privacy, metadata=_metadata(censor))

    @cached_property
    def claim(self) -> PrivacyClaim:
        """``get_privacy_cost`` of the censored query (no rows are read)."""
        empty = pd.DataFrame({"uid": np.zeros(0, np.int64), "key": np.zeros(0, np.int64)})
        epsilon, delta = self.reader(empty, censor_dims=True).get_privacy_cost(QUERY)
        return PrivacyClaim(float(epsilon), float(delta), AddRemoveUser(1))

    def sample(self, counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` releases, as many copies of the histogram per query as fit."""
        counts, size, rng, out = empty_releases(self, counts, size, rng, "keys")
        d = int(counts.size)
        users = int(counts.sum())
        if users == 0:
            return out  # no user, no key: nothing can be released
        copies = max(1, MAX_ROWS_PER_CALL // users)
        done = 0
        while done < size:
            n = min(copies, size - done)
            keys = np.repeat(np.arange(n * d, dtype=np.int64), np.tile(counts, n))
            frame = pd.DataFrame({"uid": np.arange(keys.size, dtype=np.int64), "key": keys})
            kept = np.zeros(n * d, dtype=bool)
            kept[self._released_keys(frame)] = True
            out[done : done + n, :d] = _key_sets(kept.reshape(n, d))
            done += n
        return out

    def _released_keys(self, frame: pd.DataFrame) -> list[int]:
        """One query: the keys the library releases, or the wrapper's threshold keeps."""
        reader = self.reader(frame)
        if self.threshold is None:
            return [int(row[0]) for row in reader.execute(QUERY)[1:]]  # row 0: the header
        noisy = reader.execute(QUERY, postprocess=False)  # (key, noisy count) rows
        return [int(key) for key, count in noisy if count > self.threshold]

    def __str__(self) -> str:
        broken = "" if self.threshold is None else f", wrapper threshold {self.threshold:g}"
        return (
            f"SmartNoise SQL GROUP BY count(epsilon={self.epsilon:g}, delta={self.delta:g}{broken})"
        )


def _key_sets(kept: np.ndarray) -> np.ndarray:
    """Ascending ids of the kept keys per row, padded with PAD."""
    _, d = kept.shape
    ids = np.where(kept, np.arange(d), d)
    ids.sort(axis=1)
    return np.where(ids < d, ids, PAD).astype(np.int64)
