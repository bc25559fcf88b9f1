"""Figure 3 of the hsgd paper (arXiv 2510.16687): clipped SGD risk and the Ye-Shokri bound against HSGD
(``hsgd-fig3a``, ``hsgd-fig3b``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd
from privdyn.data.hsgd_design import hsgd_problem
from privdyn.dynamics import hsgd as dyn
from privdyn.experiments.hsgd_privacy_figures.common import (
    _REF_YE_SHOKRI,
    CLAIM,
    INVARIANT,
    REFINEMENTS,
    Fig3aConfig,
    Fig3bConfig,
    _curve_checks,
    _curve_unit,
    _is_paper_setting,
    _privacy_params,
)
from privdyn.experiments.hsgd_risk import PAPER, paper_setting
from privdyn.privacy.hidden_state import ye_shokri_rdp
from privdyn.reference.hsgd_privacy import reference_ye_shokri
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.naming import json_number, printed_value, unit_key
from privdyn.runs.plotting import as_floats, mark_coincident, pyplot, save_figure, select_series
from privdyn.runs.results import (
    Z_SCORE,
    Check,
    Metric,
    Series,
    check_close,
    check_not_applicable,
    check_ordering,
    finding,
    mean_se,
)
from privdyn.schedules import Constant

__all__ = ["Fig3a", "Fig3b"]


# --------------------------------------------------------------------------------------------------------------
# Figure 3(a)
# --------------------------------------------------------------------------------------------------------------


def _batch_key(first: int, count: int) -> str:
    return f"simulation/runs={first}-{first + count - 1}"


class Fig3a(Experiment[Fig3aConfig]):
    name = "hsgd-fig3a"
    paper_key = "hsgd"
    title = "Population risk of clipped noisy SGD against the unclipped run"
    paper = f"{PAPER}, Figure 3(a)"
    description = ("P(x_k) of noisy SGD clipped at c in {3, 5, 7} and unclipped (sigma=1.5, common random numbers), "
                   "with the Volterra curve of the unclipped run.")
    config_class = Fig3aConfig

    def units(self, config: Fig3aConfig) -> list[Unit]:
        units = [Unit("volterra", {"method": "volterra"})]
        units += [Unit(_batch_key(first, count), {"method": "simulation", "first_run": first, "num_runs": count})
                  for first, count in config.run_batches()]
        return units

    def compute_unit(self, config: Fig3aConfig, unit: Unit, seed: int) -> dict[str, Any]:
        design, x0 = paper_setting(config.d, seed)
        steps = config.record_steps()
        if unit.params["method"] == "volterra":
            secret = config.x0_policy == "random_secret"
            problem = hsgd_problem(design, x0=None if secret else x0, learning_rate=Constant(config.learning_rate),
                                   ridge=config.ridge, noise_std=config.noise_std, x0_policy=config.x0_policy,
                                   init_variance=1.0)
            curve = dyn.volterra_risk(problem, steps / config.d, max_step=1.0 / config.d, refinements=REFINEMENTS)
            return {"steps": steps.tolist(), "population_risk": np.asarray(curve.population_risk).tolist()}
        start = np.zeros_like(x0) if config.x0_policy == "random_secret" else x0
        out: dict[str, Any] = {"steps": steps.tolist(), "risk": {}, "clipped_steps": {}}
        for clip in (None, *config.clips):
            sim = simulate_noisy_sgd(data=design, x0=start, ridge=config.ridge, num_steps=config.n,
                                     num_runs=unit.params["num_runs"], seed=seed,
                                     unit_key=unit_key(method="simulation", d=config.d, n=config.n),
                                     first_run=unit.params["first_run"], step_size=config.step_size,
                                     noise_std=config.noise_std, clip=clip, clip_convention=config.clip_convention,
                                     init_variance=config.init_variance, record_steps=steps)
            key = "none" if clip is None else repr(float(clip))
            out["risk"][key] = sim.population_risk.tolist()
            if sim.clipped_steps is not None:
                out["clipped_steps"][key] = sim.clipped_steps.tolist()
        return out

    def assemble(self, config: Fig3aConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        vol = outputs["volterra"]
        steps = np.asarray(vol["steps"])
        base = {**config.base_params(), "noise_std": json_number(config.noise_std), "x0_policy": config.x0_policy,
                "clip_convention": config.clip_convention, "quantity": "population_risk"}
        series.append(Series(name="Volterra (unclipped)", params={**base, "method": "volterra", "clip": None},
                             x=steps, y=vol["population_risk"], x_label="iteration k", y_label="population_risk"))
        batches = [outputs[_batch_key(first, count)] for first, count in config.run_batches()]
        risk = {key: np.concatenate([np.asarray(b["risk"][key]) for b in batches]) for key in batches[0]["risk"]}
        clipped = {key: np.concatenate([np.asarray(b["clipped_steps"][key]) for b in batches])
                   for key in batches[0]["clipped_steps"]}
        runs = risk["none"].shape[0]
        for clip in (None, *config.clips):
            key = "none" if clip is None else repr(float(clip))
            values = risk[key]
            mean, sd, se = mean_se(values, axis=0)
            series.append(Series(name=f"SGD mean clip={clip}", params={**base, "method": "simulation",
                                                                        "clip": None if clip is None
                                                                        else json_number(clip)},
                                 x=steps, y=mean, y_low=mean - sd, y_high=mean + sd, standard_error=se,
                                 x_label="iteration k", y_label="population_risk"))
        base_runs = risk["none"]
        for clip in config.clips:
            key = repr(float(clip))
            counts = clipped[key]
            never = counts == 0
            diff = risk[key] - base_runs
            tag = f"clip={json_number(clip)}"
            if np.any(never):
                worst = float(np.max(np.abs(diff[never])))
                checks.append(Check(
                    name=f"non_binding_clip_is_identity {tag}", kind=INVARIANT,
                    claim=f"the {int(never.sum())} runs in which clipping at c = {json_number(clip)} never binds are "
                          "bit-identical to the unclipped runs (same data and noise streams)",
                    expected=0.0, measured=worst, tolerance=0.0, passed=worst == 0.0,
                    note="measured: max |P_clipped(x_k) − P_unclipped(x_k)| over those runs and steps"))
            else:
                checks.append(check_not_applicable(
                    f"non_binding_clip_is_identity {tag}", kind=INVARIANT,
                    claim=f"runs in which clipping at c = {json_number(clip)} never binds equal the unclipped runs",
                    note="not applicable: clipping binds in every run"))
            paired = diff[:, 1:].mean(axis=1)  # time-averaged paired difference per run
            mean_diff, _, se_diff = map(float, mean_se(paired))
            passed = mean_diff >= -Z_SCORE * se_diff
            checks.append(Check(
                name=f"unclipped_attains_lowest_risk {tag}", kind=CLAIM,
                claim=f"Figure 3(a): the unclipped run attains the lowest risk: the time-averaged paired difference "
                      f"P_clipped − P_unclipped (c = {json_number(clip)}) is not below 0 beyond z = {Z_SCORE:g} SE",
                expected=0.0, measured=mean_diff, tolerance=Z_SCORE * se_diff, standard_error=se_diff, passed=passed,
                note=f"claim: clipped ≥ unclipped; measured {mean_diff:.4g} ± {se_diff:.2g} (SE) over {runs} paired "
                     "runs (common random numbers). An independent implementation shows no visible gap: clipping "
                     "rarely binds for c ≥ 3 under the full-gradient convention"))
            frac = float(counts.mean() / config.n)
            metrics += [Metric(name="clipped_step_fraction", params={"clip": json_number(clip)}, value=frac),
                        Metric(name="mean_paired_risk_difference", params={"clip": json_number(clip)},
                               value=mean_diff)]
            checks.append(finding(
                f"clipping_frequency {tag}",
                claim=f"mean fraction of the n steps whose gradient is clipped at c = {json_number(clip)}, and the "
                      "fraction of runs in which it never binds",
                measured=[frac, float(np.mean(never))],
                note="independent implementation (Figure 3(a)): c = 3 clips ≈ 2% of the steps (first ~35 iterations), "
                     "c = 5, 7 never"))
        mean, _, se = mean_se(base_runs, axis=0)
        pred = np.asarray(vol["population_risk"])
        live = np.ptp(base_runs, axis=0) > 0  # x_0 (equal in every run) carries no sampling error
        dev = float(np.max(np.abs(mean - pred)[live] / se[live])) if np.any(live) else 0.0
        checks.append(finding(
            "unclipped_vs_volterra",
            claim="largest |mean − Volterra| of the unclipped SGD risk over the recorded steps, in standard errors "
                  "(the comparison with a derived tolerance is hsgd-fig2a's)", measured=dev,
            note=f"{runs} runs, {int(np.sum(live))} recorded steps"))
        return Findings(series=series, metrics=metrics, checks=checks)

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for i, s in enumerate(select_series(result, method="simulation")):
            c = s["params"]["clip"]
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), color=f"C{i}", lw=1.1,
                    label="unclipped" if c is None else f"clip c = {c}")
        vol = select_series(result, method="volterra")
        if vol:
            ax.plot(as_floats(vol[0]["x"]), as_floats(vol[0]["y"]), "k--", lw=0.9, label="Volterra (unclipped)")
        cfg = result["config"]
        ax.set_xlabel("iteration k")
        ax.set_ylabel("population risk (mean over runs)")
        ax.set_title(f"σ = {cfg['noise_std']}, {cfg['num_runs']} runs, d = {cfg['d']}", fontsize=9)
        mark_coincident(ax)  # a clip that never binds gives the unclipped run (common random numbers)
        ax.legend(fontsize=8)
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]


# --------------------------------------------------------------------------------------------------------------
# Figure 3(b)
# --------------------------------------------------------------------------------------------------------------


class Fig3b(Experiment[Fig3bConfig]):
    name = "hsgd-fig3b"
    paper_key = "hsgd"
    title = "Ye-Shokri last-iterate RDP bound for clipped SGD against the HSGD surrogate for unclipped SGD"
    paper = f"{PAPER}, Figure 3(b)"
    description = ("Ye & Shokri (2022) one-epoch RDP bound (bound) for clips c in {3, 5, 7} vs the HSGD rdp_epsilon "
                   "curve (surrogate) of the unclipped run, sigma=1.5, alpha=2.")
    config_class = Fig3bConfig

    def units(self, config: Fig3bConfig) -> list[Unit]:
        return [Unit(unit_key(method="volterra", noise_std=config.noise_std), {"method": "volterra"}),
                Unit("ye_shokri", {"method": "ye_shokri"})]

    def compute_unit(self, config: Fig3bConfig, unit: Unit, seed: int) -> dict[str, Any]:
        if unit.params["method"] == "volterra":
            return _curve_unit(config, config.noise_std, seed)
        ks = config.curve_iterates()
        q = 1.0 - config.step_size * config.ridge
        out: dict[str, Any] = {"iterates": ks.tolist(), "bound": {}, "reference": {}, "guarantee": None}
        for clip in config.clips:
            multiplier = config.noise_std / clip
            loss = ye_shokri_rdp(config.renyi_order, noise_multiplier=multiplier, contraction=q, num_steps=config.n,
                                 iterates=ks)
            out["guarantee"] = loss.guarantee.value
            out["bound"][repr(float(clip))] = np.asarray(loss.value).tolist()
            out["reference"][repr(float(clip))] = reference_ye_shokri(
                config.renyi_order, noise_multiplier=multiplier, contraction=q, num_steps=config.n,
                iterates=ks).tolist()
        return out

    def assemble(self, config: Fig3bConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        hsgd = outputs[unit_key(method="volterra", noise_std=config.noise_std)]
        ys = outputs["ye_shokri"]
        ks = np.asarray(hsgd["iterates"])
        eps = np.asarray(hsgd["rdp_epsilon"], dtype=float)
        series.append(Series(name="HSGD rdp_epsilon (unclipped)",
                             params=_privacy_params(config, noise_std=config.noise_std,
                                                    renyi_order=config.renyi_order, num_pairs=hsgd["num_pairs"],
                                                    method="volterra", guarantee=hsgd["guarantee"],
                                                    quantity="rdp_epsilon"),
                             x=ks, y=eps, x_label="iteration k", y_label="rdp_epsilon"))
        checks = _curve_checks(f"noise_std={json_number(config.noise_std)}", config, hsgd)
        clips = sorted(float(c) for c in config.clips)
        bounds = []
        for clip in clips:
            key = repr(clip)
            bound = np.asarray(ys["bound"][key], dtype=float)
            bounds.append(bound)
            params = {**_privacy_params(config, noise_std=config.noise_std, renyi_order=config.renyi_order,
                                        num_pairs=None, method="ye_shokri", guarantee=ys["guarantee"],
                                        quantity="rdp_epsilon", clip=clip, mode=None, x0_policy=None),
                      "noise_multiplier": config.noise_std / clip}
            series.append(Series(name=f"Ye-Shokri bound clip={clip:g}", params=params, x=ks, y=bound,
                                 x_label="iteration k", y_label="rdp_epsilon"))
            tag = f"clip={json_number(clip)}"
            checks.append(check_close(
                f"ye_shokri_matches_closed_form {tag}", kind=INVARIANT,
                claim="the Ye-Shokri trajectory equals the Gaussian mechanism of the contracted linear recursion "
                      "(ε_j = α(2q^(j−1))²/(2σ_m² Σ_(i<j) q^(2i)), sum accumulated) with this module's mixture",
                expected=ys["reference"][key], measured=bound.tolist(), rtol=1e-10,
                note=f"σ_m = σ/c = {config.noise_std / clip:.6g}, q = 1 − ηδ"))
            metrics.append(Metric(name="ye_shokri_final", params={"clip": json_number(clip)}, value=float(bound[-1])))
            checks.append(finding(
                f"bound_over_surrogate {tag}",
                claim=f"Ye-Shokri bound (c = {json_number(clip)}) over the HSGD surrogate at k = n",
                measured=float(bound[-1] / eps[-1]) if eps[-1] > 0 else math.inf))
        checks += self._spec_values(config, clips, bounds)
        upper = np.min(np.stack(bounds), axis=0)
        live = ks >= 1
        checks.append(check_ordering(
            "bound_above_surrogate", kind=CLAIM,
            claim="Figure 3(b): the Ye-Shokri RDP of every clipped run lies above the HSGD curve of the unclipped run "
                  "at every iterate k >= 1",
            lower=eps[live], upper=upper[live],
            note=f"at k = n: bounds {[f'{b[-1]:.4g}' for b in bounds]} for c = {[json_number(c) for c in clips]} vs "
                 f"HSGD {eps[-1]:.3g} (a formal bound against a surrogate: different kinds of number)"))
        if len(clips) >= 2:
            stacked = np.stack(bounds)[:, live]
            ok = bool(np.all(np.diff(stacked, axis=0) > 0))
            checks.append(Check(
                name="bound_increases_with_clip", kind=CLAIM,
                claim="Figure 3(b): a smaller clip c gives a smaller Ye-Shokri loss (strictly increasing in c at every "
                      "k >= 1)", expected=None, measured=[float(b[-1]) for b in bounds], tolerance=None, passed=ok,
                note=f"values at k = n for c = {[json_number(c) for c in clips]}"))
        return Findings(series=series, metrics=metrics, checks=checks)

    @staticmethod
    def _spec_values(config: Fig3bConfig, clips: list[float], bounds: list[np.ndarray]) -> list[Check]:
        checks = []
        applies = _is_paper_setting(config) and config.renyi_order == 2 and config.noise_std == 1.5
        for clip, bound in zip(clips, bounds, strict=True):
            printed = _REF_YE_SHOKRI.get(clip)
            if printed is None:
                continue
            value, half = printed_value(printed)
            name = f"ye_shokri_spec_value clip={json_number(clip)}"
            claim = ("Figure 3(b) reference value (independent implementation): with α = 2, σ = 1.5, η = 0.05, "
                     f"δ = 0.1, n = 1500 the Ye-Shokri bound at k = n is {printed} for c = {json_number(clip)}")
            if not applies:
                checks.append(check_not_applicable(name, kind=INVARIANT, claim=claim, expected=value,
                                                   note="not applicable: the config differs from the "
                                                        "reference setting"))
                continue
            checks.append(check_close(name, kind=INVARIANT, claim=claim, expected=value, measured=float(bound[-1]),
                                      atol=half, note="tolerance: half a unit in the last printed digit"))
        return checks

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for i, s in enumerate(select_series(result, method="ye_shokri")):
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), color=f"C{i}", lw=1.1,
                    label=f"Ye-Shokri bound, c = {s['params']['clip']}")
        for s in select_series(result, method="volterra"):
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), "k-", lw=1.2, label="HSGD surrogate (unclipped)")
        cfg = result["config"]
        ax.set_yscale("log")
        ax.set_xlabel("iteration k")
        ax.set_ylabel(f"Rényi DP ε(α), α = {cfg['renyi_order']}")
        ax.set_title(f"σ = {cfg['noise_std']}, d = {cfg['d']}, n = {cfg['n']}", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]
