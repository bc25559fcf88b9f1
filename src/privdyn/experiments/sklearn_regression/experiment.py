"""``sklearn-regression``: privdyn's DPLinearRegression against AdaSSP and diffprivlib on four real datasets.

**Protocol.** For each dataset (:mod:`.datasets`) and seed s = 0..num_seeds−1, a random split (``test_fraction`` of
the rows held out) drawn from (run seed, s); features and labels are standardized with the *training* split's mean
and standard deviation, then clipped: every feature to [−b, b] (``feature_box``) and the label to [−B, B]
(``label_box``). The standardization is the same for every method and is treated as public, as in Wang 2018's
experiments; the privacy guarantees cover the fits, not this step. On the clipped data: non-private least squares
(scikit-learn's ``LinearRegression``) and the private methods of :mod:`.methods` at each ε of ``epsilons`` (δ =
1/n^1.1 for the (ε, δ) methods). The measure is the test MSE relative to the non-private fit's, per seed.

**Reported** (the issue's "Must hold" tables). Relative MSE (mean and 95% t-interval over seeds) per dataset, ε and
method, the default DPLinearRegression also at ``sweep_epsilons`` (its ε sweep, drawn as the figure); paired 95%
intervals of the default minus AdaSSP, and of the default between consecutive budgets (``monotonicity``); how many
splits the default fit solved by the release's least-squares solution instead of DP-GD (``solver``); the
predicted against the measured excess test MSE over least squares for the plan made with the training rows'
statistics declared public (``public_stats_prediction``; the plan is run once per split on the rows as the
estimator preprocesses them) and for the planning share's prediction (``share_prediction``: the default fit's
``prediction_``), with the number of splits labelled ``heuristic`` and their reasons; likewise AdaSSP's own
``prediction_`` (``adassp_prediction``: its first-order excess over least squares, reported, no target). Checks
(paper claims, as the issue states them): the default at least as accurate as AdaSSP at every ε >= 1 on at least
three datasets; the default non-increasing in ε within the paired intervals on every dataset; ``--public-stats``
measured / predicted in [0.5, 2] in at least 10 of 12 cells and outside [1/3, 3] only when labelled ``heuristic`` on
every split; the share's in [1/3, 3] in at least 10 of 12 cells. Nothing is tuned on the test data.

**Invariant.** Every private fit's recorded ε is at most the requested one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn.experiments.sklearn_regression.datasets import DATASETS, EXTRA, load, missing_packages
from privdyn.experiments.sklearn_regression.methods import METHODS, fit_predict, public_stats_run
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.config import ConfigError, ExperimentConfig
from privdyn.runs.naming import unit_key
from privdyn.runs.plotting import as_floats, pyplot, save_figure, select_series
from privdyn.runs.results import Check, CheckKind, Metric, Series, Table

__all__ = ["SklearnRegressionConfig", "SklearnRegression"]

PUBLIC = "plan --public-stats"
"""The plan made with the training rows' statistics declared public, run once per split."""
PREDICTION_BAND = (0.5, 2.0)
"""--public-stats: measured / predicted in this band in at least 10 of 12 cells (the issue's target) ..."""
WIDE_BAND = (1.0 / 3.0, 3.0)
"""... and outside this band only with the label heuristic; the planning share: in this band in 10 of 12 cells."""
TARGET_CELLS = 10
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

    ``planning_share`` (e.g. 0.2) adds DPLinearRegression with that share of the budget spent estimating the
    planner's statistics (``DPLinearRegression+share``, whose prediction the ``share_prediction`` table then
    checks); null, the default, leaves it out, and ``share_prediction`` checks the default fit's prediction (it
    spends a 0.1 share, ``planning_share="auto"``). ``public_stats`` adds the plan made with the training rows'
    statistics declared public (``public_stats_prediction``). ``sweep_epsilons``: more budgets at which only the
    default fit runs (its ε-sweep figure, with ``epsilons``).
    """

    datasets: tuple[str, ...] = ("diabetes", "txhousing", "randhie", "diamonds")
    epsilons: tuple[float, ...] = (1.0, 3.0, 10.0)
    sweep_epsilons: tuple[float, ...] = (0.3, 30.0, 100.0, 1000.0, 10000.0, 1e6, 1e8)
    num_seeds: int = 20
    test_fraction: float = 0.2
    feature_box: float = 3.0
    label_box: float = 3.0
    planning_share: float | None = None
    public_stats: bool = True

    quick_overrides = {"datasets": ("diabetes", "txhousing"), "epsilons": (1.0, 10.0), "num_seeds": 3,
                       "sweep_epsilons": (100.0,)}

    def validate(self) -> None:
        for name in self.datasets:
            if name not in DATASETS:
                raise ConfigError(f"datasets must name datasets among {', '.join(DATASETS)}; got {name!r}.")
        if len(set(self.datasets)) != len(self.datasets):
            raise ConfigError(f"datasets must not repeat a name; got {list(self.datasets)}.")
        if any(not e > 0 for e in self.epsilons) or any(not e > 0 for e in self.sweep_epsilons):
            raise ConfigError(f"epsilons and sweep_epsilons must all be > 0; got {list(self.epsilons)}, "
                              f"{list(self.sweep_epsilons)}.")
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
                   "epsilon in {1, 3, 10} (the default's sweep 0.3 to 1e4), 20 seeds; predicted vs measured excess "
                   "MSE of the public-stats and planning-share plans.")
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
        grid = [(e, m) for e in config.epsilons for m in config.methods]
        grid += [(e, "DPLinearRegression") for e in config.sweep_epsilons if e not in config.epsilons]
        if config.public_stats:
            grid += [(e, PUBLIC) for e in config.epsilons]
        for epsilon, method in grid:
            i = (list(config.epsilons) + list(config.sweep_epsilons)).index(epsilon)
            rng = generator(seed, f"sklearn-regression/{name}/{method}", run_index=split * 1000 + i, purpose="noise")
            if method == PUBLIC:
                predictions, record = public_stats_run(
                    epsilon=epsilon, box=config.feature_box, label_box=config.label_box, x_train=x_train,
                    y_train=y_train, x_test=x_test, rng=rng)
            else:
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
        monotone_rows: list[list[Any]] = []
        solver_rows: list[list[Any]] = []
        prediction_rows: dict[str, list[list[Any]]] = {"public_stats_prediction": [], "share_prediction": [],
                                                        "adassp_prediction": []}
        checks: list[Check] = []
        metrics: list[Metric] = []
        worst_epsilon_ratio = 0.0
        beats: dict[str, bool] = {}
        monotone: dict[str, bool] = {}
        sweep = sorted(set(config.epsilons) | set(config.sweep_epsilons))
        for name in config.datasets:
            units = [outputs[unit_key(dataset=name, split=s)] for s in range(config.num_seeds)]
            baseline = np.array([u["baseline_mse"] for u in units])
            n_train, d = units[0]["n_train"], units[0]["d"]

            def field(method: str, epsilon: float, key: str, units: list[Mapping[str, Any]] = units) -> list[Any]:
                return [u["results"][f"{method}@{epsilon!r}"][key] for u in units]

            def relative(method: str, epsilon: float, baseline: np.ndarray = baseline) -> np.ndarray:
                return np.array([float(v) for v in field(method, epsilon, "mse")]) / baseline

            for epsilon in sweep:
                solvers = field("DPLinearRegression", epsilon, "solver")
                solver_rows.append([name, epsilon, sum(s == "release" for s in solvers), len(solvers)])
            for method in config.methods:
                grid = sweep if method == "DPLinearRegression" else list(config.epsilons)
                means, lows, highs = [], [], []
                for epsilon in grid:
                    mean, low, high = _interval(relative(method, epsilon))
                    means.append(mean)
                    lows.append(low)
                    highs.append(high)
                    rows.append([name, n_train, d, epsilon, method, mean, low, high])
                    for got in field(method, epsilon, "epsilon"):
                        worst_epsilon_ratio = max(worst_epsilon_ratio, float(got) / epsilon)
                series.append(Series(name=f"{name}/{method}", params={"dataset": name, "method": method},
                                     x=list(grid), y=means, y_low=lows, y_high=highs, x_label="epsilon",
                                     y_label="test MSE / non-private test MSE (mean, 95% CI)"))
            ok = True
            for epsilon in config.epsilons:
                mean, low, high = _interval(relative("DPLinearRegression", epsilon)
                                            - relative("AdaSSPRegression", epsilon))
                paired_rows.append([name, epsilon, "AdaSSPRegression", mean, low, high])
                if epsilon >= TARGET_EPSILON:
                    ok = ok and low <= 0.0
            beats[name] = ok
            steady = True
            for small, large in zip(sweep[:-1], sweep[1:], strict=True):
                mean, low, high = _interval(relative("DPLinearRegression", large)
                                            - relative("DPLinearRegression", small))
                monotone_rows.append([name, small, large, mean, low, high])
                steady = steady and low <= 0.0
            monotone[name] = steady
            share_source = ("DPLinearRegression+share" if "DPLinearRegression+share" in config.methods
                            else "DPLinearRegression")
            sources = [("public_stats_prediction", PUBLIC), ("share_prediction", share_source),
                       ("adassp_prediction", "AdaSSPRegression")]
            for table, method in sources:
                if method != PUBLIC and method not in config.methods or method == PUBLIC and not config.public_stats:
                    continue
                for epsilon in config.epsilons:
                    excess = np.array([float(v) for v in field(method, epsilon, "mse")]) - baseline
                    predicted = float(np.mean([float(v) for v in field(method, epsilon, "predicted_excess_mse")]))
                    measured, low, high = _interval(excess)
                    labels = field(method, epsilon, "label")
                    heuristic = sum(label == "heuristic" for label in labels)
                    reasons = sorted({r.split(":")[0] for rs in field(method, epsilon, "reasons") for r in rs})
                    prediction_rows[table].append([name, epsilon, predicted, measured, low, high,
                                                   measured / predicted, heuristic, len(units), "; ".join(reasons)])
        on = [n for n, v in beats.items() if v]
        checks.append(Check(
            name="default_at_least_as_accurate_as_adassp", kind=CheckKind.PAPER_CLAIM,
            claim=(f"(issue target) the default DPLinearRegression is at least as accurate as AdaSSP (paired 95% CI "
                   f"of the relative-MSE difference has lower end <= 0) at every epsilon >= {TARGET_EPSILON:g} on at "
                   f"least {TARGET_DATASETS} of the datasets"),
            passed=len(on) >= min(TARGET_DATASETS, len(config.datasets)), expected=TARGET_DATASETS,
            measured=len(on), note=f"holds on: {', '.join(on) or 'none'}; nothing tuned on the test data"))
        steady_on = [n for n, v in monotone.items() if v]
        checks.append(Check(
            name="default_improves_with_epsilon", kind=CheckKind.PAPER_CLAIM,
            claim=("(issue target) the default DPLinearRegression's relative test MSE is non-increasing in epsilon "
                   "within the paired intervals (each step's paired 95% CI has lower end <= 0) on every dataset"),
            passed=len(steady_on) == len(config.datasets), expected=len(config.datasets), measured=len(steady_on),
            note=f"holds on: {', '.join(steady_on) or 'none'}; the monotonicity table gives every step"))
        for table, band, need_label in (("public_stats_prediction", PREDICTION_BAND, True),
                                        ("share_prediction", WIDE_BAND, False)):
            cells = prediction_rows[table]
            if not cells:
                continue
            inside = sum(band[0] <= r[6] <= band[1] for r in cells)
            wild = [r for r in cells if not WIDE_BAND[0] <= r[6] <= WIDE_BAND[1]]
            unlabelled = [r for r in wild if r[7] < r[8]] if need_label else []
            target = min(TARGET_CELLS, len(cells) - 2) if len(cells) < 12 else TARGET_CELLS
            passed = inside >= target and not unlabelled
            checks.append(Check(
                name=f"{table}_within_band", kind=CheckKind.PAPER_CLAIM,
                claim=(f"(issue target) measured / predicted excess test MSE in [{band[0]:.3g}, {band[1]:.3g}] in at "
                       f"least {target} of {len(cells)} cells"
                       + (" and every cell outside [1/3, 3] labelled heuristic on every split" if need_label else "")),
                passed=passed, expected=target, measured=inside,
                note=(f"{inside} of {len(cells)} inside; outside [1/3, 3]: "
                      + (", ".join(f"{r[0]} eps={r[1]:g} ({r[6]:.3g})" for r in wild) or "none")
                      + ("; without the heuristic label on every split: "
                         + (", ".join(f"{r[0]} eps={r[1]:g}" for r in unlabelled) or "none") if need_label else ""))))
        checks.append(Check(
            name="recorded_epsilon_within_request", kind=CheckKind.INVARIANT,
            claim="every private fit's recorded epsilon is at most the requested epsilon",
            passed=worst_epsilon_ratio <= 1.0, expected=1.0, measured=worst_epsilon_ratio))
        metrics.append(Metric(name="datasets_at_least_as_accurate_as_adassp", params={}, value=len(on)))
        prediction_columns = ["dataset", "epsilon", "predicted_excess_mse", "measured_excess_mse", "ci_low",
                              "ci_high", "measured_over_predicted", "heuristic_splits", "splits", "reasons"]
        tables = [
            Table(name="relative_mse", columns=["dataset", "n_train", "d", "epsilon", "method", "relative_mse",
                                                "ci_low", "ci_high"], rows=rows),
            Table(name="paired_difference", columns=["dataset", "epsilon", "competitor", "mean_difference",
                                                     "ci_low", "ci_high"], rows=paired_rows),
            Table(name="monotonicity", columns=["dataset", "epsilon_from", "epsilon_to", "mean_change", "ci_low",
                                                "ci_high"], rows=monotone_rows),
            Table(name="solver", columns=["dataset", "epsilon", "release_solution_splits", "splits"],
                  rows=solver_rows),
            *[Table(name=k, columns=prediction_columns, rows=v) for k, v in prediction_rows.items() if v],
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
