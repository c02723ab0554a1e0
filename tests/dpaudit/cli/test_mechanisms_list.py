"""``dpaudit mechanisms``: one entry per buildable mechanism, with every parameter and default."""

import dataclasses

from dpaudit.cli import main
from dpaudit.cli.mechanism_args import mechanism_classes


def _listing(capsys) -> dict[str, tuple[str, str]]:
    assert main(["mechanisms"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) % 2 == 0
    entries = {}
    for head, params in zip(lines[::2], lines[1::2], strict=True):
        name, _, summary = head.partition(": ")
        assert params.startswith("    ")
        entries[name] = (summary, params.strip())
    return entries


def test_every_mechanism_class_is_listed_once_in_sorted_order(capsys):
    entries = _listing(capsys)
    assert list(entries) == sorted(mechanism_classes())


def test_each_entry_shows_every_init_field_as_a_flag_with_its_default(capsys):
    entries = _listing(capsys)
    for name, cls in mechanism_classes().items():
        summary, params = entries[name]
        assert summary == (cls.__doc__ or "").strip().splitlines()[0]
        for field in dataclasses.fields(cls):
            spelling = "--" + field.name.replace("_", "-")
            if not field.init:
                assert f"{spelling} " not in params + " ", (name, field.name)
            elif field.default is dataclasses.MISSING:
                assert f"{spelling} (required)" in params, (name, field.name)
            else:
                assert f"{spelling} {field.default!r}" in params, (name, field.name)


def test_a_required_parameter_is_marked_required(capsys):
    entries = _listing(capsys)
    required = [
        (name, f.name)
        for name, cls in mechanism_classes().items()
        for f in dataclasses.fields(cls)
        if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    assert required, "some mechanism has a parameter without default"
    for name, field in required:
        assert "--" + field.replace("_", "-") + " (required)" in entries[name][1]
