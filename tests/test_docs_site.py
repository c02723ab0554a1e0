"""The docs build's helpers, without a build: docs/check_site.py fails it on raw Sphinx role
markup, docs/readme_links.py keeps the README's links working where the site includes its
fragments; and the paths docs/contributing.md names exist."""

import importlib.util
import re
from pathlib import Path

import pytest

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


# -- README fragments on the site, and the contributors' page ---------------------------------

_ROOT = _SCRIPT.parents[1]
_HOOK = _ROOT / "docs" / "readme_links.py"


def _readme_links():
    pytest.importorskip("markdown", reason="the hook runs inside mkdocs (the docs extra)")
    spec = importlib.util.spec_from_file_location("readme_links", _HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_links_are_rewritten_to_the_page_that_includes_them():
    hook = _readme_links()
    text = (
        "[Auditing](docs/guide/auditing.md#claims-that-are-curves), [Validity](docs/validity.md), "
        "[CHANGELOG.md](CHANGELOG.md) and [a site](https://example.org/docs/x.md)"
    )
    assert hook.rewrite_links(text, "") == (
        "[Auditing](guide/auditing.md#claims-that-are-curves), [Validity](validity.md), "
        "[CHANGELOG.md](changelog.md) and [a site](https://example.org/docs/x.md)"
    )
    assert hook.rewrite_links(text, "guide").startswith(
        "[Auditing](auditing.md#claims-that-are-curves), [Validity](../validity.md), "
        "[CHANGELOG.md](../changelog.md)"
    )


def test_a_readme_link_outside_the_docs_is_left_for_the_strict_build_to_refuse():
    hook = _readme_links()
    text = "[the script](benchmarks/bench_corpus.py), [a page](guide/auditing.md)"
    assert hook.rewrite_links(text, "") == text


def test_every_readme_fragment_a_page_includes_is_marked_in_the_readme():
    readme = (_ROOT / "README.md").read_text(encoding="utf-8")
    pages = sorted((_ROOT / "docs").rglob("*.md"))
    included = {
        (page.name, name)
        for page in pages
        for name in re.findall(r'^--8<-- "README\.md:([-\w]+)"$', page.read_text("utf-8"), re.M)
    }
    assert ("index.md", "landing") in included
    for page, name in sorted(included):
        marked = [f"--8<-- [start:{name}]", f"--8<-- [end:{name}]"]
        assert all(readme.count(marker) == 1 for marker in marked), (page, name)


def test_every_path_the_contributors_page_names_exists():
    # docs/contributing.md says which files to touch for the common changes: a path that moved
    # would send the next contributor to a file that is not there.
    text = (_ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # code blocks name commands
    named = {token for token in re.findall(r"`([^`\s]+)`", text) if "/" in token}
    assert len(named) > 20, sorted(named)
    missing = []
    for token in sorted(named):
        # A placeholder (`mechanisms/<family>.py`) names its folder.
        path = token.split("<", 1)[0].rsplit("/", 1)[0] if "<" in token else token
        if not (_ROOT / path).exists():
            missing.append(token)
    assert not missing, f"docs/contributing.md names paths that do not exist: {missing}"
