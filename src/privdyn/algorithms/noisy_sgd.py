"""One-pass noisy SGD on ridge-regularized least squares, vectorized over runs.

Implements the simulators of Lin, Kolaczyk, Smith, Paquette, "High-Dimensional Privacy-Utility Dynamics of Noisy SGD
on Least Squares" (arXiv 2510.16687; "the paper"); ``docs/hsgd.md`` records the choices the paper leaves open.
Names (``docs/notation.md``): ``ridge`` δ, ``noise_std`` σ, ``step_size`` η_k, ``learning_rate`` the profile γ(t)
with η_k = γ(k/d)/d, ``clip`` the clipping threshold c.

**Noisy SGD** (Algorithm 1 of the paper; one pass, batch size 1). With f(x; a, b) = ½[(aᵀx − b)² + δ‖x‖²]::

    for k = 0 .. n-1:
        g_k     = a_k (a_kᵀx_k − b_k) + δ x_k                         # ∇f(x_k; a_k, b_k)
        x_{k+1} = x_k − η_k (clip_c(g_k) + σ Z_k),   Z_k ~ N(0, I_d)

clip_c(v) = v·min(1, c/‖v‖) (no clipping when ``clip`` is None: the paper's clipping-free variant). The paper's
clipping baseline (Section 5, Figure 3) leaves two choices open; both are available:

* what is clipped (``clip_convention``): ``"full_gradient"`` (default) clips the whole per-example gradient
  a(aᵀx − b) + δx; ``"data_term"`` clips a(aᵀx − b) only and adds δx unclipped;
* the noise: ``noise_std`` is the absolute σ (default reading); ``noise_multiplier`` gives σ = noise_multiplier·c
  (the DP-SGD convention).

The risks recorded are the paper's population risks (Section 3): 𝒫(x) = ½E(aᵀx − b)² = ½[(x − x̃)ᵀΣ(x − x̃) + E w²]
(exact, from the design's analytic Σ; no test sample) and ℛ(x) = 𝒫(x) + (δ/2)‖x‖².

**Random streams** (:mod:`privdyn.rng`). Run i (global index ``first_run + i``) of :func:`simulate_noisy_sgd` draws
its fresh samples from ``generator(seed, unit_key, run_index=i, purpose="data")`` (the design's layout: d + 1 values
per sample) and its noise Z_k from the same with ``purpose="noise"`` (d normals per step, drawn also when σ = 0, so
settings that differ only in σ, c or η share their data and noise: common random numbers). Its ``purpose="sampling"``
stream gives, in this order, the permutation of a fixed dataset (``shuffle=True``) and a random x_0
(``init_variance`` > 0). Every stream is consumed sequentially and each run is advanced by its own loop, so run i is
bit-for-bit the same whatever ``num_runs``, ``first_run`` of the batch and the internal blocking.
Its homogenized diffusion (HSGD) is simulated by :func:`privdyn.algorithms.homogenized_sgd.simulate_hsgd` (importable
from here too); both simulators return a :class:`~privdyn.algorithms.sgd_simulation.NoisySGDSimulation`.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._deprecation import renamed_arguments
from privdyn.algorithms.dpgd import _diverged_as_inf
from privdyn.algorithms.homogenized_sgd import simulate_hsgd
from privdyn.algorithms.sgd_simulation import NoisySGDSimulation, _blocking, _step_list
from privdyn.data.hsgd_design import UniformDesign
from privdyn.data.synthetic import SyntheticDesign
from privdyn.rng import generator
from privdyn.schedules import LearningRate

__all__ = [
    "CLIP_CONVENTIONS",
    "NoisySGDSimulation",
    "noisy_sgd",
    "sgd_step_sizes",
    "simulate_noisy_sgd",
    "simulate_hsgd",
]

CLIP_CONVENTIONS = ("full_gradient", "data_term")
"""What ``clip`` clips: the whole per-example gradient a(aᵀx − b) + δx (default), or its data term a(aᵀx − b)."""

# ----------------------------------------------------------------------------------------------------------------
# Validation helpers
# ----------------------------------------------------------------------------------------------------------------


@renamed_arguments(dim="d")
def sgd_step_sizes(num_steps: int, d: int, *, step_size: ArrayLike | None = None,
                   learning_rate: LearningRate | None = None) -> np.ndarray:
    """The steps η_0..η_{n−1}: a constant or per-step ``step_size``, or η_k = γ(k/d)/d from a ``learning_rate``
    profile γ (the paper's scaling, Section 1: t = k/d). Exactly one of the two. Shape (num_steps,).

    The former name ``dim`` of ``d`` is still accepted, with a ``DeprecationWarning``."""
    _check.scalar(num_steps=num_steps, d=d)
    _check.integer(minimum=0, num_steps=num_steps)
    _check.integer(minimum=1, d=d)
    if (step_size is None) == (learning_rate is None):
        raise ValueError("give exactly one of step_size (the discrete η) and learning_rate (the profile γ(t), "
                         f"η_k = γ(k/d)/d); got step_size={step_size!r}, learning_rate={learning_rate!r}.")
    if learning_rate is not None:
        if not isinstance(learning_rate, LearningRate):
            raise TypeError(f"learning_rate must be a privdyn.schedules.LearningRate; got "
                            f"{type(learning_rate).__name__}.")
        eta = np.asarray(learning_rate.value(np.arange(num_steps) / d), dtype=float).reshape(num_steps) / d
        if not (np.all(np.isfinite(eta)) and np.all(eta > 0)):
            raise ValueError("learning_rate must be finite and > 0 at every SGD time k/d, k < num_steps.")
        return eta
    eta = _check.real_array(step_size=step_size)
    if eta.ndim == 0:
        _check.positive(step_size=eta)
        return np.full(num_steps, float(eta))
    if eta.shape != (num_steps,):
        raise ValueError(f"step_size must be a scalar or have shape (num_steps,) = ({num_steps},); got {eta.shape}.")
    _check.positive(step_size=eta)
    return eta.copy()


def _noise_and_clip(noise_std: Any, noise_multiplier: Any, clip: Any, clip_convention: str) -> tuple[float, float]:
    """(σ, c) with c = inf for no clipping; validates the four arguments."""
    _check.one_of(CLIP_CONVENTIONS, clip_convention=clip_convention)
    if clip is None:
        c = math.inf
    else:
        _check.scalar(clip=clip)
        _check.positive(clip=clip)
        c = float(clip)
    if (noise_std is None) == (noise_multiplier is None):
        raise ValueError("give exactly one of noise_std (the absolute σ) and noise_multiplier (σ = noise_multiplier·"
                         f"clip); got noise_std={noise_std!r}, noise_multiplier={noise_multiplier!r}.")
    if noise_multiplier is not None:
        _check.scalar(noise_multiplier=noise_multiplier)
        _check.non_negative(noise_multiplier=noise_multiplier)
        if clip is None:
            raise ValueError("noise_multiplier needs a clip (σ = noise_multiplier·clip); give noise_std for an "
                             "unclipped run.")
        return float(noise_multiplier) * c, c
    _check.scalar(noise_std=noise_std)
    _check.non_negative(noise_std=noise_std)
    return float(noise_std), c


def _ridge(ridge: Any) -> float:
    _check.scalar(ridge=ridge)
    _check.non_negative(ridge=ridge)
    return float(ridge)


def _generator(rng: Any) -> np.random.Generator:
    _check.generator(rng=rng)
    return rng


# ----------------------------------------------------------------------------------------------------------------
# Compiled kernels
# ----------------------------------------------------------------------------------------------------------------


def _sgd_loop(x: Any, features: Any, labels: Any, index: Any, noise: Any, eta: Any, ridge: Any, noise_std: Any,
              clip: Any, full_clip: Any, start: Any, stop: Any, clipped: Any) -> None:  # pragma: no cover (compiled)
    """SGD steps ``start .. stop−1`` of a block for every run, in place (Algorithm 1 of the paper, one step each).

    Shapes: x (R, d); features (M, d) and labels (M,) hold the samples; index (R, B) the sample of (run, step);
    noise (R, B, d); eta (B,). clip = inf disables clipping; ``full_clip`` selects the ``"full_gradient"``
    convention. Each run is its own loop with a fixed summation order, so its numbers do not depend on R or on the
    blocking.
    """
    num_runs, d = x.shape
    quad = d - d % 4
    clip_sq = clip * clip
    for r in range(num_runs):
        xr = x[r]
        for j in range(start, stop):
            a = features[index[r, j]]
            z = noise[r, j]
            # aᵀx, ‖a‖², ‖x‖² in four interleaved partial sums combined in a fixed order
            d0 = d1 = d2 = d3 = 0.0
            a0 = a1 = a2 = a3 = 0.0
            x0 = x1 = x2 = x3 = 0.0
            for i in range(0, quad, 4):
                d0 += a[i] * xr[i]
                d1 += a[i + 1] * xr[i + 1]
                d2 += a[i + 2] * xr[i + 2]
                d3 += a[i + 3] * xr[i + 3]
                a0 += a[i] * a[i]
                a1 += a[i + 1] * a[i + 1]
                a2 += a[i + 2] * a[i + 2]
                a3 += a[i + 3] * a[i + 3]
                x0 += xr[i] * xr[i]
                x1 += xr[i + 1] * xr[i + 1]
                x2 += xr[i + 2] * xr[i + 2]
                x3 += xr[i + 3] * xr[i + 3]
            for i in range(quad, d):
                d0 += a[i] * xr[i]
                a0 += a[i] * a[i]
                x0 += xr[i] * xr[i]
            dot = (d0 + d1) + (d2 + d3)
            residual = dot - labels[index[r, j]]
            scale = 1.0
            if clip < np.inf:
                a_sq = (a0 + a1) + (a2 + a3)
                if full_clip:
                    x_sq = (x0 + x1) + (x2 + x3)
                    # ‖r a + δx‖² = r²‖a‖² + 2δ r aᵀx + δ²‖x‖²
                    norm_sq = residual * residual * a_sq + 2.0 * ridge * residual * dot + ridge * ridge * x_sq
                else:
                    norm_sq = residual * residual * a_sq
                if norm_sq > clip_sq:
                    scale = clip / math.sqrt(norm_sq)
                    clipped[r] += 1
            h = eta[j]
            ridge_part = scale * ridge if full_clip else ridge
            data_part = scale * residual
            for i in range(d):
                xr[i] = xr[i] - h * ((data_part * a[i] + ridge_part * xr[i]) + noise_std * z[i])


@functools.cache
def _compiled(name: str) -> Any:
    """The kernel ``name`` compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)({"sgd": _sgd_loop}[name])


