"""docs/check_site.py fails the docs build on raw Sphinx role markup (small pages, no build)."""

import importlib.util
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "check_site.py"
_SPEC = importlib.util.spec_from_file_location("check_site", _SCRIPT)
assert _SPEC is not None and _SPEC.loader is not None
check_site = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(check_site)

# What mkdocstrings makes of a docstring: a resolved cross reference, a code span, and a
# page that only names a role (in code, no backtick after it) are all fine.
CLEAN = """<html><head><script>var roles = ":class:`not text`";</script></head><body>
<p>Outcomes are a <a class="autorefs autorefs-internal" title="mechanisms.outcomes.MixedBatch"
href="#mechanisms.outcomes.MixedBatch"><code>MixedBatch</code></a>: the selector's items.</p>
<p>Work inside <code>working_precision</code>; the <code>:class:</code> role is Sphinx's.</p>
</body></html>
"""

# The same docstring before it was fixed: Markdown turns the role's backticks into <code>.
RAW = """<html><body>
<p>Outcomes are a :class:<code>~mechanisms.outcomes.MixedBatch</code>: the selector's items.</p>
</body></html>
"""


def _site(tmp_path: Path, pages: dict[str, str]) -> Path:
    for name, html in pages.items():
        page = tmp_path / name
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(html, encoding="utf-8")
    return tmp_path


def test_a_site_without_raw_roles_passes(tmp_path, capsys):
    site = _site(tmp_path, {"index.html": CLEAN, "reference/mechanisms/index.html": CLEAN})
    assert check_site.check_site(site) == []
    assert check_site.main([str(site)]) == 0
    assert "2 pages, no raw role markup" in capsys.readouterr().out
    assert check_site.main([str(site), "--quiet"]) == 0
    assert capsys.readouterr().out == ""


def test_a_raw_role_fails_naming_the_page_and_the_role(tmp_path, capsys):
    site = _site(tmp_path, {"index.html": CLEAN, "reference/mechanisms/index.html": RAW})
    problems = check_site.check_site(site)
    assert problems == [
        "reference/mechanisms/index.html:2: raw role markup "
        "':class:`~mechanisms.outcomes.MixedBatch`'"
    ]
    assert check_site.main([str(site), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "reference/mechanisms/index.html:2" in err
    assert ":class:`~mechanisms.outcomes.MixedBatch`" in err


def test_roles_with_literal_backticks_and_a_domain_are_found():
    html = "<pre><code>see :func:`audit` and :py:meth:`AuditResult.to_dict`</code></pre>"
    assert [markup for _, markup in check_site.raw_roles(html)] == [
        ":func:`audit`",
        ":py:meth:`AuditResult.to_dict`",
    ]


def test_a_missing_site_is_an_error_not_a_pass(tmp_path, capsys):
    assert check_site.main([str(tmp_path / "site")]) == 2
    assert "no HTML page" in capsys.readouterr().err
