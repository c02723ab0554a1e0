"""``dpaudit.user_mechanism``: the user's ``module:attr`` or ``--command`` as a mechanism.

The user's module is ``tests/user_mechanisms.py`` (on ``sys.path`` through ``tests/conftest.py``).
"""

import numpy as np
import pytest
from helpers import claim_and_width, user_args

import mechanisms
from dpaudit.errors import CouldNotRun, UsageError
from dpaudit.user_mechanism import command_mechanism, module_mechanism, parse_claim, parse_relation
from mechanisms import AddRemoveUser, BoundedChange, Substitute

# -- --claim and --relation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, claim",
    [(None, None), ("1,0", (1.0, 0.0)), ("0.5, 1e-6", (0.5, 1e-6)), ("0,0.999", (0.0, 0.999))],
)
def test_parse_claim_reads_epsilon_and_delta(text, claim):
    assert parse_claim(text) == claim


@pytest.mark.parametrize(
    "text, message",
    [
        ("1", "--claim wants EPS,DELTA (two numbers), got '1'"),
        ("1,0,0", "--claim wants EPS,DELTA (two numbers), got '1,0,0'"),
        ("one,0", "--claim wants EPS,DELTA (two numbers), got 'one,0'"),
        ("-1,0", "--claim: epsilon must be finite and >= 0, got '-1,0'"),
        ("inf,0", "--claim: epsilon must be finite and >= 0, got 'inf,0'"),
        ("nan,0", "--claim: epsilon must be finite and >= 0, got 'nan,0'"),
        ("1,1", "--claim: delta must lie in [0, 1), got '1,1'"),
        ("1,nan", "--claim: delta must lie in [0, 1), got '1,nan'"),
    ],
)
def test_parse_claim_refuses_with_the_form_it_wants(text, message):
    with pytest.raises(UsageError) as caught:
        parse_claim(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "text, relation",
    [
        (None, None),
        ("add-remove", AddRemoveUser(None)),
        ("add-remove:3", AddRemoveUser(3)),
        ("bounded-change", BoundedChange(1)),
        ("bounded-change:2", BoundedChange(2)),
        ("substitute", Substitute(1)),
        ("substitute:4", Substitute(4)),
    ],
)
def test_parse_relation_reads_each_relation(text, relation):
    assert parse_relation(text) == relation


@pytest.mark.parametrize(
    "text", ["swap", "add-remove:0", "bounded-change:x", "substitute:-1", "add-remove:1.5"]
)
def test_parse_relation_refuses_listing_the_forms(text):
    with pytest.raises(UsageError) as caught:
        parse_relation(text)
    assert str(caught.value).startswith(
        f"--relation: cannot read {text!r}; use add-remove, add-remove:DELTA"
    )


# -- module:attr -----------------------------------------------------------------------------


def test_a_mechanism_object_is_taken_as_it_is():
    import user_mechanisms

    assert module_mechanism(user_args(mechanism="user_mechanisms:GUMBEL")) is user_mechanisms.GUMBEL


def test_a_factory_is_called():
    mech = module_mechanism(user_args(mechanism="user_mechanisms:limit_domain"))
    assert mech == mechanisms.LimitDomain(k=2, kbar=3, epsilon=1.0, delta=1e-3)


def test_a_failing_factory_could_not_run_and_says_where():
    with pytest.raises(CouldNotRun) as caught:
        module_mechanism(user_args(mechanism="user_mechanisms:failing_factory"))
    message = str(caught.value)
    assert message.startswith(
        "user_mechanisms:failing_factory() could not run: the mechanism raised RuntimeError at "
    )
    assert "user_mechanisms.py:" in message and message.endswith("configuration file is missing")


@pytest.mark.parametrize("name, batched", [("rnm_per_call", False), ("rnm_batched", True)])
def test_a_function_is_wrapped_with_its_claim_and_width(name, batched):
    mech = module_mechanism(
        user_args(
            mechanism=f"user_mechanisms:{name}", claim="1,0", width=1, relation="bounded-change"
        )
    )
    assert claim_and_width(mech) == (1.0, 0.0, BoundedChange(1), 1)
    batch = np.asarray(mech.sample([9, 0, 0], 50, np.random.default_rng(0)))
    assert batch.shape == (50, 1)
    assert (batch[:, 0] == 0).mean() > 0.8  # the far largest count wins nearly always


def test_a_function_defaults_to_add_remove():
    mech = module_mechanism(
        user_args(mechanism="user_mechanisms:rnm_batched", claim="1,0", width=1)
    )
    assert mech.claim.neighbours == AddRemoveUser()


def test_a_function_needs_claim_and_width():
    with pytest.raises(
        UsageError,
        match=r"user_mechanisms:rnm_batched is a function: give --claim EPS,DELTA and --width N",
    ):
        module_mechanism(user_args(mechanism="user_mechanisms:rnm_batched", claim="1,0"))


def test_a_function_of_the_wrong_arity_says_which_two_work():
    with pytest.raises(UsageError) as caught:
        module_mechanism(
            user_args(mechanism="math:hypot", claim="1,0", width=1)
        )  # no signature: a factory
    assert "math:hypot" in str(caught.value)
    with pytest.raises(
        UsageError,
        match=r"takes 1 arguments: a per-call function takes \(counts, rng\), a batched one \(counts, size, rng\)",
    ):
        module_mechanism(user_args(mechanism="math:isqrt", claim="1,0", width=1))


def test_what_is_neither_a_mechanism_nor_a_function_is_refused():
    with pytest.raises(UsageError, match=r"^math:pi is neither a mechanism nor a function$"):
        module_mechanism(user_args(mechanism="math:pi"))


@pytest.mark.parametrize(
    "target, message",
    [
        ("user_mechanisms", "expected package.module:attr, got 'user_mechanisms'"),
        (":rnm_batched", "expected package.module:attr, got ':rnm_batched'"),
        ("no_such_module_h44t:f", "cannot import 'no_such_module_h44t': "),
        ("user_mechanisms:no_such_thing", "'user_mechanisms' has no attribute 'no_such_thing'"),
    ],
)
def test_a_target_that_names_nothing_is_a_usage_error(target, message):
    with pytest.raises(UsageError) as caught:
        module_mechanism(user_args(mechanism=target))
    assert str(caught.value).startswith(message)


def test_a_factory_returning_something_else_is_refused():
    with pytest.raises(
        UsageError, match=r"^collections:OrderedDict\(\) returned OrderedDict, not a mechanism$"
    ):
        module_mechanism(user_args(mechanism="collections:OrderedDict"))


# -- --command -------------------------------------------------------------------------------


def test_a_command_is_a_child_process_mechanism_with_its_claim():
    mech = command_mechanism(
        user_args(
            child_command="python child.py --fast", claim="2,1e-6", width=3, relation="substitute:2"
        )
    )
    assert mech.command == ("python", "child.py", "--fast")
    assert claim_and_width(mech) == (2.0, 1e-6, Substitute(2), 3)


@pytest.mark.parametrize(
    "given, message",
    [
        ({"mechanism": "GumbelTopK"}, "give a mechanism name or --command, not both"),
        ({"claim": None}, "--command needs --claim EPS,DELTA and --width N"),
        ({"width": None}, "--command needs --claim EPS,DELTA and --width N"),
        ({"child_command": "   "}, "--command: empty command"),
    ],
)
def test_a_command_refuses_what_is_missing(given, message):
    args = user_args(child_command="python child.py", claim="1,0", width=1)
    for key, value in given.items():
        setattr(args, key, value)
    with pytest.raises(UsageError) as caught:
        command_mechanism(args)
    assert str(caught.value) == message
