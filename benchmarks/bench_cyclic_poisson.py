"""Banded noise under cyclic Poisson sampling: privdyn's accountant at T = 10,000 steps.

The issue's target is absolute: at most 10 s per epsilon at T = 10,000 steps. The candidate is the allow-list row
(:func:`privdyn.privacy.accounting.dpsgd_epsilon` with ``sampler="cyclic_poisson"``: the checks, the band count, the
rate q = B b / n and the PLD); the reference is what a user of dp-accounting would run for Theorem 4 of Choquette-Choo
et al. 2023 by hand: its ``PLDAccountant`` on ``ceil(T / b)`` self-composed Poisson-sampled Gaussian events at noise
multiplier kappa / ||c|| (discretization 1e-4, privdyn's). ``agree`` checks the two epsilons agree to 1e-9 relative.
The comparison with an independent implementation (opake's) is a test: tests/privacy/test_cyclic_poisson_opake.py.
"""

from __future__ import annotations

import math

import numpy as np

from privdyn.benchmarking import Benchmark
from privdyn.privacy import accounting, correlated

DELTA = 1e-5
NUM_STEPS = 10_000
SETTINGS = {  # name: (encoder coefficients, n, batch size, kappa); q = B b / n
    "b1-q0.004": ((1.0,), 60_000, 256, 1.0),
    "b4-q0.02": ((1.0, 0.6, 0.4, 0.2), 50_000, 250, 2.0),
    "b16-q0.2": (tuple(0.9 ** np.arange(16)), 40_000, 500, 3.0),
}


def _setup(coefficients: tuple[float, ...], n: int, batch_size: int, kappa: float):
    def build():
        return correlated.Toeplitz(coefficients), n, batch_size, kappa
    return build


def _privdyn(inputs) -> float:
    strategy, n, batch_size, kappa = inputs
    return float(accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa, n=n, batch_size=batch_size,
                                          num_steps=NUM_STEPS, delta=DELTA, sampler="cyclic_poisson",
                                          neighboring="add_remove").value)


def _dp_accounting(inputs) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    strategy, n, batch_size, kappa = inputs
    bands = strategy.bands
    sigma = kappa / float(np.linalg.norm(strategy.encoder_coefficients(bands)))
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(batch_size * bands / n, dp_accounting.GaussianDpEvent(sigma)),
        math.ceil(NUM_STEPS / bands))
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    return float(accountant.compose(event).get_epsilon(DELTA))


def _same(candidate: float, reference: float) -> None:
    if abs(candidate - reference) > 1e-9 * reference:
        raise AssertionError(f"epsilon differs: privdyn {candidate!r}, dp-accounting by hand {reference!r}")


BENCHMARKS = tuple(
    Benchmark(
        name=f"cyclic-poisson-{name}",
        description=(f"epsilon at delta = {DELTA}, T = {NUM_STEPS}, {len(coefficients)}-band Toeplitz encoder, n = "
                     f"{n}, B = {batch_size} (q = {batch_size * len(coefficients) / n:g}), kappa = {kappa}; "
                     f"target: at most 10 s"),
        candidate_name="privdyn.privacy.accounting.dpsgd_epsilon(sampler='cyclic_poisson')",
        reference_name="dp_accounting PLDAccountant, ceil(T / b) Poisson-sampled Gaussians at kappa / ||c||",
        setup=_setup(coefficients, n, batch_size, kappa),
        candidate=_privdyn,
        reference=_dp_accounting,
        agree=_same,
        repeats=5,
    ) for name, (coefficients, n, batch_size, kappa) in SETTINGS.items())
