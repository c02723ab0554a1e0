"""Results in a REPL and a notebook: one-line reprs, HTML tables, a readable headline witness."""

import mechanisms as M
from dpaudit.auditor.results.result import AuditResult, Witness
from dpaudit.auditor.values import LinearScore, ValueEncoder, ValueThreshold
from dpaudit.recheck import RecheckResult, WitnessCheck

# One item column and one value; the score reads value 1, its missing flag, and items 0, 1.
SCORE = LinearScore(
    vocabulary=(0, 1),
    means=(4.0, 0.0, 0.5, 0.5),
    scales=(2.0, 1.0, 0.5, 0.5),
    weights=(1.5, 0.0, -0.4, 0.2),
)
ENCODER = ValueEncoder(
    width=1, value_width=1, edges=((3.0, 4.957),), score=SCORE, score_edges=(-0.557287, 0.3)
)
SCORE_EVENT = ValueThreshold(ENCODER, column=-1, code=2, above=False)  # learned score < -0.557
VALUE_EVENT = ValueThreshold(ENCODER, column=0, code=3, above=True)  # value 1 >= 4.957


def _witness(event, epsilon_lower, counts=(5, 5, 0), delta_lower=0.0):
    return Witness(
        counts,
        (6, 6, 0),
        event,
        900,
        1000,
        100,
        1000,
        0.88,
        0.12,
        epsilon_lower,
        delta_lower,
        "add/remove",
    )


def _result(witnesses, mechanism="noisy <max> & value"):
    best = max(witnesses, key=lambda w: w.epsilon_lower)
    return AuditResult(
        mechanism=mechanism,
        claim_epsilon=1.0,
        claim_delta=0.0,
        neighbours="add/remove one user",
        epsilon_lower=best.epsilon_lower,
        delta_lower=0.3,
        violation=True,
        alpha=0.05,
        epsilon_witness=best,
        delta_witness=best,
        samples=100_000,
        seconds=1.0,
        pairs_screened=10,
        events_confirmed=len(witnesses),
        seed=0,
        witnesses=tuple(witnesses),
        separated=True,
    )


def test_the_headline_is_the_most_violating_readable_event():
    weaker = _witness(VALUE_EVENT, 1.2, counts=(4, 4, 0))
    stronger = _witness(VALUE_EVENT, 1.5)
    result = _result([_witness(SCORE_EVENT, 2.0), weaker, stronger])
    assert result.epsilon_witness.event is SCORE_EVENT  # the bound is still the best one
    assert result.headline_witness is stronger
    text = str(result)
    assert "event:      value 1 >= 4.957" in text and "learned score =" not in text


def test_a_score_headline_shows_the_weights_per_raw_feature():
    # The only readable event does not violate (1.0 <= claim 1.0): the score stays headline.
    result = _result([_witness(SCORE_EVENT, 2.0), _witness(VALUE_EVENT, 1.0)])
    assert result.headline_witness.event is SCORE_EVENT
    text = str(result)
    assert "event:      learned score < -0.557287" in text
    # weight / scale: value 1 1.5/2 = 0.75, [item 0 at 1] -0.4/0.5 = -0.8, [item 1 at 1] 0.4
    assert "score:      learned score = −0.8·[item 0 at 1] +0.75·value 1 +0.4·[item 1 at 1]" in text


def test_repr_is_one_short_line_and_html_is_escaped():
    result = _result([_witness(SCORE_EVENT, 2.0), _witness(VALUE_EVENT, 1.5)])
    line = repr(result)
    assert "\n" not in line and len(line) < 400
    assert line.startswith("<AuditResult VIOLATION: noisy <max> & value; claim (1, 0); ε ≥ 2 ")
    assert line.endswith("witness [5, 5, 0] vs [6, 6, 0]: value 1 >= 4.957>")
    page = result._repr_html_()
    assert "noisy &lt;max&gt; &amp; value" in page and "<max>" not in page
    assert "VIOLATION" in page and "value 1 &gt;= 4.957" in page


def test_verification_result_repr_and_html():
    import dpaudit.exact.gumbel_laws  # noqa: F401  (registers the GumbelTopK law)
    from dpaudit.exact import verify

    result = verify(M.GumbelTopK(k=1, epsilon=1.0), d=2, max_count=1, progress=False)
    line = repr(result)
    assert "\n" not in line and line.startswith("<VerificationResult HOLDS: GumbelTopK(")
    assert "d=2, counts <= 1" in line
    assert "HOLDS" in result._repr_html_() and "every histogram on d=2" in result._repr_html_()


def test_recheck_result_repr_and_html():
    checks = (
        WitnessCheck(0, "exact", 0.9, 0.1, 0.88, 0.12, True, 2.19, True),
        WitnessCheck(1, "sampled", 0.5, 0.5, 0.6, 0.4, False, 0.0, False, "outside"),
    )
    result = RecheckResult("M<1>", "violation", checks)
    line = repr(result)
    assert line == (
        "<RecheckResult DISAGREES: audit of M<1> (verdict VIOLATION); "
        "2 witnesses re-checked (exact, sampled); violation reproduced>"
    )
    page = result._repr_html_()
    assert "M&lt;1&gt;" in page and "DISAGREES (outside)" in page
