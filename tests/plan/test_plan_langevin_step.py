"""The langevin planner at a given step size: Corollary 1 at the budget, the distance-recursion bound, refusals."""

import math

import numpy as np
import pytest

import privdyn.plan
from privdyn.privacy import langevin as accountant

GIVEN = dict(n=5_000, d=10, strong_convexity=0.01, smoothness=0.26, lipschitz=1.1, sensitivity=2.0, epsilon=1.0,
             delta=1e-5, step_size=0.99 / 0.26, max_steps=3_000)


def _bound(k: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """(β/2)[(1 − ηλ)^{2K} L²/λ² + 2dησ²/(1 − (1 − ηλ)²)], written out independently of the planner."""
    lam, beta, lip, d, eta = 0.01, 0.26, 1.1, 10, 0.99 / 0.26
    q2 = (1.0 - eta * lam) ** 2
    return 0.5 * beta * (q2**k * lip**2 / lam**2 + 2.0 * d * eta * sigma**2 / (1.0 - q2))


def test_given_step_noise_is_corollary_1_and_k_minimizes_the_bound() -> None:
    plan = privdyn.plan.langevin(**GIVEN)
    h = plan.hyperparameters
    assert h["step_size"] == GIVEN["step_size"] and 1 <= h["num_steps"] <= GIVEN["max_steps"]
    zcdp = accountant.dynamics_zcdp(num_steps=h["num_steps"], step_size=h["step_size"], noise_scale=h["noise_scale"],
                                    strong_convexity=0.01, smoothness=0.26, sensitivity=2.0, n=5_000).value
    assert math.isclose(zcdp, plan.privacy.zcdp, rel_tol=1e-9) and plan.privacy.epsilon <= 1.0
    ks = np.arange(1, GIVEN["max_steps"] + 1, dtype=float)
    sigmas = np.sqrt(4.0 * -np.expm1(-0.01 * h["step_size"] * ks / 2) / (0.01 * 5_000**2 * plan.privacy.zcdp))
    bounds = _bound(ks, sigmas)
    assert h["num_steps"] == int(ks[np.argmin(bounds)])
    assert math.isclose(plan.predicted_risk, float(bounds.min()), rel_tol=1e-9)


def test_given_step_bound_holds_in_simulation() -> None:
    plan = privdyn.plan.langevin(n=200, d=3, strong_convexity=0.5, smoothness=0.5, lipschitz=1.0, epsilon=1.0,
                                 delta=1e-5, step_size=1.5, max_steps=200)
    check = plan.simulate(200, seed=2)
    assert check.within is True


@pytest.mark.parametrize("step_size", [0.0, 1.0 / 0.26, 5.0, -1.0])
def test_given_step_outside_corollary_1_is_refused(step_size: float) -> None:
    with pytest.raises(ValueError, match="step_size must be in"):
        privdyn.plan.langevin(**dict(GIVEN, step_size=step_size))


def test_given_step_with_shifted_interpolation_meets_the_budget_exactly_and_uses_less_noise() -> None:
    """σ is calibrated at K so that shifted interpolation's μ is the largest Gaussian shift within (ε, δ); its ε by
    the Gaussian curve is then the budget, and the noise is below Corollary 1's at every K."""
    from privdyn.privacy.correlated_allocation import gaussian_epsilon, gaussian_mu

    plan = privdyn.plan.langevin(**GIVEN, accountant_name="shifted_interpolation")
    h = plan.hyperparameters
    mu = accountant.shifted_interpolation_gdp(num_steps=h["num_steps"], step_size=h["step_size"],
                                              noise_scale=h["noise_scale"], strong_convexity=0.01, smoothness=0.26,
                                              sensitivity=2.0, n=5_000).value
    assert math.isclose(mu, gaussian_mu(1.0, 1e-5), rel_tol=1e-9)
    assert math.isclose(plan.privacy.epsilon, gaussian_epsilon(mu, 1e-5), rel_tol=1e-9) and plan.privacy.epsilon <= 1.0
    assert plan.privacy.extra["gdp_mu"] == pytest.approx(mu, rel=1e-9)
    ks = np.arange(1, GIVEN["max_steps"] + 1, dtype=float)
    unit = np.asarray(accountant.shifted_interpolation_gdp(num_steps=ks, step_size=h["step_size"], noise_scale=1.0,
                                                           strong_convexity=0.01, smoothness=0.26, sensitivity=2.0,
                                                           n=5_000).value)
    bounds = _bound(ks, unit / gaussian_mu(1.0, 1e-5))
    assert h["num_steps"] == int(ks[np.argmin(bounds)])
    corollary_1 = privdyn.plan.langevin(**GIVEN)
    assert plan.predicted_risk < corollary_1.predicted_risk


@pytest.mark.parametrize(("extra", "match"), [
    ({"accountant_name": "rdp"}, "accountant_name must be one of"),
    ({"accountant_name": "shifted_interpolation", "step_size": None}, "needs a given step_size"),
])
def test_shifted_interpolation_plan_refusals(extra: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        privdyn.plan.langevin(**{**GIVEN, **extra})
