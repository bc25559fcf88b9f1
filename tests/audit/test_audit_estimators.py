"""Audit rows of the estimators and the planner: no violation at the contract's runs and confidence, power against a
planted bug, and reductions that reproduce the objects' own computations (same noise, same numbers)."""

import json
import math

import numpy as np
import pytest

from privdyn.audit import audit, audit_mechanism, mechanism
from privdyn.audit.core import DEFAULT_CONFIDENCE, DEFAULT_RUNS
from privdyn.audit.dpgd_rows import stated_law
from privdyn.audit.estimators import adassp_reference
from privdyn.cli import main
from privdyn.sklearn import AdaSSPRegression

NAMES = ["sklearn-dplinearregression", "sklearn-adassp", "plan-dpgd"]


def test_rows_have_no_violation_at_the_contract():
    rows = audit(NAMES, runs=DEFAULT_RUNS, confidence=DEFAULT_CONFIDENCE, seed=0)
    assert [row.mechanism for row in rows] == NAMES
    for row in rows:
        assert row.runs == mechanism(row.mechanism).runs_for(DEFAULT_RUNS) and row.confidence >= 1 - 1e-6
        assert row.guarantee == "bound" and row.method == "exact_gaussian"
        assert not row.violation and row.audited_lower_bound <= row.epsilon, row
        assert row.threshold_lower_bound <= row.epsilon, row
        assert row.law_check, row  # the end-to-end runs have the stated law


def test_planted_bug_is_flagged_on_the_plan():
    """plan-dpgd runs algorithms.dpgd.dpgd at rho / noise_factor: the exact law of the halved noise is a violation
    and the runs confirm it (the estimator rows have no noise knob: their bugs are planted by the mutants)."""
    row = audit_mechanism(mechanism("plan-dpgd", noise_factor=0.5), runs=2_000, seed=0)
    assert row.violation and row.law_check, row
    assert row.audited_lower_bound > 1.8 * row.epsilon
    with pytest.raises(ValueError, match="mutants"):
        mechanism("sklearn-dplinearregression", noise_factor=0.5)


def test_the_stated_law_is_proposition_4_1():
    """Canary first (or a constant schedule): a Gaussian shift of exactly the statement's rho."""
    for name in ("plan-dpgd", "sklearn-dplinearregression"):
        mech = mechanism(name)
        law = mech.gaussian_law()
        shift = abs(law.neighbour_mean - law.mean) / law.std
        rho = (math.sqrt(2 * mech.plan().privacy.training_zcdp) if name == "plan-dpgd"
               else mech.fitted().privacy_["rho"])
        assert shift == pytest.approx(rho, rel=1e-9)
    with pytest.raises(ValueError, match="not above the clip"):
        stated_law(feature=1.0, label=-0.1, neighbour_label=0.1, step_sizes=np.full(5, 0.1), position=0,
                   clip_threshold=0.5, rho=1.0)


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_adassp_reference_replays_the_fit(seed):
    mech = mechanism("sklearn-adassp")
    features, labels, neighbour, neighbour_labels = mech.data()
    for x, y in ((features, labels), (neighbour, neighbour_labels)):
        fitted = mech.estimator(np.random.default_rng(seed)).fit(x, y)
        theta, ridge = adassp_reference(x, y, mech.noise_stds(), mech.failure_probability,
                                        np.random.default_rng(seed))
        np.testing.assert_allclose(fitted.coef_, theta, rtol=1e-12, atol=1e-14)
        assert fitted.ridge_ == pytest.approx(ridge, rel=1e-12, abs=1e-14)
    # the stated noise is the recorded one (the fit calibrates s = Delta / sqrt(2 zcdp) per release)
    recorded = [share["noise_std"] for share in mech.fitted().privacy_["shares"] if "noise_std" in share]
    np.testing.assert_allclose(mech.noise_stds(), recorded, rtol=1e-12)
    assert isinstance(mech.fitted(), AdaSSPRegression)


def test_reported_epsilon_is_the_objects_own():
    lr = mechanism("sklearn-dplinearregression")
    assert lr.reported().value == lr.fitted().privacy_["epsilon"]
    assert lr.reported().guarantee == lr.fitted().privacy_["guarantee"] == "bound"
    ada = mechanism("sklearn-adassp")
    assert ada.reported().value == ada.fitted().privacy_["epsilon"]
    plan = mechanism("plan-dpgd")
    assert plan.reported().value == plan.plan().privacy.epsilon


