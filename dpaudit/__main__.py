"""``python -m dpaudit``: the command line (the same as the ``dpaudit`` script)."""

import sys

from dpaudit.cli import main

sys.exit(main())
