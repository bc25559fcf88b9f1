"""langevin: the vectorized Corollary 1 accountant against a per-K loop over the same accountant."""

import numpy as np

from privdyn.benchmarking import Benchmark
from privdyn.privacy import langevin

SETTING = dict(step_size=0.02, noise_scale=0.02, strong_convexity=1.0, smoothness=4.0, sensitivity=4.0, n=5000)
MAX_NUM_STEPS = 2000


def _setup():
    return np.arange(1, MAX_NUM_STEPS + 1)


def _vectorized(num_steps):
    return np.asarray(langevin.dynamics_rdp(10.0, num_steps=num_steps, **SETTING).value)


def _per_k_loop(num_steps):
    return np.array([langevin.dynamics_rdp(10.0, num_steps=int(k), **SETTING).value for k in num_steps])


def _agree(candidate, reference):
    np.testing.assert_allclose(candidate, reference, rtol=1e-12, atol=0)


BENCHMARKS = (
    Benchmark(
        name="langevin-accountant",
        description=f"Corollary 1 for K = 1..{MAX_NUM_STEPS} (Figure 1's setting, alpha = 10, lambda = 1)",
        candidate_name="dynamics_rdp on an array of K",
        reference_name="dynamics_rdp called once per K",
        setup=_setup,
        candidate=_vectorized,
        reference=_per_k_loop,
        agree=_agree,
        repeats=7,
    ),
)
