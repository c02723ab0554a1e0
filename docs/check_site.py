"""Fail when a page of the built site shows raw Sphinx role markup (``:class:`` and a backtick).

mkdocstrings renders Markdown, not reStructuredText: a docstring's ``:func:`audit``` reaches
the API reference as the literal text ``:func:`` before the name. Docstrings link with
``[name][dotted.path]`` instead. This scans the text of every ``*.html`` page under the site
directory (Markdown's backticks are ``<code>`` elements there) and names each page and role
it finds. Run by docs/build.sh after the build: ``python docs/check_site.py [SITE_DIR] [-q]``.
"""

import argparse
import bisect
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

#: Sphinx's Python-domain and standard roles, with an optional domain prefix (``:py:class:``).
ROLES = (
    "mod|class|func|meth|attr|data|obj|exc|ref|const|type|doc|term|math|cite|any|envvar"
    "|option|program|keyword|numref|abbr|code|download|samp|file|kbd|pep|rfc"
)
#: Where a ``<code>`` element ends in the page text (it starts with a backtick).
_CODE_END = "\x00"
#: A role followed by a backtick, up to the closing backtick or the end of the code element.
ROLE_MARKUP = re.compile(rf":(?:[a-z]+:)?(?:{ROLES}):`[^`{_CODE_END}\n]{{0,80}}[`{_CODE_END}]?")


class _PageText(HTMLParser):
    """A page's text: ``<code>`` elements between a backtick and ``_CODE_END``, no scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.lines: list[int] = []  # the source line of each part
        self._skip = 0

    def _add(self, text: str) -> None:
        self.parts.append(text)
        self.lines.append(self.getpos()[0])

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "code":
            self._add("`")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag == "code":
            self._add(_CODE_END)

    def handle_data(self, data):
        if not self._skip:
            self._add(data)


def raw_roles(html: str) -> list[tuple[int, str]]:
    """``(line, markup)`` of every raw role in ``html``, in page order."""
    parser = _PageText()
    parser.feed(html)
    parser.close()
    starts, offset = [], 0
    for part in parser.parts:
        starts.append(offset)
        offset += len(part)
    text = "".join(parser.parts)
    found = []
    for match in ROLE_MARKUP.finditer(text):
        line = parser.lines[bisect.bisect_right(starts, match.start()) - 1]
        found.append((line, match.group(0).replace(_CODE_END, "`")))
    return found


def check_site(site: Path) -> list[str]:
    """One line per raw role on any page under ``site``: ``page:line: markup``."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        for line, markup in raw_roles(page.read_text(encoding="utf-8")):
            problems.append(f"{page.relative_to(site)}:{line}: raw role markup {markup!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("site", nargs="?", default="site", type=Path, help="the built site")
    parser.add_argument("-q", "--quiet", action="store_true", help="say nothing when clean")
    args = parser.parse_args(argv)
    pages = sorted(args.site.rglob("*.html"))
    if not pages:
        print(f"check_site: no HTML page under {args.site} (build the site first)", file=sys.stderr)
        return 2
    problems = check_site(args.site)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(
            f"check_site: {len(problems)} raw Sphinx role(s) on the site: write "
            "[name][dotted.path] or ``name`` in the docstring instead",
            file=sys.stderr,
        )
        return 1
    if not args.quiet:
        print(f"check_site: {len(pages)} pages, no raw role markup")
    return 0


if __name__ == "__main__":
    sys.exit(main())