def test_adassp_canary_attains_the_first_two_sensitivities():
    mech = mechanism("sklearn-adassp")
    first, second = mech.statistics()
    shares = {share["use"]: share for share in mech.fitted().privacy_["shares"] if "sensitivity" in share}
    sensitivity = [shares[f"Gaussian release of the {name}"]["sensitivity"]
                   for name in ("min eigenvalue", "second moment features", "feature label moment")]
    upper = np.triu_indices(2)
    assert abs(second.min_eigenvalue - first.min_eigenvalue) == pytest.approx(sensitivity[0])
    assert np.linalg.norm((second.gram - first.gram)[upper]) == pytest.approx(sensitivity[1])
    assert np.linalg.norm(second.moment - first.moment) == pytest.approx(sensitivity[2] / math.sqrt(2))
    # the pair's squared whitened shift is 5/6 of what the accountant composes (2 * zcdp)
    law = mech.gaussian_law()
    assert law.neighbour_mean**2 == pytest.approx(5 / 6 * 2 * mech.fitted().privacy_["zcdp"], rel=1e-12)


def test_scores_are_reproducible_and_oriented():
    for name in NAMES:
        mech = mechanism(name)
        first = mech.scores(3, "k", 200)
        np.testing.assert_array_equal(first[0], mech.scores(3, "k", 200)[0])
        if name != "sklearn-adassp":  # AdaSSP's fitted coef_ is dominated by its noise on this pair: no orientation
            assert first[1].mean() > first[0].mean()