# ----------------------------------------------------------------------------------------------------------------
# Noisy SGD
# ----------------------------------------------------------------------------------------------------------------


def _risk_functions(data: Any, ridge: float) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    population: Callable[[Any], np.ndarray]
    if isinstance(data, UniformDesign):
        population = data.population_risk
    elif isinstance(data, SyntheticDesign):
        population = data.population_loss
    else:
        raise TypeError(f"data must be a UniformDesign or a SyntheticDesign (the population risk needs the design's "
                        f"Σ, x̃ and E w²); got {type(data).__name__}.")

    def both(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pop = population(x)
        return pop, pop + 0.5 * ridge * np.einsum("...d,...d->...", x, x)

    return both


def noisy_sgd(features: ArrayLike, labels: ArrayLike, *, x0: ArrayLike, ridge: float, rng: np.random.Generator,
              step_size: ArrayLike | None = None,
              learning_rate: LearningRate | None = None, noise_std: float | None = None,
              noise_multiplier: float | None = None, clip: float | None = None,
              clip_convention: str = "full_gradient") -> np.ndarray:
    """Algorithm 1 of the paper (one pass, batch size 1) on one dataset in the given order: returns x_n.

    n = len(labels) steps, sample k at step k. The noise vectors are ``rng.standard_normal((n, d))`` (Z_k is row k;
    the layout of :func:`simulate_noisy_sgd`'s noise streams). See the module docstring for the update, the
    clipping conventions and ``noise_multiplier``. Shapes: features (n, d), labels (n,), x0 (d,) -> (d,).

    Formal guarantees: none by itself. The unclipped algorithm has no sensitivity bound; its privacy is measured
    from the law of the process (``privdyn.privacy.hsgd``, label ``surrogate``) or exactly for a fixed data order.
    """
    x = _check.real_array(features=features)
    y = _check.real_array(labels=labels)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"features must be a non-empty 2-D array (n, d); got shape {x.shape}.")
    n, d = x.shape
    if y.shape != (n,):
        raise ValueError(f"labels must have shape (n,) = ({n},); got {y.shape}.")
    _check.finite(features=x, labels=y)
    start = np.asarray(x0, dtype=float)
    if start.shape != (d,):
        raise ValueError(f"x0 must have shape (d,) = ({d},); got {start.shape}.")
    _check.finite(x0=start)
    ridge = _ridge(ridge)
    sigma, c = _noise_and_clip(noise_std, noise_multiplier, clip, clip_convention)
    eta = sgd_step_sizes(n, d, step_size=step_size, learning_rate=learning_rate)
    noise = _generator(rng).standard_normal((n, d))
    state = start.copy()[None, :]
    # writable C-ordered copies: one compiled signature whatever the caller's arrays (numba types read-only apart)
    _compiled("sgd")(state, np.array(x, order="C"), np.array(y), np.arange(n)[None, :], noise[None],
                     eta, ridge, sigma, c, clip_convention == "full_gradient", 0, n, np.zeros(1, dtype=np.int64))
    return state[0]


