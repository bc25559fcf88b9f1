"""Matrix-factorization noise strategies (Denisov et al. 2022, arXiv 2202.08312; the kan paper, arXiv 2605.12648,
Appendix F.1): their encoder and noise coefficients; :meth:`Strategy.stream` hands the coefficients to a stream of
:mod:`privdyn.privacy.correlated.streams`."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

import numpy as np

from privdyn import _check
from privdyn.privacy.correlated.streams import (  # noqa: F401 - NoiseStream re-exported
    DEFAULT_CHUNK_SIZE,
    NoiseStream,
    _BLTStream,
    _HistoryStream,
    _SubstitutionStream,
)
from privdyn.rng import CounterStream, StepNormals
from privdyn.rng import as_step_normals as _as_source

__all__ = [
    "Strategy", "Independent", "BandedInverse", "LambdaCGD", "Toeplitz", "BufferedToeplitz", "SquareRoot", "NoiseStream"
]


# ---------------------------------------------------------------------------------------------------------------
# Toeplitz helpers
# ---------------------------------------------------------------------------------------------------------------


def _num_steps(num_steps: Any) -> int:
    _check.scalar(num_steps=num_steps)
    _check.finite(num_steps=num_steps)
    _check.integer(minimum=1, num_steps=num_steps)
    return int(num_steps)


def _invert_series(coefficients: np.ndarray, length: int) -> np.ndarray:
    """The first ``length`` coefficients of ``1 / c(x)`` for the power series ``c(x) = sum_k c_k x^k``."""
    c = np.zeros(length)
    m = min(length, coefficients.size)
    c[:m] = coefficients[:m]
    nonzero = np.flatnonzero(c[1:])
    last = int(nonzero[-1]) + 1 if nonzero.size else 0  # the largest lag with c_lag != 0
    d = np.zeros(length)
    d[0] = 1.0 / c[0]
    for k in range(1, length):
        top = min(k, last)
        if top:
            # d_k = -(c_1 d_{k-1} + ... + c_top d_{k-top}) / c_0
            d[k] = -np.dot(c[1 : top + 1], d[k - top : k][::-1]) / c[0]
    return d


def _lower_toeplitz(first_column: np.ndarray) -> np.ndarray:
    """The dense lower-triangular Toeplitz matrix with the given first column."""
    n = first_column.size
    idx = np.arange(n)
    lag = idx[:, None] - idx[None, :]
    out = np.zeros((n, n))
    mask = lag >= 0
    out[mask] = first_column[lag[mask]]
    return out


def _trim(coefficients: np.ndarray) -> np.ndarray:
    """Drop trailing zeros (keep the leading coefficient)."""
    nonzero = np.flatnonzero(coefficients)
    return coefficients[: int(nonzero[-1]) + 1] if nonzero.size else coefficients[:1]


def _coefficient_array(name: str, value: Any) -> np.ndarray:
    arr = _check.real_array(**{name: value})
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence; got shape {arr.shape}.")
    _check.finite(**{name: arr})
    if not arr[0] > 0:
        raise ValueError(f"{name}[0] must be > 0 (the diagonal of the factor); got {name}[0]={arr[0]!r}.")
    return arr


# ---------------------------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------------------------


class Strategy(abc.ABC):
    """A lower-triangular Toeplitz factorization: encoder ``C`` and noise matrix ``C^{-1}``.

    Subclasses define the coefficients and how the noise ``C^{-1} Z`` is streamed.
    """

    name: str = "strategy"

    @abc.abstractmethod
    def encoder_coefficients(self, num_steps: int) -> np.ndarray:
        """``c_0 .. c_{num_steps-1}``: the first column of ``C``."""

    @abc.abstractmethod
    def noise_coefficients(self, num_steps: int) -> np.ndarray:
        """``d_0 .. d_{num_steps-1}``: the first column of ``C^{-1}``."""

    def encoder_matrix(self, num_steps: int) -> np.ndarray:
        """Dense ``C`` (num_steps x num_steps); a reference for tests and small problems."""
        return _lower_toeplitz(self.encoder_coefficients(_num_steps(num_steps)))

    def noise_matrix(self, num_steps: int) -> np.ndarray:
        """Dense ``C^{-1}`` (num_steps x num_steps); a reference for tests and small problems."""
        return _lower_toeplitz(self.noise_coefficients(_num_steps(num_steps)))

    @property
    def supports_regeneration(self) -> bool:
        """Whether the stream can regenerate past ``Z_u`` instead of storing them (noise = finite history of Z)."""
        return False

    @abc.abstractmethod
    def num_buffers(self, num_steps: int | None = None, *, regenerate: bool = False) -> int:
        """How many parameter-sized buffers the stream holds (besides its output array)."""

    @abc.abstractmethod
    def stream(self, shape: int | Sequence[int], source: StepNormals | CounterStream, *,
               num_steps: int | None = None, regenerate: bool = False, scale: float = 1.0,
               chunk_size: int = DEFAULT_CHUNK_SIZE) -> NoiseStream:
        """A :class:`NoiseStream` of ``scale * (C^{-1} Z)_t`` for a parameter of shape ``shape``.

        Args:
            shape: the parameter's shape.
            source: the step normals (a :class:`StepNormals`, or a CounterStream converted with run 0).
            num_steps: the horizon T; required by strategies whose memory grows with T (:class:`SquareRoot`).
                The stream refuses to go past it.
            regenerate: regenerate past ``Z_u`` from ``source`` instead of storing them (only where
                :attr:`supports_regeneration`); the output is bit-identical to the buffered stream.
            scale: multiplies the noise, e.g. ``clip * noise_multiplier`` for noise on the summed gradients.
            chunk_size: entries per inner step (scratch memory is one chunk).
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _HistoryStrategy(Strategy):
    """Noise ``xi_t = sum_{j<=K} d_j Z_{t-j}``: a finite history of the fresh normals (regenerable)."""

    def _history(self, num_steps: int | None) -> np.ndarray:
        raise NotImplementedError

    @property
    def supports_regeneration(self) -> bool:
        return True

    def num_buffers(self, num_steps: int | None = None, *, regenerate: bool = False) -> int:
        if num_steps is not None:
            num_steps = _num_steps(num_steps)
        return 0 if regenerate else self._history(num_steps).size - 1

    def stream(self, shape: int | Sequence[int], source: StepNormals | CounterStream, *,
               num_steps: int | None = None, regenerate: bool = False, scale: float = 1.0,
               chunk_size: int = DEFAULT_CHUNK_SIZE) -> NoiseStream:
        if num_steps is not None:
            num_steps = _num_steps(num_steps)
        return _HistoryStream(self, shape, _as_source(source), self._history(num_steps), num_steps=num_steps,
                              regenerate=bool(regenerate), scale=scale, chunk_size=chunk_size)