def test_cli_json_rows(capsys):
    assert main(["audit", "sklearn-adassp", "--json", "--runs", "200"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["mechanism"] == "sklearn-adassp" and row["runs"] == 100 and not row["violation"]
    assert row["law_check"] and row["entry_point"] == "privdyn.sklearn.AdaSSPRegression.fit"


# ---------------------------------------------------------------------------------------------------------------
# the planner's other plans
# ---------------------------------------------------------------------------------------------------------------


def test_plan_dpsgd_has_no_violation_at_the_contract():
    row = audit_mechanism(mechanism("plan-dpsgd"), runs=DEFAULT_RUNS, confidence=DEFAULT_CONFIDENCE, seed=0)
    assert row.runs >= 10_000 and row.confidence >= 1 - 1e-6 and row.law_check
    assert row.guarantee == "bound" and row.method == "threshold_test"
    assert not row.violation and row.audited_lower_bound <= row.epsilon, row


def test_plan_dpsgd_planted_bug_is_flagged_at_1e5_runs():
    """The threshold test needs 10^5 runs (as the dpsgd-poisson row): at 10^4 it certifies 0.59 against the
    reported 1.00 (seed 0), at 10^5 1.09; the honest plan certifies 0.30 at 10^5."""
    row = audit_mechanism(mechanism("plan-dpsgd", noise_factor=0.5), runs=100_000, seed=0)
    assert row.violation, row


def test_plan_dpsgd_reduction_runs_the_plans_numbers():
    from privdyn.privacy.correlated import LambdaCGD

    mech = mechanism("plan-dpsgd")
    plan = mech.plan()
    reduction = mech.reduction()
    assert mech.reported().value == plan.privacy.epsilon and mech.reported().guarantee == plan.privacy.guarantee
    hyper = plan.hyperparameters
    assert reduction.noise_multiplier == hyper["noise_multiplier"] == plan.noise_multiplier
    assert (reduction.sampler, reduction.neighboring) == (hyper["sampler"], hyper["neighboring"])
    assert (reduction.n, reduction.batch_size, reduction.num_steps) == (plan.sizes.n, plan.sizes.batch_size,
                                                                        plan.sizes.num_steps)
    assert reduction.noise_correlation == hyper["noise_correlation"] == 0.0
    np.testing.assert_array_equal(LambdaCGD(reduction.noise_correlation).noise_matrix(reduction.num_steps),
                                  plan.strategy.noise_matrix(reduction.num_steps))
    # the registered row's accountant at the plan's numbers is the plan's statement (the same allow-listed one)
    assert reduction.reported().value == pytest.approx(plan.privacy.epsilon, rel=1e-12)
    assert mechanism("plan-dpsgd", noise_factor=0.5).reduction().noise_factor == 0.5


def test_plan_langevin_has_no_violation_at_the_contract():
    row = audit_mechanism(mechanism("plan-langevin"), runs=DEFAULT_RUNS, confidence=DEFAULT_CONFIDENCE, seed=0)
    assert row.guarantee == "bound" and row.method == "exact_gaussian" and row.law_check, row
    assert not row.violation and row.threshold_lower_bound <= row.epsilon, row


def test_plan_langevin_planted_bug_is_flagged():
    """Flagged by the exact law at 500 runs already (2.31 against 2.00); the law check confirms the halved noise."""
    row = audit_mechanism(mechanism("plan-langevin", noise_factor=0.5), runs=500, seed=0)
    assert row.violation and row.law_check, row


def test_plan_langevin_reduction_runs_the_plans_numbers():
    from privdyn.algorithms.noisy_gd import QuadraticLoss, noisy_gd
    from privdyn.rng import generator

    mech = mechanism("plan-langevin")
    plan = mech.plan()
    reduction = mech.reduction()
    assert mech.reported().value == plan.privacy.epsilon and mech.reported().guarantee == plan.privacy.guarantee
    hyper = plan.hyperparameters
    assert (reduction.step_size, reduction.noise_scale, reduction.num_steps, reduction.sensitivity) == (
        hyper["step_size"], hyper["noise_scale"], hyper["num_steps"], hyper["sensitivity"])
    assert reduction.n == plan.constants.n
    # the plan's noise_std is the per-step std the reduction's runs draw, sqrt(2 eta) sigma
    assert math.sqrt(2 * reduction.step_size) * reduction.noise_scale == pytest.approx(hyper["noise_std"], rel=1e-12)
    # the runs are noisy GD itself on the canary pair at the plan's numbers (same streams, same numbers)
    _, neighbour = reduction._data()
    scores = mech.scores(4, "k", 60)
    direct = noisy_gd(QuadraticLoss(), neighbour, num_steps=hyper["num_steps"], step_size=hyper["step_size"],
                      noise_scale=hyper["noise_scale"], rng=generator(4, "k/D'"), num_runs=20, strong_convexity=1.0)
    np.testing.assert_array_equal(scores[1][:20], direct[:, 0])  # the first part: one Generator for all runs
    # the exact divergence of the propagated law is below the plan's zCDP (Corollary 1 is an upper bound)
    law = mech.gaussian_law()
    assert ((law.neighbour_mean - law.mean) / law.std) ** 2 / 2 <= plan.privacy.zcdp


# ---------------------------------------------------------------------------------------------------------------
# DPLinearRegression with a planning share
# ---------------------------------------------------------------------------------------------------------------

SHARE = "sklearn-dplinearregression-planning-share"


def test_planning_share_row_has_no_violation_at_the_contract():
    row = audit_mechanism(mechanism(SHARE), runs=DEFAULT_RUNS, confidence=DEFAULT_CONFIDENCE, seed=0)
    assert row.guarantee == "bound" and row.method == "exact_gaussian" and row.law_check, row
    assert not row.violation and row.threshold_lower_bound <= row.epsilon, row


def test_planning_share_audits_the_composition_the_statement_reports():
    """The audited shift is sqrt(||w||^2 + rho^2): S_xy's third of the planning share and the training share
    (0.0866 of the reported 0.1083 zCDP)."""
    mech = mechanism(SHARE)
    privacy = mech.fitted().privacy_
    law = mech.gaussian_law()
    audited_zcdp = law.neighbour_mean**2 / 2
    planning = [share for share in privacy["shares"] if "mechanisms" in share][0]
    training = [share for share in privacy["shares"] if share["use"].startswith("training")][0]
    assert audited_zcdp == pytest.approx(training["zcdp"] + planning["zcdp"] / 3, rel=1e-9)
    assert audited_zcdp <= privacy["zcdp"]


RELEASE = "sklearn-dplinearregression-release-solution"


@pytest.mark.slow
def test_release_solution_row_has_no_violation_at_the_contract():
    row = audit_mechanism(mechanism(RELEASE), runs=DEFAULT_RUNS, confidence=DEFAULT_CONFIDENCE, seed=0)
    assert row.guarantee == "bound" and row.method == "exact_gaussian" and row.law_check, row
    assert not row.violation and row.audited_lower_bound <= row.epsilon, row


def test_release_solution_row_audits_the_training_share_of_the_statement():
    """The audited shift is S_xy's move over the second release's stated noise: its zCDP is that mechanism's,
    half the training share, within the total the statement reports."""
    mech = mechanism(RELEASE)
    privacy = mech.fitted().privacy_
    assert mech.fitted().training_["solver"] == "release"
    audited_zcdp = mech.gaussian_law().neighbour_mean ** 2 / 2
    training = privacy["shares"][0]
    assert audited_zcdp == pytest.approx(training["zcdp"] / 2, rel=1e-9)
    assert audited_zcdp <= privacy["zcdp"]


# ---------------------------------------------------------------------------------------------------------------
# the hsgd plan (a surrogate: a finding, never a violation)
# ---------------------------------------------------------------------------------------------------------------


def test_plan_hsgd_row_at_the_contract_is_a_finding():
    row = audit_mechanism(mechanism("plan-hsgd"), runs=DEFAULT_RUNS, confidence=DEFAULT_CONFIDENCE, seed=0)
    assert row.guarantee == "surrogate" and row.method == "threshold_test" and not row.violation, row
    # measured at seed 0: 0.25 against the surrogate's 1.70 (no sign of under-reporting at 10^4 runs)
    assert row.audited_lower_bound <= row.epsilon, row


def test_plan_hsgd_halved_noise_shows_in_the_runs_but_is_not_a_violation():
    honest = audit_mechanism(mechanism("plan-hsgd"), runs=DEFAULT_RUNS, seed=0)
    planted = audit_mechanism(mechanism("plan-hsgd", noise_factor=0.5), runs=DEFAULT_RUNS, seed=0)
    assert planted.epsilon == honest.epsilon and not planted.violation
    assert planted.audited_lower_bound > honest.audited_lower_bound + 0.3, (honest, planted)


def test_plan_hsgd_runs_the_plans_numbers_on_its_own_sample():
    from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd
    from privdyn.privacy.conversions import rdp_to_epsilon

    mech = mechanism("plan-hsgd")
    plan = mech.plan()
    extra = plan.privacy.extra
    assert mech.reported().value == rdp_to_epsilon([extra["renyi_order"]], [extra["rdp_epsilon"]],
                                                   delta=mech.delta)[0]
    assert mech.reported().guarantee == plan.privacy.guarantee == "surrogate"
    (features, labels), (other, other_labels), weights = mech.datasets()
    # D' differs from the plan's sample in one record, replaced by the plan's first pair's other record
    differs = np.flatnonzero(np.any(features != other, axis=1) | (labels != other_labels))
    assert differs.tolist() == [int(plan.setting.pairs.indices[0, 0])]
    np.testing.assert_array_equal(other[differs[0]], plan.setting.pairs.other_features[0])
    # the runs are the simulator with the plan's step size, noise std and ridge, shuffled once (same streams)
    hyper = plan.hyperparameters
    sim = simulate_noisy_sgd(data=plan.setting.design, dataset=(other, other_labels), shuffle=True,
                             x0=np.zeros(mech.dim), ridge=hyper["ridge"], num_steps=plan.setting.n, num_runs=30,
                             seed=5, unit_key="k/D'", step_size=hyper["step_size"], noise_std=hyper["noise_std"],
                             iterate_steps=[plan.setting.n])
    np.testing.assert_array_equal(mech.scores(5, "k", 30)[1], sim.iterates[:, 0, :] @ weights)


def test_plan_hsgd_surrogate_gap_is_a_finding_on_the_exact_per_position_laws():
    """The exact per-position laws are the simulator's law for that order (mean and variance of w^T x_n within five
    standard errors); the gap on the audited pair is measured at -12.4% (the surrogate under-reports)."""
    from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd

    mech = mechanism("plan-hsgd")
    plan = mech.plan()
    hyper = plan.hyperparameters
    gap = mech.surrogate_gap()
    assert -0.2 < gap < 0.0
    (features, labels), _, weights = mech.datasets()
    i = int(plan.setting.pairs.indices[0, 0])
    rest = [k for k in range(mech.n) if k != i]
    position = 4
    steps = rest[:position] + [i] + rest[position:]
    eta, ridge, sigma = hyper["step_size"], hyper["ridge"], hyper["noise_std"]
    mean, cov = np.zeros(mech.dim), np.zeros((mech.dim, mech.dim))
    for k in steps:
        contraction = (1 - eta * ridge) * np.eye(mech.dim) - eta * np.outer(features[k], features[k])
        mean = contraction @ mean + eta * labels[k] * features[k]
        cov = contraction @ cov @ contraction.T + (eta * sigma) ** 2 * np.eye(mech.dim)
    runs = 4000
    sim = simulate_noisy_sgd(data=plan.setting.design, dataset=(features[steps], labels[steps]),
                             x0=np.zeros(mech.dim), ridge=ridge, num_steps=mech.n, num_runs=runs, seed=1,
                             unit_key="law", step_size=eta, noise_std=sigma, iterate_steps=[mech.n])
    score = sim.iterates[:, 0, :] @ weights
    std = math.sqrt(weights @ cov @ weights)
    assert abs(score.mean() - weights @ mean) < 5 * std / math.sqrt(runs)
    assert abs(score.var(ddof=1) - std**2) < 5 * std**2 * math.sqrt(2 / (runs - 1))
