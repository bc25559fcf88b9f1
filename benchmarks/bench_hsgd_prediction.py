"""hsgd: predicting noisy SGD's risk curve with the Volterra equation against simulating it (Figure 2(a) setting).

Setting: the paper's Section 5 (Lin, Kolaczyk, Smith, Paquette; no arXiv id in the seed text): d = 1000, n = 1500,
step_size 0.05 (gamma = 50), ridge 0.1, noise_std 1.5, features Unif[0, 1/sqrt(d)], x_0 ~ N(0, I) drawn once.

* candidate: ``privdyn.dynamics.hsgd.volterra_risk`` on the SGD grid t_k = k/d (product trapezoid with 2 Romberg
  refinements, as in ``hsgd-fig2a``): the whole curve P_{k/d}, k = 0..n, of eq. (6) (Theorem 4.2);
* reference: ``privdyn.algorithms.noisy_sgd.simulate_noisy_sgd``, 200 runs of Algorithm 1 recording the population
  risk every 10 steps (numba kernel).

``agree`` asserts the prediction: at 15 evenly spaced iterations the simulated mean lies within z standard errors of
the Volterra curve, z Bonferroni-corrected at family-wise level 1e-6 over the 15 points (no bias allowance: the
discretization shift of discrete SGD, O(step_size * max eigenvalue of Sigma + ridge) ~ 2%, is far below the detectable
error of 200 runs, ~25%, because single runs fluctuate by ~65% on this spiked design). The target ratio is 1000.
"""

from typing import NamedTuple

import numpy as np

from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd
from privdyn.benchmarking import Benchmark
from privdyn.data.hsgd_design import UniformDesign, hsgd_problem
from privdyn.dynamics import hsgd
from privdyn.experiments.hsgd_risk import paper_setting
from privdyn.runs.results import bonferroni_z
from privdyn.schedules import Constant

D, N, NUM_RUNS = 1000, 1500, 200
STEP_SIZE, RIDGE, NOISE_STD = 0.05, 0.1, 1.5
RECORD_EVERY, NUM_BLOCKS = 10, 15
SEED, UNIT_KEY = 0, "bench-hsgd-prediction"


class Problem(NamedTuple):
    design: UniformDesign
    x0: np.ndarray
    problem: hsgd.HSGDProblem


def _steps() -> np.ndarray:
    return np.arange(0, N + 1, RECORD_EVERY)


def _setup() -> Problem:
    design, x0 = paper_setting(D, SEED)
    problem = hsgd_problem(design, x0=x0, learning_rate=Constant(STEP_SIZE * D), ridge=RIDGE, noise_std=NOISE_STD)
    return Problem(design, x0, problem)


def _candidate(inputs: Problem) -> np.ndarray:
    curve = hsgd.volterra_risk(inputs.problem, _steps() / D, max_step=1.0 / D, refinements=2)
    return np.asarray(curve.population_risk)


def _reference(inputs: Problem) -> np.ndarray:
    sim = simulate_noisy_sgd(data=inputs.design, x0=inputs.x0, ridge=RIDGE, num_steps=N, num_runs=NUM_RUNS,
                             seed=SEED, unit_key=UNIT_KEY, step_size=STEP_SIZE, noise_std=NOISE_STD,
                             record_steps=_steps())
    return np.asarray(sim.population_risk)


def _agree(candidate: np.ndarray, reference: np.ndarray) -> None:
    blocks = np.round(np.arange(1, NUM_BLOCKS + 1) * N / NUM_BLOCKS / RECORD_EVERY).astype(int)
    mean = reference.mean(axis=0)[blocks]
    se = reference.std(axis=0, ddof=1)[blocks] / np.sqrt(reference.shape[0])
    z = bonferroni_z(blocks.size)
    dev = np.abs(mean - candidate[blocks])
    if not np.all(dev <= z * se):
        worst = int(np.argmax(dev / se))
        raise AssertionError(f"the SGD mean at iteration {blocks[worst] * RECORD_EVERY} ({mean[worst]:.5g}, SE "
                             f"{se[worst]:.3g}) differs from the Volterra curve ({candidate[blocks][worst]:.5g}) by "
                             f"more than z = {z:.3f} standard errors.")


BENCHMARKS = (
    Benchmark(
        name="hsgd-prediction",
        description=(f"population-risk curve, Section 5 design, d={D}, n={N}, step_size={STEP_SIZE}, ridge={RIDGE}, "
                     f"noise_std={NOISE_STD}: the Volterra curve vs {NUM_RUNS} SGD runs (agreement: Bonferroni z "
                     f"over {NUM_BLOCKS} points)"),
        candidate_name="volterra_risk (O(N m) product trapezoid, 2 Romberg refinements)",
        reference_name=f"simulate_noisy_sgd ({NUM_RUNS} runs, numba kernel)",
        setup=_setup,
        candidate=_candidate,
        reference=_reference,
        agree=_agree,
        target_ratio=1000.0,
        repeats=5,
    ),
)
