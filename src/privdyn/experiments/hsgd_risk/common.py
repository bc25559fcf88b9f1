"""Risk experiments of the hsgd paper (arXiv 2510.16687): the Section 5 setting and configs (the independent
moment-closure reference lives in :mod:`privdyn.reference.hsgd_risk`)."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np

from privdyn import _check
from privdyn.algorithms.noisy_sgd import NoisySGDSimulation, simulate_noisy_sgd
from privdyn.data.hsgd_design import UniformDesign, hsgd_problem, paper_design
from privdyn.dynamics import hsgd as dyn
from privdyn.reference.hsgd_risk import (  # noqa: F401 - re-exported: the names lived here
    REFERENCE_RTOL,
    ReferenceMoments,
    reference_limit,
    reference_moments,
)
from privdyn.rng import generator
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.naming import json_number, unit_key
from privdyn.runs.results import CheckKind
from privdyn.schedules import Constant

__all__ = [
    "PAPER", "Fig1aConfig", "Fig2aConfig", "paper_setting", "reference_moments", "reference_limit", "ReferenceMoments"
]


PAPER = ("Lin, Kolaczyk, Smith, Paquette, High-Dimensional Privacy-Utility Dynamics of Noisy SGD on Least Squares "
         "(arXiv 2510.16687)")
"""The hsgd paper (arXiv 2510.16687), as the experiments' records cite it."""

INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM

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


# --------------------------------------------------------------------------------------------------------------
# The paper's setting
# --------------------------------------------------------------------------------------------------------------


def paper_setting(d: int, seed: int) -> tuple[UniformDesign, np.ndarray]:
    """The Section 5 design (x̃ drawn) and the x_0 ~ N(0, I_d) draw of run seed ``seed`` at dimension d.

    Both come from their own streams keyed by (seed, d) only, so every unit of every experiment sees the same problem.
    """
    design = paper_design(d, generator(seed, unit_key(quantity="design", d=d), purpose="data"))
    x0 = generator(seed, unit_key(quantity="x0", d=d), purpose="sampling").standard_normal(d)
    return design, x0


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
              iterate_steps: Any = ()) -> NoisySGDSimulation:
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
