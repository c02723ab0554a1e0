"""Discrete Laplace noise: the ratio rounds up, the sampler follows the law, errors are named."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mechanisms.discrete_laplace import (
    RATIO_BITS,
    _thresholds,
    discrete_laplace,
    discrete_laplace_ratio,
    geometric_draws,
)


@pytest.mark.parametrize("epsilon", [1e-6, 0.05, 0.5, 1.0, 3.0, 40.0])
def test_ratio_is_an_upper_bound_within_three_units(epsilon):
    # The claim needs r >= e^{-ε} (noise at least as wide): checked against the exact
    # exponential of the double ε by Fraction arithmetic on a high-precision decimal.
    import mpmath

    with mpmath.workdps(40):
        exact = mpmath.exp(-mpmath.mpf(epsilon)) * 2**RATIO_BITS
        numerator = discrete_laplace_ratio(epsilon)
        assert numerator >= exact and numerator - exact <= 3


def test_ratio_rejects_what_53_bits_cannot_hold():
    with pytest.raises(ValueError, match="epsilon_per_unit"):
        discrete_laplace_ratio(1e-17)
    with pytest.raises(ValueError, match="epsilon_per_unit"):
        discrete_laplace_ratio(-1.0)


def test_geometric_counts_follow_their_law():
    # Chi-square against (1 - r) r^g, tail beyond 15 pooled: fixed seed, false failure <= 1e-6.
    numerator = discrete_laplace_ratio(0.4)
    r = numerator / 2**RATIO_BITS
    draws = geometric_draws(numerator, 100_000, np.random.default_rng(2))
    g = np.arange(16)
    expected = np.concatenate([(1 - r) * r**g, [r**16]]) * draws.size
    observed = [np.sum(draws == v) for v in g] + [np.sum(draws >= 16)]
    assert stats.chisquare(observed, expected).pvalue > 1e-6


def test_discrete_laplace_is_symmetric_integer_noise_of_the_stated_shape():
    numerator = discrete_laplace_ratio(1.0)
    noise = discrete_laplace(numerator, (300, 4), np.random.default_rng(0))
    assert noise.shape == (300, 4) and noise.dtype == np.int64
    r = numerator / 2**RATIO_BITS
    # E|Z| = 2r / (1 - r^2); a 6-sigma band over 1200 draws.
    mean_abs = 2 * r / (1 - r**2)
    sd = math.sqrt(2 * r * (1 + r**2) / (1 - r**2) ** 2 - mean_abs**2)
    assert abs(np.abs(noise).mean() - mean_abs) < 6 * sd / math.sqrt(noise.size)


def _geometric_by_exact_comparison(numerator, size, rng):
    # The reference route: one word w per round for each draw still pending (the order the
    # sampler reads them), U in [w, w + 1) / 2^64, and G counts the g with U < r^g by
    # integer comparisons of w·2^{53g} with numerator^g·2^64: no table, no searchsorted.
    length = _thresholds(numerator).size
    log_r = math.log(numerator / 2**RATIO_BITS)

    def below(word, g):  # U < r^g for every U of the word; None on a tie
        scaled, shift = numerator**g << 64, RATIO_BITS * g
        if (word + 1) << shift <= scaled:
            return True
        assert word << shift >= scaled, "a tie: settled by further bits, not here"
        return False

    out = [0] * size
    pending = list(range(size))
    while pending:
        words = rng.integers(0, 2**64, size=len(pending), dtype=np.uint64)
        still = []
        for i, word in zip(pending, words.tolist(), strict=True):
            # A floating-point guess, then exact steps until r^{g+1} <= U < r^g.
            g = min(length, max(0, int(math.log((word + 0.5) / 2**64) / log_r)))
            while g > 0 and not below(word, g):
                g -= 1
            while g < length and below(word, g + 1):
                g += 1
            out[i] += g
            if g == length:
                still.append(i)
        pending = still
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize(
    "bits",
    [np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64, np.random.MT19937],
)
@pytest.mark.parametrize("epsilon", [1e-4, 0.05, 1.0, 30.0])
def test_geometric_draws_and_stream_equal_the_exact_comparison_route(bits, epsilon):
    # The sampler reads raw words on 64-bit generators and compares them with a table;
    # the draws, and where the stream is left, must be those of the integer comparisons
    # on Generator.integers words, for every bit generator. At ε = 1e-4 the table is
    # capped (L = 4096, r^L ≈ 0.66): most draws clear it and continue (memorylessness).
    numerator = discrete_laplace_ratio(epsilon)
    size = 30 if epsilon < 1e-3 else 300  # the reference's big integers grow with g
    for seed in range(2):
        fast, plain = np.random.Generator(bits(seed)), np.random.Generator(bits(seed))
        got = geometric_draws(numerator, size, fast)
        assert np.array_equal(got, _geometric_by_exact_comparison(numerator, size, plain))
        assert np.array_equal(fast.integers(0, 2**62, size=4), plain.integers(0, 2**62, size=4))


class _ScriptedWords:
    """A stand-in generator whose ``integers`` hands out the given 64-bit words in order."""

    bit_generator = None  # not a 64-bit raw generator: the sampler calls integers()

    def __init__(self, words):
        self._words = list(words)

    def integers(self, low, high, size, dtype):
        assert (low, high, dtype) == (0, 2**64, np.uint64)
        taken, self._words = self._words[:size], self._words[size:]
        return np.array(taken, dtype=np.uint64)


@pytest.mark.parametrize("g", [4, 7])
@pytest.mark.parametrize("next_word", ["below", "above", "equal-then-below", "equal-then-above"])
def test_a_word_on_a_threshold_is_settled_by_further_bits_exactly(g, next_word):
    # A word equal to floor(r^g · 2^64) cannot tell U < r^g; the next words can. The
    # answer is checked by Fraction arithmetic on the finite prefix U actually has.
    numerator = discrete_laplace_ratio(0.3)
    r_g = Fraction(numerator, 2**RATIO_BITS) ** g
    word = int(r_g * 2**64)
    first, rest = divmod((r_g * 2**64 - word) * 2**64, 1)  # V's next 64 bits would tie here
    first, second = int(first), int(rest * 2**64)
    assert 0 < first < 2**64 - 1 and 0 < second < 2**64 - 1  # room on both sides
    script = {
        "below": [first - 1],
        "above": [first + 1],
        "equal-then-below": [first, second - 1],
        "equal-then-above": [first, second + 1],
    }[next_word]
    rng = _ScriptedWords([word, *script])
    (draw,) = geometric_draws(numerator, 1, rng)
    prefix = Fraction(word, 2**64) + sum(
        Fraction(w, 2 ** (64 * (k + 2))) for k, w in enumerate(script)
    )
    # U lies in [prefix, prefix + 2^{-64·(len+1)}), and r^g is outside that interval.
    expected = g if prefix < r_g else g - 1
    assert draw == expected and rng._words == []


def test_a_word_on_an_integer_threshold_needs_no_further_bits():
    # r · 2^64 = numerator · 2^11 is an integer: U = (word + V) / 2^64 >= r whatever V is,
    # so a word equal to it gives G = 0 and reads nothing more.
    numerator = discrete_laplace_ratio(0.3)
    rng = _ScriptedWords([numerator << (64 - RATIO_BITS), 12345])
    assert geometric_draws(numerator, 1, rng).tolist() == [0] and rng._words == [12345]
