"""Griffe extension: read this project's one-line parameter entries as name plus description.

The docstrings write ``name : what it is`` on one line (types live in the signature or the
text); the numpy parser would take the text after the colon for a type. This rewrites such
entries to ``name`` followed by the indented text before griffe parses the docstring, so
the API reference shows the text as the description. Used by mkdocs.yml only.
"""

import re

import griffe

#: Sections whose entries are ``name : text``.
_ENTRY_SECTIONS = ("Parameters", "Attributes", "Other Parameters")
_ENTRY = re.compile(r"^([A-Za-z_*][\w*]*(?:\s*,\s*[A-Za-z_*][\w*]*)*)\s+:\s+(\S.*)$")
_UNDERLINE = re.compile(r"^-{3,}\s*$")


def one_line_entries(text: str) -> str:
    """``text`` with every ``name : text`` entry of a parameter-like section split in two lines."""
    lines = text.split("\n")
    out = []
    in_entries = False
    for i, line in enumerate(lines):
        heading = i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1]) and line.strip()
        if heading:
            name = line.strip()
            # "Parameters (keyword only)": the signature already shows the keyword-only star
            in_entries = name.split(" (")[0] in _ENTRY_SECTIONS
            out.append(name.split(" (")[0] if in_entries else line)
            continue
        match = _ENTRY.match(line) if in_entries else None
        if match:
            out.append(match.group(1))
            out.append("    " + match.group(2))
        else:
            out.append(line)
    return "\n".join(out)


class OneLineParameters(griffe.Extension):
    """Rewrite one-line parameter entries of every docstring before it is parsed."""

    def on_instance(self, *, node, obj, agent, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = one_line_entries(obj.docstring.value)
