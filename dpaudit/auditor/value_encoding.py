"""The value code's names at their original import path ([`dpaudit.auditor.values`][dpaudit.auditor.values])."""

from .values import (
    VIEW_BINS,
    VIEW_SCORE,
    LinearScore,
    OnItems,
    ValueEncoder,
    ValueRegion,
    ValueThreshold,
    as_mixed_batch,
    fit_encoder,
    items_only_encoder,
    quantile_edges,
    value_candidate_events,
    value_width_of,
)
from .values.score import fit_linear_score  # noqa: F401

__all__ = [
    "VIEW_BINS",
    "VIEW_SCORE",
    "LinearScore",
    "OnItems",
    "ValueEncoder",
    "ValueRegion",
    "ValueThreshold",
    "as_mixed_batch",
    "fit_encoder",
    "items_only_encoder",
    "quantile_edges",
    "value_candidate_events",
    "value_width_of",
]
