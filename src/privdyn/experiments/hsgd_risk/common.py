"""Risk experiments of the hsgd paper (arXiv 2510.16687): the Section 5 setting, the independent moment-closure
reference, configs."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

import numpy as np
from scipy import integrate

from privdyn import _check
from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd
from privdyn.data.hsgd_design import UniformDesign, hsgd_problem, paper_design
from privdyn.dynamics import hsgd as dyn
from privdyn.experiments.config import ExperimentConfig
from privdyn.experiments.naming import json_number, unit_key
from privdyn.experiments.results import CheckKind
from privdyn.rng import generator
from privdyn.schedules import Constant

__all__ = [
    "PAPER", "Fig1aConfig", "Fig2aConfig", "paper_setting", "reference_moments", "reference_limit", "ReferenceMoments"
]


PAPER = ("Lin, Kolaczyk, Smith, Paquette, High-Dimensional Privacy-Utility Dynamics of Noisy SGD on Least Squares "
         "(arXiv 2510.16687)")

INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM

"""Family-wise level of Bonferroni-corrected curve comparisons and of the KS test (z = 5 for a single point)."""
MIN_RUNS = 100
"""From this number of runs on, the SGD mean is compared with the Volterra curve as an invariant."""
MIN_DIM = 100
"""... and from this d on (below it, a finding)."""
REFINEMENTS = 2
"""Romberg refinements of the Volterra solver (its error estimate is ~1e−11 relative at the paper's setting)."""
SOLVER_RTOL = 1e-8
"""The Volterra curve against the moment ODE (issue 7)."""
LIMIT_RTOL = 1e-3
"""P_T against P_∞ when T ≥ 5 relaxation times (issue 7)."""
RELAXATION_TIMES = 5.0
REFERENCE_RTOL = 1e-12
"""Tolerance of the independent DOP853 solve."""


# --------------------------------------------------------------------------------------------------------------
# The paper's setting and the independent reference solve
# --------------------------------------------------------------------------------------------------------------


def paper_setting(d: int, seed: int) -> tuple[UniformDesign, np.ndarray]:
    """The Section 5 design (x̃ drawn) and the x_0 ~ N(0, I_d) draw of run seed ``seed`` at dimension d.

    Both come from their own streams keyed by (seed, d) only, so every unit of every experiment sees the same problem.
    """
    design = paper_design(d, generator(seed, unit_key(quantity="design", d=d), purpose="data"))
    x0 = generator(seed, unit_key(quantity="x0", d=d), purpose="sampling").standard_normal(d)
    return design, x0


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReferenceMoments:
    """The independent moment solve: P_t at ``times`` and V_jj(t) of the spike (column 0) and bulk (column 1)."""

    times: np.ndarray
    population_risk: np.ndarray
    variance: np.ndarray
    mean_spike: np.ndarray
    """(T,) u·m(t), the law's mean along the spike direction u = 1/√d."""


def _projections(design: UniformDesign, x0: np.ndarray) -> dict[str, float]:
    """Projections on u = 1/√d (the spike) and sums over its orthogonal complement (the bulk), from the design."""
    d = design.dim
    u = np.full(d, 1.0 / math.sqrt(d))
    target = np.asarray(design.target, dtype=float)
    x0 = np.asarray(x0, dtype=float)
    t_s, x_s = float(u @ target), float(u @ x0)
    return {"t_s": t_s, "x_s": x_s, "tt_b": float(target @ target) - t_s**2,
            "xt_b": float(x0 @ target) - x_s * t_s, "xx_b": float(x0 @ x0) - x_s**2}


def _reference_inputs(design: UniformDesign, step_size: float, ridge: float) -> tuple[np.ndarray, np.ndarray, float]:
    d = design.dim
    lam_b = 1.0 / (12.0 * d)  # Var a_ij of Unif[0, 1/√d]
    lam_s = lam_b + d * (0.5 / math.sqrt(d)) ** 2  # + d·(E a_ij)²
    lam = np.array([lam_s, lam_b])
    return lam, lam + ridge, step_size * d


def reference_moments(design: UniformDesign, *, x0: Any, init_variance: float, step_size: float, ridge: float,
                      noise_std: float, times: Any) -> ReferenceMoments:
    """E𝒫(X_t) and the law's variances from the moment closure of HSGD (1) (Itô's formula (29)), solved
    independently.

    Written separately from :mod:`privdyn.dynamics.hsgd` (the reference of the solver invariants): Σ = λ_b I +
    ¼·uuᵀ with u = 1/√d, λ_b = 1/(12d), λ_s = λ_b + ¼; the spike direction is followed by its mean μ_s = u·E(X − x̃)
    and second moment S_s, the bulk (u's complement) by the sums S_b = Σ E v_j², C_b = Σ x̃_j E v_j, M_b = Σ (E v_j)²:

        dμ_s = −γ(a_s μ_s + δ t_s),                 dS_s = −2γ(a_s S_s + δ t_s μ_s) + (γ²/d)(2Pλ_s + σ²),
        dC_b = −γ(a_b C_b + δ Σ_b x̃_j²),           dM_b = −2γ(a_b M_b + δ C_b),
        dS_b = −2γ(a_b S_b + δ C_b) + (γ²/d)(d − 1)(2Pλ_b + σ²),   P = ½(λ_s S_s + λ_b S_b) + ½E w²,

    with γ = step_size·d, a = λ + ridge, t_s = u·x̃, from x_0 (mean ``x0``, variance ``init_variance``·I), integrated by
    scipy's DOP853 at rtol 1e−12.
    """
    d = design.dim
    lam, a, gamma = _reference_inputs(design, step_size, ridge)
    p = _projections(design, x0)
    noise2 = design.label_noise_second_moment
    sigma2 = noise_std**2
    mu_s0 = p["x_s"] - p["t_s"]
    m_b0 = p["xx_b"] - 2 * p["xt_b"] + p["tt_b"]
    z0 = np.array([mu_s0, mu_s0**2 + init_variance, p["xt_b"] - p["tt_b"], m_b0, m_b0 + (d - 1) * init_variance])

    def rhs(_t: float, z: np.ndarray) -> np.ndarray:
        mu_s, s_s, c_b, m_b, s_b = z
        risk = 0.5 * (lam[0] * s_s + lam[1] * s_b) + 0.5 * noise2
        return np.array([
            -gamma * (a[0] * mu_s + ridge * p["t_s"]),
            -2 * gamma * (a[0] * s_s + ridge * p["t_s"] * mu_s) + gamma**2 / d * (2 * risk * lam[0] + sigma2),
            -gamma * (a[1] * c_b + ridge * p["tt_b"]),
            -2 * gamma * (a[1] * m_b + ridge * c_b),
            -2 * gamma * (a[1] * s_b + ridge * c_b) + gamma**2 / d * (d - 1) * (2 * risk * lam[1] + sigma2),
        ])

    ts = np.asarray(times, dtype=float)
    if ts.ndim != 1 or ts.size == 0 or ts[0] < 0 or np.any(np.diff(ts) <= 0):
        raise ValueError(f"times must be a non-empty increasing 1-D array of times >= 0; got times={times!r}.")
    states = np.repeat(z0[:, None], ts.size, axis=1)
    later = ts > 0
    if np.any(later):
        scale = float(np.max(np.abs(z0))) + 1.0
        sol = integrate.solve_ivp(rhs, (0.0, float(ts[-1])), z0, method="DOP853", t_eval=ts[later],
                                  rtol=REFERENCE_RTOL, atol=REFERENCE_RTOL * 1e-3 * scale)
        if sol.status != 0:
            raise RuntimeError(f"reference DOP853 solve failed: {sol.message}")
        states[:, later] = sol.y
    mu_s, s_s, _, m_b, s_b = states
    pop = 0.5 * (lam[0] * s_s + lam[1] * s_b) + 0.5 * noise2
    variance = np.stack([s_s - mu_s**2, (s_b - m_b) / (d - 1)], axis=1)
    return ReferenceMoments(times=ts, population_risk=pop, variance=variance, mean_spike=mu_s + p["t_s"])


def reference_limit(design: UniformDesign, *, step_size: float, ridge: float, noise_std: float) -> dict[str, float]:
    """P_∞ = (𝒫(x*) + N_∞)/(1 − κ_K) (renewal theorem for (6)-(7)) for the Section 5 design, from the design.

    κ_K = (γ/(2d)) Σ_j λ_j²/a_j, N_∞ = (σ²γ/(4d)) Σ_j λ_j/a_j, 𝒫(x*) = ½Σ_j λ_j (δx̃_j/a_j)² + ½E w², with the spike
    and the d − 1 bulk directions of Σ. Also returns the relaxation time τ = 1/(γ min_j a_j).
    """
    d = design.dim
    lam, a, gamma = _reference_inputs(design, step_size, ridge)
    p = _projections(design, np.zeros(d))
    count = np.array([1.0, d - 1.0])
    kappa = gamma / (2 * d) * float(np.sum(count * lam**2 / a))
    noise = noise_std**2 * gamma / (4 * d) * float(np.sum(count * lam / a))
    p_star = 0.5 * (lam[0] * (ridge * p["t_s"] / a[0]) ** 2 + lam[1] * ridge**2 * p["tt_b"] / a[1] ** 2)
    p_star += 0.5 * design.label_noise_second_moment
    return {"population_risk": (p_star + noise) / (1.0 - kappa), "kernel_mass": kappa, "noise_limit": noise,
            "risk_at_minimizer": p_star, "relaxation_time": 1.0 / (gamma * float(a.min()))}


# --------------------------------------------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class _PaperSetting(ExperimentConfig):
    """The Section 5 setting shared by Figures 1(a) and 2(a): d, n, step_size η (γ = ηd), ridge δ, x0_policy."""

    d: int = 1000
    n: int = 1500
    step_size: float = 0.05
    ridge: float = 0.1
    x0_policy: Literal["random_public", "random_secret"] = "random_public"
    num_runs: int = 400
    runs_per_unit: int = 100

    def validate(self) -> None:
        _check.integer(minimum=2, d=self.d)
        _check.integer(minimum=1, n=self.n, runs_per_unit=self.runs_per_unit)
        _check.integer(minimum=2, num_runs=self.num_runs)
        _check.positive(step_size=self.step_size, ridge=self.ridge)
        # E‖a‖² = tr Σ = 1/12 + 1/4 = 1/3: the per-sample update must contract on average, η(E‖a‖² + δ) < 2.
        if not self.step_size * (1.0 / 3.0 + self.ridge) < 2.0:
            raise ValueError(f"step_size must satisfy step_size·(1/3 + ridge) < 2 (per-sample SGD stability); got "
                             f"step_size={self.step_size!r} with ridge={self.ridge!r}.")
        lam_b = 1.0 / (12.0 * self.d)
        lam = np.array([lam_b + 0.25, lam_b])
        count = np.array([1.0, self.d - 1.0])
        kappa = self.step_size / 2 * float(np.sum(count * lam**2 / (lam + self.ridge)))
        if not kappa < 1:
            raise ValueError(f"step_size is unstable: the Volterra kernel mass κ_K = {kappa:.4g} >= 1; "
                             f"got step_size={self.step_size!r}, ridge={self.ridge!r}, d={self.d}.")

    @property
    def horizon(self) -> float:
        return self.n / self.d

    @property
    def learning_rate(self) -> float:
        """γ = step_size·d (the paper's η = 0.05 is the discrete step)."""
        return self.step_size * self.d

    @property
    def init_variance(self) -> float:
        return 1.0 if self.x0_policy == "random_secret" else 0.0

    def run_batches(self) -> list[tuple[int, int]]:
        return [(first, min(self.runs_per_unit, self.num_runs - first))
                for first in range(0, self.num_runs, self.runs_per_unit)]

    def base_params(self) -> dict[str, Any]:
        return {"d": self.d, "n": self.n, "step_size": json_number(self.step_size),
                "ridge": json_number(self.ridge), "x0_policy": self.x0_policy}


def _non_negative_noise(values: tuple[float, ...] | float, name: str) -> None:
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    _check.non_negative(**{name: arr})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig1aConfig(_PaperSetting):
    """Figure 1(a): σ = 1.5 and R = 500 runs (the paper does not state R)."""

    noise_std: float = 1.5
    num_runs: int = 500

    quick_overrides = {"d": 200, "n": 1200, "num_runs": 200, "runs_per_unit": 100}

    def validate(self) -> None:
        super().validate()
        _non_negative_noise(self.noise_std, "noise_std")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig2aConfig(_PaperSetting):
    """Figure 2(a): σ ∈ {1, 1.25, 1.5}; R = 400 runs (the paper does not state R); the curve every ``record_every``
    steps, compared with the Volterra curve at ``num_blocks`` evenly spaced iterations; ``num_single_runs`` single
    runs."""

    noise_stds: tuple[float, ...] = (1.0, 1.25, 1.5)
    record_every: int = 10
    num_blocks: int = 15
    num_single_runs: int = 3

    quick_overrides = {"d": 200, "n": 1200, "num_runs": 100, "runs_per_unit": 100, "num_blocks": 12}

    def validate(self) -> None:
        super().validate()
        _non_negative_noise(self.noise_stds, "noise_stds")
        if len(set(self.noise_stds)) != len(self.noise_stds):
            raise ValueError(f"noise_stds must not repeat a value; got {list(self.noise_stds)}.")
        _check.integer(minimum=1, record_every=self.record_every, num_blocks=self.num_blocks)
        _check.integer(minimum=0, num_single_runs=self.num_single_runs)
        if self.num_blocks > self.n:
            raise ValueError(f"num_blocks must be <= n = {self.n}; got num_blocks={self.num_blocks}.")
        if self.num_single_runs > self.num_runs:
            raise ValueError(f"num_single_runs must be <= num_runs = {self.num_runs}; got {self.num_single_runs}.")

    def record_steps(self) -> np.ndarray:
        return np.union1d(np.arange(0, self.n + 1, self.record_every), self.block_steps())

    def block_steps(self) -> np.ndarray:
        """The iterations k_j = round(j·n/num_blocks), j = 1..num_blocks, where SGD is compared with Volterra."""
        return np.unique(np.round(np.arange(1, self.num_blocks + 1) * self.n / self.num_blocks).astype(np.int64))


# --------------------------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------------------------


def _problem(config: _PaperSetting, design: UniformDesign, x0: np.ndarray, noise_std: float) -> dyn.HSGDProblem:
    secret = config.x0_policy == "random_secret"
    return hsgd_problem(design, x0=None if secret else x0, learning_rate=Constant(config.learning_rate),
                        ridge=config.ridge, noise_std=noise_std, x0_policy=config.x0_policy, init_variance=1.0)


def _start(config: _PaperSetting, x0: np.ndarray) -> np.ndarray:
    """The x_0 (or, for a secret initialization, its mean 0) that the simulator and the reference start from."""
    return np.zeros_like(x0) if config.x0_policy == "random_secret" else x0


def _stream_key(config: _PaperSetting) -> str:
    """The simulator's streams: shared by every noise_std (common random numbers) and split of runs into units."""
    return unit_key(method="simulation", d=config.d, n=config.n)


def _simulate(config: _PaperSetting, seed: int, noise_std: float, first: int, count: int, *, record_steps: Any = (),
              iterate_steps: Any = ()):
    design, x0 = paper_setting(config.d, seed)
    return simulate_noisy_sgd(data=design, x0=_start(config, x0), ridge=config.ridge, num_steps=config.n,
                              num_runs=count, seed=seed, unit_key=_stream_key(config), first_run=first,
                              step_size=config.step_size, noise_std=noise_std, init_variance=config.init_variance,
                              record_steps=record_steps, iterate_steps=iterate_steps)


def _batch_key(prefix: str, first: int, count: int) -> str:
    return f"{prefix}/runs={first}-{first + count - 1}"


# --------------------------------------------------------------------------------------------------------------
# Figure 1(a)
# --------------------------------------------------------------------------------------------------------------


_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
