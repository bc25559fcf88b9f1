"""Uniform B-spline bases on an extended grid, their derivatives and their sup-norm constants.

The kan paper (Wang, Schuchardt, Kalinin, et al., arXiv 2605.12648, Section 3.1 and Assumption 3.2) uses a basis
``{b_k}_{k=1..p}`` of B-splines without fixing its order, grid or knots. privdyn uses the convention of the KAN
literature (Liu et al., arXiv 2404.19756): a uniform grid of ``G = grid_size`` intervals of
width ``h = (hi - lo) / G`` on ``interval = (lo, hi)``, extended by ``k = spline_order`` knots on each side, so the
knots are ``lo + (j - k) h`` for ``j = 0, ..., G + 2k`` and there are ``p = G + k`` basis functions of polynomial
*degree* ``k`` (``spline_order=3`` is the cubic basis, ``p = G + 3``).
Basis function ``i`` is the cardinal B-spline ``N_k`` shifted to knot ``i``: ``b_i(v) = N_k((v - knot_i) / h)``.

On ``[lo, hi]`` the basis is a partition of unity; outside the knot span ``[knot_0, knot_{G+2k})`` every function is
zero (the half-open convention of the Cox-de Boor recursion). Every knot span inside ``[lo, hi]`` carries all ``k+1``
polynomial pieces of ``N_k`` (each on a different basis function), so the suprema over ``[lo, hi]`` of the basis and
of its derivatives do not depend on ``G`` except through the factor ``h**-nu``: for the cubic basis they are
``B_b = 2/3``, ``B'_b = 2/(3h)`` and ``B''_b = 2/h**2`` (``2/3``, ``G/3`` and ``G**2/2`` on ``[-1, 1]``).

Evaluation is vectorized over arrays of points by compiled loops (numba): per point, the knot span and the ``k + 1``
nonzero polynomial pieces, from exact rational piece coefficients.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from privdyn import _check

__all__ = ["BSplineBasis", "bspline_bounds", "cardinal_pieces", "num_basis", "MAX_SPLINE_ORDER"]

MAX_SPLINE_ORDER = 20
"""The highest B-spline degree: the exact rational pieces cost O(k³) and their float roots lose accuracy beyond it."""


def num_basis(*, grid_size: int, spline_order: int = 3) -> int:
    """The number ``p = grid_size + spline_order`` of basis functions of the extended uniform grid."""
    _check.scalar(grid_size=grid_size, spline_order=spline_order)
    _check.integer(minimum=1, grid_size=grid_size)
    _check.integer(minimum=0, spline_order=spline_order)
    _check.at_most(MAX_SPLINE_ORDER, spline_order=spline_order)
    return int(grid_size) + int(spline_order)


@functools.lru_cache(maxsize=32)
def _cardinal_pieces_exact(spline_order: int) -> tuple[tuple[Fraction, ...], ...]:
    k = spline_order
    pieces = []
    for q in range(k + 1):
        # N_k(q + t) = (1/k!) sum_{j<=q} (-1)^j C(k+1, j) (q - j + t)^k, expanded in powers of t.
        row = []
        for r in range(k + 1):
            total = Fraction(0)
            for j in range(q + 1):
                total += (-1) ** j * math.comb(k + 1, j) * math.comb(k, r) * Fraction(q - j) ** (k - r)
            row.append(total / math.factorial(k))
        pieces.append(tuple(row))
    return tuple(pieces)


def cardinal_pieces(spline_order: int, derivative: int = 0) -> np.ndarray:
    """The polynomial pieces of the cardinal B-spline ``N_k`` (a fresh array); see :func:`_cardinal_pieces`."""
    _check.scalar(spline_order=spline_order, derivative=derivative)
    _check.integer(minimum=0, spline_order=spline_order, derivative=derivative)
    _check.at_most(MAX_SPLINE_ORDER, spline_order=spline_order)
    return _cardinal_pieces(int(spline_order), int(derivative)).copy()


@functools.lru_cache(maxsize=64)
def _cardinal_pieces(spline_order: int, derivative: int = 0) -> np.ndarray:
    """The polynomial pieces of the cardinal B-spline ``N_k`` (unit knot spacing) or of its derivative.

    Returns an array ``P`` of shape ``(k + 1, k + 1)``: on ``[q, q + 1)`` the ``derivative``-th derivative of ``N_k`` is
    ``sum_r P[q, r] t**r`` with ``t = u - q``. The coefficients come from the truncated-power formula
    ``N_k(u) = (1/k!) sum_j (-1)^j C(k+1, j) (u - j)_+^k`` in exact rational arithmetic.
    """
    exact = _cardinal_pieces_exact(spline_order)
    k = spline_order
    out = np.zeros((k + 1, k + 1))
    for q, row in enumerate(exact):
        coeffs = list(row)
        for _ in range(derivative):
            coeffs = [r * coeffs[r] for r in range(1, len(coeffs))] + [Fraction(0)]
        out[q] = [float(c) for c in coeffs]
    out.setflags(write=False)
    return out


def _piece_sup(coeffs: np.ndarray) -> float:
    """``max_{t in [0, 1]} |sum_r coeffs[r] t**r|``: endpoints and the real critical points in ``(0, 1)``."""
    candidates = [0.0, 1.0]
    deriv = np.array([r * coeffs[r] for r in range(1, len(coeffs))])
    nonzero = np.flatnonzero(deriv)
    if nonzero.size and nonzero[-1] >= 1:
        roots = np.roots(deriv[: nonzero[-1] + 1][::-1])
        real = roots[np.abs(roots.imag) <= 1e-12].real
        candidates.extend(float(t) for t in real if 0.0 < t < 1.0)
    t = np.asarray(candidates)
    return float(np.max(np.abs(np.polynomial.polynomial.polyval(t, coeffs))))


def _cardinal_sup(spline_order: int, derivative: int) -> float:
    pieces = _cardinal_pieces(spline_order, derivative)
    return max(_piece_sup(row) for row in pieces)


def bspline_bounds(*, grid_size: int, spline_order: int = 3,
                   interval: tuple[float, float] = (-1.0, 1.0)) -> tuple[float, float, float]:
    """The suprema ``(B_b, B'_b, B''_b)`` of ``|b_k|``, ``|b'_k|``, ``|b''_k|`` over ``interval`` and ``k``.

    These are the basis constants of Assumption 3.2 of the kan paper (arXiv 2605.12648), for the uniform extended grid
    described in the module docstring. Since every knot span of ``interval`` carries every polynomial piece of the
    cardinal B-spline, the suprema are those of ``N_k`` and its derivatives, scaled by ``h**-nu`` with
    ``h = (hi - lo) / grid_size``. Closed forms are used for orders 0-3 (cubic: ``2/3``, ``2/(3h)``, ``2/h**2``, i.e.
    ``2/3``, ``G/3``, ``G**2/2`` on ``[-1, 1]``); higher orders are computed piece by
    piece, from the exact rational piece coefficients, at the endpoints and at the real critical points of each piece.

    Where a derivative jumps at a knot (degree ``<= nu``), the supremum is that of the piecewise derivative, one-sided
    limits included; for degree ``< nu`` the piecewise derivative is zero.

    Args:
        grid_size: number ``G >= 1`` of grid intervals on ``interval``.
        spline_order: polynomial degree ``k`` of the B-splines (3 = cubic), in [0, :data:`MAX_SPLINE_ORDER`].
        interval: ``(lo, hi)`` with ``lo < hi``, finite.

    Returns:
        ``(value_bound, first_derivative_bound, second_derivative_bound)``.
    """
    _check.scalar(grid_size=grid_size, spline_order=spline_order)
    _check.integer(minimum=1, grid_size=grid_size)
    _check.integer(minimum=0, spline_order=spline_order)
    _check.at_most(MAX_SPLINE_ORDER, spline_order=spline_order)
    lo, hi = _interval(interval)
    k = int(spline_order)
    h = (hi - lo) / int(grid_size)
    closed = {0: (1.0, 0.0, 0.0), 1: (1.0, 1.0, 0.0), 2: (0.75, 1.0, 2.0), 3: (2.0 / 3.0, 2.0 / 3.0, 2.0)}
    if k in closed:
        value, first, second = closed[k]
    else:
        value, first, second = (_cardinal_sup(k, nu) for nu in (0, 1, 2))
    return value, first / h, second / h**2


def _interval(interval: tuple[float, float]) -> tuple[float, float]:
    try:
        lo, hi = interval
    except (TypeError, ValueError):
        raise TypeError(f"interval must be a pair (lo, hi); got interval={interval!r}.") from None
    _check.finite(interval=_check.real_array(interval=[lo, hi]))
    if not lo < hi:
        raise ValueError(f"interval must satisfy lo < hi; got interval={interval!r}.")
    return float(lo), float(hi)


@dataclasses.dataclass(frozen=True)
class BSplineBasis:
    """The ``p = grid_size + spline_order`` uniform B-splines of degree ``spline_order`` on an extended grid.

    ``evaluate(v)`` returns ``h(v) = [b_1(v), ..., b_p(v)]`` along a new last axis (the vector ``h`` of the kan paper,
    arXiv 2605.12648, Appendix B), vectorized over any array ``v``. See the module docstring for the knots.
    """

    grid_size: int = 5
    spline_order: int = 3
    interval: tuple[float, float] = (-1.0, 1.0)

    def __post_init__(self) -> None:
        _check.scalar(grid_size=self.grid_size, spline_order=self.spline_order)
        _check.integer(minimum=1, grid_size=self.grid_size)
        _check.integer(minimum=0, spline_order=self.spline_order)
        _check.at_most(MAX_SPLINE_ORDER, spline_order=self.spline_order)
        object.__setattr__(self, "interval", _interval(self.interval))
        object.__setattr__(self, "grid_size", int(self.grid_size))
        object.__setattr__(self, "spline_order", int(self.spline_order))

    @property
    def num_basis(self) -> int:
        """``p = grid_size + spline_order``."""
        return self.grid_size + self.spline_order

    @property
    def spacing(self) -> float:
        """The knot spacing ``h = (hi - lo) / grid_size``."""
        lo, hi = self.interval
        return (hi - lo) / self.grid_size

    @property
    def knots(self) -> np.ndarray:
        """The ``grid_size + 2 spline_order + 1`` knots ``lo + (j - spline_order) h``."""
        lo, _ = self.interval
        k = self.spline_order
        return lo + (np.arange(self.grid_size + 2 * k + 1) - k) * self.spacing

    def bounds(self) -> tuple[float, float, float]:
        """``(B_b, B'_b, B''_b)`` over ``interval``; see :func:`bspline_bounds`."""
        return bspline_bounds(grid_size=self.grid_size, spline_order=self.spline_order, interval=self.interval)

    def evaluate(self, v: np.ndarray, derivative: int = 0) -> np.ndarray:
        """``d^nu/dv^nu h(v)`` with shape ``v.shape + (p,)`` (``nu = derivative``; zero outside the knot span)."""
        return self.evaluate_derivatives(v, max_derivative=int(derivative))[-1]

    def evaluate_derivatives(self, v: np.ndarray, max_derivative: int = 2) -> list[np.ndarray]:
        """``[h(v), h'(v), ..., h^(max_derivative)(v)]``, each of shape ``v.shape + (p,)``, sharing the knot search.

        At a knot the right-hand piece is used (one-sided derivative where the derivative jumps). One compiled pass
        over the points: per point, the span and the ``spline_order + 1`` nonzero pieces.
        """
        _check.integer(minimum=0, max_derivative=max_derivative)
        v = np.asarray(v, dtype=np.float64)
        _check.finite(v=v)
        k, p = self.spline_order, self.num_basis
        nu_max = int(max_derivative)
        pieces = np.stack([_cardinal_pieces(k, nu) * self.spacing**-nu for nu in range(nu_max + 1)])
        out = np.zeros((nu_max + 1, v.size, p))
        _compiled("basis")(np.ascontiguousarray(v.reshape(-1)), pieces, float(self.knots[0]), 1.0 / self.spacing,
                           self.num_spans, out)
        return [out[nu].reshape(v.shape + (p,)) for nu in range(nu_max + 1)]

    @property
    def num_spans(self) -> int:
        """``grid_size + 2 spline_order``: the knot spans of the extended grid."""
        return self.grid_size + 2 * self.spline_order

    def span_polynomials(self, coefficients: np.ndarray) -> np.ndarray:
        """The polynomial pieces of the splines ``S(v) = sum_k coefficients[..., k] b_k(v)``, span by span.

        Returns ``Q`` of shape ``coefficients.shape[:-1] + (num_spans, spline_order + 1)``: on span ``s``
        (``knot_s <= v < knot_{s+1}``), ``S(v) = sum_q Q[..., s, q] t**q`` with ``t = (v - knot_s) / h``.
        """
        c = np.asarray(coefficients, dtype=np.float64)
        k, p = self.spline_order, self.num_basis
        if c.ndim < 1 or c.shape[-1] != p:
            raise ValueError(f"coefficients must have last axis of length {p}; got shape {c.shape}.")
        _check.finite(coefficients=c)
        padded = np.zeros(c.shape[:-1] + (p + 2 * k,))
        padded[..., k: k + p] = c
        # On span s, basis function s - k + r (padded index s + r) carries piece k - r of N_k.
        windows = np.lib.stride_tricks.sliding_window_view(padded, k + 1, axis=-1)  # (..., num_spans, k+1)
        return windows @ _cardinal_pieces(k, 0)[::-1]

    def evaluate_splines(self, v: np.ndarray, span_polynomials: np.ndarray,
                         max_derivative: int = 1) -> list[np.ndarray]:
        """``[S_j(v[..., j]), S_j'(v[..., j]), ...]`` for ``m`` splines ``S_j`` given by :meth:`span_polynomials`.

        ``span_polynomials`` has shape ``(m, num_spans, spline_order + 1)`` and ``v`` shape ``(..., m)``: spline ``j``
        is evaluated at the entries ``v[..., j]``, without forming the ``(..., m, p)`` basis array (one compiled pass:
        per entry, the span's polynomial by Horner's rule). Zero outside the knot span; at a knot, the right piece.
        """
        _check.integer(minimum=0, max_derivative=max_derivative)
        q = np.asarray(span_polynomials, dtype=np.float64)
        k, num_spans = self.spline_order, self.num_spans
        if q.ndim != 3 or q.shape[1:] != (num_spans, k + 1):
            raise ValueError(f"span_polynomials must have shape (m, {num_spans}, {k + 1}); got shape {q.shape}.")
        v = np.asarray(v, dtype=np.float64)
        m = q.shape[0]
        if v.ndim < 1 or v.shape[-1] != m:
            raise ValueError(f"v must have last axis of length {m} (one column per spline); got shape {v.shape}.")
        _check.finite(v=v)
        nu_max = int(max_derivative)
        # d^nu/dt^nu sum_q Q_q t^q = sum_{q >= nu} q!/(q-nu)! Q_q t^(q-nu), divided by h^nu for d/dv.
        factors = np.array([[math.perm(power, nu) * self.spacing**-nu for power in range(k + 1)]
                            for nu in range(nu_max + 1)])
        out = np.zeros((nu_max + 1,) + v.shape)
        _compiled("splines")(np.ascontiguousarray(v.reshape(-1, m)), np.ascontiguousarray(q), factors,
                             float(self.knots[0]), 1.0 / self.spacing, out.reshape(nu_max + 1, -1, m))
        return list(out)


def _basis_loop(v: Any, pieces: Any, knot0: Any, inv_h: Any, num_spans: Any, out: Any) -> None:  # pragma: no cover
    """``out[nu, n, i] = b_i^(nu)(v[n])``: basis function ``span - k + r`` carries piece ``k - r`` on ``span``."""
    num_deriv, k1 = pieces.shape[0], pieces.shape[1]
    k = k1 - 1
    p = out.shape[2]
    for n in range(v.size):
        x = (v[n] - knot0) * inv_h
        span = np.floor(x)
        if span < 0 or span >= num_spans:
            continue
        t = x - span
        s = int(span)
        for r in range(k1):
            i = s - k + r
            if i < 0 or i >= p:
                continue
            for nu in range(num_deriv):
                acc = pieces[nu, k - r, k]
                for power in range(k - 1, -1, -1):
                    acc = acc * t + pieces[nu, k - r, power]
                out[nu, n, i] = acc


def _splines_loop(v: Any, table: Any, factors: Any, knot0: Any, inv_h: Any, out: Any) -> None:  # pragma: no cover
    """``out[nu, n, j] = S_j^(nu)(v[n, j])`` from the span polynomials ``table[j, span, power]`` (Horner)."""
    num_rows, m = v.shape
    num_spans, k1 = table.shape[1], table.shape[2]
    k = k1 - 1
    num_deriv = factors.shape[0]
    for n in range(num_rows):
        for j in range(m):
            x = (v[n, j] - knot0) * inv_h
            span = np.floor(x)
            if span < 0 or span >= num_spans:
                continue
            t = x - span
            s = int(span)
            for nu in range(num_deriv):
                if nu > k:
                    break
                acc = table[j, s, k] * factors[nu, k]
                for power in range(k - 1, nu - 1, -1):
                    acc = acc * t + table[j, s, power] * factors[nu, power]
                out[nu, n, j] = acc


@functools.cache
def _compiled(name: str) -> Any:
    """The loop ``name`` compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)({"basis": _basis_loop, "splines": _splines_loop}[name])
