"""privdyn.sklearn: scikit-learn's estimator checks, the privacy record, bad input refused before any noise is drawn."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from privdyn.sklearn import AdaSSPRegression, DPLinearRegression, expected_failed_checks
from privdyn.sklearn._base import MAX_FEATURES, Preprocessed

ESTIMATORS = (DPLinearRegression, AdaSSPRegression)


def _data(n: int = 400, d: int = 3, seed: int = 0, noise: float = 0.1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) / math.sqrt(d)
    theta = rng.normal(size=d)
    return x, x @ theta + 0.3 + noise * rng.normal(size=n), theta


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_check_estimator(cls: type) -> None:
    from sklearn.utils.estimator_checks import check_estimator

    estimator = cls(feature_norm=1.0, label_bound=1.0, random_state=0)
    check_estimator(estimator, expected_failed_checks=expected_failed_checks(estimator))


def test_import_is_cheap() -> None:
    script = ("import sys\nimport privdyn, privdyn.sklearn\n"
              "print(' '.join(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'scipy', 'numba')))")
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
    assert out.strip() == ""


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_missing_bounds_are_named(cls: type) -> None:
    x, y, _ = _data()
    with pytest.raises(ValueError, match="feature_norm is required"):
        cls().fit(x, y)
    with pytest.raises(ValueError, match="label_bound is required"):
        cls(feature_norm=1.0).fit(x, y)


def _bad_inputs() -> list[tuple[str, dict[str, Any], Any, str]]:
    x, y, _ = _data(n=20)
    nan_x, inf_x, nan_y = x.copy(), x.copy(), y.copy()
    nan_x[3, 1], inf_x[0, 0], nan_y[5] = np.nan, np.inf, np.nan
    wide = np.zeros((3, MAX_FEATURES))
    return [
        ("epsilon=0", {"epsilon": 0.0}, (x, y), r"epsilon must be > 0; got epsilon=0.0"),
        ("epsilon<0", {"epsilon": -1.0}, (x, y), r"epsilon must be > 0; got epsilon=-1.0"),
        ("epsilon=nan", {"epsilon": math.nan}, (x, y), r"epsilon must be finite; got epsilon=nan"),
        ("delta=0", {"delta": 0.0}, (x, y), r"delta must be in \(0.0, 1.0\); got delta=0.0"),
        ("delta=1", {"delta": 1.0}, (x, y), r"delta must be in \(0.0, 1.0\); got delta=1.0"),
        ("delta>1", {"delta": 2.5}, (x, y), r"delta must be in \(0.0, 1.0\); got delta=2.5"),
        ("nan feature", {}, (nan_x, y), r"X must be finite \(no NaN or inf\); got X\[3, 1\]=nan"),
        ("inf feature", {}, (inf_x, y), r"X must be finite \(no NaN or inf\); got X\[0, 0\]=inf"),
        ("nan label", {}, (x, nan_y), r"y must be finite \(no NaN or inf\); got y\[5\]=nan"),
        ("complex label", {}, (x, y + 1j), r"y must be real numbers; got complex values"),
        ("one sample", {}, (x[:1], y[:1]), r"n_samples >= 2 rows; got n_samples = 1"),
        ("too wide", {}, (wide, np.zeros(3)), rf"at most {MAX_FEATURES - 1} features .* got X with {MAX_FEATURES}"),
        ("no feature_norm", {"feature_norm": None}, (x, y), r"feature_norm is required: a public bound"),
        ("feature_norm<=0", {"feature_norm": 0.0}, (x, y), r"feature_norm must be > 0; got feature_norm=0.0"),
        ("label_bound<=0", {"label_bound": -2.0}, (x, y), r"label_bound must be > 0; got label_bound=-2.0"),
    ]


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize(("case", "params", "data", "message"), _bad_inputs(), ids=[c[0] for c in _bad_inputs()])
def test_bad_input_is_refused_before_any_noise(cls: type, case: str, params: dict[str, Any], data: Any,
                                               message: str) -> None:
    rng = np.random.default_rng(7)
    state = rng.bit_generator.state
    estimator = cls(**{"feature_norm": 1.0, "label_bound": 1.0, "random_state": rng, **params})
    with pytest.raises(ValueError, match=message):
        estimator.fit(*data)
    assert rng.bit_generator.state == state  # no noise drawn, no order drawn: no privacy spent
    assert not hasattr(estimator, "coef_") and not hasattr(estimator, "privacy_")


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_sample_weights_are_refused(cls: type) -> None:
    x, y, _ = _data(n=20)
    with pytest.raises(ValueError, match="sample_weight must be None: privdyn's private regressors refuse"):
        cls(feature_norm=1.0, label_bound=1.0, random_state=0).fit(x, y, sample_weight=np.ones(20))


def test_estimator_specific_parameters() -> None:
    x, y, _ = _data(n=20)
    with pytest.raises(ValueError, match="schedule must be one of 'auto', 'constant'"):
        DPLinearRegression(feature_norm=1.0, label_bound=1.0, schedule="cosine").fit(x, y)
    with pytest.raises(ValueError, match=r"label_noise must be in \(0.0, 2.0\); got label_noise=2.0"):
        DPLinearRegression(feature_norm=1.0, label_bound=2.0, label_noise=2.0).fit(x, y)
    with pytest.raises(ValueError, match=r"failure_probability must be in \(0.0, 1.0\)"):
        AdaSSPRegression(feature_norm=1.0, label_bound=1.0, failure_probability=1.0).fit(x, y)
    with pytest.raises(TypeError, match="random_state must be None, an integer"):
        AdaSSPRegression(feature_norm=1.0, label_bound=1.0, random_state="seed").fit(x, y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_privacy_record(cls: type) -> None:
    from privdyn.plan._budget import dp_accounting_epsilon

    x, y, _ = _data(n=500)
    est = cls(epsilon=0.7, feature_norm=1.5, label_bound=2.0, random_state=3).fit(x, y)
    p = est.privacy_
    assert p["delta"] == pytest.approx(500**-1.1) and p["delta_rule"].startswith("1/n^1.1")
    assert p["epsilon"] <= 0.7 and p["requested_epsilon"] == 0.7
    assert dp_accounting_epsilon(p["zcdp"], p["delta"]) <= 0.7  # an independent conversion of the same zCDP
    assert p["neighboring"] == "replace_one" and p["guarantee"] == "bound" and p["is_dp_guarantee"]
    assert sum(share["zcdp"] for share in p["shares"]) == pytest.approx(p["zcdp"], rel=1e-12)
    assert any(share["use"].startswith("preprocessing") and share["zcdp"] == 0.0 for share in p["shares"])
    given = cls(epsilon=0.7, delta=1e-4, feature_norm=1.5, label_bound=2.0, random_state=3).fit(x, y)
    assert given.privacy_["delta"] == 1e-4 and given.privacy_["delta_rule"] == "given"
    for name in ("warm_start", "coef_path_", "loss_curve_", "n_iter_", "train_score_"):
        assert not hasattr(est, name)


def test_dpgd_noise_matches_the_accountant() -> None:
    """The planned σ_k recomputed by Proposition 4.1 give back the ρ whose zCDP the record reports."""
    from privdyn.privacy.iteration import noise_calibration, privacy_level
    from privdyn.sklearn._dpgd import _plan

    x, y, _ = _data(n=300)
    est = DPLinearRegression(epsilon=2.0, feature_norm=1.0, label_bound=1.0, random_state=0).fit(x, y)
    planned = _plan(300, 4, 2.0, 300**-1.1, "auto", 1 / math.sqrt(2))
    steps = planned["learning_rate"].step_sizes(300)
    rho = privacy_level(steps, noise_calibration(steps, rho=planned["rho"])).value
    assert rho == pytest.approx(planned["rho"], rel=1e-9)
    assert 0.5 * rho**2 == pytest.approx(est.privacy_["zcdp"], rel=1e-9)


def test_adassp_noise_by_dp_accounting() -> None:
    """The three releases, as Gaussian mechanisms of noise multiplier std/sensitivity, compose to <= the request."""
    import dp_accounting
    from dp_accounting import rdp

    x, y, _ = _data(n=1000)
    est = AdaSSPRegression(epsilon=1.0, feature_norm=1.0, label_bound=1.0, random_state=0).fit(x, y)
    accountant = rdp.RdpAccountant()
    for share in est.privacy_["shares"][:3]:
        accountant.compose(dp_accounting.GaussianDpEvent(share["noise_std"] / share["sensitivity"]))
    assert accountant.get_epsilon(est.privacy_["delta"]) <= 1.0
    radius = math.sqrt(1.0 + 1.0 / 3.0)
    assert [s["sensitivity"] for s in est.privacy_["shares"][:3]] == pytest.approx(
        [radius**2, math.sqrt(2) * radius**2, 2 * radius])


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_large_budget_recovers_the_fit(cls: type) -> None:
    """With a huge ε the private fit is close to least squares on the bounded data (a check that can fail)."""
    x, y, theta = _data(n=20_000, d=3, noise=0.05)
    x /= np.linalg.norm(x, axis=1, keepdims=True)  # rows on the sphere: the planner's model, E||x||^2 = F^2
    y = x @ theta + 0.3 + 0.05 * np.random.default_rng(9).normal(size=len(y))
    est = cls(epsilon=1e4, feature_norm=1.0, label_bound=4.0, random_state=1).fit(x, y)
    assert np.allclose(est.coef_, theta, atol=0.05)
    assert est.intercept_ == pytest.approx(0.3, abs=0.05)


def test_intercept_is_a_constant_feature_inside_the_ball() -> None:
    x, y, _ = _data(n=50, d=4)
    prep = Preprocessed(x * 10, y, feature_norm=2.0, label_bound=0.5, fit_intercept=True)
    assert np.all(np.linalg.norm(prep.features, axis=1) <= prep.radius * (1 + 1e-12))
    assert np.all(prep.features[:, -1] == 2.0 / 2.0) and prep.radius == pytest.approx(2.0 * math.sqrt(1.25))
    assert np.all(np.abs(prep.labels) <= 0.5)


def test_plan_reads_public_numbers_only() -> None:
    """Without a planning share, two datasets of the same shape get the same hyper-parameters (nothing is learned
    from X or y)."""
    a = DPLinearRegression(feature_norm=1.0, label_bound=1.0, planning_share=None, random_state=0).fit(
        *_data(seed=1)[:2])
    b = DPLinearRegression(feature_norm=1.0, label_bound=1.0, planning_share=None, random_state=0).fit(
        *_data(seed=2)[:2])
    assert a.plan_["hyperparameters"] == b.plan_["hyperparameters"]
    assert a.plan_["inputs"]["spectrum"] == "identity"


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_reproducible_pickle_pandas_pipeline_gridsearch(cls: type) -> None:
    import pandas as pd
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    x, y, _ = _data(n=300)
    frame = pd.DataFrame(x, columns=["a", "b", "c"])
    est = cls(feature_norm=1.0, label_bound=2.0, random_state=5).fit(frame, pd.Series(y))
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    again = cls(feature_norm=1.0, label_bound=2.0, random_state=5).fit(x, y)
    # the same noise; a DataFrame's column-major copy may change the rounding of X^T X in the last bits
    assert np.allclose(est.coef_, again.coef_, rtol=1e-12, atol=1e-12)
    assert est.intercept_ == pytest.approx(again.intercept_, rel=1e-12, abs=1e-12)
    assert np.array_equal(cls(feature_norm=1.0, label_bound=2.0, random_state=5).fit(x, y).coef_, again.coef_)
    clone = pickle.loads(pickle.dumps(est))
    assert np.array_equal(clone.predict(frame), est.predict(frame))
    pipe = make_pipeline(FunctionTransformer(lambda v: 0.5 * v), cls(feature_norm=1.0, label_bound=2.0,
                                                                    random_state=0)).fit(x, y)
    assert pipe.predict(x).shape == (300,)
    search = GridSearchCV(cls(feature_norm=1.0, label_bound=2.0, random_state=0), {"epsilon": [0.5, 2.0]}, cv=2)
    search.fit(x, y)
    assert search.best_params_["epsilon"] in (0.5, 2.0)


def test_planning_share_is_accounted_and_reproducible() -> None:
    """A planning share estimates the planner's statistics under DP: its zCDP is in privacy_, the total stays <= ε."""
    x, y, theta = _data(n=20_000, d=3, noise=0.05)  # rows far inside the ball: the public-bound model is off
    params = {"epsilon": 1e4, "feature_norm": 4.0, "label_bound": 10.0, "planning_share": 0.2, "random_state": 1}
    est = DPLinearRegression(**params).fit(x, y)
    shares = est.privacy_["shares"]
    assert shares[1]["fraction"] == 0.2 and len(shares[1]["mechanisms"]) == 3
    assert shares[0]["zcdp"] + shares[1]["zcdp"] == pytest.approx(est.privacy_["zcdp"], rel=1e-12)
    assert est.privacy_["epsilon"] <= 1e4 and est.plan_["inputs"]["spectrum"] == "data"
    assert np.allclose(est.coef_, theta, atol=0.05)  # the estimated spectrum fixes the step sizes
    again = DPLinearRegression(**params).fit(x, y)
    assert np.array_equal(est.coef_, again.coef_)
    with pytest.raises(ValueError, match="label_noise must be None with planning_share"):
        DPLinearRegression(**params, label_noise=1.0).fit(x, y)
    with pytest.raises(ValueError, match=r"planning_share must be in \(0.0, 1.0\); got planning_share=1.0"):
        DPLinearRegression(**{**params, "planning_share": 1.0}).fit(x, y)


