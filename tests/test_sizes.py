"""No function over 60 lines and no module over 400 (issue 44).

The sizes are measured by ``tools/sizes.py`` (a function from its ``def`` to its last line,
docstring included; a module's physical lines; generated tables and data excepted by its
``EXEMPT``, each with its reason). ``FUNCTIONS_OVER`` and ``MODULES_OVER``, the lists of those
once over the limits, are empty: a new one over a limit fails, naming it and the limit; one
listed again that is no longer over fails until it is removed.
"""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION, MAX_MODULE = 60, 400

#: Functions over ``MAX_FUNCTION`` lines (issue 44): none, and it stays so.
FUNCTIONS_OVER: set[str] = set()

#: Modules over ``MAX_MODULE`` lines (issue 44): none, and it stays so.
MODULES_OVER: set[str] = set()


def _sizes():
    spec = importlib.util.spec_from_file_location("sizes", ROOT / "tools" / "sizes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def over():
    functions, modules = _sizes().over_limits(
        ("dpaudit", "mechanisms"), MAX_FUNCTION, MAX_MODULE, base=ROOT
    )
    return dict(functions), dict(modules)


@pytest.mark.parametrize(
    ("kind", "index", "listed", "limit"),
    [
        ("function", 0, FUNCTIONS_OVER, MAX_FUNCTION),
        ("module", 1, MODULES_OVER, MAX_MODULE),
    ],
)
def test_nothing_new_over_the_limit_and_the_list_only_shrinks(over, kind, index, listed, limit):
    found = over[index]
    new = sorted(set(found) - listed)
    assert not new, "; ".join(
        f"{name} has {found[name]} lines, over the {limit}-line limit for a {kind}: split it"
        for name in new
    )
    fixed = sorted(listed - set(found))
    assert not fixed, "; ".join(
        f"{name} is no longer over {limit} lines: remove it from the list" for name in fixed
    )