class Independent(_HistoryStrategy):
    """DP-SGD: ``C = C^{-1} = I``; no buffer."""

    name = "independent"

    def _history(self, num_steps: int | None) -> np.ndarray:
        return np.ones(1)

    def encoder_coefficients(self, num_steps: int) -> np.ndarray:
        out = np.zeros(_num_steps(num_steps))
        out[0] = 1.0
        return out

    def noise_coefficients(self, num_steps: int) -> np.ndarray:
        return self.encoder_coefficients(num_steps)


class BandedInverse(_HistoryStrategy):
    """``C^{-1}`` lower-triangular, Toeplitz and banded: ``xi_t = sum_{j < bands} d_j Z_{t-j}``.

    The banded-inverse factorizations of Kalinin et al. ("Back to square roots"; "BandInvMF") have this form;
    DP-lambda-CGD is the two-band case ``d = (1, -lambda)`` (:class:`LambdaCGD`). The stream stores the last
    ``bands - 1`` normals (or regenerates them: ``bands - 1`` extra draws per step, no buffer).

    Args:
        noise_coefficients: ``d_0 > 0, d_1, ..., d_{bands-1}`` (trailing zeros are dropped).
    """

    name = "banded_inverse"

    def __init__(self, noise_coefficients: Sequence[float] | np.ndarray) -> None:
        self._d = _trim(_coefficient_array("noise_coefficients", noise_coefficients))

    @property
    def bands(self) -> int:
        return int(self._d.size)

    def _history(self, num_steps: int | None) -> np.ndarray:
        return self._d if num_steps is None else self._d[:num_steps]

    def noise_coefficients(self, num_steps: int) -> np.ndarray:
        num_steps = _num_steps(num_steps)
        out = np.zeros(num_steps)
        m = min(num_steps, self._d.size)
        out[:m] = self._d[:m]
        return out

    def encoder_coefficients(self, num_steps: int) -> np.ndarray:
        return _invert_series(self._d, _num_steps(num_steps))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._d.tolist()!r})"


