"""``sklearn-regression``: privdyn's DPLinearRegression against AdaSSP and diffprivlib on four real datasets.

**Protocol.** For each dataset (:mod:`.datasets`) and seed s = 0..num_seeds−1, a random split (``test_fraction`` of
the rows held out) drawn from (run seed, s); features and labels are standardized with the *training* split's mean
and standard deviation, then clipped: every feature to [−b, b] (``feature_box``) and the label to [−B, B]
(``label_box``). The standardization is the same for every method and is treated as public, as in Wang 2018's
experiments; the privacy guarantees cover the fits, not this step. On the clipped data: non-private least squares
(scikit-learn's ``LinearRegression``) and the private methods of :mod:`.methods` at each ε of ``epsilons`` (δ =
1/n^1.1 for the (ε, δ) methods). The measure is the test MSE relative to the non-private fit's, per seed.

**Reported.** A table of relative MSE (mean and 95% t-interval over seeds) per dataset, ε and method; paired 95%
intervals of the difference between DPLinearRegression and the better (lower mean) of AdaSSP and diffprivlib; the
planner's predicted excess test MSE beside the measured one (a finding: the planner assumes isotropic Gaussian rows
at the norm bound, which real data are not); and the issue's target, checked as stated: DPLinearRegression at least
as accurate as the better of diffprivlib and AdaSSP (the paired interval's lower end <= 0, i.e. not significantly
worse) at every ε >= 1 on at least three of the four datasets. Nothing is tuned on the test data.

**Invariant.** Every private fit's recorded ε is at most the requested one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn.experiments.base import Experiment, Findings, Unit
from privdyn.experiments.config import ConfigError, ExperimentConfig
from privdyn.experiments.naming import unit_key
from privdyn.experiments.plotting import as_floats, pyplot, save_figure, select_series
from privdyn.experiments.results import Check, CheckKind, Metric, Series, Table, finding
from privdyn.experiments.sklearn_regression.datasets import DATASETS, EXTRA, load, missing_packages
from privdyn.experiments.sklearn_regression.methods import METHODS, fit_predict

__all__ = ["SklearnRegressionConfig", "SklearnRegression"]

TARGET_EPSILON = 1.0
"""The target concerns every ε >= 1 of the grid."""
TARGET_DATASETS = 3
"""... on at least this many datasets."""
CONFIDENCE = 0.95
PLOT_MAX = 30.0
"""The figure's largest relative MSE; larger means (diffprivlib's, mostly) are drawn as markers on the top edge."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SklearnRegressionConfig(ExperimentConfig):
    """The comparison's settings (see the module docstring).

    ``planning_share`` (e.g. 0.1) adds DPLinearRegression with that share of the budget spent estimating the
    planner's statistics (``DPLinearRegression+share``); null, the default, leaves it out (it plans at every fit:
    the full run then takes about six times longer).
    """

    datasets: tuple[str, ...] = ("diabetes", "txhousing", "randhie", "diamonds")
    epsilons: tuple[float, ...] = (0.3, 1.0, 3.0, 10.0)
    num_seeds: int = 20
    test_fraction: float = 0.2
    feature_box: float = 3.0
    label_box: float = 3.0
    planning_share: float | None = None

    quick_overrides = {"datasets": ("diabetes", "txhousing"), "epsilons": (1.0, 10.0), "num_seeds": 3}

    def validate(self) -> None:
        for name in self.datasets:
            if name not in DATASETS:
                raise ConfigError(f"datasets must name datasets among {', '.join(DATASETS)}; got {name!r}.")
        if len(set(self.datasets)) != len(self.datasets):
            raise ConfigError(f"datasets must not repeat a name; got {list(self.datasets)}.")
        if any(not e > 0 for e in self.epsilons):
            raise ConfigError(f"epsilons must all be > 0; got {list(self.epsilons)}.")
        if self.num_seeds < 2:
            raise ConfigError(f"num_seeds must be >= 2 (paired intervals need two seeds); got {self.num_seeds}.")
        if not 0 < self.test_fraction < 1:
            raise ConfigError(f"test_fraction must be in (0, 1); got {self.test_fraction}.")
        if not (self.feature_box > 0 and self.label_box > 0):
            raise ConfigError(f"feature_box and label_box must be > 0; got {self.feature_box}, {self.label_box}.")
        if self.planning_share is not None and not 0 < self.planning_share < 1:
            raise ConfigError(f"planning_share must be in (0, 1) or null; got {self.planning_share}.")
        missing = missing_packages(self.datasets)
        if missing:
            raise ConfigError(f"sklearn-regression needs the '{EXTRA}' extra (pip install 'privdyn[{EXTRA}]'); "
                              f"missing: {', '.join(missing)}.")

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(m for m in METHODS if m != "DPLinearRegression+share" or self.planning_share is not None)


