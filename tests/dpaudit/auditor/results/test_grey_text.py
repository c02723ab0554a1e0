"""The grey-box stages of a result in words (dpaudit.auditor.results.grey_text)."""

import dataclasses

from helpers import one_witness_result

from dpaudit.auditor.results.grey_text import (
    grey_box_text,
    grey_delta_record,
    grey_delta_text,
    witness_violates,
)
from dpaudit.auditor.results.result import Witness

_WITNESS = Witness((1, 0), (0, 0), None, 900, 1000, 100, 1000, 0.88, 0.12, 1.9, 0.7, "x")


def _result(evidence):
    return one_witness_result(_WITNESS, claim_delta=1e-6, evidence=evidence)


def test_no_grey_box_record_reads_as_none():
    result = _result({})
    assert grey_box_text(result) is None
    assert grey_delta_text(result) is None
    assert grey_delta_record(result) is None
    assert witness_violates(result)
    assert not witness_violates(dataclasses.replace(result, witnesses=()))


def test_a_skipped_or_refused_delta_stage_says_so():
    skipped = _result({"greybox": {"delta": {"skipped": "no declared support"}}})
    assert grey_delta_text(skipped) == "not run (no declared support)"
    assert grey_delta_record(skipped) is None
    refused = _result({"greybox": {"delta": {"declaration_error": {"text": "item 3 seen"}}}})
    assert grey_delta_text(refused).startswith(
        "NOT USED, the mechanism's declared output support is FALSE: item 3 seen."
    )
