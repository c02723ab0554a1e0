"""Suite-wide settings.

Hypothesis explores randomly on developers' machines (that is how it finds new
edge cases), but in CI (``CI`` set) it is derandomized: the same examples every
run, so a green main stays green and a failure is reproducible.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
