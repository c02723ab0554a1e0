"""Exact evaluation on tiny domains: output laws, privacy profiles, exhaustive checks."""

from .law import DEFAULT_DIGITS, output_law, working_precision

__all__ = ["DEFAULT_DIGITS", "output_law", "working_precision"]

# Evaluator modules register with output_law on import, one line each below.
