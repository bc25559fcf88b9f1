"""Tests of privdyn.privacy.iteration (Proposition 4.1 of arXiv 2505.16329v2: privacy amplification by iteration)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privdyn.privacy.conversions import zcdp_to_epsilon
from privdyn.privacy.iteration import (
    epsilon_to_rho,
    noise_calibration,
    privacy_level,
    rho_to_epsilon,
    rho_to_zcdp,
    validate_step_sizes,
)
from privdyn.privacy.labels import Guarantee, NeighboringRelation
from privdyn.schedules import Constant, Harmonic, Polynomial

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=200)

# non-increasing schedules with ties (values from a small set) and trailing zeros (eta_n = 0)
_values = st.one_of(st.floats(1e-6, 10.0, allow_nan=False), st.sampled_from([0.0, 0.5, 1.0, 2.0]))
schedules = st.lists(_values, min_size=1, max_size=60).map(lambda v: np.array(sorted(v, reverse=True)))
rhos = st.floats(1e-3, 1e3, allow_nan=False)


def _suffix_ratios(eta: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """η_k / sqrt(Σ_{j≥k} σ_j²) for the k with η_k > 0, written directly from the proposition."""
    return np.array([eta[k] / math.sqrt(float(np.sum(sigma[k:] ** 2))) for k in range(eta.size) if eta[k] > 0])


# --- calibration round trip ---------------------------------------------------------------------------------------


@PROFILE
@given(eta=schedules, rho=rhos)
def test_calibrated_noise_gives_the_target_privacy_level(eta, rho):
    sigma = noise_calibration(eta, rho=rho)
    assert sigma.shape == eta.shape
    assert np.all(sigma >= 0)
    level = privacy_level(eta, sigma).value
    if np.any(eta > 0):
        assert level == pytest.approx(rho, rel=1e-10)
        # every ratio of the proposition equals rho (the calibration is noise-optimal)
        np.testing.assert_allclose(_suffix_ratios(eta, sigma), rho, rtol=1e-10)
    else:
        assert level == 0.0


@PROFILE
@given(eta=schedules, rho=rhos, exponent=st.integers(-20, 20))
def test_calibration_is_linear_in_the_schedule_and_inverse_in_rho(eta, rho, exponent):
    # a power-of-two factor scales exactly, so the differences η_k − η_{k+1} are the same up to the factor
    factor = 2.0**exponent
    base = noise_calibration(eta, rho=rho)
    np.testing.assert_array_equal(noise_calibration(factor * eta, rho=rho), factor * base)
    np.testing.assert_allclose(noise_calibration(eta, rho=rho * factor), base / factor, rtol=1e-15, atol=0)


def test_tied_steps_get_no_noise_and_zero_final_step_gets_none():
    eta = np.array([3.0, 2.0, 2.0, 1.0, 0.0, 0.0])
    sigma = noise_calibration(eta, rho=2.0)
    np.testing.assert_allclose(sigma, [math.sqrt(5.0) / 2, 0.0, math.sqrt(3.0) / 2, 0.5, 0.0, 0.0], rtol=1e-15)


# --- closed forms -------------------------------------------------------------------------------------------------


def test_output_perturbation_has_only_final_noise():
    n, eta0, rho = 1000, 3.0, 0.7
    eta = Constant(eta0).step_sizes(n)
    sigma = noise_calibration(eta, rho=rho)
    assert np.all(sigma[:-1] == 0)
    assert sigma[-1] == pytest.approx(eta0 / (n * rho), rel=1e-15)  # σ_n = η̃(0)/(nρ), spec §2.3
    assert privacy_level(eta, sigma).value == pytest.approx(rho, rel=1e-15)


def test_square_root_schedule_has_constant_noise():
    # α = ½: η_k² − η_{k+1}² = η̃(0)²/n³, so σ_k = η̃(0)/(n^{3/2}ρ) for k < n and σ_n = η_n/ρ = 0
    n, eta0, rho = 800, 5.0, 0.1
    sigma = noise_calibration(Polynomial(eta0, 0.5).step_sizes(n), rho=rho)
    np.testing.assert_allclose(sigma[:-1], eta0 / (n**1.5 * rho), rtol=1e-9)
    assert sigma[-1] == 0.0


def test_harmonic_noise_approaches_the_continuous_profile():
    # σ_k² ≈ σ̃²(k/n)/n³ with ρ²σ̃²(t) = 2β²/(t + τ)³ (spec §2.2–2.3), relative error O(1/n)
    n, beta, tau, rho = 4000, 2.0, 0.5, 0.3
    eta = Harmonic(beta, tau).step_sizes(n)
    sigma = noise_calibration(eta, rho=rho)
    t = np.arange(1, n) / n
    continuous = np.sqrt(2 * beta**2 / (t + tau) ** 3 / rho**2 / n**3)
    np.testing.assert_allclose(sigma[:-1], continuous, rtol=5.0 / (n * tau))
    assert sigma[-1] == pytest.approx(beta / (1 + tau) / n / rho, rel=1e-14)


# --- privacy_level ------------------------------------------------------------------------------------------------


def test_privacy_level_of_a_hand_example():
    # ratios 2/sqrt(2) and 1/1: the max is sqrt(2)
    loss = privacy_level([2.0, 1.0], [1.0, 1.0])
    assert loss.value == pytest.approx(math.sqrt(2.0), rel=1e-15)
    assert loss.guarantee is Guarantee.BOUND and loss.guarantee.is_guarantee
    assert loss.quantity == "rho"
    assert loss.neighboring is NeighboringRelation.REPLACE_ONE
    assert "2505.16329" in loss.source and "final iterate" in loss.source


def test_privacy_level_is_infinite_without_remaining_noise_and_zero_without_steps():
    assert privacy_level([1.0, 1.0], [1.0, 0.0]).value == math.inf
    assert privacy_level([0.0, 0.0], [0.0, 0.0]).value == 0.0
    # a step with η_k = 0 uses no sample: no noise is needed after it
    assert privacy_level([1.0, 0.0], [1.0, 0.0]).value == pytest.approx(1.0)


def test_privacy_level_accepts_any_order_and_more_noise_means_less_loss():
    eta = np.array([0.5, 1.0, 0.2])
    sigma = np.array([0.3, 0.4, 0.5])
    expected = max(0.5 / math.sqrt(0.5), 1.0 / math.sqrt(0.41), 0.2 / 0.5)
    assert privacy_level(eta, sigma).value == pytest.approx(expected, rel=1e-14)
    assert privacy_level(eta, 2 * sigma).value == pytest.approx(expected / 2, rel=1e-14)


# --- validation ---------------------------------------------------------------------------------------------------


def test_increasing_schedule_is_rejected_with_its_first_increase():
    with pytest.raises(ValueError, match=r"step_sizes.*non-increasing.*index 2"):
        noise_calibration([3.0, 2.0, 2.5, 4.0], rho=1.0)
    with pytest.raises(ValueError, match=r"step_sizes\[1\]"):
        validate_step_sizes([1.0, 1.0 + 1e-15])


@pytest.mark.parametrize("rho", [0.0, -1.0, math.nan])
def test_non_positive_rho_is_rejected(rho):
    with pytest.raises(ValueError, match="rho"):
        noise_calibration([1.0], rho=rho)


def test_infinite_rho_means_no_noise():
    np.testing.assert_array_equal(noise_calibration([2.0, 1.0], rho=math.inf), [0.0, 0.0])


@pytest.mark.parametrize("steps", [[1.0, -0.5], [math.nan], [math.inf, 1.0], [], [[1.0]]])
def test_bad_step_sizes_are_rejected(steps):
    with pytest.raises(ValueError, match="step_sizes"):
        noise_calibration(steps, rho=1.0)


def test_privacy_level_rejects_mismatched_or_negative_inputs():
    with pytest.raises(ValueError, match="noise_multipliers"):
        privacy_level([1.0, 0.5], [1.0])
    with pytest.raises(ValueError, match="noise_multipliers"):
        privacy_level([1.0], [-1.0])
    with pytest.raises(ValueError, match="step_sizes"):
        privacy_level([-1.0], [1.0])


# --- conversions --------------------------------------------------------------------------------------------------


def test_rho_to_zcdp_is_half_the_square():
    assert rho_to_zcdp(1.0) == 0.5
    np.testing.assert_array_equal(rho_to_zcdp(np.array([0.0, 2.0])), [0.0, 2.0])
    with pytest.raises(ValueError, match="rho"):
        rho_to_zcdp(-1.0)


def test_rho_one_at_delta_1e_minus_5_is_epsilon_5_30():
    # spec seed-003 §1.3: ε = ρ²/2 + ρ sqrt(2 ln(1/δ)) ≈ 5.30
    epsilon = rho_to_epsilon(1.0, delta=1e-5)
    assert epsilon == pytest.approx(0.5 + math.sqrt(2 * math.log(1e5)), rel=1e-12)
    assert round(epsilon, 2) == 5.30
    assert rho_to_epsilon(1.0, delta=1e-5, method="optimal") <= epsilon
    assert rho_to_epsilon(1.0, delta=1e-5, method="optimal") == pytest.approx(
        zcdp_to_epsilon(0.5, delta=1e-5, method="optimal"))


@pytest.mark.parametrize("method", ["bun_steinke", "optimal"])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.3, 20.0])
def test_epsilon_to_rho_round_trip_is_on_the_safe_side(method, epsilon):
    rho = epsilon_to_rho(epsilon, delta=1e-5, method=method)
    assert rho_to_epsilon(rho, delta=1e-5, method=method) <= epsilon
    assert rho_to_epsilon(rho, delta=1e-5, method=method) == pytest.approx(epsilon, rel=1e-9)


def test_epsilon_to_rho_closed_form():
    log_inv_delta = math.log(1e5)
    expected = math.sqrt(2 * log_inv_delta + 2 * 3.0) - math.sqrt(2 * log_inv_delta)  # spec §1.3
    assert epsilon_to_rho(3.0, delta=1e-5) == pytest.approx(expected, rel=1e-12)
    values = epsilon_to_rho(np.array([1.0, 3.0]), delta=1e-5)
    assert values.shape == (2,) and values[1] == pytest.approx(expected, rel=1e-12)
