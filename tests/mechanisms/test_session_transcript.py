"""MultiLimitDomainTranscript: a whole pay-what-you-get session as one mechanism (seed 003 Alg. 2)."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechanisms as M
from mechanisms import BOTTOM, PAD
from mechanisms.analyst_policies import RepeatQuery, ScriptedQueries, WidenAfterBottom
from mechanisms.session_transcript import MultiLimitDomainTranscript


def transcript(policy=None, **overrides):
    params = {"total_k": 3, "max_queries": 4, "epsilon": 1.0, "delta": 1e-2}
    params.update(overrides)
    return M.MultiLimitDomain(**params).transcript_mechanism(policy or RepeatQuery(k=1, kbar=2))


def test_batch_shape_padding_and_claim():
    mech = transcript()
    batch = mech.sample(np.array([4, 3, 1, 0]), 5_000, np.random.default_rng(0))
    assert batch.dtype == np.int64 and batch.shape == (5_000, 3) == (5_000, mech.width)
    assert mech.claim == mech.config.claim
    # PAD only trailing; every non-PAD cell an item of the top k̄ = 2 or ⊥
    filled = batch != PAD
    assert np.all(filled[:, :-1] | ~filled[:, 1:])
    assert set(np.unique(batch[filled])) <= {BOTTOM, 0, 1}
    assert mech.sample([4, 3, 1, 0], 0, np.random.default_rng(0)).shape == (0, 3)


def test_same_generator_state_same_transcripts_and_run_is_first_row():
    mech = transcript(WidenAfterBottom(k=2, kbar=2, step=1, max_kbar=3))
    counts = [5, 3, 3, 1]
    a = mech.sample(counts, 2_000, np.random.default_rng(42))
    b = mech.sample(counts, 2_000, np.random.default_rng(42))
    assert np.array_equal(a, b)
    assert mech.run(counts, np.random.default_rng(42)) == M.outcome_from_row(
        mech.sample(counts, 1, np.random.default_rng(42))[0]
    )


@given(
    seed=st.integers(0, 2**32 - 1),
    total_k=st.integers(1, 4),
    max_queries=st.integers(1, 4),
    counts=st.lists(st.integers(0, 6), min_size=2, max_size=5),
)
@settings(max_examples=40, deadline=None)
def test_every_sampled_transcript_decodes_into_answers_within_budget(
    seed, total_k, max_queries, counts
):
    policy = WidenAfterBottom(k=min(2, total_k), kbar=2, step=1, max_kbar=4)
    mech = transcript(policy, total_k=total_k, max_queries=max_queries)
    batch = mech.sample(counts, 200, np.random.default_rng(seed))
    for row in batch[:50]:
        answers = mech.answers(M.outcome_from_row(row))
        assert sum(len(a) for a in answers) <= total_k  # ⊥ charged: lengths add up to <= k*
        assert len(answers) <= max_queries
        for answer in answers:
            assert BOTTOM not in answer[:-1]
            items = [i for i in answer if i != BOTTOM]
            assert len(set(items)) == len(items)  # no repeats within one answer


def test_answers_rejects_foreign_transcripts():
    mech = transcript(ScriptedQueries(((1, 1),)))
    assert mech.answers((0,)) == ((0,),)
    with pytest.raises(ValueError, match="not a transcript"):
        mech.answers((0, 0))


def test_transcripts_pickle_for_worker_processes():
    mech = transcript(WidenAfterBottom(k=1, kbar=1))
    clone = pickle.loads(pickle.dumps(mech))
    assert clone == mech


def test_bad_configuration_is_rejected_by_name():
    with pytest.raises(ValueError, match="config"):
        MultiLimitDomainTranscript(config={"total_k": 3}, policy=RepeatQuery(1, 1))
    with pytest.raises(ValueError, match="policy"):
        transcript(policy=42)
    with pytest.raises(TypeError, match="rng"):
        transcript().sample([3, 2, 1], 10, rng=3)
    with pytest.raises(ValueError, match="counts"):
        transcript().sample([3, -2, 1], 10, rng=np.random.default_rng(0))


def test_a_query_above_the_remaining_budget_ends_the_transcript():
    # k* = 2: the analyst's second query asks k = 3 > what is left -> refused, session over.
    script = ((1, 1), (3, 3), (1, 1))
    mech = transcript(
        lambda answers, k_left, q_left: script[len(answers)] if len(answers) < 3 else None,
        total_k=2,
    )
    assert mech.next_query(((0,),), 1, 3) is None
    batch = mech.sample([9, 0, 0], 500, np.random.default_rng(1))
    assert np.all((batch != PAD).sum(axis=1) == 1)
