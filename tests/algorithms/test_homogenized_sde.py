"""Tests of privdyn.algorithms.homogenized_sde: the homogenized SDE of DP-GD (arXiv 2505.16329, Remark 4.3,
Definition C.1) simulated, against the risk ODE of privdyn.dynamics.dpgd."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from privdyn.algorithms.homogenized_sde import simulate_homogenized_sde
from privdyn.dynamics import dpgd
from privdyn.schedules import Constant, Harmonic, Polynomial
from privdyn.spectra import Spectrum, isotropic_target

# ----------------------------------------------------------------------------------------------------------------
# Homogenized SDE (Remark 4.3) with drift factor 1
# ----------------------------------------------------------------------------------------------------------------

SDE_TIMES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


@pytest.mark.parametrize("learning_rate, clip", [
    (Polynomial(initial_learning_rate=3.0, schedule_exponent=0.5), 1.0),
    (Harmonic(harmonic_scale=2.0, harmonic_offset=0.2), 0.3),
], ids=["alpha-half", "harmonic"])
def test_sde_mean_matches_the_ode(learning_rate, clip):
    d, n, runs = 200, 1000, 200
    spectrum = Spectrum.uniform(d)
    kw = dict(spectrum=spectrum, target_projections=isotropic_target(spectrum), aspect_ratio=d / n,
              learning_rate=learning_rate, clip=clip, rho=1.0, label_noise=0.5)
    ode = dpgd.solve_risk_ode(**kw, times=SDE_TIMES).risk
    paths = simulate_homogenized_sde(**kw, n=n, num_runs=runs, rng=np.random.default_rng(2026),
                                     times=SDE_TIMES)
    assert paths.shape == (runs, SDE_TIMES.size)
    assert np.all(paths[:, 0] == pytest.approx(ode[0], rel=1e-12))
    mean, standard_error = paths.mean(axis=0), paths.std(axis=0, ddof=1) / math.sqrt(runs)
    assert np.all(np.abs(mean[1:] - ode[1:]) <= 5 * standard_error[1:]), ((mean - ode) / standard_error)


def test_sde_with_drift_factor_two_would_not_match():
    """The printed drift −2η̄μ∇P (4.14, C.1) gives a different risk; factor 1 is the one that matches the ODE."""
    d, n, runs = 100, 500, 100
    spectrum = Spectrum.identity(d)
    kw = dict(spectrum=spectrum, target_projections=isotropic_target(spectrum), aspect_ratio=d / n,
              learning_rate=Constant(initial_learning_rate=2.0), clip=1.0, rho=1.0, label_noise=1.0)
    paths = simulate_homogenized_sde(**kw, n=n, num_runs=runs, rng=np.random.default_rng(7), times=[1.0])
    mean, standard_error = paths.mean(), paths.std(ddof=1) / math.sqrt(runs)

    def scalar_ode(drift_factor):  # the isotropic ODE (4.11) with the SDE's drift factor
        def rhs(t, R):
            cp = 1.0 / math.sqrt(2 * R[0] + 1.0)
            mu, nu = dpgd.clipping_factors(cp)
            return [-2 * drift_factor * 2.0 * mu * R[0] + 4.0 * nu * (R[0] + 0.5) * kw["aspect_ratio"]]
        return integrate.solve_ivp(rhs, (0, 1), [0.5], rtol=1e-10, atol=1e-14).y[0, -1]

    assert scalar_ode(1) == pytest.approx(dpgd.solve_risk_ode(**kw, times=[1.0]).final_risk, rel=1e-6)
    assert abs(mean - scalar_ode(1)) <= 5 * standard_error
    assert abs(mean - scalar_ode(2)) > 20 * standard_error


def test_sde_per_run_generators_do_not_depend_on_num_runs():
    d, n = 20, 100
    spectrum = Spectrum.uniform(d)
    kw = dict(spectrum=spectrum, target_projections=isotropic_target(spectrum), aspect_ratio=d / n, clip=1.0,
              rho=1.0, label_noise=0.5, learning_rate=Polynomial(initial_learning_rate=2.0, schedule_exponent=1.0),
              n=n, times=[0.5, 1.0])
    three = simulate_homogenized_sde(**kw, num_runs=3, rng=[np.random.default_rng(s) for s in range(3)])
    two = simulate_homogenized_sde(**kw, num_runs=2, rng=[np.random.default_rng(s) for s in range(2)])
    np.testing.assert_array_equal(three[:2], two)


def test_sde_validation():
    d = 20
    spectrum = Spectrum.uniform(d)
    kw = dict(spectrum=spectrum, target_projections=isotropic_target(spectrum), clip=1.0, rho=1.0, label_noise=0.5,
              learning_rate=Constant(initial_learning_rate=1.0), num_runs=2, rng=np.random.default_rng(0),
              times=[1.0])
    with pytest.raises(ValueError, match=r"aspect_ratio must equal spectrum.dim / n = 20/100 = 0.2"):
        simulate_homogenized_sde(**kw, aspect_ratio=0.1, n=100)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        simulate_homogenized_sde(**kw, aspect_ratio=0.2, n=0)
    with pytest.raises(TypeError, match="rng must be"):
        simulate_homogenized_sde(**dict(kw, rng=0), aspect_ratio=0.2, n=100)
