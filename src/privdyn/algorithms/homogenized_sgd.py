"""Noisy homogenized SGD (HSGD) and linearized HSGD on ridge-regularized least squares, by Euler–Maruyama, vectorized
over runs.

The diffusion of Lin, Kolaczyk, Smith, Paquette, "High-Dimensional Privacy-Utility Dynamics of Noisy SGD on Least
Squares" (arXiv 2510.16687), that one-pass noisy SGD (:mod:`privdyn.algorithms.noisy_sgd`, whose module docstring
gives the names and the risks 𝒫, ℛ) follows in law (Theorem 3.1).

**HSGD** (eq. (1)): dX_t = −γ(t)∇ℛ(X_t)dt + γ(t)√((2𝒫(X_t)Σ + σ²I)/d) dB_t, simulated by Euler–Maruyama in the
eigenbasis of Σ: with λ_j the eigenvalues, a_j = λ_j + δ, y = Uᵀx, x̃_j = (Uᵀx̃)_j and Δt the time step,

    y_{k+1,j} = y_{k,j} − γ(t_k)Δt·(a_j y_{k,j} − λ_j x̃_j) + γ(t_k)√(Δt/d)·√(2P_k λ_j + σ²)·ζ_{k,j},   ζ ~ N(0, I_d),

with P_k = 𝒫(X_{t_k}) (HSGD) or P_k = P_{t_k} = E𝒫(X_{t_k}), a deterministic input (linearized HSGD, eq. (9)). Δt = 1/d
(the default) puts HSGD step k at SGD step k. Euler–Maruyama has a weak error O(Δt) per unit time.

**Random streams** (:mod:`privdyn.rng`): :func:`simulate_hsgd` draws ζ_k from ``generator(seed, unit_key,
run_index=i, purpose="noise")`` and a secret random x_0 from ``purpose="sampling"``. SGD and HSGD must be driven by
independent randomness (they agree only in law, Theorem 3.1), so give the two simulations different ``unit_key``
values.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.algorithms.dpgd import _diverged_as_inf
from privdyn.algorithms.sgd_simulation import NoisySGDSimulation, _blocking, _step_list
from privdyn.hsgd_problem import HSGDProblem, RiskCurve, X0Policy
from privdyn.rng import generator

__all__ = ["simulate_hsgd"]


def _hsgd_loop(y: Any, eigenvalues: Any, target: Any, noise: Any, drift_step: Any, noise_step: Any, risk: Any,
               label_second_moment: Any, ridge: Any, sigma2: Any, linearized: Any, start: Any,
               stop: Any) -> None:  # pragma: no cover (compiled)
    """Euler–Maruyama steps ``start .. stop−1`` of HSGD (1) or linearized HSGD (9) in the eigenbasis, in place.

    Shapes: y (R, d); eigenvalues, target (d,); noise (R, B, d); drift_step = γ(t_k)Δt, noise_step = γ(t_k)√(Δt/d)
    and risk (the deterministic P_{t_k}, used when ``linearized``) (B,).
    """
    num_runs, d = y.shape
    for r in range(num_runs):
        yr = y[r]
        for j in range(start, stop):
            if linearized:
                p = risk[j]
            else:
                s = 0.0
                for i in range(d):
                    v = yr[i] - target[i]
                    s += eigenvalues[i] * v * v
                p = 0.5 * (s + label_second_moment)
            h = drift_step[j]
            g = noise_step[j]
            z = noise[r, j]
            for i in range(d):
                lam = eigenvalues[i]
                drift = (lam + ridge) * yr[i] - lam * target[i]
                yr[i] = yr[i] - h * drift + g * math.sqrt(2.0 * p * lam + sigma2) * z[i]


@functools.cache
def _compiled() -> Any:
    """The kernel compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)(_hsgd_loop)


