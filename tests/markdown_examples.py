"""The Python blocks of a Markdown page, executed in order in one namespace (README, docs).

Importable as ``markdown_examples`` (tests/conftest.py puts this directory on
``sys.path``). A block whose first line starts with ``NOT_RUN`` (``# not run:``
followed by the reason, e.g. "needs your module") is illustrative and skipped;
every other ``python`` block must run as written.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

__all__ = ["NOT_RUN", "Block", "python_blocks", "run_page"]

NOT_RUN = "# not run:"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)$")


@dataclass(frozen=True)
class Block:
    """One fenced ``python`` block: where it starts (1-based line of its first code line) and its code."""

    path: Path
    line: int
    source: str

    @property
    def runs(self) -> bool:
        """False for a block marked ``# not run: REASON`` on its first line."""
        first = self.source.lstrip("\n").split("\n", 1)[0].strip()
        return not first.startswith(NOT_RUN)


def python_blocks(path: Path) -> list[Block]:
    """Every fenced block tagged ``python`` in ``path``, in page order (indented fences dedented)."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    blocks, i = [], 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise ValueError(f"{path}:{i + 1}: code fence never closed")
        if opening["info"].strip().split(" ")[0] == "python":
            code = textwrap.dedent("\n".join(lines[i + 1 : end]))
            blocks.append(Block(Path(path), i + 2, code))
        i = end + 1
    return blocks


def run_page(path: Path) -> tuple[int, int]:
    """Execute the page's runnable blocks in order in one namespace; return (run, skipped).

    A failing block raises its own exception; its traceback names ``PATH:LINE`` of the block.
    """
    namespace: dict = {"__name__": "__markdown_example__"}
    run = skipped = 0
    for block in python_blocks(path):
        if not block.runs:
            skipped += 1
            continue
        # Line numbers in tracebacks point into the page: pad with the lines before the block.
        code = compile("\n" * (block.line - 1) + block.source, str(block.path), "exec")
        exec(code, namespace)
        run += 1
    return run, skipped