def _split(features: np.ndarray, labels: np.ndarray, config: SklearnRegressionConfig,
           rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Train/test split, standardized by the training split's statistics, clipped to the public boxes."""
    n = len(labels)
    order = rng.permutation(n)
    cut = n - max(1, round(config.test_fraction * n))
    train, test = order[:cut], order[cut:]
    mean, sd = features[train].mean(axis=0), features[train].std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    label_mean, label_sd = labels[train].mean(), labels[train].std()
    b, big_b = config.feature_box, config.label_box
    x = np.clip((features - mean) / sd, -b, b)
    y = np.clip((labels - label_mean) / label_sd, -big_b, big_b)
    return x[train], y[train], x[test], y[test]


def _config(config: ExperimentConfig) -> SklearnRegressionConfig:
    if not isinstance(config, SklearnRegressionConfig):
        raise TypeError(f"config must be a SklearnRegressionConfig; got {type(config).__name__}.")
    return config


def _interval(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and the two-sided 95% t-interval over seeds."""
    from scipy import stats

    mean = float(np.mean(values))
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, len(values) - 1) * np.std(values, ddof=1) / math.sqrt(len(values)))
    return mean, mean - half, mean + half


class SklearnRegression(Experiment):
    name = "sklearn-regression"
    paper_key = "dpgd"
    title = "Private linear regression for scikit-learn: DPLinearRegression vs AdaSSP and diffprivlib on real data"
    paper = ("Bombari, Luo, Seroussi, Mondelli 2025 (arXiv 2505.16329), Algorithm 1, against Wang 2018 (arXiv "
             "1803.02596, AdaSSP) and diffprivlib's LinearRegression")
    description = ("Relative test MSE of DPLinearRegression, AdaSSPRegression and diffprivlib on four real datasets, "
                   "epsilon in {0.3, 1, 3, 10}, 20 seeds; the planner's predicted risk beside the measured one.")
    config_class = SklearnRegressionConfig

    def units(self, config: ExperimentConfig) -> list[Unit]:
        config = _config(config)
        return [Unit(unit_key(dataset=name, split=s), {"dataset": name, "split": s})
                for name in config.datasets for s in range(config.num_seeds)]

    def compute_unit(self, config: ExperimentConfig, unit: Unit, seed: int) -> dict[str, Any]:
        from sklearn.linear_model import LinearRegression

        from privdyn.rng import generator

        config = _config(config)
        name, split = unit.params["dataset"], unit.params["split"]
        features, labels = load(name)
        x_train, y_train, x_test, y_test = _split(features, labels, config,
                                                  generator(seed, f"sklearn-regression/{name}", run_index=split,
                                                            purpose="data"))
        baseline = float(np.mean((LinearRegression().fit(x_train, y_train).predict(x_test) - y_test) ** 2))
        results: dict[str, dict[str, Any]] = {}
        for i, epsilon in enumerate(config.epsilons):
            for method in config.methods:
                rng = generator(seed, f"sklearn-regression/{name}/{method}", run_index=split * 1000 + i,
                                purpose="noise")
                predictions, record = fit_predict(
                    method, epsilon=epsilon, box=config.feature_box, label_box=config.label_box,
                    planning_share=config.planning_share, x_train=x_train, y_train=y_train, x_test=x_test, rng=rng)
                mse = float(np.mean((predictions - y_test) ** 2))
                results[f"{method}@{epsilon!r}"] = {"mse": mse if math.isfinite(mse) else "inf", **record}
        return {"n_train": int(len(y_train)), "d": int(x_train.shape[1]), "baseline_mse": baseline,
                "results": results}

    def assemble(self, config: ExperimentConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        config = _config(config)
        series: list[Series] = []
        rows: list[list[Any]] = []
        paired_rows: list[list[Any]] = []
        prediction_rows: list[list[Any]] = []
        checks: list[Check] = []
        metrics: list[Metric] = []
        worst_epsilon_ratio = 0.0
        holds: dict[str, bool] = {}
        for name in config.datasets:
            units = [outputs[unit_key(dataset=name, split=s)] for s in range(config.num_seeds)]
            baseline = np.array([u["baseline_mse"] for u in units])
            n_train, d = units[0]["n_train"], units[0]["d"]

            def relative(method: str, epsilon: float, units: list[Mapping[str, Any]] = units,
                         baseline: np.ndarray = baseline) -> np.ndarray:
                return np.array([float(u["results"][f"{method}@{epsilon!r}"]["mse"]) for u in units]) / baseline

            for method in config.methods:
                means, lows, highs = [], [], []
                for epsilon in config.epsilons:
                    mean, low, high = _interval(relative(method, epsilon))
                    means.append(mean)
                    lows.append(low)
                    highs.append(high)
                    rows.append([name, n_train, d, epsilon, method, mean, low, high])
                    for u in units:
                        got = u["results"][f"{method}@{epsilon!r}"]["epsilon"]
                        worst_epsilon_ratio = max(worst_epsilon_ratio, float(got) / epsilon)
                series.append(Series(name=f"{name}/{method}", params={"dataset": name, "method": method},
                                     x=list(config.epsilons), y=means, y_low=lows, y_high=highs, x_label="epsilon",
                                     y_label="test MSE / non-private test MSE (mean, 95% CI)"))
            ok = True
            for epsilon in config.epsilons:
                competitors = {m: float(np.mean(relative(m, epsilon))) for m in ("AdaSSPRegression", "diffprivlib")}
                better = min(competitors, key=lambda m: competitors[m])
                mean, low, high = _interval(relative("DPLinearRegression", epsilon) - relative(better, epsilon))
                paired_rows.append([name, epsilon, better, mean, low, high])
                if epsilon >= TARGET_EPSILON:
                    ok = ok and low <= 0.0
                for method in [m for m in config.methods if m.startswith("DPLinearRegression")]:
                    excess = np.array([float(u["results"][f"{method}@{epsilon!r}"]["mse"]) for u in units]) - baseline
                    predicted = [u["results"][f"{method}@{epsilon!r}"]["predicted_excess_mse"] for u in units]
                    measured, _, _ = _interval(excess)
                    prediction_rows.append([name, epsilon, method, float(np.mean(predicted)), measured,
                                            measured / float(np.mean(predicted))])
            holds[name] = ok
        passed = sum(holds.values()) >= min(TARGET_DATASETS, len(config.datasets))
        on = [n for n, v in holds.items() if v]
        checks.append(Check(
            name="target_at_least_as_accurate", kind=CheckKind.PAPER_CLAIM,
            claim=(f"(issue target) DPLinearRegression is at least as accurate as the better of AdaSSP and diffprivlib "
                   f"(paired 95% CI of the relative-MSE difference has lower end <= 0) at every epsilon >= "
                   f"{TARGET_EPSILON:g} on at least {TARGET_DATASETS} of the datasets"),
            passed=passed, expected=TARGET_DATASETS, measured=len(on),
            note=(f"holds on: {', '.join(on) or 'none'}. Measured as is, nothing tuned on the test data; the "
                  "paired_difference table gives every interval and planner_prediction how far the default plan's "
                  "model (isotropic rows at the norm bound, from public numbers only) is from the data.")))
        checks.append(Check(
            name="recorded_epsilon_within_request", kind=CheckKind.INVARIANT,
            claim="every private fit's recorded epsilon is at most the requested epsilon",
            passed=worst_epsilon_ratio <= 1.0, expected=1.0, measured=worst_epsilon_ratio))
        ratios = [r[5] for r in prediction_rows if r[2] == "DPLinearRegression"]
        checks.append(finding(
            "planner_prediction_vs_measured",
            claim="the planner's predicted excess test MSE (in standardized label units) against the measured one",
            measured={"median_measured_over_predicted": float(np.median(ratios)) if ratios else None},
            note="real data are not isotropic Gaussian rows at the norm bound: the ratio says how far the ODE's "
                 "prediction carries"))
        metrics.append(Metric(name="target_datasets", params={}, value=len(on)))
        tables = [
            Table(name="relative_mse", columns=["dataset", "n_train", "d", "epsilon", "method", "relative_mse",
                                                "ci_low", "ci_high"], rows=rows),
            Table(name="paired_difference", columns=["dataset", "epsilon", "better_competitor", "mean_difference",
                                                     "ci_low", "ci_high"], rows=paired_rows),
            Table(name="planner_prediction", columns=["dataset", "epsilon", "method", "predicted_excess_mse",
                                                      "measured_excess_mse", "measured_over_predicted"],
                  rows=prediction_rows),
        ]
        return Findings(series=series, tables=tables, metrics=metrics, checks=checks)

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        datasets = list(dict.fromkeys(s["params"]["dataset"] for s in result["series"]))
        methods = list(dict.fromkeys(s["params"]["method"] for s in result["series"]))
        fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 3.8), squeeze=False)
        colors = dict(zip(methods, plt.get_cmap("tab10")(np.arange(len(methods))), strict=True))
        for ax, name in zip(axes.flat, datasets, strict=True):
            for method in methods:
                for s in select_series(result, dataset=name, method=method):
                    x, y = np.array(as_floats(s["x"])), np.array(as_floats(s["y"]))
                    low, high = np.array(as_floats(s["y_low"])), np.array(as_floats(s["y_high"]))
                    shown = y <= PLOT_MAX
                    errors = [np.maximum(y - low, 0)[shown], np.maximum(high - y, 0)[shown]]
                    ax.errorbar(x[shown], y[shown], yerr=errors, color=colors[method], marker="o", ms=3, lw=1.1,
                                capsize=2, label=method)
                    if not np.all(shown):  # off the scale: a marker on the top edge
                        ax.plot(x[~shown], np.full((~shown).sum(), PLOT_MAX * 0.85), ls="none", marker="^",
                                color=colors[method], label=f"{method} (> {PLOT_MAX:g}, off scale)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_ylim(0.8, PLOT_MAX)
            ax.axhline(1.0, color="k", lw=0.6, ls=":")
            ax.set_title(name, fontsize=9)
            ax.set_xlabel("epsilon")
            ax.set_ylabel("test MSE / non-private")
        axes.flat[0].legend(fontsize=7)
        fig.suptitle("Private linear regression on real data (mean and 95% CI over splits)", fontsize=10)
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]
