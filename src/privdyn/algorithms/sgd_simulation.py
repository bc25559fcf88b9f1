"""The record of a vectorized simulation of noisy SGD or of its homogenized diffusion, and the step bookkeeping the
two simulators share (:func:`privdyn.algorithms.noisy_sgd.simulate_noisy_sgd`,
:func:`privdyn.algorithms.homogenized_sgd.simulate_hsgd`; Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from privdyn import _check

__all__ = ["NoisySGDSimulation"]

# Budget (in float64 values) of one block of pre-drawn data and noise for one chunk of runs (see _blocking).
_BLOCK_VALUES = 2**21
_MAX_BLOCK = 1024


@dataclasses.dataclass(frozen=True, eq=False)
class NoisySGDSimulation:
    """The result of :func:`~privdyn.algorithms.noisy_sgd.simulate_noisy_sgd` or
    :func:`~privdyn.algorithms.homogenized_sgd.simulate_hsgd`.

    Shapes: R = num_runs, K = len(steps), J = len(iterate_steps), d = dim.

    Attributes:
        method: ``"simulation"`` (noisy SGD), ``"hsgd_sde"`` (HSGD (1) by Euler–Maruyama) or ``"linearized_hsgd"``
            (eq. (9) by Euler–Maruyama).
        dim: d.
        num_steps: the number of steps simulated (n SGD steps, or Euler–Maruyama steps).
        time_step: the time per step (1/d for SGD: t = k/d).
        num_runs, first_run, seed, unit_key: which random streams were used.
        steps: (K,) the recorded iterations k (x_k after k steps; 0 is x_0).
        times: (K,) the times k·time_step.
        population_risk: (R, K) 𝒫(x_k).
        regularized_risk: (R, K) ℛ(x_k) = 𝒫(x_k) + (ridge/2)‖x_k‖².
        iterate_steps: (J,) the iterations whose iterates are returned.
        iterates: (R, J, d) x_k at ``iterate_steps`` (None when none were asked for). Noisy SGD: in the data's
            coordinates (the eigenbasis for a Gaussian design); HSGD: in the problem's eigen-coordinates.
        clipped_steps: (R,) how many steps of each run clipped the gradient (None without clipping).

    A run that diverged (the simulators warn) holds ``inf`` in its risks and iterates (written where the overflow left
    NaN); no other number may be infinite or NaN.
    """

    method: str
    dim: int
    num_steps: int
    time_step: float
    num_runs: int
    first_run: int
    seed: int
    unit_key: str
    steps: np.ndarray
    times: np.ndarray
    population_risk: np.ndarray
    regularized_risk: np.ndarray
    iterate_steps: np.ndarray
    iterates: np.ndarray | None = None
    clipped_steps: np.ndarray | None = None

    def __post_init__(self) -> None:
        _check.record(self, infinite=("population_risk", "regularized_risk", "iterates"))
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    def mean_and_standard_error(self, quantity: str = "population_risk") -> tuple[np.ndarray, np.ndarray]:
        """The mean over runs of ``quantity`` (``"population_risk"`` or ``"regularized_risk"``) at every recorded
        step, and its standard error (sample standard deviation/√R; NaN for a single run). Shapes: (K,), (K,)."""
        _check.one_of(("population_risk", "regularized_risk"), quantity=quantity)
        values = getattr(self, quantity)
        mean = values.mean(axis=0)
        if self.num_runs < 2:
            return mean, np.full(mean.shape, np.nan)
        return mean, values.std(axis=0, ddof=1) / math.sqrt(self.num_runs)


def _step_list(name: str, values: Any, num_steps: int) -> np.ndarray:
    steps = np.atleast_1d(np.asarray(values))
    if steps.size == 0:
        return np.zeros(0, dtype=np.int64)
    if steps.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array of iterations; got shape {steps.shape}.")
    _check.integer(minimum=0, **{name: steps})
    steps = np.unique(steps.astype(np.int64))
    if steps[-1] > num_steps:
        raise ValueError(f"{name} must be <= num_steps = {num_steps}; got max({name})={int(steps[-1])}.")
    return steps


def _blocking(num_steps: int, num_runs: int, per_step: int) -> tuple[int, int]:
    """(steps per block, runs per chunk): one block of pre-drawn values for a chunk of runs stays within the budget.

    The results do not depend on this choice (every run has its own sequential streams and its own loop)."""
    block = int(max(1, min(num_steps, _MAX_BLOCK, _BLOCK_VALUES // per_step)))
    chunk = int(max(1, min(num_runs, _BLOCK_VALUES // (block * per_step))))
    return block, chunk
