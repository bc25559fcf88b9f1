"""The law checks: exact tests of whitened samples, Kolmogorov-Smirnov, replays; thresholds and power."""

import math

import numpy as np
import pytest
from scipy import stats

from privdyn.audit.law import CdfSample, Replay, TwoSample, WhitenedSample, check_law, law_threshold


def test_the_stated_law_passes_and_a_scaled_noise_fails():
    gen = np.random.default_rng(0)
    honest = check_law([WhitenedSample("x", gen.standard_normal((4000, 4)))])
    assert honest.passed and honest.max_z < honest.threshold
    for factor in (0.6, 0.9):
        planted = check_law([WhitenedSample("x", factor * gen.standard_normal((4000, 4)))])
        assert not planted.passed and "pooled variance" in planted.worst
        assert planted.runs_needed() < 4000


def test_a_correlation_or_a_shift_fails():
    gen = np.random.default_rng(1)
    z = gen.standard_normal((4000, 2))
    mixed = np.column_stack([z[:, 0], 0.3 * z[:, 0] + math.sqrt(1 - 0.09) * z[:, 1]])
    assert not check_law([WhitenedSample("x", mixed)]).passed
    assert not check_law([WhitenedSample("x", z + 0.2)]).passed


def test_threshold_is_five_or_bonferroni():
    assert law_threshold(1) == 5.0
    assert law_threshold(1000) == pytest.approx(stats.norm.isf(1e-6 / 2000))


def test_honest_samples_pass_at_many_seeds():
    """The family-wise level is 1e-6: twenty seeds of a 20-dimensional sample all pass."""
    for seed in range(20):
        sample = np.random.default_rng(seed).standard_normal((400, 20))
        assert check_law([WhitenedSample("x", sample)]).passed, seed


def test_cdf_two_sample_and_replay():
    gen = np.random.default_rng(2)
    values = gen.standard_normal(3000)
    assert check_law([CdfSample("x", values, stats.norm.cdf)]).passed
    assert not check_law([CdfSample("x", 0.6 * values, stats.norm.cdf)]).passed
    assert check_law([TwoSample("x", values, gen.standard_normal(30000))]).passed
    assert not check_law([TwoSample("x", 0.6 * values, gen.standard_normal(30000))]).passed
    assert check_law([Replay("x", values[:, None], values[:, None].copy())]).passed
    failed = check_law([Replay("x", values[:, None], 0.9 * values[:, None])])
    assert not failed.passed and failed.max_z == math.inf


def test_bad_input():
    with pytest.raises(ValueError, match="20 runs"):
        check_law([WhitenedSample("x", np.zeros((10, 1)))])
    with pytest.raises(ValueError, match="at least one"):
        check_law([])
