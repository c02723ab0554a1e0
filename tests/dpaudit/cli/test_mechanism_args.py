"""``dpaudit.cli.mechanism_args``: ``NAME --param value ...`` to a mechanism, every error by name."""

import dataclasses
import inspect

import pytest

import mechanisms
from dpaudit.cli.errors import UsageError
from dpaudit.cli.mechanism_args import (
    ENTRY_PREFIXES,
    build_mechanism,
    closest_option,
    entry_for,
    find_mechanism_class,
    flag,
    mechanism_classes,
    parse_param_tokens,
)


def test_mechanism_classes_are_the_concrete_exported_dataclasses():
    classes = mechanism_classes()
    assert "GumbelTopK" in classes and "LimitDomain" in classes
    for name, cls in classes.items():
        assert getattr(mechanisms, name) is cls
        assert issubclass(cls, mechanisms.TopKMechanism)
        assert dataclasses.is_dataclass(cls) and not inspect.isabstract(cls)
    assert "TopKMechanism" not in classes


@pytest.mark.parametrize("spelling", ["LimitDomain", "limit-domain", "limit_domain", "LIMITDOMAIN"])
def test_a_class_is_found_under_any_spelling(spelling):
    assert find_mechanism_class(spelling) is mechanisms.LimitDomain


def test_a_near_miss_suggests_the_class():
    with pytest.raises(
        UsageError, match=r"unknown mechanism 'GumbleTopK' \(did you mean GumbelTopK\?\)"
    ):
        find_mechanism_class("GumbleTopK")


def test_a_far_miss_lists_every_class():
    with pytest.raises(UsageError) as caught:
        find_mechanism_class("Zzzzzzzzzzzz")
    message = str(caught.value)
    assert message.endswith("(see `dpaudit mechanisms`)")
    assert all(name in message for name in mechanism_classes())


def test_parse_param_tokens_reads_both_spellings():
    tokens = ["--k", "3", "--kbar=10", "--max-items", "2", "--claim-basis=a=b"]
    assert parse_param_tokens(tokens) == {
        "k": "3",
        "kbar": "10",
        "max_items": "2",
        "claim_basis": "a=b",
    }
    assert parse_param_tokens([]) == {}


@pytest.mark.parametrize(
    "tokens, message",
    [
        (["3"], "expected --PARAM VALUE, got '3'"),
        (["--"], "expected --PARAM VALUE, got '--'"),
        (["-k", "3"], "expected --PARAM VALUE, got '-k'"),
        (["--k"], "parameter --k needs a value"),
    ],
)
def test_parse_param_tokens_refuses_by_token(tokens, message):
    with pytest.raises(UsageError) as caught:
        parse_param_tokens(tokens)
    assert str(caught.value) == message


def test_flag_is_the_command_line_spelling():
    assert flag("max_items") == "--max-items"
    assert parse_param_tokens([flag("delta_prime"), "0.1"]) == {"delta_prime": "0.1"}  # round trip


def test_closest_option_prefers_an_option_the_name_begins():
    known = ["--help", "--epsilon", "--epsilon-only", "--samples"]
    assert closest_option("--eps", known) == "--epsilon"
    assert closest_option("--sample", known) == "--samples"
    assert closest_option("--zzzzz", known) is None
    # Two characters are too few to extend: `--` alone names nothing.
    assert closest_option("--", known) is None


def test_build_mechanism_converts_each_field_by_its_annotation():
    mech = build_mechanism(
        "GumbelTopK", ["--k", "1e1", "--epsilon=0.5", "--monotonic", "yes", "--delta-prime", "1e-7"]
    )
    assert (mech.k, mech.epsilon, mech.monotonic, mech.delta_prime) == (10, 0.5, True, 1e-7)
    assert type(mech.k) is int
    assert (
        build_mechanism(
            "GumbelTopK", ["--k", "1", "--epsilon", "1", "--monotonic", "off"]
        ).monotonic
        is False
    )


def test_an_optional_field_reads_none():
    mech = build_mechanism(
        "LimitDomain",
        ["--k", "1", "--kbar", "2", "--epsilon", "1", "--delta", "1e-6", "--max-items", "none"],
    )
    assert mech.max_items is None


def test_a_wrapped_mechanism_is_its_own_command_line():
    mech = build_mechanism(
        "RestrictedDomain",
        [
            "--mechanism",
            "GumbelTopK --k 2 --epsilon 1",
            "--kbar",
            "4",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
        ],
    )
    assert isinstance(mech.mechanism, mechanisms.GumbelTopK) and mech.mechanism.k == 2


def test_an_empty_wrapped_mechanism_shows_an_example():
    with pytest.raises(
        UsageError, match=r'--mechanism needs a mechanism, e.g. "GumbelTopK --k 3 --epsilon 1"'
    ):
        build_mechanism(
            "RestrictedDomain",
            ["--mechanism", " ", "--kbar", "4", "--epsilon", "1", "--delta", "1e-6"],
        )


@pytest.mark.parametrize(
    "tokens, message",
    [
        (["--k", "2.5", "--epsilon", "1"], "--k: cannot read '2.5' as an integer"),
        (["--k", "inf", "--epsilon", "1"], "--k: cannot read 'inf' as an integer"),
        (["--k", "2", "--epsilon", "nan"], "--epsilon: cannot read 'nan' as a number"),
        (
            ["--k", "2", "--epsilon", "1", "--monotonic", "maybe"],
            "--monotonic: cannot read 'maybe' as true/false",
        ),
    ],
)
def test_a_value_of_the_wrong_type_names_the_flag_and_the_type(tokens, message):
    with pytest.raises(UsageError) as caught:
        build_mechanism("GumbelTopK", tokens)
    assert str(caught.value) == message


def test_missing_parameters_are_all_named():
    with pytest.raises(UsageError, match=r"^GumbelTopK needs --k, --epsilon$"):
        build_mechanism("GumbelTopK", [])


def test_an_unknown_parameter_suggests_and_lists_the_parameters():
    with pytest.raises(UsageError) as caught:
        build_mechanism("GumbelTopK", ["--epsilom", "1"])
    message = str(caught.value)
    assert message.startswith(
        "unknown option --epsilom (did you mean --epsilon?); GumbelTopK takes "
    )
    for field in dataclasses.fields(mechanisms.GumbelTopK):
        if field.init:
            assert flag(field.name) in message


def test_an_unknown_parameter_may_be_a_mistyped_command_option():
    with pytest.raises(UsageError, match=r"did you mean --samples\?"):
        build_mechanism("GumbelTopK", ["--sampels", "5"], command_options=["--samples"])


def test_a_validators_error_names_the_flag_as_typed():
    with pytest.raises(
        UsageError, match=r"^GumbelTopK: --epsilon must be a finite number > 0, got -1"
    ):
        build_mechanism("GumbelTopK", ["--k", "2", "--epsilon", "-1"])


def test_entry_for_reads_both_prefixes():
    from dpaudit.catalog import CATALOG
    from dpaudit.corpus import CORPUS

    assert ENTRY_PREFIXES == ("catalog:", "corpus:")
    assert entry_for(f"catalog:{CATALOG[0].name}") is CATALOG[0]
    first = next(iter(CORPUS.values())) if isinstance(CORPUS, dict) else CORPUS[0]
    assert entry_for(f"corpus:{first.name}").name == first.name
    with pytest.raises(KeyError):
        entry_for("catalog:no-such-entry")
