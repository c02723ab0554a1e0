"""The audit's door and its live run: budgets, the sampler, the schedule, the pipeline loop, refined runs, sessions."""

from .live import local_search_share

__all__ = ["local_search_share"]
