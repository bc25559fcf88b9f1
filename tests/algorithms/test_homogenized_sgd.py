"""Tests of privdyn.algorithms.homogenized_sgd: HSGD (1) and linearized HSGD (9) of arXiv 2510.16687 by
Euler–Maruyama, against a step-by-step reference on the same streams."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privdyn.algorithms import noisy_sgd
from privdyn.algorithms.homogenized_sgd import simulate_hsgd
from privdyn.dynamics import hsgd
from privdyn.rng import generator
from privdyn.schedules import Constant, Custom
from privdyn.spectra import Spectrum

SEED, KEY = 11, "test-noisy-sgd"
RTOL = 1e-11


def naive_hsgd(lam, target, y0, gamma, dt, ridge, sigma, label_var, noise, risk=None):
    """Euler–Maruyama for HSGD (1) in the eigenbasis, spec §2.3, step by step: returns the path (N+1, d)."""
    d = lam.size
    y = np.array(y0, dtype=float)
    path = [y.copy()]
    for k in range(noise.shape[0]):
        p = 0.5 * (lam @ (y - target) ** 2 + label_var) if risk is None else risk[k]
        drift = (lam + ridge) * (y - target) + ridge * target
        y = y - gamma[k] * dt * drift + gamma[k] * math.sqrt(dt / d) * np.sqrt(2 * p * lam + sigma**2) * noise[k]
        path.append(y.copy())
    return np.array(path)


# ----------------------------------------------------------------------------------------------------------------
# HSGD by Euler–Maruyama
# ----------------------------------------------------------------------------------------------------------------


def small_problem(policy="fixed"):
    spectrum = Spectrum.from_eigenvalues([0.2, 0.2, 0.7, 1.3, 1.3, 1.3])
    rng = np.random.default_rng(9)
    return hsgd.HSGDProblem.from_coordinates(spectrum, target=rng.standard_normal(6), x0=rng.standard_normal(6),
                                             learning_rate=Custom(lambda t: 1.5 / (1 + t), horizon=5.0),
                                             ridge=0.2, noise_std=0.8, label_noise=0.4, x0_policy=policy,
                                             init_variance=0.5)


@pytest.mark.parametrize("time_step", [None, 0.05])
def test_hsgd_euler_maruyama_matches_reference(time_step):
    problem = small_problem()
    d = problem.dim
    dt = 1.0 / d if time_step is None else time_step
    horizon = 40 * dt
    sim = simulate_hsgd(problem, horizon=horizon, num_runs=2, seed=SEED, unit_key=KEY, time_step=time_step,
                        record_steps=[0, 5, 40], iterate_steps=[40])
    grid = np.arange(41) * dt
    gamma = problem.learning_rate.value(grid[:-1])
    lam = problem.spectrum.per_direction()
    for run in range(2):
        noise = generator(SEED, KEY, run_index=run, purpose="noise").standard_normal((40, d))
        path = naive_hsgd(lam, problem.target_coordinates, problem.x0_coordinates, gamma, dt, problem.ridge,
                          problem.noise_std, problem.label_noise**2, noise)
        np.testing.assert_allclose(sim.iterates[run, 0], path[-1], rtol=RTOL, atol=1e-14)
        pop = 0.5 * ((path[[0, 5, 40]] - problem.target_coordinates) ** 2 @ lam + problem.label_noise**2)
        np.testing.assert_allclose(sim.population_risk[run], pop, rtol=RTOL)
        np.testing.assert_allclose(sim.regularized_risk[run], pop + 0.1 * np.sum(path[[0, 5, 40]] ** 2, axis=1),
                                   rtol=RTOL)
    assert sim.method == "hsgd_sde" and sim.time_step == dt
    np.testing.assert_allclose(sim.times, np.array([0, 5, 40]) * dt)


def test_linearized_hsgd_uses_the_given_risk_and_random_secret_start():
    problem = small_problem("random_secret")
    d, n = problem.dim, 30
    grid = np.arange(n + 1) / d
    curve = hsgd.volterra_risk(problem, grid, max_step=1.0 / d, refinements=1)
    sim = simulate_hsgd(problem, horizon=n / d, num_runs=1, seed=SEED, unit_key=KEY, linearized=True,
                        population_risk=curve, iterate_steps=[0, n])
    start = problem.x0_coordinates + math.sqrt(0.5) * generator(SEED, KEY, run_index=0,
                                                               purpose="sampling").standard_normal(d)
    noise = generator(SEED, KEY, run_index=0, purpose="noise").standard_normal((n, d))
    path = naive_hsgd(problem.spectrum.per_direction(), problem.target_coordinates, start,
                      problem.learning_rate.value(grid[:-1]), 1.0 / d, problem.ridge, problem.noise_std,
                      problem.label_noise**2, noise, risk=curve.population_risk)
    np.testing.assert_allclose(sim.iterates[0], path[[0, n]], rtol=RTOL, atol=1e-14)
    assert sim.method == "linearized_hsgd"
    array_sim = simulate_hsgd(problem, horizon=n / d, num_runs=1, seed=SEED, unit_key=KEY, linearized=True,
                              population_risk=np.asarray(curve.population_risk)[:n], iterate_steps=[n])
    np.testing.assert_array_equal(array_sim.iterates[0, 0], sim.iterates[0, 1])


def test_hsgd_bad_input():
    problem = small_problem()
    with pytest.raises(ValueError, match="horizon"):
        simulate_hsgd(problem, horizon=0.2 + 1e-3, num_runs=1, seed=0)
    with pytest.raises(ValueError, match="horizon"):
        simulate_hsgd(problem, horizon=-1.0, num_runs=1, seed=0)
    with pytest.raises(ValueError, match="time_step"):
        simulate_hsgd(problem, horizon=1.0, num_runs=1, seed=0, time_step=0.0)
    with pytest.raises(ValueError, match="population_risk"):
        simulate_hsgd(problem, horizon=1.0, num_runs=1, seed=0, linearized=True)
    with pytest.raises(ValueError, match="population_risk"):
        simulate_hsgd(problem, horizon=1.0, num_runs=1, seed=0, linearized=True, population_risk=np.ones(3))
    with pytest.raises(ValueError, match="population_risk"):
        simulate_hsgd(problem, horizon=1.0, num_runs=1, seed=0, population_risk=np.ones(6))
    with pytest.raises(ValueError, match="record_steps"):
        simulate_hsgd(problem, horizon=1.0, num_runs=1, seed=0, record_steps=[7])
    with pytest.raises(ValueError, match="num_runs"):
        simulate_hsgd(problem, horizon=1.0, num_runs=0, seed=0)
    no_coordinates = hsgd.HSGDProblem.from_group_moments(
        problem.spectrum, x0_sq=problem.x0_sq, x0_dot_target=problem.x0_dot_target, target_sq=problem.target_sq,
        learning_rate=Constant(1.0), ridge=0.1, noise_std=1.0)
    with pytest.raises(ValueError, match="eigen-coordinates"):
        simulate_hsgd(no_coordinates, horizon=1.0, num_runs=1, seed=0)
    with pytest.raises(ValueError, match="noise_std"):
        problem.replace(noise_std=-1.0)


def test_hsgd_run_i_does_not_depend_on_the_number_of_runs():
    problem = small_problem("random_secret")
    options = dict(horizon=2.0, seed=SEED, unit_key=KEY, iterate_steps=[0, 12])
    full = simulate_hsgd(problem, num_runs=3, **options)
    alone = simulate_hsgd(problem, num_runs=1, first_run=1, **options)
    np.testing.assert_array_equal(alone.iterates[0], full.iterates[1])
    assert not np.allclose(full.iterates[0, 0], full.iterates[1, 0])  # secret starts differ between runs


def test_simulate_hsgd_stays_importable_from_noisy_sgd():
    assert noisy_sgd.simulate_hsgd is simulate_hsgd
