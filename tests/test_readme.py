"""The README: a landing page whose Python blocks run as written, in order, in one namespace
(fast: small samples), and whose fragments are the documentation site's home page."""

import re
from pathlib import Path

import pytest
from markdown_examples import NOT_RUN, python_blocks, run_page

README = Path(__file__).resolve().parents[1] / "README.md"
INDEX = README.parent / "docs" / "index.md"
#: The longest landing page (dp_accounting's and DP-Auditorium's READMEs run 50-70 lines).
MAX_LINES = 80

#: A ``pymdownx.snippets`` include of a file's section (mkdocs.yml: base path ".", paths checked).
_INCLUDE = re.compile(r'^--8<-- "(?P<file>[^":]+):(?P<section>[a-z][-_0-9a-z]*)"$')
#: A section marker of ``pymdownx.snippets`` (in the README, inside an HTML comment).
_MARKER = re.compile(r"--8<-- \[(?P<kind>start|end):(?P<name>[a-z][-_0-9a-z]*)\]")


def readme_section(name: str) -> list[str]:
    """The README's lines between ``[start:NAME]`` and ``[end:NAME]``, other markers dropped,
    as ``pymdownx.snippets`` includes them."""
    lines = README.read_text(encoding="utf-8").split("\n")
    markers = [
        (i, m["kind"]) for i, m in enumerate(map(_MARKER.search, lines)) if m and m["name"] == name
    ]
    starts = [i for i, kind in markers if kind == "start"]
    ends = [i for i, kind in markers if kind == "end"]
    assert len(starts) == len(ends) == 1 and starts[0] < ends[0], f"README section {name!r}"
    return [line for line in lines[starts[0] + 1 : ends[0]] if not _MARKER.search(line)]


def expanded(page: Path) -> str:
    """``page`` with each README include replaced by the section it names."""
    out = []
    for line in page.read_text(encoding="utf-8").split("\n"):
        include = _INCLUDE.match(line)
        if include is None:
            out.append(line)
            continue
        assert include["file"] == "README.md", f"{page}: includes {include['file']}"
        out.extend(readme_section(include["section"]))
    return "\n".join(out)


def test_the_readme_has_python_examples_and_marks_every_skipped_one_with_its_reason():
    blocks = python_blocks(README)
    assert any(b.runs for b in blocks), "README.md has no runnable python block"
    for block in blocks:
        if not block.runs:
            reason = block.source.lstrip("\n").split("\n", 1)[0].strip()[len(NOT_RUN) :]
            assert reason.strip(), f"README.md:{block.line}: '{NOT_RUN}' without a reason"


def test_every_python_block_of_the_readme_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks that write files write them here
    run, _skipped = run_page(README)
    assert run == sum(b.runs for b in python_blocks(README))


def test_every_relative_link_of_the_readme_names_a_file_of_the_repository():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    relative = [t for t in targets if "://" not in t]
    assert relative, "README.md links to no documentation page"
    missing = [t for t in relative if not (README.parent / t).is_file()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_the_readme_opens_with_the_two_locked_commands_that_ci_runs():
    # CI must run what a newcomer runs, from the same lock file, or a green CI says nothing
    # about the README.
    text = README.read_text(encoding="utf-8")
    commands = re.search(r"```bash\n(.*?)```", text, re.S).group(1).strip().splitlines()
    assert len(commands) == 2, commands
    run_main, run_tests = commands
    assert "-c requirements/lock.txt -e ." in run_main and run_main.endswith("dpaudit audit")
    install, test = run_tests.split(" && ")[-2:]
    assert install == 'pip install -c requirements/lock.txt -e ".[test]"'
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert f"python -m {install} && {test}" in ci.replace("--quiet ", "")
    assert (README.parent / "requirements" / "lock.txt").is_file()
    # The documentation site's landing page shows the same two commands.
    index = expanded(INDEX)
    assert re.search(r"```bash\n(.*?)```", index, re.S).group(1).strip().splitlines() == commands


def test_the_readme_is_a_landing_page_of_at_most_80_lines():
    # What it is, the two commands, a short tour, the verdict table, links: the rest (corpus,
    # figures, caveats) lives on the documentation site, where the README links to it.
    lines = README.read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES})"
    for heading in ("## Verdicts and exit statuses", "## Documentation"):
        assert heading in lines, f"README.md lost its section {heading!r}"


def test_the_sites_home_page_is_built_from_the_readme_not_copied():
    # docs/index.md holds its title and includes of README sections, nothing written by hand,
    # and shows the whole README in order: the two cannot drift apart.
    kept = [line for line in INDEX.read_text(encoding="utf-8").split("\n") if line.strip()]
    title, includes = kept[0], kept[1:]
    readme = README.read_text(encoding="utf-8").split("\n")
    assert title == readme[0] == "# dpaudit"
    assert includes and all(_INCLUDE.match(line) for line in includes), includes

    def content(lines):
        return [line for line in lines if line.strip() and not _MARKER.search(line)]

    assert content(expanded(INDEX).split("\n")) == content(readme)


@pytest.mark.slow
def test_the_main_job_does_what_the_readme_says(capsys):
    # The first command's audit, as the README runs it (built-in defaults): its exit status and
    # its sample count are the ones the README states (the count to two significant digits: it is
    # fixed by the seed, but a look's boundary may move with a library's last digit). The same on
    # every CPU numpy dispatches to (tests/test_cpu_paths.py).
    import json

    from dpaudit.cli import main

    text = " ".join(README.read_text(encoding="utf-8").split())
    sentence = r"Here it exits"
    stated = re.search(sentence + r" (\d), ([A-Z]+) \(measured [^:]*: ([0-9][0-9,]*) samples", text)
    assert stated, f"README.md no longer states the main job's exit status and samples ({sentence})"
    stated_status, stated_verdict = int(stated.group(1)), stated.group(2).lower()
    stated_samples = int(stated.group(3).replace(",", ""))
    status = main(["audit", "--no-progress", "--json", "-"])
    result = json.loads(capsys.readouterr().out)
    assert (status, result["verdict"]) == (stated_status, stated_verdict), result["explanation"]
    assert f"{result['samples']:.1e}" == f"{stated_samples:.1e}", result["samples"]
