"""Figure 1 of the dpgd paper (arXiv 2505.16329): DP-GD trajectories against the ODE, by dimension (``dpgd-fig1``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn.algorithms.dpgd import DPGDHyperparameters, simulate_dpgd
from privdyn.dynamics import dpgd as dyn
from privdyn.experiments.dpgd_common import PAPER, learning_rate_profile
from privdyn.experiments.dpgd_trajectory.common import (
    _PAPER_CONFIG,
    _PAPER_KEYS,
    _REFERENCE_TABLE,
    _REFERENCE_TIMES,
    ALLOWANCE_MIN_DIM,
    CLAIM,
    INVARIANT,
    LARGE_DIM,
    LSODA_RTOL,
    Fig1Config,
    _design,
    _ode_times,
    _stream_key,
    reference_risk_ode,
)
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.naming import json_number, printed_value, unit_key
from privdyn.runs.plotting import as_floats, pyplot, save_figure, select_series
from privdyn.runs.results import (
    Check,
    Metric,
    Series,
    bonferroni_z,
    check_close,
    check_monte_carlo,
    check_not_applicable,
    finding,
    finite_size_allowance,
    mean_se,
    weighted_slope,
)

__all__ = ["Fig1"]


class Fig1(Experiment[Fig1Config]):
    name = "dpgd-fig1"
    paper_key = "dpgd"
    title = "DP-GD risk trajectories against the ODE deterministic equivalent, with the final-iterate jump"
    paper = f"{PAPER}, Figure 1"
    description = ("Algorithm 1 vs the risk ODE (Theorem 1): alpha in {0, 1/2} x Sigma in {I, uniform[0,2]}, "
                   "d in {10, 100, 1000}; the final-iterate jump (Proposition 4.4).")
    config_class = Fig1Config

    def units(self, config: Fig1Config) -> list[Unit]:
        units = [Unit(unit_key(method="ode", panel=panel, d=d), {"method": "ode", "panel": panel, "d": d})
                 for panel, _, _ in config.panels() for d in config.dims]
        for spectrum in config.spectra:
            for d in config.dims:
                for first in range(0, config.num_runs, config.runs_per_unit):
                    count = min(config.runs_per_unit, config.num_runs - first)
                    units.append(Unit(f"{_stream_key(spectrum, d)}/runs={first}-{first + count - 1}",
                                      {"method": "simulation", "spectrum": spectrum, "d": d, "first_run": first,
                                       "num_runs": count}))
        return units

    def compute_unit(self, config: Fig1Config, unit: Unit, seed: int) -> dict[str, Any]:
        if unit.params["method"] == "ode":
            return self._ode_unit(config, unit.params["panel"], unit.params["d"])
        return self._simulation_unit(config, unit.params, seed)

    @staticmethod
    def _ode_unit(config: Fig1Config, panel: int, d: int) -> dict[str, Any]:
        _, alpha, spectrum = next(p for p in config.panels() if p[0] == panel)
        design = _design(spectrum, d, config)
        n = config.num_samples(d)
        gamma_n = d / n
        times = _ode_times(config, d)
        schedule = learning_rate_profile("polynomial", initial_learning_rate=config.initial_learning_rate,
                                         schedule_exponent=alpha)
        trajectory = dyn.solve_risk_ode(spectrum=design.spectrum, target_projections=design.squared_projections,
                                        aspect_ratio=gamma_n, learning_rate=schedule, clip=config.clip,
                                        rho=config.rho, label_noise=config.label_noise, times=times)
        reference, reference_final = reference_risk_ode(
            eigenvalues=design.eigenvalues, theta_star=design.theta_star, aspect_ratio=gamma_n, clip=config.clip,
            rho=config.rho, label_noise=config.label_noise, initial_learning_rate=config.initial_learning_rate,
            schedule_exponent=alpha, times=times)
        return {"times": times.tolist(), "risk": trajectory.risk.tolist(), "final_risk": trajectory.final_risk,
                "final_jump": trajectory.final_jump, "final_private_risk": trajectory.final_private_risk,
                "reference_risk": reference.tolist(), "reference_final_private_risk": reference_final,
                "aspect_ratio": gamma_n, "n": n}

    @staticmethod
    def _simulation_unit(config: Fig1Config, params: Mapping[str, Any], seed: int) -> dict[str, Any]:
        spectrum, d = params["spectrum"], params["d"]
        n = config.num_samples(d)
        rows = [DPGDHyperparameters(clip=config.clip, rho=config.rho,
                                    learning_rate=learning_rate_profile(
                                        "polynomial", initial_learning_rate=config.initial_learning_rate,
                                        schedule_exponent=alpha))
                for alpha in config.schedule_exponents]
        steps = config.record_steps(d)
        sim = simulate_dpgd(data=_design(spectrum, d, config), rows=rows, num_runs=params["num_runs"], seed=seed,
                            unit_key=_stream_key(spectrum, d), n=n, first_run=params["first_run"],
                            record_times=steps[:-1] / n)
        index = np.searchsorted(sim.steps, steps[:-1])
        assert (sim.penultimate_risk is not None and sim.risk_before_final_noise is not None
                and sim.final_private_risk is not None)  # all n steps run
        curve = np.concatenate([sim.risk[:, :, index], sim.penultimate_risk[:, :, None]], axis=2)
        return {"steps": steps.tolist(), "n": n, "risk": curve.tolist(),
                "risk_before_final_noise": sim.risk_before_final_noise.tolist(),
                "final_private_risk": sim.final_private_risk.tolist(), "initial_risk": sim.initial_risk}

    # ----------------------------------------------------------------------------------------------------------

    def assemble(self, config: Fig1Config, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        sims = self._gather_simulations(config, outputs)
        curves: dict[tuple[int, int], dict[str, Any]] = {}
        for panel, alpha, spectrum in config.panels():
            row = config.schedule_exponents.index(alpha)
            for d in config.dims:
                ode = outputs[unit_key(method="ode", panel=panel, d=d)]
                sim = sims[(spectrum, d)]
                n = config.num_samples(d)
                base = {"panel": panel, "schedule": "polynomial", "schedule_exponent": json_number(alpha),
                        "spectrum": spectrum, "d": d, "n": n, "aspect_ratio": json_number(config.aspect_ratio),
                        "clip": json_number(config.clip), "rho": json_number(config.rho),
                        "initial_learning_rate": json_number(config.initial_learning_rate),
                        "label_noise": json_number(config.label_noise)}
                ode_times = np.asarray(ode["times"])
                ode_risk = np.asarray(ode["risk"])
                steps = np.asarray(sim["steps"])
                times = steps / n
                pos = np.searchsorted(ode_times, times)
                runs = np.asarray(sim["risk"])[row]  # (runs, points)
                final = np.asarray(sim["final_private_risk"])[row]
                before = np.asarray(sim["risk_before_final_noise"])[row]
                mean, sd, se = mean_se(runs, axis=0)
                series.append(Series(name=f"ode panel={panel} d={d}", params={**base, "method": "ode",
                                                                              "quantity": "risk"},
                                     x=ode_times, y=ode_risk, x_label="t", y_label="excess_risk"))
                series.append(Series(name=f"ode final private risk panel={panel} d={d}",
                                     params={**base, "method": "ode", "quantity": "final_private_risk"},
                                     x=[1.0], y=[ode["final_private_risk"]], x_label="t", y_label="excess_risk"))
                series.append(Series(name=f"simulation panel={panel} d={d}",
                                     params={**base, "method": "simulation", "quantity": "risk"},
                                     x=np.concatenate([[0.0], times]),
                                     y=np.concatenate([[sim["initial_risk"]], mean]),
                                     y_low=np.concatenate([[sim["initial_risk"]], mean - sd]),
                                     y_high=np.concatenate([[sim["initial_risk"]], mean + sd]),
                                     standard_error=np.concatenate([[0.0], se]), x_label="t", y_label="excess_risk"))
                f_mean, f_sd, f_se = map(float, mean_se(final))
                series.append(Series(name=f"simulation final private risk panel={panel} d={d}",
                                     params={**base, "method": "simulation", "quantity": "final_private_risk"},
                                     x=[1.0], y=[f_mean], y_low=[f_mean - f_sd], y_high=[f_mean + f_sd],
                                     standard_error=[f_se], x_label="t",
                                     y_label="excess_risk"))
                # Curve points compared with the ODE: the grid, θ_{n−1} vs R at (n−1)/n, the released θ_n vs R(1)+jump.
                curves[(panel, d)] = {
                    "mean": np.append(mean, f_mean),
                    "se": np.append(se, f_sd / math.sqrt(final.size)),
                    "random": np.append(np.ptp(runs, axis=0) > 0, np.ptp(final) > 0),
                    "prediction": np.append(ode_risk[pos], ode["final_private_risk"]),
                    "times": np.append(times, 1.0),
                    "sd_time_average": _sd_of_mean(runs[:, :-1]),
                    "jump": final - before,
                    "n": n,
                }
                if alpha == 0:
                    metrics.append(Metric(name="final_jump_simulated", params={"panel": panel, "d": d},
                                          value=float(np.mean(final - before))))
                    metrics.append(Metric(name="final_jump_ode", params={"panel": panel, "d": d},
                                          value=float(ode["final_jump"])))
                checks.append(self._solver_check(panel, d, ode))
        checks += self._simulation_checks(config, curves, metrics)
        checks += self._table_checks(config, outputs)
        checks += self._jump_checks(config, curves)
        checks += self._sd_checks(config, curves)
        return Findings(series=series, metrics=metrics, checks=checks)

    def _gather_simulations(self, config: Fig1Config, outputs: Mapping[str, Mapping[str, Any]]) -> dict:
        """Concatenate the run batches of each (spectrum, d) along the run axis, in run order."""
        fields = ("risk", "final_private_risk", "risk_before_final_noise")
        gathered: dict[tuple[str, int], dict[str, Any]] = {}
        for unit in self.units(config):
            if unit.params["method"] != "simulation":
                continue
            out = outputs[unit.key]
            entry = gathered.setdefault((unit.params["spectrum"], unit.params["d"]),
                                        {"steps": out["steps"], "initial_risk": out["initial_risk"],
                                         **{field: [] for field in fields}})
            for field in fields:
                entry[field].append(np.asarray(out[field]))
        for entry in gathered.values():
            for field in fields:
                entry[field] = np.concatenate(entry[field], axis=1)  # (rows, runs, ...)
        return gathered

    @staticmethod
    def _solver_check(panel: int, d: int, ode: Mapping[str, Any]) -> Check:
        return check_close(
            f"ode_matches_independent_lsoda panel={panel} d={d}", kind=INVARIANT,
            claim="the ODE curve and final private risk (exponential solver) equal an independent LSODA solve of "
                  "eq. (4.7) (right-hand side and Lemma B.1 closed forms written out separately) to 1e-4 relative",
            expected=[*ode["reference_risk"], ode["reference_final_private_risk"]],
            measured=[*ode["risk"], ode["final_private_risk"]], rtol=LSODA_RTOL,
            note="reference: scipy solve_ivp(method='LSODA', rtol=1e-10)")

    @staticmethod
    def _small_dim(config: Fig1Config, d: int) -> int | None:
        smaller = [s for s in config.dims if ALLOWANCE_MIN_DIM <= s < d]
        return max(smaller) if smaller else None

    def _simulation_checks(self, config: Fig1Config, curves: Mapping[tuple[int, int], Mapping[str, Any]],
                           metrics: list[Metric]) -> list[Check]:
        checks: list[Check] = []
        for panel, alpha, spectrum in config.panels():
            for d in config.dims:
                c = curves[(panel, d)]
                mean, se, pred = c["mean"], c["se"], c["prediction"]
                # Points where every run is equal (θ_0, recorded when n < num_time_points − 1) carry no sampling
                # error; they are exact (R(θ_0) = R(0)) and are left out of the Monte-Carlo comparison.
                random = np.asarray(c["random"])
                m = int(np.sum(random))
                z = bonferroni_z(max(m, 1))
                small = self._small_dim(config, d)
                if small is not None:
                    s = curves[(panel, small)]
                    cap = 0.03 * math.sqrt(200.0 / d) * np.abs(pred)
                    allowance = np.array([finite_size_allowance(abs(s["mean"][j] - s["prediction"][j]),
                                                                small_size=small, size=d, cap=float(cap[j]))
                                          for j in range(mean.size)])
                else:
                    allowance = np.zeros(mean.size)
                tol = z * se + allowance
                ratio = np.where(random, np.abs(mean - pred) / np.maximum(tol, np.finfo(float).tiny), -np.inf)
                worst = int(np.argmax(ratio))
                standardized = np.where(random, np.abs(mean - pred) / np.maximum(se, np.finfo(float).tiny), 0.0)
                params = {"panel": panel, "d": d}
                metrics.append(Metric(name="max_abs_deviation_from_ode", params=params,
                                      value=float(np.max(np.abs(mean - pred)))))
                metrics.append(Metric(name="max_standardized_deviation_from_ode", params=params,
                                      value=float(np.max(standardized))))
                where = "the released iterate θ_n" if worst == mean.size - 1 else (
                    "θ_{n−1}" if worst == mean.size - 2 else f"t = {c['times'][worst]:.4g}")
                claim = (f"panel {panel} (α={json_number(alpha)}, Σ={spectrum}), d={d}: the simulated mean at each of "
                         f"the {m} curve points lies within z·SE + allowance of the ODE (R(t); R(1) + jump for θ_n)")
                allowance_note = (f"allowance: |mean − ODE| at d={small} scaled by sqrt({small}/{d}), capped at "
                                  f"3%·sqrt(200/{d}) of the prediction" if small is not None
                                  else "no smaller d in [100, d) in the run: no allowance")
                note = (f"Bonferroni over {m} points at family-wise level 1e-6: z = {z:.3f}; {allowance_note}; "
                        f"worst point: {where}")
                if d >= LARGE_DIM:
                    check = check_monte_carlo(
                        f"simulation_matches_ode panel={panel} d={d}", claim=claim, expected=float(pred[worst]),
                        measured=float(mean[worst]), standard_error=float(se[worst]), z=z,
                        bias_allowance=float(allowance[worst]), note=note, point_standard_errors=se[random])
                    checks.append(check)
                else:
                    beyond = int(np.sum(random & (np.abs(mean - pred) > z * se)))
                    checks.append(finding(
                        f"simulation_vs_ode panel={panel} d={d}",
                        claim=f"panel {panel}, d={d} (< {LARGE_DIM}, below the size the allowance is derived for): "
                              "largest |mean − ODE| in standard errors over the curve",
                        measured=float(np.max(standardized)),
                        note=f"max |mean − ODE| = {float(np.max(np.abs(mean - pred))):.4g}; "
                             f"{beyond} of {m} points beyond z = {z:.3f} SE"))
        return checks

    @staticmethod
    def _table_checks(config: Fig1Config, outputs: Mapping[str, Mapping[str, Any]]) -> list[Check]:
        checks: list[Check] = []
        d = max(config.dims)
        applies = all(getattr(config, k) == getattr(_PAPER_CONFIG, k) for k in _PAPER_KEYS) and d >= 100
        for panel, alpha, spectrum in config.panels():
            printed = _REFERENCE_TABLE.get((alpha, spectrum))
            if printed is None:
                continue
            values = [printed_value(p) for p in printed]
            expected = [v for v, _ in values]
            tol = max(h for _, h in values)
            name = f"ode_reference_table panel={panel}"
            claim = (f"panel {panel} (α={json_number(alpha)}, Σ={spectrum}): the ODE gives R(0.25), R(0.5), R(0.75), "
                     f"R(1) and the final private risk of the reference table {list(printed)}")
            if not applies:
                checks.append(check_not_applicable(
                    name, kind=CLAIM, claim=claim, expected=expected,
                    note="not applicable: the table is the d → ∞ ODE at γ = 0.1, c = 1, η̃(0) = 3, ρ = 1, ζ = 0.3; "
                         "the config changes aspect_ratio, clip, initial_learning_rate, rho or label_noise, or "
                         "has no d >= 100 (the spectrum grid's resolution)"))
                continue
            ode = outputs[unit_key(method="ode", panel=panel, d=d)]
            times = np.asarray(ode["times"])
            risk = np.asarray(ode["risk"])
            measured = [float(risk[np.argmin(np.abs(times - t))]) for t in _REFERENCE_TIMES]
            measured.append(float(ode["final_private_risk"]))
            checks.append(check_close(name, kind=CLAIM, claim=claim, expected=expected, measured=measured, atol=tol,
                                      note=f"ODE on the d={d} spectrum; tolerance: half a unit in the last printed "
                                           "digit"))
        return checks

    @staticmethod
    def _jump_checks(config: Fig1Config, curves: Mapping[tuple[int, int], Mapping[str, Any]]) -> list[Check]:
        checks: list[Check] = []
        paper = all(getattr(config, k) == getattr(_PAPER_CONFIG, k) for k in _PAPER_KEYS)
        for panel, alpha, spectrum in config.panels():
            if alpha != 0:
                continue
            for d in config.dims:
                c = curves[(panel, d)]
                jump = np.asarray(c["jump"])
                n = c["n"]
                expected = 2.0 * config.clip**2 * config.initial_learning_rate**2 * (d / n) ** 2 / config.rho**2
                printed = " = 0.18" if paper else ""
                se = float(mean_se(jump).standard_error)
                checks.append(check_monte_carlo(
                    f"final_jump panel={panel} d={d}", kind=CLAIM,
                    claim=f"Proposition 4.4: the final noise adds 2c²η̃(1)²γ²/ρ²{printed} to the risk "
                          f"(panel {panel}, Σ={spectrum}, d={d}; mean of R(θ_n) − R(θ_n before its noise))",
                    expected=expected, measured=float(jump.mean()), standard_error=se,
                    note=f"claim: jump = 2c²η̃(1)²γ²/ρ² = {expected:.4g}; measured {float(jump.mean()):.4g} ± "
                         f"{se:.2g} (SE) over {jump.size} runs; exact in expectation at any d (tr Σ = d), so no "
                         "finite-d allowance"))
        return checks

    @staticmethod
    def _sd_checks(config: Fig1Config, curves: Mapping[tuple[int, int], Mapping[str, Any]]) -> list[Check]:
        checks: list[Check] = []
        dims = sorted(config.dims)
        for panel, alpha, spectrum in config.panels():
            name = f"sd_shrinks_like_inverse_sqrt_d panel={panel}"
            claim = (f"panel {panel} (α={json_number(alpha)}, Σ={spectrum}): the across-run sd of the risk shrinks "
                     "like 1/√d (log-log slope of the sd of the time-averaged curve against d equals −½)")
            if len(dims) < 2:
                checks.append(check_not_applicable(name, kind=CLAIM, claim=claim, expected=-0.5,
                                                   note="not applicable: needs at least two d"))
                continue
            sds = np.array([curves[(panel, d)]["sd_time_average"][0] for d in dims])
            log_se = np.array([curves[(panel, d)]["sd_time_average"][1] for d in dims])
            slope, slope_se, _ = weighted_slope(np.log(dims), np.log(sds), log_se)
            check = check_monte_carlo(name, kind=CLAIM, claim=claim, expected=-0.5, measured=slope,
                                      standard_error=slope_se,
                                      note=f"d = {dims}, sd = {[float(f'{s:.4g}') for s in sds]}; weighted "
                                           "least squares on log sd, SE of log sd from the sample kurtosis; the "
                                           "theory bound is O(log²n/√n), so the slope may deviate at small d")
            checks.append(check)
        return checks

    # ----------------------------------------------------------------------------------------------------------

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        panels = sorted({s["params"]["panel"] for s in result["series"]})
        dims = sorted({s["params"]["d"] for s in result["series"]})
        cols = 2 if len(panels) > 1 else 1
        rows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, 4.3 * rows), squeeze=False)
        colors = plt.get_cmap("viridis")(np.linspace(0.1, 0.8, max(len(dims), 1)))
        for ax, panel in zip(axes.flat, panels, strict=False):
            title = None
            for color, d in zip(colors, dims, strict=True):
                sim = select_series(result, panel=panel, d=d, method="simulation", quantity="risk")
                ode = select_series(result, panel=panel, d=d, method="ode", quantity="risk")
                final_sim = select_series(result, panel=panel, d=d, method="simulation",
                                          quantity="final_private_risk")
                final_ode = select_series(result, panel=panel, d=d, method="ode", quantity="final_private_risk")
                if not sim or not ode:
                    continue
                s = sim[0]
                p = s["params"]
                title = (f"panel {panel}: α = {p['schedule_exponent']}, Σ = {p['spectrum']}, γ = {p['aspect_ratio']}")
                x = as_floats(s["x"])
                ax.plot(x, as_floats(s["y"]), color=color, lw=1.2, label=f"DP-GD, d = {d} (mean ± 1 sd)")
                ax.fill_between(x, as_floats(s["y_low"]), as_floats(s["y_high"]), color=color, alpha=0.2, lw=0)
                ax.plot(as_floats(ode[0]["x"]), as_floats(ode[0]["y"]), color="k", ls="--", lw=0.9,
                        label="ODE" if d == dims[-1] else None)
                if p["schedule_exponent"] == 0 and final_sim and final_ode:
                    f = final_sim[0]
                    seg = [1.0, 1.05]
                    ax.plot(seg, [float(f["y"][0])] * 2, color=color, lw=1.2)
                    ax.fill_between(seg, [float(f["y_low"][0])] * 2, [float(f["y_high"][0])] * 2, color=color,
                                    alpha=0.2, lw=0)
                    ax.axhline(float(final_ode[0]["y"][0]), color="r", lw=0.8, ls=":",
                               label="R(1) + 2c²η̃(1)²γ²/ρ²" if d == dims[-1] else None)
            if title:
                ax.set_title(title, fontsize=9)
            ax.set_xlabel("t = k/n")
            ax.set_ylabel("excess risk R(θ_⌊tn⌋)")
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        fig.suptitle("DP-GD vs ODE", fontsize=10)
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]


def _sd_of_mean(runs: np.ndarray) -> tuple[float, float]:
    """The across-run sd of the time-averaged curve, and the SE of its logarithm (delta method, sample kurtosis)."""
    values = np.asarray(runs, dtype=float).mean(axis=1)
    count = values.size
    centred = values - values.mean()
    var = float(np.sum(centred**2) / (count - 1))
    m4 = float(np.mean(centred**4))
    # Var(s²) ≈ (μ4 − σ⁴(N − 3)/(N − 1))/N (2σ⁴/(N − 1) for normal data); Var(log s) ≈ Var(s²)/(4σ⁴)
    var_s2 = (m4 - var**2 * (count - 3) / (count - 1)) / count
    if not var_s2 > 0:
        var_s2 = 2.0 * var**2 / (count - 1)
    return math.sqrt(var), math.sqrt(var_s2) / (2.0 * var) if var > 0 else math.inf
