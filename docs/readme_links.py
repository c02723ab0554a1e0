"""MkDocs hook: README fragments on the site keep working links (mkdocs.yml ``hooks:``).

The home page (``docs/index.md``) and the set-up section of ``docs/contributing.md`` are not
copies of the README: they include its fragments with ``pymdownx.snippets``
(``--8<-- "README.md:landing"``; the README marks each fragment with ``<!-- --8<-- [start:NAME] -->``
and ``[end:NAME]``), so the landing page cannot drift from the README. A README link is relative
to the repository root (``docs/guide/auditing.md``, ``CHANGELOG.md``), a page's link to the page.
This hook adds a Markdown preprocessor that runs right after snippets (priority 31 < 32) and
rewrites the README's links to the page being rendered: ``docs/X`` becomes ``X`` seen from the
page's folder, and ``CHANGELOG.md`` the site's ``changelog.md``. A README link to any other file
of the repository is left as it is, so the strict build names it as a missing page.
"""

from __future__ import annotations

import posixpath
import re

from markdown import Extension
from markdown.preprocessors import Preprocessor

#: README targets (repository root) and the documentation file each one is on the site.
_TARGET = re.compile(r"\]\((?P<target>docs/[^)\s#]*|CHANGELOG\.md)(?P<rest>[)\s#])")

#: The folder of the page being rendered, relative to ``docs/`` ("" for the home page).
_page_folder = ""


def site_target(target: str, page_folder: str) -> str:
    """``target`` (relative to the repository root) as a link from a page in ``page_folder``."""
    in_docs = "changelog.md" if target == "CHANGELOG.md" else target[len("docs/") :]
    return posixpath.relpath(in_docs, page_folder or ".")


def rewrite_links(text: str, page_folder: str) -> str:
    """Every inline link of ``text`` to ``docs/…`` or ``CHANGELOG.md``, as seen from the page."""
    return _TARGET.sub(lambda m: f"]({site_target(m['target'], page_folder)}{m['rest']}", text)


class _ReadmeLinks(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return rewrite_links("\n".join(lines), _page_folder).split("\n")


class ReadmeLinks(Extension):
    """Registers the rewrite after ``pymdownx.snippets`` has inserted the README's fragments."""

    def extendMarkdown(self, md):
        md.preprocessors.register(_ReadmeLinks(md), "readme_links", 31)


def on_config(config, **kwargs):
    config.markdown_extensions.append(ReadmeLinks())
    return config


def on_page_markdown(markdown, page, **kwargs):
    global _page_folder
    _page_folder = posixpath.dirname(page.file.src_uri)
    return markdown