def test_default_spends_the_auto_share_and_reports_its_prediction() -> None:
    x, y, _ = _data(n=5000, d=4)
    est = DPLinearRegression(epsilon=3.0, feature_norm=3.0, label_bound=3.0, random_state=2).fit(x, y)
    assert est.plan_["planning_share"] == 0.1 and est.privacy_["shares"][1]["fraction"] == 0.1
    assert est.training_["preconditioner"].shape == (5, 5)
    p = est.prediction_
    assert set(p) == {"excess_mse", "test_mse", "interval", "label", "reasons"}
    assert 0 < p["interval"][0] <= p["excess_mse"] <= p["interval"][1] and p["test_mse"] > p["excess_mse"]
    assert p["label"] in ("model", "heuristic") and (p["label"] == "model" or p["reasons"])
    public = DPLinearRegression(epsilon=3.0, feature_norm=3.0, label_bound=3.0, planning_share=None,
                                random_state=2).fit(x, y)
    assert public.plan_["planning_share"] is None and public.prediction_["label"] == "heuristic"
    assert "public numbers only" in public.prediction_["reasons"][0]
    with pytest.raises(ValueError, match="planning_share"):
        DPLinearRegression(feature_norm=3.0, label_bound=3.0, planning_share="often").fit(x, y)
    with pytest.raises(ValueError, match=r"planning_share must be in \(0.0, 1.0\); got planning_share=-0.1"):
        DPLinearRegression(feature_norm=3.0, label_bound=3.0, planning_share=-0.1).fit(x, y)


