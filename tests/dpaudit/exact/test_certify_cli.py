"""``dpaudit worst-case --certify``: the certified interval, its exit status and certificate."""

import json

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
