"""The golden audit results (``tests/golden/``) are reproduced byte for byte.

Audits are deterministic per seed, so any difference is a change of behaviour: either a
bug of a refactor, or an intended change that rewrites the files in a commit of its own
(``python tests/golden/cases.py --write``), whose message says why.
"""

import difflib

import pytest
from golden.cases import CASES, path, render


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_result_is_unchanged(name):
    expected = path(name).read_text(encoding="utf-8")
    actual = render(name)
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True),
                actual.splitlines(True),
                f"golden/{name}.json",
                "now",
                n=1,
            )
        )
        pytest.fail(f"golden result {name} changed:\n{diff[:4000]}")
