"""Identity and stability experiments of the kan paper (arXiv 2605.12648): datasets, the run setup and the theory's
events."""

from __future__ import annotations

import dataclasses
import functools
from typing import Literal

import numpy as np

from privdyn.bounds import kan as kb
from privdyn.data.classification import BINARY_DATASETS, load_binary_dataset, scale_to_unit_ball
from privdyn.models.kan import KAN
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.results import CheckKind

__all__ = ["DATASETS", "load_pool"]


PAPER = "Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft 2026 (arXiv 2605.12648)"
INVARIANT = CheckKind.INVARIANT
UNIT_ROUNDOFF = float(np.finfo(np.float64).eps) / 2.0
DATASETS = BINARY_DATASETS
"""The datasets of the identity checks: :data:`privdyn.data.classification.BINARY_DATASETS`."""
DatasetName = Literal["breast_cancer", "digits_1_vs_7"]
ActivationName = Literal["sigmoid", "tanh"]
MAX_ENUMERATION_N = 12
"""Lemma B.2's enumeration visits all 2^n' - 1 batches; 12 keeps it under a second."""


# --------------------------------------------------------------------------------------------------------------
# Data and setup
# --------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def load_pool(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """The offline pool of ``dataset`` (:data:`privdyn.data.classification.BINARY_DATASETS`), standardized and
    divided by the largest row norm (so ``||x|| <= 1``), with ±1 labels; read-only arrays."""
    x, y = load_binary_dataset(dataset)
    x = scale_to_unit_ball(x)[0]
    y = np.asarray(y, dtype=np.float64)
    x.setflags(write=False)
    y.setflags(write=False)
    return x, y


def _pool_size(dataset: str) -> int:
    return {"breast_cancer": 569, "digits_1_vs_7": 361}[dataset]


@dataclasses.dataclass(frozen=True, kw_only=True)
class _KanRunConfig(ExperimentConfig):
    """The shared setting: data, architecture and Algorithm 1's parameters (ARCHITECTURE.md vocabulary).

    ``step_size = null`` uses the theory's ``1 / (12 beta)``; ``clip = clip_factor * G_delta``;
    ``projection_radius = null`` uses ``eta T (C_clip + (1 + lambda) c_priv z)`` (the radius no iterate can reach on
    the noise event of Lemma C.5); ``failure_prob`` is the delta of the events E_delta (Lemma B.5) and of Lemma C.5
    (not a privacy parameter).
    """

    dataset: DatasetName = "breast_cancer"
    n: int = 64
    width: int = 8
    grid_size: int = 3
    activation: ActivationName = "sigmoid"
    batch_size: int = 8
    num_steps: int = 20
    step_size: float | None = None
    clip_factor: float = 1.0
    noise_multiplier: float = 1.0
    noise_correlations: tuple[float, ...] = (0.0, 0.5, 0.9)
    failure_prob: float = 0.01
    projection_radius: float | None = None

    def validate(self) -> None:
        pool = _pool_size(self.dataset)
        for name in ("n", "width", "grid_size", "batch_size", "num_steps"):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {name}={value}.")
        if self.n < 2:
            raise ValueError(f"n must be >= 2; got n={self.n}.")
        if self.batch_size > self.n:
            raise ValueError(f"batch_size must be <= n={self.n}; got batch_size={self.batch_size}.")
        if self.step_size is not None and not self.step_size > 0:
            raise ValueError(f"step_size must be > 0 (or null for 1/(12 beta)); got step_size={self.step_size}.")
        if not self.clip_factor > 0:
            raise ValueError(f"clip_factor must be > 0; got clip_factor={self.clip_factor}.")
        if not self.noise_multiplier >= 0:
            raise ValueError(f"noise_multiplier must be >= 0; got noise_multiplier={self.noise_multiplier}.")
        for lam in self.noise_correlations:
            if not 0.0 <= lam < 1.0:
                raise ValueError(f"noise_correlations must lie in [0, 1); got {lam!r}.")
        if len(set(self.noise_correlations)) != len(self.noise_correlations):
            raise ValueError(f"noise_correlations must not repeat a value; got {list(self.noise_correlations)}.")
        if not 0.0 < self.failure_prob < 1.0:
            raise ValueError(f"failure_prob must lie in (0, 1); got failure_prob={self.failure_prob}.")
        if self.projection_radius is not None and not self.projection_radius > 0:
            raise ValueError(f"projection_radius must be > 0 (or null); got projection_radius="
                             f"{self.projection_radius}.")
        if self.n > pool and self._needs_subset():
            raise ValueError(f"n must be <= {pool} (the {self.dataset} pool); got n={self.n}.")

    def _needs_subset(self) -> bool:
        return True


@dataclasses.dataclass(frozen=True)
class _Setup:
    """Derived constants of one configuration and noise correlation."""

    constants: kb.KanConstants
    d: int
    noise_dim: int
    gradient_bound: float
    step_size: float
    clip: float
    c_priv: float
    noise_bound: float
    sufficient_radius: float
    projection_radius: float


def _setup(config: _KanRunConfig, lam: float) -> _Setup:
    d = load_pool(config.dataset)[0].shape[1]
    k = kb.kan_constants(activation=config.activation, grid_size=config.grid_size)
    noise_dim = config.width * d * k.num_basis
    g_delta = kb.gradient_bound(k, width=config.width, failure_prob=config.failure_prob)
    eta = k.max_step_size if config.step_size is None else config.step_size
    clip = config.clip_factor * g_delta
    c_priv = clip * config.noise_multiplier / config.batch_size
    z, _ = kb.noise_norm_bounds(noise_dim=noise_dim, num_steps=config.num_steps + 1, failure_prob=config.failure_prob)
    sufficient = eta * config.num_steps * (clip + (1.0 + lam) * c_priv * z)
    radius = sufficient if config.projection_radius is None else config.projection_radius
    return _Setup(constants=k, d=d, noise_dim=noise_dim, gradient_bound=g_delta, step_size=eta, clip=clip,
                  c_priv=c_priv, noise_bound=z, sufficient_radius=sufficient, projection_radius=radius)


def _model(config: _KanRunConfig, d: int, init_rng: np.random.Generator) -> tuple[KAN, np.ndarray]:
    model = KAN.initialize(d=d, width=config.width, rng=init_rng, grid_size=config.grid_size,
                           activation=config.activation)
    return model, model.initial_parameters(init_rng)


def _event_margins(model: KAN, failure_prob: float) -> dict[str, float]:
    norm, unit = kb.initialization_event(model.second_layer, failure_prob=failure_prob)
    return {"second_layer_norm_margin": norm.margin, "second_layer_unit_norm_margin": unit.margin}


def _theory_regime(config: _KanRunConfig, setup: _Setup) -> list[str]:
    """The checkable hypotheses of eq. (5) / Theorem C.22 that the config breaks (empty: all hold)."""
    broken = []
    if config.clip_factor < 1.0:
        broken.append(f"clip = {config.clip_factor:g} G_delta < G_delta")
    if setup.step_size > setup.constants.max_step_size:
        broken.append(f"step_size {setup.step_size:.4g} > 1/(12 beta) = {setup.constants.max_step_size:.4g}")
    return broken
