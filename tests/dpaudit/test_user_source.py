"""``dpaudit.user_source``: what the CLI records of the user's own mechanism, and rebuilding it."""

import hashlib
import json
import textwrap

import numpy as np
import pytest
from helpers import claim_and_width, user_args

from dpaudit.user_source import rebuild_user_mechanism, source_record
from mechanisms import AddRemoveUser, BoundedChange

MODULE = "h44t_user_source_mech"
SOURCE = textwrap.dedent(
    """
    import numpy as np

    def noisy_max(counts, size, rng):
        noisy = np.asarray(counts) + rng.laplace(0.0, 2.0, size=(size, len(counts)))
        return np.argmax(noisy, axis=1)
    """
)


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A user's module in its own directory, the directory the "audit" runs in."""
    path = tmp_path / f"{MODULE}.py"
    path.write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, MODULE, raising=False)
    return path


def _args(**given):
    return user_args(**{"values": None, **given})


def test_a_built_in_mechanism_has_no_source_record():
    assert source_record(_args(mechanism="GumbelTopK")) is None
    assert source_record(_args(mechanism="catalog:gumbel-topk-claims-eps")) is None
    assert source_record(_args()) is None


def test_a_module_target_records_its_files_digest_and_options(user_module):
    record = source_record(
        _args(mechanism=f"{MODULE}:noisy_max", claim="1,0", width=1, relation="bounded-change")
    )
    assert record == {
        "kind": "module:attr",
        "target": f"{MODULE}:noisy_max",
        "file": f"{MODULE}.py",
        "sha256": hashlib.sha256(SOURCE.encode()).hexdigest(),
        "claim": "1,0",
        "width": 1,
        "values": 0,
        "relation": "bounded-change",
    }


def test_a_module_not_found_is_recorded_without_a_file():
    record = source_record(_args(mechanism="no_such_module_h44t:f", claim="1,0", width=1))
    assert record is not None and record["file"] is None and record["sha256"] is None


def test_a_module_record_round_trips_through_json_to_the_same_mechanism(user_module):
    args = _args(mechanism=f"{MODULE}:noisy_max", claim="1,0", width=1, relation="bounded-change")
    record = json.loads(json.dumps(source_record(args)))
    mech = rebuild_user_mechanism(record)
    assert claim_and_width(mech) == (1.0, 0.0, BoundedChange(1), 1)
    a = np.asarray(mech.sample([5, 1, 0], 20, np.random.default_rng(4)))
    b = np.asarray(mech.sample([5, 1, 0], 20, np.random.default_rng(4)))
    assert a.shape == (20, 1) and (a == b).all()


def test_a_changed_module_is_refused_with_both_digests(user_module):
    record = source_record(_args(mechanism=f"{MODULE}:noisy_max", claim="1,0", width=1))
    user_module.write_text(SOURCE.replace("2.0", "0.1"))
    now = hashlib.sha256(user_module.read_bytes()).hexdigest()
    with pytest.raises(ValueError) as caught:
        rebuild_user_mechanism(record)
    message = str(caught.value)
    assert f"sha256 {record['sha256'][:12]}... when audited, {now[:12]}... now" in message
    assert message.endswith("the result is about the code that was audited")


def test_a_module_that_cannot_be_found_says_where_to_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # the module adds the cwd: restored after
    record = {"kind": "module:attr", "target": "no_such_module_h44t:f", "claim": "1,0", "width": 1}
    with pytest.raises(
        ValueError,
        match=r"cannot find module 'no_such_module_h44t' of no_such_module_h44t:f \(run the recheck from the directory",
    ):
        rebuild_user_mechanism(record)


def test_a_bad_recorded_option_is_a_value_error_naming_it(user_module):
    record = source_record(_args(mechanism=f"{MODULE}:noisy_max", claim="1,0", width=1))
    record["claim"] = "1"
    with pytest.raises(ValueError, match=r"^--claim wants EPS,DELTA"):
        rebuild_user_mechanism(record)


def test_a_command_is_recorded_with_its_timeout():
    args = _args(child_command="python child.py", claim="1,1e-6", width=2, values=1, timeout=5.0)
    assert source_record(args) == {
        "kind": "command",
        "command": "python child.py",
        "claim": "1,1e-6",
        "width": 2,
        "values": 1,
        "relation": None,
        "timeout": 5.0,
    }


def test_a_command_runs_again_only_when_allowed():
    record = source_record(
        _args(child_command="python child.py", claim="1,0", width=2, timeout=5.0)
    )
    with pytest.raises(
        ValueError, match=r"the audit ran the command 'python child.py'; .*--allow-command"
    ):
        rebuild_user_mechanism(record)
    mech = rebuild_user_mechanism(record, allow_command=True)  # built, not run
    assert mech.command == ("python", "child.py")
    assert mech.claim.neighbours == AddRemoveUser() and mech.width == 2


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="not a recorded mechanism source"):
        rebuild_user_mechanism({"kind": "notebook"})
