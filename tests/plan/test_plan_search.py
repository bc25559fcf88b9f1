"""The dpgd planner's economical search against an exhaustive one, and its one-dimensional search.

Exhaustive search, per schedule family, on the exact spectrum at ODE rtol 1e-6: a log grid over (V = c∫η̃ dt, c)
(times four harmonic offsets τ), then Nelder-Mead with tight tolerances from the three best grid points. The plan
must reach the exhaustive optimum within :data:`CHOSEN_TOLERANCE` for the chosen family and within
:data:`RUNNER_UP_TOLERANCE` for every runner-up (runner-ups further than 1% from the best are not refined, see
``privdyn.tuning.staged``). The quick version (default test run, d = 40) checks the chosen family;
``pytest -m slow`` checks every family at the benchmark's setting (d = 1000) and four others, among them a very
small and a large budget.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import optimize

import privdyn.plan
from privdyn.dynamics import dpgd as engine
from privdyn.plan import _dpgd
from privdyn.tuning import candidates

CHOSEN_TOLERANCE = 1e-3
RUNNER_UP_TOLERANCE = 1e-2


def _exhaustive(plan, candidate, grid: int, starts: int, maxfev: int) -> float:
    m, rho, gamma = plan.model, plan.rho, plan.model.aspect_ratio
    harmonic = candidate.schedule == "harmonic"

    def risk(z: np.ndarray) -> float:
        clip, offset = math.exp(z[1]), (math.exp(z[2]) if harmonic else None)
        rate = math.exp(z[0]) / (clip * candidate.shape_integral(offset))
        if not (1e-3 <= rate <= 2.0 / gamma and 1e-3 <= clip <= 10.0) or (harmonic and not 1e-3 <= offset <= 1e3):
            return math.inf
        point = (clip, rate, offset) if harmonic else (clip, rate)
        try:
            return engine.final_private_risk(
                spectrum=m.spectrum, target_projections=m.target_projections, aspect_ratio=gamma,
                learning_rate=candidate.learning_rate(point), clip=clip, rho=rho, label_noise=m.label_noise,
                rtol=1e-6)
        except engine.ODESolverError:
            return math.inf

    offsets = np.log([0.03, 0.3, 3.0, 30.0]) if harmonic else [None]
    points = []
    for log_clock in np.linspace(math.log(0.02), math.log(100.0), grid):
        for log_clip in np.linspace(math.log(0.003), math.log(5.0), grid - 2):
            for log_offset in offsets:
                z = np.array([log_clock, log_clip] + ([] if log_offset is None else [log_offset]))
                points.append((risk(z), z))
    points.sort(key=lambda p: p[0])
    best = math.inf
    for _, z in points[:starts]:
        result = optimize.minimize(risk, z, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-9,
                                                                          "maxfev": maxfev})
        best = min(best, float(result.fun))
    return best


def _check_against_exhaustive(setting: dict, *, every_family: bool, grid: int, starts: int, maxfev: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = privdyn.plan.dpgd(**setting)
        planned = {plan.chosen.name: plan.predicted_risk} | {a.name: a.predicted_risk for a in plan.alternatives}
        families = candidates(_dpgd.SCHEDULES) if every_family else [plan.chosen]
        gaps = {c.name: planned[c.name] / _exhaustive(plan, c, grid, starts, maxfev) - 1.0 for c in families}
    print({k: f"{v:+.2e}" for k, v in gaps.items()}, "ode_solves", plan.search["ode_solves"])
    assert gaps[plan.chosen.name] <= CHOSEN_TOLERANCE, gaps
    assert max(gaps.values()) <= RUNNER_UP_TOLERANCE, gaps


def test_plan_reaches_the_exhaustive_optimum_quick() -> None:
    """The chosen family only, a coarser grid and one Nelder-Mead run (a few seconds)."""
    _check_against_exhaustive(dict(n=2000, d=40, spectrum="power_law:0.4", target_norm=1.0, label_noise=0.5,
                                   epsilon=2.0, delta=1e-5), every_family=False, grid=5, starts=1, maxfev=100)


@pytest.mark.slow
@pytest.mark.parametrize("setting", [
    dict(n=20_000, d=1000, spectrum="power_law:0.5", target_norm=1.0, label_noise=0.5, epsilon=2.0, delta=1e-5),
    dict(n=20_000, d=500, spectrum="power_law:0.3", target_exponent=0.2, label_noise=0.7, epsilon=3.0, delta=1e-6),
    dict(n=2000, d=40, spectrum="power_law:0.4", target_norm=1.0, label_noise=0.5, epsilon=2.0, delta=1e-5),
    dict(n=5000, d=500, spectrum="identity", label_noise=0.3, epsilon=0.5, delta=1e-6),
    dict(n=50_000, d=200, spectrum="uniform", target_norm=2.0, label_noise=1.0, epsilon=8.0, delta=1e-6),
])
def test_plan_reaches_the_exhaustive_optimum(setting) -> None:
    _check_against_exhaustive(setting, every_family=True, grid=10, starts=3, maxfev=400)
