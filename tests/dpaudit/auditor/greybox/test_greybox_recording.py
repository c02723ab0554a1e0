"""dpaudit.auditor.greybox.recording: numpy's draws, unchanged, with one record per call."""

import inspect

import numpy as np
import pytest

import mechanisms as M
from dpaudit.auditor.greybox.recording import (
    NOT_RECORDED,
    RECORDED_METHODS,
    RecordingGenerator,
)
from dpaudit.auditor.greybox.sites import short_path
from mechanisms import exponential
from mechanisms.discrete_laplace import discrete_laplace, discrete_laplace_ratio

SEED = 20261202
HERE = short_path(__file__)  # what a site names, whatever the working directory


def _shuffled(rng):
    x = np.arange(7)
    rng.shuffle(x)
    return x


#: One call of every recorded method; each returns what to compare.
CALLS = {
    "beta": lambda g: g.beta(2.0, 3.0, size=3),
    "binomial": lambda g: g.binomial(10, 0.3, size=3),
    "bytes": lambda g: g.bytes(5),
    "chisquare": lambda g: g.chisquare(3.0, size=3),
    "choice": lambda g: g.choice(5, size=3, p=[0.1, 0.2, 0.3, 0.2, 0.2]),
    "dirichlet": lambda g: g.dirichlet([1.0, 2.0, 3.0], size=2),
    "exponential": lambda g: g.exponential(2.0, size=3),
    "f": lambda g: g.f(3.0, 4.0, size=3),
    "gamma": lambda g: g.gamma(2.0, 1.5, size=3),
    "geometric": lambda g: g.geometric(0.3, size=3),
    "gumbel": lambda g: g.gumbel(0.5, 2.0, size=3),
    "hypergeometric": lambda g: g.hypergeometric(5, 7, 4, size=3),
    "integers": lambda g: g.integers(0, 10, size=3),
    "laplace": lambda g: g.laplace(1.0, 2.0, size=3),
    "logistic": lambda g: g.logistic(0.0, 1.0, size=3),
    "lognormal": lambda g: g.lognormal(0.0, 1.0, size=3),
    "logseries": lambda g: g.logseries(0.5, size=3),
    "multinomial": lambda g: g.multinomial(10, [0.2, 0.3, 0.5], size=2),
    "multivariate_hypergeometric": lambda g: g.multivariate_hypergeometric([3, 4, 5], 6, size=2),
    "multivariate_normal": lambda g: g.multivariate_normal([0.0, 1.0], [[1.0, 0.2], [0.2, 1.0]], 2),
    "negative_binomial": lambda g: g.negative_binomial(5, 0.5, size=3),
    "noncentral_chisquare": lambda g: g.noncentral_chisquare(3.0, 1.0, size=3),
    "noncentral_f": lambda g: g.noncentral_f(3.0, 4.0, 1.0, size=3),
    "normal": lambda g: g.normal(1.0, 2.0, size=3),
    "pareto": lambda g: g.pareto(3.0, size=3),
    "permutation": lambda g: g.permutation(6),
    "permuted": lambda g: g.permuted(np.arange(6)),
    "poisson": lambda g: g.poisson(3.0, size=3),
    "power": lambda g: g.power(3.0, size=3),
    "random": lambda g: g.random(3),
    "rayleigh": lambda g: g.rayleigh(2.0, size=3),
    "shuffle": _shuffled,
    "standard_cauchy": lambda g: g.standard_cauchy(3),
    "standard_exponential": lambda g: g.standard_exponential(3),
    "standard_gamma": lambda g: g.standard_gamma(2.0, size=3),
    "standard_normal": lambda g: g.standard_normal(3),
    "standard_t": lambda g: g.standard_t(5.0, size=3),
    "triangular": lambda g: g.triangular(0.0, 1.0, 3.0, size=3),
    "uniform": lambda g: g.uniform(0.0, 2.0, size=3),
    "vonmises": lambda g: g.vonmises(0.0, 1.0, size=3),
    "wald": lambda g: g.wald(1.0, 2.0, size=3),
    "weibull": lambda g: g.weibull(2.0, size=3),
    "zipf": lambda g: g.zipf(2.0, size=3),
}


def _recorder(**options):
    return RecordingGenerator(np.random.PCG64(SEED), **options)


def test_every_public_generator_method_is_recorded_or_named_as_not():
    public = {name for name in dir(np.random.Generator) if not name.startswith("_")}
    assert public == set(RECORDED_METHODS) | set(NOT_RECORDED)
    assert set(CALLS) == set(RECORDED_METHODS)


def test_it_is_a_generator_on_the_given_bit_generator():
    bits = np.random.PCG64(SEED)
    rng = RecordingGenerator(bits)
    assert isinstance(rng, np.random.Generator)
    assert rng.bit_generator is bits
    assert M.check_rng(rng) is rng
    assert rng  # an empty trace keeps it truthy: `rng or default_rng()` keeps it
    assert rng.draws == () and rng.draw_count == 0


@pytest.mark.parametrize("method", RECORDED_METHODS)
def test_outputs_are_bit_identical_to_a_plain_generator(method):
    recorder, plain = _recorder(), np.random.default_rng(SEED)
    got, expected = CALLS[method](recorder), CALLS[method](plain)
    if isinstance(expected, bytes):
        assert got == expected
    else:
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        assert np.array_equal(got, expected)
    assert recorder.bit_generator.state == plain.bit_generator.state
    (draw,) = recorder.draws  # one record per call, numpy's inner calls not counted
    assert draw.method == method and draw.index == 0
    assert draw.shape == ((len(got),) if isinstance(got, bytes) else np.shape(got))


