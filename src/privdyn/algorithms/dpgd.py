"""One-pass clipped DP-GD for linear regression: Algorithm 1 of Bombari, Luo, Seroussi, Mondelli (arXiv 2505.16329v2).

One run on samples (x_k, y_k), k = 1..n, each used once in order::

    theta_0 = 0
    r_k     = x_k . theta_{k-1} - y_k
    g_k     = r_k x_k                                   # gradient of (x . theta - y)^2 / 2
    gbar_k  = g_k * min(1, C / ||g_k||),  C = clip * sqrt(d),  ||g_k|| = ||x_k|| |r_k|
    etabar  = min(eta_k, 2 / ||x_k||^2)                 # adaptive cap: the step is non-expansive
    theta_k = theta_{k-1} - etabar * gbar_k + 2 C sigma_k b_k,   b_k ~ N(0, I_d)

Only theta_n is released (privately). The steps eta_k = eta~(k/n)/n come from a learning-rate profile
(:meth:`privdyn.schedules.LearningRate.step_sizes`), and the noise multipliers sigma_k from the *uncapped* eta_k by
the noise-optimal calibration of Proposition 4.1 (:func:`privdyn.privacy.iteration.noise_calibration`):
rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2, sigma_n = eta_n / rho. Each row's theta_n is then rho^2/2-zCDP
(replace-one; label ``bound``).

:func:`dpgd` runs the algorithm once on given data (the private training function). :func:`simulate_dpgd` is the
research simulator: it runs a batch of hyper-parameter rows (:class:`DPGDHyperparameters`) times ``num_runs``
independent runs at once, vectorized over (runs, rows), and records the risk trajectory.

Random streams of the simulator (``privdyn.rng``): run i (global index ``first_run + i``) draws its data from
``generator(seed, unit_key, run_index=i, purpose="data")`` and its privacy noise from the same with
``purpose="noise"``. Step k consumes d + 1 data normals ``[z_k, eps_k]`` (synthetic data; see
:mod:`privdyn.data.synthetic`) and d noise normals b_k, whether or not sigma_k = 0. Hence run i is the same whatever
``num_runs`` and whatever the rows, and all rows of a run see the same data and the same noise vectors b_k (common
random numbers); only their scalars (clip, eta_k, sigma_k) differ.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any, cast, overload

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.data.real import ArrayDataset
from privdyn.data.synthetic import SyntheticDesign, num_samples
from privdyn.privacy.iteration import noise_calibration, privacy_level, validate_step_sizes
from privdyn.privacy.labels import PrivacyLoss
from privdyn.rng import generator
from privdyn.schedules import LearningRate

__all__ = ["DPGDHyperparameters", "DPGDSimulation", "dpgd", "simulate_dpgd"]

# Budget (in float64 values) for one block of pre-drawn data and noise, shape (runs, block, 2d + 1).
_BLOCK_VALUES = 2**21
_MAX_BLOCK = 1024


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPGDHyperparameters:
    """One hyper-parameter row of Algorithm 1: (c, η̃, ρ).

    Attributes:
        clip: c > 0; the per-sample gradient is clipped at C_clip = c·√d (Assumption 2). ``math.inf`` disables
            clipping, which is only allowed without privacy noise (``rho = math.inf``).
        learning_rate: the profile η̃, non-increasing on [0, 1]; η_k = η̃(k/n)/n.
        rho: the privacy level (θ_n is ρ²/2-zCDP), > 0; ``math.inf`` runs without privacy noise (a non-private
            baseline, σ_k = 0).
    """

    clip: float
    learning_rate: LearningRate
    rho: float

    def __post_init__(self) -> None:
        for name in ("clip", "rho"):
            value = getattr(self, name)
            _check.scalar(**{name: value})
            if not float(value) > 0:
                raise ValueError(f"{name} must be > 0 (math.inf allowed); got {name}={value!r}.")
            object.__setattr__(self, name, float(value))
        if math.isinf(self.clip) and not math.isinf(self.rho):
            raise ValueError(f"clip=inf gives infinite privacy noise 2*C*sigma_k: use a finite clip or rho=inf; got "
                             f"clip=inf, rho={self.rho!r}.")
        if not isinstance(self.learning_rate, LearningRate):
            raise TypeError("learning_rate must be a privdyn.schedules.LearningRate; got "
                            f"{type(self.learning_rate).__name__}.")

    def clip_threshold(self, d: int) -> float:
        """C_clip = c·√d."""
        return self.clip * math.sqrt(d)

    def step_sizes(self, n: int) -> np.ndarray:
        """η_1..η_n = η̃(k/n)/n: shape (n,)."""
        return self.learning_rate.step_sizes(n)

    def noise_multipliers(self, n: int) -> np.ndarray:
        """σ_1..σ_n from Proposition 4.1's calibration of the uncapped steps: shape (n,)."""
        return noise_calibration(self.step_sizes(n), rho=self.rho)

    def noise_stds(self, n: int, d: int) -> np.ndarray:
        """The per-step noise standard deviations 2·C_clip·σ_k of a pass over n rows of width d: shape (n,)."""
        return _noise_std(self.clip_threshold(d), self.noise_multipliers(n))

    def privacy(self, n: int) -> PrivacyLoss:
        """The privacy level ρ of θ_n recomputed by Proposition 4.1 (label ``bound``); equals ``rho``."""
        return privacy_level(self.step_sizes(n), self.noise_multipliers(n))


