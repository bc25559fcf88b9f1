"""Beyond the hsgd paper (arXiv 2510.16687): the SGD-HSGD gap versus d and exact-versus-surrogate privacy
(``hsgd-validation``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn import _check
from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd
from privdyn.data.hsgd_design import gaussian_design, hsgd_problem
from privdyn.data.synthetic import SyntheticDesign
from privdyn.dynamics import hsgd as dyn
from privdyn.experiments.hsgd_risk.common import CLAIM, INVARIANT, PAPER, REFINEMENTS, paper_setting
from privdyn.rng import generator
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.naming import json_number, unit_key
from privdyn.runs.plotting import as_floats, pyplot, save_figure, select_series
from privdyn.runs.results import (
    Z_SCORE,
    Check,
    Metric,
    Series,
    Table,
    check_monte_carlo,
    finding,
    mean_se,
    weighted_slope,
)
from privdyn.schedules import Constant
from privdyn.spectra import Spectrum

__all__ = ["ValidationConfig", "Validation", "PrivacySetting"]


# --------------------------------------------------------------------------------------------------------------
# Validation (beyond the paper)
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class PrivacySetting(ExperimentConfig):
    """The exact-vs-surrogate privacy comparison: the Section 5 design at a small d (the exact law costs O(n d²)).

    n = round(1.5·d) records in one fixed order (drawn once), step_size η, ridge δ, noise_std σ and the realized x_0 ~
    N(0, I) of the paper; at each of ``num_positions`` evenly spaced positions ℓ the record is replaced by a fresh draw,
    and the last iterate's divergence is computed exactly (discrete SGD, fixed order, an exact Gaussian law) and by the
    HSGD surrogate D_α(T; ℓ/d, θ) of eq. (14) (both argument orders, the larger), for each Rényi order.
    """

    d: int = 100
    step_size: float = 0.05
    ridge: float = 0.1
    noise_std: float = 1.5
    renyi_orders: tuple[float, ...] = (2.0, 8.0)
    num_positions: int = 5

    def validate(self) -> None:
        _check.integer(minimum=2, d=self.d)
        _check.integer(minimum=1, num_positions=self.num_positions)
        _check.positive(step_size=self.step_size, ridge=self.ridge, noise_std=self.noise_std)
        if not self.step_size * (1.0 / 3.0 + self.ridge) < 2.0:
            raise ValueError(f"step_size must satisfy step_size·(1/3 + ridge) < 2; got step_size={self.step_size!r}.")
        orders = np.asarray(self.renyi_orders, dtype=float)
        if np.any(orders <= 1):
            raise ValueError(f"renyi_orders must be > 1; got {list(self.renyi_orders)}.")
        if self.num_positions > self.num_steps:
            raise ValueError(f"num_positions must be <= n = {self.num_steps}; got {self.num_positions}.")

    @property
    def num_steps(self) -> int:
        return int(round(1.5 * self.d))


@dataclasses.dataclass(frozen=True, kw_only=True)
class ValidationConfig(ExperimentConfig):
    """The SGD–HSGD gap on a Gaussian design in the theory's scaling, and exact vs surrogate privacy.

    Σ has eigenvalues at the quantile midpoints of Unif[min_eigenvalue, max_eigenvalue] (‖Σ‖ bounded, tr Σ ∝ d:
    Assumption 1), x̃ with ‖x̃‖ = 1 spread evenly, Gaussian label noise ``label_noise``, x_0 = 0 (fixed), a constant
    learning_rate γ (step_size γ/d), horizon T (n = T·d). The gap of a run is max_j |𝒫(x_{k_j}) − P_{k_j/d}| over
    ``num_time_points`` evenly spaced iterations. The privacy part (``privacy.*``) is described by
    :class:`PrivacySetting`.
    """

    dims: tuple[int, ...] = (100, 200, 400, 800)
    horizon: float = 2.0
    learning_rate: float = 1.0
    ridge: float = 0.1
    noise_std: float = 1.0
    label_noise: float = 0.5
    min_eigenvalue: float = 0.5
    max_eigenvalue: float = 1.5
    num_runs: int = 100
    num_time_points: int = 101
    privacy: PrivacySetting = dataclasses.field(default_factory=lambda: PrivacySetting())

    quick_overrides = {"dims": (50, 100, 200, 400), "num_runs": 40, "privacy": {"d": 60}}

    def validate(self) -> None:
        _check.integer(minimum=10, dims=np.asarray(self.dims))
        if len(set(self.dims)) != len(self.dims) or len(self.dims) < 2:
            raise ValueError(f"dims must hold at least two distinct values (a slope); got {list(self.dims)}.")
        _check.positive(horizon=self.horizon, learning_rate=self.learning_rate, ridge=self.ridge,
                        noise_std=self.noise_std, max_eigenvalue=self.max_eigenvalue)
        _check.non_negative(label_noise=self.label_noise, min_eigenvalue=self.min_eigenvalue)
        if not self.min_eigenvalue < self.max_eigenvalue:
            raise ValueError(f"min_eigenvalue must be < max_eigenvalue; got {self.min_eigenvalue!r} >= "
                             f"{self.max_eigenvalue!r}.")
        _check.integer(minimum=2, num_runs=self.num_runs, num_time_points=self.num_time_points)
        for d in self.dims:
            spectrum = self.spectrum(d)
            limit = dyn.max_stable_learning_rate(spectrum, ridge=self.ridge)
            if not self.learning_rate < limit:
                raise ValueError(f"learning_rate must be < {limit:.4g} (κ_K < 1) at d = {d}; got "
                                 f"{self.learning_rate!r}.")
            if round(self.horizon * d) < 1:
                raise ValueError(f"horizon·d must be >= 1; got horizon={self.horizon!r} with d={d}.")

    def spectrum(self, d: int) -> Spectrum:
        return Spectrum.uniform(d, low=self.min_eigenvalue, high=self.max_eigenvalue)

    def num_steps(self, d: int) -> int:
        return int(round(self.horizon * d))


class Validation(Experiment[ValidationConfig]):
    name = "hsgd-validation"
    paper_key = "hsgd"
    title = "SGD-HSGD risk gap against d (Theorem 3.1, Corollary 4.1) and exact SGD privacy vs the HSGD surrogate"
    paper = f"{PAPER}, Theorem 3.1 / Corollary 4.1 / Conjecture 3.1 (beyond the paper's figures)"
    description = ("sup_k |P(x_k) - P_{k/d}| on a Gaussian design at several d with the fitted decay exponent; exact "
                   "discrete-SGD Renyi divergences vs the HSGD surrogate at several positions and orders.")
    config_class = ValidationConfig

    def units(self, config: ValidationConfig) -> list[Unit]:
        units = [Unit(unit_key(method="simulation", d=d), {"method": "simulation", "d": d}) for d in config.dims]
        units.append(Unit(unit_key(method="exact_discrete", d=config.privacy.d), {"method": "exact_discrete"}))
        return units

    def _setting(self, config: ValidationConfig, d: int) -> tuple[SyntheticDesign, dyn.HSGDProblem]:
        design = gaussian_design(config.spectrum(d), label_noise=config.label_noise, target_norm=1.0)
        problem = hsgd_problem(design, x0=np.zeros(d), learning_rate=Constant(config.learning_rate),
                               ridge=config.ridge, noise_std=config.noise_std)
        return design, problem

    def compute_unit(self, config: ValidationConfig, unit: Unit, seed: int) -> dict[str, Any]:
        if unit.params["method"] == "exact_discrete":
            return self._privacy_unit(config, seed)
        d = int(unit.params["d"])
        design, problem = self._setting(config, d)
        n = config.num_steps(d)
        steps = np.unique(np.round(np.linspace(0, n, config.num_time_points)).astype(np.int64))
        curve = dyn.volterra_risk(problem, steps / d, max_step=1.0 / d, refinements=REFINEMENTS)
        sim = simulate_noisy_sgd(data=design, x0=np.zeros(d), ridge=config.ridge, num_steps=n,
                                 num_runs=config.num_runs, seed=seed, unit_key=unit.key,
                                 learning_rate=Constant(config.learning_rate), noise_std=config.noise_std,
                                 record_steps=steps)
        pop = np.asarray(curve.population_risk)
        gaps = np.max(np.abs(sim.population_risk - pop), axis=1)
        mean, se = sim.mean_and_standard_error()
        return {"steps": steps.tolist(), "volterra": pop.tolist(), "gap": gaps.tolist(), "mean": mean.tolist(),
                "standard_error": se.tolist()}

    @staticmethod
    def _privacy_unit(config: ValidationConfig, seed: int) -> dict[str, Any]:
        from privdyn.privacy import hsgd as priv  # only this unit needs the accountant


        setting = config.privacy
        d, n = setting.d, setting.num_steps
        design, x0 = paper_setting(d, seed)
        problem = hsgd_problem(design, x0=x0, learning_rate=Constant(setting.step_size * d), ridge=setting.ridge,
                               noise_std=setting.noise_std, x0_policy="random_public")
        rng = generator(seed, unit_key(method="exact_discrete", d=d), purpose="data")
        features, labels = design.sample(n, rng)
        new_features, new_labels = design.sample(setting.num_positions, rng)
        positions = np.unique(np.floor(np.arange(setting.num_positions) * n / setting.num_positions).astype(int))
        law = priv.sgd_grid_law(problem, n)
        rows = []
        for j, ell in enumerate(positions):
            # the surrogate's pairs live in the problem's eigen-coordinates; the exact law in the original basis
            pair = priv.NeighboringPairs.single(design.eigen_coordinates(features[ell]), labels[ell],
                                                design.eigen_coordinates(new_features[j]), new_labels[j])
            for alpha in setting.renyi_orders:
                surrogate = priv.renyi_divergence(alpha, law, pair, iterate=n, position=int(ell)).value
                exact = priv.exact_sgd_renyi(alpha, features=features, labels=labels, position=int(ell),
                                             replacement_feature=new_features[j], replacement_label=new_labels[j],
                                             iterate=n, step_size=setting.step_size, ridge=setting.ridge,
                                             noise_std=setting.noise_std, x0=x0).value
                rows.append([int(ell), float(alpha), float(exact), float(surrogate)])
        return {"n": n, "rows": rows}

    def assemble(self, config: ValidationConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        dims = sorted(config.dims)
        base = {"learning_rate": json_number(config.learning_rate), "ridge": json_number(config.ridge),
                "noise_std": json_number(config.noise_std), "x0_policy": "fixed"}
        mean_list: list[float] = []
        se_list: list[float] = []
        for d in dims:
            out = outputs[unit_key(method="simulation", d=d)]
            gaps = np.asarray(out["gap"])
            gap_mean, _, gap_se = mean_se(gaps)
            mean_list.append(float(gap_mean))
            se_list.append(float(gap_se))
            steps = np.asarray(out["steps"])
            params = {**base, "d": d, "n": config.num_steps(d), "quantity": "population_risk"}
            series.append(Series(name=f"volterra d={d}", params={**params, "method": "volterra"}, x=steps / d,
                                 y=out["volterra"], x_label="t", y_label="population_risk"))
            mean, se = np.asarray(out["mean"]), np.asarray(out["standard_error"])
            series.append(Series(name=f"SGD mean d={d}", params={**params, "method": "simulation"}, x=steps / d,
                                 y=mean, y_low=mean - se, y_high=mean + se, standard_error=se, x_label="t",
                                 y_label="population_risk"))
        means, ses = np.asarray(mean_list), np.asarray(se_list)
        gap_params = {**base, "method": "simulation", "quantity": "sgd_hsgd_gap"}
        series.append(Series(name="SGD-HSGD gap", params=gap_params, x=dims, y=means, y_low=means - ses,
                             y_high=means + ses, standard_error=ses, x_label="d",
                             y_label="mean of sup_k |P(x_k) - P_{k/d}|"))
        slope, slope_se, intercept = weighted_slope(np.log(dims), np.log(means), ses / means)
        low, high = slope - Z_SCORE * slope_se, slope + Z_SCORE * slope_se
        metrics += [Metric(name="gap_decay_exponent", params=base, value=slope),
                    Metric(name="gap_decay_exponent_standard_error", params=base, value=slope_se),
                    Metric(name="gap_decay_exponent_interval", params={**base, "z": int(Z_SCORE)}, value=[low, high])]
        series.append(Series(name="fitted power law", params={**base, "method": "theory",
                                                              "quantity": "sgd_hsgd_gap"},
                             x=dims, y=np.exp(intercept) * np.asarray(dims, dtype=float) ** slope, x_label="d",
                             y_label="mean of sup_k |P(x_k) - P_{k/d}|"))
        checks.append(Check(
            name="gap_decays", kind=INVARIANT,
            claim="the SGD-HSGD risk gap decays with d: the z = 5 interval of the fitted log-log exponent excludes 0",
            expected=None, measured=[low, high], tolerance=None, standard_error=slope_se, passed=high < 0,
            note=f"weighted least squares of log(mean gap) on log d over d = {dims}; exponent {slope:.3f} ± "
                 f"{slope_se:.3f} (SE)"))
        checks.append(check_monte_carlo(
            "gap_exponent_is_minus_half", kind=CLAIM,
            claim="Theorem 3.1 / Corollary 4.1: the gap scales like d^(-1/2) (up to factors d^(9c*), c* < 1/24, and "
                  "logarithms)", expected=-0.5, measured=slope, standard_error=slope_se,
            note=f"claim: exponent −1/2; measured {slope:.3f} ± {slope_se:.3f}; mean gaps "
                 f"{[float(f'{g:.4g}') for g in means]}"))
        tables: list[Table] = []
        checks += self._privacy_findings(config, outputs, series, tables)
        return Findings(series=series, tables=tables, metrics=metrics, checks=checks)

    @staticmethod
    def _privacy_findings(config: ValidationConfig, outputs: Mapping[str, Mapping[str, Any]], series: list[Series],
                          tables: list[Table]) -> list[Check]:
        setting = config.privacy
        out = outputs[unit_key(method="exact_discrete", d=setting.d)]
        rows = np.asarray(out["rows"], dtype=float)
        base = {"d": setting.d, "n": out["n"], "step_size": json_number(setting.step_size),
                "ridge": json_number(setting.ridge), "noise_std": json_number(setting.noise_std),
                "x0_policy": "random_public", "quantity": "renyi_divergence"}
        checks = []
        for alpha in setting.renyi_orders:
            sel = rows[rows[:, 1] == alpha]
            params = {**base, "renyi_order": json_number(alpha)}
            positions = sel[:, 0].astype(int)
            series.append(Series(name=f"exact SGD alpha={alpha:g}",
                                 params={**params, "method": "exact_discrete", "guarantee": "exact"},
                                 x=positions, y=sel[:, 2], x_label="position", y_label="renyi_divergence"))
            series.append(Series(name=f"HSGD surrogate alpha={alpha:g}",
                                 params={**params, "method": "volterra", "guarantee": "surrogate"},
                                 x=positions, y=sel[:, 3], x_label="position", y_label="renyi_divergence"))
            finite = np.isfinite(sel[:, 2]) & np.isfinite(sel[:, 3]) & (sel[:, 2] > 0)
            ratio = np.where(finite, sel[:, 3] / np.where(finite, sel[:, 2], 1.0), np.nan)
            infinite = positions[~np.isfinite(sel[:, 2]) | ~np.isfinite(sel[:, 3])].tolist()
            checks.append(finding(
                f"surrogate_over_exact renyi_order={alpha:g}",
                claim=f"HSGD surrogate D_α(T; s, θ) (eq. (14)) over the exact divergence of discrete SGD with a fixed "
                      f"data order (exact Gaussian law), last iterate, Section 5 design at d = {setting.d}, "
                      f"n = {out['n']}, "
                      f"positions {positions.tolist()} (NaN where a value is infinite)",
                measured=ratio.tolist(),
                note=f"positions with an infinite divergence (mixture not positive definite): {infinite}; the "
                     "surrogate's law averages over the data (its covariance contains the sampling term 2P_tΣ/d), "
                     "the exact law conditions on one data order"))
        tables.append(Table(name="exact vs surrogate Renyi divergence",
                            columns=["position", "renyi_order", "exact_discrete", "surrogate"],
                            rows=[[int(r[0]), json_number(r[1]), float(r[2]), float(r[3])] for r in rows]))
        return checks

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.2))
        gap = select_series(result, method="simulation", quantity="sgd_hsgd_gap")
        fit = select_series(result, method="theory", quantity="sgd_hsgd_gap")
        if gap:
            g = gap[0]
            x, y = as_floats(g["x"]), as_floats(g["y"])
            err = as_floats(g["standard_error"])
            ax1.errorbar(x, y, yerr=err, fmt="o", color="C0", label="mean gap ± SE")
            ax1.set_xscale("log")
            ax1.set_xticks(x, [f"{v:g}" for v in x])  # the dimensions run, not overlapping minor labels
            ax1.minorticks_off()
        if fit:
            ax1.plot(as_floats(fit[0]["x"]), as_floats(fit[0]["y"]), "k--", lw=0.9, label="fitted power law")
        ax1.set_yscale("log")
        ax1.set_xlabel("d")
        ax1.set_ylabel(r"$\sup_k\,|\mathcal{P}(x_k) - P_{k/d}|$ (mean over runs)")
        ax1.legend(fontsize=8)
        for i, s in enumerate(select_series(result, quantity="renyi_divergence")):
            exact = s["params"]["method"] == "exact_discrete"
            ax2.plot(as_floats(s["x"]), as_floats(s["y"]), "o-" if exact else "s--", color=f"C{i // 2}", ms=4,
                     label=f"{'exact discrete SGD' if exact else 'HSGD surrogate'}, α = {s['params']['renyi_order']}")
        ax2.set_yscale("log")
        ax2.set_xlabel("position of the replaced record")
        ax2.set_ylabel("Rényi divergence of the last iterate")
        ax2.legend(fontsize=7)
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]
