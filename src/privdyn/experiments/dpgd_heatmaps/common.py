"""Figures 4-6 of the dpgd paper (arXiv 2505.16329): heatmap configs, grids, valley and summary checks, and plotting
shared by all three."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from privdyn import _check
from privdyn.algorithms.dpgd import DPGDHyperparameters
from privdyn.data import real
from privdyn.data.synthetic import num_samples
from privdyn.experiments.dpgd_common import learning_rate_profile
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.naming import json_number, unit_key
from privdyn.runs.plotting import pyplot, save_figure, select_series
from privdyn.runs.results import (
    FAMILY_LEVEL,
    Check,
    CheckKind,
    Series,
    Table,
    bonferroni_z,
    check_not_applicable,
    mean_se,
)

__all__ = ["Fig4Config", "RealHeatmapConfig"]


INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM

VALLEY_FACTOR = 3.0
"""Figure 4, check (ii) (Section 7: the valley is parallel to cη̃(0) = ln(1/γ)): along the valley, cη̃(0) stays
within about a factor 3 of the ODE argmin."""



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
            return mean_se(self.final, axis=1).standard_error


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
                 standard_error=se[ok].tolist(), passed=bool(np.all(np.abs(z[ok]) <= z_limit)) and count > 0,
                 note=note + f"; worst point c = {clips[worst]:g}, η̃(0) = {lrs[worst]:g}, |z| = {abs(z[worst]):.2f}, "
                             f"SE there {se[worst]:.3g} (standard_error: one per grid point compared)")


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
                   title: str, quantity: str) -> str:
    """A grid of panels (rows α, columns γ) with the paper's red dashed lines, colour capped at ``cap``;
    ``quantity`` names what the colour shows (the colour bar's label)."""
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
        fig.colorbar(mesh, ax=axes, shrink=0.8, label=f"{quantity} (values ≥ {cap:g} drawn as {cap:g})")
    fig.suptitle(title, fontsize=10)
    return save_figure(fig, out_dir, filename, paper=result["paper"])


def _edges(centers: np.ndarray) -> np.ndarray:
    """Cell edges of a log-spaced axis (geometric midpoints, extended by half a step at each end)."""
    if centers.size == 1:
        return np.array([centers[0] / 1.5, centers[0] * 1.5])
    logs = np.log(centers)
    mids = 0.5 * (logs[1:] + logs[:-1])
    return np.exp(np.concatenate([[2 * logs[0] - mids[0]], mids, [2 * logs[-1] - mids[-1]]]))
