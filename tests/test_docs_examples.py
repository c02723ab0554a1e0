"""The Python blocks of the documentation's home and guide pages run as written (slow).

Each page runs in its own namespace, its blocks in order; blocks marked
``# not run: REASON`` (user files, clusters) are skipped.
"""

from pathlib import Path

import pytest
from markdown_examples import NOT_RUN, python_blocks, run_page

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = [DOCS / "index.md", *sorted((DOCS / "guide").glob("*.md"))]
WITH_CODE = [p for p in PAGES if python_blocks(p)]


def test_the_guide_has_python_examples_and_every_skip_says_why():
    assert WITH_CODE, "no page of docs/index.md, docs/guide/*.md has a python block"
    for page in WITH_CODE:
        for block in python_blocks(page):
            first = block.source.lstrip("\n").split("\n", 1)[0].strip()
            if not block.runs:
                assert first[len(NOT_RUN) :].strip(), f"{page}:{block.line}: skip without reason"


@pytest.mark.slow
@pytest.mark.parametrize("page", WITH_CODE, ids=[str(p.relative_to(DOCS)) for p in WITH_CODE])
def test_every_python_block_of_the_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run, skipped = run_page(page)
    assert run + skipped == len(python_blocks(page))
    assert run > 0, f"{page}: every block is skipped"
