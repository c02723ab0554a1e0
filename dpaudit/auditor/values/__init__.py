"""Events: outcome events and counts, and for real-valued releases batches, encoders and value events.

Importing this package registers the value event kinds with
[`dpaudit.auditor.values.outcome_events.event_from_dict`][dpaudit.auditor.values.outcome_events.event_from_dict].
"""

from .batches import as_mixed_batch, value_width_of
from .candidates import value_candidate_events
from .encoders import (
    VIEW_BINS,
    VIEW_FLOAT,
    VIEW_GRID,
    VIEW_ITEM_TAILS,
    VIEW_LOW_BITS,
    VIEW_SCORE,
    LinearScore,
    ValueEncoder,
    items_only_encoder,
)
from .events import ItemValueThreshold, OnItems, ValueRegion, ValueThreshold
from .fitting import fit_encoder, quantile_edges
from .outcome_events import events_hits

__all__ = [
    "VIEW_BINS",
    "VIEW_FLOAT",
    "VIEW_GRID",
    "VIEW_ITEM_TAILS",
    "VIEW_LOW_BITS",
    "VIEW_SCORE",
    "ItemValueThreshold",
    "LinearScore",
    "OnItems",
    "ValueEncoder",
    "ValueRegion",
    "ValueThreshold",
    "as_mixed_batch",
    "events_hits",
    "fit_encoder",
    "items_only_encoder",
    "quantile_edges",
    "value_candidate_events",
    "value_width_of",
]
