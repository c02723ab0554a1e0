"""``dpaudit worst-case --certify``: the certified interval, its exit status and certificate."""

import json

import pytest

from dpaudit.cli import main
from dpaudit.exact.certify import read_certificate, recheck_certificate
from mechanisms import LimitDomain

ARGS = ["worst-case", "LimitDomain", "--k", "1", "--kbar", "2", "--epsilon", "1", "--delta", "1e-3"]


def test_certify_writes_a_certificate_that_rechecks(tmp_path, capsys):
    certificate, summary = tmp_path / "c.json", tmp_path / "s.json"
    status = main(
        [*ARGS, "--d", "4", "--certify", "--certificate", str(certificate), "--json", str(summary)]
    )
    out = capsys.readouterr().out
    assert status == 0  # the certified upper end (about 0.973) is within the claim of 1
    assert "certified in [" in out and "lower end attained by" in out
    data = json.loads(summary.read_text())
    assert float(data["upper"]) <= 1.0 and "leaves" not in data
    mech = LimitDomain(k=1, kbar=2, epsilon=1.0, delta=1e-3)
    assert recheck_certificate(read_certificate(certificate), mech).ok


def test_certify_refuses_a_mechanism_it_has_no_reduction_for(capsys):
    status = main(["worst-case", "PeelingEM", "--k", "1", "--epsilon", "1", "--certify"])
    assert status == 2
    assert "LimitDomain" in capsys.readouterr().err


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    path = tmp_path_factory.mktemp("certificate") / "c.json"
    assert main([*ARGS, "--d", "4", "--certify", "--rtol", "0.05", "--certificate", str(path)]) == 0
    return path


def test_recheck_accepts_a_genuine_certificate(certificate, capsys):
    data = json.loads(certificate.read_text())
    assert data["mechanism_spec"]["class"] == "mechanisms.limit_domain:LimitDomain"
    status = main(["recheck", str(certificate)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "certificate OK" in out and "lower end recomputed exactly" in out


def _tampered(certificate, tmp_path, change) -> str:
    data = json.loads(certificate.read_text())
    change(data)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(data))
    return str(path)


def _worst(data) -> int:
    return max(range(len(data["leaves"])), key=lambda n: float(data["leaves"][n]["upper"]))


def test_recheck_refuses_a_lowered_leaf_bound_and_names_the_leaf(certificate, tmp_path, capsys):
    worst = _worst(json.loads(certificate.read_text()))

    def lower_it(data):
        data["leaves"][worst]["upper"] = float(data["leaves"][worst]["upper"]) * 0.9
        data["upper"] = max(float(leaf["upper"]) for leaf in data["leaves"])

    status = main(["recheck", _tampered(certificate, tmp_path, lower_it)])
    assert status == 1
    assert f"leaf {worst} (free gaps" in capsys.readouterr().err


def test_recheck_refuses_a_certificate_with_a_leaf_deleted(certificate, tmp_path, capsys):
    def delete_it(data):
        del data["leaves"][_worst(data)]

    status = main(["recheck", _tampered(certificate, tmp_path, delete_it)])
    assert status == 1
    assert "no leaf covers the free gaps" in capsys.readouterr().err


def test_recheck_refuses_a_family_that_is_not_the_mechanisms(certificate, tmp_path, capsys):
    def move_it(data):
        data["model"]["bottom"] = 1.0

    assert main(["recheck", _tampered(certificate, tmp_path, move_it)]) == 1
    assert "is not that of the mechanism" in capsys.readouterr().out


def test_recheck_of_an_unreadable_certificate_is_a_usage_error(certificate, tmp_path, capsys):
    def break_it(data):
        del data["leaves"]

    assert main(["recheck", _tampered(certificate, tmp_path, break_it)]) == 2
    assert "not a readable certificate" in capsys.readouterr().err
    assert main(["recheck", str(certificate), "--seed", "3"]) == 2


def test_recheck_in_interval_arithmetic_writes_json(certificate, tmp_path, capsys):
    out = tmp_path / "check.json"
    status = main(["recheck", str(certificate), "--arithmetic", "interval", "--json", str(out)])
    assert status == 0, capsys.readouterr().out
    check = json.loads(out.read_text())
    assert check["ok"] and check["problems"] == [] and check["lower"] is not None
    assert check["leaves"] == len(json.loads(certificate.read_text())["leaves"])


def test_a_certificate_without_a_mechanism_spec_is_checked_without_its_lower_end(
    certificate, tmp_path, capsys
):
    def forget_it(data):
        del data["mechanism_spec"]

    assert main(["recheck", _tampered(certificate, tmp_path, forget_it)]) == 0
    assert "the lower end was not recomputed" in capsys.readouterr().out


def test_arithmetic_is_for_certificates_only(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text("{}")
    assert main(["recheck", str(path), "--arithmetic", "interval"]) == 2
    assert "--arithmetic applies to a certificate" in capsys.readouterr().err
