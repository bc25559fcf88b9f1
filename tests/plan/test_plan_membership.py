"""The planner's statements state what an attacker can do (zCDP plans, DP-SGD plans with a PLD) or why they do not
(DP-SGD without one, hsgd)."""

from __future__ import annotations

import math

import pytest

import privdyn.plan
from privdyn.privacy.membership import MEMBERSHIP_FPRS, gaussian_tpr, zcdp_membership


def _zcdp_rates(plan: privdyn.plan.Plan) -> list[float]:
    statement = plan.privacy
    assert statement.membership is not None and statement.membership_reason is None
    assert statement.membership == zcdp_membership(statement.zcdp)  # the total zCDP, planning share included
    assert plan.to_json()["privacy_statement"]["membership"]["fpr"] == list(MEMBERSHIP_FPRS)
    rates = statement.membership["tpr"]
    for fpr, tpr in zip(MEMBERSHIP_FPRS, rates, strict=True):
        assert gaussian_tpr(math.sqrt(2.0 * statement.zcdp), fpr) - 1e-12 <= tpr <= 1.0
    return rates


def test_langevin_and_dpgd_plans_carry_membership_rates() -> None:
    langevin = privdyn.plan.langevin(n=1000, d=10, strong_convexity=1.0, smoothness=2.0, lipschitz=1.0,
                                     epsilon=1.0, delta=1e-5)
    dpgd = privdyn.plan.dpgd(n=100, d=5, spectrum="uniform", target_norm=1.0, label_noise=0.5, epsilon=1.0,
                             delta=1e-5, schedules=("constant",))
    assert _zcdp_rates(langevin) == pytest.approx(_zcdp_rates(dpgd), rel=1e-6)  # the same budget, (1, 1e-5)


def test_a_planning_share_is_in_the_rates() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 3))
    y = x @ np.array([0.5, -0.2, 0.1]) + 0.3 * rng.normal(size=300)
    plan = privdyn.plan.dpgd(data=(x, y), planning_share=0.2, feature_norm_bound=3.0, label_bound=3.0, zcdp=0.1,
                             rng=np.random.default_rng(1), schedules=("constant",))
    assert plan.privacy.zcdp == pytest.approx(0.1, rel=1e-12) and plan.planning.zcdp == pytest.approx(0.02)
    _zcdp_rates(plan)


def test_a_dpsgd_plan_with_a_pld_carries_the_records_rates() -> None:
    from privdyn.privacy.mechanism import DPSGDMechanism

    plan = privdyn.plan.dpsgd(n=1000, batch_size=50, num_steps=10, epsilon=1.0, delta=1e-5, sampler="poisson",
                              neighboring="add_remove", strategies=("independent",))
    record = DPSGDMechanism(noise_multiplier=plan.privacy["noise_multiplier"], n=1000, batch_size=50, num_steps=10,
                            sampler="poisson", neighboring="add_remove")
    assert plan.privacy.membership_reason is None
    assert plan.privacy.membership == record.membership()
    assert plan.to_json()["privacy_statement"]["membership"]["fpr"] == list(MEMBERSHIP_FPRS)


def test_dpsgd_and_hsgd_plans_say_why_they_have_no_rates() -> None:
    dpsgd = privdyn.plan.dpsgd(n=1000, batch_size=50, num_steps=10, epsilon=1.0, delta=1e-5, sampler="fixed_size",
                               neighboring="replace_one", strategies=("independent",))
    assert dpsgd.privacy.membership is None and "no privacy-loss distribution" in dpsgd.privacy["membership_reason"]
    hsgd = privdyn.plan.hsgd(n=50, d=20, label_noise=0.5, ridge=0.1, renyi_order=2.0, rdp_epsilon=2.0)
    assert hsgd.privacy.membership is None and "surrogate" in hsgd.privacy["membership_reason"]
    assert "no rate stated" in hsgd.privacy.text()
