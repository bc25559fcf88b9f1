"""Regression tests for the inputs issue 18 lists: calls that hung, leaked an arithmetic exception or returned a silent
``inf``, and text accepted as a number.

Each must now raise a ``ValueError``/``TypeError`` naming the parameter (a size or iteration argument beyond its
documented upper limit, or an input whose answer exceeds the float range), and never emit a RuntimeWarning.
Cases in modules under active work elsewhere are pinned as strict xfails with the reason.
"""

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from privdyn import models, privacy
from privdyn.dynamics import dpgd, hsgd
from privdyn.hsgd_problem import HSGDProblem
from privdyn.schedules import Constant, Harmonic, Polynomial
from privdyn.spectra import Spectrum

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _runtime_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def _problem() -> HSGDProblem:
    spectrum = Spectrum.from_eigenvalues(np.array([1.0, 0.5]))
    return HSGDProblem.from_coordinates(spectrum, target=np.ones(2), x0=np.zeros(2), learning_rate=Constant(0.5),
                                        noise_std=0.1, ridge=0.0)


# --- calls that hung ---------------------------------------------------------------------------------------------


def test_volterra_refinements_have_an_upper_limit():
    with pytest.raises(ValueError, match=r"refinements must be <= 16.*refinements=100"):
        hsgd.volterra_risk(_problem(), [1.0], max_step=0.1, refinements=100)


def test_volterra_grid_has_an_upper_limit():
    with pytest.raises(ValueError, match=r"max_step=1e-09.*quadrature steps; at most 1048576"):
        hsgd.volterra_risk(_problem(), [1.0], max_step=1e-9, refinements=0)
    with pytest.raises(ValueError, match=r"max_step=0.0001.*at most 4096"):
        hsgd.volterra_dense_reference(_problem(), [1.0], max_step=1e-4)


def test_spline_order_has_an_upper_limit():
    with pytest.raises(ValueError, match=r"spline_order must be <= 20.*spline_order=300"):
        models.bspline_bounds(grid_size=5, spline_order=300)
    with pytest.raises(ValueError, match="spline_order"):
        models.BSplineBasis(grid_size=5, spline_order=300)
    assert all(np.isfinite(models.bspline_bounds(grid_size=5, spline_order=models.bspline.MAX_SPLINE_ORDER)))


def test_bench_repeats_has_an_upper_limit():
    """``privdyn bench NAME --repeats 99999999999999999999`` ran for ever."""
    completed = subprocess.run([sys.executable, "-m", "privdyn.cli", "bench", "langevin", "--repeats",
                                "99999999999999999999", "--dir", str(REPO / "benchmarks")], capture_output=True,
                               text=True, timeout=10)
    assert completed.returncode == 2 and "--repeats" in completed.stderr


# --- arithmetic exceptions that leaked ---------------------------------------------------------------------------


def test_theorem_d9_tiny_epsilon_names_epsilon():
    with pytest.raises(ValueError, match=r"epsilon.*float range.*epsilon=1e-320"):
        privacy.noise_multiplier_theorem_d9(n=100, batch_size=10, num_steps=10, epsilon=1e-320, delta=1e-5)
    # the rewritten formula still equals the paper's kappa^2 = 16 q^2 T / eps + 32 q^2 T ln(1/delta) / eps^2
    q2t, eps, dlt = (10 / 100) ** 2 * 10, 0.5, 1e-5
    expected = np.sqrt(16 * q2t / eps + 32 * q2t * np.log(1 / dlt) / eps**2)
    got = privacy.noise_multiplier_theorem_d9(n=100, batch_size=10, num_steps=10, epsilon=eps, delta=dlt).value
    assert got == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("rho", [1e-320, 1e308])
def test_solve_risk_ode_extreme_rho(rho):
    kwargs = dict(spectrum=Spectrum.identity(4), target_projections=[1.0], aspect_ratio=0.5,
                  learning_rate=Constant(0.5), clip=1.0, label_noise=0.5)
    if rho < 1:
        with pytest.raises(ValueError, match=r"rho.*float range.*rho=1e-320"):
            dpgd.solve_risk_ode(rho=rho, **kwargs)
    else:  # no private noise left: the risk is the non-private one, finite
        risk = dpgd.solve_risk_ode(rho=rho, **kwargs).final_private_risk
        assert np.isfinite(risk)
        assert risk == pytest.approx(dpgd.solve_risk_ode(rho=1e30, **kwargs).final_private_risk, rel=1e-12)


@pytest.mark.parametrize("args", [(1e308, 1.0), (1.0, 1e308), ([], 1.0), (1.0, []), (np.nan, 1.0)])
def test_polynomial_rejects_out_of_range_parameters(args):
    with pytest.raises((ValueError, TypeError), match="initial_learning_rate|schedule_exponent"):
        Polynomial(*args)


def test_polynomial_needs_both_parameters():
    with pytest.raises(TypeError, match="schedule_exponent"):
        Polynomial(1e308)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="schedule_exponent"):
        Polynomial([])  # type: ignore[call-arg]


def test_schedules_at_the_edge_of_their_range_stay_finite():
    low, high = 1e-30, 1e30
    for schedule in (Constant(high), Polynomial(high, 2.0), Harmonic(high, low), Harmonic(low, high)):
        t = np.array([0.0, 0.5, 1.0])
        for values in (schedule.value(t), schedule.squared_derivative(t), schedule.integral(t)):
            assert np.all(np.isfinite(values))
    with pytest.raises(ValueError, match="harmonic_offset"):
        Harmonic(1.0, 1e-320)


# --- silent infinities -------------------------------------------------------------------------------------------


def test_gaussian_zcdp_overflow_names_the_inputs():
    with pytest.raises(ValueError, match=r"noise_std.*float range.*noise_std=1e-320"):
        privacy.gaussian_zcdp(sensitivity=1.0, noise_std=1e-320)


@pytest.mark.parametrize("method", ["bun_steinke", "optimal"])
def test_zcdp_to_epsilon_overflow_names_zcdp(method):
    if method == "optimal":  # the optimal conversion of 1e308 is just below the float maximum
        assert np.isfinite(privacy.zcdp_to_epsilon(1e308, delta=1e-5, method=method))
        return
    with pytest.raises(ValueError, match=r"zcdp.*float range.*zcdp=1e\+308"):
        privacy.zcdp_to_epsilon(1e308, delta=1e-5, method=method)


def test_dpgd_noise_calibration_tiny_rho_names_rho():
    with pytest.raises(ValueError, match=r"rho.*float range.*rho=1e-320"):
        privacy.dpgd_noise_calibration([1.0, 0.5], rho=1e-320)
    with pytest.raises(ValueError, match=r"rho.*float range"):
        privacy.rho_to_epsilon(1e300, delta=1e-5)


def test_composition_rdp_huge_num_steps():
    """``composition_rdp(num_steps=1e308)`` returned ``inf`` with a RuntimeWarning; the answer is finite."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"num_steps.*float range.*num_steps=1e\+308"):
            privacy.langevin.composition_rdp(2.0, num_steps=1e308, step_size=1.0, noise_scale=0.1, sensitivity=1.0,
                                             n=1)
    assert np.isfinite(privacy.langevin.composition_rdp(2.0, num_steps=1e6, step_size=1.0, noise_scale=0.1,
                                                        sensitivity=1.0, n=1).value)


# --- text as numbers ---------------------------------------------------------------------------------------------


def test_text_is_not_a_number():
    with pytest.raises(TypeError, match=r"rho must be a real number, not text; got rho='1.0'"):
        privacy.rho_to_epsilon(rho="1.0", delta=1e-5)
