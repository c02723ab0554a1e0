"""Suite-wide settings: every test's outcome is fixed by its seeds.

Hypothesis is derandomized (the same examples every run), so a green main stays
green on any machine, CI's included, whatever environment it sets, and a failure
is reproducible. Set ``DPAUDIT_HYPOTHESIS_EXPLORE=1`` to let it explore randomly,
as it should on a developer's machine now and then: that is how it finds new
edge cases.

A sampled :func:`dpaudit.recheck` without ``seed=`` draws fresh entropy, which
makes a test pass or fail by chance (its Fisher tests reject a recorded bound the
audit got wrong with some probability, not always); here it raises instead, so
each such test names its seed. A test about the entropy itself opts out with
``@pytest.mark.fresh_entropy``.
"""

import importlib
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("fixed", derandomize=True, print_blob=True)
if not os.environ.get("DPAUDIT_HYPOTHESIS_EXPLORE"):
    settings.load_profile("fixed")

# Makes ``tests/`` importable (``import goodness_of_fit``) under any import mode.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


class _NoEntropy:
    """Stands in for :mod:`secrets` in :mod:`dpaudit.recheck` during a test."""

    @staticmethod
    def randbits(bits):
        raise AssertionError(
            "a sampled recheck in a test draws fresh entropy: pass seed= (or mark the test "
            "fresh_entropy if the entropy is what it tests)"
        )


@pytest.fixture(autouse=True)
def _seeded_rechecks_only(request, monkeypatch):
    if request.node.get_closest_marker("fresh_entropy") is None:
        # The module, not the function dpaudit re-exports under the same name.
        monkeypatch.setattr(importlib.import_module("dpaudit.recheck"), "secrets", _NoEntropy)