def test_auto_schedule_leaves_the_harmonic_family_to_be_asked_for_by_name() -> None:
    """``schedule="auto"`` plans from AUTO_SCHEDULES only, with or without a planning share (the harmonic family's
    tiny offsets make the fit hang on the weakest direction's contraction; see AUTO_SCHEDULES); by name it runs."""
    from privdyn.sklearn._dpgd import AUTO_SCHEDULES

    x, y, _ = _data(n=5000, d=4)
    for share in ("auto", None):
        est = DPLinearRegression(epsilon=3.0, feature_norm=3.0, label_bound=3.0, planning_share=share,
                                 random_state=2).fit(x, y)
        searched = [est.plan_["hyperparameters"]["schedule"]] + [a.split(" ")[0] for a in est.plan_["alternatives"]]
        assert set(searched) == set(AUTO_SCHEDULES), (share, searched)
    harmonic = DPLinearRegression(epsilon=3.0, feature_norm=3.0, label_bound=3.0, schedule="harmonic",
                                  random_state=2).fit(x, y)
    assert harmonic.plan_["hyperparameters"]["schedule"] == "harmonic"
    assert harmonic.training_["hyperparameters"].learning_rate.harmonic_offset > 0


def test_default_fit_reaches_least_squares_as_epsilon_grows() -> None:
    """Rows far inside the public ball, a correlated design: the default fit's excess test MSE over least squares
    falls with ε, and vanishes at ε = 1e8, where the release resolves the spectrum and the fit is its least-squares
    solution (one pass of DP-GD, ``solver="dpgd"``, stops short of least squares)."""
    rng = np.random.default_rng(7)
    n, d = 20_000, 6
    mix = rng.normal(size=(d, d)) * np.geomspace(1.0, 0.05, d)
    x = rng.normal(size=(n + 5000, d)) @ mix.T
    y = x @ rng.normal(size=d) + 0.5 * rng.normal(size=n + 5000)
    from sklearn.linear_model import LinearRegression

    base = float(np.mean((LinearRegression().fit(x[:n], y[:n]).predict(x[n:]) - y[n:]) ** 2))
    excess, solvers = [], []
    for epsilon in (1.0, 1e8):
        est = DPLinearRegression(epsilon=epsilon, feature_norm=20.0, label_bound=20.0, random_state=3).fit(x[:n],
                                                                                                           y[:n])
        excess.append(float(np.mean((est.predict(x[n:]) - y[n:]) ** 2)) / base - 1.0)
        solvers.append(est.training_["solver"])
    assert solvers == ["dpgd", "release"] and excess[1] < excess[0] and abs(excess[1]) < 1e-4, (excess, solvers)
    dpgd = DPLinearRegression(epsilon=1e8, feature_norm=20.0, label_bound=20.0, solver="dpgd",
                              random_state=3).fit(x[:n], y[:n])
    assert dpgd.training_["solver"] == "dpgd" and dpgd.plan_["release_solution"] is None


