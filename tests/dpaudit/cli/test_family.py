"""``dpaudit.cli.family``: the options of ``verify``/``worst-case`` and what they build."""

import argparse

import pytest

from dpaudit.cli.errors import UsageError
from dpaudit.cli.family import add_family_options, max_items, mechanism_and_relation
from mechanisms.claims import AddRemoveUser, BoundedChange, Substitute

RELATIONS = ("add-remove", "bounded-change", "substitute")
LIMIT_DOMAIN = ["--k", "2", "--kbar", "3", "--epsilon", "1", "--delta", "1e-6"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="test")
    add_family_options(
        parser,
        example="GumbelTopK",
        max_count=7,
        max_count_help="largest count",
        relations=RELATIONS,
    )
    return parser


def _args(*argv: str):
    args, extra = _parser().parse_known_args(list(argv))
    args.extra = extra
    return args


def _gumbel(*options: str):
    """``_args`` for a GumbelTopK(k=2, ε=1) with ``options`` after its own."""
    return _args("GumbelTopK", "--k", "2", "--epsilon", "1", *options)


def test_the_options_and_their_defaults():
    args = _args("GumbelTopK")
    assert (args.mechanism, args.d, args.max_count, args.relation) == ("GumbelTopK", 5, 7, "claim")
    assert (args.max_items, args.max_change) == (None, 1)
    assert "(default 7)" in _parser().format_help()


def test_relation_offers_claim_and_the_given_relations_only():
    with pytest.raises(SystemExit):
        _parser().parse_args(["GumbelTopK", "--relation", "nonsense"])
    parser = argparse.ArgumentParser()
    add_family_options(
        parser, example="X", max_count=1, max_count_help="m", relations=("add-remove",)
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["X", "--relation", "substitute"])


@pytest.mark.parametrize(
    "text, value",
    [
        (None, None),
        ("3", 3),
        ("1", 1),
        ("none", "unrestricted"),
        ("INF", "unrestricted"),
        ("Unrestricted", "unrestricted"),
    ],
)
def test_max_items_reads_a_positive_integer_or_unrestricted(text, value):
    assert max_items(text) == value


@pytest.mark.parametrize("text", ["0", "-2", "two", "1.5"])
def test_max_items_refuses_anything_else_and_says_what_it_wants(text):
    with pytest.raises(
        UsageError, match=rf"--max-items must be a positive integer or 'none', got '{text}'"
    ):
        max_items(text)


def test_the_claims_relation_is_none():
    mech, relation = mechanism_and_relation(_gumbel())
    assert relation is None
    assert (type(mech).__name__, mech.k, mech.epsilon) == ("GumbelTopK", 2, 1.0)


def test_max_items_is_passed_to_a_mechanism_that_takes_it():
    mech, relation = mechanism_and_relation(_args("LimitDomain", *LIMIT_DOMAIN, "--max-items", "2"))
    assert mech.max_items == 2
    assert relation == AddRemoveUser(2)


def test_a_mechanisms_own_max_items_wins():
    args = _args("LimitDomain", *LIMIT_DOMAIN, "--max-items", "2")
    args.extra += ["--max-items=3"]
    mech, relation = mechanism_and_relation(args)
    assert mech.max_items == 3
    assert relation == AddRemoveUser(2)


def test_unrestricted_add_remove_is_none_items():
    _, relation = mechanism_and_relation(_gumbel("--max-items", "none"))
    assert relation == AddRemoveUser(None)


def test_add_remove_without_max_items_is_one_user_of_any_size():
    _, relation = mechanism_and_relation(_gumbel("--relation", "add-remove"))
    assert relation == AddRemoveUser(None)


def test_bounded_change_takes_max_change():
    _, relation = mechanism_and_relation(
        _gumbel("--relation", "bounded-change", "--max-change", "3")
    )
    assert relation == BoundedChange(3)


def test_bounded_change_refuses_max_items():
    args = _gumbel("--relation", "bounded-change", "--max-items", "2")
    with pytest.raises(
        UsageError, match="--max-items applies to add/remove neighbours, not bounded-change"
    ):
        mechanism_and_relation(args)


def test_a_bad_max_change_is_a_usage_error_naming_the_option():
    args = _gumbel("--relation", "bounded-change", "--max-change", "0")
    with pytest.raises(UsageError, match=r"^--max-change: "):
        mechanism_and_relation(args)


@pytest.mark.parametrize(
    "given, expected",
    [
        ((), Substitute(1)),
        (("--max-items", "4"), Substitute(4)),
        (("--max-items", "none"), Substitute(None)),
    ],
)
def test_substitute_defaults_to_one_record(given, expected):
    _, relation = mechanism_and_relation(_gumbel("--relation", "substitute", *given))
    assert relation == expected


def test_a_mechanism_without_an_exact_law_is_refused():
    with pytest.raises(UsageError, match="no exact law is registered for NoisyCount"):
        mechanism_and_relation(_args("NoisyCount", "--epsilon", "1", "--item", "0"))
