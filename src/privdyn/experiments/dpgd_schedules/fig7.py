"""Figure 7 of the dpgd paper (arXiv 2505.16329): tuned schedules versus n on synthetic data (``dpgd-fig7``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from privdyn import _check
from privdyn.algorithms.dpgd import simulate_dpgd
from privdyn.dynamics.dpgd import final_private_risk
from privdyn.experiments.dpgd_common import PAPER, synthetic_design
from privdyn.experiments.dpgd_schedules.common import (
    _PANEL,
    ALLOWANCE_MIN_DIMENSION,
    CLAIM,
    INVARIANT,
    TIE_RELATIVE,
    _best_or_tied,
    _hyperparameters,
    _paired,
    _privacy_error,
    _ratio_stats,
    _reference_row,
    _run_stats,
    _schedule_label,
    _tune_on_ode,
)
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.naming import json_number, printed_value, unit_key
from privdyn.runs.plotting import as_floats, mark_coincident, pyplot, save_figure, select_series
from privdyn.runs.results import (
    Z_SCORE,
    Check,
    Metric,
    Series,
    Table,
    check_close,
    check_monte_carlo,
    check_not_applicable,
    finding,
    finite_size_allowance,
)

__all__ = ["Fig7", "Fig7Config"]


# --------------------------------------------------------------------------------------------------------------
# Figure 7
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig7Config(ExperimentConfig):
    """Figure 7's setting (Section 7): d = 100, ζ = 0.3, ‖θ*‖ = 1 spread evenly, ρ = 0.1, c = 0.1.

    The paper's x-axis is n from small to 10⁴d; privdyn's grid is ``aspect_ratios`` γ (n = round(d/γ)), so an
    override of d keeps the reference points. Unstated in the paper and chosen here: the n grid (one point per
    decade, n = 100 … 10⁶ at d = 100), the tuner (``privdyn.tuning``: a log grid of ``grid_points`` per parameter,
    ``starts`` local Nelder–Mead refinements, stopping tolerance ``tuning_tolerance`` relative in the risk), the
    search box η̃(0) ∈ [``learning_rate_min``, 2/γ] and τ ∈ [``harmonic_offset_min``, ``harmonic_offset_max``], and
    the ODE solver tolerance ``ode_rtol``. ``num_runs`` runs per n, all rows of one n sharing data and noise.
    ``allowance_dimension`` is the smaller d whose measured |mean − ODE| gives the finite-d allowance when
    d >= 500.
    """

    d: int = 100
    aspect_ratios: tuple[float, ...] = (1.0, 0.1, 0.01, 1e-3, 1e-4)
    spectra: tuple[Literal["identity", "uniform"], ...] = ("identity", "uniform")
    label_noise: float = 0.3
    rho: float = 0.1
    clip: float = 0.1
    schedule_exponents: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0)
    num_runs: int = 10
    grid_points: int = 9
    starts: int = 3
    random_starts: int = 0
    tuning_tolerance: float = 1e-4
    ode_rtol: float = 1e-8
    learning_rate_min: float = 1e-3
    harmonic_offset_min: float = 1e-4
    harmonic_offset_max: float = 1e3
    allowance_dimension: int = 100

    quick_overrides = {"aspect_ratios": (1.0, 0.1, 0.01), "num_runs": 6, "grid_points": 5, "starts": 1,
                       "ode_rtol": 1e-5}

    def validate(self) -> None:
        _check.integer(minimum=1, d=self.d, grid_points=self.grid_points, allowance_dimension=self.allowance_dimension)
        _check.integer(minimum=2, num_runs=self.num_runs)
        _check.integer(minimum=0, starts=self.starts, random_starts=self.random_starts)
        _check.positive(aspect_ratios=self.aspect_ratios, label_noise=self.label_noise, rho=self.rho, clip=self.clip,
                        tuning_tolerance=self.tuning_tolerance, learning_rate_min=self.learning_rate_min,
                        harmonic_offset_min=self.harmonic_offset_min)
        _check.in_range(1e-13, 1e-2, ode_rtol=self.ode_rtol)
        if self.grid_points < 2:
            raise ValueError(f"grid_points must be an integer >= 2; got grid_points={self.grid_points}.")
        if len(set(self.aspect_ratios)) != len(self.aspect_ratios):
            raise ValueError(f"aspect_ratios must be distinct; got {list(self.aspect_ratios)}.")
        too_large = [g for g in self.aspect_ratios if round(self.d / g) < 1]
        if too_large:
            raise ValueError(f"aspect_ratios must give n = round(d/aspect_ratio) >= 1; got {too_large[0]!r} at "
                             f"d={self.d}.")
        if len(set(self.spectra)) != len(self.spectra):
            raise ValueError(f"spectra must be distinct; got {list(self.spectra)}.")
        if 0.0 not in self.schedule_exponents:
            raise ValueError("schedule_exponents must contain 0 (output perturbation: the normalizing curve and "
                             f"the paper's claims refer to it); got {list(self.schedule_exponents)}.")
        bad = [a for a in self.schedule_exponents if not (a in (0.0, 0.5) or a >= 1.0)]
        if bad:
            raise ValueError("schedule_exponents must be in {0, 0.5} or >= 1 (Assumption 2 of arXiv 2505.16329); "
                             f"got {bad[0]!r}.")
        if len(set(self.schedule_exponents)) != len(self.schedule_exponents):
            raise ValueError(f"schedule_exponents must be distinct; got {list(self.schedule_exponents)}.")
        if not self.harmonic_offset_max > self.harmonic_offset_min:
            raise ValueError(f"harmonic_offset_max must be > harmonic_offset_min = {self.harmonic_offset_min:g}; "
                             f"got harmonic_offset_max={self.harmonic_offset_max!r}.")
        high = [g for g in self.aspect_ratios if not self.learning_rate_min < 2.0 / g]
        if high:
            raise ValueError(f"learning_rate_min must be < 2/aspect_ratio for every aspect ratio; got "
                             f"learning_rate_min={self.learning_rate_min!r} with aspect_ratio={high[0]!r}.")
        if self.d >= ALLOWANCE_MIN_DIMENSION and not self.allowance_dimension < self.d:
            raise ValueError(f"allowance_dimension must be < d = {self.d}; got "
                             f"allowance_dimension={self.allowance_dimension}.")


_FIG7_PAPER = Fig7Config()


class Fig7(Experiment[Fig7Config]):
    """Figure 7: ODE-tuned schedules, simulated by Algorithm 1 (arXiv 2505.16329v2, Section 5.3)."""

    name = "dpgd-fig7"
    paper_key = "dpgd"
    title = "Schedule comparison vs n on synthetic data: ODE-tuned, then simulated (Algorithm 1)"
    paper = f"{PAPER}, Figure 7"
    description = ("Polynomial (α = 0, ½, 1, 2) and harmonic schedules tuned on the ODE, simulated vs n; "
                   "Σ = I and uniform spectrum.")
    config_class = Fig7Config

    def units(self, config: Fig7Config) -> list[Unit]:
        return [Unit(unit_key(panel=panel, aspect_ratio=float(g)), {"panel": panel, "aspect_ratio": float(g)})
                for panel in config.spectra for g in config.aspect_ratios]

    def unit_config(self, config: Fig7Config, unit: Unit) -> Mapping[str, Any]:
        keys = ("d", "label_noise", "rho", "clip", "schedule_exponents", "num_runs", "grid_points", "starts",
                "random_starts", "tuning_tolerance", "ode_rtol", "learning_rate_min", "harmonic_offset_min",
                "harmonic_offset_max", "allowance_dimension")
        full = config.to_dict()
        return {key: full[key] for key in keys}

    def compute_unit(self, config: Fig7Config, unit: Unit, seed: int) -> dict[str, Any]:
        panel, gamma = unit.params["panel"], float(unit.params["aspect_ratio"])
        d = config.d
        n = round(d / gamma)
        design = synthetic_design(panel, d, label_noise=config.label_noise)
        schedules = _tune_on_ode(
            spectrum=design.spectrum, targets=design.squared_projections, aspect_ratio=d / n, rho=config.rho,
            clip=config.clip, label_noise=config.label_noise, schedule_exponents=config.schedule_exponents,
            learning_rate_min=config.learning_rate_min,
            harmonic_offset_bounds=(config.harmonic_offset_min, config.harmonic_offset_max),
            grid_points=config.grid_points, starts=config.starts, random_starts=config.random_starts,
            tolerance=config.tuning_tolerance, ode_rtol=config.ode_rtol)
        hyper = [_hyperparameters(row, clip=config.clip, rho=config.rho) for row in schedules]
        sim = simulate_dpgd(data=design, rows=hyper, num_runs=config.num_runs, seed=seed, unit_key=unit.key, n=n)
        assert sim.final_private_risk is not None  # all n steps run
        out: dict[str, Any] = {"panel": panel, "aspect_ratio": gamma, "n": n, "d": d, "schedules": schedules,
                               "final_risk": sim.final_private_risk.tolist(),
                               "privacy_error": _privacy_error(hyper, n, config.rho), "small": None}
        if d >= ALLOWANCE_MIN_DIMENSION:
            ds = config.allowance_dimension
            ns = max(1, round(ds / gamma))
            small = synthetic_design(panel, ds, label_noise=config.label_noise)
            ode_small = [final_private_risk(spectrum=small.spectrum, target_projections=small.squared_projections,
                                            aspect_ratio=ds / ns, learning_rate=h.learning_rate, clip=config.clip,
                                            rho=config.rho, label_noise=config.label_noise, rtol=config.ode_rtol)
                         for h in hyper]
            sim_small = simulate_dpgd(data=small, rows=hyper, num_runs=config.num_runs, seed=seed,
                                      unit_key=f"{unit.key}/allowance", n=ns)
            assert sim_small.final_private_risk is not None  # all n steps run
            out["small"] = {"d": ds, "n": ns, "ode_risk": ode_small,
                            "final_risk": sim_small.final_private_risk.tolist()}
        return out

    # ---- assembly -------------------------------------------------------------------------------------------

    def assemble(self, config: Fig7Config, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        table_rows: list[list[Any]] = []
        checks: list[Check] = []
        gammas = sorted(config.aspect_ratios, reverse=True)  # increasing n
        labels = [_schedule_label("polynomial", a) for a in config.schedule_exponents] + ["harmonic"]
        per_panel: dict[str, dict[float, dict[str, Any]]] = {}
        for panel in config.spectra:
            per_panel[panel] = {}
            for g in gammas:
                out = outputs[unit_key(panel=panel, aspect_ratio=float(g))]
                rows = {_schedule_label(r["schedule"], r["schedule_exponent"]): r for r in out["schedules"]}
                runs = {label: np.asarray(out["final_risk"][i], dtype=float) for i, label in enumerate(rows)}
                per_panel[panel][g] = {"out": out, "rows": rows, "runs": runs}
                for label in labels:
                    r = rows[label]
                    mean, sd, se = _run_stats(runs[label])
                    table_rows.append([_PANEL[panel], out["n"], json_number(g), label, r["initial_learning_rate"],
                                       r["harmonic_scale"], r["harmonic_offset"], r["ode_risk"], mean, sd, se,
                                       ",".join(r["at_bound"]), r["converged"], r["evaluations"]])
                    params = {"panel": _PANEL[panel], "n": out["n"], "aspect_ratio": json_number(g),
                              **self._schedule_params(r)}
                    for name in ("initial_learning_rate", "harmonic_scale", "harmonic_offset"):
                        if r[name] is not None:
                            metrics.append(Metric(name=name, params=params, value=r[name]))
            series += self._series(config, panel, gammas, labels, per_panel[panel])

        checks.append(check_close(
            "privacy_calibration", kind=INVARIANT,
            claim="every simulated row is ρ²/2-zCDP with ρ = the config's rho, recomputed from its calibrated σ_k "
                  "by Proposition 4.1",
            expected=0.0, measured=max(o["privacy_error"] for o in outputs.values()), atol=1e-9,
            note="measured: max |ρ_recomputed/ρ − 1| over rows and units"))
        for panel in config.spectra:
            checks += self._reference_checks(config, panel, gammas, labels, per_panel[panel])
            checks += self._claims(config, panel, gammas, labels, per_panel[panel])
            checks += self._simulation_vs_ode(config, panel, gammas, labels, per_panel[panel])
        table = Table(name="tuned_schedules",
                      columns=["panel", "n", "aspect_ratio", "schedule", "initial_learning_rate", "harmonic_scale",
                               "harmonic_offset", "ode_risk", "simulation_mean", "simulation_sd", "simulation_se",
                               "at_bound", "tuner_converged", "ode_evaluations"],
                      rows=table_rows)
        return Findings(series=series, tables=[table], metrics=metrics, checks=checks)

    @staticmethod
    def _schedule_params(row: Mapping[str, Any]) -> dict[str, Any]:
        exponent = row["schedule_exponent"]
        return {"schedule": row["schedule"], "schedule_exponent": None if exponent is None else json_number(exponent)}

    def _series(self, config: Fig7Config, panel: str, gammas: Sequence[float], labels: Sequence[str],
                data: Mapping[float, Mapping[str, Any]]) -> list[Series]:
        series: list[Series] = []
        ns = [data[g]["out"]["n"] for g in gammas]
        base = {"panel": _PANEL[panel], "clip": json_number(config.clip), "rho": json_number(config.rho),
                "label_noise": json_number(config.label_noise), "d": config.d}
        for label in labels:
            params = {**base, **self._schedule_params(data[gammas[0]]["rows"][label])}
            ode = [data[g]["rows"][label]["ode_risk"] for g in gammas]
            ode0 = [data[g]["rows"]["alpha=0"]["ode_risk"] for g in gammas]
            stats = [_run_stats(data[g]["runs"][label]) for g in gammas]
            ratio = [_ratio_stats(data[g]["runs"][label], data[g]["runs"]["alpha=0"]) for g in gammas]
            series.append(Series(name=f"{panel} {label} ode", params={**params, "method": "ode",
                                                                       "quantity": "excess_risk"},
                                 x=ns, y=ode, x_label="n", y_label="final private excess risk"))
            series.append(Series(name=f"{panel} {label} simulation",
                                 params={**params, "method": "simulation", "quantity": "excess_risk"}, x=ns,
                                 y=[s[0] for s in stats], y_low=[s[0] - s[1] for s in stats],
                                 y_high=[s[0] + s[1] for s in stats], standard_error=[s[2] for s in stats],
                                 x_label="n", y_label="final private excess risk"))
            series.append(Series(name=f"{panel} {label} ode normalized",
                                 params={**params, "method": "ode", "quantity": "normalized_excess_risk",
                                         "panel": _PANEL[panel] + 2}, x=ns,
                                 y=[a / b for a, b in zip(ode, ode0, strict=True)], x_label="n",
                                 y_label="risk / risk(α = 0)"))
            series.append(Series(name=f"{panel} {label} simulation normalized",
                                 params={**params, "method": "simulation", "quantity": "normalized_excess_risk",
                                         "panel": _PANEL[panel] + 2},
                                 x=ns, y=[r[0] for r in ratio], y_low=[r[0] - r[1] for r in ratio],
                                 y_high=[r[0] + r[1] for r in ratio], standard_error=[r[2] for r in ratio],
                                 x_label="n", y_label="risk / risk(α = 0)"))
        return series

    # ---- checks ---------------------------------------------------------------------------------------------

    @staticmethod
    def _paper_setting(config: Fig7Config, panel: str) -> str | None:
        """Why the reference tables do not apply to this config (None when they do)."""
        changed = [k for k in ("label_noise", "rho", "clip") if getattr(config, k) != getattr(_FIG7_PAPER, k)]
        if changed:
            return f"the reference tables are for the paper's {', '.join(changed)}; this config changes them"
        if panel == "uniform" and config.d != 100:
            return ("the reference uniform table uses the 100-point quantile grid; this config has d = "
                    f"{config.d} (the identity ODE does not depend on d)")
        return None

    def _reference_checks(self, config: Fig7Config, panel: str, gammas: Sequence[float], labels: Sequence[str],
                          data: Mapping[float, Mapping[str, Any]]) -> list[Check]:
        checks: list[Check] = []
        reason = self._paper_setting(config, panel)
        for g in gammas:
            ref = _reference_row(panel, g)
            if ref is None:
                continue
            rows = data[g]["rows"]
            for label in labels:
                if label not in ref:
                    continue
                name = f"ode_reference panel={_PANEL[panel]} aspect_ratio={json_number(g)} schedule={label}"
                expected, rounding = printed_value(ref[label])
                claim = (f"the ODE-tuned optimal final risk of {label} at γ = {json_number(g)} equals the "
                         f"reference {ref[label]} (independent ODE reference, Figure 7)")
                if reason is not None:
                    checks.append(check_not_applicable(name, kind=INVARIANT, claim=claim, expected=expected,
                                                       note=reason))
                    continue
                measured = rows[label]["ode_risk"]
                tol = rounding + config.tuning_tolerance * abs(expected)
                if label == "harmonic":
                    lower = measured < expected - tol
                    note = (f"one-sided: the reference warns its harmonic optimum may be local, so privdyn passes when "
                            f"its optimum is at most the reference value + tolerance (rounding {rounding:g} + tuner "
                            f"tolerance {config.tuning_tolerance:g} relative). "
                            + ("privdyn's tuner found a LOWER risk than the reference table: the reference optimizer "
                               "stopped in a worse (local) optimum; not a failure of privdyn."
                               if lower else
                               "privdyn's optimum agrees with or is above the reference within tolerance."))
                    checks.append(Check(name=name, kind=INVARIANT, claim=claim, expected=expected, measured=measured,
                                        tolerance=tol, passed=measured <= expected + tol, note=note))
                else:
                    checks.append(check_close(name, kind=INVARIANT, claim=claim, expected=expected, measured=measured,
                                              atol=tol, note=f"two-sided; tolerance = printed rounding {rounding:g} "
                                              f"+ tuner tolerance {config.tuning_tolerance:g} × expected"))
            # the ordering of the schedules where the reference table resolves it
            if reason is None:
                present = [lab for lab in labels if lab in ref]
                disagreements = []
                for i, a in enumerate(present):
                    for b in present[i + 1:]:
                        (ea, ra), (eb, rb) = printed_value(ref[a]), printed_value(ref[b])
                        margin = ra + rb + config.tuning_tolerance * (ea + eb)
                        if abs(ea - eb) <= margin:
                            continue  # tied within the table's resolution
                        if (ea < eb) != (rows[a]["ode_risk"] < rows[b]["ode_risk"]):
                            disagreements.append(f"{a} vs {b}")
                checks.append(Check(
                    name=f"ode_ordering panel={_PANEL[panel]} aspect_ratio={json_number(g)}", kind=INVARIANT,
                    claim="the ODE-tuned schedules are ordered as in the reference table wherever the table resolves "
                          "the order (item (i), on the ODE)",
                    expected=0, measured=len(disagreements), passed=not disagreements,
                    note="pairs ordered differently: " + (", ".join(disagreements) or "none")))
        return checks

    def _claims(self, config: Fig7Config, panel: str, gammas: Sequence[float], labels: Sequence[str],
                data: Mapping[float, Mapping[str, Any]]) -> list[Check]:
        checks: list[Check] = []
        polys = [lab for lab in labels if lab != "harmonic"]
        # (i) output perturbation is best at γ >= 0.1 (small n), on the ODE and on the simulation
        for g in gammas:
            if g < 0.1:
                continue
            rows, runs = data[g]["rows"], data[g]["runs"]
            ode = {lab: rows[lab]["ode_risk"] for lab in labels}
            worst_excess = max((ode["alpha=0"] - ode[lab]) / ode[lab] for lab in labels if lab != "alpha=0")
            ok = worst_excess <= config.tuning_tolerance
            checks.append(Check(
                name=f"output_perturbation_best panel={_PANEL[panel]} n={data[g]['out']['n']} method=ode", kind=CLAIM,
                claim="for small n (γ ≥ 0.1) output perturbation (α = 0) gives the lowest risk (Section 5.3, Fig. 7)",
                expected=None, measured=worst_excess, tolerance=config.tuning_tolerance, passed=ok,
                note="measured: largest relative excess of α = 0 over another schedule (tolerance: the tuner's)"
                     + ("" if ok else f"; the claim fails at γ = {json_number(g)}: ODE risks {ode}")))
            excesses = []
            ok = True
            for lab in labels:
                if lab == "alpha=0":
                    continue
                diff, se = _paired(runs["alpha=0"], runs[lab])
                excesses.append((lab, diff, se))
                ok &= diff <= Z_SCORE * se
            worst = max(excesses, key=lambda e: e[1] / e[2] if e[2] > 0 else math.copysign(math.inf, e[1]))
            checks.append(Check(
                name=f"output_perturbation_best panel={_PANEL[panel]} n={data[g]['out']['n']} method=simulation",
                kind=CLAIM,
                claim="for small n (γ ≥ 0.1) output perturbation (α = 0) gives the lowest simulated risk",
                expected=None, measured=worst[1], standard_error=[e[2] for e in excesses],
                tolerance=Z_SCORE * worst[2], passed=ok,
                note=f"measured: largest paired mean excess of α = 0 over another schedule ({worst[0]}, paired SE "
                     f"{worst[2]:.3g}), z = {Z_SCORE:g}; standard_error: the paired SE against each other schedule"
                     + ("" if ok else f"; the claim fails: α = 0 exceeds {worst[0]} by {worst[1]:.3g} "
                                      f"± {worst[2]:.2g} (SE)")))
        # larger α pays off only at large n (ODE): the best polynomial α is non-decreasing in n, 0 at γ >= 0.1
        claim = ("larger α pays off only at large n: the best polynomial exponent grows with n, is 0 for small n "
                 "(γ ≥ 0.1) and positive at the largest n (Section 5.3, Fig. 7)")
        name = f"larger_exponent_pays_off_only_at_large_n panel={_PANEL[panel]} method=ode"
        if len(polys) < 2 or min(gammas) >= 0.1:
            checks.append(check_not_applicable(name, kind=CLAIM, claim=claim,
                                               note="needs two or more exponents and an n with γ < 0.1"))
        else:
            checks.append(self._exponent_claim(name, claim, gammas, polys, data))
        checks += self._harmonic_claims(panel, gammas, labels, data)
        return checks

    @staticmethod
    def _exponent_claim(name: str, claim: str, gammas: Sequence[float], polys: Sequence[str],
                        data: Mapping[float, Mapping[str, Any]]) -> Check:
        best_alpha = [min(polys, key=lambda lab: data[g]["rows"][lab]["ode_risk"]) for g in gammas]
        exponents = [float(lab.partition("=")[2]) for lab in best_alpha]
        monotone = all(a <= b for a, b in zip(exponents, exponents[1:], strict=False))
        small_zero = all(e == 0.0 for e, g in zip(exponents, gammas, strict=True) if g >= 0.1)
        pays_off = exponents[-1] > 0.0
        ok = monotone and small_zero and pays_off
        return Check(
            name=name, kind=CLAIM, claim=claim, expected=None,
            measured=dict(zip([data[g]["out"]["n"] for g in gammas], exponents, strict=True)),
            passed=ok, note="measured: the ODE-optimal α per n" + ("" if ok else (
                "; the claim fails: " + ", ".join(t for t, bad in (("not monotone in n", not monotone),
                                                                 ("α* > 0 at some γ ≥ 0.1", not small_zero),
                                                                 ("α* = 0 at the largest n", not pays_off)) if bad))))

    @staticmethod
    def _harmonic_claims(panel: str, gammas: Sequence[float], labels: Sequence[str],
                         data: Mapping[float, Mapping[str, Any]]) -> list[Check]:
        checks: list[Check] = []
        largest_n_gamma = min(gammas)
        paper_largest = math.isclose(largest_n_gamma, 1e-4, rel_tol=1e-9)
        # the harmonic schedule: best or tied (isotropic: small and large n; uniform: small n, on par at n = 10⁴d)
        for g in gammas:
            n = data[g]["out"]["n"]
            rows, runs = data[g]["rows"], data[g]["runs"]
            if panel == "identity":
                applies = g >= 0.1 or g <= 1e-3
                text = ("in the isotropic case the harmonic schedule is best or tied for small and large n "
                        "(Section 5.3, Fig. 7)")
                name = "harmonic_best_or_tied"
            else:
                applies = g >= 0.1 or (math.isclose(g, 1e-4, rel_tol=1e-9))
                name = "harmonic_optimal_small_n" if g >= 0.1 else "harmonic_on_par_at_largest_n"
                text = ("in the non-isotropic case the harmonic schedule is optimal at small n and on par with the "
                        "best schedule at n = 10⁴d (Section 5.3, Fig. 7)")
            for method in ("ode", "simulation"):
                ode_vals = {lab: rows[lab]["ode_risk"] for lab in labels}
                if method == "ode":
                    res = _best_or_tied("harmonic", ode_vals, None)
                else:
                    res = _best_or_tied("harmonic", {lab: float(np.mean(runs[lab])) for lab in labels}, runs)
                measured = {"harmonic": res["target"], res["best_other"]: res["best_value"], "ratio": res["ratio"]}
                rule = (f"best or tied := harmonic ≤ (1 + {TIE_RELATIVE:g}) × best other schedule"
                        + (f" + {Z_SCORE:g} paired SE (standard_error: the paired SE against each other "
                           "schedule)" if method == "simulation" else ""))
                if not applies:
                    checks.append(finding(
                        f"harmonic_vs_best panel={_PANEL[panel]} n={n} method={method}",
                        claim="harmonic schedule vs the best other schedule at an intermediate n (the paper states "
                              "nothing here)",
                        measured=measured, note=rule))
                    continue
                note = rule
                if not res["passed"]:
                    note += (f". The claim fails at n = {n}: harmonic {res['target']:.4g} vs {res['best_other']} "
                             f"{res['best_value']:.4g} (ratio {res['ratio']:.3g}")
                    if res["standard_error"]:
                        z_gap = (res["target"] - res["best_value"]) / res["standard_error"]
                        note += f"; paired difference {z_gap:.1f} SE over {runs[labels[0]].size} runs"
                    note += ")"
                    if panel == "uniform" and g < 0.1:
                        note += ("; this is the reference's flagged doubt (Figure 7: its ODE optimum of the "
                                 "harmonic schedule is not on par with α = 2 at γ = 10⁻⁴); "
                                 + ("privdyn's multi-start ODE tuner finds the same gap" if method == "ode"
                                    else f"the simulation at d = {data[g]['out']['d']} shows it too"))
                checks.append(Check(name=f"{name} panel={_PANEL[panel]} n={n} method={method}", kind=CLAIM, claim=text,
                                    expected=None, measured=measured, standard_error=res["standard_errors"],
                                    tolerance=TIE_RELATIVE, passed=res["passed"], note=note))
        if panel == "uniform" and not paper_largest:
            checks.append(check_not_applicable(
                f"harmonic_on_par_at_largest_n panel={_PANEL[panel]}", kind=CLAIM,
                claim="in the non-isotropic case the harmonic schedule is on par with the best at n = 10⁴d",
                note=f"the largest n of this config is {data[largest_n_gamma]['out']['n']} (γ = "
                     f"{json_number(largest_n_gamma)}), not 10⁴d; the full config runs it"))
        if panel == "identity" and not any(g <= 1e-3 for g in gammas):
            checks.append(check_not_applicable(
                f"harmonic_best_or_tied_large_n panel={_PANEL[panel]}", kind=CLAIM,
                claim="in the isotropic case the harmonic schedule is best or tied for large n",
                note="this config has no n >= 1000d (γ <= 10⁻³); the full config runs it"))
        return checks

    def _simulation_vs_ode(self, config: Fig7Config, panel: str, gammas: Sequence[float], labels: Sequence[str],
                           data: Mapping[float, Mapping[str, Any]]) -> list[Check]:
        """Item (ii): the simulated optimum at each n against the ODE optimum."""
        checks: list[Check] = []
        for g in gammas:
            out, rows, runs = data[g]["out"], data[g]["rows"], data[g]["runs"]
            for i, label in enumerate(labels):
                ode = rows[label]["ode_risk"]
                mean, _, se = _run_stats(runs[label])
                name = f"simulation_matches_ode panel={_PANEL[panel]} n={out['n']} schedule={label}"
                claim = (f"the simulated final risk at the ODE-tuned {label} lies within z·SE + the finite-d "
                         f"allowance of the ODE optimum (item (ii))")
                if out["small"] is None:
                    checks.append(finding(
                        name, claim=claim,
                        measured={"simulation_mean": mean, "standard_error": se, "ode": ode,
                                  "relative_gap": (mean - ode) / ode, "gap_in_se": (mean - ode) / se},
                        note=f"d = {out['d']} < {ALLOWANCE_MIN_DIMENSION}: below the size an allowance is derived "
                             "for, the gap is reported, not tested"))
                    continue
                small = out["small"]
                small_bias = abs(float(np.mean(small["final_risk"][i])) - small["ode_risk"][i])
                cap = 0.03 * math.sqrt(200.0 / out["d"]) * ode
                allowance = finite_size_allowance(small_bias, small_size=small["d"], size=out["d"], cap=cap)
                checks.append(check_monte_carlo(
                    name, claim=claim, expected=ode, measured=mean, standard_error=se, z=Z_SCORE,
                    bias_allowance=allowance,
                    note=f"allowance from |mean − ODE| = {small_bias:.3g} at d = {small['d']}, scaled by "
                         f"sqrt({small['d']}/{out['d']}), capped at 3%·sqrt(200/d) of the ODE"))
            # the simulated ordering against the ODE's
            reversed_pairs = []
            for a in labels:
                for b in labels:
                    if a < b:
                        oa, ob = rows[a]["ode_risk"], rows[b]["ode_risk"]
                        lo, hi = (a, b) if oa < ob else (b, a)
                        diff, se = _paired(runs[lo], runs[hi])
                        if diff > Z_SCORE * se:
                            reversed_pairs.append(f"{hi} < {lo} ({diff / se:.1f} SE)")
            checks.append(finding(
                f"simulation_ordering panel={_PANEL[panel]} n={out['n']}",
                claim="pairs of schedules the simulation orders opposite to the ODE, beyond z = 5 paired SE",
                measured=len(reversed_pairs), note="; ".join(reversed_pairs) or "none"))
        return checks

    # ---- figure ---------------------------------------------------------------------------------------------

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        panels = list(result["config"]["spectra"])
        fig, axes = plt.subplots(2, len(panels), figsize=(6.2 * len(panels), 9), squeeze=False, layout="constrained")
        labels = sorted({(s["params"]["schedule"], s["params"]["schedule_exponent"] or 0.0)
                         for s in result["series"]}, key=lambda t: (t[0] == "harmonic", t[1]))
        colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.9, max(len(labels), 1)))
        for j, panel in enumerate(panels):
            for row, quantity in enumerate(("excess_risk", "normalized_excess_risk")):
                ax = axes[row][j]
                for color, (schedule, exponent) in zip(colors, labels, strict=True):
                    pick = {"panel": _PANEL[panel] + 2 * row, "schedule": schedule, "quantity": quantity}
                    if schedule != "harmonic":
                        pick["schedule_exponent"] = exponent
                    text = "harmonic" if schedule == "harmonic" else f"α = {exponent:g}"
                    for s in select_series(result, **pick, method="simulation"):
                        x, y = s["x"], as_floats(s["y"])
                        ax.plot(x, y, "o-", color=color, lw=1.4, ms=4, label=f"{text} (simulation)")
                        ax.fill_between(x, as_floats(s["y_low"]), as_floats(s["y_high"]), color=color, alpha=0.2)
                    for s in select_series(result, **pick, method="ode"):
                        ax.plot(s["x"], as_floats(s["y"]), "--", color=color, lw=1.0, label=f"{text} (ODE)")
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xlabel("n")
                ax.set_ylabel(r"excess risk $R(\theta^p)$" if row == 0
                              else r"$R(\theta^p)\,/\,R(\theta^p)$ of $\alpha = 0$")
                name = "Σ = I" if panel == "identity" else "uniform spectrum on [0, 2]"
                ax.set_title(f"{name}{' (normalized by α = 0)' if row else ''}", fontsize=10)
                ax.grid(alpha=0.3, which="both")
                mark_coincident(ax)  # alpha = 0 normalized by itself: simulation and ODE both equal 1
                if row == 0 and j == 0:
                    ax.legend(fontsize=7, ncol=2)
        cfg = result["config"]
        fig.suptitle(f"Schedules tuned on the ODE, simulated by DP-GD (d = {cfg['d']}, ρ = {cfg['rho']}, "
                     f"c = {cfg['clip']}, ζ = {cfg['label_noise']}; bands ±1 sd over runs)", fontsize=10)
        return [save_figure(fig, out_dir, paper=result["paper"])]
