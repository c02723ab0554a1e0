"""Every corpus entry: names, citations, true guarantees, build and sample; CLI corpus: audits."""

import json

import numpy as np
import pytest

from dpaudit.auditor.sources.blackbox import BatchedBlackBox, validate_batch
from dpaudit.cli import main
from dpaudit.corpus import CORPUS, entry
from dpaudit.neighbours import is_neighbour
from mechanisms import MixedBatch

FAMILIES = {"sparse vector", "noisy max", "histogram", "partition selection", "float noise"}


def test_corpus_covers_the_families_and_names_are_unique():
    assert len(CORPUS) >= 12
    assert len({e.name for e in CORPUS}) == len(CORPUS)
    assert {e.family for e in CORPUS} == FAMILIES
    with pytest.raises(KeyError, match="no corpus entry"):
        entry("no-such-bug")


@pytest.mark.parametrize("item", CORPUS, ids=lambda e: e.name)
def test_entry_cites_its_source_and_states_claimed_and_true_guarantees(item):
    # A source names a repository with an issue/PR or a file, or a paper with its algorithm.
    assert any(word in item.source for word in ("issue", "PR", "Alg.", ".py", "examples/"))
    assert item.true.basis.split(":")[0] in ("exact", "cited")
    claim = item.claim
    # The bug is a bug: the true ε exceeds the claim at the claimed δ, or the true δ at the
    # claimed ε exceeds the claimed δ.
    assert item.true.epsilon > claim.epsilon or item.true.delta > claim.delta
    assert is_neighbour(item.pair[0], item.pair[1], claim.neighbours)
    assert item.twin is None or item.twin().claim.neighbours == claim.neighbours


def _check_batch(mech, counts, size, rng):
    batch = mech.sample(np.array(counts), size, rng)
    if mech.value_width:
        batch = batch if isinstance(batch, MixedBatch) else MixedBatch(np.zeros((size, 0)), batch)
        assert batch.values.shape == (size, mech.value_width)
        assert batch.items.shape == (size, mech.width)
        items = batch.items
    else:
        items = np.asarray(batch)
    validate_batch(items, domain_size=len(counts), name=mech.name)
    return batch


@pytest.mark.parametrize("item", CORPUS, ids=lambda e: e.name)
def test_entry_and_twin_build_and_sample(item):
    rng = np.random.default_rng(3)
    for build in (item.build, item.twin):
        if build is None:
            continue
        mech = build()
        assert isinstance(mech, BatchedBlackBox)
        for counts in item.pair:
            _check_batch(mech, counts, 500, rng)


EXACT = [e for e in CORPUS if e.true.compute is not None]


@pytest.mark.parametrize("item", EXACT, ids=lambda e: e.name)
def test_stated_true_guarantee_is_the_exact_computation(item):
    epsilon, delta = item.true.compute()
    if "epsilon" not in item.true.estimated:
        assert epsilon == pytest.approx(item.true.epsilon, rel=1e-9, abs=1e-12)
    if "delta" not in item.true.estimated:
        assert delta == pytest.approx(item.true.delta, rel=1e-9, abs=1e-15)


# ---------------------------------------------------------------------------
# The command line.


def test_cli_audits_a_corpus_entry_and_records_it(capsys):
    argv = "audit corpus:opendp-laplace-threshold-delta --samples 100000 --no-progress --json -"
    status = main(argv.split())
    data = json.loads(capsys.readouterr().out)
    assert status in (0, 1, 3)
    assert data["evidence"]["corpus"]["name"] == "opendp-laplace-threshold-delta"
    assert "opendp/opendp issue 2922" in data["evidence"]["corpus"]["reference"]


def test_cli_unknown_corpus_entry_is_a_usage_error(capsys):
    assert main(["audit", "corpus:no-such-bug", "--no-progress"]) == 2
    assert "no corpus entry" in capsys.readouterr().err
