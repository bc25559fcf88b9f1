"""privdyn.reference.hsgd_risk: the independent moment closure and long-time limit of HSGD on the Section 5 design."""

import numpy as np
import pytest

from privdyn.data.hsgd_design import hsgd_problem, paper_design
from privdyn.dynamics import hsgd as dyn
from privdyn.reference.hsgd_risk import reference_limit, reference_moments
from privdyn.schedules import Constant

D, STEP_SIZE, RIDGE, NOISE_STD = 60, 0.05, 0.1, 1.2


def _setting(seed: int = 1) -> tuple:
    rng = np.random.default_rng(seed)
    design = paper_design(D, rng)
    return design, rng.standard_normal(D)


def test_relaxes_to_the_reference_limit_and_starts_at_the_initial_risk():
    design, x0 = _setting()
    limit = reference_limit(design, step_size=STEP_SIZE, ridge=RIDGE, noise_std=NOISE_STD)
    horizon = 40 * limit["relaxation_time"]
    ref = reference_moments(design, x0=x0, init_variance=0.0, step_size=STEP_SIZE, ridge=RIDGE, noise_std=NOISE_STD,
                            times=[0.0, horizon])
    assert ref.population_risk[-1] == pytest.approx(limit["population_risk"], rel=1e-9)
    assert ref.variance[0] == pytest.approx([0.0, 0.0], abs=1e-15)
    assert ref.population_risk[0] == pytest.approx(float(design.population_risk(x0)), rel=1e-12)
    secret = reference_moments(design, x0=np.zeros(D), init_variance=1.0, step_size=STEP_SIZE, ridge=RIDGE,
                               noise_std=NOISE_STD, times=[0.0])
    assert secret.variance[0] == pytest.approx([1.0, 1.0], rel=1e-12)


def test_agrees_with_the_engine_moment_ode_and_limit():
    design, x0 = _setting(2)
    problem = hsgd_problem(design, x0=x0, learning_rate=Constant(STEP_SIZE * D), ridge=RIDGE, noise_std=NOISE_STD)
    times = np.array([0.5, 2.0, 10.0, 40.0])
    ref = reference_moments(design, x0=x0, init_variance=0.0, step_size=STEP_SIZE, ridge=RIDGE, noise_std=NOISE_STD,
                            times=times)
    engine = dyn.moment_ode_risk(problem, times, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(ref.population_risk, engine.population_risk, rtol=1e-8)
    limit = reference_limit(design, step_size=STEP_SIZE, ridge=RIDGE, noise_std=NOISE_STD)
    engine_limit = dyn.risk_limit(problem)
    assert limit["population_risk"] == pytest.approx(engine_limit.population_risk, rel=1e-10)
    assert limit["kernel_mass"] == pytest.approx(engine_limit.kernel_mass, rel=1e-10)


@pytest.mark.parametrize("times", [[], [1.0, 0.5], [-1.0, 1.0], [[1.0]]])
def test_bad_times_name_the_parameter(times):
    design, x0 = _setting()
    with pytest.raises(ValueError, match="times"):
        reference_moments(design, x0=x0, init_variance=0.0, step_size=STEP_SIZE, ridge=RIDGE, noise_std=NOISE_STD,
                          times=times)
