"""dpgd Figures 4–6: hyper-parameter heatmaps of one-pass clipped DP-GD over (η̃(0), c).

Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329 (v2), Section 7. Each panel fixes the aspect ratio γ = d/n and
the schedule exponent α of η̃(t) = η̃(0)(1 − t)^α (eq. 5.1) and maps the final risk of Algorithm 1 over a log grid
of the initial learning rate η̃(0) (x) and the clipping constant c (y), C_clip = c√d:

* ``dpgd-fig4``: synthetic isotropic data (d = 100, Σ = I, ζ = 0.3, ‖θ*‖ = 1, ρ = 0.1), the mean over runs of the
  excess risk R(θ^p) of the released iterate, γ ∈ {0.01, 0.001} × α ∈ {0, ½}; next to it the isotropic ODE (eq. 4.11)
  plus the final jump 2c²η̃(1)²γ²/ρ² (Proposition 4.4) on the same grid, a different engine than the simulation;
* ``dpgd-fig5``: MNIST 1 vs 7 (d = 784, ρ = 0.1, γ ∈ {1, 0.1}), the validation loss P = ½·mean((X_vθ − y_v)²);
* ``dpgd-fig6``: California housing (d = 8, ρ = 0.1, γ ∈ {0.01, 0.001}, 5 runs), the validation loss.

Real data is used when its local cache exists; otherwise the bundled substitutes (digits 1 vs 7, diabetes) run on
aspect ratios their training split can reach, and the config and every series record which data was used.

Every simulated heatmap comes from :func:`privdyn.algorithms.dpgd.simulate_dpgd`, one batch per (panel, block of
runs): all grid points of a panel are rows of the same batch and share their data and noise streams (common random
numbers, keyed by the panel), and run i is the same whatever the blocking. The panel numbering follows the paper:
panels run over γ first, then α (Figure 4: 1 = (0.01, 0), 2 = (0.001, 0), 3 = (0.01, ½), 4 = (0.001, ½)).

Checks follow the paper's discussion of Figures 4-6 (Section 7): (i) the minimum lies at c < 1 and η̃(0) < 2/γ;
(ii) along the valley (rows c < 1) the best product cη̃(0) stays within a factor 3 of the ODE argmin (real data:
of the valley's geometric mean, i.e. the valley is parallel to a line cη̃(0) = const); (iii) the simulated minimum
against the ODE minimum (a finding at d = 100, below the size the finite-d allowance was derived for); (iv) α = ½
beats α = 0 at γ = 0.001; and an independent ODE reference table of minimal risks.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from scipy import optimize

from privdyn import _check
from privdyn.algorithms.dpgd import DPGDHyperparameters, simulate_dpgd
from privdyn.data import real
from privdyn.data.synthetic import num_samples
from privdyn.dynamics.dpgd import isotropic_risk_ode
from privdyn.experiments.base import Experiment, Findings, Unit
from privdyn.experiments.config import ExperimentConfig
from privdyn.experiments.dpgd_common import PAPER, learning_rate_profile, synthetic_design
from privdyn.experiments.naming import json_number, printed_value, unit_key
from privdyn.experiments.plotting import pyplot, save_figure, select_series
from privdyn.experiments.results import (
    FAMILY_LEVEL,
    Check,
    CheckKind,
    Metric,
    Series,
    Table,
    bonferroni_z,
    check_close,
    check_not_applicable,
    check_ordering,
    finding,
)
from privdyn.rng import generator

__all__ = ["Fig4", "Fig5", "Fig6", "Fig4Config", "RealHeatmapConfig", "EXPERIMENTS"]

INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM

VALLEY_FACTOR = 3.0
"""Figure 4, check (ii) (Section 7: the valley is parallel to cη̃(0) = ln(1/γ)): along the valley, cη̃(0) stays
within about a factor 3 of the ODE argmin."""

"""Family-wise level of the Monte-Carlo invariants over a heatmap's grid points (Bonferroni; never below z = 5)."""


def _log_grid(low_exponent: float, high_exponent: float, num: int) -> tuple[float, ...]:
    """``num`` log-spaced values from 10^low to 10^high, rounded to 4 significant digits (readable configs)."""
    return tuple(float(f"{v:.4g}") for v in np.logspace(low_exponent, high_exponent, num))


