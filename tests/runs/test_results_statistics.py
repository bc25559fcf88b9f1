"""The shared statistics of privdyn.runs.results: the z constant, Bonferroni's z, mean ± SE, slope fits."""

import math

import numpy as np
import pytest
from scipy import stats

from privdyn.runs.results import Z_SCORE, bonferroni_z, loglog_slope, mean_se, weighted_slope


def test_bonferroni_z_never_goes_below_the_single_comparison_z():
    assert Z_SCORE == 5.0 and bonferroni_z(1) == Z_SCORE
    assert bonferroni_z(10**6) == pytest.approx(float(stats.norm.isf(1e-6 / 2e6)), rel=1e-12)
    with pytest.raises(ValueError, match="num_comparisons"):
        bonferroni_z(0)


def test_mean_se_by_hand_and_along_an_axis():
    values = [1.0, 2.0, 4.0, 9.0]
    mean, sd, se = mean_se(values)
    assert mean == 4.0
    assert sd == pytest.approx(math.sqrt(((3.0**2) + 2.0**2 + 0.0 + 5.0**2) / 3.0), rel=1e-15)
    assert se == pytest.approx(sd / 2.0, rel=1e-15)
    runs = np.random.default_rng(0).standard_normal((50, 3))
    per_point = mean_se(runs, axis=0)
    assert per_point.mean.shape == per_point.standard_error.shape == (3,)
    np.testing.assert_array_equal(per_point.standard_error, runs.std(axis=0, ddof=1) / math.sqrt(50))
    np.testing.assert_array_equal(mean_se(runs.T, axis=1).sd, per_point.sd)


def test_slopes_are_exact_on_a_power_law():
    x = np.geomspace(1.0, 1e4, 7)
    assert loglog_slope(x, 3.0 * x**-0.75) == pytest.approx(-0.75, rel=1e-12)
    slope, slope_se, intercept = weighted_slope(np.log(x), np.log(3.0 * x**-0.75), np.full(7, 0.1))
    assert slope == pytest.approx(-0.75, rel=1e-12) and intercept == pytest.approx(math.log(3.0), rel=1e-12)
    assert slope_se > 0
    with pytest.raises(ValueError, match="2 points"):
        loglog_slope([1.0], [2.0])
