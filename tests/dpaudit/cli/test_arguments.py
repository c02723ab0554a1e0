"""``dpaudit.cli.arguments``: the argparse types, the shared readers and which mechanism is meant."""

import argparse
import os
from types import SimpleNamespace

import pytest

from dpaudit.cli.arguments import (
    DEFAULT_MECHANISMS,
    check_output_path,
    default_mechanism,
    histogram,
    mechanism,
    nonnegative_int,
    options_of,
    pairs,
    positive_float,
    positive_int,
    power_factor,
    probability,
    unknown_option_message,
)
from dpaudit.cli.errors import UsageError

# -- argparse types --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value", [("7", 7), ("1e6", 10**6), ("2_000_000", 2_000_000), (" 3 ", 3), ("2.0", 2)]
)
def test_positive_int_reads_counts_written_every_usual_way(text, value):
    assert positive_int(text) == value
    assert nonnegative_int(text) == value


@pytest.mark.parametrize(
    "reader, text, message",
    [
        (positive_int, "0", "must be >= 1, got '0'"),
        (positive_int, "1.5", "expected a whole number, got '1.5'"),
        (positive_int, "inf", "expected a whole number, got 'inf'"),
        (positive_int, "ten", "expected an integer, got 'ten'"),
        (nonnegative_int, "-1", "must be >= 0, got '-1'"),
        (probability, "0", "must lie in (0, 1), got '0'"),
        (probability, "1", "must lie in (0, 1), got '1'"),
        (probability, "nan", "expected a number, got 'nan'"),
        (positive_float, "0", "must be a finite number > 0, got '0'"),
        (positive_float, "inf", "must be a finite number > 0, got 'inf'"),
        (power_factor, "0.99", "must be a finite number >= 1, got '0.99'"),
        (power_factor, "abc", "expected a number, got 'abc'"),
    ],
)
def test_each_type_refuses_with_a_message_quoting_the_input(reader, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        reader(text)
    assert str(caught.value) == message


def test_nonnegative_int_takes_zero_and_the_floats_take_their_edges():
    assert nonnegative_int("0") == 0
    assert probability("0.05") == 0.05
    assert positive_float("1e-300") == 1e-300
    assert power_factor("1") == 1.0


def test_argparse_names_the_option_of_a_bad_value(capsys):
    parser = argparse.ArgumentParser(prog="p")
    parser.add_argument("--samples", type=positive_int)
    with pytest.raises(SystemExit):
        parser.parse_args(["--samples", "0"])
    assert "argument --samples: must be >= 1, got '0'" in capsys.readouterr().err


# -- options ---------------------------------------------------------------------------------


def test_options_of_lists_the_long_options_only():
    parser = argparse.ArgumentParser()
    parser.add_argument("-s", "--samples")
    parser.add_argument("--seed")
    parser.add_argument("mechanism")
    assert options_of(parser) == ["--help", "--samples", "--seed"]


def test_unknown_option_message_suggests_the_closest_option():
    known = ["--samples", "--seed", "--epsilon"]
    assert (
        unknown_option_message("--sample=5", known)
        == "unknown option --sample (did you mean --samples?)"
    )
    assert (
        unknown_option_message("--eps", known) == "unknown option --eps (did you mean --epsilon?)"
    )
    assert unknown_option_message("--zzzzzz", known) == "unknown option --zzzzzz"
    assert unknown_option_message("stray", known) == "unexpected argument 'stray'"


# -- output paths ----------------------------------------------------------------------------


def test_check_output_path_accepts_stdout_none_and_a_writable_file(tmp_path):
    check_output_path(None, "--json")
    check_output_path("-", "--json")
    check_output_path(str(tmp_path / "new.json"), "--json")
    assert not (tmp_path / "new.json").exists()  # checking writes nothing


def test_check_output_path_refuses_each_bad_path_naming_the_option(tmp_path):
    with pytest.raises(UsageError, match=r"^--json: empty file name$"):
        check_output_path("", "--json")
    with pytest.raises(UsageError, match=r"^--json: cannot write .*: no directory "):
        check_output_path(str(tmp_path / "missing" / "r.json"), "--json")
    with pytest.raises(UsageError, match=r"^--out: .* is a directory$"):
        check_output_path(str(tmp_path), "--out")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_check_output_path_refuses_a_read_only_file(tmp_path):
    path = tmp_path / "locked.json"
    path.write_text("{}")
    path.chmod(0o444)
    with pytest.raises(UsageError, match="permission denied"):
        check_output_path(str(path), "--json")


# -- histograms and pairs --------------------------------------------------------------------


def test_histogram_reads_counts_and_ignores_spaces_and_a_trailing_comma():
    assert histogram("5, 4,4,1,", "--counts") == [5, 4, 4, 1]
    assert histogram("0", "--counts") == [0]


@pytest.mark.parametrize(
    "text, message",
    [
        ("5,x", "--counts: cannot read '5,x': expected comma-separated integers"),
        ("1.5", "--counts: cannot read '1.5': expected comma-separated integers"),
        (",", "--counts: empty histogram ',': give counts, e.g. 5,4,4,1"),
        ("3,-1", "--counts: counts must be >= 0, got '3,-1'"),
    ],
)
def test_histogram_refuses_with_the_option_and_the_fix(text, message):
    with pytest.raises(UsageError) as caught:
        histogram(text, "--counts")
    assert str(caught.value) == message


def test_pairs_reads_each_pair_in_order():
    assert pairs(None) is None
    assert pairs([]) is None
    assert pairs(["1,2;2,1", "0,0,3;0,1,3"]) == [([1, 2], [2, 1]), ([0, 0, 3], [0, 1, 3])]


def test_pairs_refuses_anything_but_two_histograms_of_one_length():
    with pytest.raises(UsageError, match=r"--pair wants 'C;C2' \(two histograms\), got '1,2'"):
        pairs(["1,2"])
    with pytest.raises(UsageError, match="--pair wants 'C;C2'"):
        pairs(["1;2;3"])
    with pytest.raises(UsageError, match=r"have 2 and 3 items; give them the same length"):
        pairs(["1,2;1,2,3"])
    with pytest.raises(UsageError, match=r"^--pair: counts must be >= 0"):
        pairs(["1,-2;1,2"])


# -- the mechanism ---------------------------------------------------------------------------


def test_the_default_mechanism_is_the_first_available_default():
    name, params = DEFAULT_MECHANISMS[0]
    mech = default_mechanism()
    assert type(mech).__name__ == name
    assert {key: getattr(mech, key) for key in params} == params


def _args(name, child_command=None):
    return SimpleNamespace(mechanism=name, child_command=child_command)


KNOWN = ["--samples", "--seed", "--epsilon"]


def test_no_mechanism_named_is_the_default():
    mech, entry = mechanism(_args(None), [], KNOWN)
    assert entry is None and type(mech) is type(default_mechanism())


def test_no_mechanism_named_and_a_stray_option_names_the_option():
    with pytest.raises(UsageError, match=r"unknown option --sample \(did you mean --samples\?\)"):
        mechanism(_args(None), ["--sample", "5"], KNOWN)


def test_a_named_class_is_built_with_its_parameters():
    mech, entry = mechanism(_args("GumbelTopK"), ["--k", "2", "--epsilon", "0.5"], KNOWN)
    assert entry is None
    assert (type(mech).__name__, mech.k, mech.epsilon) == ("GumbelTopK", 2, 0.5)


def test_an_option_where_the_name_should_be_is_refused():
    with pytest.raises(UsageError, match="expected a mechanism name, got '--k'"):
        mechanism(_args("--k"), [], KNOWN)


def test_a_number_taken_for_the_name_names_the_mistyped_option():
    # `dpaudit audit --sample 5`: argparse gives "5" as MECH.
    with pytest.raises(UsageError, match=r"unknown option --sample \(did you mean --samples\?\)"):
        mechanism(_args("5"), ["--sample"], KNOWN)


def test_a_mistyped_class_name_is_named_first():
    with pytest.raises(UsageError) as caught:
        mechanism(_args("GumbleTopK"), ["--sample"], KNOWN)
    assert "GumbleTopK" in str(caught.value)


def test_a_catalog_entry_is_built_and_returned_with_its_entry():
    from dpaudit.catalog import CATALOG

    first = CATALOG[0]
    mech, entry = mechanism(_args(f"catalog:{first.name}"), [], KNOWN)
    assert entry is first
    assert type(mech) is type(first.build())


def test_a_catalog_entry_takes_no_parameters():
    from dpaudit.catalog import CATALOG

    with pytest.raises(UsageError, match="catalog entries take no parameters"):
        mechanism(_args(f"catalog:{CATALOG[0].name}"), ["--epsilon", "2"], KNOWN)


def test_an_unknown_catalog_entry_is_a_usage_error():
    with pytest.raises(UsageError, match="no-such-entry"):
        mechanism(_args("catalog:no-such-entry"), [], KNOWN)
