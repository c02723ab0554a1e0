"""An OpenDP measurement's releases read as outcomes: item ids, values, or released keys.

``read_output`` guesses the encoding from one release on a probe histogram (or takes
``output=``); ``ReleaseEncoding.encode`` turns a list of releases into a batch.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from mechanisms import PAD, MixedBatch
from mechanisms.validation import require_choice

from .opendp_input import HistogramReading, refuse

__all__ = ["OUTPUTS", "ReleaseEncoding", "read_output"]

#: How the outputs may be read (``"auto"``: guessed from one release; module docstring).
OUTPUTS = ("auto", "items", "values", "keys")


def _leaves(release, where: str = "release") -> list:
    """The numbers of a release (nested lists flattened), refused when not numbers."""
    if isinstance(release, (list, tuple)):
        return [leaf for i, part in enumerate(release) for leaf in _leaves(part, f"{where}[{i}]")]
    if isinstance(release, numbers.Real):
        return [release]
    raise refuse(
        f"{where} is a {type(release).__name__}: dpaudit reads item ids, numbers and "
        "dicts of key -> number",
        "post-process the release into those (measurement >> a function)",
    )


def _number(value) -> float:
    leaves = _leaves(value)
    if len(leaves) != 1:
        raise ValueError(f"a released key carries {value!r}, not one number")
    return float(leaves[0])


@dataclass(frozen=True)
class ReleaseEncoding:
    """How releases become outcomes: item ids, values, or released keys with their values.

    Parameters
    ----------
    kind : ``"items"``, ``"values"`` or ``"keys"``.
    width : item slots of an outcome.
    value_width : value slots of an outcome.
    """

    kind: str
    width: int
    value_width: int

    def encode(self, releases: list, reading: HistogramReading) -> np.ndarray | MixedBatch:
        """The batch of ``releases`` (an int64 array for items, else a MixedBatch)."""
        size = len(releases)
        if self.kind == "items":
            out = np.full((size, self.width), PAD, dtype=np.int64)
            for row, release in enumerate(releases):
                ids = _leaves(release)
                if len(ids) > self.width or not all(
                    isinstance(i, int) and 0 <= i < reading.domain_size for i in ids
                ):
                    raise ValueError(
                        f"release {release!r} is not at most {self.width} item ids in "
                        f"0..{reading.domain_size - 1}; pass output='values' to read numbers"
                    )
                out[row, : len(ids)] = ids
            return out
        if self.kind == "values":
            values = np.empty((size, self.value_width), dtype=np.float64)
            for row, release in enumerate(releases):
                leaves = _leaves(release)
                if len(leaves) != self.value_width:
                    raise ValueError(
                        f"release {release!r} holds {len(leaves)} numbers, not the "
                        f"{self.value_width} of the first release"
                    )
                values[row] = leaves
            return MixedBatch(np.zeros((size, 0), dtype=np.int64), values)
        items = np.full((size, self.width), PAD, dtype=np.int64)
        values = np.full((size, self.value_width), np.nan)
        index = {key: i for i, key in enumerate(reading.records or ())}
        for row, release in enumerate(releases):
            if not isinstance(release, dict) or not set(release) <= set(index):
                raise ValueError(f"release {release!r} is not a dict of known keys to numbers")
            found = sorted((index[key], _number(v)) for key, v in release.items())
            for slot, (item, value) in enumerate(found):
                items[row, slot], values[row, slot] = item, value
        return MixedBatch(items, values)


def read_output(measurement, reading: HistogramReading, output: str = "auto") -> ReleaseEncoding:
    """The encoding of ``measurement``'s releases, from one release on a probe histogram.

    ``output="auto"``: a dict is keys; ints are item ids on a count vector under L∞, numbers
    otherwise; floats are values (module docstring). The probe counts ``d, d-1, ..., 1``.
    """
    output = require_choice("output", output, OUTPUTS)
    d = reading.domain_size
    release = measurement(reading.data(np.arange(d, 0, -1)))
    if isinstance(release, dict) or output == "keys":
        if not isinstance(release, dict) or reading.kind != "partitions":
            raise refuse(
                f"output='keys' needs a map input and a dict release, got {type(release).__name__}",
                "pass output='items' or 'values'",
            )
        if output not in ("auto", "keys"):
            raise refuse(f"the release is a dict, not {output}", "pass output='keys'")
        return ReleaseEncoding("keys", d, d)
    leaves = _leaves(release)
    if not leaves:
        raise refuse(f"the release {release!r} holds no number", "release ids or numbers")
    ids = all(isinstance(v, int) and not isinstance(v, bool) for v in leaves)
    if output == "auto":
        selection = reading.kind == "counts" and reading.metric == "LInfDistance"
        output = "items" if ids and selection else "values"
    if output == "items":
        if not ids:
            raise refuse(
                f"output='items' but the release {release!r} holds non-integers",
                "pass output='values'",
            )
        return ReleaseEncoding("items", len(leaves), 0)
    return ReleaseEncoding("values", 0, len(leaves))
