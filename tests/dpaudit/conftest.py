"""Makes ``tests/dpaudit`` importable so that test modules can ``import helpers``.

pytest's default ("prepend") import mode already puts this directory on
``sys.path`` when it loads this file; the insertion below keeps that true
under other import modes.
"""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
