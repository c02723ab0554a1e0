"""``sources.blackbox``: plain functions as batched mechanisms, claims, and the outcome rules."""

import numpy as np
import pytest

from dpaudit.auditor import (
    BatchedBlackBox,
    BlackBox,
    as_auditable,
    batched,
    make_claim,
    validate_batch,
)
from mechanisms import (
    BOTTOM,
    PAD,
    AddRemoveUser,
    BoundedChange,
    GumbelTopK,
    MixedBatch,
    PrivacyClaim,
    Substitute,
)


def per_call(counts, rng):
    """Report noisy max with ⊥ when the winner's noisy count is low."""
    noisy = np.asarray(counts) + rng.laplace(0.0, 2.0, len(counts))
    winner = int(np.argmax(noisy))
    return (winner,) if noisy[winner] > 1 else (winner, BOTTOM)


# -- claims ----------------------------------------------------------------------------------


def test_make_claim_reads_every_form():
    assert make_claim((1, 0)) == PrivacyClaim(1.0, 0.0, AddRemoveUser())
    assert make_claim((1, 1e-6, BoundedChange(2))) == PrivacyClaim(1.0, 1e-6, BoundedChange(2))
    assert make_claim((1, 0), Substitute(1)).neighbours == Substitute(1)
    claim = PrivacyClaim(2.0, 0.0, AddRemoveUser(3))
    assert make_claim(claim) is claim
    assert make_claim(claim, BoundedChange(1)) == PrivacyClaim(2.0, 0.0, BoundedChange(1))


@pytest.mark.parametrize(
    "claim, message",
    [
        (1.0, "claim must be (epsilon, delta) or (epsilon, delta, relation), got 1.0"),
        ((1.0,), "claim must be (epsilon, delta) or (epsilon, delta, relation), got (1.0,)"),
        ((-1.0, 0.0), "claim epsilon must be a finite number >= 0, got -1.0"),
        ((1.0, 2.0), "claim delta must be a finite number in [0, 1], got 2.0"),
        (
            (1.0, 0.0, "add-remove"),
            "neighbours must be AddRemoveUser, BoundedChange or Substitute, got 'add-remove'",
        ),
    ],
)
def test_make_claim_refuses_naming_the_part(claim, message):
    with pytest.raises(ValueError) as caught:
        make_claim(claim)
    assert str(caught.value) == message


# -- per call --------------------------------------------------------------------------------


