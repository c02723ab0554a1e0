"""Exact evaluation on tiny domains: output laws, privacy profiles, exhaustive checks.

Importing this package registers the exact law of every mechanism family with
[`output_law`][dpaudit.exact.output_law] (one evaluator module per family).
"""

# Evaluator modules register with output_law on import.
from . import (  # noqa: F401
    fixed_threshold_laws,
    gumbel_laws,
    joint_laws,
    laplace_laws,
    session_laws,
    stability_laws,
)
from .certify import CertifiedInterval, certify_worst_case
from .float_laws import float_epsilon, float_law
from .law import DEFAULT_DIGITS, output_law, working_precision
from .profile import (
    epsilon_at,
    epsilon_from_laws,
    hockey_stick,
    privacy_profile,
    profile_from_laws,
    worst_event,
)
from .verify import VerificationResult, verify
from .worst_case import WorstCaseResult, worst_case

__all__ = [
    "DEFAULT_DIGITS",
    "CertifiedInterval",
    "VerificationResult",
    "WorstCaseResult",
    "certify_worst_case",
    "epsilon_at",
    "epsilon_from_laws",
    "float_epsilon",
    "float_law",
    "hockey_stick",
    "output_law",
    "privacy_profile",
    "profile_from_laws",
    "verify",
    "working_precision",
    "worst_case",
    "worst_event",
]