class _SGDSource:
    """Samples and noise of a block of steps for every run, from the runs' own streams."""

    def __init__(self, data: Any, dataset: Any, shuffle: bool, num_steps: int, runs: range, seed: int,
                 unit_key: str) -> None:
        self.data, self.d = data, data.dim
        self.noise_streams = [generator(seed, unit_key, run_index=i, purpose="noise") for i in runs]
        self.sampling_streams = [generator(seed, unit_key, run_index=i, purpose="sampling") for i in runs]
        self.fixed = dataset is not None
        if self.fixed:
            self.features, self.labels = dataset
            size = self.labels.size
            if shuffle:
                orders = [g.permutation(size)[:num_steps] for g in self.sampling_streams]
                self.order = np.ascontiguousarray(np.stack(orders))
            else:
                self.order = np.ascontiguousarray(np.broadcast_to(np.arange(num_steps), (len(runs), num_steps)))
        else:
            self.data_streams = [generator(seed, unit_key, run_index=i, purpose="data") for i in runs]

    def block(self, first: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Features (M, d), labels (M,), index (R, size) and noise (R, size, d) of steps first .. first+size−1."""
        runs = len(self.noise_streams)
        noise = np.empty((runs, size, self.d))
        for r, g in enumerate(self.noise_streams):
            noise[r] = g.standard_normal((size, self.d))
        if self.fixed:
            return self.features, self.labels, np.ascontiguousarray(self.order[:, first:first + size]), noise
        features = np.empty((runs, size, self.d))
        labels = np.empty((runs, size))
        for r, g in enumerate(self.data_streams):
            features[r], labels[r] = self.data.sample(size, g)
        index = np.arange(runs * size, dtype=np.int64).reshape(runs, size)
        return features.reshape(runs * size, self.d), labels.reshape(runs * size), index, noise


def simulate_noisy_sgd(*, data: UniformDesign | SyntheticDesign, x0: ArrayLike, ridge: float, num_steps: int,
                       num_runs: int, seed: int, unit_key: str = "", first_run: int = 0,
                       step_size: ArrayLike | None = None,
                       learning_rate: LearningRate | None = None, noise_std: float | None = None,
                       noise_multiplier: float | None = None, clip: float | None = None,
                       clip_convention: str = "full_gradient", dataset: tuple[ArrayLike, ArrayLike] | None = None,
                       shuffle: bool = False, init_variance: float = 0.0, record_steps: ArrayLike = (),
                       iterate_steps: ArrayLike = ()) -> NoisySGDSimulation:
    """Simulate ``num_runs`` independent runs of one-pass noisy SGD (Algorithm 1 of the paper) at once.

    Each run is exactly :func:`noisy_sgd` on that run's samples and noise vectors (module docstring), advanced by a
    compiled loop (numba); memory is O(R·d) plus one block of pre-drawn samples and noise, never an (n, d) matrix
    per run.

    Args:
        data: the design: :class:`~privdyn.data.hsgd_design.UniformDesign` (the paper's Section 5) or a Gaussian
            :class:`~privdyn.data.synthetic.SyntheticDesign` (:func:`privdyn.data.hsgd_design.gaussian_design`;
            simulated in the eigenbasis of Σ). Its analytic Σ, x̃ and E w² give 𝒫 and ℛ; without ``dataset`` every
            run draws n fresh samples from it.
        x0: (d,) the initialization x_0, the same for every run (the paper draws x_0 ~ N(0, I_d) once); with
            ``init_variance`` > 0 the mean of a random initialization.
        ridge: δ ≥ 0.
        num_steps: n ≥ 1, the number of steps = samples used (one pass).
        num_runs: R ≥ 1 independent runs.
        seed, unit_key: identify the random streams (:mod:`privdyn.rng`).
        first_run: the global index of run 0 (a unit holding runs first_run .. first_run + R − 1).
        step_size: η (scalar) or η_0..η_{n−1} (n,); or give ``learning_rate`` γ(t) instead (η_k = γ(k/d)/d).
        noise_std: σ ≥ 0 (absolute); or ``noise_multiplier`` ≥ 0 with σ = noise_multiplier·clip.
        clip: c > 0, or None for the unclipped algorithm.
        clip_convention: ``"full_gradient"`` (default) or ``"data_term"`` (module docstring).
        dataset: a fixed dataset (features (N, d), labels (N,)) shared by all runs, N ≥ num_steps, instead of fresh
            samples (``data`` still gives the population risks). Run i uses samples 0..n−1 in order, or, with
            ``shuffle=True``, the first n of its own random permutation (the paper's "shuffled once").
        shuffle: see ``dataset``.
        init_variance: v ≥ 0. With v > 0 every run starts at its own x_0 = x0 + √v·ξ, ξ ~ N(0, I_d) from its
            ``"sampling"`` stream (after the shuffle permutation, if any): the secret random initialization of
            ``x0_policy="random_secret"`` (the paper's experiments: x0 = 0, v = 1). 0 (default) starts every run at x0.
        record_steps: iterations k ∈ [0, n] at which 𝒫(x_k) and ℛ(x_k) are recorded.
        iterate_steps: iterations k ∈ [0, n] whose iterates x_k are returned.

    Returns:
        A :class:`NoisySGDSimulation` with ``method="simulation"`` and ``time_step = 1/d``.

    Raises:
        ValueError: naming the parameter, e.g. for ridge < 0, noise_std < 0, clip <= 0, step_size <= 0,
            num_runs < 1, record_steps outside [0, num_steps], a dataset smaller than num_steps.
    """
    if not isinstance(data, UniformDesign | SyntheticDesign):
        raise TypeError(f"data must be a UniformDesign or a SyntheticDesign; got {type(data).__name__}.")
    d = data.dim
    _check.integer(minimum=1, num_steps=num_steps, num_runs=num_runs)
    _check.integer(minimum=0, seed=seed, first_run=first_run)
    if not isinstance(unit_key, str):
        raise TypeError(f"unit_key must be a str; got unit_key={unit_key!r}.")
    n, num_runs, seed, first_run = int(num_steps), int(num_runs), int(seed), int(first_run)
    ridge = _ridge(ridge)
    sigma, c = _noise_and_clip(noise_std, noise_multiplier, clip, clip_convention)
    eta = sgd_step_sizes(n, d, step_size=step_size, learning_rate=learning_rate)
    start = np.asarray(x0, dtype=float)
    if start.shape != (d,):
        raise ValueError(f"x0 must have shape (d,) = ({d},); got {start.shape}.")
    _check.finite(x0=start)
    _check.scalar(init_variance=init_variance)
    _check.non_negative(init_variance=init_variance)
    if not isinstance(shuffle, bool | np.bool_):
        raise TypeError(f"shuffle must be a bool; got shuffle={shuffle!r}.")
    if dataset is not None:
        try:
            features, labels = dataset
        except (TypeError, ValueError):
            raise TypeError("dataset must be a pair (features (N, d), labels (N,)).") from None
        features = np.array(features, dtype=float, order="C")  # writable copies (one compiled signature)
        labels = np.array(labels, dtype=float)
        if features.ndim != 2 or features.shape[1] != d:
            raise ValueError(f"dataset features must have shape (N, d) with d = {d}; got {features.shape}.")
        if labels.shape != (features.shape[0],):
            raise ValueError(f"dataset labels must have shape (N,) = ({features.shape[0]},); got {labels.shape}.")
        _check.finite(features=features, labels=labels)
        if labels.size < n:
            raise ValueError(f"num_steps must be <= the dataset size {labels.size} (one pass, each sample used once); "
                             f"got num_steps={n}.")
        dataset = (features, labels)
    elif shuffle:
        raise ValueError("shuffle=True needs a fixed dataset (fresh samples are already in random order).")
    records = _step_list("record_steps", record_steps, n)
    keep = _step_list("iterate_steps", iterate_steps, n)

    risks = _risk_functions(data, ridge)
    x = np.repeat(start[None, :], num_runs, axis=0)
    clipped = np.zeros(num_runs, dtype=np.int64)
    pop = np.empty((num_runs, records.size))
    reg = np.empty((num_runs, records.size))
    iterates = np.empty((num_runs, keep.size, d)) if keep.size else None
    kernel = _compiled("sgd")
    full = clip_convention == "full_gradient"
    events = np.union1d(records, keep)
    events = events[events >= 1]
    per_step = (d + 1) * (1 if dataset is not None else 2)
    block, chunk = _blocking(n, num_runs, per_step)
    for lo in range(0, num_runs, chunk):  # runs are independent: advance a chunk of them over all steps
        rows = slice(lo, min(lo + chunk, num_runs))
        state, counts = x[rows], clipped[rows]  # views: the kernel updates them in place
        source = _SGDSource(data, dataset, bool(shuffle), n, range(first_run + rows.start, first_run + rows.stop),
                            seed, unit_key)
        if init_variance > 0:
            scale = math.sqrt(float(init_variance))
            for r, g in enumerate(source.sampling_streams):
                state[r] += scale * g.standard_normal(d)

        def read(k: int, rows: slice = rows, state: np.ndarray = state) -> None:
            for j in np.flatnonzero(records == k):
                pop[rows, j], reg[rows, j] = risks(state)
            if iterates is not None:
                for j in np.flatnonzero(keep == k):
                    iterates[rows, j] = state

        read(0)
        for first in range(0, n, block):
            size = min(block, n - first)
            features, labels, index, noise = source.block(first, size)
            k = first
            for stop in [int(e) for e in events if first < e <= first + size] + [first + size]:
                if stop <= k:
                    continue
                kernel(state, features, labels, index, noise, eta[first:first + size], ridge, sigma, c, full,
                       k - first, stop - first, counts)
                k = stop
                read(stop)
    if not np.all(np.isfinite(x)):
        bad = int(np.sum(~np.all(np.isfinite(x), axis=1)))
        warnings.warn(f"{bad} of {num_runs} runs diverged (non-finite iterates): the step_size is beyond the "
                      "stability limit η(‖a‖² + ridge) < 2 of the per-sample update.", RuntimeWarning, stacklevel=2)
    return NoisySGDSimulation(
        method="simulation", dim=d, num_steps=n, time_step=1.0 / d, num_runs=num_runs, first_run=first_run,
        seed=seed, unit_key=unit_key, steps=records, times=records / d, population_risk=_diverged_as_inf(pop),
        regularized_risk=_diverged_as_inf(reg), iterate_steps=keep,
        iterates=None if iterates is None else _diverged_as_inf(iterates),
        clipped_steps=None if math.isinf(c) else clipped)
