"""dpgd plans from data: the data model (residual, debiased release, clipping fixed point, assumption checks), the
prediction in label units, verification on the user's rows, and the refusals of degenerate data."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privdyn.plan
from privdyn.cli import main
from privdyn.plan._dpgd_data import ClipBias

BUDGET = dict(epsilon=2.0, delta=1e-5)


def _gaussian(n: int = 3000, d: int = 8, noise: float = 0.3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    return x, x @ np.full(d, 0.3) + noise * rng.standard_normal(n)


def _csv(path, x, y) -> None:  # type: ignore[no-untyped-def]
    names = [f"x{i}" for i in range(x.shape[1])] + ["y"]
    np.savetxt(path, np.column_stack([x, y]), delimiter=",", header=",".join(names), comments="")


# --- refusals -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "fragment"), [
    ("constant_column", "must not hold a constant feature column"),
    ("wide", "more rows than features"),
    ("nan", "non-finite"),
    ("inf", "non-finite"),
    ("text_label", "non-numeric values"),
    ("constant_label", "label column must vary"),
])
def test_degenerate_data_is_refused_naming_the_problem(case, fragment, tmp_path) -> None:  # type: ignore[no-untyped-def]
    x, y = _gaussian(n=60, d=4)
    path = tmp_path / "d.csv"
    if case == "constant_column":
        x[:, 2] = 1.5
    elif case == "wide":
        x, y = np.random.default_rng(1).standard_normal((5, 7)), np.arange(5.0)
    elif case == "constant_label":
        y[:] = 2.0
    _csv(path, x, y)
    if case in ("nan", "inf", "text_label"):
        lines = path.read_text().splitlines()
        bad = {"nan": "nan", "inf": "inf", "text_label": "high"}[case]
        lines[3] = ",".join(lines[3].split(",")[:-1] + [bad]) if case == "text_label" else bad + lines[3][
            lines[3].index(","):]
        path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=fragment):
        privdyn.plan.dpgd(data=str(path), public_stats=True, **BUDGET)
    assert main(["plan", "dpgd", "--data", str(path), "--public-stats", "--epsilon", "2", "--delta", "1e-5",
                 "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()


def test_arrays_are_checked_like_files() -> None:
    x, y = _gaussian(n=60, d=4)
    x[:, 0] = 0.0
    with pytest.raises(ValueError, match="constant feature column"):
        privdyn.plan.dpgd(data=(x, y), public_stats=True, **BUDGET)
    x, y = _gaussian(n=60, d=4)
    x[5, 1] = np.nan
    with pytest.raises(ValueError, match="features must be finite"):
        privdyn.plan.dpgd(data=(x, y), public_stats=True, **BUDGET)


@pytest.mark.parametrize(("options", "fragment"), [
    (["--planning-share", "0", "--feature-norm-bound", "3", "--label-bound", "3"],
     "planning_share must be in (0.0, 1.0); got planning_share=0.0"),
    (["--planning-share", "1.5", "--feature-norm-bound", "3", "--label-bound", "3"],
     "planning_share must be in (0.0, 1.0); got planning_share=1.5"),
    (["--planning-share", "0.1", "--feature-norm-bound", "0", "--label-bound", "3"], "feature_norm_bound must be > 0"),
    (["--planning-share", "0.1", "--feature-norm-bound", "3", "--label-bound", "-1"], "label_bound must be > 0"),
])
def test_cli_share_and_bounds_exit_2_with_one_line(options, fragment, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "d.csv"
    _csv(path, *_gaussian(n=60, d=4))
    out = tmp_path / "out"
    assert main(["plan", "dpgd", "--data", str(path), *options, "--epsilon", "2", "--delta", "1e-5",
                 "--out", str(out)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1 and fragment in lines[0], captured.err
    assert not out.exists()


# --- the data model -------------------------------------------------------------------------------------------


def test_public_stats_prediction_holds_on_gaussian_rows_within_its_interval() -> None:
    """On Gaussian rows the ODE's assumptions hold: label 'model', and the plan run on the rows (random orders)
    lands inside the prediction's own interval (finite-d factor 1 + rank^-1/2) widened by 5 standard errors."""
    x, y = _gaussian(n=3000, d=8, noise=0.3)
    plan = privdyn.plan.dpgd(data=(x, y), public_stats=True, **BUDGET)
    p = plan.prediction
    assert p["label"] == "model" and p["excess_mse"] == plan.predicted_excess_mse == 2 * plan.predicted_risk
    assert abs(p["residual_variance"] - 0.09) < 0.01
    assert p["test_mse"] == pytest.approx(p["excess_mse"] + p["residual_variance"], rel=1e-12)
    check = plan.simulate(20, seed=3, data=(x, y))
    low, high = p["interval"]
    assert low - 5 * check.standard_error <= check.mean <= high + 5 * check.standard_error, (check.mean, p)
    with pytest.raises(ValueError, match="data must be the plan's rows"):
        plan.simulate(2, data=(x[:10], y[:10]))


