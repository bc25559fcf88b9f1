"""Noise streams of the matrix-factorization strategies (Denisov et al. 2022, arXiv 2202.08312; the kan paper, arXiv
2605.12648, Appendix F.1): ``scale * (C^{-1} Z)_t`` one step at a time into float64 arrays, from the strategies'
coefficients (a noise history, a banded substitution, or the buffered-Toeplitz recursion).

A stream depends on its strategy only through the coefficients the strategy hands it
(:meth:`~privdyn.privacy.correlated.Strategy.stream` builds the stream), so this module imports the strategy type for
annotations only and :mod:`privdyn.privacy.correlated.strategies` imports the streams.
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from privdyn import _check
from privdyn.rng import StepNormals

if TYPE_CHECKING:
    from privdyn.privacy.correlated.strategies import Strategy

__all__ = ["NoiseStream", "DEFAULT_CHUNK_SIZE"]


DEFAULT_CHUNK_SIZE = 32768
"""Entries processed per inner step of a stream (a few hundred kB of scratch, cache-resident)."""


class NoiseStream(abc.ABC):
    """Streaming generation of ``scale * (C^{-1} Z)_t`` for t = 1, 2, ... .

    :meth:`next` writes step t's noise into a float64 array of the parameter's shape: the caller's ``out`` (any
    writable C-contiguous float64 array, e.g. a view of a tensor's memory) or the stream's own output array (reused
    at every call). Memory: the output, :attr:`buffers` (the strategy's parameter-sized state; the count is
    :meth:`Strategy.num_buffers`) and one scratch chunk of ``chunk_size`` entries.
    """

    def __init__(self, strategy: Strategy, shape: int | Sequence[int], source: StepNormals, *,
                 num_steps: int | None, scale: float, chunk_size: int) -> None:
        self.strategy = strategy
        self.shape = _shape(shape)
        self.size = int(math.prod(self.shape))
        _check.scalar(scale=scale)
        _check.non_negative(scale=scale)
        _check.integer(minimum=1, chunk_size=chunk_size)
        self.source = source
        self.num_steps = num_steps
        self.scale = float(scale)
        self.chunk_size = int(min(chunk_size, max(self.size, 1)))
        self.step = 0
        self._out: np.ndarray | None = None
        self._scratch = np.empty(self.chunk_size)
        self._generators: list[np.random.Generator] = []

    def _reusable(self, index: int) -> np.random.Generator:
        """Reusable generator number ``index`` (built once, repositioned at every step: no construction per step)."""
        while len(self._generators) <= index:
            self._generators.append(np.random.Generator(np.random.Philox(0)))
        return self._generators[index]

    def _generator(self, index: int, step: int) -> np.random.Generator:
        """Reusable generator number ``index``, positioned at the start of ``step`` (for draws in chunks)."""
        return self.source._reset(self._reusable(index), step)

    @property
    @abc.abstractmethod
    def buffers(self) -> tuple[np.ndarray, ...]:
        """The parameter-sized arrays the stream holds besides its output (views of its state)."""

    def _output(self, out: np.ndarray | None) -> np.ndarray:
        if out is None:
            if self._out is None:
                self._out = np.empty(self.shape)
            return self._out
        if not isinstance(out, np.ndarray) or out.dtype != np.float64 or not out.flags.c_contiguous \
                or not out.flags.writeable:
            raise TypeError("out must be a writable C-contiguous float64 numpy array; got "
                            f"{type(out).__name__} {getattr(out, 'dtype', '')}.")
        if out.shape != self.shape:
            raise ValueError(f"out must have shape {self.shape}; got {out.shape}.")
        return out

    def next(self, out: np.ndarray | None = None) -> np.ndarray:
        """The noise of the next step (t = :attr:`step` + 1), written into ``out`` (or the stream's own array)."""
        if self.num_steps is not None and self.step >= self.num_steps:
            raise ValueError(f"the stream has produced all num_steps={self.num_steps} steps.")
        target = self._output(out)
        self.step += 1
        self._advance(self.step, target.reshape(-1))
        return target

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> np.ndarray:
        if self.num_steps is not None and self.step >= self.num_steps:
            raise StopIteration
        return self.next()

    def _chunks(self) -> Any:
        for start in range(0, self.size, self.chunk_size):
            yield start, min(start + self.chunk_size, self.size)

    @abc.abstractmethod
    def _advance(self, t: int, flat: np.ndarray) -> None:
        """Write step t's noise into the flat output."""


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints; got shape={shape!r}.") from None
    for d in dims:
        _check.integer(minimum=0, shape=d)
    return tuple(int(d) for d in dims)


class _HistoryStream(NoiseStream):
    """``xi_t = d_0 Z_t + sum_{1<=j<=K} d_j Z_{t-j}``: a ring of K past normals, or regenerated normals."""

    def __init__(self, strategy: Strategy, shape: Any, source: StepNormals, history: np.ndarray, *,
                 num_steps: int | None, regenerate: bool, scale: float, chunk_size: int) -> None:
        super().__init__(strategy, shape, source, num_steps=num_steps, scale=scale, chunk_size=chunk_size)
        self._d = np.asarray(history, dtype=float)
        self._lags = self._d.size - 1
        self.regenerate = regenerate
        self._ring = np.zeros((0 if regenerate else self._lags, self.size))

    @property
    def buffers(self) -> tuple[np.ndarray, ...]:
        return tuple(row.reshape(self.shape) for row in self._ring)

    def _advance(self, t: int, flat: np.ndarray) -> None:
        # The output first accumulates sum_{j>=1} d_j Z_{t-j} (j = 1, 2, ... in order), then Z_t is drawn (into its
        # ring slot, whose previous content Z_{t-K} has just been read) and d_0 Z_t is added. The buffered and the
        # regenerated paths perform the same floating-point operations in the same order: bit-identical outputs.
        d, k = self._d, self._lags
        lags = min(k, t - 1)  # Z_u = 0 for u <= 0
        regenerate = self.regenerate
        if lags == 0 and k == 0:
            self.source.draw(t, out=flat, generator=self._reusable(0))
            if d[0] != 1.0:
                flat *= d[0]
            if self.scale != 1.0:
                flat *= self.scale
            return
        fresh = self._generator(0, t)
        if lags == 1 and k == 1:  # two bands (lambda-CGD): one fused compiled pass
            kernel = _compiled_two_band()
            if not regenerate:  # chunk by chunk, so the fused pass reads the fresh normals from cache
                ring = self._ring[0]
                for a, b in self._chunks():
                    fresh.standard_normal(out=flat[a:b])
                    kernel(flat[a:b], ring[a:b], d[0], d[1], self.scale, True)
                return
            previous = self._generator(1, t - 1)
            for a, b in self._chunks():
                o, tmp = flat[a:b], self._scratch[: b - a]
                fresh.standard_normal(out=o)
                previous.standard_normal(out=tmp)
                kernel(o, tmp, d[0], d[1], self.scale, False)
            return
        past = [self._generator(j, t - j) for j in range(1, lags + 1)] if regenerate else []
        ring = self._ring
        for a, b in self._chunks():
            o, tmp = flat[a:b], self._scratch[: b - a]
            for j in range(1, lags + 1):
                target = o if j == 1 else tmp
                if regenerate:
                    past[j - 1].standard_normal(out=target)
                    np.multiply(target, d[j], out=target)
                else:
                    np.multiply(ring[(t - j) % k, a:b], d[j], out=target)
                if j > 1:
                    o += tmp
            z = ring[t % k, a:b] if not regenerate else (tmp if lags else o)
            fresh.standard_normal(out=z)
            if lags:
                if d[0] != 1.0:
                    np.multiply(z, d[0], out=tmp)
                    o += tmp
                else:
                    o += z
            elif z is not o:
                np.multiply(z, d[0], out=o)
            elif d[0] != 1.0:
                o *= d[0]
            if self.scale != 1.0:
                o *= self.scale


def _two_band_loop(out: Any, other: Any, d0: Any, d1: Any, scale: Any, store: Any) -> None:  # pragma: no cover
    """``out <- (d0 * out + d1 * other) * scale`` elementwise; with ``store``, ``other <- `` the old ``out``.

    ``out`` holds Z_t and ``other`` Z_{t-1}. Separate multiplications and additions in a fixed order (no fastmath,
    hence no fused multiply-add): the buffered (``store``) and regenerated calls give identical bits.
    """
    for i in range(out.size):
        z = out[i]
        x = (d0 * z + d1 * other[i]) * scale
        if store:
            other[i] = z
        out[i] = x


@functools.cache
def _compiled_two_band() -> Any:
    """:func:`_two_band_loop` compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)(_two_band_loop)


class _SubstitutionStream(NoiseStream):
    """``xi_t = (Z_t - sum_{1<=j<=L} c_j xi_{t-j}) / c_0``: a ring of the last L unscaled noise vectors."""

    def __init__(self, strategy: Strategy, shape: Any, source: StepNormals, coefficients: np.ndarray, *,
                 num_steps: int | None, scale: float, chunk_size: int) -> None:
        super().__init__(strategy, shape, source, num_steps=num_steps, scale=scale, chunk_size=chunk_size)
        self._c = np.asarray(coefficients, dtype=float)
        self._ring = np.zeros((self._c.size - 1, self.size))

    @property
    def buffers(self) -> tuple[np.ndarray, ...]:
        return tuple(row.reshape(self.shape) for row in self._ring)

    def _advance(self, t: int, flat: np.ndarray) -> None:
        c, ring, k = self._c, self._ring, self._ring.shape[0]
        lags = min(k, t - 1)
        fresh = self._generator(0, t)
        for a, b in self._chunks():
            o, tmp = flat[a:b], self._scratch[: b - a]
            fresh.standard_normal(out=o)
            for j in range(1, lags + 1):
                np.multiply(ring[(t - j) % k, a:b], c[j], out=tmp)
                o -= tmp
            if c[0] != 1.0:
                o /= c[0]
            if k:
                ring[t % k, a:b] = o
            if self.scale != 1.0:
                o *= self.scale


class _BLTStream(NoiseStream):
    """``xi_t = Z_t - sum_i omega_i s_i`` and then ``s_i <- theta_i s_i + xi_t`` (k state buffers)."""

    def __init__(self, strategy: Strategy, shape: Any, source: StepNormals, theta: np.ndarray, omega: np.ndarray,
                 *, num_steps: int | None, scale: float, chunk_size: int) -> None:
        super().__init__(strategy, shape, source, num_steps=num_steps, scale=scale, chunk_size=chunk_size)
        self._theta, self._omega = theta, omega
        self._state = np.zeros((theta.size, self.size))

    @property
    def buffers(self) -> tuple[np.ndarray, ...]:
        return tuple(row.reshape(self.shape) for row in self._state)

    def _advance(self, t: int, flat: np.ndarray) -> None:
        self.source.draw(t, out=flat, generator=self._reusable(0))
        _compiled_blt()(flat, self._state, self._theta, self._omega, self.scale)


def _blt_loop(out: Any, state: Any, theta: Any, omega: Any, scale: Any) -> None:  # pragma: no cover
    """One BLT step in place: ``x = z - sum_j omega_j s_j``, then ``s_j <- theta_j s_j + x``; ``out <- x * scale``.

    ``out`` holds Z_t on entry and ``state`` (k, size) the buffers; one pass over all of them, fixed order.
    """
    k = theta.size
    for i in range(out.size):
        x = out[i]
        for j in range(k):
            x -= omega[j] * state[j, i]
        for j in range(k):
            state[j, i] = theta[j] * state[j, i] + x
        out[i] = x * scale


@functools.cache
def _compiled_blt() -> Any:
    """:func:`_blt_loop` compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)(_blt_loop)