class LambdaCGD(BandedInverse):
    """DP-lambda-CGD: noise ``xi_t = Z_t - lambda Z_{t-1}``, ``Z_0 = 0``.

    Wang et al. (arXiv 2605.12648) Algorithm 1; matrix form eqs. (24)-(25) (Appendix F.1): ``C^{-1} = I -
    lambda Shift`` and ``C_{t,u} = lambda^(t-u)`` for ``u <= t``. One buffer (``Z_{t-1}``), or none with
    regeneration (Kalinin et al., arXiv 2601.22334), at twice the normal-generation cost. ``noise_correlation =
    0`` is DP-SGD and holds no buffer.

    Args:
        noise_correlation: lambda in [0, 1).
    """

    name = "lambda_cgd"

    def __init__(self, noise_correlation: float) -> None:
        _check.scalar(noise_correlation=noise_correlation)
        _check.finite(noise_correlation=noise_correlation)
        _check.in_range(0.0, 1.0, closed="left", noise_correlation=noise_correlation)
        self._lambda = float(noise_correlation)
        super().__init__([1.0, -self._lambda])

    @property
    def noise_correlation(self) -> float:
        return self._lambda

    def encoder_coefficients(self, num_steps: int) -> np.ndarray:
        num_steps = _num_steps(num_steps)
        if self._lambda == 0.0:
            return Independent().encoder_coefficients(num_steps)
        return self._lambda ** np.arange(num_steps, dtype=float)

    def __repr__(self) -> str:
        return f"LambdaCGD(noise_correlation={self._lambda!r})"


class SquareRoot(_HistoryStrategy):
    """The square root of the prefix-sum workload: ``C = A^{1/2}``, ``c_k = binom(2k, k) / 4^k``.

    Fichtenberger, Henzinger & Upadhyay 2023 (arXiv 2202.11205): the coefficients of ``(1 - x)^{-1/2}``; the noise
    coefficients are those of ``(1 - x)^{1/2}``, the first differences ``d_k = c_k - c_{k-1}``. Optimal for the
    prefix-sum max error up to lower-order terms among factorizations. Both matrices are dense, so the stream keeps
    ``num_steps - 1`` past normals (or regenerates them: ``t - 1`` extra draws at step t).
    """

    name = "square_root"

    def encoder_coefficients(self, num_steps: int) -> np.ndarray:
        num_steps = _num_steps(num_steps)
        k = np.arange(1, num_steps, dtype=float)
        return np.concatenate(([1.0], np.cumprod((2.0 * k - 1.0) / (2.0 * k))))

    def noise_coefficients(self, num_steps: int) -> np.ndarray:
        c = self.encoder_coefficients(num_steps)
        return np.concatenate(([1.0], np.diff(c)))

    def _history(self, num_steps: int | None) -> np.ndarray:
        if num_steps is None:
            raise ValueError("num_steps is required for the square-root strategy (its memory grows with the "
                             "horizon); got num_steps=None.")
        return self.noise_coefficients(num_steps)


class Toeplitz(Strategy):
    """A general lower-triangular Toeplitz encoder ``C`` given by its coefficients (zero beyond them).

    ``c = (c_0 > 0, c_1, ..., c_{L-1})``; the noise solves ``C xi = Z`` by forward substitution,
    ``xi_t = (Z_t - sum_{1 <= j < L} c_j xi_{t-j}) / c_0``, so the stream holds the last ``L - 1`` noise vectors
    (fewer if ``num_steps < L``): a ``b``-banded encoder (banded matrix factorization, Choquette-Choo et al. 2023,
    arXiv 2306.08153; banded square root, Kalinin & Lampert 2024, arXiv 2405.13763) needs ``b - 1`` buffers. No
    regeneration (``xi`` depends on every past normal).

    Args:
        encoder_coefficients: ``c_0 > 0, c_1, ...`` (trailing zeros are dropped).
    """

    name = "toeplitz"

    def __init__(self, encoder_coefficients: Sequence[float] | np.ndarray) -> None:
        self._c = _trim(_coefficient_array("encoder_coefficients", encoder_coefficients))

    @property
    def bands(self) -> int:
        """The number of bands of ``C``: its coefficients after trailing zeros are dropped (``c_k = 0`` for
        ``k >= bands``)."""
        return int(self._c.size)

    def encoder_coefficients(self, num_steps: int) -> np.ndarray:
        num_steps = _num_steps(num_steps)
        out = np.zeros(num_steps)
        m = min(num_steps, self._c.size)
        out[:m] = self._c[:m]
        return out

    def noise_coefficients(self, num_steps: int) -> np.ndarray:
        return _invert_series(self._c, _num_steps(num_steps))

    def num_buffers(self, num_steps: int | None = None, *, regenerate: bool = False) -> int:
        if regenerate:
            raise ValueError("regenerate=True is not supported by a Toeplitz encoder (the noise depends on every "
                             "past normal); use regenerate=False.")
        lags = self._c.size - 1
        return lags if num_steps is None else min(lags, _num_steps(num_steps) - 1)

    def stream(self, shape: int | Sequence[int], source: StepNormals | CounterStream, *,
               num_steps: int | None = None, regenerate: bool = False, scale: float = 1.0,
               chunk_size: int = DEFAULT_CHUNK_SIZE) -> NoiseStream:
        if num_steps is not None:
            num_steps = _num_steps(num_steps)
        lags = self.num_buffers(num_steps, regenerate=bool(regenerate))
        return _SubstitutionStream(self, shape, _as_source(source), self._c[: lags + 1], num_steps=num_steps,
                                   scale=scale, chunk_size=chunk_size)

    def __repr__(self) -> str:
        return f"Toeplitz({self._c.tolist()!r})"


