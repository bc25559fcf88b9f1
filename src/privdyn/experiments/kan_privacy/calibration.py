"""The noise multiplier of every calibration of the kan paper (arXiv 2605.12648) and of dp-accounting
(``kan-calibration``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn import _check
from privdyn.experiments.kan_privacy import amplified
from privdyn.experiments.kan_privacy.common import CLAIM, INVARIANT, PAPER, _check_noise_correlations
from privdyn.privacy import correlated_calibration as calibration
from privdyn.privacy.labels import NeighboringRelation
from privdyn.privacy.mechanism import DPSGDMechanism
from privdyn.reference.kan_noise_multipliers import reference_noise_multiplier_d9, reference_noise_multiplier_f12
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.labels import words
from privdyn.runs.naming import json_number, printed_value, unit_key
from privdyn.runs.plotting import as_floats, mark_coincident, pyplot, save_figure, select_series
from privdyn.runs.results import (
    Check,
    CheckKind,
    Metric,
    Series,
    Table,
    check_close,
    check_not_applicable,
    finding,
)

__all__ = ["CalibrationConfig", "Calibration", "reference_noise_multiplier_f12", "reference_noise_multiplier_d9"]


# ==============================================================================================================
# kan-calibration: the noise multiplier by each accountant
# ==============================================================================================================


def _dp_accounting_epsilon(noise_multiplier: float, *, n: int, batch_size: int, num_steps: int, delta: float,
                           sampling: str) -> float:
    """epsilon of T steps of DP-SGD straight from dp-accounting (the recomputation of the calibration invariant).

    Without replacement: replace-one neighbours, so dp-accounting's multiplier is ``kappa / 2`` (sensitivity 2 clip),
    RDP accountant on its default orders and its own conversion. Poisson: add-remove, multiplier kappa, PLD.
    """
    import dp_accounting
    from dp_accounting import pld, rdp

    relation = dp_accounting.NeighboringRelation
    if sampling == "without_replacement":
        step = dp_accounting.SampledWithoutReplacementDpEvent(n, batch_size,
                                                              dp_accounting.GaussianDpEvent(noise_multiplier / 2.0))
        accountant = rdp.RdpAccountant(neighboring_relation=relation.REPLACE_ONE)
    else:
        step = dp_accounting.PoissonSampledDpEvent(batch_size / n, dp_accounting.GaussianDpEvent(noise_multiplier))
        accountant = pld.PLDAccountant(neighboring_relation=relation.ADD_OR_REMOVE_ONE)
    accountant.compose(dp_accounting.SelfComposedDpEvent(step, num_steps))
    return float(accountant.get_epsilon(delta))


F12_CONSTANTS = ((8.0, "theorem_f12"), (2.0, "theorem_f12_proved"))
DP_ACCOUNTING_SAMPLINGS = (("without_replacement", "replace_one"), ("poisson", "add_remove"))

# Reference values (an independent computation from Theorems D.9 and F.12 and dp-accounting), as printed:
# (n, B, T, epsilon, delta), kappa of Theorem D.9, kappa of Theorem F.12 at lambda = 0+ / 0.3 / 0.5 / 0.7 / 0.9, and
# the epsilon dp-accounting's RDP accountant (replace-one, without replacement) gives at D.9's kappa read as kappa / 2
# and as kappa.
_TABLE_LAMBDAS = (0.0, 0.3, 0.5, 0.7, 0.9)
_REF_TABLE: tuple[dict[str, Any], ...] = (
    {"setting": (50_000, 500, 5_000, 1.0, 1e-5), "d9": "13.864",
     "f12": ("96.05", "137.22", "192.11", "320.18", "960.54"), "epsilon_half": "0.82", "epsilon_full": "0.39"},
    {"setting": (10_000, 5_000, 100, 1.0, 1e-5), "d9": "98.032",
     "f12": ("96.05", "137.22", "192.11", "320.18", "960.51"), "epsilon_half": "0.84", "epsilon_full": "0.40"},
    {"setting": (10_000, 1_000, 1_000, 0.5, 1e-6), "d9": "134.178",
     "f12": ("279.72", "399.60", "559.44", "932.40", "2797.20"), "epsilon_half": "0.41", "epsilon_full": "0.21"},
)
_REF_F12_OVER_D9 = "7"  # "Thm F.12 at small r is ~7x more noise than D.9 (first row)"
_REF_F12_MIN_STEPS = 3662  # (n=50,000, B=500, eps=1, delta=1e-5) "needs T >= 3662 steps before F.12 applies"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CalibrationConfig(ExperimentConfig):
    """The calibration sweep; the default is the first row of the reference table.

    ``calibration_rtol``: dp-accounting's kappa is the upper end of a bracket of relative width at most this (the
    kappa smaller by the factor 1 + rtol gives more than the target epsilon). The reference table's three rows are
    evaluated at their own fixed settings whatever the config.

    ``amplified_computed_lambdas``: the lambdas (of 0, 0.3, 0.5, 0.7, 0.9) whose amplified-bound kappa is calibrated
    now, at every reference setting, to ``amplified_rtol``; the others are read from the shipped table
    (``privdyn.privacy.amplification.reference_table``). The full config computes all five (about a second each),
    the quick one lambda = 0 only.
    """

    n: int = 50_000
    batch_size: int = 500
    num_steps: int = 5_000
    delta: float = 1e-5
    epsilons: tuple[float, ...] = (0.25, 0.5, 1.0)
    noise_correlations: tuple[float, ...] = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9)
    calibration_rtol: float = 1e-4
    amplified_computed_lambdas: tuple[float, ...] = _TABLE_LAMBDAS
    amplified_rtol: float = 0.01

    quick_overrides = {"epsilons": (0.5, 1.0), "amplified_computed_lambdas": (0.0,)}

    def validate(self) -> None:
        _check.integer(minimum=1, n=self.n, batch_size=self.batch_size, num_steps=self.num_steps)
        if self.batch_size > self.n:
            raise ValueError(f"batch_size must be <= n = {self.n}; got batch_size={self.batch_size}.")
        _check.delta(self.delta)
        _check.positive(epsilons=np.asarray(self.epsilons))
        if len(set(self.epsilons)) != len(self.epsilons):
            raise ValueError(f"epsilons must not repeat a value; got {list(self.epsilons)}.")
        _check_noise_correlations(self.noise_correlations)
        _check.in_range(1e-12, 0.1, closed="both", calibration_rtol=self.calibration_rtol)
        bad = [v for v in self.amplified_computed_lambdas if v not in _TABLE_LAMBDAS]
        if bad or len(set(self.amplified_computed_lambdas)) != len(self.amplified_computed_lambdas):
            raise ValueError(f"amplified_computed_lambdas must be distinct values of {list(_TABLE_LAMBDAS)}; got "
                             f"{list(self.amplified_computed_lambdas)}.")
        _check.in_range(1e-3, 0.1, closed="both", amplified_rtol=self.amplified_rtol)

    @property
    def sampling_prob(self) -> float:
        return self.batch_size / self.n


_SIZE_KEYS = ("n", "batch_size", "num_steps", "delta")


def _dpsgd(noise_multiplier: float, *, sampler: str, neighboring: str, n: int, batch_size: int,
           num_steps: int) -> DPSGDMechanism:
    """The DP-SGD record (independent noise) whose allow-listed accountant is dp-accounting's for this sampler."""
    return DPSGDMechanism(noise_multiplier=noise_multiplier, n=n, batch_size=batch_size, num_steps=num_steps,
                          sampler=sampler, neighboring=NeighboringRelation(neighboring))


