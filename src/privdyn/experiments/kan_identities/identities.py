"""The analysis identities of the kan paper (arXiv 2605.12648) checked on real runs (``kan-identities``)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn import rng
from privdyn.algorithms.dpsgd import dpsgd, sample_batches
from privdyn.experiments.kan_identities.common import (
    INVARIANT,
    MAX_ENUMERATION_N,
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
from privdyn.runs.plotting import as_floats, mark_coincident, pyplot, save_figure, select_series
from privdyn.runs.results import (
    Check,
    Metric,
    Series,
    bonferroni_z,
    check_monte_carlo,
    check_not_applicable,
    finding,
)

__all__ = ["IdentitiesConfig", "Identities"]


# --------------------------------------------------------------------------------------------------------------
# kan-identities
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class IdentitiesConfig(_KanRunConfig):
    """``num_runs`` independent runs per noise correlation (fresh data subset, initialization, batches, noise);
    ``enumeration_n`` vectors for Lemma B.2 (all batch sizes 1 .. enumeration_n)."""

    num_runs: int = 4
    enumeration_n: int = 10
    sampler_draws: int = 20000

    quick_overrides = {"num_runs": 2, "num_steps": 12}

    def validate(self) -> None:
        super().validate()
        if self.num_runs < 1:
            raise ValueError(f"num_runs must be an integer >= 1; got num_runs={self.num_runs}.")
        if self.sampler_draws < 100:
            raise ValueError(f"sampler_draws must be an integer >= 100; got sampler_draws={self.sampler_draws}.")
        if not 2 <= self.enumeration_n <= min(MAX_ENUMERATION_N, self.n):
            raise ValueError(f"enumeration_n must lie in [2, min({MAX_ENUMERATION_N}, n={self.n})]; got "
                             f"enumeration_n={self.enumeration_n}.")


def _recursion_tolerance_factor(batch_size: int) -> float:
    return 2.0 * (batch_size + 6)


def _identity_run(config: IdentitiesConfig, lam: float, seed: int, run: int) -> dict[str, Any]:
    setup = _setup(config, lam)
    key = unit_key(experiment="kan-identities", noise_correlation=lam)
    x_pool, y_pool = load_pool(config.dataset)
    data = rng.generator(seed, key, run_index=run, purpose="data")
    index = data.choice(x_pool.shape[0], size=config.n, replace=False)
    x, y = x_pool[index], y_pool[index]
    model, w0 = _model(config, setup.d, data)
    direction = data.standard_normal(w0.shape)
    comparator = w0 + 0.5 * setup.projection_radius * direction / np.linalg.norm(direction)
    noise = step_normals(seed, key, run=run)
    eta, c, b, t_max = setup.step_size, setup.c_priv, config.batch_size, config.num_steps
    result = dpsgd(model, w0, x, y, num_steps=t_max, step_size=eta, batch_size=b,
                   sampling_rng=rng.generator(seed, key, run_index=run, purpose="sampling"), clip=setup.clip,
                   noise_multiplier=config.noise_multiplier, noise_correlation=lam,
                   projection_radius=setup.projection_radius, noise_rng=noise, log_every=t_max,
                   log_train_loss=False, keep_iterates=True)
    iterates = result.iterates
    assert iterates is not None  # keep_iterates=True
    # The direct computation: the fixed-size sampler's batches (one choice without replacement per step, from an
    # identical generator) and Z_t from the same step normals (Z_0 = 0).
    batches = rng.generator(seed, key, run_index=run, purpose="sampling")
    normals = [np.zeros(w0.shape)] + [noise.draw(t, setup.noise_dim).reshape(w0.shape) if config.noise_multiplier
                                      > 0 else np.zeros(w0.shape) for t in range(1, t_max + 1)]
    k_rec = _recursion_tolerance_factor(b)
    sqrt_dim = math.sqrt(setup.noise_dim)
    rec_units, rec_used, c1_units, c1_used, max_grad = [], [], [], [], 0.0
    for t in range(1, t_max + 1):
        w_prev = iterates[t - 1]
        batch = batches.choice(config.n, size=b, replace=False)
        _, a, h = model.loss_and_gradient_factors(w_prev, x, y)
        max_grad = max(max_grad, float(np.max(np.linalg.norm(a, axis=1) * np.linalg.norm(h, axis=1))))
        g = np.einsum("ij,ik->jk", a, h) / config.n
        batch_mean = np.einsum("ij,ik->jk", a[batch], h[batch]) / b
        fluct = batch_mean - g
        u_prev = w_prev + eta * c * normals[t - 1]
        u_t = iterates[t] + eta * c * normals[t]
        z_prev = normals[t - 1]
        predicted = u_prev - eta * (g + fluct + (1.0 - lam) * c * z_prev)
        residual = float(np.max(np.abs(u_t - predicted)))
        abs_batch = np.einsum("ij,ik->jk", np.abs(a[batch]), np.abs(h[batch])) / b
        scale = float(np.max(np.abs(u_prev) + eta * (abs_batch + 2.0 * np.abs(g))
                             + eta * c * (np.abs(normals[t]) + np.abs(z_prev))))
        rec_units.append(residual / (UNIT_ROUNDOFF * scale))
        tol_rec = k_rec * UNIT_ROUNDOFF * scale
        rec_used.append(residual / tol_rec)
        # Lemma C.1, eq. (6): every term computed directly.
        du = u_prev - comparator
        terms = np.array([
            float(np.vdot(du, du)),
            -2.0 * eta * float(np.vdot(g, w_prev - comparator)),
            -2.0 * eta * float(np.vdot(fluct, du)),
            -2.0 * (1.0 - lam) * eta * c * float(np.vdot(z_prev, du)),
            eta**2 * float(np.vdot(g + fluct, g + fluct)),
            (1.0 - lam) ** 2 * eta**2 * c**2 * float(np.vdot(z_prev, z_prev)),
            2.0 * (1.0 - lam) * eta**2 * c * float(np.vdot(fluct, z_prev)),
            -2.0 * lam * eta**2 * c * float(np.vdot(g, z_prev)),
        ])
        diff = u_t - comparator
        lhs = float(np.vdot(diff, diff))
        c1_residual = abs(lhs - float(np.sum(terms)))
        magnitude = abs(lhs) + float(np.sum(np.abs(terms)))
        tol_c1 = (2.0 * sqrt_dim * tol_rec * math.sqrt(lhs)
                  + 2.0 * (setup.noise_dim + 8) * UNIT_ROUNDOFF * magnitude)
        c1_units.append(c1_residual / (UNIT_ROUNDOFF * magnitude))
        c1_used.append(c1_residual / tol_c1)
    _, a, h = model.loss_and_gradient_factors(iterates[t_max], x, y)
    max_grad = max(max_grad, float(np.max(np.linalg.norm(a, axis=1) * np.linalg.norm(h, axis=1))))
    distances = np.linalg.norm((iterates - w0).reshape(t_max + 1, -1), axis=1)
    max_noise = max(float(np.linalg.norm(z)) for z in normals[1:])
    return {
        "recursion_units": rec_units, "recursion_tolerance_used": rec_used,
        "lemma_c1_units": c1_units, "lemma_c1_tolerance_used": c1_used,
        "num_clipped": result.num_clipped, "num_examples": result.num_examples,
        "num_projections": result.num_projections, "max_gradient_norm": max_grad,
        "max_distance": float(np.max(distances)), "max_noise_norm": max_noise,
        **_event_margins(model, config.failure_prob),
    }


def _enumeration(config: IdentitiesConfig, seed: int) -> dict[str, Any]:
    """Lemma B.2 for the per-example loss gradients of ``enumeration_n`` examples at ``W_0`` (flattened)."""
    setup = _setup(config, 0.0)
    x_pool, y_pool = load_pool(config.dataset)
    data = rng.generator(seed, "kan-identities/lemma-b2", purpose="data")
    index = data.choice(x_pool.shape[0], size=config.enumeration_n, replace=False)
    model, w0 = _model(config, setup.d, data)
    _, a, h = model.loss_and_gradient_factors(w0, x_pool[index], y_pool[index])
    vectors = np.einsum("ij,ik->ijk", a, h).reshape(config.enumeration_n, -1)
    n = config.enumeration_n
    mean = vectors.mean(axis=0)
    spread = float(np.mean(np.sum((vectors - mean) ** 2, axis=1)))
    g_max = float(np.max(np.linalg.norm(vectors, axis=1)))
    rows = []
    for b in range(1, n + 1):
        subsets = np.array(list(itertools.combinations(range(n), b)), dtype=np.int64)
        batch_means = vectors[subsets].mean(axis=1)
        enumerated = float(np.mean(np.sum((batch_means - mean) ** 2, axis=1)))
        bias = float(np.max(np.abs(batch_means.mean(axis=0) - mean)))
        closed = (n - b) / (b * (n - 1)) * spread
        count = subsets.shape[0]
        dim = vectors.shape[1]
        tolerance = 2.0 * (dim + count + n + 8) * UNIT_ROUNDOFF * 4.0 * g_max**2
        bias_tolerance = 2.0 * (count + n + b + 4) * UNIT_ROUNDOFF * g_max
        rows.append({"batch_size": b, "num_batches": count, "enumerated": enumerated, "closed_form": closed,
                     "tolerance": tolerance, "bias": bias, "bias_tolerance": bias_tolerance,
                     "bound": g_max**2 / b, "bound_g_delta": setup.gradient_bound**2 / b})
    # The facts Lemma B.2's proof uses, for the engine's fixed-size sampler: P(i in B) = B/n and
    # P(i, j in B) = B (B - 1) / (n (n - 1)), estimated from its batches.
    b_s = min(config.batch_size, n - 1)
    sampler = sample_batches("fixed_size", n=n, batch_size=b_s,
                             rng=rng.generator(seed, "kan-identities/sampler", purpose="sampling"))
    indicator = np.zeros((config.sampler_draws, n))
    distinct = True
    for r in range(config.sampler_draws):
        batch = next(sampler)
        distinct &= len(set(batch.tolist())) == b_s == batch.size
        indicator[r, batch] = 1.0
    pairs = indicator.T @ indicator / config.sampler_draws
    upper = np.triu_indices(n, 1)
    return {"rows": rows, "max_norm": g_max, "gradient_bound": setup.gradient_bound, "n": n,
            "sampler_batch_size": b_s, "sampler_distinct": bool(distinct), "inclusion": np.diag(pairs).tolist(),
            "pair_inclusion": pairs[upper].tolist()}


class Identities(Experiment[IdentitiesConfig]):
    name = "kan-identities"
    paper_key = "kan"
    title = "Shifted-iterate recursion, Lemma C.1 and Lemma B.2 exactly; clipping and projection inactive"
    paper = f"{PAPER}, Section C.1 (shifted iterate, Lemma C.1), Lemma B.2, eq. (5)"
    description = ("The shifted-iterate recursion and Lemma C.1 on DP-SGD runs to machine precision, Lemma B.2 by "
                   "enumerating all batches, and zero clipping / projection when clip >= G_delta.")
    config_class = IdentitiesConfig

    def units(self, config: IdentitiesConfig) -> list[Unit]:
        units = [Unit(unit_key(method="enumeration", quantity="lemma_b2"), {"method": "enumeration"})]
        for lam in config.noise_correlations:
            for run in range(config.num_runs):
                units.append(Unit(unit_key(method="dpsgd", noise_correlation=lam, run=run),
                                  {"method": "dpsgd", "noise_correlation": lam, "run": run}))
        return units

    def compute_unit(self, config: IdentitiesConfig, unit: Unit, seed: int) -> dict[str, Any]:
        if unit.params["method"] == "enumeration":
            return _enumeration(config, seed)
        return _identity_run(config, float(unit.params["noise_correlation"]), seed, int(unit.params["run"]))

    def assemble(self, config: IdentitiesConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        common = {"dataset": config.dataset, "n": config.n, "batch_size": config.batch_size,
                  "num_steps": config.num_steps, "noise_multiplier": config.noise_multiplier}
        enumeration = outputs[unit_key(method="enumeration", quantity="lemma_b2")]
        for lam in config.noise_correlations:
            setup = _setup(config, lam)
            runs = [outputs[unit_key(method="dpsgd", noise_correlation=lam, run=r)] for r in range(config.num_runs)]
            params = {**common, "noise_correlation": json_number(lam), "step_size": setup.step_size,
                      "clip": setup.clip, "projection_radius": setup.projection_radius}
            steps = np.arange(1, config.num_steps + 1)
            for quantity, field in (("recursion_residual", "recursion_units"), ("lemma_c1_residual", "lemma_c1_units")):
                worst = np.max(np.array([r[field] for r in runs]), axis=0)
                series.append(Series(name=f"{quantity} lambda={json_number(lam)}",
                                     params={**params, "method": "dpsgd", "quantity": quantity}, x=steps, y=worst,
                                     x_label="t", y_label="max over runs of |residual| / (u * scale)"))
            checks.extend(self._identity_checks(config, lam, runs, setup, metrics, params))
        checks.extend(self._enumeration_checks(enumeration, series, {**common, "sampler_draws": config.sampler_draws}))
        return Findings(series=series, metrics=metrics, checks=checks)

    @staticmethod
    def _identity_checks(config: IdentitiesConfig, lam: float, runs: list[Mapping[str, Any]], setup: _Setup,
                         metrics: list[Metric], params: Mapping[str, Any]) -> list[Check]:
        checks: list[Check] = []
        label = f"lambda={json_number(lam)}"
        rec_used = max(max(r["recursion_tolerance_used"]) for r in runs)
        rec_units = max(max(r["recursion_units"]) for r in runs)
        c1_used = max(max(r["lemma_c1_tolerance_used"]) for r in runs)
        c1_units = max(max(r["lemma_c1_units"]) for r in runs)
        k_rec = _recursion_tolerance_factor(config.batch_size)
        metrics += [Metric(name="max_recursion_residual_in_roundoff_units", params=params, value=rec_units),
                    Metric(name="max_lemma_c1_residual_in_roundoff_units", params=params, value=c1_units)]
        checks.append(Check(
            name=f"shifted_iterate_recursion {label}", kind=INVARIANT,
            claim="U_t = W_t + eta c_priv Z_t satisfies U_t = U_{t-1} - eta (grad L_S(W_{t-1}) + Delta_t + "
                  "(1 - lambda) c_priv Z_{t-1}) exactly, on the engine's iterates (Section C.1, Step 2)",
            expected=0.0, measured=rec_units, tolerance=k_rec, passed=rec_used <= 1.0,
            note=f"measured: max over {len(runs)} runs x {config.num_steps} steps of the sup-norm residual in units "
                 "of u * scale_t (u = 2^-53, half the machine epsilon; scale_t the sup-norm of the terms); "
                 f"tolerance 2 (B + 6) = {k_rec:g} "
                 "units (B-term summation plus six operations, two independent evaluations); gradients, batches and "
                 "Z_t recomputed directly from the same streams"))
        checks.append(Check(
            name=f"lemma_c1_expansion {label}", kind=INVARIANT,
            claim="Lemma C.1 (eq. (6)): ||U_t - W*||^2 equals its eight-term expansion, on the engine's iterates",
            expected=0.0, measured=c1_units, tolerance=None, passed=c1_used <= 1.0,
            note=f"measured: max |LHS - RHS| in units of u * (|LHS| + sum |terms|); the tolerance (largest fraction "
                 f"used: {c1_used:.3g}) is the recursion tolerance propagated through the square, "
                 "2 sqrt(D) tol_t ||U_t - W*||, plus 2 (D + 8) u (|LHS| + sum |terms|); W* at distance R*/2 from W_0"))
        # (iii) clipping and projection
        broken = _theory_regime(config, setup)
        on_event = [min(r["second_layer_norm_margin"], r["second_layer_unit_norm_margin"]) >= 0 for r in runs]
        clipped = sum(r["num_clipped"] for r in runs) / max(sum(r["num_examples"] for r in runs), 1)
        max_grad = max(r["max_gradient_norm"] for r in runs)
        metrics += [Metric(name="clip_fraction", params=params, value=clipped),
                    Metric(name="max_gradient_norm_over_g_delta", params=params, value=max_grad / setup.gradient_bound),
                    Metric(name="min_second_layer_event_margin", params=params,
                           value=min(min(r["second_layer_norm_margin"], r["second_layer_unit_norm_margin"])
                                     for r in runs))]
        event_note = (f"E_delta (Lemma B.5, delta = {config.failure_prob:g}) held in {sum(on_event)} of {len(runs)} "
                      f"runs; margins (||c|| / max_j ||c_j||): "
                      + ", ".join(f"{r['second_layer_norm_margin']:.3g}/{r['second_layer_unit_norm_margin']:.3g}"
                                  for r in runs))
        grad_claim = ("eq. (5): on E_delta every per-example gradient norm is <= G_delta (all n examples at every "
                      "iterate)")
        clip_claim = "clip >= G_delta on E_delta: no per-example gradient is clipped (fraction 0)"
        if all(on_event):
            checks.append(Check(name=f"gradient_norm_within_g_delta {label}", kind=INVARIANT, claim=grad_claim,
                                expected=setup.gradient_bound, measured=max_grad, tolerance=0.0,
                                passed=max_grad <= setup.gradient_bound,
                                note=f"G_delta = {setup.gradient_bound:.4g}; largest norm is "
                                     f"{max_grad / setup.gradient_bound:.3g} G_delta. {event_note}"))
        else:
            checks.append(check_not_applicable(f"gradient_norm_within_g_delta {label}", kind=INVARIANT,
                                               claim=grad_claim, note=f"not applicable: {event_note}"))
        if all(on_event) and config.clip_factor >= 1.0:
            checks.append(Check(name=f"clipping_inactive {label}", kind=INVARIANT, claim=clip_claim, expected=0.0,
                                measured=clipped, tolerance=0.0, passed=clipped == 0.0,
                                note=f"clip = {config.clip_factor:g} G_delta = {setup.clip:.4g} (margin clip - "
                                     f"G_delta = {setup.clip - setup.gradient_bound:.4g}). {event_note}"))
        else:
            checks.append(finding(f"clipping_fraction {label}", claim="fraction of clipped per-example gradients "
                                  "(outside the hypotheses of eq. (5))", measured=clipped,
                                  note=f"clip = {config.clip_factor:g} G_delta. {event_note}"))
        projected = sum(r["num_projections"] for r in runs) / (len(runs) * config.num_steps)
        max_noise = max(r["max_noise_norm"] for r in runs)
        max_distance = max(r["max_distance"] for r in runs)
        metrics += [Metric(name="projection_fraction", params=params, value=projected),
                    Metric(name="radius_margin", params=params, value=setup.projection_radius - max_distance)]
        proj_note = (f"R* = {setup.projection_radius:.4g}, sufficient radius eta T (clip + (1 + lambda) c_priv z) = "
                     f"{setup.sufficient_radius:.4g}; noise event max_t ||Z_t|| = {max_noise:.4g} <= z = "
                     f"{setup.noise_bound:.4g} (Lemma C.5); largest ||W_t - W_0|| = {max_distance:.4g}")
        proj_claim = ("the projection never acts (fraction of projected steps 0) when R* >= eta T (clip + "
                      "(1 + lambda) c_priv z) on the noise event max_t ||Z_t|| <= z")
        if setup.projection_radius >= setup.sufficient_radius and max_noise <= setup.noise_bound and not broken:
            checks.append(Check(name=f"projection_inactive {label}", kind=INVARIANT, claim=proj_claim, expected=0.0,
                                measured=projected, tolerance=0.0,
                                passed=projected == 0.0 and max_distance <= setup.projection_radius, note=proj_note))
        else:
            checks.append(finding(f"projection_fraction {label}", claim="fraction of steps in which the projection "
                                  "acted (the sufficient-radius condition or the noise event does not hold)",
                                  measured=projected, note=proj_note + (f"; {'; '.join(broken)}" if broken else "")))
        return checks

    @staticmethod
    def _enumeration_checks(out: Mapping[str, Any], series: list[Series], common: Mapping[str, Any]) -> list[Check]:
        rows = out["rows"]
        b = [r["batch_size"] for r in rows]
        params = {"dataset": common["dataset"], "n": out["n"], "method": "enumeration"}
        for quantity, field in (("batch_mean_variance", "enumerated"), ("closed_form", "closed_form"),
                                ("bound", "bound")):
            series.append(Series(name=f"lemma_b2 {quantity}", params={**params, "quantity": quantity}, x=b,
                                 y=[r[field] for r in rows], x_label="batch_size", y_label="E ||x_bar_B - x_bar||^2"))
        diffs = [abs(r["enumerated"] - r["closed_form"]) for r in rows]
        used = max(d / r["tolerance"] for d, r in zip(diffs, rows, strict=True))
        units = max(d / (UNIT_ROUNDOFF * 4.0 * out["max_norm"] ** 2) for d in diffs)
        bias_used = max(r["bias"] / r["bias_tolerance"] for r in rows)
        checks = [
            Check(name="lemma_b2_variance_identity", kind=INVARIANT,
                  claim="Lemma B.2: over all C(n, B) batches, E ||x_bar_B - x_bar||^2 = (n - B)/(B (n - 1)) (1/n) "
                        "sum ||x_i - x_bar||^2, for every B = 1..n",
                  expected=[r["closed_form"] for r in rows], measured=[r["enumerated"] for r in rows],
                  tolerance=None, passed=used <= 1.0,
                  note=f"vectors: the n = {out['n']} per-example loss gradients at W_0; largest error "
                       f"{units:.3g} u (2 G)^2, tolerance 2 (D + C(n, B) + n + 8) u (2 G)^2 (fraction used "
                       f"{used:.3g})"),
            Check(name="lemma_b2_unbiased", kind=INVARIANT, claim="Lemma B.2: E x_bar_B = x_bar (exact enumeration)",
                  expected=0.0, measured=max(r["bias"] for r in rows), tolerance=None, passed=bias_used <= 1.0,
                  note=f"sup-norm of E x_bar_B - x_bar; tolerance 2 (C(n, B) + n + B + 4) u G (fraction used "
                       f"{bias_used:.3g})"),
            Check(name="lemma_b2_bound", kind=INVARIANT,
                  claim="Lemma B.2: E ||x_bar_B - x_bar||^2 <= G^2 / B with G = max ||x_i|| (and hence <= G_delta^2/B)",
                  expected=None, measured=max(r["enumerated"] / r["bound"] for r in rows), tolerance=0.0,
                  passed=all(r["enumerated"] <= r["bound"] and r["bound"] <= r["bound_g_delta"] for r in rows),
                  note=f"measured: the largest ratio to G^2/B; G = {out['max_norm']:.4g}, G_delta = "
                       f"{out['gradient_bound']:.4g}"),
        ]
        n, b_s = out["n"], out["sampler_batch_size"]
        p1, p2 = b_s / n, b_s * (b_s - 1) / (n * (n - 1))
        freq = np.array(out["inclusion"] + out["pair_inclusion"])
        expected = np.array([p1] * n + [p2] * len(out["pair_inclusion"]))
        draws = common["sampler_draws"]
        se = np.sqrt(expected * (1.0 - expected) / draws)
        worst = int(np.argmax(np.abs(freq - expected) / np.maximum(se, 1e-300)))
        z = bonferroni_z(freq.size)
        checks.append(check_monte_carlo(
            "fixed_size_sampler_inclusion", expected=float(expected[worst]), measured=float(freq[worst]),
            standard_error=float(se[worst]), z=z,
            claim=f"the engine's fixed-size sampler (n = {n}, B = {b_s}) includes each index with probability B/n "
                  f"= {p1:.4g} and each pair with B (B - 1)/(n (n - 1)) = {p2:.4g} (the facts of Lemma B.2's proof)",
            note=f"{draws} batches; worst of {freq.size} cells (Bonferroni at family level 1e-6: z = {z:.3f})"))
        checks.append(Check(name="fixed_size_sampler_distinct", kind=INVARIANT,
                            claim="every batch of the fixed-size sampler has B distinct indices", expected=True,
                            measured=out["sampler_distinct"], passed=bool(out["sampler_distinct"])))
        return checks

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.0))
        for s in select_series(result, method="dpsgd"):
            p = s["params"]
            style = "-" if p["quantity"] == "recursion_residual" else "--"
            axes[0].plot(as_floats(s["x"]), np.maximum(as_floats(s["y"]), 1e-3), style,
                         label=f"{_WORDS[p['quantity']]}, λ = {p['noise_correlation']}")
        axes[0].set_yscale("log")
        axes[0].set_xlabel("step t")
        axes[0].set_ylabel("|residual| / (u · scale), floored at 10⁻³")
        axes[0].set_title("shifted iterate and Lemma C.1 on DP-SGD runs", fontsize=9)
        axes[0].legend(fontsize=7)
        for s in select_series(result, method="enumeration"):
            axes[1].plot(as_floats(s["x"]), as_floats(s["y"]), marker="o" if s["params"]["quantity"] != "closed_form"
                         else None, label=_WORDS[s["params"]["quantity"]])
        axes[1].set_yscale("log")
        axes[1].set_xlabel("batch size B")
        axes[1].set_ylabel(r"$E\,\|\bar x_B - \bar x\|^2$ (0 at B = n is off the log axis)")
        axes[1].set_title("Lemma B.2 by enumeration", fontsize=9)
        mark_coincident(axes[1])  # the enumeration equals Lemma B.2's closed form
        axes[1].legend(fontsize=7, loc="lower left")
        fig.tight_layout()
        return [save_figure(fig, out_dir, paper=result["paper"])]


_WORDS = {"recursion_residual": "shifted-iterate recursion", "lemma_c1_residual": "Lemma C.1",
          "batch_mean_variance": "enumerated variance", "closed_form": "Lemma B.2 closed form",
          "bound": "Lemma B.2 bound"}
"""Legend words for the quantities of the kan-identities series."""
