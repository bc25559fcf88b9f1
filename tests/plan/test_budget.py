"""The budget of a plan: (epsilon, delta) -> zCDP on the safe side of both conversions, and bad budgets refused."""

import math

import dp_accounting
import pytest
from dp_accounting import rdp

from privdyn.plan import _budget
from privdyn.privacy import conversions


def _dp_accounting(zcdp: float, delta: float) -> float:
    accountant = rdp.RdpAccountant()
    accountant.compose(dp_accounting.ZCDpEvent(zcdp))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-6), (1.0, 1e-5), (2.0, 1e-5), (8.0, 1e-8), (30.0, 1e-3)])
def test_zcdp_for_epsilon_is_safe_for_both_conversions_and_tight(epsilon: float, delta: float) -> None:
    zcdp = _budget.zcdp_for_epsilon(epsilon, delta)
    assert _dp_accounting(zcdp, delta) <= epsilon
    assert conversions.zcdp_to_epsilon(zcdp, delta=delta, method="optimal") <= epsilon
    # tight: 0.1% more zCDP breaks one of the two
    bigger = zcdp * 1.001
    assert (_dp_accounting(bigger, delta) > epsilon
            or conversions.zcdp_to_epsilon(bigger, delta=delta, method="optimal") > epsilon)
    # never worse than the Bun-Steinke closed form (the paper's Proposition A.3)
    assert zcdp >= conversions.epsilon_to_zcdp(epsilon, delta=delta)


def test_rho_from_zcdp_rounds_down() -> None:
    for z in (1e-9, 0.1, 0.5, 3.7, 1e4):
        rho = _budget.rho_from_zcdp(z)
        assert 0.5 * rho * rho <= z
        assert math.isclose(rho, math.sqrt(2 * z), rel_tol=1e-14)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"epsilon": 0.0, "delta": 1e-5}, "epsilon must be > 0"),
    ({"epsilon": -1.0, "delta": 1e-5}, "epsilon must be > 0"),
    ({"epsilon": 1.0, "delta": 0.0}, r"delta must be in \(0.0, 1.0\)"),
    ({"epsilon": 1.0, "delta": 1.0}, r"delta must be in \(0.0, 1.0\)"),
    ({"epsilon": 1.0}, "delta is required"),
    ({}, "exactly one of epsilon"),
    ({"epsilon": 1.0, "delta": 1e-5, "rho": 1.0}, "exactly one of epsilon"),
    ({"rho": -1.0}, "rho must be > 0"),
    ({"zcdp": 0.0}, "zcdp must be > 0"),
])
def test_bad_budgets_name_the_parameter(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _budget.budget(**kwargs)


def test_rho_and_zcdp_budgets() -> None:
    assert _budget.budget(rho=1.0).zcdp == 0.5
    b = _budget.budget(zcdp=0.3, delta=1e-5)
    assert b.zcdp == 0.3 and b.epsilon is None and b.delta == 1e-5