class BufferedToeplitz(Strategy):
    """Buffered linear Toeplitz (BLT) encoder: ``c_0 = 1``, ``c_k = sum_i omega_i theta_i^(k-1)`` for ``k >= 1``.

    Dvijotham, McMahan, Pillutla, Steinke & Thakurta 2024 (arXiv 2404.16706); McMahan, Pillutla, Steinke &
    Thakurta 2024 (arXiv 2408.08868). The generating function is ``1 + sum_i omega_i x / (1 - theta_i x)``.
    The parameters are given, not optimized. The noise solves ``C xi = Z`` with one state vector per buffer,
    ``s_i <- theta_i s_i + xi_t`` and ``xi_t = Z_t - sum_i omega_i s_i``: exactly ``len(buffer_decays)``
    parameter-sized buffers, whatever the horizon. DP-lambda-CGD is the one-buffer case ``theta = omega = lambda``.

    Args:
        buffer_decays: ``theta_i`` in [0, 1).
        output_scales: ``omega_i`` (finite; non-negative with non-increasing ``c_k`` gives exact min-separation
            sensitivities, see :func:`sensitivity`).
    """

    name = "blt"

    def __init__(self, buffer_decays: Sequence[float] | np.ndarray, output_scales: Sequence[float] | np.ndarray):
        theta = np.atleast_1d(_check.real_array(buffer_decays=buffer_decays))
        omega = np.atleast_1d(_check.real_array(output_scales=output_scales))
        if theta.ndim != 1 or theta.size == 0:
            raise ValueError(f"buffer_decays must be a non-empty 1-D sequence; got shape {theta.shape}.")
        if omega.shape != theta.shape:
            raise ValueError(f"output_scales must have the shape of buffer_decays {theta.shape}; got {omega.shape}.")
        _check.finite(buffer_decays=theta, output_scales=omega)
        _check.in_range(0.0, 1.0, closed="left", buffer_decays=theta)
        self._theta, self._omega = theta, omega

    @property
    def buffer_decays(self) -> np.ndarray:
        return self._theta.copy()

    @property
    def output_scales(self) -> np.ndarray:
        return self._omega.copy()

    def encoder_coefficients(self, num_steps: int) -> np.ndarray:
        num_steps = _num_steps(num_steps)
        k = np.arange(num_steps - 1, dtype=float)
        out = np.empty(num_steps)
        out[0] = 1.0
        out[1:] = (self._omega[:, None] * self._theta[:, None] ** k[None, :]).sum(axis=0)
        return out

    def noise_coefficients(self, num_steps: int) -> np.ndarray:
        return _invert_series(self.encoder_coefficients(num_steps), _num_steps(num_steps))

    def num_buffers(self, num_steps: int | None = None, *, regenerate: bool = False) -> int:
        if regenerate:
            raise ValueError("regenerate=True is not supported by a BLT encoder (the noise depends on every past "
                             "normal); use regenerate=False.")
        return int(self._theta.size)

    def stream(self, shape: int | Sequence[int], source: StepNormals | CounterStream, *,
               num_steps: int | None = None, regenerate: bool = False, scale: float = 1.0,
               chunk_size: int = DEFAULT_CHUNK_SIZE) -> NoiseStream:
        self.num_buffers(regenerate=bool(regenerate))
        if num_steps is not None:
            num_steps = _num_steps(num_steps)
        return _BLTStream(self, shape, _as_source(source), self._theta, self._omega, num_steps=num_steps,
                          scale=scale, chunk_size=chunk_size)

    def __repr__(self) -> str:
        return f"BufferedToeplitz(buffer_decays={self._theta.tolist()!r}, output_scales={self._omega.tolist()!r})"