def test_a_sequence_of_calls_is_the_plain_generator_s_sequence():
    recorder, plain = _recorder(values=True), np.random.default_rng(SEED)
    for method in RECORDED_METHODS:
        got, expected = CALLS[method](recorder), CALLS[method](plain)
        assert np.array_equal(np.asarray(got), np.asarray(expected)) or got == expected
    assert [d.method for d in recorder.draws] == list(RECORDED_METHODS)
    assert [d.index for d in recorder.draws] == list(range(len(RECORDED_METHODS)))


def test_a_draw_records_the_call_as_given_and_where_it_was_made():
    rng = _recorder()
    line = inspect.currentframe().f_lineno + 1
    rng.laplace(0.0, scale=2.0, size=(2, 3))
    (draw,) = rng.draws
    assert draw.method == "laplace"
    assert draw.args == (0.0,) and dict(draw.kwargs) == {"scale": 2.0, "size": (2, 3)}
    assert draw.parameters() == {"loc": 0.0, "scale": 2.0, "size": (2, 3)}
    assert draw.shape == (2, 3)
    assert draw.site == f"{HERE}:{line}"
    assert draw.function == "test_a_draw_records_the_call_as_given_and_where_it_was_made"
    assert draw.values is None  # values are off by default
    assert "laplace (2, 3)" in str(draw)


def test_values_are_kept_read_only_when_asked():
    rng = _recorder(values=True)
    out = rng.normal(size=4)
    (draw,) = rng.draws
    assert np.array_equal(draw.values, out) and not draw.values.flags.writeable
    x = np.arange(5)
    rng.shuffle(x)
    assert np.array_equal(rng.draws[1].values, x)  # the shuffled array, after the shuffle
    assert np.array_equal(rng.draws[1].parameters()["x"], np.arange(5))  # as given


def test_array_parameters_are_copied_at_call_time():
    loc = np.array([1.0, 2.0, 3.0])
    rng = _recorder()
    rng.laplace(loc, 1.0)
    loc[:] = 0.0
    recorded = rng.draws[0].parameters()["loc"]
    assert np.array_equal(recorded, [1.0, 2.0, 3.0]) and not recorded.flags.writeable


def test_an_out_buffer_is_kept_by_reference_and_gives_the_shape():
    buffer = np.empty((2, 2))
    rng = _recorder()
    rng.random(out=buffer)
    (draw,) = rng.draws
    assert draw.kwargs["out"] is buffer and draw.shape == (2, 2)


def test_inner_calls_of_numpy_are_part_of_the_outer_call():
    rng = _recorder()
    rng.choice(10, size=3, replace=False)  # numpy calls integers/shuffle internally
    rng.choice(10, size=3, p=np.full(10, 0.1))  # ... and random
    rng.permutation(8)  # ... and shuffle
    assert [d.method for d in rng.draws] == ["choice", "choice", "permutation"]


def test_the_call_site_is_the_mechanism_line_not_a_helper_of_numpy():
    rng = _recorder()
    M.GumbelTopK(k=2, epsilon=0.5).sample([3, 1, 2], 4, rng)
    (draw,) = rng.draws
    path, line = draw.site.rsplit(":", 1)
    source = inspect.getsourcefile(exponential)
    assert path == short_path(source)
    assert draw.function == "_sample_chunk" and draw.method == "gumbel"
    with open(source) as text:
        assert "rng.gumbel(" in text.read().splitlines()[int(line) - 1]


def test_spawned_children_record_into_the_parent_trace():
    rng = _recorder()
    children = rng.spawn(2)
    assert all(isinstance(child, RecordingGenerator) for child in children)
    plain_children = np.random.default_rng(SEED).spawn(2)
    assert np.array_equal(children[1].random(3), plain_children[1].random(3))
    children[0].integers(5)
    assert [d.method for d in rng.draws] == ["spawn", "random", "integers"]
    assert rng.draws[0].shape == (2,)


def test_raw_words_are_not_calls_but_share_the_stream():
    numerator = discrete_laplace_ratio(0.5)
    rng = _recorder()
    noise = discrete_laplace(numerator, (4, 3), rng)
    assert rng.draws == ()  # random_raw is read directly: no method call to record
    assert np.array_equal(noise, discrete_laplace(numerator, (4, 3), np.random.default_rng(SEED)))
    assert rng.bit_generator.state != np.random.default_rng(SEED).bit_generator.state
    rng.random(2)  # a later method call is recorded as usual
    assert rng.draw_count == 1


def test_a_call_that_raises_leaves_no_record():
    rng = _recorder()
    with pytest.raises(ValueError):
        rng.laplace(0.0, -1.0)
    assert rng.draws == ()
    rng.laplace(0.0, 1.0)  # and the depth guard is reset: the next call is recorded
    assert rng.draw_count == 1


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match=r"bit_generator must be a numpy\.random\.BitGenerator"):
        RecordingGenerator(123)
    with pytest.raises(TypeError, match="values must be True or False"):
        RecordingGenerator(np.random.PCG64(0), values="yes")