_DIVERGENT_FIELDS = ("risk", "penultimate_risk", "risk_before_final_noise", "final_private_risk", "final_iterates")


def _diverged_as_inf(values: np.ndarray) -> np.ndarray:
    """``values`` with NaN (left by inf − inf in a run that overflowed) replaced by ``inf``."""
    return np.where(np.isnan(values), np.inf, values)


@dataclasses.dataclass(frozen=True, eq=False)
class DPGDSimulation:
    """The result of :func:`simulate_dpgd`.

    Shapes: R = len(rows), T = num_runs, m = len(steps), d = dim.

    Attributes:
        dataset: ``"synthetic"`` or the :class:`~privdyn.data.real.ArrayDataset`'s name.
        quantity: ``"excess_risk"`` (synthetic: R(θ) = ½‖Σ^{1/2}(θ − θ*)‖², exact in Σ) or ``"validation_loss"``
            (real data: P(θ) = ½·mean((X_v θ − y_v)²)).
        rows: the hyper-parameter rows.
        n, dim: the number of samples (steps) and the dimension.
        num_runs, first_run, seed, unit_key: which random streams were used.
        num_steps: how many steps were simulated (n unless a prefix was asked for).
        steps: (m,) the recorded iterations k (θ_k after step k; 0 is θ_0).
        times: (m,) the recorded times k/n.
        risk: (R, T, m) the risk of θ_k at each recorded k.
        initial_risk: the risk of θ_0 = 0 (the same for all rows and runs).
        penultimate_risk: (R, T) the risk of θ_{n−1}; None if fewer than n steps were simulated.
        risk_before_final_noise: (R, T) the risk of θ_{n−1} − η̄_n ḡ_n (θ_n without its privacy noise); None likewise.
        final_private_risk: (R, T) the risk of the released θ_n; None likewise.
        final_iterates: (R, T, d) θ after the last simulated step, if asked for.

    A run that diverged (a step size past the stability limit) holds ``inf`` in its risks and final iterate (the
    simulator writes ``inf`` where the overflow left NaN); no other number may be infinite or NaN.
    """

    dataset: str
    quantity: str
    rows: tuple[DPGDHyperparameters, ...]
    n: int
    dim: int
    num_runs: int
    first_run: int
    seed: int
    unit_key: str
    num_steps: int
    steps: np.ndarray
    times: np.ndarray
    risk: np.ndarray
    initial_risk: float
    penultimate_risk: np.ndarray | None
    risk_before_final_noise: np.ndarray | None
    final_private_risk: np.ndarray | None
    final_iterates: np.ndarray | None = None

    def __post_init__(self) -> None:
        _check.record(self, infinite=_DIVERGENT_FIELDS)
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    @property
    def aspect_ratio(self) -> float:
        """γ_n = d/n."""
        return self.dim / self.n


# ----------------------------------------------------------------------------------------------------
# the compiled kernel