def test_release_solution_is_accounted_as_five_gaussian_releases() -> None:
    """Where the release solution is chosen, privacy_ composes the planning release's three Gaussian mechanisms
    and the second release's two to the planner's total zCDP, its membership rates are the exact Gaussian ones,
    the prediction is the first-order SSP risk, and there is no DP-GD schedule to read."""
    rng = np.random.default_rng(11)
    n, d = 50_000, 4
    x = rng.normal(size=(n, d))
    y = x @ np.array([0.5, -0.3, 0.2, 0.1]) + 0.3 * rng.normal(size=n)
    est = DPLinearRegression(epsilon=300.0, feature_norm=8.0, label_bound=4.0, random_state=0).fit(x, y)
    assert est.training_["solver"] == "release" and est.plan_["release_solution"]["chosen"]
    statement = est.privacy_
    assert statement.epsilon <= 300.0 and statement.training_zcdp + est.privacy_["shares"][1]["zcdp"] == (
        pytest.approx(statement.zcdp))
    assert statement.cross_checks["zcdp_of_the_releases"] == pytest.approx(statement.zcdp, rel=1e-9)
    assert statement.cross_checks["epsilon_exact_gaussian_composition"] <= statement.epsilon
    assert [m["statistic"] for m in statement["shares"][0]["mechanisms"]] == ["second_moment_features",
                                                                              "feature_label_moment"]
    p = est.prediction_
    assert p["label"] == "model" and p["interval"][0] <= p["excess_mse"] <= p["interval"][1]
    with pytest.raises(ValueError, match="solver='dpgd'"):
        est.training_schedule()
    again = DPLinearRegression(epsilon=300.0, feature_norm=8.0, label_bound=4.0, random_state=0).fit(x, y)
    np.testing.assert_array_equal(again.coef_, est.coef_)
    with pytest.raises(ValueError, match="solver"):
        DPLinearRegression(feature_norm=8.0, label_bound=4.0, solver="ssp").fit(x, y)


