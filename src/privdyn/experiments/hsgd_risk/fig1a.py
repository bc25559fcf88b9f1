"""Figure 1(a) of the hsgd paper (arXiv 2510.16687): the Mahalanobis QQ plot of SGD's last iterate (``hsgd-fig1a``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from privdyn.dynamics import hsgd as dyn
from privdyn.experiments.hsgd_risk.common import (
    _QUANTILES,
    CLAIM,
    INVARIANT,
    PAPER,
    REFINEMENTS,
    SOLVER_RTOL,
    Fig1aConfig,
    _batch_key,
    _problem,
    _simulate,
    _start,
    paper_setting,
    reference_moments,
)
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.naming import json_number
from privdyn.runs.plotting import as_floats, pyplot, save_figure, select_series
from privdyn.runs.results import (
    FAMILY_LEVEL,
    Check,
    Metric,
    Series,
    Table,
    check_close,
    check_monte_carlo,
    finding,
    mean_se,
)

__all__ = ["Fig1a"]


class Fig1a(Experiment[Fig1aConfig]):
    name = "hsgd-fig1a"
    paper_key = "hsgd"
    title = "Mahalanobis QQ plot of the SGD last iterate against the linearized-HSGD Gaussian law"
    paper = f"{PAPER}, Figure 1(a)"
    description = ("SGD last iterate vs N(m(T), V(T)) of eq. (10): Mahalanobis distances against chi2_d quantiles "
                   "(d=1000, n=1500, eta=0.05, ridge=0.1, sigma=1.5).")
    config_class = Fig1aConfig

    def units(self, config: Fig1aConfig) -> list[Unit]:
        units = [Unit("law", {"method": "volterra"})]
        for first, count in config.run_batches():
            units.append(Unit(_batch_key("simulation", first, count),
                              {"method": "simulation", "first_run": first, "num_runs": count}))
        return units

    def compute_unit(self, config: Fig1aConfig, unit: Unit, seed: int) -> dict[str, Any]:
        design, x0 = paper_setting(config.d, seed)
        problem = _problem(config, design, x0, config.noise_std)
        law = dyn.linearized_law(problem, [config.horizon], max_step=1.0 / config.d, refinements=REFINEMENTS)
        if unit.params["method"] == "volterra":
            ref = reference_moments(design, x0=_start(config, x0), init_variance=config.init_variance,
                                    step_size=config.step_size, ridge=config.ridge, noise_std=config.noise_std,
                                    times=[config.horizon])
            # directions 0 (the spike u = 1/√d) and 1 (a bulk direction) of the design's eigenbasis
            return {"variance": law.variance[0, :2].tolist(), "population_risk": float(law.population_risk[0]),
                    "mean_spike": float(law.mean[0, 0]),
                    "reference_variance": ref.variance[0].tolist(),
                    "reference_population_risk": float(ref.population_risk[0]),
                    "reference_mean_spike": float(ref.mean_spike[0])}
        sim = _simulate(config, seed, config.noise_std, unit.params["first_run"], unit.params["num_runs"],
                        iterate_steps=[config.n])
        assert sim.iterates is not None  # iterate_steps given
        coords = design.eigen_coordinates(sim.iterates[:, 0, :])  # (R, d); direction 0 is the spike
        z = (coords - law.mean[0]) / np.sqrt(law.variance[0])
        return {"distance_sq": np.sum(z**2, axis=1).tolist(), "spike_z": z[:, 0].tolist(),
                "bulk_mean_z_sq": np.mean(z[:, 1:] ** 2, axis=1).tolist()}

    def assemble(self, config: Fig1aConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        law = outputs["law"]
        d2_list: list[float] = []
        spike_list: list[float] = []
        bulk_list: list[float] = []
        for first, count in config.run_batches():
            out = outputs[_batch_key("simulation", first, count)]
            d2_list += out["distance_sq"]
            spike_list += out["spike_z"]
            bulk_list += out["bulk_mean_z_sq"]
        d2, spike, bulk = np.sort(np.asarray(d2_list)), np.asarray(spike_list), np.asarray(bulk_list)
        runs, d = d2.size, config.d
        probs = (np.arange(1, runs + 1) - 0.5) / runs
        theory_q = stats.chi2.ppf(probs, d)
        base = {**config.base_params(), "noise_std": json_number(config.noise_std)}
        series = [
            Series(name="Mahalanobis QQ", params={**base, "method": "simulation", "quantity": "mahalanobis_qq"},
                   x=theory_q, y=d2, x_label="chi2_d quantile", y_label="squared Mahalanobis distance"),
            Series(name="chi2_d diagonal", params={**base, "method": "volterra", "quantity": "mahalanobis_qq"},
                   x=theory_q[[0, -1]], y=theory_q[[0, -1]], x_label="chi2_d quantile",
                   y_label="squared Mahalanobis distance"),
        ]
        checks: list[Check] = [check_close(
            "law_equals_reference_moment_ode", kind=INVARIANT,
            claim="the law's variances V_jj(T) (spike, bulk), P_T and the spike mean u·m(T) from linearized_law "
                  "(Volterra + closed-form mean) equal the independent DOP853 moment solve to 1e-8 relative",
            expected=[*law["reference_variance"], law["reference_population_risk"], law["reference_mean_spike"]],
            measured=[*law["variance"], law["population_risk"], law["mean_spike"]], rtol=SOLVER_RTOL,
            atol=1e-10, note="reference: the moment closure written out from the design's analytic Σ")]
        d2_mean, _, d2_se = mean_se(d2)
        mean, se = float(d2_mean), float(d2_se)
        checks.append(check_monte_carlo(
            "mahalanobis_mean", kind=CLAIM,
            claim=f"Figure 1(a) / Conjecture 3.1: SGD's last iterate has the law N(m(T), V(T)), so the mean squared "
                  f"Mahalanobis distance over {runs} runs equals d = {d}",
            expected=float(d), measured=mean, standard_error=se,
            note=f"claim: E D² = d = {d}; measured {mean:.4g} ± {se:.3g} (SE); the O(η·a) discretization shift of "
                 f"discrete SGD is ≈ {d * config.step_size * config.ridge / 2:.3g}"))
        ks = stats.kstest(d2, stats.chi2(d).cdf)
        p_value = float(ks.pvalue)
        checks.append(Check(
            name="mahalanobis_ks", kind=CLAIM,
            claim=f"Figure 1(a): the QQ points lie on the diagonal: a Kolmogorov-Smirnov test of the {runs} squared "
                  f"distances against chi2_{d} does not reject at level {FAMILY_LEVEL:g}",
            expected=FAMILY_LEVEL, measured=p_value, tolerance=None, passed=p_value >= FAMILY_LEVEL,
            note=f"KS statistic {float(ks.statistic):.4g}, p-value {p_value:.3g}"))
        emp_q = np.quantile(d2, _QUANTILES)
        ref_q = stats.chi2.ppf(_QUANTILES, d)
        rel = np.abs(emp_q - ref_q) / ref_q
        checks.append(finding(
            "mahalanobis_quantiles", claim="median relative error of the matched quantiles (5, 25, 50, 75, 95%) of "
                                           "D² against chi2_d (acceptance: below 1-2%)",
            measured=float(np.median(rel)),
            note=f"empirical {[round(float(q), 1) for q in emp_q]} vs chi2_d {[round(float(q), 1) for q in ref_q]}"))
        spike_ratio = float(np.mean(spike**2))
        bulk_ratio = float(np.mean(bulk))
        checks.append(finding(
            "per_mode_variance_ratio", claim="empirical over theoretical variance of the eigen-coordinates of x_n: "
                                             "[spike, bulk average] (1 under eq. (10))",
            measured=[spike_ratio, bulk_ratio],
            note=f"spike: mean z² over {runs} runs (SE ≈ {math.sqrt(2.0 / runs):.2g}); bulk: mean of z² over the "
                 f"d − 1 bulk directions and the runs"))
        table = Table(name="mahalanobis quantiles", columns=["probability", "empirical", "chi2_d"],
                      rows=[[p, float(e), float(r)] for p, e, r in zip(_QUANTILES, emp_q, ref_q, strict=True)])
        metrics = [Metric(name="mean_distance_sq", params=base, value=mean),
                   Metric(name="ks_p_value", params=base, value=p_value),
                   Metric(name="population_risk_at_T", params={**base, "method": "volterra"},
                          value=law["population_risk"])]
        return Findings(series=series, tables=[table], metrics=metrics, checks=checks)

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(5.2, 5.0))
        qq = select_series(result, method="simulation", quantity="mahalanobis_qq")
        diag = select_series(result, method="volterra", quantity="mahalanobis_qq")
        if qq:
            ax.plot(as_floats(qq[0]["x"]), as_floats(qq[0]["y"]), ".", ms=3, color="C0", label="SGD last iterate")
        if diag:
            ax.plot(as_floats(diag[0]["x"]), as_floats(diag[0]["y"]), "k--", lw=0.9, label="y = x")
        cfg = result["config"]
        ax.set_title(f"d = {cfg['d']}, n = {cfg['n']}, σ = {cfg['noise_std']}", fontsize=9)
        ax.set_xlabel(r"$\chi^2_d$ quantile")
        ax.set_ylabel(r"$(x_n - m(T))^\top V(T)^{-1} (x_n - m(T))$")
        ax.legend(fontsize=8)
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]