def test_a_per_call_function_is_batched_row_by_row_on_one_generator():
    box = BlackBox(per_call, make_claim((1, 0)), 2, "rnm")
    batch = box.sample([5, 1, 0], 50, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    expected = [per_call([5, 1, 0], rng) for _ in range(50)]
    assert [tuple(int(v) for v in row if v != PAD) for row in batch] == expected
    assert batch.dtype == np.int64 and batch.shape == (50, 2)
    assert validate_batch(batch, domain_size=3) is not None


@pytest.mark.parametrize(
    "returned, message",
    [
        (1.5, "returned 1.5: an outcome is a tuple of integer item ids"),
        (None, "returned None: an outcome is a tuple of integer item ids"),
        (
            (0, 1.0),
            r"returned \(0, 1.0\): 1.0 is not an integer item id \(floats are not truncated",
        ),
        (object, r"returned <class 'object'> \(type\), not a tuple of integer item ids"),
        ((0, 1, 2), r"returned \(0, 1, 2\), longer than width=2"),
    ],
)
def test_a_bad_per_call_return_names_the_function_and_the_value(returned, message):
    box = BlackBox(lambda counts, rng: returned, make_claim((1, 0)), 2, "mine")
    with pytest.raises(ValueError, match="^mine " + message):
        box.sample([1, 1, 1], 3, np.random.default_rng(0))


def test_a_per_call_function_with_values():
    def with_value(counts, rng):
        return (1,), (0.5,)

    box = BlackBox(with_value, make_claim((1, 0)), 1, "v", values=1)
    batch = box.sample([1, 2], 4, np.random.default_rng(0))
    assert isinstance(batch, MixedBatch) and box.value_width == 1
    assert batch.items.tolist() == [[1]] * 4 and batch.values.tolist() == [[0.5]] * 4
    bare = BlackBox(lambda counts, rng: 2.5, make_claim((1, 0)), 0, "bare", values=1)
    assert bare.sample([1], 2, np.random.default_rng(0)).values.tolist() == [[2.5], [2.5]]
    wrong = BlackBox(lambda counts, rng: ((1,), (0.5, 0.6)), make_claim((1, 0)), 1, "w", values=1)
    with pytest.raises(ValueError, match=r"expected at most 1 item ids and exactly 1 values"):
        wrong.sample([1, 2], 1, np.random.default_rng(0))


def test_the_constructor_checks_its_fields():
    with pytest.raises(ValueError, match="function must be callable"):
        BlackBox(3, make_claim((1, 0)), 1)
    with pytest.raises(ValueError, match=r"^width must be an integer >= 1, got 0$"):
        BlackBox(per_call, make_claim((1, 0)), 0)
    BlackBox(per_call, make_claim((1, 0)), 0, values=1)  # a values-only release has no items


# -- batched ---------------------------------------------------------------------------------


def test_the_batched_decorator_pads_to_the_width():
    @batched(claim=(1.0, 0.0), width=3)
    def first_only(counts, size, rng):
        return np.argmax(np.asarray(counts) + rng.gumbel(size=(size, len(counts))), axis=1)

    assert isinstance(first_only, BatchedBlackBox) and str(first_only) == "first_only"
    batch = first_only.sample([4, 0, 0], 10, np.random.default_rng(0))
    assert batch.shape == (10, 3) and (batch[:, 1:] == PAD).all()
    assert first_only.claim == PrivacyClaim(1.0, 0.0, AddRemoveUser())


def test_a_batched_function_of_the_wrong_shape_is_refused():
    box = BatchedBlackBox(
        lambda counts, size, rng: np.zeros((size + 1, 1)), make_claim((1, 0)), 1, "f"
    )
    with pytest.raises(ValueError, match=r"^f returned shape \(4, 1\), not \(3, <= 1\)$"):
        box.sample([1], 3, np.random.default_rng(0))
    none = BatchedBlackBox(lambda counts, size, rng: None, make_claim((1, 0)), 1, "g")
    with pytest.raises(ValueError, match=r"^g returned None, not a \(size, width\) array$"):
        none.sample([1], 3, np.random.default_rng(0))


# -- as_auditable ----------------------------------------------------------------------------


def test_a_mechanism_passes_through_with_its_claim_or_the_given_one():
    mech = GumbelTopK(k=2, epsilon=1.0)
    target = as_auditable(mech)
    assert target.mechanism is mech and target.claim == mech.claim
    assert target.label == repr(mech)
    given = as_auditable(mech, claim=(0.5, 0.0), name="mine")
    assert given.claim == PrivacyClaim(0.5, 0.0, mech.claim.neighbours)  # its own relation kept
    assert given.label == "mine"
    assert as_auditable(mech, claim=(0.5, 0.0, Substitute(1))).claim.neighbours == Substitute(1)


def test_a_callable_is_wrapped_per_call_or_batched():
    target = as_auditable(per_call, claim=(1, 0), width=2)
    assert isinstance(target.mechanism, BlackBox) and not isinstance(
        target.mechanism, BatchedBlackBox
    )
    assert target.label == "per_call" and target.claim == make_claim((1, 0))
    fast = as_auditable(
        lambda c, s, r: np.zeros((s, 1)), claim=(1, 0), width=1, batched=True, name="z"
    )
    assert isinstance(fast.mechanism, BatchedBlackBox) and fast.label == "z"


def test_a_callable_needs_its_claim_and_width_and_anything_else_is_refused():
    with pytest.raises(
        ValueError, match=r"a plain callable needs claim=\(epsilon, delta\[, relation\]\)"
    ):
        as_auditable(per_call, width=1)
    with pytest.raises(ValueError, match=r"a plain callable needs width="):
        as_auditable(per_call, claim=(1, 0))
    with pytest.raises(
        ValueError, match=r"cannot audit 3: pass a mechanism with sample/claim or a callable"
    ):
        as_auditable(3)


# -- validate_batch --------------------------------------------------------------------------


def test_valid_outcomes_pass_as_int64():
    batch = np.array(
        [[0, 2, BOTTOM], [1, PAD, PAD], [BOTTOM, PAD, PAD], [PAD, PAD, PAD]], dtype=np.int32
    )
    got = validate_batch(batch, domain_size=3)
    assert got.dtype == np.int64 and got.tolist() == batch.tolist()


@pytest.mark.parametrize(
    "row, why",
    [
        ([0, 3, PAD], "an id outside the domain"),
        ([0, 0, PAD], "an id twice"),
        ([BOTTOM, 1, PAD], "⊥ before an item"),
        ([0, PAD, 1], "PAD inside the outcome"),
        ([0, -3, PAD], "below PAD"),
    ],
)
def test_each_broken_rule_names_the_first_offending_outcome(row, why):
    batch = np.array([[0, 1, PAD], row, [2, PAD, PAD]])
    with pytest.raises(ValueError) as caught:
        validate_batch(batch, domain_size=3, name="mine")
    message = str(caught.value)
    outcome = tuple(v for v in row if v != PAD)
    assert message.startswith(
        f"mine returned the outcome {outcome} (row {row}): outcomes hold ids in [0, 3)"
    ), why


def test_a_transcript_may_repeat_ids_and_hold_bottom_mid_row():
    transcript = np.array([[0, BOTTOM, 0, 1, PAD]])
    assert validate_batch(transcript, transcript=True).tolist() == transcript.tolist()
    with pytest.raises(ValueError):
        validate_batch(transcript)


def test_float_or_1d_batches_are_refused():
    with pytest.raises(ValueError, match=r"returned float64 outcomes, not integer item ids"):
        validate_batch(np.zeros((2, 1)))
    with pytest.raises(ValueError, match=r"returned a batch of shape \(3,\), not \(size, width\)"):
        validate_batch(np.zeros(3, dtype=np.int64))
