"""Figure 2(b) of the hsgd paper (arXiv 2510.16687): the last-iterate RDP curve per noise level (``hsgd-fig2b``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn.experiments.hsgd_privacy_figures.common import (
    _REF_FIG2B,
    CLAIM,
    FINDING,
    RELAXATION_TIMES,
    Fig2bConfig,
    _curve_checks,
    _curve_unit,
    _is_paper_setting,
    _privacy_params,
)
from privdyn.experiments.hsgd_risk import PAPER
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.naming import json_number, unit_key
from privdyn.runs.plotting import as_floats, pyplot, save_figure, select_series
from privdyn.runs.results import (
    Check,
    Metric,
    Series,
    Table,
    check_not_applicable,
    finding,
)

__all__ = ["Fig2b"]


# --------------------------------------------------------------------------------------------------------------
# Figure 2(b)
# --------------------------------------------------------------------------------------------------------------


class Fig2b(Experiment[Fig2bConfig]):
    name = "hsgd-fig2b"
    paper_key = "hsgd"
    title = "Last-iterate RDP of noisy SGD through HSGD (surrogate) per noise_std"
    paper = f"{PAPER}, Figure 2(b)"
    description = ("rdp_epsilon(k) of Theorem 4.3 (eq. (15), surrogate, top-5 proxy pairs, alpha=2) for sigma in "
                   "{1, 1.25, 1.5}; the paper's steady-state ordering claim vs the sigma-independent plateau.")
    config_class = Fig2bConfig

    def units(self, config: Fig2bConfig) -> list[Unit]:
        return [Unit(unit_key(method="volterra", noise_std=float(s)), {"noise_std": float(s)})
                for s in config.noise_stds]

    def unit_config(self, config: Fig2bConfig, unit: Unit) -> Mapping[str, Any]:
        data = config.to_dict()
        data.pop("noise_stds")
        return {**data, "noise_std": unit.params["noise_std"]}

    def compute_unit(self, config: Fig2bConfig, unit: Unit, seed: int) -> dict[str, Any]:
        return _curve_unit(config, float(unit.params["noise_std"]), seed)

    def assemble(self, config: Fig2bConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        sigmas = sorted(float(s) for s in config.noise_stds)
        peaks, peak_at, plateaus, curves, decomposition = [], [], [], [], []
        for sigma in sigmas:
            out = outputs[unit_key(method="volterra", noise_std=sigma)]
            ks = np.asarray(out["iterates"])
            eps = np.asarray(out["rdp_epsilon"], dtype=float)
            params = _privacy_params(config, noise_std=sigma, renyi_order=config.renyi_order,
                                     num_pairs=out["num_pairs"], method="volterra", guarantee=out["guarantee"],
                                     quantity="rdp_epsilon")
            series.append(Series(name=f"HSGD rdp_epsilon sigma={sigma:g}", params=params, x=ks, y=eps,
                                 x_label="iteration k", y_label="rdp_epsilon"))
            tag = f"noise_std={sigma:g}"
            checks += _curve_checks(tag, config, out)
            i = int(np.argmax(eps))
            peaks.append(float(eps[i]))
            peak_at.append(int(ks[i]))
            plateaus.append(float(eps[-1]))
            curves.append(eps)
            lag = out["dense"][-1]
            decomposition.append((lag["mean_term"], lag["log_det_term"], lag["iterate"] - lag["position"]))
            mparams = {"noise_std": json_number(sigma), "renyi_order": json_number(config.renyi_order)}
            metrics += [Metric(name="peak_rdp_epsilon", params=mparams, value=peaks[-1]),
                        Metric(name="peak_iterate", params=mparams, value=peak_at[-1]),
                        Metric(name="final_rdp_epsilon", params=mparams, value=plateaus[-1])]
        checks += self._ordering_checks(config, sigmas, peaks, peak_at, plateaus, curves, decomposition)
        checks.append(self._spec_magnitudes(config, sigmas, peaks, peak_at, plateaus))
        table = Table(name="peak and plateau", columns=["noise_std", "peak_rdp_epsilon", "peak_iterate",
                                                        "final_rdp_epsilon", "mean_term_lag", "log_det_term_lag"],
                      rows=[[json_number(s), p, k, q, dm[0], dm[1]]
                            for s, p, k, q, dm in zip(sigmas, peaks, peak_at, plateaus, decomposition, strict=True)])
        return Findings(series=series, tables=[table], metrics=metrics, checks=checks)

    @staticmethod
    def _ordering_checks(config: Fig2bConfig, sigmas: list[float], peaks: list[float], peak_at: list[int],
                         plateaus: list[float], curves: list[np.ndarray],
                         decomposition: list[tuple[float, float, int]]) -> list[Check]:
        checks: list[Check] = []
        sig = [json_number(s) for s in sigmas]
        transient_claim = ("Figure 2(b): larger σ gives a uniformly smaller privacy loss in the transient: the peak of "
                           f"rdp_epsilon strictly decreases in σ over σ = {sig}")
        steady_claim = ("Figure 2(b) (Section 5 text): larger σ gives a uniformly smaller privacy loss at steady "
                        "state. Read as: the final rdp_epsilon(n) strictly decreases in σ, and each ratio "
                        "ε(σ_{i+1})/ε(σ_i) is below σ_i/σ_{i+1}: closer (in log scale) to the noise-calibrated "
                        "scaling (σ_i/σ_{i+1})² than to the σ-independent plateau (ratio 1) that the linearized laws "
                        "predict")
        if len(sigmas) < 2:
            note = "not applicable: needs at least two noise_stds"
            return [check_not_applicable("transient_decreases_in_noise_std", kind=CLAIM, claim=transient_claim,
                                         note=note),
                    check_not_applicable("steady_state_decreases_in_noise_std", kind=CLAIM, claim=steady_claim,
                                         note=note)]
        peak_ok = all(b < a for a, b in zip(peaks, peaks[1:], strict=False))
        checks.append(Check(name="transient_decreases_in_noise_std", kind=CLAIM, claim=transient_claim, expected=None,
                            measured=peaks, tolerance=None, passed=peak_ok,
                            note=f"peaks {[f'{p:.3g}' for p in peaks]} at k = {peak_at} for σ = {sig}"))
        stacked = np.stack(curves)[:, 1:]
        uniform = float(np.mean(np.all(np.diff(stacked, axis=0) < 0, axis=0)))
        checks.append(finding(
            "fraction_of_iterates_ordered_in_noise_std",
            claim="fraction of the iterates k >= 1 on the curve at which rdp_epsilon strictly decreases in σ "
                  "(1 = the paper's 'uniformly smaller')", measured=uniform))
        ratios = [b / a for a, b in zip(plateaus, plateaus[1:], strict=False)]
        bounds = [s0 / s1 for s0, s1 in zip(sigmas, sigmas[1:], strict=False)]
        relaxation = config.relaxation_iterations
        if config.n < RELAXATION_TIMES * relaxation:
            checks.append(check_not_applicable(
                "steady_state_decreases_in_noise_std", kind=CLAIM, claim=steady_claim,
                note=f"not applicable: n = {config.n} < {RELAXATION_TIMES:g} relaxation times "
                     f"({RELAXATION_TIMES * relaxation:.0f} iterations): the curve has not reached its steady state"))
        else:
            strictly = all(r < 1 for r in ratios)
            passed = strictly and all(r < b for r, b in zip(ratios, bounds, strict=True))
            note = (f"claim: larger σ uniformly smaller at steady state; measured rdp_epsilon(n = {config.n}) = "
                    f"{[f'{p:.4g}' for p in plateaus]} for σ = {sig}, consecutive ratios "
                    f"{[f'{r:.4f}' for r in ratios]} (thresholds σ_i/σ_(i+1) = {[f'{b:.4f}' for b in bounds]}; "
                    f"noise-calibrated (σ_i/σ_(i+1))² = {[f'{b * b:.4f}' for b in bounds]}); strictly decreasing: "
                    f"{strictly}.")
            if not passed:
                note += (" Not reproduced: the plateau is set by the covariance (log-determinant) term, "
                         "which does not depend on σ when the sampling-noise part 2P_tλ_j of the diffusion is small "
                         "against σ² (V ∝ σ², and D_α(N(0, σ²V_1) ‖ N(0, σ²V_2)) is σ-free); at lag "
                         f"{decomposition[0][2]} the top pair's log-determinant terms are "
                         f"{[f'{dm[1]:.3g}' for dm in decomposition]} vs mean terms "
                         f"{[f'{dm[0]:.3g}' for dm in decomposition]}. The σ-ordering holds only in the transient.")
            checks.append(Check(name="steady_state_decreases_in_noise_std", kind=CLAIM, claim=steady_claim,
                                expected=None, measured=ratios, tolerance=None, passed=passed, note=note))
        lag = int(round(relaxation))
        if config.n > lag:
            changes = []
            for eps in curves:
                ks = np.asarray(config.curve_iterates())
                earlier = float(eps[int(np.searchsorted(ks, config.n - lag))])
                changes.append(abs(float(eps[-1]) - earlier) / max(float(eps[-1]), np.finfo(float).tiny))
            checks.append(finding(
                "plateau_reached",
                claim=f"relative change of rdp_epsilon over the last relaxation time ({lag} iterations) before n, per "
                      "σ (near 0 once the curve has reached its plateau, after a few hundred iterations)",
                measured=changes))
        spread = (max(plateaus) - min(plateaus)) / float(np.mean(plateaus))
        checks.append(finding(
            "plateau_spread_across_noise_std",
            claim="relative spread (max − min)/mean of rdp_epsilon(n) across σ (0 for the σ-independent plateau "
                  "that the linearized laws predict; 1 − (σ_min/σ_max)² = "
                  f"{1 - (sigmas[0] / sigmas[-1]) ** 2:.3f} of the largest under 1/σ² scaling)",
            measured=spread, note=f"rdp_epsilon(n) = {[f'{p:.4g}' for p in plateaus]} for σ = {sig}"))
        checks.append(finding(
            "plateau_decomposition",
            claim=f"top pair at k = n, lag {decomposition[0][2]}: [mean term, log-determinant term] of D_α per σ, and "
                  "σ²·mean term (constant if the mean term scales as 1/σ²)",
            measured=[[dm[0], dm[1], s * s * dm[0]] for dm, s in zip(decomposition, sigmas, strict=True)],
            note="from the dense d × d computation; the log-determinant term dominates at steady state"))
        return checks

    @staticmethod
    def _spec_magnitudes(config: Fig2bConfig, sigmas: list[float], peaks: list[float], peak_at: list[int],
                         plateaus: list[float]) -> Check:
        claim = ("Figure 2(b) reference magnitudes (independent implementation, another data draw; α = 2, top-5 proxy "
                 "pairs, V(0) = 0): peak ≈ 8e-5 (σ=1), 5e-5 (σ=1.25), 3.7e-5 (σ=1.5) near k ≈ 10-25, plateau ≈ 1.3e-5")
        applies = (_is_paper_setting(config) and config.renyi_order == 2 and config.num_pairs == 5
                   and config.x0_policy == "random_public")
        if not applies:
            return check_not_applicable("spec_reference_magnitudes", kind=FINDING, claim=claim,
                                        note="not applicable: the reference values are for d = 1000, n = 1500, "
                                             "η = 0.05, δ = 0.1, α = 2, 5 pairs, x0_policy = random_public")
        expected = {json_number(s): _REF_FIG2B["peak"].get(s) for s in sigmas}
        measured = {json_number(s): [p, k, q] for s, p, k, q in zip(sigmas, peaks, peak_at, plateaus, strict=True)}
        return Check(name="spec_reference_magnitudes", kind=FINDING, claim=claim,
                     expected={"peak": expected, "plateau": _REF_FIG2B["plateau"]},
                     measured=measured, passed=None,
                     note="measured per σ: [peak, peak iterate, rdp_epsilon(n)]; the values depend on the data draw "
                          "(the pairs are extreme order statistics of the proxy)")

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for i, s in enumerate(select_series(result, quantity="rdp_epsilon")):
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), color=f"C{i}", lw=1.2,
                    label=f"σ = {s['params']['noise_std']} ({s['params']['guarantee']})")
        cfg = result["config"]
        ax.set_xlabel("iteration k")
        ax.set_ylabel(f"Rényi DP ε(α), α = {cfg['renyi_order']}")
        ax.set_yscale("log")
        ax.set_title(f"HSGD surrogate, top-{cfg['num_pairs']} proxy pairs, d = {cfg['d']}, n = {cfg['n']}",
                     fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]
