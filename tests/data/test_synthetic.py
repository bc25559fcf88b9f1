"""Tests of privdyn.data.synthetic (Assumptions 1 and 3 of arXiv 2505.16329v2).

Monte-Carlo checks use z = 5 standard errors with fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privdyn.data.synthetic import SyntheticDesign, num_samples
from privdyn.schedules import OutsideTheoryWarning
from privdyn.spectra import Spectrum, power_law_target

Z = 5.0


def test_isotropic_design_matches_the_papers_figures():
    design = SyntheticDesign.isotropic(50, label_noise=0.3)
    assert design.dim == 50
    np.testing.assert_allclose(design.theta_star**2, 1 / 50, rtol=1e-15)
    assert design.initial_risk == pytest.approx(0.5, rel=1e-14)  # R(θ_0) = 0.5 (Figures 1, 4, 7)
    assert design.spectrum.trace == 50
    np.testing.assert_array_equal(design.eigenvalues, np.ones(50))


def test_uniform_design_has_trace_d_and_eigenvalues_in_0_2():
    design = SyntheticDesign.uniform(40, label_noise=0.3)
    assert design.spectrum.trace == pytest.approx(40, rel=1e-14)
    assert 0 < design.eigenvalues.min() and design.eigenvalues.max() < 2
    assert design.initial_risk == pytest.approx(0.5 * np.mean(design.eigenvalues), rel=1e-14)


def test_power_law_design_recovers_its_projections_and_norm():
    design = SyntheticDesign.power_law(200, power_law_exponent=0.25, target_exponent=0.5, label_noise=0.3)
    expected = power_law_target(design.spectrum, target_exponent=0.5)
    np.testing.assert_allclose(design.squared_projections, expected, rtol=1e-12)
    assert float(design.theta_star @ design.theta_star) == pytest.approx(1.0, rel=1e-12)
    assert design.spectrum.trace == pytest.approx(200, rel=1e-12)


def test_power_law_rejects_a_target_exponent_outside_assumption_3():
    with pytest.raises(ValueError, match="target_exponent"):
        SyntheticDesign.power_law(20, power_law_exponent=0.5, target_exponent=0.5, label_noise=0.3)


def test_signs_are_random_with_a_generator_and_positive_without():
    spectrum = Spectrum.uniform(30)
    weights = np.full(spectrum.num_groups, 1 / spectrum.num_groups)
    positive = SyntheticDesign.from_projections(spectrum, weights, label_noise=0.3)
    signed = SyntheticDesign.from_projections(spectrum, weights, label_noise=0.3, rng=np.random.default_rng(1))
    assert np.all(positive.theta_star > 0)
    np.testing.assert_array_equal(np.abs(signed.theta_star), positive.theta_star)
    assert np.any(signed.theta_star < 0) and np.any(signed.theta_star > 0)
    assert signed.initial_risk == pytest.approx(positive.initial_risk, rel=1e-15)


def test_projection_is_spread_evenly_within_a_group():
    spectrum = Spectrum.from_eigenvalues([1.0, 2.0, 1.0, 2.0, 2.0])
    design = SyntheticDesign.from_projections(spectrum, [0.2, 0.6], label_noise=0.1)
    np.testing.assert_allclose(design.theta_star**2, [0.1, 0.2, 0.1, 0.2, 0.2], rtol=1e-15)
    with pytest.raises(ValueError, match="squared_projections"):
        SyntheticDesign.from_projections(spectrum, [0.2, 0.6, 0.1], label_noise=0.1)
    with pytest.raises(ValueError, match="squared_projections"):
        SyntheticDesign.from_projections(spectrum, [0.2, -0.6], label_noise=0.1)


def test_excess_risk_and_population_loss():
    design = SyntheticDesign.uniform(6, label_noise=0.5)
    assert design.excess_risk(design.theta_star) == 0.0
    assert design.excess_risk(np.zeros(6)) == pytest.approx(design.initial_risk, rel=1e-15)
    thetas = np.random.default_rng(0).standard_normal((3, 4, 6))
    risks = design.excess_risk(thetas)
    assert risks.shape == (3, 4)
    expected = 0.5 * np.sum(design.eigenvalues * (thetas[1, 2] - design.theta_star) ** 2)
    assert risks[1, 2] == pytest.approx(expected, rel=1e-14)
    assert design.population_loss(thetas)[1, 2] == pytest.approx(expected + 0.125, rel=1e-14)
    with pytest.raises(ValueError, match="theta"):
        design.excess_risk(np.zeros(5))


def test_samples_have_the_model_moments():
    design = SyntheticDesign.uniform(4, label_noise=0.3, rng=np.random.default_rng(3))
    n = 40_000
    x, y = design.sample(n, np.random.default_rng(7))
    assert x.shape == (n, 4) and y.shape == (n,)
    # E[x_i²] = λ_i: Var(x_i²) = 2λ_i²
    second = np.mean(x**2, axis=0)
    assert np.all(np.abs(second - design.eigenvalues) <= Z * np.sqrt(2 / n) * design.eigenvalues)
    # label noise: y − xᵀθ* ~ N(0, ζ²), Var of its square = 2ζ⁴
    noise_sq = np.mean((y - x @ design.theta_star) ** 2)
    assert abs(noise_sq - 0.09) <= Z * math.sqrt(2 / n) * 0.09
    # the empirical loss of θ estimates P(θ) = R(θ) + ζ²/2
    theta = np.array([0.3, -0.2, 0.1, 0.0])
    losses = 0.5 * (x @ theta - y) ** 2
    assert abs(losses.mean() - design.population_loss(theta)) <= Z * losses.std() / math.sqrt(n)


def test_sampling_layout_does_not_depend_on_batching():
    design = SyntheticDesign.isotropic(5, label_noise=0.3)
    whole = design.sample(12, np.random.default_rng(11))
    rng = np.random.default_rng(11)
    parts = [design.sample(5, rng), design.sample(7, rng)]
    np.testing.assert_array_equal(whole[0], np.concatenate([p[0] for p in parts]))
    np.testing.assert_array_equal(whole[1], np.concatenate([p[1] for p in parts]))
    normals = np.random.default_rng(11).standard_normal((12, 6))
    x, y = design.from_normals(normals)
    np.testing.assert_array_equal(x, whole[0])
    np.testing.assert_allclose(y, whole[1], rtol=1e-15)
    with pytest.raises(ValueError, match="normals"):
        design.from_normals(np.zeros((3, 5)))


def test_label_noise_validation():
    with pytest.raises(ValueError, match="label_noise"):
        SyntheticDesign.isotropic(3, label_noise=-0.1)
    with pytest.warns(OutsideTheoryWarning, match="label_noise"):
        design = SyntheticDesign.isotropic(3, label_noise=0.0)
    x, y = design.sample(4, np.random.default_rng(0))
    np.testing.assert_allclose(y, x @ design.theta_star, rtol=1e-15)


def test_bad_theta_star_or_spectrum():
    spectrum = Spectrum.identity(3)
    with pytest.raises(ValueError, match="theta_star"):
        SyntheticDesign(spectrum, np.zeros(4), 0.3)
    with pytest.raises(ValueError, match="theta_star"):
        SyntheticDesign(spectrum, np.array([0.0, np.nan, 1.0]), 0.3)
    with pytest.raises(TypeError, match="spectrum"):
        SyntheticDesign(np.ones(3), np.zeros(3), 0.3)
    design = SyntheticDesign(spectrum, np.zeros(3), 0.3)
    with pytest.raises(ValueError):
        design.theta_star[0] = 1.0  # frozen arrays


def test_num_samples():
    assert num_samples(100, aspect_ratio=0.01) == 10_000
    assert num_samples(784, aspect_ratio=1.0) == 784
    for bad in (0.0, -1.0, math.inf):
        with pytest.raises(ValueError, match="aspect_ratio"):
            num_samples(10, aspect_ratio=bad)
    with pytest.raises(ValueError, match="aspect_ratio"):
        num_samples(10, aspect_ratio=100.0)  # n would be 0
