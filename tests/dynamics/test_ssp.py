"""The first-order SSP excess risk (privdyn.dynamics.ssp) against Monte Carlo over the release noise.

The data are fixed; only the release noise is redrawn, so the measured mean of (θ̂ − θ_LS)ᵀΣ(θ̂ − θ_LS) is what the
formula states. Tolerance: z = 5 standard errors of the Monte-Carlo mean, plus the expansion's neglected terms,
bounded by 3q²/(1 − q)² of the excess (the second-order deviation A⁻¹EΔ₁ is at most q‖Δ₁‖ in the A-norm, and it
enters the mean through its square and through twice its product with the third-order term; odd moments of the
Gaussian noise vanish).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privdyn.dynamics import RESOLVED_RATIO, ssp_excess_risk, ssp_prediction


def _data(seed: int, n: int = 20_000, p: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scales = np.linspace(0.5, 1.5, p)
    x = rng.standard_normal((n, p)) * scales
    y = x @ rng.standard_normal(p) * 0.3 + 0.5 * rng.standard_normal(n)
    return x, y


def _monte_carlo(x: np.ndarray, y: np.ndarray, s_s: float, s_b: float, ridge: float, draws: int,
                 rng: np.random.Generator) -> np.ndarray:
    n, p = x.shape
    s, b = x.T @ x, x.T @ y
    sigma = s / n
    theta_ls = np.linalg.solve(s, b)
    out = np.empty(draws)
    for k in range(draws):
        upper = np.triu(rng.standard_normal((p, p))) * s_s
        theta = np.linalg.solve(s + upper + np.triu(upper, 1).T + ridge * np.eye(p), b + s_b * rng.standard_normal(p))
        gap = theta - theta_ls
        out[k] = gap @ sigma @ gap
    return out


@pytest.mark.parametrize(("s_s", "s_b", "ridge"), [(60.0, 40.0, 0.0), (100.0, 10.0, 300.0), (20.0, 150.0, 50.0)])
def test_first_order_risk_matches_monte_carlo(s_s: float, s_b: float, ridge: float) -> None:
    x, y = _data(0)
    n, p = x.shape
    risk = ssp_excess_risk(x.T @ x, x.T @ y, rows=n, second_moment_std=s_s, moment_std=s_b, ridge=ridge)
    q = risk.perturbation_ratio
    assert q < 0.1  # the regime the expansion describes
    draws = _monte_carlo(x, y, s_s, s_b, ridge, 4000, np.random.default_rng(1))
    mean, se = float(draws.mean()), float(draws.std(ddof=1) / math.sqrt(draws.size))
    allowance = 3.0 * q**2 / (1.0 - q) ** 2 * risk.excess
    assert abs(mean - risk.excess) <= 5.0 * se + allowance, (mean, risk.excess, se, allowance)


def test_ridge_bias_alone_is_exact() -> None:
    """Without noise θ̂ = θ_λ and the excess over least squares is (λ²/n) θ_λᵀS⁻¹θ_λ exactly."""
    x, y = _data(2, n=500, p=4)
    n = x.shape[0]
    s, b = x.T @ x, x.T @ y
    ridge = 40.0
    theta = np.linalg.solve(s + ridge * np.eye(4), b)
    gap = theta - np.linalg.solve(s, b)
    risk = ssp_excess_risk(s, b, rows=n, second_moment_std=0.0, moment_std=0.0, ridge=ridge)
    assert risk.noise == 0.0
    assert risk.excess == pytest.approx(float(gap @ (s / n) @ gap), rel=1e-9)
    np.testing.assert_allclose(risk.coefficients, theta, rtol=1e-10)


def test_prediction_labels_unresolved_releases_and_states_what_it_omits() -> None:
    x, y = _data(3, n=2_000, p=6)
    n = x.shape[0]
    resolved = ssp_prediction(x.T @ x, x.T @ y, rows=n, second_moment_std=5.0, moment_std=5.0, ridge=0.0,
                              rng=np.random.default_rng(0), residual_variance=0.25)
    assert resolved["label"] == "model" and resolved["perturbation_ratio"] <= RESOLVED_RATIO
    assert resolved["interval"][0] <= resolved["excess_mse"] <= resolved["interval"][1]
    assert resolved["excess_mse"] > 0.25 * 6 / (n - 7)  # least squares' own excess is included
    assert resolved["test_mse"] == pytest.approx(resolved["excess_mse"] + 0.25)
    noisy = ssp_prediction(x.T @ x, x.T @ y, rows=n, second_moment_std=400.0, moment_std=5.0, ridge=0.0,
                           rng=np.random.default_rng(0))
    assert noisy["label"] == "heuristic" and noisy["test_mse"] is None
    assert noisy["reasons"][0].startswith("first-order perturbation")
    assert any("excess over least squares" in r for r in noisy["reasons"])


def test_bad_input_names_the_parameter() -> None:
    s, b = np.eye(3), np.ones(3)
    with pytest.raises(ValueError, match="rows"):
        ssp_excess_risk(s, b, rows=0, second_moment_std=1.0, moment_std=1.0, ridge=0.0)
    with pytest.raises(ValueError, match="ridge"):
        ssp_excess_risk(s, b, rows=10, second_moment_std=1.0, moment_std=1.0, ridge=-1.0)
    with pytest.raises(ValueError, match="moment_std"):
        ssp_excess_risk(s, b, rows=10, second_moment_std=1.0, moment_std=float("nan"), ridge=0.0)
    with pytest.raises(ValueError, match="second_moment"):
        ssp_excess_risk(np.ones((3, 2)), b, rows=10, second_moment_std=1.0, moment_std=1.0, ridge=0.0)
    with pytest.raises(ValueError, match="positive eigenvalue"):
        ssp_excess_risk(-np.eye(3), b, rows=10, second_moment_std=0.0, moment_std=1.0, ridge=0.0)


def test_a_release_with_no_positive_eigenvalue_is_unresolved_not_an_error() -> None:
    """Noise can make a small release indefinite (AdaSSP on a few rows): every eigenvalue is then raised to the
    noise level and the prediction says nothing is resolved (q = 1)."""
    risk = ssp_excess_risk(-np.eye(3), np.ones(3), rows=10, second_moment_std=1.0, moment_std=1.0, ridge=0.0)
    assert risk.perturbation_ratio == pytest.approx(1.0) and math.isfinite(risk.excess)
    prediction = ssp_prediction(-np.eye(3), np.ones(3), rows=10, second_moment_std=1.0, moment_std=1.0, ridge=0.0,
                                rng=np.random.default_rng(0))
    assert prediction["label"] == "heuristic"