def _f12_or_refusal(lam: float, *, constant: float, **setting: Any) -> dict[str, Any]:
    try:
        loss = calibration.noise_multiplier_theorem_f12(lam, constant=constant, **setting)
    except ValueError as exc:
        return {"value": None, "refusal": str(exc)}
    return {"value": float(loss.value), "guarantee": loss.guarantee.value, "neighboring": loss.neighboring.value}


class Calibration(Experiment):
    """kappa by each accountant across lambda, at ``sampling_prob = batch_size / n`` and each epsilon.

    Checks:

    * invariants: Theorem F.12 (both constants) and Theorem D.9 as computed by
      :mod:`privdyn.privacy.correlated_calibration` equal an independent 50-digit transcription of the closed
      forms to 1e-12 relative; where F.12's conditions (epsilon <= 1, r T >= 3 ln(2 / delta)) fail, the engine
      refuses; dp-accounting's kappa at lambda = 0 (both samplers) gives, recomputed straight from dp-accounting,
      an epsilon <= the target, while kappa / (1 + calibration_rtol) gives more than the target (the bracket);
    * paper claims (the reference table, at its own settings, within half a unit of the last printed digit):
      kappa of D.9 and F.12, the epsilon D.9's kappa gives by dp-accounting (0.82 / 0.84 / 0.41 reading kappa / 2,
      0.39 / 0.40 / 0.21 reading kappa), F.12 ~7x D.9 in the first row, and T >= 3662 before F.12 applies there;
    * findings: D.9's kappa checked by dp-accounting at the config (D.9 is heuristic), and §2.4(d): with the
      paper's own calibration F.12, kappa grows with lambda and the cumulative noise variance at T,
      ``kappa(lambda)^2 (1 + (1 - lambda)^2 (T - 1))``, is smallest at lambda = 0;
    * the amplified column (:mod:`.amplified`, at the three reference settings and lambda in {0, 0.3, 0.5, 0.7,
      0.9}): invariants that the amplified bound's kappa (the smaller of the spectral bound and the conditional
      composition) is at most Theorem F.12's with the proved constant 2, that at lambda = 0 it equals
      dp-accounting's PLD calibration of the Poisson-subsampled Gaussian within its rtol, that the shipped table's
      F.12 columns match the transcription, that recomputed entries match the shipped ones and that the shipped
      Monte-Carlo estimate's lower confidence bound on epsilon at the bound's kappa does not exceed the target;
      findings for the cumulative noise under the bound's calibration and under the estimate's kappa.
    """

    name = "kan-calibration"
    paper_key = "kan"
    title = "Noise multiplier by accountant: Theorems F.12 and D.9 of the kan paper and dp-accounting"
    paper = f"{PAPER}, Theorems 5.1 / F.12 and 5.4 / D.9"
    description = ("kappa vs noise_correlation per epsilon for theorem_f12 (constants 8 and 2, zero-out), theorem_d9 "
                   "(replace-one, heuristic) and dp_accounting at lambda = 0 (without replacement / Poisson).")
    config_class = CalibrationConfig

    def units(self, config: CalibrationConfig) -> list[Unit]:
        units = [Unit("closed_forms", {"method": "closed_form"})]
        for eps in config.epsilons:
            for sampling, _ in DP_ACCOUNTING_SAMPLINGS:
                units.append(Unit(unit_key(accountant="dp_accounting", sampling=sampling, epsilon=eps),
                                  {"method": "dp_accounting", "sampling": sampling, "epsilon": eps}))
        units += [Unit(f"spec_table/row={i + 1}", {"method": "spec_table", "row": i}) for i in range(len(_REF_TABLE))]
        units += [Unit(key, params) for key, params in
                  amplified.amplified_units(tuple(float(v) for v in config.amplified_computed_lambdas))]
        return units

    def unit_config(self, config: CalibrationConfig, unit: Unit) -> Mapping[str, Any]:
        method = unit.params["method"]
        if method == "spec_table":
            return {"row": unit.params["row"]}
        if method.startswith("amplified"):
            return amplified.amplified_unit_config(unit.params, config.amplified_rtol)
        sizes = {k: getattr(config, k) for k in _SIZE_KEYS}
        if method == "dp_accounting":
            return {**sizes, **unit.params, "calibration_rtol": config.calibration_rtol}
        return {**sizes, "epsilons": list(config.epsilons), "noise_correlations": list(config.noise_correlations)}

    def compute_unit(self, config: CalibrationConfig, unit: Unit, seed: int) -> dict[str, Any]:
        method = unit.params["method"]
        if method == "closed_form":
            return self._closed_form_unit(config)
        if method == "dp_accounting":
            return self._dp_accounting_unit(config, unit.params["sampling"], float(unit.params["epsilon"]))
        if method == "amplified_bound":
            return amplified.compute_amplified_unit(unit.params, config.amplified_rtol)
        if method == "amplified_exact":
            return amplified.compute_exact_unit(unit.params)
        return self._table_unit(int(unit.params["row"]))

    @staticmethod
    def _closed_form_unit(config: CalibrationConfig) -> dict[str, Any]:
        sizes = {k: getattr(config, k) for k in _SIZE_KEYS}
        out: dict[str, Any] = {}
        for eps in config.epsilons:
            entry: dict[str, Any] = {}
            for constant, accountant in F12_CONSTANTS:
                entry[accountant] = [_f12_or_refusal(lam, constant=constant, epsilon=eps, **sizes)
                                     for lam in config.noise_correlations]
            d9 = calibration.noise_multiplier_theorem_d9(epsilon=eps, **sizes)
            entry["theorem_d9"] = {"value": float(d9.value), "guarantee": d9.guarantee.value,
                                   "neighboring": d9.neighboring.value}
            out[str(eps)] = entry
        return out

    @staticmethod
    def _dp_accounting_unit(config: CalibrationConfig, sampling: str, eps: float) -> dict[str, Any]:
        sizes = {k: getattr(config, k) for k in ("n", "batch_size", "num_steps")}
        sampler = "fixed_size" if sampling == "without_replacement" else "poisson"
        loss = _dpsgd(0.0, sampler=sampler, neighboring=dict(DP_ACCOUNTING_SAMPLINGS)[sampling],
                      **sizes).calibration(eps, config.delta, rtol=config.calibration_rtol)
        kappa = float(loss.value)
        below = kappa / (1.0 + config.calibration_rtol)
        out = {"value": kappa, "guarantee": loss.guarantee.value, "neighboring": loss.neighboring.value,
               "epsilon_at_value": _dp_accounting_epsilon(kappa, delta=config.delta, sampling=sampling, **sizes),
               "epsilon_below": _dp_accounting_epsilon(below, delta=config.delta, sampling=sampling, **sizes),
               "kappa_below": below}
        if sampling == "without_replacement":  # D.9 is heuristic: what does the tight accountant say of its kappa?
            d9 = float(calibration.noise_multiplier_theorem_d9(epsilon=eps, delta=config.delta, **sizes).value)
            out["d9_epsilon"] = float(_dpsgd(d9, sampler="fixed_size", neighboring="replace_one",
                                             **sizes).privacy_loss(config.delta).value)
        return out

    @staticmethod
    def _table_unit(row: int) -> dict[str, Any]:
        n, batch_size, num_steps, eps, delta = _REF_TABLE[row]["setting"]
        sizes: dict[str, Any] = {"n": n, "batch_size": batch_size, "num_steps": num_steps}
        d9 = float(calibration.noise_multiplier_theorem_d9(epsilon=eps, delta=delta, **sizes).value)
        f12 = [float(calibration.noise_multiplier_theorem_f12(lam, epsilon=eps, delta=delta, **sizes).value)
               for lam in _TABLE_LAMBDAS]
        fixed_size: dict[str, Any] = {"sampler": "fixed_size", "neighboring": "replace_one"}
        out = {"d9": d9, "f12": f12,
               "epsilon_half": float(_dpsgd(d9, **fixed_size, **sizes).privacy_loss(delta).value),
               "epsilon_full": float(_dpsgd(2.0 * d9, **fixed_size, **sizes).privacy_loss(delta).value)}
        if row == 0:
            out["f12_min_steps"] = _smallest_accepted_steps(n=n, batch_size=batch_size, epsilon=eps, delta=delta)
        return out

    # ----------------------------------------------------------------------------------------------------------

    def assemble(self, config: CalibrationConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        rows: list[list[Any]] = []
        sizes = {k: getattr(config, k) for k in _SIZE_KEYS}
        lams = np.asarray(config.noise_correlations, dtype=float)
        num_steps = config.num_steps
        closed = outputs["closed_forms"]
        base = {**{k: json_number(v) if isinstance(v, float) else v for k, v in sizes.items()},
                "sampling_prob": config.sampling_prob, "quantity": "noise_multiplier"}

        def cumulative(kappa: np.ndarray, lam: np.ndarray) -> np.ndarray:
            return kappa**2 * (1.0 + (1.0 - lam) ** 2 * (num_steps - 1))

        for eps in config.epsilons:
            entry = closed[str(eps)]
            eps_params = {**base, "epsilon": json_number(eps)}
            # Theorem F.12, both constants
            for constant, accountant in F12_CONSTANTS:
                points = entry[accountant]
                valid = sorted((i for i, p in enumerate(points) if p["value"] is not None),
                               key=lambda i: config.noise_correlations[i])
                reference = [reference_noise_multiplier_f12(lam, constant=constant, epsilon=eps, **sizes)
                             for lam in config.noise_correlations]
                name = f"theorem_f12_matches_closed_form epsilon={json_number(eps)} accountant={accountant}"
                claim = (f"epsilon = {json_number(eps)}: Theorem F.12 with constant {constant:g} equals the "
                         "closed form (independent 50-digit transcription) at every noise_correlation, to 1e-12 "
                         "relative, and the engine refuses exactly where the theorem's conditions fail")
                agree = [i for i in range(len(points)) if (points[i]["value"] is None) == (reference[i] is None)]
                if len(agree) != len(points):
                    checks.append(Check(name=name, kind=INVARIANT, claim=claim, passed=False,
                                        expected=[r is not None for r in reference],
                                        measured=[p["value"] is not None for p in points],
                                        note="the engine and the theorem's conditions disagree on where F.12 applies"))
                elif not valid:
                    refusal = points[0]["refusal"]
                    checks.append(Check(name=name, kind=INVARIANT, claim=claim, passed=True, expected=None,
                                        measured=None, note=f"F.12 does not apply to this config and the engine "
                                                            f"refuses it: {refusal}"))
                else:
                    checks.append(check_close(name, kind=INVARIANT, claim=claim,
                                              expected=[reference[i] for i in valid],
                                              measured=[points[i]["value"] for i in valid], rtol=1e-12,
                                              note="reference: mpmath at 50 digits"))
                if not valid:
                    continue
                kappa = np.array([points[i]["value"] for i in valid])
                params = {**eps_params, "accountant": accountant, "neighboring": points[valid[0]]["neighboring"],
                          "guarantee": points[valid[0]]["guarantee"], "method": "closed_form",
                          "sampling": "without_replacement"}
                series.append(Series(name=f"{accountant} epsilon={json_number(eps)}", params=params, x=lams[valid],
                                     y=kappa, x_label="noise_correlation", y_label="noise_multiplier"))
                series.append(Series(name=f"{accountant} cumulative noise epsilon={json_number(eps)}",
                                     params={**params, "quantity": "cumulative_noise_variance"}, x=lams[valid],
                                     y=cumulative(kappa, lams[valid]), x_label="noise_correlation",
                                     y_label="cumulative_noise_variance"))
                rows += [[accountant, params["neighboring"], params["guarantee"], "without_replacement",
                          json_number(eps), json_number(float(lams[i])), points[i]["value"]] for i in valid]
            # Theorem D.9
            d9 = entry["theorem_d9"]
            checks.append(check_close(
                f"theorem_d9_matches_closed_form epsilon={json_number(eps)}", kind=INVARIANT,
                claim=f"epsilon = {json_number(eps)}: Theorem D.9 equals the closed form (independent 50-digit "
                      "transcription) to 1e-12 relative",
                expected=reference_noise_multiplier_d9(epsilon=eps, **sizes), measured=d9["value"], rtol=1e-12,
                note="reference: mpmath at 50 digits"))
            d9_params = {**eps_params, "accountant": "theorem_d9", "neighboring": d9["neighboring"],
                         "guarantee": d9["guarantee"], "method": "closed_form", "sampling": "without_replacement"}
            self._lambda_zero_series(series, d9_params, d9["value"], num_steps)
            rows.append(["theorem_d9", d9["neighboring"], d9["guarantee"], "without_replacement", json_number(eps), 0,
                         d9["value"]])
            # dp-accounting at lambda = 0
            tight: dict[str, float] = {}
            for sampling, _ in DP_ACCOUNTING_SAMPLINGS:
                out = outputs[unit_key(accountant="dp_accounting", sampling=sampling, epsilon=eps)]
                tight[sampling] = out["value"]
                params = {**eps_params, "accountant": "dp_accounting", "neighboring": out["neighboring"],
                          "guarantee": out["guarantee"], "method": "composition", "sampling": sampling}
                self._lambda_zero_series(series, params, out["value"], num_steps)
                rows.append(["dp_accounting", out["neighboring"], out["guarantee"], sampling, json_number(eps), 0,
                             out["value"]])
                checks.append(self._calibration_check(config, eps, sampling, out))
                if "d9_epsilon" in out:
                    metrics.append(Metric(name="theorem_d9_epsilon_by_dp_accounting",
                                          params={"epsilon": json_number(eps)}, value=out["d9_epsilon"]))
                    checks.append(finding(
                        f"theorem_d9_checked_by_dp_accounting epsilon={json_number(eps)}",
                        claim=f"epsilon that dp-accounting's RDP accountant (without replacement, replace-one, "
                              f"multiplier kappa / 2) gives at Theorem D.9's kappa = {d9['value']:.6g}, target "
                              f"{json_number(eps)} (D.9 is heuristic: is it valid here?)",
                        measured=out["d9_epsilon"],
                        note=("valid (<= target) and conservative" if out["d9_epsilon"] <= eps
                              else "NOT valid: dp-accounting's epsilon exceeds the target") +
                             f"; ratio to the target {out['d9_epsilon'] / eps:.4g}"))
            checks.append(self._lambda_zero_wins(config, eps, entry["theorem_f12"], tight, metrics))
        checks += self._table_checks(outputs)
        amplified_table, amplified_metrics, amplified_checks = amplified.amplified_findings(outputs)
        metrics += amplified_metrics
        checks += amplified_checks
        tables = [Table(name="noise_multipliers",
                        columns=["accountant", "neighboring", "guarantee", "sampling", "epsilon", "noise_correlation",
                                 "noise_multiplier"], rows=rows),
                  self._spec_table(outputs), amplified_table]
        return Findings(series=series, tables=tables, metrics=metrics, checks=checks)

    @staticmethod
    def _lambda_zero_series(series: list[Series], params: dict[str, Any], kappa: float, num_steps: int) -> None:
        label = f"{params['accountant']} {params['sampling']} epsilon={params['epsilon']}"
        series.append(Series(name=label, params=params, x=[0.0], y=[kappa], x_label="noise_correlation",
                             y_label="noise_multiplier"))
        series.append(Series(name=f"{label} cumulative noise",
                             params={**params, "quantity": "cumulative_noise_variance"}, x=[0.0],
                             y=[kappa**2 * num_steps], x_label="noise_correlation",
                             y_label="cumulative_noise_variance"))

    @staticmethod
    def _calibration_check(config: CalibrationConfig, eps: float, sampling: str, out: Mapping[str, Any]) -> Check:
        rtol = config.calibration_rtol
        at, below = out["epsilon_at_value"], out["epsilon_below"]
        # dp-accounting's own conversion is privdyn's without the upward rounding: it may differ in the last bits.
        slack = 1e-12
        passed = at <= eps * (1.0 + slack) and below > eps * (1.0 - slack)
        relation = out["neighboring"]
        convention = "kappa / 2 (replace-one sensitivity 2 clip)" if sampling == "without_replacement" else "kappa"
        method = "RDP accountant" if sampling == "without_replacement" else "PLD accountant"
        return Check(
            name=f"dp_accounting_calibration epsilon={json_number(eps)} sampling={sampling}", kind=INVARIANT,
            claim=f"lambda = 0, {sampling.replace('_', ' ')} sampling, {relation}: the calibrated kappa = "
                  f"{out['value']:.6g} gives, recomputed straight from dp-accounting ({method}, multiplier "
                  f"{convention}), an epsilon <= the target {json_number(eps)}, and kappa / (1 + {rtol:g}) gives more",
            expected=eps, measured=at, tolerance=rtol, passed=passed,
            note=f"tolerance: kappa is within a factor 1 + rtol of the smallest kappa meeting the target (the bracket "
                 f"is verified), so epsilon is within the change of epsilon over the bracket, "
                 f"{(below - at) / eps:.3g} relative, of the target; measured: epsilon at kappa {at:.10g}, at kappa / "
                 f"(1 + rtol) = {out['kappa_below']:.6g}: {below:.10g}, relative gap to the target "
                 f"{(eps - at) / eps:.3g}; floating-point slack 1e-12 relative between dp-accounting's and privdyn's "
                 "evaluation of the same conversion")

    @staticmethod
    def _lambda_zero_wins(config: CalibrationConfig, eps: float, f12: list[Mapping[str, Any]],
                          tight: Mapping[str, float], metrics: list[Metric]) -> Check:
        name = f"paper_calibration_lambda_zero_wins epsilon={json_number(eps)}"
        claim = (f"epsilon = {json_number(eps)}: under the paper's own calibration (Theorem F.12, "
                 "constant 8) kappa grows with lambda, and the cumulative noise variance at T, "
                 "kappa(lambda)^2 (1 + (1 - lambda)^2 (T - 1)), is smallest at the smallest lambda of the grid "
                 "(measured: the minimizing lambda)")
        valid = [(lam, p["value"]) for lam, p in zip(config.noise_correlations, f12, strict=True)
                 if p["value"] is not None]
        if len(valid) < 2:
            return check_not_applicable(name, kind=CheckKind.FINDING, claim=claim,
                                        note="not applicable: Theorem F.12 does not apply to this config "
                                             "(or the grid has one lambda)")
        valid.sort()
        lam = np.array([v[0] for v in valid])
        kappa = np.array([v[1] for v in valid])
        variance = kappa**2 * (1.0 + (1.0 - lam) ** 2 * (config.num_steps - 1))
        best = float(lam[int(np.argmin(variance))])
        increasing = bool(np.all(np.diff(kappa) > 0))
        metrics.append(Metric(name="f12_minimizing_noise_correlation", params={"epsilon": json_number(eps)},
                              value=json_number(best)))
        ratios = ", ".join(f"{json_number(float(a))}: {v / variance[0]:.7g}" for a, v in zip(lam, variance,
                                                                                              strict=True))
        return finding(name, claim=claim, measured=json_number(best),
                       note=f"kappa {'increases' if increasing else 'does NOT increase'} with lambda "
                            f"({kappa[0]:.5g} at lambda = {json_number(float(lam[0]))} to {kappa[-1]:.5g} at "
                            f"{json_number(float(lam[-1]))}); cumulative variance relative to lambda = "
                            f"{json_number(float(lam[0]))}: {ratios}. At lambda = 0 the tight accountant needs "
                            f"kappa = {tight['without_replacement']:.5g} (replace-one; F.12 at its smallest lambda "
                            f"is {kappa[0] / tight['without_replacement']:.3g}x that), so the comparison says nothing "
                            "about the source paper's claim: no tight lambda > 0 accountant is implemented")

    @staticmethod
    def _table_checks(outputs: Mapping[str, Mapping[str, Any]]) -> list[Check]:
        checks: list[Check] = []
        for i, row in enumerate(_REF_TABLE):
            out = outputs[f"spec_table/row={i + 1}"]
            n, batch_size, num_steps, eps, delta = row["setting"]
            where = f"n={n}, B={batch_size}, T={num_steps}, epsilon={json_number(eps)}, delta={delta:g}"
            checks.append(_printed_claim(
                f"spec_table_theorem_d9 row={i + 1}", f"reference table row {i + 1} ({where}): Theorem D.9 gives "
                f"kappa = {row['d9']}", [row["d9"]], [out["d9"]]))
            checks.append(_printed_claim(
                f"spec_table_theorem_f12 row={i + 1}", f"reference table row {i + 1} ({where}): Theorem F.12 "
                f"(constant 8) gives kappa = {' / '.join(row['f12'])} at lambda = 0+ / 0.3 / 0.5 / 0.7 / 0.9",
                list(row["f12"]), out["f12"]))
            checks.append(_printed_claim(
                f"spec_table_d9_epsilon row={i + 1}", f"reference table row {i + 1} ({where}): Theorem D.9's kappa "
                f"gives epsilon ~ {row['epsilon_half']} by dp-accounting's RDP accountant (without replacement, "
                "replace-one, multiplier kappa / 2), below the target: D.9 valid but conservative here",
                [row["epsilon_half"]], [out["epsilon_half"]]))
            checks.append(_printed_claim(
                f"spec_table_d9_epsilon_multiplier_kappa row={i + 1}",
                f"reference table row {i + 1} ({where}): reading D.9's kappa as dp-accounting's multiplier itself "
                "(sensitivity clip, not 2 clip) gives epsilon ~ "
                f"{row['epsilon_full']}", [row["epsilon_full"]], [out["epsilon_full"]]))
        first = outputs["spec_table/row=1"]
        ratio = first["f12"][0] / first["d9"]
        checks.append(_printed_claim(
            "spec_f12_over_d9_small_sampling_prob", "reference table: in the first row (r = 0.01) Theorem F.12 at "
            "lambda = 0+ needs ~7x the noise of Theorem D.9", [_REF_F12_OVER_D9], [ratio]))
        measured = first["f12_min_steps"]
        checks.append(Check(
            name="spec_f12_minimum_steps", kind=CLAIM,
            claim="reference table: at n = 50,000, B = 500, epsilon = 1, delta = 1e-5 Theorem F.12 applies only from "
                  f"T = {_REF_F12_MIN_STEPS} steps (r T >= 3 ln(2 / delta)); measured: the smallest T the engine "
                  "accepts",
            expected=_REF_F12_MIN_STEPS, measured=measured, tolerance=0.0, passed=measured == _REF_F12_MIN_STEPS,
            note="" if measured == _REF_F12_MIN_STEPS else
            f"claim T >= {_REF_F12_MIN_STEPS}; the engine first accepts T = {measured}"))
        return checks

    @staticmethod
    def _spec_table(outputs: Mapping[str, Mapping[str, Any]]) -> Table:
        rows = []
        for i, row in enumerate(_REF_TABLE):
            out = outputs[f"spec_table/row={i + 1}"]
            n, batch_size, num_steps, eps, delta = row["setting"]
            rows.append([n, batch_size, num_steps, json_number(eps), delta, out["d9"], *out["f12"],
                         out["epsilon_half"], out["epsilon_full"]])
        return Table(name="spec_reference_table",
                     columns=["n", "batch_size", "num_steps", "epsilon", "delta", "theorem_d9",
                              *[f"theorem_f12 lambda={json_number(lam)}" for lam in _TABLE_LAMBDAS],
                              "dp_accounting_epsilon_at_d9 (kappa/2)", "dp_accounting_epsilon_at_d9 (kappa)"],
                     rows=rows)

    # ----------------------------------------------------------------------------------------------------------

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, grid = plt.subplots(2, 2, figsize=(13.0, 9.0), layout="constrained")
        axes, legend_ax, amplified_ax = grid[0], grid[1][1], grid[1][0]
        epsilons = sorted({s["params"]["epsilon"] for s in result["series"]})
        colors = plt.get_cmap("viridis")(np.linspace(0.05, 0.85, max(len(epsilons), 1)))
        styles = {"theorem_f12": "-", "theorem_f12_proved": "--"}
        markers = {("theorem_d9", "without_replacement"): "x", ("dp_accounting", "without_replacement"): "o",
                   ("dp_accounting", "poisson"): "s"}
        for ax, quantity in zip(axes, ("noise_multiplier", "cumulative_noise_variance"), strict=True):
            for color, eps in zip(colors, epsilons, strict=True):
                for s in select_series(result, epsilon=eps, quantity=quantity):
                    p = s["params"]
                    label = (f"{words('accountant', p['accountant'])} ({words('neighboring', p['neighboring'])}, "
                             f"{words('guarantee', p['guarantee'])}), ε = {eps:g}")
                    if p["accountant"] in styles:
                        ax.plot(as_floats(s["x"]), as_floats(s["y"]), color=color, ls=styles[p["accountant"]],
                                lw=1.2, label=label)
                    else:
                        label = (f"{words('accountant', p['accountant'])}, λ = 0, {words('sampling', p['sampling'])} "
                                 f"({words('neighboring', p['neighboring'])}, {words('guarantee', p['guarantee'])}), "
                                 f"ε = {eps:g}")
                        ax.plot(as_floats(s["x"]), as_floats(s["y"]), color=color, ls="none",
                                marker=markers.get((p["accountant"], p["sampling"]), "^"), ms=6, label=label)
            ax.set_yscale("log")
            ax.set_xlabel("noise correlation λ")
        for ax in axes:  # kappa grows as sqrt(constant)/epsilon: constant 8 at epsilon 1 is constant 2 at 0.5
            mark_coincident(ax)
        axes[0].set_ylabel("noise multiplier κ (relative to the clip)")
        axes[1].set_ylabel(r"$\kappa^2 (1 + (1 - \lambda)^2 (T - 1))$")
        axes[0].set_title("κ by accountant", fontsize=9)
        axes[1].set_title("cumulative noise variance at T under each calibration", fontsize=9)
        handles, labels = axes[0].get_legend_handles_labels()
        legend_ax.axis("off")
        legend_ax.legend(handles, labels, loc="center", fontsize=7, frameon=False, title="top panels",
                         title_fontsize=8)
        self._plot_amplified(amplified_ax, result)
        fig.suptitle(f"top panels: n = {result['config']['n']}, B = {result['config']['batch_size']}, "
                     f"T = {result['config']['num_steps']}, δ = {result['config']['delta']}", fontsize=9)
        return [save_figure(fig, out_dir, paper=result["paper"])]

    @staticmethod
    def _plot_amplified(ax: Any, result: Mapping[str, Any]) -> None:
        table = next((t for t in result["tables"] if t["name"] == "amplified_reference_table"), None)
        if table is None:
            return
        col = {c: i for i, c in enumerate(table["columns"])}
        settings = list(dict.fromkeys((r[col["n"]], r[col["batch_size"]], r[col["num_steps"]]) for r in table["rows"]))
        colors = _colors(len(settings))
        for color, setting in zip(colors, settings, strict=True):
            rows = [r for r in table["rows"] if (r[col["n"]], r[col["batch_size"]], r[col["num_steps"]]) == setting]
            x = [float(r[col["noise_correlation"]]) for r in rows]
            label = f"n = {setting[0]}, B = {setting[1]}, T = {setting[2]}"
            ax.plot(x, [float(r[col["kappa_amplified_bound"]]) for r in rows], color=color, marker="o", lw=1.2,
                    label=f"{label}: amplified bound")
            ax.plot(x, [float(r[col["kappa_theorem_f12_proved"]]) for r in rows], color=color, ls="--", lw=1.0,
                    label=f"{label}: Theorem F.12, constant 2")
        ax.set_yscale("log")
        ax.set_xlabel("noise correlation λ")
        ax.set_ylabel("noise multiplier κ")
        ax.set_title("reference settings (fixed-size, zero-out, bound)", fontsize=9)
        ax.legend(fontsize=6)


def _colors(count: int) -> Any:
    """``count`` colours of the viridis map."""
    return pyplot().get_cmap("viridis")(np.linspace(0.05, 0.85, max(count, 1)))


def _printed_claim(name: str, claim: str, printed: list[str], measured: list[float]) -> Check:
    """A paper claim against printed numbers: each within half a unit of its last printed digit."""
    values = [printed_value(p) for p in printed]
    expected = [v for v, _ in values]
    halves = np.array([h for _, h in values])
    measured_arr = np.asarray(measured, dtype=float)
    passed = bool(np.all(np.abs(measured_arr - expected) <= halves))
    shown = ", ".join(f"{m:.6g}" for m in measured_arr)
    return Check(name=name, kind=CLAIM, claim=claim, expected=expected if len(expected) > 1 else expected[0],
                 measured=list(measured_arr) if len(expected) > 1 else float(measured_arr[0]),
                 tolerance=float(halves.max()), passed=passed,
                 note=f"tolerance: half a unit in the last printed digit; measured {shown}" + (
                     "" if passed else f"; claim {' / '.join(printed)} does not reproduce"))


def _smallest_accepted_steps(*, n: int, batch_size: int, epsilon: float, delta: float) -> int:
    """The smallest T at which the Theorem F.12 engine accepts (bisection: it refuses below a threshold)."""

    def accepts(steps: int) -> bool:
        try:
            calibration.noise_multiplier_theorem_f12(0.0, n=n, batch_size=batch_size, num_steps=steps,
                                                     epsilon=epsilon, delta=delta)
        except ValueError:
            return False
        return True

    lo, hi = 0, 1
    while not accepts(hi):
        lo, hi = hi, hi * 2
        if hi > 2**40:
            raise ValueError("Theorem F.12 accepts no num_steps up to 2**40 at this setting.")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if accepts(mid):
            hi = mid
        else:
            lo = mid
    return hi
