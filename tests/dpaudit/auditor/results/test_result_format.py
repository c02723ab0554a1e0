"""The result JSON's format version and canonical digest (dpaudit.auditor.results.result_format)."""

import json

import pytest
from golden.cases import path

from dpaudit.auditor.results.result import AuditResult
from dpaudit.auditor.results.result_format import FORMAT_VERSION, result_digest


def _golden():
    data = json.loads(path("catalog_joint_no_half").read_text(encoding="utf-8"))
    return dict(data, seconds=1.5)  # golden files leave the clock out


def test_written_results_carry_the_format_version_and_read_back():
    data = _golden()
    assert data["format_version"] == FORMAT_VERSION
    assert AuditResult.from_dict(data).to_dict()["format_version"] == FORMAT_VERSION


def test_a_newer_format_is_refused_and_a_file_without_a_version_is_read():
    data = _golden()
    data["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(ValueError, match="newer than this dpaudit reads"):
        AuditResult.from_dict(data)
    del data["format_version"]
    assert AuditResult.from_dict(data).events_confirmed == _golden()["events_confirmed"]


def test_digest_ignores_time_and_date_but_sees_any_other_change():
    data = _golden()
    digest = result_digest(data)
    assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 64
    timed = dict(data, seconds=123.0, evidence=dict(data["evidence"], date="1999-01-01"))
    assert result_digest(timed) == digest
    # Key order is not content: the canonical JSON sorts keys.
    assert result_digest(dict(reversed(list(data.items())))) == digest
    edited = json.loads(json.dumps(data))
    edited["witnesses"][0]["hits_p"] += 1
    assert result_digest(edited) != digest
    assert result_digest(dict(data, evidence=dict(data["evidence"], seed=99))) != digest