def _advance_loop(theta: Any, x: Any, y: Any, norms: Any, caps: Any, noise: Any, eta: Any, noise_std: Any,
                  clip_threshold: Any, start: Any, stop: Any) -> None:  # pragma: no cover
    """Steps ``start .. stop-1`` of a block for every (run, row) trial, in place (Algorithm 1, one step each).

    Shapes: theta (T, R, d); x (T, B, d); y, norms, caps (T, B); noise (T, B, d); eta, noise_std (R, B);
    clip_threshold (R,). Fixed summation order (no fastmath): x_k . theta is summed in four interleaved partial
    sums s_l = sum_{i = l mod 4} x_i theta_i (the d mod 4 trailing terms into s_0), combined as
    (s_0 + s_1) + (s_2 + s_3), so a trial's numbers do not depend on T, R or the blocking. The rows of a run are
    taken four at a time in the dot products (sixteen independent partial sums share each load of x_k); every
    trial still sums its own terms in the order above.
    """
    num_runs, num_rows, d = theta.shape
    quad = d - d % 4
    grouped = num_rows - num_rows % 4
    dots = np.empty(num_rows)
    for t in range(num_runs):
        for j in range(start, stop):  # steps outside, rows inside: x_k and b_k stay in cache for all rows
            xj = x[t, j]
            bj = noise[t, j]
            for r in range(0, grouped, 4):
                ta, tb, tc, td = theta[t, r], theta[t, r + 1], theta[t, r + 2], theta[t, r + 3]
                a0 = a1 = a2 = a3 = 0.0
                b0 = b1 = b2 = b3 = 0.0
                c0 = c1 = c2 = c3 = 0.0
                e0 = e1 = e2 = e3 = 0.0
                for i in range(0, quad, 4):
                    x0, x1, x2, x3 = xj[i], xj[i + 1], xj[i + 2], xj[i + 3]
                    a0 += x0 * ta[i]
                    a1 += x1 * ta[i + 1]
                    a2 += x2 * ta[i + 2]
                    a3 += x3 * ta[i + 3]
                    b0 += x0 * tb[i]
                    b1 += x1 * tb[i + 1]
                    b2 += x2 * tb[i + 2]
                    b3 += x3 * tb[i + 3]
                    c0 += x0 * tc[i]
                    c1 += x1 * tc[i + 1]
                    c2 += x2 * tc[i + 2]
                    c3 += x3 * tc[i + 3]
                    e0 += x0 * td[i]
                    e1 += x1 * td[i + 1]
                    e2 += x2 * td[i + 2]
                    e3 += x3 * td[i + 3]
                for i in range(quad, d):
                    a0 += xj[i] * ta[i]
                    b0 += xj[i] * tb[i]
                    c0 += xj[i] * tc[i]
                    e0 += xj[i] * td[i]
                dots[r] = (a0 + a1) + (a2 + a3)
                dots[r + 1] = (b0 + b1) + (b2 + b3)
                dots[r + 2] = (c0 + c1) + (c2 + c3)
                dots[r + 3] = (e0 + e1) + (e2 + e3)
            for r in range(grouped, num_rows):
                th = theta[t, r]
                s0 = s1 = s2 = s3 = 0.0
                for i in range(0, quad, 4):
                    s0 += xj[i] * th[i]
                    s1 += xj[i + 1] * th[i + 1]
                    s2 += xj[i + 2] * th[i + 2]
                    s3 += xj[i + 3] * th[i + 3]
                for i in range(quad, d):
                    s0 += xj[i] * th[i]
                dots[r] = (s0 + s1) + (s2 + s3)
            for r in range(num_rows):
                th = theta[t, r]
                residual = dots[r] - y[t, j]
                gradient_norm = norms[t, j] * abs(residual)
                big_c = clip_threshold[r]
                scale = big_c / gradient_norm if gradient_norm > big_c else 1.0
                coefficient = min(eta[r, j], caps[t, j]) * scale * residual
                sd = noise_std[r, j]
                if sd != 0.0:
                    for i in range(d):
                        th[i] = (th[i] - coefficient * xj[i]) + sd * bj[i]
                else:
                    for i in range(d):
                        th[i] = th[i] - coefficient * xj[i]


