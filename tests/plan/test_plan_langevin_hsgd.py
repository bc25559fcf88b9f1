"""The langevin and hsgd planners: calibration against the engines, the paper's chooser, verification, refusals."""

import math

import numpy as np
import pytest

import privdyn.plan
from privdyn.plan import _hsgd
from privdyn.privacy import langevin as accountant

LANGEVIN = dict(n=10_000, d=100, strong_convexity=1.0, smoothness=2.0, lipschitz=1.0, epsilon=1.0, delta=1e-5)


def test_langevin_noise_is_corollary_1_at_the_budget() -> None:
    plan = privdyn.plan.langevin(**LANGEVIN)
    h = plan.hyperparameters
    assert h["step_size"] == 0.125  # lambda / (2 beta^2), Theorem 4's step (< 1/beta)
    # Corollary 1 at the planned K is exactly the budget's zCDP (RDP = zcdp * alpha at every order)
    rdp = accountant.dynamics_rdp(7.0, num_steps=h["num_steps"], step_size=h["step_size"],
                                  noise_scale=h["noise_scale"], strong_convexity=1.0, smoothness=2.0,
                                  sensitivity=2.0, n=10_000).value
    assert math.isclose(rdp / 7.0, plan.privacy.zcdp, rel_tol=1e-9)
    assert plan.privacy.epsilon <= 1.0
    # the planned K minimizes Lemma 6 with the noise calibrated at K: K - 1 and K + 1 are no better
    paper = next(a for a in plan.alternatives if a.name.startswith("Theorem 4"))
    assert plan.predicted_risk <= paper.predicted_risk
    expected = accountant.theorem4_parameters(lipschitz=1.0, strong_convexity=1.0, smoothness=2.0, n=10_000, d=100,
                                              epsilon=1.0, delta=1e-5)
    assert paper.hyperparameters["num_steps"] == expected.num_steps


def test_langevin_verification_is_below_the_lemma_6_bound() -> None:
    plan = privdyn.plan.langevin(**LANGEVIN)
    check = plan.simulate(20, seed=1)
    assert check.within is True and check.mean <= plan.predicted_risk


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(LANGEVIN, n=0), "n must be an integer >= 1"),
    (dict(LANGEVIN, strong_convexity=3.0), "strong_convexity must be <= smoothness"),
    (dict(LANGEVIN, epsilon=-1.0), "epsilon must be > 0"),
    (dict(LANGEVIN, delta=2.0), r"delta must be in \(0.0, 1.0\)"),
])
def test_langevin_bad_input(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        privdyn.plan.langevin(**kwargs)


HSGD = dict(n=200, d=100, spectrum="uniform", label_noise=0.5, ridge=0.1, renyi_order=2.0, rdp_epsilon=1.0)


def test_hsgd_plan_meets_its_surrogate_target_and_is_labelled() -> None:
    from privdyn.privacy import hsgd as hsgd_privacy

    plan = privdyn.plan.hsgd(**HSGD)
    assert plan.privacy.guarantee.value == "surrogate" and not plan.privacy.is_dp_guarantee
    assert plan.privacy.epsilon is None and plan.privacy.zcdp is None
    s, h = plan.setting, plan.hyperparameters
    problem = sys_problem(s, h)
    law = hsgd_privacy.sgd_grid_law(problem, s.n)
    value = hsgd_privacy.rdp_epsilon(2.0, law, s.pairs, num_steps=s.n, iterates=[s.n]).value[0]
    assert value <= 1.0
    assert plan.predicted_risk <= min(a.predicted_risk for a in plan.alternatives)
    check = plan.simulate(40, seed=2)
    assert abs(check.mean - plan.predicted_risk) <= 5 * check.standard_error + 0.05 * plan.predicted_risk


def sys_problem(s, h):
    return _hsgd._problem(s, h["step_size"], h["noise_std"])


def test_hsgd_unreachable_target_says_the_smallest_value() -> None:
    with pytest.raises(ValueError, match="smallest surrogate rdp_epsilon found is"):
        privdyn.plan.hsgd(**dict(HSGD, rdp_epsilon=1e-12))
    with pytest.raises(ValueError, match=r"renyi_order must be in \(1.0, inf\)"):
        privdyn.plan.hsgd(**dict(HSGD, renyi_order=1.0))
    assert np.isfinite(privdyn.plan.hsgd(**dict(HSGD, rdp_epsilon=5.0)).predicted_risk)
