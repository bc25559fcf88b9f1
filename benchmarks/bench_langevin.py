"""langevin: the vectorized Corollary 1 accountant against a per-K loop over the same accountant.

What it measures, labelled so: call overhead, not an algorithm. The reference is the naive path of a user who needs
the Renyi DP curve over K = 1..2000 and calls the scalar accountant once per K. No peer library computes this
quantity (the last-iterate Renyi divergence of noisy gradient descent on neighbouring data sets, Corollary 1 of
Chourasia, Ye, Shokri, arXiv 2102.05855): dp-accounting, Opacus' RDP accountant and prv-accountant account the
Gaussian mechanism composed K times, whose bound ignores the contraction Corollary 1 captures, so they answer a
different question and are not a reference here. Noise calibration, where a peer does compute the same quantity, is
compared with dp-accounting in ``bench_calibration.py``. No target is set.
"""

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
        reference_name="naive path: dynamics_rdp called once per K (measures call overhead)",
        setup=_setup,
        candidate=_vectorized,
        reference=_per_k_loop,
        agree=_agree,
        repeats=7,
    ),
)
