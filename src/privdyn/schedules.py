"""Continuous-time learning-rate profiles: value, integral, derivative of the square, discrete steps.

A profile is a function t ↦ η̃(t) ≥ 0 of continuous time. The papers discretize it differently:

* dpgd (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329, Assumption 2): t = k/n ∈ [0, 1] and the discrete step
  is η_k = η̃(k/n)/n for k = 1..n (:meth:`LearningRate.step_sizes`); its private-noise profile is
  ρ²σ̃²(t) = −dη̃²/dt (:meth:`LearningRate.squared_derivative`), so the profile must be non-increasing;
* hsgd (Lin, Kolaczyk, Smith, Paquette): t = k/d and η = γ(t)/d, with Γ(t) = ∫₀ᵗ γ (:meth:`LearningRate.integral`).

privdyn calls the profile ``learning_rate`` and a discrete step ``step_size`` (``docs/notation.md``).
"""

from __future__ import annotations

import abc
import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check

__all__ = ["LearningRate", "Constant", "Polynomial", "Harmonic", "Custom", "OutsideTheoryWarning", "PARAMETER_RANGE"]


PARAMETER_RANGE = (1e-30, 1e30)
"""The range of the scale parameters of :class:`Constant`, :class:`Polynomial` and :class:`Harmonic`: products of
squares and cubes of values inside it (e.g. β²/τ³) are finite floats, so no method of a profile overflows."""


def _scales(**named: Any) -> None:
    _check.scalar(**named)
    _check.positive(**named)
    _check.in_range(*PARAMETER_RANGE, **named)


class OutsideTheoryWarning(UserWarning):
    """A setting the library runs but the paper's theory does not cover."""


class LearningRate(abc.ABC):
    """A learning-rate profile t ↦ η̃(t) for t ≥ 0 (vectorized over t)."""

    @abc.abstractmethod
    def value(self, t: ArrayLike) -> np.ndarray:
        """η̃(t)."""

    @abc.abstractmethod
    def squared_derivative(self, t: ArrayLike) -> np.ndarray:
        """d(η̃²)/dt at t (≤ 0 for a non-increasing profile; its negative is ρ²σ̃² in the dpgd paper)."""

    def integral(self, t: ArrayLike) -> np.ndarray:
        """∫₀ᵗ η̃(s) ds (adaptive quadrature unless a subclass has a closed form)."""
        ts = np.asarray(t, dtype=float)
        from scipy import integrate  # imported on use: importing the schedules stays cheap

        out = np.array([integrate.quad(lambda s: float(self.value(s)), 0.0, float(x), limit=200)[0]
                        for x in ts.ravel()])
        return out.reshape(ts.shape) if ts.ndim else out[0]

    def step_sizes(self, n: int) -> np.ndarray:
        """The dpgd discretization η_k = η̃(k/n)/n for k = 1..n (Assumption 2 of arXiv 2505.16329): shape (n,)."""
        _check.integer(minimum=1, n=n)
        return np.asarray(self.value(np.arange(1, n + 1) / n), dtype=float) / n

    @property
    def end_value(self) -> float:
        """η̃(1), the value that sets the dpgd final-step noise (Proposition 4.4)."""
        return float(self.value(1.0))


def _times(t: Any) -> np.ndarray:
    ts = np.asarray(t, dtype=float)
    if np.any(~np.isfinite(ts)) or np.any(ts < 0):
        raise ValueError(f"t must be finite and >= 0; got t={t!r}.")
    return ts


@dataclasses.dataclass(frozen=True)
class Constant(LearningRate):
    """η̃(t) = ``initial_learning_rate`` (the dpgd paper's α = 0, output perturbation), in :data:`PARAMETER_RANGE`."""

    initial_learning_rate: float

    def __post_init__(self) -> None:
        _scales(initial_learning_rate=self.initial_learning_rate)

    def value(self, t: ArrayLike) -> np.ndarray:
        return np.full_like(_times(t), self.initial_learning_rate, dtype=float)

    def squared_derivative(self, t: ArrayLike) -> np.ndarray:
        return np.zeros_like(_times(t), dtype=float)

    def integral(self, t: ArrayLike) -> np.ndarray:
        return self.initial_learning_rate * _times(t)