@functools.cache
def _compiled_advance() -> Any:
    """:func:`_advance_loop` compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)(_advance_loop)


def _advance(*args: Any) -> None:
    _compiled_advance()(*args)


def _norms_and_caps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """‖x‖ and the step cap 2/‖x‖² (inf for x = 0: no cap) over the last axis."""
    squared = np.einsum("...d,...d->...", x, x)
    with np.errstate(divide="ignore"):
        return np.sqrt(squared), 2.0 / squared


def _noise_std(big_c: float | np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """2·C·σ, with 0 where σ = 0 (also when C = inf, the unclipped non-private case)."""
    with np.errstate(invalid="ignore"):
        return np.where(sigma == 0, 0.0, 2.0 * big_c * sigma)


# ----------------------------------------------------------------------------------------------------
# the private algorithm on one dataset


def dpgd(features: ArrayLike, labels: ArrayLike, *, clip: float, learning_rate: LearningRate, rho: float,
         rng: np.random.Generator) -> np.ndarray:
    """Algorithm 1 of arXiv 2505.16329v2 on one dataset, in the given order: returns the private θ_n.

    n = len(labels): every sample is used exactly once. The noise vectors are ``rng.standard_normal((n, d))``
    (b_k is row k, drawn also when σ_k = 0), the layout of :func:`simulate_dpgd`'s noise streams.

    Shapes: features (n, d), labels (n,) -> (d,).

    Formal guarantees:
        θ_n is ρ²/2-zCDP with respect to replacing one sample (Proposition 4.1, label ``bound``) when
        ``learning_rate``, ``clip`` and ``rho`` do not depend on the data. Only θ_n is returned; releasing any
        intermediate iterate would void the guarantee.
    """
    hyper = DPGDHyperparameters(clip=clip, learning_rate=learning_rate, rho=rho)
    x = np.asarray(features, dtype=float)
    y = np.asarray(labels, dtype=float)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"features must be a non-empty 2-D array (n, d); got shape {x.shape}.")
    if y.shape != (x.shape[0],):
        raise ValueError(f"labels must have shape (n,) = ({x.shape[0]},); got {y.shape}.")
    _check.finite(features=x, labels=y)
    _check.generator(rng=rng)
    n, d = x.shape
    big_c = hyper.clip_threshold(d)
    noise_std = _noise_std(big_c, hyper.noise_multipliers(n))
    noise = rng.standard_normal((n, d))
    norms, caps = _norms_and_caps(x)
    theta = np.zeros((1, 1, d))
    _advance(theta, x[None], y[None], norms[None], caps[None], noise[None], hyper.step_sizes(n)[None],
             noise_std[None], np.array([big_c]), 0, n)
    return theta[0, 0]


# ----------------------------------------------------------------------------------------------------
# the batched simulator


def _rows(rows: Any) -> tuple[DPGDHyperparameters, ...]:
    if isinstance(rows, DPGDHyperparameters):
        rows = (rows,)
    try:
        rows = tuple(rows)
    except TypeError:
        raise TypeError(f"rows must be a sequence of DPGDHyperparameters; got {type(rows).__name__}.") from None
    if not rows:
        raise ValueError("rows must hold at least one DPGDHyperparameters; got an empty sequence.")
    for i, row in enumerate(rows):
        if not isinstance(row, DPGDHyperparameters):
            raise TypeError(f"rows[{i}] must be a DPGDHyperparameters; got {type(row).__name__}.")
    return rows


def _record_steps(record_times: Any, n: int, num_steps: int) -> np.ndarray:
    times = np.atleast_1d(np.asarray(record_times, dtype=float))
    if times.ndim != 1:
        raise ValueError(f"record_times must be a scalar or a 1-D array; got shape {times.shape}.")
    _check.in_range(0.0, 1.0, record_times=times)
    # k = floor(t n); the relative nudge absorbs the rounding of t (0.29 * 100 = 28.999999999999996)
    steps = np.unique(np.floor(times * n * (1.0 + 1e-12)).astype(np.int64))
    if steps.size and steps[-1] > num_steps:
        raise ValueError(f"record_times must be <= num_steps/n = {num_steps / n:g} when only {num_steps} of the "
                         f"n = {n} steps are simulated; got max(record_times)={times.max():g}.")
    return steps


class _Schedules:
    """Per-row steps and noise std: computed once for all simulated steps when R·num_steps values fit in a block's
    budget, otherwise block by block (O(rows·block) memory, not O(rows·n))."""

    def __init__(self, rows: tuple[DPGDHyperparameters, ...], n: int, d: int, num_steps: int) -> None:
        self.rows, self.n = rows, n
        self.clip_threshold = np.array([row.clip_threshold(d) for row in rows])
        # validate every schedule over the steps that will run (and η_{k+1} of the last one) before any work; rows
        # with equal (learning_rate, rho) share η_k and σ_k, computed once (only C·σ_k differs between them)
        last = min(num_steps + 1, n)
        self.whole: tuple[np.ndarray, np.ndarray] | None = None
        keep = len(rows) * num_steps <= _BLOCK_VALUES
        eta, sigma = np.empty((len(rows), num_steps)), np.empty((len(rows), num_steps))
        seen: dict[tuple[LearningRate, float], int] = {}  # (learning_rate, rho) -> the first row with it
        for r, row in enumerate(rows):
            key = _schedule_key(row)
            first = None if key is None else seen.get(key)
            if first is None:
                try:
                    values = validate_step_sizes(row.learning_rate.value(np.arange(1, last + 1) / n) / n)
                except ValueError as error:
                    raise ValueError(f"rows[{r}].learning_rate: {error}") from None
                if key is not None:
                    seen[key] = r
                if keep:
                    eta[r], sigma[r] = self._calibrated(r, values, last, num_steps)
            elif keep:
                eta[r], sigma[r] = eta[first], sigma[first]
        if keep:
            self.whole = eta, _noise_std(self.clip_threshold[:, None], sigma)

    def _calibrated(self, r: int, values: np.ndarray, last: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        """η_k and σ_k of row r for the first ``size`` steps of ``values`` (η_k up to step ``last``, 1-based).

        σ_k needs η_{k+1}: ``values`` holds one step beyond the ``size`` returned unless ``last`` = n, where η_{n+1}
        = 0 gives ρ²σ_n² = η_n². Elementwise, so a block's values equal the same steps of the whole schedule.
        """
        if last == self.n:
            values = np.append(values, 0.0)
        sigma = noise_calibration(values, rho=self.rows[r].rho)
        return values[:size], sigma[:size]

    def block(self, first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
        """η_k and 2·C·σ_k for steps k = first..last (1-based, inclusive): two new arrays of shape (R, B).

        The same elementwise arithmetic as ``step_sizes(n)`` and ``noise_calibration`` on the whole schedule.
        """
        if self.whole is not None:
            eta, noise_std = self.whole
            return eta[:, first - 1:last].copy(), noise_std[:, first - 1:last].copy()
        n, size = self.n, last - first + 1
        ks = np.arange(first, min(last + 1, n) + 1)  # one step beyond the block, for η_{k+1}
        eta = np.empty((len(self.rows), size))
        sigma = np.empty_like(eta)
        for r, row in enumerate(self.rows):
            values = np.asarray(row.learning_rate.value(ks / n), dtype=float) / n
            eta[r], sigma[r] = self._calibrated(r, values, int(ks[-1]), size)
        return eta, _noise_std(self.clip_threshold[:, None], sigma)


def _schedule_key(row: DPGDHyperparameters) -> tuple[LearningRate, float] | None:
    """(learning_rate, rho), which fix η_k and σ_k, when the profile is hashable (equal profiles give equal values);
    None otherwise."""
    try:
        hash(row.learning_rate)
    except TypeError:
        return None
    return row.learning_rate, row.rho


class _Source:
    """Per-run data and noise, drawn block by block from each run's own streams."""

    def __init__(self, data: SyntheticDesign | ArrayDataset, n: int, num_runs: int, seed: int, unit_key: str,
                 first_run: int) -> None:
        self.data = data
        runs = range(first_run, first_run + num_runs)
        self.data_streams = [generator(seed, unit_key, run_index=i, purpose="data") for i in runs]
        self.noise_streams = [generator(seed, unit_key, run_index=i, purpose="noise") for i in runs]
        if isinstance(data, ArrayDataset):
            if data.order == "permute":
                self.order = np.stack([g.permutation(data.num_train)[:n] for g in self.data_streams])
            else:
                self.order = np.broadcast_to(np.arange(n), (num_runs, n))

    def block(self, first: int, last: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Features (T, B, d), labels (T, B) and noise vectors (T, B, d) of steps first..last (1-based)."""
        size, d = last - first + 1, self.data.dim
        if isinstance(self.data, SyntheticDesign):
            x, y = self.data.from_normals(_draw(self.data_streams, (size, d + 1)))
        else:
            idx = self.order[:, first - 1:last]
            x, y = self.data.train_features[idx], self.data.train_labels[idx]
        return np.ascontiguousarray(x), np.ascontiguousarray(y), _draw(self.noise_streams, (size, d))


def _draw(streams: list[np.random.Generator], shape: tuple[int, int]) -> np.ndarray:
    """The next ``shape`` standard normals of each stream, drawn in place into one (T, *shape) array (the same
    numbers as ``np.stack`` of per-stream draws, without the copy)."""
    out = np.empty((len(streams), *shape))
    for stream, part in zip(streams, out, strict=True):
        stream.standard_normal(out=part)
    return out


def simulate_dpgd(*, data: SyntheticDesign | ArrayDataset, rows: Sequence[DPGDHyperparameters] | DPGDHyperparameters,
                  num_runs: int, seed: int, unit_key: str = "", n: int | None = None,
                  aspect_ratio: float | None = None, first_run: int = 0, record_times: ArrayLike = (),
                  num_steps: int | None = None, return_final_iterates: bool = False) -> DPGDSimulation:
    """Simulate Algorithm 1 of arXiv 2505.16329v2 for R hyper-parameter rows × ``num_runs`` runs at once.

    Every (row, run) pair is one trial of the algorithm exactly as in the module docstring: bit-for-bit what
    :func:`dpgd` computes on that run's data and noise. A compiled loop (numba) advances all R × T trials; memory is
    O(R·T·d) plus one block of pre-drawn data and noise: synthetic samples are generated on the fly, never as an
    (n, d) matrix.

    Data:
        * :class:`~privdyn.data.synthetic.SyntheticDesign`: fresh Gaussian samples per run, simulated in the
          eigenbasis of Σ; the risk is the exact excess risk R(θ) = ½‖Σ^{1/2}(θ − θ*)‖² (no test sample).
        * :class:`~privdyn.data.real.ArrayDataset`: the first n samples of the run's permutation of the training
          set (or of the fixed order, see ``ArrayDataset.order``); n must not exceed the training-set size. The
          risk is the validation loss P(θ) = ½·mean((X_v θ − y_v)²).

    Args:
        data: the data model or dataset.
        rows: the hyper-parameter rows (each its own clip, learning-rate profile and ρ, hence its own η_k, σ_k).
        num_runs: T >= 1 independent runs.
        seed, unit_key: identify the random streams (``privdyn.rng``).
        n: the number of samples = steps; or give ``aspect_ratio`` γ = d/n instead (n = round(d/γ)).
        first_run: the global index of run 0 (a unit holding runs first_run .. first_run + T − 1).
        record_times: times t in [0, 1] at which the risk of θ_k, k = ⌊tn⌋, is recorded (0 gives θ_0, 1 the
            released θ_n); ``times`` in the result are the k/n actually recorded.
        num_steps: simulate only steps 1..num_steps of the n-step algorithm (default n), e.g. for timing; the
            final-iterate fields are then None.
        return_final_iterates: also return θ after the last simulated step, shape (R, T, d).

    Returns:
        A :class:`DPGDSimulation`.

    Raises:
        ValueError: naming the parameter, for n < 1, aspect_ratio <= 0, num_runs < 1, an increasing schedule
            (``rows[r].learning_rate``), n larger than a real training set, record_times outside [0, 1].
    """
    rows = _rows(rows)
    if not isinstance(data, SyntheticDesign | ArrayDataset):
        raise TypeError(f"data must be a SyntheticDesign or an ArrayDataset; got {type(data).__name__}.")
    d = data.dim
    if (n is None) == (aspect_ratio is None):
        raise ValueError(f"give exactly one of n and aspect_ratio; got n={n!r}, aspect_ratio={aspect_ratio!r}.")
    if n is None:
        n = num_samples(d, aspect_ratio=cast(float, aspect_ratio))  # given when n is not
    _check.integer(minimum=1, n=n, num_runs=num_runs)
    _check.integer(minimum=0, seed=seed, first_run=first_run)
    n, num_runs = int(n), int(num_runs)
    if not isinstance(unit_key, str):
        raise TypeError(f"unit_key must be a str; got unit_key={unit_key!r}.")
    if isinstance(data, ArrayDataset) and n > data.num_train:
        raise ValueError(f"n must be <= the number of training samples {data.num_train} (one pass, each sample "
                         f"used once); got n={n}.")
    if num_steps is None:
        num_steps = n
    _check.integer(minimum=1, num_steps=num_steps)
    num_steps = int(num_steps)
    if num_steps > n:
        raise ValueError(f"num_steps must be <= n = {n}; got num_steps={num_steps}.")
    steps = _record_steps(record_times, n, num_steps)

    schedules = _Schedules(rows, n, d, num_steps)
    source = _Source(data, n, num_runs, int(seed), unit_key, int(first_run))
    if isinstance(data, SyntheticDesign):
        quantity, risk_of = "excess_risk", data.excess_risk
    else:
        quantity, risk_of = "validation_loss", data.validation_loss

    theta = np.zeros((num_runs, len(rows), d))  # (T, R, d): one trial's iterate is contiguous
    recorded = np.empty((num_runs, len(rows), steps.size))
    initial_risk = float(risk_of(np.zeros(d)))
    position = {int(k): j for j, k in enumerate(steps)}
    if 0 in position:
        recorded[:, :, position[0]] = initial_risk
    penultimate = np.full((num_runs, len(rows)), initial_risk) if n == 1 else None
    before_noise = None
    # steps after which something is read off θ: the records, θ_{n-1}, and θ_n before its final noise
    events = sorted({k for k in position if k >= 1} | {k for k in (n - 1, n) if 1 <= k <= num_steps})

    block = int(max(1, min(_MAX_BLOCK, _BLOCK_VALUES // (num_runs * (2 * d + 1)))))
    for first in range(1, num_steps + 1, block):
        last = min(first + block - 1, num_steps)
        eta, noise_std = schedules.block(first, last)
        final_noise = None
        if last == n:  # the final noise is added after reading θ_n's pre-noise risk
            final_noise = noise_std[:, -1].copy()
            noise_std[:, -1] = 0.0
        x, y, noise = source.block(first, last)
        norms, caps = _norms_and_caps(x)
        k = first
        for stop in [e for e in events if first <= e <= last] + [last]:
            if stop < k:
                continue
            _advance(theta, x, y, norms, caps, noise, eta, noise_std, schedules.clip_threshold, k - first,
                     stop - first + 1)
            k = stop + 1
            if stop == n - 1:
                penultimate = risk_of(theta)
            if stop == n:
                before_noise = risk_of(theta)
                theta += cast(np.ndarray, final_noise)[None, :, None] * noise[:, -1, None, :]  # set: stop == n
            if stop in position:
                recorded[:, :, position[stop]] = risk_of(theta)

    @overload
    def rows_first(values: np.ndarray) -> np.ndarray: ...

    @overload
    def rows_first(values: np.ndarray | None) -> np.ndarray | None: ...

    def rows_first(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else np.ascontiguousarray(np.swapaxes(_diverged_as_inf(values), 0, 1))

    complete = num_steps == n
    return DPGDSimulation(
        dataset="synthetic" if isinstance(data, SyntheticDesign) else data.name, quantity=quantity, rows=rows,
        n=n, dim=d, num_runs=num_runs, first_run=int(first_run), seed=int(seed), unit_key=unit_key,
        num_steps=num_steps, steps=steps, times=steps / n, risk=rows_first(recorded), initial_risk=initial_risk,
        penultimate_risk=rows_first(penultimate) if complete else None,
        risk_before_final_noise=rows_first(before_noise) if complete else None,
        final_private_risk=rows_first(risk_of(theta)) if complete else None,
        final_iterates=rows_first(theta.copy()) if return_final_iterates else None,
    )
