"""dpgd: predicting DP-GD's final private risk with the ODE against simulating it (arXiv 2505.16329, Theorem 1).

Setting (pinned by issue 5): d = 1000, n = 10^4 (gamma = 0.1), eigenvalues at the quantile midpoints of the uniform law
on [0, 2], schedule_exponent 1/2 (eta~(t) = eta~(0) sqrt(1 - t)), the paper's Figure 1 parameters otherwise
(eta~(0) = 3, c = 1, rho = 1, zeta = 0.3, |theta*| = 1 with (theta*_i)^2 = 1/d), 20 runs.

* candidate: ``privdyn.dynamics.dpgd.final_private_risk`` (the default exponential solver): R(1) + 2c^2 eta~(1)^2
  gamma^2 / rho^2 (Proposition 4.4; the jump is 0 here since eta~(1) = 0);
* reference: ``privdyn.algorithms.dpgd.simulate_dpgd``, 20 runs of Algorithm 1 (the released theta_n's excess risk).

``agree`` asserts the prediction: the ODE value lies within 5 standard errors of the simulated mean plus the capped
finite-d allowance of ``privdyn.runs.results.finite_size_allowance``, derived from a d = 200 simulation
(|mean - ODE| at d = 200 with the same parameters, 100 runs, scaled by sqrt(200/1000), capped at
3% x sqrt(200/1000) of the prediction), computed once in setup. The target ratio is 100 (the ODE at least 100x
faster than the simulation).
"""

import math
from typing import NamedTuple

import numpy as np

from privdyn.algorithms.dpgd import DPGDHyperparameters, simulate_dpgd
from privdyn.benchmarking import Benchmark
from privdyn.data.synthetic import SyntheticDesign
from privdyn.dynamics import dpgd
from privdyn.runs.results import finite_size_allowance
from privdyn.schedules import Polynomial

D, N, NUM_RUNS = 1000, 10_000, 20
SMALL_D, SMALL_NUM_RUNS = 200, 100
INITIAL_LEARNING_RATE, SCHEDULE_EXPONENT, CLIP, RHO, LABEL_NOISE = 3.0, 0.5, 1.0, 1.0, 0.3
SEED, UNIT_KEY = 0, "bench-dpgd-prediction"
Z = 5.0


class Problem(NamedTuple):
    design: SyntheticDesign
    row: DPGDHyperparameters
    allowance: float
    small_bias: float


class Outcome(NamedTuple):
    values: np.ndarray  # candidate: the one ODE value; reference: the NUM_RUNS simulated final private risks
    allowance: float  # passed through from setup, so that ``agree`` sees it


def _row() -> DPGDHyperparameters:
    return DPGDHyperparameters(clip=CLIP, learning_rate=Polynomial(INITIAL_LEARNING_RATE, SCHEDULE_EXPONENT), rho=RHO)


def _ode(design: SyntheticDesign, n: int) -> float:
    return dpgd.final_private_risk(spectrum=design.spectrum, target_projections=design.squared_projections,
                                   aspect_ratio=design.dim / n, learning_rate=_row().learning_rate, clip=CLIP,
                                   rho=RHO, label_noise=LABEL_NOISE)


def _simulate(design: SyntheticDesign, n: int, num_runs: int) -> np.ndarray:
    sim = simulate_dpgd(data=design, rows=_row(), num_runs=num_runs, seed=SEED, unit_key=f"{UNIT_KEY}/d={design.dim}",
                        n=n)
    return np.asarray(sim.final_private_risk[0])


def _setup() -> Problem:
    small = SyntheticDesign.uniform(SMALL_D, label_noise=LABEL_NOISE)
    small_n = SMALL_D * N // D
    small_bias = abs(float(_simulate(small, small_n, SMALL_NUM_RUNS).mean()) - _ode(small, small_n))
    design = SyntheticDesign.uniform(D, label_noise=LABEL_NOISE)
    prediction = _ode(design, N)
    cap = 0.03 * math.sqrt(200.0 / D) * prediction
    allowance = finite_size_allowance(small_bias, small_size=SMALL_D, size=D, cap=cap)
    return Problem(design, _row(), allowance, small_bias)


def _candidate(problem: Problem) -> Outcome:
    return Outcome(np.array([_ode(problem.design, N)]), problem.allowance)


def _reference(problem: Problem) -> Outcome:
    return Outcome(_simulate(problem.design, N, NUM_RUNS), problem.allowance)


def _agree(candidate: Outcome, reference: Outcome) -> None:
    prediction = float(candidate.values[0])
    runs = reference.values
    mean = float(runs.mean())
    se = float(runs.std(ddof=1) / math.sqrt(runs.size))
    tolerance = Z * se + candidate.allowance
    if not abs(mean - prediction) <= tolerance:
        raise AssertionError(f"ODE final private risk {prediction:.6g} differs from the simulated mean {mean:.6g} "
                             f"(SE {se:.3g}, {runs.size} runs) by {abs(mean - prediction):.3g} > 5 SE + allowance "
                             f"{candidate.allowance:.3g} = {tolerance:.3g}.")


BENCHMARKS = (
    Benchmark(
        name="dpgd-prediction",
        description=(f"final private risk, d={D}, n={N}, uniform spectrum on [0, 2], alpha=1/2, eta0=3, c=1, rho=1, "
                     f"zeta=0.3: the ODE vs {NUM_RUNS} runs of Algorithm 1 (agreement: 5 SE + allowance from d=200)"),
        candidate_name="dpgd.final_private_risk (ODE, exponential solver)",
        reference_name=f"simulate_dpgd ({NUM_RUNS} runs, numba kernel)",
        setup=_setup,
        candidate=_candidate,
        reference=_reference,
        agree=_agree,
        target_ratio=100.0,
        repeats=5,
    ),
)
