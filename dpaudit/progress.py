"""Progress bars on stderr, for a person at a terminal (the CLI turns them off in logs).

One place decides how a bar looks, so the audit, ``verify`` and ``worst-case`` bars agree.
tqdm hides a bar when the terminal reports zero rows (a pseudo-terminal that was never sized,
as under ``script`` or some CI runners): the height here falls back to 24 rows, so a command
that was asked for a bar shows one.
"""

from __future__ import annotations

import shutil
import sys

__all__ = ["progress_bar"]


def progress_bar(total: int, unit: str, *, desc: str | None = None, initial: int = 0, **options):
    """A tqdm bar on stderr of ``total`` ``unit``s (tqdm is imported only when a bar is asked for).

    Parameters
    ----------
    total : the count at completion.
    unit : what is counted (``"sample"``, ``"pair"``, ``"block"``).
    desc : a label before the bar.
    initial : the count already done (a resumed run).
    options : further tqdm options (``unit_scale``, ``leave``, ...).
    """
    from tqdm import tqdm  # only when a bar is shown: keeps `import dpaudit` light

    rows = shutil.get_terminal_size(fallback=(80, 24)).lines
    return tqdm(
        total=total,
        initial=initial,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        nrows=rows if rows > 0 else 24,
        **options,
    )