def _linearized_risk(population_risk: Any, grid: np.ndarray) -> np.ndarray:
    """P_{t_k} for k = 0..N−1 from a RiskCurve on the grid or an array (N,) or (N+1,)."""
    n = grid.size - 1
    if isinstance(population_risk, RiskCurve):
        times = np.asarray(population_risk.times)
        if times.size not in (n, n + 1) or not np.allclose(times, grid[:times.size], rtol=1e-12, atol=1e-12):
            raise ValueError("population_risk's times must be the Euler–Maruyama grid k·time_step, k = 0..num_steps "
                             "(compute it with volterra_risk(problem, grid, ...)).")
        values = np.asarray(population_risk.population_risk, dtype=float)
    else:
        values = np.asarray(population_risk, dtype=float)
        if values.shape not in ((n,), (n + 1,)):
            raise ValueError(f"population_risk must have shape (num_steps,) = ({n},) or ({n + 1},): P at the grid "
                             f"times k·time_step; got {values.shape}.")
    _check.non_negative(population_risk=values)
    return np.array(values[:n])  # a writable copy (one compiled signature)


def simulate_hsgd(problem: HSGDProblem, *, horizon: float, num_runs: int, seed: int, unit_key: str = "",
                  first_run: int = 0, time_step: float | None = None, linearized: bool = False,
                  population_risk: ArrayLike | None = None, record_steps: ArrayLike = (),
                  iterate_steps: ArrayLike = ()) -> NoisySGDSimulation:
    """Simulate noisy HSGD (1), or linearized HSGD (9), by Euler–Maruyama in the eigenbasis of Σ (module docstring).

    Args:
        problem: an :class:`~privdyn.dynamics.hsgd.HSGDProblem` built with eigen-coordinates
            (``from_coordinates`` / ``from_covariance``, or :func:`privdyn.data.hsgd_design.hsgd_problem`). X_0 is its
            x_0, or for ``x0_policy="random_secret"`` a draw from N(x_0, init_variance·I) per run.
        horizon: T > 0; the number of steps is N = round(T/time_step) (T must be a multiple of the step).
        num_runs, seed, unit_key, first_run: as in :func:`~privdyn.algorithms.noisy_sgd.simulate_noisy_sgd`.
        time_step: Δt > 0, default 1/d (HSGD step k is SGD step k).
        linearized: replace 𝒫(X_t) in the diffusion by the deterministic P_t (eq. (9)).
        population_risk: with ``linearized``, P at the grid times t_k = k·Δt, k = 0..N−1 (or N): an array, or a
            :class:`~privdyn.dynamics.hsgd.RiskCurve` on that grid (e.g. ``volterra_risk(problem, grid, ...)``).
        record_steps, iterate_steps: grid indices k ∈ [0, N] at which to record 𝒫, ℛ and return iterates
            (in eigen-coordinates; map back with the problem's eigenvectors).

    Returns:
        A :class:`NoisySGDSimulation` with ``method="hsgd_sde"`` or ``"linearized_hsgd"``.
    """
    if not isinstance(problem, HSGDProblem):
        raise TypeError(f"problem must be a privdyn.dynamics.hsgd.HSGDProblem; got {type(problem).__name__}.")
    if problem.x0_coordinates is None:
        raise ValueError("problem needs per-direction eigen-coordinates of x_0 and x̃: build it with "
                         "HSGDProblem.from_coordinates or from_covariance.")
    d = problem.dim
    _check.scalar(horizon=horizon)
    _check.positive(horizon=horizon)
    if time_step is None:
        time_step = 1.0 / d
    _check.scalar(time_step=time_step)
    _check.positive(time_step=time_step)
    _check.integer(minimum=1, num_runs=num_runs)
    _check.integer(minimum=0, seed=seed, first_run=first_run)
    if not isinstance(unit_key, str):
        raise TypeError(f"unit_key must be a str; got unit_key={unit_key!r}.")
    ratio = float(horizon) / float(time_step)
    n = int(round(ratio))
    if n < 1 or abs(ratio - n) > 1e-9 * max(1.0, ratio):
        raise ValueError(f"horizon must be a positive multiple of time_step = {time_step:g}; got horizon={horizon!r}.")
    num_runs, seed, first_run, dt = int(num_runs), int(seed), int(first_run), float(time_step)
    grid = np.arange(n + 1) * dt
    if linearized:
        if population_risk is None:
            raise ValueError("linearized=True needs population_risk: P_t at the grid times (e.g. from volterra_risk).")
        risk = _linearized_risk(population_risk, grid)
    else:
        if population_risk is not None:
            raise ValueError("population_risk is used only with linearized=True.")
        risk = np.zeros(n)
    records = _step_list("record_steps", record_steps, n)
    keep = _step_list("iterate_steps", iterate_steps, n)

    gamma = np.asarray(problem.learning_rate.value(grid[:-1]), dtype=float).reshape(n)
    if not (np.all(np.isfinite(gamma)) and np.all(gamma >= 0)):
        raise ValueError("problem.learning_rate must be finite and >= 0 on the grid.")
    drift_step = gamma * dt
    noise_step = gamma * math.sqrt(dt / d)
    lam = np.array(problem.spectrum.per_direction(), dtype=float)  # writable copies (one compiled signature)
    target = np.array(problem.target_coordinates, dtype=float)
    ridge, sigma2 = problem.ridge, problem.noise_std**2
    label2 = problem.label_noise**2
    y = np.repeat(np.asarray(problem.x0_coordinates, dtype=float)[None, :], num_runs, axis=0)

    def risks(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = state - target
        pop = 0.5 * (np.einsum("rd,d->r", v * v, lam) + label2)
        return pop, pop + 0.5 * ridge * np.einsum("rd,rd->r", state, state)

    pop = np.empty((num_runs, records.size))
    reg = np.empty((num_runs, records.size))
    iterates = np.empty((num_runs, keep.size, d)) if keep.size else None
    events = np.union1d(records, keep)
    events = events[events >= 1]
    kernel = _compiled()
    block, chunk = _blocking(n, num_runs, d)
    for lo in range(0, num_runs, chunk):  # runs are independent: advance a chunk of them over all steps
        rows = slice(lo, min(lo + chunk, num_runs))
        state = y[rows]  # a view: the kernel updates it in place
        runs = range(first_run + rows.start, first_run + rows.stop)
        if problem.x0_policy is X0Policy.RANDOM_SECRET:
            scale = math.sqrt(problem.init_variance)
            for r, i in enumerate(runs):
                state[r] += scale * generator(seed, unit_key, run_index=i, purpose="sampling").standard_normal(d)
        streams = [generator(seed, unit_key, run_index=i, purpose="noise") for i in runs]

        def read(k: int, rows: slice = rows, state: np.ndarray = state) -> None:
            for j in np.flatnonzero(records == k):
                pop[rows, j], reg[rows, j] = risks(state)
            if iterates is not None:
                for j in np.flatnonzero(keep == k):
                    iterates[rows, j] = state

        read(0)
        for first in range(0, n, block):
            size = min(block, n - first)
            noise = np.empty((len(streams), size, d))
            for r, g in enumerate(streams):
                noise[r] = g.standard_normal((size, d))
            sl = slice(first, first + size)
            k = first
            for stop in [int(e) for e in events if first < e <= first + size] + [first + size]:
                if stop <= k:
                    continue
                kernel(state, lam, target, noise, drift_step[sl], noise_step[sl], risk[sl], label2, ridge, sigma2,
                       bool(linearized), k - first, stop - first)
                k = stop
                read(stop)
    if not np.all(np.isfinite(y)):
        warnings.warn("some runs diverged (non-finite iterates): the learning rate is beyond the stability limit "
                      "or the time_step is too coarse for the Euler–Maruyama scheme.", RuntimeWarning, stacklevel=2)
    return NoisySGDSimulation(
        method="linearized_hsgd" if linearized else "hsgd_sde", dim=d, num_steps=n, time_step=dt,
        num_runs=num_runs, first_run=first_run, seed=seed, unit_key=unit_key, steps=records, times=records * dt,
        population_risk=_diverged_as_inf(pop), regularized_risk=_diverged_as_inf(reg), iterate_steps=keep,
        iterates=None if iterates is None else _diverged_as_inf(iterates))
