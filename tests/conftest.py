"""Suite-wide settings.

Hypothesis explores randomly on developers' machines (that is how it finds new
edge cases), but in CI (``CI`` set) it is derandomized: the same examples every
run, so a green main stays green and a failure is reproducible.
"""

import os
import sys
from pathlib import Path

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Makes ``tests/`` importable (``import goodness_of_fit``) under any import mode.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
