"""hsgd: the recursive O(N·m) Volterra solver against the dense O(N²·m) evaluation of the same product trapezoid."""

import numpy as np

from privdyn.benchmarking import Benchmark, Scaling
from privdyn.dynamics import hsgd
from privdyn.schedules import Harmonic
from privdyn.spectra import Spectrum

NUM_GROUPS = 1000  # m: distinct eigenvalues (uniform quantiles on [0, 2], d = m)
NUM_STEPS = 2000  # N: product-trapezoid steps
HORIZON = 2.0  # t in [0, 2]: 2d SGD steps; max_step·2γ(0)·max a = 0.0042, well resolved
SETTING = dict(ridge=0.1, noise_std=1.0, label_noise=0.05)
LEARNING_RATE = Harmonic(harmonic_scale=1.0, harmonic_offset=1.0)  # decaying γ(t) = 1/(1 + t); κ_K(0) ≈ 0.6


def _problem() -> hsgd.HSGDProblem:
    spectrum = Spectrum.uniform(NUM_GROUPS, low=0.0, high=2.0)
    rng = np.random.default_rng(20260601)
    d = spectrum.dim
    return hsgd.HSGDProblem.from_coordinates(spectrum, target=rng.normal(size=d) / np.sqrt(d), x0=rng.normal(size=d),
                                             learning_rate=LEARNING_RATE, **SETTING)


def _setup():
    return _problem(), np.linspace(0.0, HORIZON, NUM_STEPS + 1), HORIZON / NUM_STEPS


def _recursive(inputs):
    problem, times, step = inputs
    return hsgd.volterra_risk(problem, times, max_step=step, refinements=0)


def _dense(inputs):
    problem, times, step = inputs
    return hsgd.volterra_dense_reference(problem, times, max_step=step)


def _agree(candidate, reference):
    if candidate.num_steps != NUM_STEPS or reference.num_steps != NUM_STEPS:
        raise AssertionError(f"not the same quadrature: {candidate.num_steps} vs {reference.num_steps} steps.")
    for name in ("population_risk", "regularized_risk"):
        np.testing.assert_allclose(getattr(candidate, name), getattr(reference, name), rtol=1e-10, atol=0,
                                   err_msg=name)


BENCHMARKS = (
    Benchmark(
        name="hsgd-volterra",
        description=f"Volterra (6)-(7) product trapezoid, m = {NUM_GROUPS} groups, N = {NUM_STEPS} steps, "
                    "harmonic gamma(t) = 1/(1 + t)",
        candidate_name="volterra_risk (sum-of-exponentials kernel carried recursively, O(N m))",
        reference_name="volterra_dense_reference (kernel from Gamma differences at every (k, i), O(N^2 m))",
        setup=_setup,
        candidate=_recursive,
        reference=_dense,
        agree=_agree,
        target_ratio=100.0,
        repeats=5,
    ),
)


# -- scaling (``privdyn bench --scaling``) ------------------------------------------------------------------------

SCALING_GROUPS = 100


def _scaling_setup(num_steps: int):
    spectrum = Spectrum.uniform(SCALING_GROUPS, low=0.0, high=2.0)
    rng = np.random.default_rng(20260601)
    d = spectrum.dim
    problem = hsgd.HSGDProblem.from_coordinates(spectrum, target=rng.normal(size=d) / np.sqrt(d),
                                                x0=rng.normal(size=d), learning_rate=LEARNING_RATE, **SETTING)
    return problem, np.linspace(0.0, HORIZON, num_steps + 1), HORIZON / num_steps


SCALING = (
    Scaling(
        name="hsgd-volterra-scaling",
        description=f"volterra_risk (recursive product trapezoid, no refinement), m = {SCALING_GROUPS} groups, "
                    f"t in [0, {HORIZON:g}], harmonic gamma(t) = 1/(1 + t), N steps",
        size_name="horizon steps N",
        sizes=(1_000, 3_000, 10_000, 30_000, 100_000),
        setup=_scaling_setup,
        run=_recursive,
    ),
)