def test_adassp_prediction_is_the_first_order_risk_of_its_release() -> None:
    """AdaSSP's prediction_ is the first-order excess over least squares of its own release (post-processing): it
    does not move the coefficients, labels an unresolved release heuristic, and says what it leaves out."""
    rng = np.random.default_rng(5)
    n, d = 40_000, 3
    x = rng.normal(size=(n, d))
    y = x @ np.array([0.4, -0.2, 0.3]) + 0.5 * rng.normal(size=n)
    est = AdaSSPRegression(epsilon=20.0, feature_norm=8.0, label_bound=4.0, random_state=1).fit(x, y)
    p = est.prediction_
    assert set(p) == {"excess_mse", "test_mse", "interval", "label", "reasons"}
    assert p["label"] == "model" and p["test_mse"] is None
    assert p["interval"][0] <= p["excess_mse"] <= p["interval"][1] and p["excess_mse"] > 0
    assert any("excess over least squares" in r for r in p["reasons"])
    tiny = AdaSSPRegression(epsilon=0.5, feature_norm=8.0, label_bound=4.0, random_state=1).fit(x[:2], y[:2])
    assert tiny.prediction_["label"] == "heuristic"  # a release of two rows: no eigenvalue resolved, no error
    small = AdaSSPRegression(epsilon=0.5, feature_norm=8.0, label_bound=4.0, random_state=1).fit(x[:300], y[:300])
    assert small.prediction_["label"] == "heuristic"
    assert small.prediction_["reasons"][0].startswith("first-order perturbation")
