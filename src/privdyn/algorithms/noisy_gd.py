"""Noisy full-batch gradient descent: Algorithm 1 of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855).

One run is::

    theta_0     = Pi_C(N(0, 2 noise_scale**2 / strong_convexity * I_d))        (unless a start is given)
    theta_{k+1} = Pi_C(theta_k - step_size * (1/n) sum_i grad l(theta_k; x_i)
                       + sqrt(2 * step_size) * noise_scale * Z_k),   Z_k ~ N(0, I_d)

and only theta_K is released. ``noise_scale`` is the paper's sigma: the noise actually added per step has
standard deviation sqrt(2 * step_size) * noise_scale (the paper calls sigma**2 the "noise variance"). The
privacy of the released iterate is accounted for in :mod:`privdyn.privacy.langevin`.

Runs are vectorized: parameters have shape (num_runs, d). Losses follow the small :class:`Loss` interface
(per-example gradients of shape (num_runs, n, d) and their mean); :class:`QuadraticLoss`,
:class:`LogisticLoss` and :class:`LeastSquaresLoss` are built in. Projections onto closed convex sets are
frozen dataclasses with a ``project`` method: :class:`Unconstrained`, :class:`L2Ball`, :class:`Box`.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from privdyn import _check
from privdyn.rng import CounterStream

__all__ = [
    "Box",
    "L2Ball",
    "LeastSquaresLoss",
    "LogisticLoss",
    "Loss",
    "Projection",
    "QuadraticLoss",
    "Unconstrained",
    "noisy_gd",
]


# ----------------------------------------------------------------------------------------------------
# losses


class Loss(abc.ABC):
    """A per-example loss l(theta; x), evaluated for many parameter vectors at once.

    Subclasses implement :meth:`per_example_gradients` and :meth:`dimension`; :meth:`mean_gradient` defaults
    to the mean of the per-example gradients and built-ins override it with a cheaper form. :func:`noisy_gd`
    only calls :meth:`dimension` (once, to validate the data) and :meth:`mean_gradient` (once per step).

    Shapes: ``theta`` is (R, d) for R parameter vectors (runs); ``data`` is whatever the loss documents.
    """

    @abc.abstractmethod
    def per_example_gradients(self, theta: np.ndarray, data: Any) -> np.ndarray:
        """The gradients grad l(theta_r; x_i), shape (R, n, d)."""

    def mean_gradient(self, theta: np.ndarray, data: Any) -> np.ndarray:
        """The gradient of the empirical loss (1/n) sum_i grad l(theta_r; x_i), shape (R, d)."""
        return self.per_example_gradients(theta, data).mean(axis=1)

    @abc.abstractmethod
    def dimension(self, data: Any) -> int:
        """The parameter dimension d implied by ``data``; validates ``data`` (ValueError naming the issue)."""

    def value(self, theta: np.ndarray, data: Any) -> np.ndarray:
        """The empirical loss (1/n) sum_i l(theta_r; x_i), shape (R,). Optional for user losses."""
        raise NotImplementedError(f"{type(self).__name__} does not implement value().")


def _as_2d_features(name: str, x: Any) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape (n, d) with n, d >= 1; got shape {np.shape(x)}.")
    _check.finite(**{name: arr})
    return arr


def _features_labels(data: Any, *, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    try:
        features, labels = data
    except (TypeError, ValueError):
        raise ValueError("data must be a pair (X, y) with X of shape (n, d) and y of shape (n,).") from None
    X = _as_2d_features("X", features)
    y = np.asarray(labels, dtype=float)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape (n,) = ({X.shape[0]},) to match X; got shape {y.shape}.")
    _check.finite(y=y)
    if binary and not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"y must hold labels in {{-1, +1}}; got values {np.unique(y)[:6]}.")
    return X, y


@dataclasses.dataclass(frozen=True)
class QuadraticLoss(Loss):
    """l(theta; x) = 0.5 * ||theta - x||**2: the tightness instance of the paper (section 4).

    1-strongly convex and 1-smooth; the empirical gradient is theta - mean(x). Its total gradient sensitivity
    is the diameter of the data domain. ``data`` is an array x of shape (n, d) (shape (n,) is read as d = 1).
    """

    strong_convexity: float = dataclasses.field(default=1.0, init=False)
    smoothness: float = dataclasses.field(default=1.0, init=False)

    def dimension(self, data: tuple[ArrayLike, ArrayLike]) -> int:
        return _as_2d_features("data", data).shape[1]

    def per_example_gradients(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        x = _as_2d_features("data", data)
        return theta[:, None, :] - x[None, :, :]

    def mean_gradient(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        x = _as_2d_features("data", data)
        return theta - x.mean(axis=0)

    def value(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        x = _as_2d_features("data", data)
        return 0.5 * np.mean(np.sum((theta[:, None, :] - x[None, :, :]) ** 2, axis=-1), axis=1)


@dataclasses.dataclass(frozen=True)
class LogisticLoss(Loss):
    """l(theta; (x, y)) = log(1 + exp(-y x.theta)) + ridge/2 ||theta||**2, labels y in {-1, +1}.

    ``ridge``-strongly convex and (max_i ||x_i||**2 / 4 + ridge)-smooth (:meth:`smoothness`); on a ball of
    radius R it is (max_i ||x_i|| + ridge R)-Lipschitz. ``data`` is a pair (X of shape (n, d), y of shape
    (n,)).
    """

    ridge: float = 0.0

    def __post_init__(self) -> None:
        _check.non_negative(ridge=self.ridge)

    @property
    def strong_convexity(self) -> float:
        return float(self.ridge)

    def smoothness(self, data: tuple[ArrayLike, ArrayLike]) -> float:
        X, _ = _features_labels(data, binary=True)
        return float(np.max(np.sum(X**2, axis=1)) / 4.0 + self.ridge)

    def dimension(self, data: tuple[ArrayLike, ArrayLike]) -> int:
        return _features_labels(data, binary=True)[0].shape[1]

    def _coefficients(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        # d/dm log(1 + exp(-m)) = -sigmoid(-m) with margin m = y x.theta; shape (R, n). In place on the one
        # (R, n) array of products, the same operations as -y * expit(-y * (theta @ X.T)), bit for bit.
        negative_y = -y
        coef = theta @ X.T
        coef *= negative_y
        special.expit(coef, out=coef)
        coef *= negative_y
        return coef

    def per_example_gradients(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        X, y = data
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        coef = self._coefficients(theta, X, y)
        return coef[:, :, None] * X[None, :, :] + self.ridge * theta[:, None, :]

    def mean_gradient(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        X, y = data
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        gradient = self._coefficients(theta, X, y) @ X  # one pass over X for the margins, one for this product
        gradient /= X.shape[0]
        gradient += self.ridge * theta
        return gradient

    def value(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        X, y = _features_labels(data, binary=True)
        margins = y * (theta @ X.T)
        return np.mean(np.logaddexp(0.0, -margins), axis=1) + 0.5 * self.ridge * np.sum(theta**2, axis=1)


@dataclasses.dataclass(frozen=True)
class LeastSquaresLoss(Loss):
    """l(theta; (x, y)) = 0.5 (x.theta - y)**2 + ridge/2 ||theta||**2.

    ``ridge``-strongly convex (per example) and (max_i ||x_i||**2 + ridge)-smooth (:meth:`smoothness`).
    ``data`` is a pair (X of shape (n, d), y of shape (n,)).
    """

    ridge: float = 0.0

    def __post_init__(self) -> None:
        _check.non_negative(ridge=self.ridge)

    @property
    def strong_convexity(self) -> float:
        return float(self.ridge)

    def smoothness(self, data: tuple[ArrayLike, ArrayLike]) -> float:
        X, _ = _features_labels(data, binary=False)
        return float(np.max(np.sum(X**2, axis=1)) + self.ridge)

    def dimension(self, data: tuple[ArrayLike, ArrayLike]) -> int:
        return _features_labels(data, binary=False)[0].shape[1]

    def per_example_gradients(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        X, y = data
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        residuals = theta @ X.T - y  # (R, n)
        return residuals[:, :, None] * X[None, :, :] + self.ridge * theta[:, None, :]

    def mean_gradient(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        X, y = data
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        return (theta @ X.T - y) @ X / X.shape[0] + self.ridge * theta

    def value(self, theta: np.ndarray, data: tuple[ArrayLike, ArrayLike]) -> np.ndarray:
        X, y = _features_labels(data, binary=False)
        residuals = theta @ X.T - y
        return 0.5 * np.mean(residuals**2, axis=1) + 0.5 * self.ridge * np.sum(theta**2, axis=1)


# ----------------------------------------------------------------------------------------------------
# projections onto closed convex sets


class Projection(abc.ABC):
    """The Euclidean projection Pi_C onto a closed convex set C (non-expansive)."""

    @abc.abstractmethod
    def project(self, theta: np.ndarray) -> np.ndarray:
        """Pi_C applied to each row; shape (R, d) -> (R, d) (any (..., d) works)."""


def _float_tuple(name: str, value: Any) -> float | tuple[float, ...]:
    arr = _check.real_array(**{name: value})
    if arr.ndim == 0:
        return float(arr)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a vector of shape (d,); got shape {arr.shape}.")
    return tuple(float(v) for v in arr)


@dataclasses.dataclass(frozen=True)
class Unconstrained(Projection):
    """C = R^d: the identity."""

    def project(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=float)


@dataclasses.dataclass(frozen=True)
class L2Ball(Projection):
    """C = {theta : ||theta - center|| <= radius}; ``center`` None means the origin.

    Fields are stored as floats / tuples (hashable, immutable); arrays are accepted and converted.
    """

    radius: float
    center: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        _check.scalar(radius=self.radius)
        _check.positive(radius=self.radius)
        object.__setattr__(self, "radius", float(self.radius))
        if self.center is not None:
            center = _check.real_array(center=self.center)
            if center.ndim != 1:
                raise ValueError(f"center must be a vector of shape (d,); got shape {center.shape}.")
            _check.finite(center=center)
            object.__setattr__(self, "center", tuple(float(v) for v in center))

    def project(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        center = 0.0 if self.center is None else np.asarray(self.center)
        offset = theta - center
        norm = np.linalg.norm(offset, axis=-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(norm > self.radius, self.radius / norm, 1.0)
        return center + offset * scale


@dataclasses.dataclass(frozen=True)
class Box(Projection):
    """C = {theta : low <= theta <= high} coordinate-wise; scalars or vectors of shape (d,), low <= high.

    Infinite bounds are allowed (an unbounded side); NaN is not.
    """

    low: float | tuple[float, ...]
    high: float | tuple[float, ...]

    def __post_init__(self) -> None:
        low, high = _float_tuple("low", self.low), _float_tuple("high", self.high)
        lo, hi = np.asarray(low), np.asarray(high)
        if np.any(np.isnan(lo)) or np.any(np.isnan(hi)):
            raise ValueError(f"low and high must not be NaN; got low={low!r}, high={high!r}.")
        try:
            lo_b, hi_b = np.broadcast_arrays(lo, hi)
        except ValueError:
            raise ValueError(
                f"low and high must have the same length; got low={low!r}, high={high!r}."
            ) from None
        if np.any(lo_b > hi_b):
            raise ValueError(f"low must be <= high coordinate-wise; got low={low!r}, high={high!r}.")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def project(self, theta: np.ndarray) -> np.ndarray:
        return np.clip(np.asarray(theta, dtype=float), np.asarray(self.low), np.asarray(self.high))


# ----------------------------------------------------------------------------------------------------
# Algorithm 1


NoiseSource = np.random.Generator | Sequence[np.random.Generator] | CounterStream


def _generators(rng: Any, num_runs: int) -> np.random.Generator | list[np.random.Generator] | CounterStream:
    if isinstance(rng, np.random.Generator | CounterStream):
        return rng
    if isinstance(rng, Sequence) and all(isinstance(g, np.random.Generator) for g in rng):
        if len(rng) != num_runs:
            raise ValueError(f"rng must hold one Generator per run (num_runs={num_runs}); got {len(rng)}.")
        return list(rng)
    raise TypeError(
        "rng must be a numpy.random.Generator, a sequence of num_runs Generators or a privdyn.rng.CounterStream; "
        f"got rng of type {type(rng).__name__}."
    )


def _standard_normal(
    gens: np.random.Generator | list[np.random.Generator] | CounterStream, num_runs: int, d: int, draw: int
) -> np.ndarray:
    """Draw number ``draw`` (0 = the start, k + 1 = the noise of step k) for every run: shape (num_runs, d)."""
    if isinstance(gens, CounterStream):
        return gens.normals(draw, d, num_runs=num_runs)
    if isinstance(gens, np.random.Generator):
        return gens.standard_normal((num_runs, d))
    return np.stack([g.standard_normal(d) for g in gens])


def noisy_gd(
    loss: Loss,
    data: Any,
    *,
    num_steps: int,
    step_size: float,
    noise_scale: float,
    rng: NoiseSource,
    num_runs: int = 1,
    projection: Projection | None = None,
    init: ArrayLike | None = None,
    strong_convexity: float | None = None,
    return_trajectory: bool = False,
) -> np.ndarray:
    """Run noisy gradient descent (Algorithm 1 of Chourasia, Ye, Shokri 2021, arXiv 2102.05855).

    theta_{k+1} = Pi_C(theta_k - step_size * mean_i grad l(theta_k; x_i) + sqrt(2 step_size) noise_scale Z_k),
    for ``num_runs`` independent runs at once. The start is Pi_C(N(0, 2 noise_scale**2/strong_convexity I)),
    the start Corollary 1's privacy bound assumes, unless ``init`` is given (a given start is projected onto C
    too; it must not depend on the data for the privacy bounds to apply).

    Args:
        loss: a :class:`Loss` (only ``dimension`` and ``mean_gradient`` are used).
        data: the dataset, in the loss's format.
        num_steps: K >= 0, an integer.
        step_size: eta > 0. (privacy needs eta < 1/smoothness; this simulator does not require it.)
        noise_scale: sigma >= 0 (the per-step noise std is sqrt(2 eta) sigma; 0 gives plain projected GD).
        rng: a :class:`numpy.random.Generator`, required (no global state). All runs then draw from it
            jointly: first the start (if ``init`` is None), then one (num_runs, d) block per step.
            Alternatively a sequence of ``num_runs`` Generators: run i then draws only from ``rng[i]``, so it
            is the same whatever num_runs (see :func:`privdyn.rng.run_generators`); slower for many runs.
            Or a :class:`privdyn.rng.CounterStream`: run i (counted from the stream's ``first_run``) uses
            the counter-based normals of its own index, vectorized: the same whatever num_runs and however
            runs are split into batches.
        num_runs: R >= 1.
        projection: Pi_C; None (default) means :class:`Unconstrained`.
        init: None (Gaussian start), or a start of shape (d,) (shared by all runs) or (num_runs, d).
        strong_convexity: lambda > 0, required when ``init`` is None (the start's variance is
            2 noise_scale**2 / lambda).
        return_trajectory: if True, return every iterate theta_0 .. theta_K.

    Returns:
        theta_K of shape (num_runs, d), or the trajectory of shape (num_steps + 1, num_runs, d).

    Raises:
        ValueError / TypeError: naming the offending argument.
    """
    if not isinstance(loss, Loss) and not (hasattr(loss, "mean_gradient") and hasattr(loss, "dimension")):
        raise TypeError(f"loss must be a privdyn Loss (mean_gradient, dimension); got {type(loss).__name__}.")
    _check.integer(minimum=0, num_steps=num_steps)
    _check.integer(minimum=1, num_runs=num_runs)
    _check.positive(step_size=step_size)
    _check.non_negative(noise_scale=noise_scale)
    if np.ndim(step_size) != 0 or np.ndim(noise_scale) != 0:
        raise ValueError("step_size and noise_scale must be scalars.")
    if projection is None:
        projection = Unconstrained()
    if not hasattr(projection, "project"):
        raise TypeError(f"projection must have a project() method; got {type(projection).__name__}.")
    gens = _generators(rng, num_runs)
    d = int(loss.dimension(data))

    if init is None:
        if strong_convexity is None:
            raise ValueError(
                "strong_convexity is required for the Gaussian start "
                "N(0, 2 noise_scale**2/strong_convexity I) "
                "when init is None; got strong_convexity=None."
            )
        _check.positive(strong_convexity=strong_convexity)
        start_std = math.sqrt(2.0 * float(noise_scale) ** 2 / float(strong_convexity))
        theta = start_std * _standard_normal(gens, num_runs, d, 0)
    else:
        start = np.asarray(init, dtype=float)
        if start.shape == (d,):
            start = np.broadcast_to(start, (num_runs, d))
        elif start.shape != (num_runs, d):
            raise ValueError(
                f"init must have shape (d,) = ({d},) or (num_runs, d) = ({num_runs}, {d}); "
                f"got shape {start.shape}."
            )
        _check.finite(init=start)
        theta = np.array(start)
    theta = projection.project(theta)

    noise_std = math.sqrt(2.0 * float(step_size)) * float(noise_scale)
    trajectory = np.empty((num_steps + 1, num_runs, d)) if return_trajectory else None
    if trajectory is not None:
        trajectory[0] = theta
    for k in range(num_steps):
        gradient = loss.mean_gradient(theta, data)
        theta = projection.project(
            theta - step_size * gradient + noise_std * _standard_normal(gens, num_runs, d, k + 1)
        )
        if trajectory is not None:
            trajectory[k + 1] = theta
    return trajectory if trajectory is not None else theta
