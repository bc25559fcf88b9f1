"""dpgd planning against a simulated grid search (issue: the planner, arXiv 2505.16329).

* candidate: ``privdyn.plan.dpgd`` on a power-law spectrum of 10^3 eigenvalues (d = 1000, φ = 0.5, n = 20,000,
  ‖θ*‖ = 1, ζ = 0.5, ε = 2, δ = 1e-5), every schedule family (constant; polynomial α = ½, 1, 2; harmonic): the ODE
  search (about 40 solves; its distance to an exhaustive search is checked in ``tests/plan/test_plan_search.py``),
  the final solve and risk curve, and the privacy statement;
* reference: the simulation grid a user would otherwise run for ONE schedule family: 12 × 12 cells over
  (clip, initial learning rate) × 20 runs of Algorithm 1 at d = 500, n = 20,000.

``plan-dpgd-vs-grid-cells`` (the issue's reference): the reference runs one cell of the grid per call (20 runs, as a
cell-by-cell search does); items count grid cells (the candidate covers all 144, the reference one), so the ratio is
the time of the whole grid over the time of one plan. ``plan-dpgd-vs-batched-grid`` (the fair reference): the
reference runs the whole 144-row grid in one ``simulate_dpgd`` call, its fastest form (rows share data and noise
streams). The grid covers one schedule family; the plan searches five. ``agree`` checks the plan's guarantee
through dp-accounting's ZCDpEvent and that the grid produced finite risks.
"""

from typing import Any

import dp_accounting
import numpy as np
from dp_accounting import rdp

import privdyn.plan
from privdyn.algorithms.dpgd import DPGDHyperparameters, simulate_dpgd
from privdyn.benchmarking import Benchmark
from privdyn.data.synthetic import SyntheticDesign
from privdyn.plan._budget import rho_from_zcdp, zcdp_for_epsilon
from privdyn.schedules import Polynomial

PLAN = dict(n=20_000, d=1000, spectrum="power_law:0.5", target_norm=1.0, label_noise=0.5, epsilon=2.0, delta=1e-5)
GRID_D, GRID_N, GRID_SIDE, GRID_RUNS = 500, 20_000, 12, 20


def _setup() -> dict[str, Any]:
    design = SyntheticDesign.power_law(GRID_D, power_law_exponent=0.5, target_exponent=0.0, label_noise=0.5)
    rho = rho_from_zcdp(zcdp_for_epsilon(2.0, 1e-5))
    gamma = GRID_D / GRID_N
    rows = [DPGDHyperparameters(clip=c, learning_rate=Polynomial(e, 0.5), rho=rho)
            for c in np.geomspace(0.01, 3.0, GRID_SIDE) for e in np.geomspace(2 / gamma / 1000, 2 / gamma, GRID_SIDE)]
    return {"design": design, "rows": rows}


def _plan(_: dict[str, Any]) -> Any:
    return privdyn.plan.dpgd(**PLAN)


def _one_cell(inputs: dict[str, Any]) -> np.ndarray:
    row = inputs["rows"][GRID_SIDE * GRID_SIDE // 2]
    return simulate_dpgd(data=inputs["design"], rows=[row], num_runs=GRID_RUNS, seed=0, unit_key="bench/cell",
                         n=GRID_N).final_private_risk


def _whole_grid(inputs: dict[str, Any]) -> np.ndarray:
    return simulate_dpgd(data=inputs["design"], rows=inputs["rows"], num_runs=GRID_RUNS, seed=0,
                         unit_key="bench/grid", n=GRID_N).final_private_risk


def _agree(plan: Any, risks: np.ndarray) -> None:
    accountant = rdp.RdpAccountant()
    accountant.compose(dp_accounting.ZCDpEvent(plan.privacy.zcdp))
    epsilon = accountant.get_epsilon(plan.privacy.delta)
    if not epsilon <= 2.0:
        raise AssertionError(f"the plan's zCDP {plan.privacy.zcdp} gives epsilon {epsilon} > 2 by dp-accounting.")
    if len(plan.alternatives) != 4 or not np.all(np.isfinite(risks)):
        raise AssertionError("the plan must compare five schedule families and the grid must give finite risks.")


DESCRIPTION = ("dpgd plan (power law of 10^3 eigenvalues, all schedule families) vs the 12 x 12 x 20-run simulation "
               "grid at d = 500, n = 20,000")

BENCHMARKS = (
    Benchmark(name="plan-dpgd-vs-grid-cells", description=DESCRIPTION + " (reference: one cell per call)",
              candidate_name="privdyn.plan.dpgd (ODE search, all families)",
              reference_name="simulate_dpgd, one grid cell x 20 runs", setup=_setup, candidate=_plan,
              reference=_one_cell, agree=_agree, target_ratio=100.0, repeats=5,
              candidate_items=GRID_SIDE * GRID_SIDE, reference_items=1),
    Benchmark(name="plan-dpgd-vs-batched-grid", description=DESCRIPTION + " (reference: all 144 rows in one call)",
              candidate_name="privdyn.plan.dpgd (ODE search, all families)",
              reference_name="simulate_dpgd, 144 rows x 20 runs in one call", setup=_setup, candidate=_plan,
              reference=_whole_grid, agree=_agree, target_ratio=100.0, repeats=5),
)