def test_clipping_fixed_point_is_the_root_of_the_clipped_gradient_and_vanishes_for_symmetric_noise() -> None:
    rng = np.random.default_rng(4)
    n, d = 4000, 5
    x = np.column_stack([rng.standard_normal((n, d - 1)), np.ones(n)])  # with an intercept column
    theta = np.linspace(0.2, 1.0, d)
    skewed = x @ theta + rng.exponential(1.0, n) - 1.0  # mean-zero, skewed residual
    symmetric = x @ theta + rng.standard_normal(n)
    for y, symmetric_noise in ((skewed, False), (symmetric, True)):
        best = np.linalg.lstsq(x, y, rcond=None)[0]
        bias = ClipBias(x, y, best, x.T @ x / n)
        clip = 0.3
        fixed = bias.fixed_point(clip)
        g = x * (x @ fixed - y)[:, None]
        norms = np.linalg.norm(g, axis=1)
        clipped = g * np.minimum(1.0, clip * math.sqrt(d) / norms)[:, None]
        assert np.linalg.norm(clipped.mean(axis=0)) < 1e-8  # the estimating equation's root
        if symmetric_noise:
            assert bias(clip) < 2e-3
        else:
            assert bias(clip) > 0.01  # clipping a skewed residual moves the intercept off least squares'


def test_planning_share_estimates_the_residual_without_the_old_floor(tmp_path) -> None:
    """The issue's clue: with a planning share the residual was clamped to 1e-3 of the mean squared label (0.03 for a
    label noise of 0.3). With the moments debiased and a budget that resolves the spectrum it is estimated."""
    x, y = _gaussian(n=20000, d=8, noise=0.3)
    plan = privdyn.plan.dpgd(data=(x, y), planning_share=0.5, feature_norm_bound=8.0, label_bound=4.0,
                             epsilon=200.0, delta=1e-6, rng=np.random.default_rng(0))
    assert plan.model.assessment.unresolved_eigenvalues == 0
    assert abs(plan.model.label_noise - 0.3) < 0.05, plan.model.label_noise
    small = privdyn.plan.dpgd(data=(x[:3000], y[:3000]), planning_share=0.1, feature_norm_bound=10.0,
                              label_bound=3.0, epsilon=1.0, delta=1e-5, rng=np.random.default_rng(0))
    assert small.prediction["label"] == "heuristic"
    assert any("eigenvalues of the released second moment" in r for r in small.prediction["reasons"])
    assert small.model.label_noise > 0.1  # not the old floor 0.03


def test_verify_on_the_users_rows_from_the_cli(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "d.csv"
    _csv(path, *_gaussian(n=1500, d=6))
    assert main(["plan", "dpgd", "--data", str(path), "--public-stats", "--epsilon", "2", "--delta", "1e-5",
                 "--schedule", "constant", "--verify", "4"]) == 0
    out = capsys.readouterr().out
    assert "predicted_excess_mse" in out and "in-sample excess MSE over least squares" in out