@dataclasses.dataclass(frozen=True)
class Polynomial(LearningRate):
    """η̃(t) = η̃(0)(1 − t)^α on [0, 1], eq. (5.1) of arXiv 2505.16329 (``schedule_exponent`` α ≥ 0).

    η̃(0) lies in :data:`PARAMETER_RANGE`, α in [0, 1e30].

    α = 0 is output perturbation, α = ½ constant private noise, α ≥ 1 decaying noise. The theory (Assumption 2)
    needs η̃² with bounded first and second derivatives, i.e. α ∈ {0, ½} ∪ [1, ∞); other α ≥ 0 run with an
    :class:`OutsideTheoryWarning`.
    """

    initial_learning_rate: float
    schedule_exponent: float

    def __post_init__(self) -> None:
        _scales(initial_learning_rate=self.initial_learning_rate)
        _check.scalar(schedule_exponent=self.schedule_exponent)
        _check.non_negative(schedule_exponent=self.schedule_exponent)
        _check.in_range(0.0, PARAMETER_RANGE[1], schedule_exponent=self.schedule_exponent)
        a = self.schedule_exponent
        if 0 < a < 1 and a != 0.5:
            warnings.warn(f"schedule_exponent={a:g} is outside the theory of arXiv 2505.16329 (Assumption 2 needs "
                          "schedule_exponent in {0, 1/2} or >= 1: the derivative of the squared learning rate is "
                          "unbounded at t = 1); running anyway.", OutsideTheoryWarning, stacklevel=3)

    def _remaining(self, t: Any) -> np.ndarray:
        ts = _times(t)
        if np.any(ts > 1):
            raise ValueError(f"t must be in [0, 1] for a polynomial schedule; got t={t!r}.")
        return 1.0 - ts

    def value(self, t: ArrayLike) -> np.ndarray:
        return self.initial_learning_rate * self._remaining(t) ** self.schedule_exponent

    def squared_derivative(self, t: ArrayLike) -> np.ndarray:
        a, eta0 = self.schedule_exponent, self.initial_learning_rate
        u = self._remaining(t)
        if a == 0:
            return np.zeros_like(u)
        with np.errstate(divide="ignore"):
            return -2.0 * a * eta0**2 * u ** (2 * a - 1)

    def integral(self, t: ArrayLike) -> np.ndarray:
        """η̃(0)(1 − (1 − t)^(α+1))/(α + 1), as −expm1((α + 1) log1p(−t)) to keep its relative precision at small t."""
        a = self.schedule_exponent
        ts = _times(t)
        self._remaining(ts)  # validates t <= 1
        with np.errstate(divide="ignore"):  # t = 1: log1p(-1) = -inf, expm1(-inf) = -1
            return -self.initial_learning_rate * np.expm1((a + 1) * np.log1p(-ts)) / (a + 1)


@dataclasses.dataclass(frozen=True)
class Harmonic(LearningRate):
    """η̃(t) = β/(t + τ), eq. (5.18) of arXiv 2505.16329 (β = ``harmonic_scale``, τ = ``harmonic_offset``).

    ρ²σ̃²(t) = 2β²/(t + τ)³. (The paper's appendix writes the numerator as α.) β and τ lie in
    :data:`PARAMETER_RANGE`.
    """

    harmonic_scale: float
    harmonic_offset: float

    def __post_init__(self) -> None:
        _scales(harmonic_scale=self.harmonic_scale, harmonic_offset=self.harmonic_offset)

    def value(self, t: ArrayLike) -> np.ndarray:
        return self.harmonic_scale / (_times(t) + self.harmonic_offset)

    def squared_derivative(self, t: ArrayLike) -> np.ndarray:
        return -2.0 * self.harmonic_scale**2 / (_times(t) + self.harmonic_offset) ** 3

    def integral(self, t: ArrayLike) -> np.ndarray:
        return self.harmonic_scale * np.log1p(_times(t) / self.harmonic_offset)


@dataclasses.dataclass(frozen=True, eq=False)
class Custom(LearningRate):
    """A user profile from callables; it must be non-increasing and non-negative on [0, ``horizon``].

    (hsgd allows any positive profile; build it with ``check_non_increasing=False``.)

    Attributes:
        function: t ↦ η̃(t), vectorized.
        squared_derivative_function: t ↦ d(η̃²)/dt; None uses a central finite difference (one-sided at 0).
        horizon: the interval [0, horizon] checked on a grid of ``check_points`` points (an integer in [2, 10**7]).
    """

    function: Callable[[np.ndarray], ArrayLike]
    squared_derivative_function: Callable[[np.ndarray], ArrayLike] | None = None
    horizon: float = 1.0
    check_points: int = 2001
    check_non_increasing: bool = True

    def __post_init__(self) -> None:
        _check.scalar(horizon=self.horizon)
        _check.positive(horizon=self.horizon)
        _check.integer(minimum=2, check_points=self.check_points)
        _check.at_most(10**7, check_points=self.check_points)
        grid = np.linspace(0.0, self.horizon, self.check_points)
        values = np.asarray(self.function(grid), dtype=float)
        if values.shape != grid.shape or not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError("learning_rate must return finite values >= 0 of the same shape as t on "
                             f"[0, {self.horizon:g}].")
        rise = np.diff(values)
        if self.check_non_increasing and np.any(rise > 1e-12 * np.maximum(values[:-1], 1.0)):
            i = int(np.argmax(rise))
            raise ValueError(f"learning_rate must be non-increasing (the dpgd noise variances would be negative); "
                             f"it increases from {values[i]:.6g} at t={grid[i]:.4g} to {values[i + 1]:.6g} at "
                             f"t={grid[i + 1]:.4g}.")

    def value(self, t: ArrayLike) -> np.ndarray:
        return np.asarray(self.function(_times(t)), dtype=float)

    def squared_derivative(self, t: ArrayLike) -> np.ndarray:
        ts = _times(t)
        if self.squared_derivative_function is not None:
            return np.asarray(self.squared_derivative_function(ts), dtype=float)
        h = 1e-6 * max(self.horizon, 1.0)
        lo = np.maximum(ts - h, 0.0)
        hi = np.where(ts + h > self.horizon, np.maximum(ts, self.horizon), ts + h)  # one-sided at the ends
        return (self.value(hi) ** 2 - self.value(lo) ** 2) / (hi - lo)
