"""Writing what a command found: the summary, ``--json`` and ``--report``.

``--json -`` puts the JSON alone on stdout (the summary then goes to stderr). A report is
Markdown for ``.md`` and HTML for ``.html``/``.htm``; any other suffix is refused before the
audit runs ([`check_report_path`][dpaudit.cli.output.check_report_path]), so a ``--report r.txt``
never holds a surprise.
"""

from __future__ import annotations

import json
import sys

from .arguments import check_output_path
from .errors import UsageError

__all__ = [
    "REPORT_SUFFIXES",
    "check_report_path",
    "emit_result",
    "parameters_line",
    "summary_stream",
    "write_json",
    "write_text",
]

#: Report formats by file suffix.
REPORT_SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


def summary_stream(args):
    """stdout, or stderr when ``--json -`` holds stdout for the JSON alone."""
    return sys.stderr if getattr(args, "json", None) == "-" else sys.stdout


def check_report_path(path) -> None:
    """Refuse a --report that is not a writable .md or .html file."""
    if path is None:
        return
    if path == "-":
        raise UsageError("--report needs a file name (.md or .html)")
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix not in REPORT_SUFFIXES:
        raise UsageError(
            f"--report: {path!r} has no .md or .html suffix; name the file r.md (Markdown) "
            "or r.html (HTML)"
        )
    check_output_path(path, "--report")


def write_text(path, text: str, option: str) -> None:
    """Write ``text`` to ``path`` (``-``: stdout); an OSError is a one-line usage error."""
    if path == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
    except OSError as error:
        raise UsageError(f"{option}: cannot write {path!r}: {error.strerror or error}") from None


def write_json(path, data: dict, option: str = "--json") -> None:
    """``data`` as indented JSON at ``path`` (``-``: stdout)."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False), option)


def parameters_line(mech) -> str | None:
    """Per-selection parameters next to the total claim, so the two ε are not confused."""
    epsilon = getattr(mech, "epsilon", None)
    if not isinstance(epsilon, (int, float)):
        return None
    claim = mech.claim
    return (
        f"parameters: epsilon={epsilon:g} is the mechanism's own (per-selection) epsilon; "
        f"the total claim audited is ({claim.epsilon:.6g}, {claim.delta:.6g})"
    )


def emit_result(result, args, summary=None) -> int:
    """Print the result, write ``--json`` and ``--report``; return the exit status."""
    print(result, file=summary or summary_stream(args))
    if args.json:
        write_json(args.json, result.to_dict())
    if args.report:
        from dpaudit.report import to_html, to_markdown

        kind = REPORT_SUFFIXES["." + args.report.rsplit(".", 1)[-1].lower()]
        page = to_html(result) if kind == "html" else to_markdown(result)
        write_text(args.report, page, "--report")
    return result.exit_status
