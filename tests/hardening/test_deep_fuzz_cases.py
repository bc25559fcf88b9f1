"""Regression tests for what the deep fuzz run (``pytest -m fuzz tests/fuzz``) found: RuntimeWarnings at extreme
values, and result records that accepted NaN or an undocumented ``inf``.

An extreme input either gives the mathematically right finite answer, or ``inf`` where the docstring documents it,
or a ``ValueError`` naming the parameter; never a RuntimeWarning.
"""

import math
import warnings

import numpy as np
import pytest

from privdyn import algorithms, dynamics, plan
from privdyn.algorithms.dpsgd import DPSGDLog, DPSGDResult
from privdyn.data.synthetic import num_samples
from privdyn.dynamics.dpgd.clipping import clipping_factors
from privdyn.dynamics.scaling import minimax_lower_bound, theorem4_case
from privdyn.privacy.conversions import zcdp_to_rdp
from privdyn.privacy.langevin.dynamics import crossover_num_steps, steps_to_fraction


@pytest.fixture(autouse=True)
def _runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


# --- RuntimeWarnings at extreme values -----------------------------------------------------------------------------

def test_steps_to_fraction_when_the_rate_underflows():
    # 2 ln(1/(1 - f)) / (mu eta) with f = 1e-300: 2e-300 / 1e-600 = 2e300, finite although mu*eta underflows to 0
    assert steps_to_fraction(1e-300, step_size=1e-300, strong_convexity=1e-300) == pytest.approx(2e300, rel=1e-12)
    # a subnormal product: divided one factor at a time, full precision (2 * 1e-300 / 1e-310 = 2e10)
    assert steps_to_fraction(1e-300, step_size=1e-300, strong_convexity=1e-10) == pytest.approx(2e10, rel=1e-12)
    with pytest.raises(ValueError, match="strong_convexity.*step_size"):
        crossover_num_steps(step_size=1e-300, strong_convexity=1e-300)
    with pytest.raises(ValueError, match="strong_convexity.*step_size"):
        steps_to_fraction(0.5, step_size=1e-300, strong_convexity=1e-300)  # 1.4e600 steps: beyond the float range
    assert steps_to_fraction(0.95, step_size=0.02, strong_convexity=1.0) == pytest.approx(299.573, rel=1e-5)


def test_zcdp_to_rdp_beyond_the_float_range_is_the_documented_inf():
    assert zcdp_to_rdp(2.0, 1e308) == math.inf
    assert "inf" in (zcdp_to_rdp.__doc__ or "")
    assert zcdp_to_rdp(0.5, 3.0) == 1.5


def test_clipping_factors_at_a_huge_clip():
    mu, nu = clipping_factors(4.15e228)  # c'^2 overflows; its product with erfc(c'/sqrt 2) = 0 is 0
    assert (mu, nu) == (1.0, 1.0)
    mu, nu = clipping_factors(np.array([1.0, 39.0, 1e200, math.inf]))
    assert np.all(np.isfinite(nu)) and nu[1:].tolist() == [1.0, 1.0, 1.0]


def test_minimax_lower_bound_at_a_large_rho():
    # e^{rho^2} - 1 overflows for rho > 26.6: the privacy term is 0 and the Bayes term zeta^2 d / (4 lambda_max n) stays
    value = minimax_lower_bound(d=10, n=100, rho=30.0, label_noise=1.0, lambda_min=0.1, lambda_max=1.0)
    assert value == pytest.approx(10 / (4 * 100))


@pytest.mark.parametrize("d", [5, np.int64(5), 10**400], ids=["int", "int64", "beyond-float"])
def test_num_samples_beyond_the_float_range_names_aspect_ratio(d):
    with pytest.raises(ValueError, match="aspect_ratio"):
        num_samples(d, aspect_ratio=1e-320)


# --- result records ------------------------------------------------------------------------------------------------

def _log(**changes):
    fields = dict(step=np.array([0, 1]), train_loss=np.array([1.0, 0.5]), batch_loss=np.array([math.nan, 0.7]),
                  clip_fraction=np.array([math.nan, 0.5]), projection_fraction=np.array([math.nan, 0.0]),
                  distance=np.array([0.0, 0.1]))
    return DPSGDLog(**{**fields, **changes})


def test_dpsgd_log_holds_nan_only_where_documented():
    _log()
    _log(train_loss=np.array([math.nan, math.nan]))  # not evaluated
    with pytest.raises(ValueError, match="clip_fraction"):
        _log(clip_fraction=np.array([math.nan, math.nan]))  # after step 0 a fraction is always computed
    with pytest.raises(ValueError, match="projection_fraction"):
        _log(projection_fraction=np.array([math.nan, 2.0]))
    with pytest.raises(ValueError, match="distance"):
        _log(distance=np.array([0.0, math.nan]))
    with pytest.raises(ValueError, match="batch_loss"):
        _log(batch_loss=np.array([1.0]))


