"""Coupled replace-one runs of the kan paper (arXiv 2605.12648) against Theorem C.22 (``kan-stability``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn import rng
from privdyn.algorithms.dpsgd import DPSGDResult, dpsgd
from privdyn.bounds import kan as kb
from privdyn.experiments.kan_identities.common import (
    INVARIANT,
    PAPER,
    UNIT_ROUNDOFF,
    _event_margins,
    _KanRunConfig,
    _model,
    _Setup,
    _setup,
    _theory_regime,
    load_pool,
)
from privdyn.privacy.correlated import step_normals
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.naming import json_number, unit_key
from privdyn.runs.plotting import as_floats, pyplot, save_figure, select_series
from privdyn.runs.results import (
    Z_SCORE,
    Check,
    Metric,
    Series,
    finding,
    mean_se,
)

__all__ = ["StabilityConfig", "Stability"]


# --------------------------------------------------------------------------------------------------------------
# kan-stability
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class StabilityConfig(_KanRunConfig):
    """``num_seeds`` independent draws of (S, S~, batches, noise) per noise correlation, in units of
    ``seeds_per_unit``; each draw runs ``n + 1`` coupled trainings (S and every S^(i))."""

    n: int = 32
    width: int = 16
    num_steps: int = 40
    noise_correlations: tuple[float, ...] = (0.0, 0.5)
    num_seeds: int = 16
    seeds_per_unit: int = 8

    quick_overrides = {"n": 16, "num_steps": 24, "num_seeds": 10, "seeds_per_unit": 5}

    def validate(self) -> None:
        super().validate()
        if self.num_seeds < 2:
            raise ValueError(f"num_seeds must be an integer >= 2 (a standard error needs two); got "
                             f"num_seeds={self.num_seeds}.")
        if self.seeds_per_unit < 1:
            raise ValueError(f"seeds_per_unit must be an integer >= 1; got seeds_per_unit={self.seeds_per_unit}.")

    def _needs_subset(self) -> bool:
        return False  # S and S~ are drawn with replacement from the pool


def _stability_seed(config: StabilityConfig, lam: float, seed: int, draw: int) -> dict[str, Any]:
    setup = _setup(config, lam)
    k = setup.constants
    a_const, b_const = kb.stability_constants(k, width=config.width, failure_prob=config.failure_prob)
    x_pool, y_pool = load_pool(config.dataset)
    model, w0 = _model(config, setup.d, rng.generator(seed, "kan-stability/initialization", purpose="data"))
    key = "kan-stability/draw"
    data = rng.generator(seed, key, run_index=draw, purpose="data")
    n, t_max, b, eta = config.n, config.num_steps, config.batch_size, setup.step_size
    idx, idx_new = data.integers(0, x_pool.shape[0], size=n), data.integers(0, x_pool.shape[0], size=n)
    x, y, x_new, y_new = x_pool[idx], y_pool[idx], x_pool[idx_new], y_pool[idx_new]
    output_bound = kb.initial_output_bound(k, n=2 * n, failure_prob=config.failure_prob)
    out_event = float(np.max(np.abs(np.concatenate([model.forward(w0, x), model.forward(w0, x_new)])))) <= output_bound
    noise = step_normals(seed, key, run=draw)

    def train(xs: np.ndarray, ys: np.ndarray, log_loss: bool) -> DPSGDResult:
        return dpsgd(model, w0, xs, ys, num_steps=t_max, step_size=eta, batch_size=b,
                     sampling_rng=rng.generator(seed, key, run_index=draw, purpose="sampling"), clip=setup.clip,
                     noise_multiplier=config.noise_multiplier, noise_correlation=lam,
                     projection_radius=setup.projection_radius, noise_rng=noise, log_every=1,
                     log_train_loss=log_loss, keep_iterates=True)

    base = train(x, y, True)
    assert base.iterates is not None  # keep_iterates=True
    sampler = rng.generator(seed, key, run_index=draw, purpose="sampling")
    batches = [sampler.choice(n, size=b, replace=False) for _ in range(t_max)]
    losses = np.array([model.per_example_losses(base.iterates[t], x, y) for t in range(t_max)])  # (T, n)
    deltas, lemma_sums, m_sums, max_gaps = [], [], [], []
    clipped, examples, projections = base.num_clipped, base.num_examples, base.num_projections
    for i in range(n):
        xs, ys = x.copy(), y.copy()
        xs[i], ys[i] = x_new[i], y_new[i]
        other = train(xs, ys, False)
        assert other.iterates is not None
        clipped += other.num_clipped
        examples += other.num_examples
        projections += other.num_projections
        gaps = np.linalg.norm((base.iterates - other.iterates).reshape(t_max + 1, -1), axis=1)
        deltas.append(float(gaps[-1]))
        max_gaps.append(float(np.max(gaps)))
        r_sum = 0.0
        for t, batch in enumerate(batches):
            if i in batch:
                replaced = float(model.per_example_losses(other.iterates[t], x_new[i:i + 1], y_new[i:i + 1])[0])
                r_sum += eta * b_const / b * (losses[t, i] + replaced)
        lemma_sums.append(math.e * r_sum)
        m_sums.append(a_const * eta * float(np.sum(base.log.batch_loss[1:] + other.log.batch_loss[1:])))
    return {"sum_train_loss": float(np.sum(base.log.train_loss[:t_max])), "deltas": deltas,
            "lemma_c21_bounds": lemma_sums, "m_sums": m_sums, "max_gaps": max_gaps, "output_event": out_event,
            "num_clipped": clipped, "num_examples": examples, "num_projections": projections,
            **_event_margins(model, config.failure_prob)}


def _pair_events(draw: Mapping[str, Any], a_const: float) -> list[bool]:
    """Per coupled pair: the checkable part of Theorem C.22's event E^(i): the output event of Lemma C.17,
    ``sum_t M_t^(i) <= 1`` (the conclusion of Lemma C.20 used by Lemma C.21) and Lemma B.4's quasi-convexity
    hypothesis ``(a/2) max_t ||W_t - W_t^(i)||^2 <= 1`` (factor 2 of Lemma C.16's proof)."""
    return [bool(draw["output_event"] and m_sum <= 1.0 and 0.5 * a_const * gap**2 <= 1.0)
            for m_sum, gap in zip(draw["m_sums"], draw["max_gaps"], strict=True)]


class Stability(Experiment[StabilityConfig]):
    name = "kan-stability"
    paper_key = "kan"
    title = "On-average argument stability by coupled runs against Theorem C.22's explicit bound"
    paper = f"{PAPER}, Theorem C.22 (Definition C.14, Lemmas C.16-C.21)"
    description = ("Coupled DP-SGD runs on S and every replace-one neighbour S^(i) (same initialization, batches, "
                   "noise): measured (1/n) sum_i ||W_T - W_T^(i)|| against Theorem C.22's bound.")
    config_class = StabilityConfig

    def units(self, config: StabilityConfig) -> list[Unit]:
        units = []
        for lam in config.noise_correlations:
            for first in range(0, config.num_seeds, config.seeds_per_unit):
                count = min(config.seeds_per_unit, config.num_seeds - first)
                units.append(Unit(unit_key(noise_correlation=lam, draws=f"{first}-{first + count - 1}"),
                                  {"noise_correlation": lam, "first": first, "count": count}))
        return units

    def compute_unit(self, config: StabilityConfig, unit: Unit, seed: int) -> dict[str, Any]:
        lam = float(unit.params["noise_correlation"])
        first, count = int(unit.params["first"]), int(unit.params["count"])
        return {"draws": [_stability_seed(config, lam, seed, draw) for draw in range(first, first + count)]}

    def assemble(self, config: StabilityConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        rows: dict[str, list[float]] = {"measured": [], "se": [], "bound": [], "first_term": []}
        for lam in config.noise_correlations:
            draws = [d for u in self.units(config) if u.params["noise_correlation"] == lam
                     for d in outputs[u.key]["draws"]]
            setup = _setup(config, lam)
            _, b_const = kb.stability_constants(setup.constants, width=config.width, failure_prob=config.failure_prob)
            label = f"lambda={json_number(lam)}"
            params = {"dataset": config.dataset, "n": config.n, "batch_size": config.batch_size,
                      "num_steps": config.num_steps, "noise_multiplier": config.noise_multiplier,
                      "noise_correlation": json_number(lam), "step_size": setup.step_size, "clip": setup.clip,
                      "projection_radius": setup.projection_radius, "neighboring": "replace_one"}
            coefficient = 2.0 * math.e * setup.step_size * b_const / config.n
            tail = 2.0 * setup.projection_radius * config.failure_prob
            measured = np.array([np.mean(d["deltas"]) for d in draws])
            first_term = coefficient * np.array([d["sum_train_loss"] for d in draws])
            gap = first_term + tail - measured
            count = len(draws)
            se_gap = float(mean_se(gap).standard_error)
            se_measured = float(mean_se(measured).standard_error)
            m_mean, bound = float(np.mean(measured)), float(np.mean(first_term) + tail)
            rows["measured"].append(m_mean)
            rows["se"].append(se_measured)
            rows["bound"].append(bound)
            rows["first_term"].append(float(np.mean(first_term)))
            margins = [min(d["second_layer_norm_margin"], d["second_layer_unit_norm_margin"]) for d in draws]
            broken = _theory_regime(config, setup)
            if margins[0] < 0:
                broken.append("the initialization is outside E_delta (Lemma B.5)")
            condition_c16 = setup.step_size <= 1.0 / setup.constants.smoothness
            if not condition_c16:
                broken.append("step_size > 1/(C p^3) (Lemma C.16)")
            explicit = kb.explicit_constant_conditions(width=config.width, failure_prob=config.failure_prob)
            broken += [f"{c.name} fails (margin {c.margin:.3g})" for c in explicit if not c.holds]
            a_const, _ = kb.stability_constants(setup.constants, width=config.width, failure_prob=config.failure_prob)
            events = [ok for d in draws for ok in _pair_events(d, a_const)]
            if not all(events):
                broken.append(f"the checkable part of the event E^(i) of Theorem C.22 (output event, sum_t M_t^(i) "
                              f"<= 1, quasi-convexity) fails in {len(events) - sum(events)} of {len(events)} coupled "
                              "pairs (the width is too small for Lemma C.20 at this T)")
            clipped = sum(d["num_clipped"] for d in draws) / sum(d["num_examples"] for d in draws)
            projections = sum(d["num_projections"] for d in draws)
            metrics += [Metric(name="stability_measured", params=params, value=m_mean),
                        Metric(name="stability_bound", params=params, value=bound),
                        Metric(name="clip_fraction", params=params, value=clipped),
                        Metric(name="projection_steps", params=params, value=projections)]
            claim = ("Theorem C.22: E[(1/n) sum_i ||W_T - W_T^(i)||] <= (2 e eta b_(delta,m) / n) sum_{t<T} "
                     "E L_S(W_t) + 2 R* delta_stab" + ("" if lam > 0 else " (stated for lambda > 0; at lambda = 0 the "
                                                      "coupled noise cancels in the same way, Theorem D.15)"))
            lcl = float(np.mean(gap)) - Z_SCORE * se_gap
            note = (f"paired over {count} draws of (S, S~, batches, noise): X = bound - measured per draw; passes when "
                    f"mean(X) - 5 SE(X) = {lcl:.4g} >= 0 (certifies the bound at z = 5). measured {m_mean:.4g} ± "
                    f"{se_measured:.2g} (SE), bound {bound:.4g} = {float(np.mean(first_term)):.4g} + 2 R* delta "
                    f"{tail:.4g}; b_(delta,m) = {b_const:.4g}, delta = delta_stab = {config.failure_prob:g}, "
                    f"clip fraction {clipped:.3g}, projection steps {projections}")
            if broken:
                checks.append(finding(f"stability_vs_theorem_c22 {label}", claim=claim + " (hypotheses not met)",
                                      measured=m_mean, note=f"{'; '.join(broken)}. {note}"))
            else:
                checks.append(Check(name=f"stability_within_theorem_c22 {label}", kind=INVARIANT, claim=claim,
                                    expected=bound, measured=m_mean, tolerance=Z_SCORE * se_gap,
                                    standard_error=se_gap, passed=lcl >= 0.0, note=note))
            checks.extend(self._pathwise(config, draws, setup, label, broken))
            ratio = bound / m_mean if m_mean > 0 else math.inf
            lemma = float(np.mean([np.mean(d["lemma_c21_bounds"]) for d in draws]))
            checks.append(finding(
                f"theorem_c22_looseness {label}",
                claim="how loose Theorem C.22 is: bound / measured stability (and the δ-free term / measured)",
                measured=ratio,
                note=f"bound / measured = {ratio:.4g}; first term / measured = "
                     f"{float(np.mean(first_term)) / m_mean if m_mean > 0 else math.inf:.4g}; Lemma C.21's pathwise "
                     f"e sum_k R_k averaged / measured = {lemma / m_mean if m_mean > 0 else math.inf:.4g}. Sources: "
                     f"b_(delta,m) = {b_const:.4g} is a worst-case bound on ||grad f|| (G_delta = "
                     f"{setup.gradient_bound:.4g}), the factor e, and 2 R* delta = {tail:.4g}"))
        if len(rows["measured"]) > 1:
            spread = (max(rows["measured"]) - min(rows["measured"])) / max(min(rows["measured"]), 1e-300)
            checks.append(finding(
                "stability_across_noise_correlations",
                claim="the measured stability depends on lambda only through the training losses (the coupled noise "
                      "cancels; an experiment suggested by Appendix C.2): relative spread across noise_correlations",
                measured=spread,
                note="measured per noise_correlation: " + ", ".join(
                    f"{json_number(lam)}: {m:.4g} ± {s:.2g}" for lam, m, s in
                    zip(config.noise_correlations, rows["measured"], rows["se"], strict=True))
                     + "; the draws (data, batches, noise) are shared across noise_correlations"))
        x = list(config.noise_correlations)
        base = {"dataset": config.dataset, "n": config.n, "batch_size": config.batch_size,
                "num_steps": config.num_steps, "noise_multiplier": config.noise_multiplier,
                "neighboring": "replace_one"}
        meas = np.array(rows["measured"])
        se = np.array(rows["se"])
        series.append(Series(name="stability measured", params={**base, "method": "coupled_runs",
                                                                 "quantity": "argument_stability"},
                             x=x, y=meas, y_low=meas - Z_SCORE * se, y_high=meas + Z_SCORE * se, standard_error=se,
                             x_label="noise_correlation", y_label="(1/n) sum_i ||W_T - W_T^(i)||"))
        series.append(Series(name="stability bound", params={**base, "method": "theorem_c22", "guarantee": "bound",
                                                              "quantity": "argument_stability"},
                             x=x, y=rows["bound"], x_label="noise_correlation",
                             y_label="(1/n) sum_i ||W_T - W_T^(i)||"))
        series.append(Series(name="stability bound first term", params={**base, "method": "theorem_c22",
                                                                          "guarantee": "bound",
                                                                          "quantity": "first_term"},
                             x=x, y=rows["first_term"], x_label="noise_correlation",
                             y_label="(2 e eta b / n) sum_t E L_S(W_t)"))
        return Findings(series=series, metrics=metrics, checks=checks)

    @staticmethod
    def _pathwise(config: StabilityConfig, draws: list[Mapping[str, Any]], setup: _Setup, label: str,
                  broken: list[str]) -> list[Check]:
        a_const, _ = kb.stability_constants(setup.constants, width=config.width, failure_prob=config.failure_prob)
        eligible = violations = total = 0
        worst = 0.0
        for d in draws:
            for delta, lemma, ok in zip(d["deltas"], d["lemma_c21_bounds"], _pair_events(d, a_const), strict=True):
                total += 1
                if not ok:
                    continue
                eligible += 1
                slack = 64.0 * UNIT_ROUNDOFF * max(delta, 1.0)
                if delta > lemma + slack:
                    violations += 1
                if lemma > 0:
                    worst = max(worst, delta / lemma)
        claim = ("Lemma C.21 pathwise: ||W_T - W_T^(i)|| <= e sum_k R_k^(i) on every coupled pair whose checkable "
                 "event holds (output event, sum_t M_t^(i) <= 1, (a/2) max_t ||W_t - W_t^(i)||^2 <= 1)")
        note = (f"{eligible} of {total} pairs satisfy the event conditions; largest ratio ||W_T - W_T^(i)|| / "
                f"(e sum R) = {worst:.4g}")
        if broken or eligible == 0:
            return [finding(f"lemma_c21_pathwise {label}", claim=claim + " (hypotheses not met)", measured=violations,
                            note=note + (f"; {'; '.join(broken)}" if broken else ""))]
        return [Check(name=f"lemma_c21_pathwise {label}", kind=INVARIANT, claim=claim, expected=0,
                      measured=violations, tolerance=0.0, passed=violations == 0,
                      note=note + "; rounding slack 64 u max(Delta, 1)")]

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6.2, 4.2))
        for s in select_series(result, quantity="argument_stability"):
            x = as_floats(s["x"])
            if s["params"]["method"] == "coupled_runs":
                y = as_floats(s["y"])
                lo, hi = as_floats(s["y_low"]), as_floats(s["y_high"])
                ax.errorbar(x, y, yerr=[np.subtract(y, lo), np.subtract(hi, y)], marker="o", capsize=3,
                            label="measured (± 5 SE)")
            else:
                ax.plot(x, as_floats(s["y"]), marker="s", ls="--", label="Theorem C.22 bound")
        for s in select_series(result, quantity="first_term"):
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), marker="^", ls=":", label="bound without 2R*δ")
        ax.set_yscale("log")
        ax.set_xlabel("noise correlation λ")
        ax.set_ylabel("(1/n) Σ_i ||W_T − W_T^(i)||")
        ax.set_title("on-average argument stability (coupled runs)", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]