# --------------------------------------------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class HeatmapConfig(ExperimentConfig):
    """The grid and the runs shared by the heatmap figures.

    ``clips`` (y) and ``initial_learning_rates`` (x) are the grid. The paper does not state its ranges; privdyn's
    defaults are log grids with four points per decade spanning c = 1 and η̃(0) = 2/γ of every panel: c from 10⁻² to
    10 (the ODE's best c lies in 0.02–0.08 for Figure 4) and, for Figure 4, η̃(0) from 1 to 10^3.5 (2/γ = 200 and
    2000). ``num_runs`` runs per grid point are split into units of ``run_block_size`` runs.
    """

    rho: float = 0.1
    aspect_ratios: tuple[float, ...] = (0.01, 0.001)
    schedule_exponents: tuple[float, ...] = (0.0, 0.5)
    clips: tuple[float, ...] = _log_grid(-2.0, 1.0, 13)
    initial_learning_rates: tuple[float, ...] = _log_grid(0.0, 3.5, 15)
    num_runs: int = 10
    run_block_size: int = 2

    def validate(self) -> None:
        _check.positive(rho=self.rho, aspect_ratios=self.aspect_ratios, clips=self.clips,
                        initial_learning_rates=self.initial_learning_rates)
        _check.integer(minimum=2, num_runs=self.num_runs)
        _check.integer(minimum=1, run_block_size=self.run_block_size)
        for key in ("aspect_ratios", "schedule_exponents", "clips", "initial_learning_rates"):
            values = getattr(self, key)
            if len(set(values)) != len(values):
                raise ValueError(f"{key} must not repeat a value; got {key}={list(values)}.")
        for key in ("clips", "initial_learning_rates"):
            values = getattr(self, key)
            if list(values) != sorted(values):
                raise ValueError(f"{key} must be increasing (a heatmap axis); got {key}={list(values)}.")
        bad = [a for a in self.schedule_exponents if a not in (0.0, 0.5)]
        if bad:
            raise ValueError(f"schedule_exponents must be 0 or 0.5 (the paper's heatmap schedules); got "
                             f"schedule_exponents={list(self.schedule_exponents)}.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig4Config(HeatmapConfig):
    """Figure 4: d = 100, Σ = I, ζ = 0.3, ‖θ*‖ = 1 (R(θ_0) = 0.5), ρ = 0.1, 10 runs.

    ``ode_rtol`` is the tolerance of the isotropic ODE solved on the grid (its error is far below the grid's
    resolution and the simulation's standard errors).
    """

    quick_overrides: ClassVar[Mapping[str, Any]] = {
        "clips": _log_grid(-2.0, 1.0, 7), "initial_learning_rates": _log_grid(0.0, 3.5, 11), "num_runs": 4,
        "run_block_size": 4, "ode_rtol": 1e-5}

    d: int = 100
    label_noise: float = 0.3
    ode_rtol: float = 1e-6

    def validate(self) -> None:
        super().validate()
        _check.integer(minimum=1, d=self.d)
        _check.positive(label_noise=self.label_noise)
        _check.in_range(1e-10, 1e-3, ode_rtol=self.ode_rtol)
        for g in self.aspect_ratios:
            num_samples(self.d, aspect_ratio=g)


# The real datasets and their bundled substitutes: (number of samples, number of features).
_DATASET_SHAPES = {"mnist_1_vs_7": (15170, 784), "digits_1_vs_7": (361, 64), "california_housing": (20640, 8),
                   "diabetes": (442, 10)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class RealHeatmapConfig(HeatmapConfig):
    """Figures 5 and 6: the paper's three-way split and non-private standardization (Section 7).

    ``dataset`` is the data used: the real one when its local cache exists, else its bundled substitute (the default
    config is resolved when the experiment is looked up, so ``privdyn show`` prints what a run will use). The split
    is a random permutation (from the run seed) cut into ``normalization_size``, ``validation_size`` and the rest
    (training); ``constant_features`` is the policy for columns constant on the normalization subset (``center``
    keeps d, e.g. 784 for MNIST). n = round(d/γ) must not exceed the training split.
    """

    quick_overrides: ClassVar[Mapping[str, Any]] = {"clips": _log_grid(-2.0, 1.0, 7), "num_runs": 3,
                                                    "run_block_size": 3}

    dataset: Literal["mnist_1_vs_7", "digits_1_vs_7", "california_housing", "diabetes"] = "mnist_1_vs_7"
    normalization_size: int = 2000
    validation_size: int = 2000
    constant_features: Literal["drop", "center"] = "center"

    def validate(self) -> None:
        super().validate()
        _check.integer(minimum=1, normalization_size=self.normalization_size, validation_size=self.validation_size)
        if self.dataset in real.SUBSTITUTES and not real.is_cached(self.dataset):
            raise ValueError(f"dataset={self.dataset!r} is not cached on this machine (privdyn never downloads during "
                             f"a run): use its bundled substitute {real.SUBSTITUTES[self.dataset]!r}, or cache it once "
                             "with privdyn.data.real's loader and download=True.")
        total, dim = _DATASET_SHAPES[self.dataset]
        train = total - self.normalization_size - self.validation_size
        if train < 1:
            raise ValueError(f"normalization_size + validation_size must be < {total} (the size of {self.dataset}); "
                             f"got {self.normalization_size} + {self.validation_size}.")
        for g in self.aspect_ratios:
            n = num_samples(dim, aspect_ratio=g)
            if n > train:
                raise ValueError(f"aspect_ratios must give n = round(d/aspect_ratio) <= {train} (the training split "
                                 f"of {self.dataset}, d = {dim}); got aspect_ratio={g:g} (n = {n}).")


# --------------------------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Panel:
    number: int
    aspect_ratio: float
    schedule_exponent: float

    @property
    def key(self) -> str:
        return unit_key(aspect_ratio=self.aspect_ratio, schedule_exponent=self.schedule_exponent)


def _panels(config: HeatmapConfig) -> list[_Panel]:
    """Panels over γ first, then α (with the paper's lists, the paper's panel numbers)."""
    return [_Panel(1 + i * len(config.aspect_ratios) + j, g, a)
            for i, a in enumerate(config.schedule_exponents) for j, g in enumerate(config.aspect_ratios)]


def _run_blocks(config: HeatmapConfig) -> list[tuple[int, int]]:
    """(first run, number of runs) of each unit."""
    return [(first, min(config.run_block_size, config.num_runs - first))
            for first in range(0, config.num_runs, config.run_block_size)]


def _grid_rows(config: HeatmapConfig, schedule_exponent: float) -> list[DPGDHyperparameters]:
    """Row i·len(x) + j of the batch is grid point (c = clips[i], η̃(0) = initial_learning_rates[j])."""
    return [DPGDHyperparameters(clip=c, rho=config.rho,
                                learning_rate=learning_rate_profile("polynomial", initial_learning_rate=e,
                                                                    schedule_exponent=schedule_exponent))
            for c in config.clips for e in config.initial_learning_rates]


@dataclasses.dataclass(frozen=True)
class _Heatmap:
    """One panel's simulated grid: runs (rows, runs) of the released iterate's risk and of the pre-noise risk."""

    panel: _Panel
    n: int
    d: int
    final: np.ndarray
    before_noise: np.ndarray
    extra: Mapping[str, Any]

    @property
    def mean(self) -> np.ndarray:
        return self.final.mean(axis=1)

    @property
    def standard_error(self) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return self.final.std(axis=1, ddof=1) / math.sqrt(self.final.shape[1])


def _collect(config: HeatmapConfig, outputs: Mapping[str, Mapping[str, Any]], prefix: str) -> list[_Heatmap]:
    shape = (len(config.clips), len(config.initial_learning_rates))
    maps = []
    for panel in _panels(config):
        blocks = [outputs[_simulation_key(prefix, panel, first, size)] for first, size in _run_blocks(config)]
        final = np.concatenate([np.asarray(b["final_private_risk"], dtype=float) for b in blocks], axis=1)
        before = np.concatenate([np.asarray(b["risk_before_final_noise"], dtype=float) for b in blocks], axis=1)
        if final.shape[0] != shape[0] * shape[1]:
            raise ValueError(f"unit outputs of panel {panel.number} have {final.shape[0]} grid rows; the config's "
                             f"grid has {shape[0] * shape[1]}.")
        maps.append(_Heatmap(panel, int(blocks[0]["n"]), int(blocks[0]["d"]), final, before, blocks[0]))
    return maps


def _simulation_key(prefix: str, panel: _Panel, first: int, size: int) -> str:
    return f"{prefix}/{panel.key}/runs={first}-{first + size - 1}"


def _argmin(values: np.ndarray) -> tuple[int, int]:
    """The grid argmin of a 2-D array, ignoring non-finite entries."""
    finite = np.where(np.isfinite(values), values, np.inf)
    i, j = np.unravel_index(int(np.argmin(finite)), values.shape)
    return int(i), int(j)


def _valley(config: HeatmapConfig, values: np.ndarray, aspect_ratio: float) -> tuple[np.ndarray, int]:
    """The products c·η̃(0) at each row's argmin over the rows c < 1 whose argmin is interior to the η̃ grid.

    A row whose best η̃(0) sits on the grid's edge has its valley point outside the grid; it is left out (the count
    is returned). Rows are also left out when their argmin has η̃(0) ≥ 2/γ (past the cap, not the valley).
    """
    clips = np.asarray(config.clips)
    lrs = np.asarray(config.initial_learning_rates)
    products = []
    left_out = 0
    for i in np.flatnonzero(clips < 1.0):
        row = np.where(np.isfinite(values[i]), values[i], np.inf)
        j = int(np.argmin(row))
        if j == 0 or j == len(lrs) - 1 or lrs[j] >= 2.0 / aspect_ratio or not np.isfinite(row[j]):
            left_out += 1
            continue
        products.append(clips[i] * lrs[j])
    return np.asarray(products), left_out


def _minimum_region_check(config: HeatmapConfig, heatmap: _Heatmap, quantity: str) -> Check:
    """Check (i): the heatmap minimum lies at c < 1 and η̃(0) < 2/γ (the paper: risk deteriorates beyond both)."""
    g = heatmap.panel.aspect_ratio
    name = f"minimum_below_clip_1_and_cap panel={heatmap.panel.number}"
    claim = (f"the minimum of the {quantity} heatmap lies at c < 1 and η̃(0) < 2/γ = {2 / g:g} (risk deteriorates "
             f"for c > 1 and η̃(0) > 2/γ; Section 7 on Figure 4, check (i))")
    if not (min(config.clips) < 1.0 < max(config.clips)
            and min(config.initial_learning_rates) < 2.0 / g < max(config.initial_learning_rates)):
        return check_not_applicable(name, kind=CLAIM, claim=claim,
                                    note="not applicable: the grid does not span both c = 1 and η̃(0) = 2/γ")
    mean = heatmap.mean
    i, j = _argmin(mean.reshape(len(config.clips), -1))
    c, e = config.clips[i], config.initial_learning_rates[j]
    passed = c < 1.0 and e < 2.0 / g
    measured = {"clip": c, "initial_learning_rate": e, "value": float(mean.reshape(len(config.clips), -1)[i, j])}
    note = "" if passed else (f"claim (minimum at c < 1 and η̃(0) < 2/γ) not reproduced: the minimum is at c = {c:g}, "
                              f"η̃(0) = {e:g}")
    return Check(name=name, kind=CLAIM, claim=claim, expected={"clip": "< 1", "initial_learning_rate": f"< {2 / g:g}"},
                 measured=measured, passed=passed, note=note)


def _summary_table(heatmaps: Sequence[_Heatmap], config: HeatmapConfig) -> Table:
    rows = []
    for h in heatmaps:
        mean = h.mean.reshape(len(config.clips), -1)
        se = h.standard_error.reshape(len(config.clips), -1)
        i, j = _argmin(mean)
        rows.append([h.panel.number, json_number(h.panel.aspect_ratio), json_number(h.panel.schedule_exponent),
                     h.n, h.d, float(mean[i, j]), float(se[i, j]), config.clips[i],
                     config.initial_learning_rates[j], config.clips[i] * config.initial_learning_rates[j]])
    return Table(name="simulated_minimum", columns=["panel", "aspect_ratio", "schedule_exponent", "n", "d",
                                                    "minimum", "standard_error", "clip", "initial_learning_rate",
                                                    "clip_times_initial_learning_rate"], rows=rows)


def _final_noise_check(config: HeatmapConfig, heatmap: _Heatmap, *, trace: float, trace_sq: float,
                       gradient_bound: float | None) -> Check:
    """Invariant: the last step's noise adds ½s²·tr(A) in expectation, s = 2c√d·η̃(1)/(nρ) (Proposition 4.4).

    With ξ = s·b, b ~ N(0, I) independent of θ_n⁻ (the iterate before the noise) and a quadratic risk
    ½(θ − θ*)ᵀA(θ − θ*) + const: risk(θ⁻ + ξ) − risk(θ⁻) = ½s²bᵀAb + s·gᵀb with g = A(θ⁻ − θ*), mean ½s² tr A and
    conditional variance ½s⁴ tr(A²) + s²‖g‖², exactly at finite d. For Σ = I (A = I) ‖g‖² = 2R(θ⁻); for a
    validation loss ‖g‖² ≤ λ_max(A)·2P(θ⁻) (a conservative standard error). Exact zero for α > 0 (η̃(1) = 0).
    """
    p = heatmap.panel
    clips = np.repeat(np.asarray(config.clips), len(config.initial_learning_rates))
    lrs = np.tile(np.asarray(config.initial_learning_rates), len(config.clips))
    name = f"final_noise_jump panel={p.number}"
    jump = heatmap.final - heatmap.before_noise
    ok = np.all(np.isfinite(heatmap.final), axis=1) & np.all(np.isfinite(heatmap.before_noise), axis=1)
    if p.schedule_exponent != 0:
        claim = "with η̃(1) = 0 the released iterate equals θ_n before noise: no final jump (σ_n = 0)"
        worst = float(np.max(np.abs(jump[ok]))) if np.any(ok) else math.nan
        return Check(name=name, kind=INVARIANT, claim=claim, expected=0.0, measured=worst, tolerance=0.0,
                     passed=bool(worst == 0.0))
    end = lrs  # α = 0: η̃(1) = η̃(0)
    s = 2.0 * clips * math.sqrt(heatmap.d) * end / (heatmap.n * config.rho)
    expected = 0.5 * s**2 * trace
    before = np.clip(heatmap.before_noise, 0.0, None)
    num_runs = jump.shape[1]
    grad_sq = 2.0 * before if gradient_bound is None else gradient_bound * 2.0 * before
    variance = (0.5 * s[:, None] ** 4 * trace_sq + s[:, None] ** 2 * grad_sq).sum(axis=1) / num_runs**2
    se = np.sqrt(variance)
    z = (jump.mean(axis=1) - expected) / se
    count = int(np.sum(ok))
    z_limit = bonferroni_z(max(count, 1))
    worst = int(np.argmax(np.where(ok, np.abs(z), -np.inf)))
    claim = ("the mean final jump R(θ_n) − R(θ_n before noise) equals ½s²·tr(A), s = 2c√d·η̃(1)/(nρ) (2c²η̃(1)²γ²/ρ² "
             f"for Σ = I), at every grid point within z = {z_limit:.2f} standard errors (Bonferroni over {count} "
             f"points at family-wise level {FAMILY_LEVEL:g})")
    note = "standard error from the exact conditional variance" + (
        "" if gradient_bound is None else " with ‖g‖² bounded by λ_max(A)·2P (conservative)")
    if count < jump.shape[0]:
        note += f"; {jump.shape[0] - count} grid points with non-finite runs left out"
    return Check(name=name, kind=INVARIANT, claim=claim, expected=float(expected[worst]),
                 measured=float(jump[worst].mean()), tolerance=float(z_limit * se[worst]),
                 standard_error=float(se[worst]), passed=bool(np.all(np.abs(z[ok]) <= z_limit)) and count > 0,
                 note=note + f"; worst point c = {clips[worst]:g}, η̃(0) = {lrs[worst]:g}, |z| = {abs(z[worst]):.2f}")


def _heatmap_series(config: HeatmapConfig, heatmap: _Heatmap, params: Mapping[str, Any], quantity: str) -> Series:
    p = heatmap.panel
    shape = (len(config.clips), len(config.initial_learning_rates))
    return Series(
        name=f"simulation panel {p.number} (aspect_ratio={json_number(p.aspect_ratio)}, "
             f"schedule_exponent={json_number(p.schedule_exponent)})",
        params={"method": "simulation", "panel": p.number, "schedule": "polynomial",
                "schedule_exponent": json_number(p.schedule_exponent), "aspect_ratio": json_number(p.aspect_ratio),
                "rho": json_number(config.rho), "d": heatmap.d, "n": heatmap.n, "num_runs": heatmap.final.shape[1],
                "quantity": quantity, **params},
        x=list(config.initial_learning_rates), y=list(config.clips), x_label="initial_learning_rate",
        y_label="clip", z=heatmap.mean.reshape(shape), standard_error=heatmap.standard_error.reshape(shape))


def _plot_heatmaps(result: Mapping[str, Any], out_dir: Path, *, method: str, cap: float, filename: str,
                   title: str) -> str:
    """A grid of panels (rows α, columns γ) with the paper's red dashed lines, colour capped at ``cap``."""
    plt = pyplot()
    cfg = result["config"]
    alphas, gammas = cfg["schedule_exponents"], cfg["aspect_ratios"]
    fig, axes = plt.subplots(len(alphas), len(gammas), figsize=(4.8 * len(gammas) + 1.0, 4.0 * len(alphas) + 0.6),
                             squeeze=False, layout="constrained")
    mesh = None
    for a_index, a in enumerate(alphas):
        for g_index, g in enumerate(gammas):
            ax = axes[a_index][g_index]
            (s,) = select_series(result, method=method, aspect_ratio=json_number(g), schedule_exponent=json_number(a))
            x, y = np.asarray(s["x"], dtype=float), np.asarray(s["y"], dtype=float)
            z = np.array([[math.nan if v is None else float(v) for v in row] for row in s["z"]])
            z = np.nan_to_num(z, nan=cap, posinf=cap)
            mesh = ax.pcolormesh(_edges(x), _edges(y), np.minimum(z, cap), vmin=0.0, vmax=cap, cmap="viridis",
                                 shading="flat")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.axhline(1.0, color="red", linestyle="--", lw=1.0)
            ax.axvline(2.0 / g, color="red", linestyle="--", lw=1.0)
            if g < 1.0:  # cη̃(0) = ln(1/γ) > 0
                xs = np.geomspace(_edges(x)[0], _edges(x)[-1], 50)
                ax.plot(xs, math.log(1.0 / g) / xs, color="red", linestyle="--", lw=1.0)
            ax.set_xlim(_edges(x)[0], _edges(x)[-1])
            ax.set_ylim(_edges(y)[0], _edges(y)[-1])
            ax.set_xlabel("initial learning rate η̃(0)")
            ax.set_ylabel("clip c")
            ax.set_title(f"panel {s['params']['panel']}: γ = {g:g}, α = {a:g}, n = {s['params']['n']}", fontsize=9)
    if mesh is not None:
        fig.colorbar(mesh, ax=axes, shrink=0.8, label=f"capped at {cap:g}")
    fig.suptitle(title, fontsize=10)
    return save_figure(fig, out_dir, filename)


def _edges(centers: np.ndarray) -> np.ndarray:
    """Cell edges of a log-spaced axis (geometric midpoints, extended by half a step at each end)."""
    if centers.size == 1:
        return np.array([centers[0] / 1.5, centers[0] * 1.5])
    logs = np.log(centers)
    mids = 0.5 * (logs[1:] + logs[:-1])
    return np.exp(np.concatenate([[2 * logs[0] - mids[0]], mids, [2 * logs[-1] - mids[-1]]]))


# --------------------------------------------------------------------------------------------------------------
# Figure 4: synthetic data
# --------------------------------------------------------------------------------------------------------------

# Figure 4 ODE reference, computed independently (isotropic scalar ODE; ρ = 0.1, ζ = 0.3, R(0) = 0.5): minimal final
# private risk per (γ, α), as printed.
_FIG4_ODE_MIN = {(0.01, 0.0): "0.048", (0.01, 0.5): "0.038", (0.001, 0.0): "0.0013", (0.001, 0.5): "0.0006"}
_FIG4_PAPER = Fig4Config()
_INITIAL_RISK = 0.5  # ‖θ*‖ = 1


def _ode_final_risk(config: Fig4Config, aspect_ratio: float, schedule_exponent: float, clip: float,
                    initial_learning_rate: float, *, method: str = "exponential", rtol: float | None = None) -> float:
    """R(1) + 2c²η̃(1)²γ²/ρ² from the isotropic ODE (eq. 4.11, Proposition 4.4)."""
    profile = learning_rate_profile("polynomial", initial_learning_rate=initial_learning_rate,
                                    schedule_exponent=schedule_exponent)
    trajectory = isotropic_risk_ode(initial_risk=_INITIAL_RISK, aspect_ratio=aspect_ratio, learning_rate=profile,
                                    clip=clip, rho=config.rho, label_noise=config.label_noise, times=(1.0,),
                                    method=method, rtol=config.ode_rtol if rtol is None else rtol)
    return trajectory.final_private_risk


class Fig4(Experiment):
    name = "dpgd-fig4"
    paper_key = "dpgd"
    title = "Hyper-parameter heatmaps of DP-GD on synthetic isotropic data: final private risk over (η̃(0), c)"
    paper = f"{PAPER}, Figure 4"
    description = "Simulated final private risk over a (η̃(0), c) grid, against the isotropic ODE on the same grid."
    config_class = Fig4Config

    def units(self, config: Fig4Config) -> list[Unit]:
        units = []
        for panel in _panels(config):
            units.append(Unit(f"ode/{panel.key}", {"method": "ode", "aspect_ratio": panel.aspect_ratio,
                                                   "schedule_exponent": panel.schedule_exponent}))
            for first, size in _run_blocks(config):
                units.append(Unit(_simulation_key("simulation", panel, first, size),
                                  {"method": "simulation", "aspect_ratio": panel.aspect_ratio,
                                   "schedule_exponent": panel.schedule_exponent, "first_run": first,
                                   "num_runs": size}))
        return units

    def unit_config(self, config: Fig4Config, unit: Unit) -> Mapping[str, Any]:
        keep = ("rho", "clips", "initial_learning_rates", "d", "label_noise")
        keep += ("ode_rtol",) if unit.params["method"] == "ode" else ()
        return {**{k: v for k, v in config.to_dict().items() if k in keep}, **unit.params}

    def compute_unit(self, config: Fig4Config, unit: Unit, seed: int) -> dict[str, Any]:
        g, a = unit.params["aspect_ratio"], unit.params["schedule_exponent"]
        if unit.params["method"] == "ode":
            return self._ode_unit(config, g, a)
        design = synthetic_design("identity", config.d, label_noise=config.label_noise)
        panel_key = unit_key(aspect_ratio=g, schedule_exponent=a)
        sim = simulate_dpgd(data=design, rows=_grid_rows(config, a), num_runs=unit.params["num_runs"], seed=seed,
                            unit_key=f"simulation/{panel_key}", aspect_ratio=g, first_run=unit.params["first_run"])
        return {"n": sim.n, "d": sim.dim, "final_private_risk": sim.final_private_risk.tolist(),
                "risk_before_final_noise": sim.risk_before_final_noise.tolist()}

    @staticmethod
    def _ode_unit(config: Fig4Config, g: float, a: float) -> dict[str, Any]:
        grid = np.array([[_ode_final_risk(config, g, a, c, e) for e in config.initial_learning_rates]
                         for c in config.clips])
        i, j = _argmin(grid)

        def objective(logs: np.ndarray) -> float:
            return _ode_final_risk(config, g, a, math.exp(logs[0]), math.exp(logs[1]))

        # the continuous minimum: Nelder–Mead in (log c, log η̃(0)) from the grid argmin
        start = np.log([config.clips[i], config.initial_learning_rates[j]])
        refined = optimize.minimize(objective, start, method="Nelder-Mead",
                                    options={"xatol": 0.02, "fatol": 1e-5 * float(grid[i, j]), "maxfev": 400})
        best = min(float(refined.fun), float(grid[i, j]))
        best_point = np.exp(refined.x) if refined.fun <= grid[i, j] else np.exp(start)
        lsoda = _ode_final_risk(config, g, a, config.clips[i], config.initial_learning_rates[j], method="lsoda",
                                rtol=1e-9)
        return {"final_private_risk": grid.tolist(), "refined_minimum": best,
                "refined_clip": float(best_point[0]), "refined_initial_learning_rate": float(best_point[1]),
                "refined_evaluations": int(refined.nfev), "lsoda_at_grid_argmin": lsoda}

    def assemble(self, config: Fig4Config, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        heatmaps = _collect(config, outputs, "simulation")
        shape = (len(config.clips), len(config.initial_learning_rates))
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        minima: dict[tuple[float, float], float] = {}
        for h in heatmaps:
            p = h.panel
            ode = outputs[f"ode/{p.key}"]
            ode_grid = np.asarray(ode["final_private_risk"], dtype=float)
            common = {"label_noise": json_number(config.label_noise), "dataset": "synthetic"}
            series.append(_heatmap_series(config, h, common, "final_private_risk"))
            series.append(Series(
                name=f"ode panel {p.number}",
                params={"method": "ode", "panel": p.number, "schedule": "polynomial",
                        "schedule_exponent": json_number(p.schedule_exponent),
                        "aspect_ratio": json_number(p.aspect_ratio), "rho": json_number(config.rho), "d": h.d,
                        "n": h.n, "quantity": "final_private_risk", **common},
                x=list(config.initial_learning_rates), y=list(config.clips), x_label="initial_learning_rate",
                y_label="clip", z=ode_grid))
            mean, se = h.mean.reshape(shape), h.standard_error.reshape(shape)
            i, j = _argmin(mean)
            oi, oj = _argmin(ode_grid)
            minima[(p.aspect_ratio, p.schedule_exponent)] = float(mean[i, j])
            v_ode = config.clips[oi] * config.initial_learning_rates[oj]
            mparams = {"panel": p.number, "aspect_ratio": json_number(p.aspect_ratio),
                       "schedule_exponent": json_number(p.schedule_exponent)}
            metrics += [
                Metric(name="simulated_minimum", params={**mparams, "method": "simulation"}, value=float(mean[i, j])),
                Metric(name="simulated_minimum_standard_error", params={**mparams, "method": "simulation"},
                       value=float(se[i, j])),
                Metric(name="grid_minimum", params={**mparams, "method": "ode"}, value=float(ode_grid[oi, oj])),
                Metric(name="grid_argmin_clip_times_initial_learning_rate", params={**mparams, "method": "ode"},
                       value=v_ode),
                Metric(name="refined_minimum", params={**mparams, "method": "ode"}, value=ode["refined_minimum"]),
                Metric(name="refined_argmin", params={**mparams, "method": "ode"},
                       value={"clip": ode["refined_clip"],
                              "initial_learning_rate": ode["refined_initial_learning_rate"],
                              "clip_times_initial_learning_rate":
                                  ode["refined_clip"] * ode["refined_initial_learning_rate"]}),
            ]
            checks.append(_minimum_region_check(config, h, "simulated final private risk"))
            v_refined = ode["refined_clip"] * ode["refined_initial_learning_rate"]
            checks.append(self._valley_check(config, h, mean, v_refined))
            checks.append(self._minimum_gap_finding(h, mean, se, ode_grid))
            checks.append(self._grid_agreement_finding(h, mean, se, ode_grid))
            checks.append(check_close(
                f"ode_matches_lsoda panel={p.number}", kind=INVARIANT,
                claim="the isotropic ODE (exponential integrator) at the grid argmin equals scipy's LSODA solve "
                      "(rtol 1e-9)",
                expected=ode["lsoda_at_grid_argmin"], measured=float(ode_grid[oi, oj]), rtol=10 * config.ode_rtol))
            checks.append(_final_noise_check(config, h, trace=float(h.d), trace_sq=float(h.d), gradient_bound=None))
            checks.append(self._spec_table_check(config, p, ode))
        checks.append(self._alpha_half_check(config, minima))
        tables = [_summary_table(heatmaps, config)]
        return Findings(series=series, metrics=metrics, checks=checks, tables=tables)

    @staticmethod
    def _valley_check(config: Fig4Config, h: _Heatmap, mean: np.ndarray, v_ode: float) -> Check:
        p = h.panel
        name = f"valley_follows_ode_argmin panel={p.number}"
        claim = (f"along the low-risk valley (rows c < 1) the best cη̃(0) stays within a factor {VALLEY_FACTOR:g} of "
                 "the ODE argmin cη̃(0) (continuous minimum of the isotropic ODE; the valley runs parallel to "
                 "cη̃(0) = const; Section 7 on Figure 4, check (ii))")
        products, left_out = _valley(config, mean, p.aspect_ratio)
        if products.size == 0:
            return check_not_applicable(name, kind=CLAIM, claim=claim, expected=v_ode,
                                        note="not applicable: no row with c < 1 has its minimum inside the grid")
        factor = float(np.exp(np.max(np.abs(np.log(products / v_ode)))))
        passed = factor <= VALLEY_FACTOR
        note = (f"{products.size} valley rows ({left_out} rows c < 1 with the row minimum on the grid edge or past "
                f"2/γ left out); measured is the largest factor between a row's best cη̃(0) and the ODE argmin; "
                f"row products: {[round(float(v), 4) for v in products]}")
        if not passed:
            note = f"claim (valley within a factor {VALLEY_FACTOR:g} of the ODE argmin) not reproduced: " + note
        return Check(name=name, kind=CLAIM, claim=claim, expected=v_ode, measured=factor, tolerance=VALLEY_FACTOR,
                     passed=passed, note=note)

    @staticmethod
    def _minimum_gap_finding(h: _Heatmap, mean: np.ndarray, se: np.ndarray, ode_grid: np.ndarray) -> Check:
        i, j = _argmin(mean)
        ode_min = float(ode_grid[_argmin(ode_grid)])
        gap = (float(mean[i, j]) - ode_min) / ode_min
        return finding(
            f"simulated_minimum_vs_ode_minimum panel={h.panel.number}",
            claim="relative gap (simulated heatmap minimum − ODE minimum on the same grid)/ODE minimum (Figure 4, "
                  "check (iii): 'within finite-d error, around 10% at d = 100')",
            measured={"relative_gap": gap, "standard_error": float(se[i, j]) / ode_min,
                      "simulated_minimum": float(mean[i, j]), "ode_minimum": ode_min},
            note=f"d = {h.d} is below the size the finite-d allowance was derived for, so this is a finding; the "
                 "minimum of a noisy heatmap is biased low by the selection")

    @staticmethod
    def _grid_agreement_finding(h: _Heatmap, mean: np.ndarray, se: np.ndarray, ode_grid: np.ndarray) -> Check:
        ok = np.isfinite(mean) & (se > 0)
        z = np.abs(mean - ode_grid)[ok] / se[ok]
        relative = np.abs(mean - ode_grid)[ok] / ode_grid[ok]
        return finding(
            f"simulation_vs_ode_on_grid panel={h.panel.number}",
            claim="agreement of the simulated means with the ODE at every grid point",
            measured={"fraction_within_5_standard_errors": float(np.mean(z <= 5.0)),
                      "median_relative_difference": float(np.median(relative)),
                      "max_relative_difference": float(np.max(relative)),
                      "median_abs_z": float(np.median(z))},
            note=f"d = {h.d}: the O(log²n/√n) finite-size bias of Theorem 1 is not negligible here; a finding")

    @staticmethod
    def _spec_table_check(config: Fig4Config, p: _Panel, ode: Mapping[str, Any]) -> Check:
        key = (p.aspect_ratio, p.schedule_exponent)
        name = f"ode_minimum_matches_spec_table panel={p.number}"
        if key not in _FIG4_ODE_MIN:
            return check_not_applicable(name, kind=CLAIM, claim="the independent ODE reference table has this panel",
                                        note=f"not applicable: no reference value for γ = {p.aspect_ratio:g}, "
                                             f"α = {p.schedule_exponent:g}")
        expected, atol = printed_value(_FIG4_ODE_MIN[key])
        claim = (f"the minimal ODE final private risk at γ = {p.aspect_ratio:g}, α = {p.schedule_exponent:g} is "
                 f"{_FIG4_ODE_MIN[key]} (independent Figure 4 ODE reference)")
        if (config.rho, config.label_noise) != (_FIG4_PAPER.rho, _FIG4_PAPER.label_noise):
            return check_not_applicable(name, kind=CLAIM, claim=claim, expected=expected,
                                        note="not applicable: the config changes ρ or ζ (reference: ρ = 0.1, ζ = 0.3)")
        grid_min = float(np.min(np.asarray(ode["final_private_risk"], dtype=float)))
        check = check_close(name, kind=CLAIM, claim=claim, expected=expected, measured=ode["refined_minimum"],
                            atol=atol,
                            note=f"measured: the continuous minimum (Nelder–Mead in log c, log η̃(0) from the grid "
                                 f"argmin; {ode['refined_evaluations']} ODE solves); tolerance: half a unit in the "
                                 f"last printed digit; the grid's own minimum is {grid_min:.4g}")
        if not check.passed:
            check = dataclasses.replace(check, note=f"reference {_FIG4_ODE_MIN[key]} not reproduced: measured "
                                                    f"{ode['refined_minimum']:.4g}. " + check.note)
        return check

    @staticmethod
    def _alpha_half_check(config: Fig4Config, minima: Mapping[tuple[float, float], float]) -> Check:
        name = "alpha_half_beats_alpha_zero aspect_ratio=0.001"
        claim = ("at γ = 0.001 the minimum over the grid with α = ½ is below the minimum with α = 0 (Figure 4, "
                 "check (iv); the ODE predicts about a factor 2)")
        if (0.001, 0.0) not in minima or (0.001, 0.5) not in minima:
            return check_not_applicable(name, kind=CLAIM, claim=claim,
                                        note="not applicable: the config lacks γ = 0.001 with both α = 0 and α = ½")
        check = check_ordering(name, kind=CLAIM, claim=claim, lower=minima[(0.001, 0.5)], upper=minima[(0.001, 0.0)])
        note = (f"simulated minima: α = ½ {minima[(0.001, 0.5)]:.4g}, α = 0 {minima[(0.001, 0.0)]:.4g} "
                f"(ratio {minima[(0.001, 0.0)] / minima[(0.001, 0.5)]:.3g})")
        if not check.passed:
            note = "claim (α = ½ beats α = 0 at γ = 0.001) not reproduced: " + note
        return dataclasses.replace(check, note=note)

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        cfg = result["config"]
        files = [_plot_heatmaps(result, out_dir, method="simulation", cap=1.0, filename="figure.png",
                                title=f"DP-GD final private risk (simulation, mean of {cfg['num_runs']} runs), d = "
                                      f"{cfg['d']}, ρ = {cfg['rho']:g}; red: c = 1, η̃(0) = 2/γ, cη̃(0) = ln(1/γ)")]
        files.append(_plot_heatmaps(result, out_dir, method="ode", cap=1.0, filename="figure_ode.png",
                                    title="isotropic ODE (eq. 4.11) + final jump on the same grid"))
        return files


# --------------------------------------------------------------------------------------------------------------
# Figures 5 and 6: real data
# --------------------------------------------------------------------------------------------------------------


def _load_split(config: RealHeatmapConfig, seed: int) -> real.RegressionSplit:
    """The dataset named by the config, split and standardized with a permutation drawn from the run seed."""
    name, features, labels = real.load_dataset(config.dataset, substitute=False)
    return real.split_and_standardize(features, labels, train_size=None,
                                      normalization_size=config.normalization_size,
                                      validation_size=config.validation_size,
                                      rng=generator(seed, f"split/dataset={name}", purpose="data"),
                                      constant_features=config.constant_features, dataset=name)


OUTLIER_FACTOR = 10.0
"""A run counts as diverged when its final validation loss is non-finite or above 10× the median of the runs at the
same grid point (the paper's "disproportionately large losses" of a few seeds)."""


class _RealHeatmaps(Experiment):
    """Figures 5 and 6: the validation loss of DP-GD on real data (or its bundled substitute)."""

    paper_key = "dpgd"
    config_class = RealHeatmapConfig
    real_dataset: ClassVar[str]
    paper_settings: ClassVar[Mapping[str, Any]]
    """The config on the real data (built only when it is cached: the config rejects uncached real data)."""
    substitute_settings: ClassVar[Mapping[str, Any]]
    cap: ClassVar[float] = 0.6

    def default_config(self) -> RealHeatmapConfig:
        """The paper's setting when the real data is cached, else the substitute's setting."""
        cached = real.is_cached(self.real_dataset)
        return RealHeatmapConfig(**(self.paper_settings if cached else self.substitute_settings))

    def units(self, config: RealHeatmapConfig) -> list[Unit]:
        return [Unit(_simulation_key(f"simulation/dataset={config.dataset}", panel, first, size),
                     {"aspect_ratio": panel.aspect_ratio, "schedule_exponent": panel.schedule_exponent,
                      "first_run": first, "num_runs": size})
                for panel in _panels(config) for first, size in _run_blocks(config)]

    def unit_config(self, config: RealHeatmapConfig, unit: Unit) -> Mapping[str, Any]:
        keep = ("rho", "clips", "initial_learning_rates", "dataset", "normalization_size", "validation_size",
                "constant_features")
        return {**{k: v for k, v in config.to_dict().items() if k in keep}, **unit.params}

    def compute_unit(self, config: RealHeatmapConfig, unit: Unit, seed: int) -> dict[str, Any]:
        split = _load_split(config, seed)
        data = split.to_dataset(order="permute")
        g, a = unit.params["aspect_ratio"], unit.params["schedule_exponent"]
        n = num_samples(data.dim, aspect_ratio=g)
        panel_key = unit_key(aspect_ratio=g, schedule_exponent=a)
        with np.errstate(over="ignore", invalid="ignore"):
            sim = simulate_dpgd(data=data, rows=_grid_rows(config, a), num_runs=unit.params["num_runs"], seed=seed,
                                unit_key=f"simulation/dataset={config.dataset}/{panel_key}", n=n,
                                first_run=unit.params["first_run"])
        gram = split.validation_features.T @ split.validation_features / split.validation_size
        eigenvalues = np.linalg.eigvalsh(gram)
        return {"n": sim.n, "d": sim.dim, "final_private_risk": sim.final_private_risk.tolist(),
                "risk_before_final_noise": sim.risk_before_final_noise.tolist(), "initial_loss": sim.initial_risk,
                "train_size": split.train_size, "validation_size": split.validation_size,
                "gram_trace": float(np.sum(eigenvalues)), "gram_trace_of_square": float(np.sum(eigenvalues**2)),
                "gram_largest_eigenvalue": float(eigenvalues[-1])}

    def assemble(self, config: RealHeatmapConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        heatmaps = _collect(config, outputs, f"simulation/dataset={config.dataset}")
        shape = (len(config.clips), len(config.initial_learning_rates))
        substitute = config.dataset != self.real_dataset
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        for h in heatmaps:
            p = h.panel
            series.append(_heatmap_series(config, h, {"dataset": config.dataset}, "validation_loss"))
            mean = h.mean.reshape(shape)
            i, j = _argmin(mean)
            mparams = {"panel": p.number, "aspect_ratio": json_number(p.aspect_ratio),
                       "schedule_exponent": json_number(p.schedule_exponent), "dataset": config.dataset}
            metrics.append(Metric(name="simulated_minimum", params=mparams, value=float(mean[i, j])))
            checks.append(_minimum_region_check(config, h, "validation loss"))
            checks.append(self._valley_parallel_check(config, h, mean))
            checks.append(_final_noise_check(config, h, trace=h.extra["gram_trace"],
                                             trace_sq=h.extra["gram_trace_of_square"],
                                             gradient_bound=h.extra["gram_largest_eigenvalue"]))
            checks.append(self._divergence_finding(config, h))
        for g in self.paper_settings["aspect_ratios"]:
            if substitute:
                n = num_samples(_DATASET_SHAPES[self.real_dataset][1], aspect_ratio=g)
                checks.append(check_not_applicable(
                    f"paper_panels aspect_ratio={json_number(g)}", kind=CLAIM,
                    claim=f"checks (i) and (ii) on the paper's panel γ = {g:g} (n = {n}) of {self.real_dataset}",
                    note=f"not applicable: the real data is not cached; the substitute {config.dataset} has "
                         f"{heatmaps[0].extra['train_size']} training samples and runs on aspect_ratios "
                         f"{list(config.aspect_ratios)} instead"))
        for g in config.aspect_ratios:
            by_alpha = {h.panel.schedule_exponent: float(np.nanmin(h.mean)) for h in heatmaps
                        if h.panel.aspect_ratio == g}
            if {0.0, 0.5} <= set(by_alpha):
                checks.append(finding(f"alpha_half_vs_alpha_zero aspect_ratio={json_number(g)}",
                                      claim="the ratio (best α = 0 validation loss)/(best α = ½ validation loss)",
                                      measured=by_alpha[0.0] / by_alpha[0.5],
                                      note=f"minima: α = 0 {by_alpha[0.0]:.4g}, α = ½ {by_alpha[0.5]:.4g}"))
        h0 = heatmaps[0]
        tables = [_summary_table(heatmaps, config),
                  Table(name="data", columns=["quantity", "value"],
                        rows=[["dataset", config.dataset], ["substitute_for", self.real_dataset if substitute else ""],
                              ["d", h0.d], ["train_size", h0.extra["train_size"]],
                              ["normalization_size", config.normalization_size],
                              ["validation_size", h0.extra["validation_size"]],
                              ["constant_features", config.constant_features],
                              ["validation_loss_at_zero", h0.extra["initial_loss"]]])]
        return Findings(series=series, metrics=metrics, checks=checks, tables=tables)

    @staticmethod
    def _valley_parallel_check(config: RealHeatmapConfig, h: _Heatmap, mean: np.ndarray) -> Check:
        p = h.panel
        name = f"valley_parallel panel={p.number}"
        claim = (f"along the low-loss valley (rows c < 1) the best cη̃(0) stays within a factor {VALLEY_FACTOR:g} of "
                 "the valley's geometric mean (the valley runs parallel to a line cη̃(0) = const; "
                 "Section 7, check (ii) on this grid)")
        products, left_out = _valley(config, mean, p.aspect_ratio)
        if products.size < 2:
            return check_not_applicable(name, kind=CLAIM, claim=claim,
                                        note="not applicable: fewer than two rows c < 1 have their minimum inside the "
                                             "grid")
        centre = float(np.exp(np.mean(np.log(products))))
        factor = float(np.exp(np.max(np.abs(np.log(products / centre)))))
        passed = factor <= VALLEY_FACTOR
        note = (f"{products.size} valley rows ({left_out} left out: row minimum on the grid edge or past 2/γ); "
                f"row products {[round(float(v), 4) for v in products]}; ln(1/γ) = {math.log(1 / p.aspect_ratio):.3g}")
        if not passed:
            note = f"claim (valley parallel within a factor {VALLEY_FACTOR:g}) not reproduced: " + note
        return Check(name=name, kind=CLAIM, claim=claim, expected=centre, measured=factor, tolerance=VALLEY_FACTOR,
                     passed=passed, note=note)

    @staticmethod
    def _divergence_finding(config: RealHeatmapConfig, h: _Heatmap) -> Check:
        with np.errstate(invalid="ignore"):
            median = np.median(np.where(np.isfinite(h.final), h.final, np.inf), axis=1, keepdims=True)
            diverged = ~np.isfinite(h.final) | (h.final > OUTLIER_FACTOR * median)
        points = np.flatnonzero(np.any(diverged, axis=1))
        width = len(config.initial_learning_rates)
        where = [[config.clips[k // width], config.initial_learning_rates[k % width]] for k in points[:20]]
        return finding(
            f"diverged_runs panel={h.panel.number}",
            claim=f"runs whose final validation loss is non-finite or above {OUTLIER_FACTOR:g}× the median of the runs "
                  "at the same grid point (none are excluded from the means; the paper manually excluded unstable "
                  "seeds for Figure 6)",
            measured={"diverged": int(diverged.sum()), "non_finite": int(np.sum(~np.isfinite(h.final))),
                      "total": int(diverged.size), "grid_points_affected": int(points.size)},
            note=f"[clip, initial_learning_rate] of the affected grid points (first 20): {where}" if where else "")

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        cfg = result["config"]
        return [_plot_heatmaps(result, out_dir, method="simulation", cap=self.cap, filename="figure.png",
                               title=f"DP-GD validation loss on {cfg['dataset']} (mean of {cfg['num_runs']} runs), "
                                     f"ρ = {cfg['rho']:g}; red: c = 1, η̃(0) = 2/γ, cη̃(0) = ln(1/γ)")]


class Fig5(_RealHeatmaps):
    name = "dpgd-fig5"
    title = "Hyper-parameter heatmaps of DP-GD on MNIST 1 vs 7: validation loss over (η̃(0), c)"
    paper = f"{PAPER}, Figure 5"
    description = "Validation loss heatmaps on MNIST 1 vs 7 (bundled digits 1 vs 7 when MNIST is not cached)."
    real_dataset = "mnist_1_vs_7"
    paper_settings = dict(dataset="mnist_1_vs_7", aspect_ratios=(1.0, 0.1),
                          initial_learning_rates=_log_grid(-1.5, 2.0, 15))
    substitute_settings = dict(dataset="digits_1_vs_7", aspect_ratios=(1.0, 0.35),
                               initial_learning_rates=_log_grid(-1.5, 2.0, 15), normalization_size=60,
                               validation_size=100)


class Fig6(_RealHeatmaps):
    name = "dpgd-fig6"
    title = "Hyper-parameter heatmaps of DP-GD on California housing: validation loss over (η̃(0), c)"
    paper = f"{PAPER}, Figure 6"
    description = "Validation loss heatmaps on California housing (bundled diabetes when it is not cached)."
    real_dataset = "california_housing"
    paper_settings = dict(dataset="california_housing", aspect_ratios=(0.01, 0.001), num_runs=5, run_block_size=5)
    substitute_settings = dict(dataset="diabetes", aspect_ratios=(0.1, 0.04), num_runs=5, run_block_size=5,
                               initial_learning_rates=_log_grid(-1.0, 2.5, 15), normalization_size=80,
                               validation_size=100)


EXPERIMENTS = (Fig4(), Fig5(), Fig6())