def test_dpsgd_result_refuses_nan():
    good = dict(params=np.zeros(2), initial_params=np.zeros(2), log=_log(), num_steps=1, num_clipped=1,
                num_examples=2, num_projections=0)
    DPSGDResult(**good)
    DPSGDResult(**{**good, "params": np.array([math.inf, 0.0])})  # a diverged run (documented)
    with pytest.raises(ValueError, match="params"):
        DPSGDResult(**{**good, "params": np.array([math.nan, 0.0])})
    with pytest.raises(ValueError, match="initial_params"):
        DPSGDResult(**{**good, "initial_params": np.array([math.inf, 0.0])})
    with pytest.raises(TypeError, match="log"):
        DPSGDResult(**{**good, "log": None})


def test_theorem4_case_validates_and_keeps_its_values():
    case = theorem4_case(power_law_exponent=0.5, target_exponent=0.2, schedule_exponent=0.5, privacy_exponent=0.1)
    assert case.equation in ("6.4", "6.5", "6.6") and math.isfinite(case.critical_privacy_exponent)
    with pytest.raises(ValueError, match="critical_privacy_exponent"):
        dynamics.Theorem4Case(equation="6.4", ill_conditioned=False, privacy_free=True, log_corrected=False,
                              critical_privacy_exponent=math.inf)
    with pytest.raises(ValueError, match="equation"):
        dynamics.Theorem4Case(equation="6.7", ill_conditioned=False, privacy_free=True, log_corrected=False,
                              critical_privacy_exponent=0.5)


def test_verification_needs_two_finite_runs():
    check = plan.Verification.from_runs([1.0, 1.2, 0.9], predicted=1.0, quantity="risk", seed=0, note="")
    assert check.within is True and math.isfinite(check.standard_error)
    with pytest.raises(ValueError, match="runs"):
        plan.Verification.from_runs([1.0], predicted=1.0, quantity="risk", seed=0, note="")
    with pytest.raises(ValueError, match="predicted"):
        plan.Verification.from_runs([1.0, 2.0], predicted=math.inf, quantity="risk", seed=0, note="")


def test_simulation_records_refuse_nan():
    with pytest.raises(ValueError, match="risk"):
        algorithms.NoisySGDSimulation(
            method="simulation", dim=1, num_steps=1, time_step=1.0, num_runs=1, first_run=0, seed=0, unit_key="",
            steps=np.array([0, 1]), times=np.array([0.0, 1.0]), population_risk=np.array([[1.0, math.nan]]),
            regularized_risk=np.array([[1.0, 1.0]]), iterate_steps=np.array([], dtype=int))


# --- found by the deep fuzz run after the fixes above ---------------------------------------------------------------

def test_rates_at_tiny_aspect_ratio_and_rho():
    # gamma**2 and rho**2 both underflow to 0 (0/0 = NaN before); (gamma/rho)**2 = 1 is exact
    gamma = 3.36707469e-307
    ll = math.log(math.log(1.0 / gamma))
    assert dynamics.loglog_rate(aspect_ratio=gamma, rho=gamma) == pytest.approx(gamma * ll + ll**2, rel=1e-12)
    assert dynamics.polynomial_rate(aspect_ratio=gamma, rho=gamma, schedule_exponent=0.0) == pytest.approx(
        gamma * math.log(1.0 / gamma) + math.log(1.0 / gamma) ** 2, rel=1e-12)
    with pytest.raises(ValueError, match="rho"):
        dynamics.loglog_rate(aspect_ratio=0.3, rho=1e-320)  # (gamma/rho)^2 beyond the float range


def test_logistic_loss_derivative_refuses_nan():
    from privdyn.models import logistic_loss_derivative

    with pytest.raises(ValueError, match="margin"):
        logistic_loss_derivative(np.array([0.0, math.nan]))
    assert logistic_loss_derivative(np.array([-math.inf, 0.0, math.inf])).tolist() == [-1.0, -0.5, -0.0]


def test_langevin_bounds_refuse_a_sensitivity_whose_square_overflows():
    """Found by the deep fuzz: sensitivity 4.6e299 overflowed sensitivity**2 with a RuntimeWarning."""
    from privdyn.privacy.langevin import dynamics_rdp, dynamics_rdp_asymptote

    setting = dict(noise_scale=16.0, strong_convexity=16.0, sensitivity=4.6e299, n=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="sensitivity"):
            dynamics_rdp(37.0, num_steps=10, step_size=0.01, smoothness=16.0, **setting)
        with pytest.raises(ValueError, match="sensitivity"):
            dynamics_rdp_asymptote(37.0, **setting)
