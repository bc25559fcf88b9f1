"""Renyi and Kullback-Leibler divergences between Gaussian laws, dense and diagonal plus low rank.

Argument order. Every function computes a divergence of ``P = N(mean1, cov1)`` from ``Q = N(mean2, cov2)``::

    D_alpha(P || Q) = log( integral p(x)^alpha q(x)^(1 - alpha) dx ) / (alpha - 1).

For Gaussians (Gil, Alajaji & Linder 2013, Information Sciences 249, multivariate normal entry of their
table), with ``Delta = mean1 - mean2`` and the mixture ``S_a = alpha * cov2 + (1 - alpha) * cov1``::

    D_alpha(P || Q) = alpha/2 * Delta^T S_a^{-1} Delta
                      - log( det S_a / (det cov1^(1 - alpha) * det cov2^alpha) ) / (2 (alpha - 1))

when ``S_a`` is positive definite, and ``+inf`` otherwise (the integral diverges). Derivation: the exponent of
``p^alpha q^(1-alpha)`` has precision ``A = alpha cov1^{-1} + (1 - alpha) cov2^{-1}``, which equals
``cov1^{-1} S_a cov2^{-1}``; in the basis that whitens cov1 and diagonalizes cov2 (eigenvalues ``l_i``),
``A`` and ``S_a`` are both diagonal, with entries of the sign of ``alpha l_i + 1 - alpha``, so the Gaussian
integral is finite exactly when ``S_a`` is positive definite, and completing the square gives the formula.
Equal covariances give Mironov's Gaussian RDP ``alpha Delta^T cov^{-1} Delta / 2`` (Mironov 2017,
arXiv:1702.07476v3, Table II, Gaussian mechanism).

**The hsgd paper (seed 000, Lemma C.2 and eqs. 14, 20, 23) prints this formula with its arguments swapped**:
its ``M_alpha = alpha Sigma_1 + (1 - alpha) Sigma_2`` gives ``D_alpha(Q || P)``. The paper's number for a pair
is ``renyi_gaussian(a, mean1=mean2, cov1=cov2, mean2=mean1, cov2=cov1)``. Accounting that takes the supremum
over both orders (:func:`renyi_gaussian_symmetric_sup`) does not depend on the convention.

Numerics. No log-determinant is subtracted from another large one. Both covariances are whitened by cov1: the
eigenvalues ``x_i`` of ``E = L1^{-1} (cov2 - cov1) L1^{-T}`` (``L1`` the Cholesky factor of cov1, ``E`` formed
from the *difference* of the covariances) give the log-determinant term as a sum over ``i`` of::

    -(log(1 + alpha x) - alpha log(1 + x)) / (2 (alpha - 1))
        = ( [log(1 + x) - x / (1 + x)] - [log(1 + y) - y] / (alpha - 1) ) / 2,   y = (alpha - 1) x / (1 + x),

where the first bracket is >= 0 and the second <= 0: a sum of non-negative terms, each evaluated by a Taylor
series for small arguments. The value keeps its relative accuracy when the divergence is tiny (``cov2 = cov1
(1 + 1e-10)``) and as ``renyi_order -> 1``, where the same terms give the Kullback-Leibler divergence.

Diagonal plus low rank (:class:`DiagonalPlusLowRank`): the capacitance matrices of Woodbury's identity and of
the matrix determinant lemma are formed from a thin QR factorization of the whitened factors, at cost O(d r^2
+ r^3). When both laws share their diagonal (the hsgd neighbour laws, seed 000 section 4.2), the whitened
covariances differ only on the span of the factors, and the divergence is computed *exactly* as a dense
divergence in that (r1 + r2)-dimensional subspace plus the mean gap orthogonal to it, with the accuracy of the
dense path.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, cast

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

from privdyn import _check

__all__ = [
    "DiagonalPlusLowRank",
    "renyi_gaussian",
    "kl_gaussian",
    "renyi_gaussian_lowrank",
    "kl_gaussian_lowrank",
    "renyi_gaussian_symmetric_sup",
]

# Below this magnitude the helpers below switch to their Taylor series; above it the direct formula loses at
# most a factor 2/0.1 = 20 to cancellation (relative error ~ 5e-15).
_SERIES_CUTOFF = 0.1
# Terms of the series: 0.1**24 is far below the double-precision unit relative to the leading x**2 term.
_SERIES_TERMS = 26
# Relative asymmetry tolerated in a dense covariance (then symmetrized).
_SYMMETRY_RTOL = 1e-10
# A mixture eigenvalue 1 + t must exceed this times (1 + |t|) to count as positive (32 units of rounding).
_PD_RTOL = 32 * np.finfo(float).eps


# ----------------------------------------------------------------------------------------------------
# Log-space kernels
# ----------------------------------------------------------------------------------------------------


def _log1p_minus_identity(y: np.ndarray) -> np.ndarray:
    """``log(1 + y) - y`` for ``y > -1`` (non-positive), accurate also for tiny ``|y|``. Shapes: (n,)."""
    y = np.asarray(y, dtype=float)
    out = np.empty_like(y)
    small = np.abs(y) <= _SERIES_CUTOFF
    ys = y[small]
    acc = np.zeros_like(ys)
    # sum_{k>=2} (-1)^(k+1) y^k / k, by Horner's rule in y on the coefficients of y^(k-2).
    for k in range(_SERIES_TERMS + 1, 1, -1):
        acc = acc * ys + (-1.0) ** (k + 1) / k
    out[small] = acc * ys * ys
    yl = y[~small]
    out[~small] = np.log1p(yl) - yl
    return out


def _log1p_minus_ratio(x: np.ndarray) -> np.ndarray:
    """``log(1 + x) - x / (1 + x)`` for ``x > -1`` (non-negative), accurate also for tiny ``|x|``.

    It is twice the Kullback-Leibler divergence of two centred Gaussians with variance ratio ``1 + x`` (apart
    from the mean term). Shapes: (n,) -> (n,).
    """
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = np.abs(x) <= _SERIES_CUTOFF
    xs = x[small]
    acc = np.zeros_like(xs)
    # sum_{k>=2} (-1)^k (k-1)/k x^k.
    for k in range(_SERIES_TERMS + 1, 1, -1):
        acc = acc * xs + (-1.0) ** k * (k - 1) / k
    out[small] = acc * xs * xs
    xl = x[~small]
    out[~small] = np.log1p(xl) - xl / (1.0 + xl)
    return out


def _renyi_logdet_terms(alpha: float, x: np.ndarray) -> np.ndarray:
    """Per-eigenvalue terms of the log-determinant part of ``D_alpha``; each is >= 0.

    ``-(log(1 + alpha x) - alpha log(1 + x)) / (2 (alpha - 1))`` for eigenvalues ``x`` of the whitened
    covariance difference, requiring ``1 + alpha x > 0``. Shapes: (n,) -> (n,).
    """
    x = np.asarray(x, dtype=float)
    beta = alpha - 1.0
    y = beta * x / (1.0 + x)
    return 0.5 * (_log1p_minus_ratio(x) - _log1p_minus_identity(y) / beta)


def _fsum(*arrays: Any) -> float:
    return math.fsum(float(v) for a in arrays for v in np.ravel(a))


# ----------------------------------------------------------------------------------------------------
# Divergences from the whitened spectrum
# ----------------------------------------------------------------------------------------------------


def _whitened_spectrum(chol1: np.ndarray, diff: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues ``x`` of ``E = L1^{-1} diff L1^{-T}`` and the mean gap ``w = V^T L1^{-1} delta``.

    ``V`` holds the eigenvectors of ``E``; ``chol1`` is the lower Cholesky factor of cov1,
    ``diff = cov2 - cov1`` and ``delta = mean1 - mean2``.
    Shapes: (p, p), (p, p), (p,) -> (p,), (p,).
    """
    if chol1.shape[0] == 0:
        return np.zeros(0), np.zeros(0)
    half = scipy.linalg.solve_triangular(chol1, diff, lower=True)
    whitened = scipy.linalg.solve_triangular(chol1, half.T, lower=True)
    whitened = 0.5 * (whitened + whitened.T)
    x, vecs = np.linalg.eigh(whitened)
    w = vecs.T @ scipy.linalg.solve_triangular(chol1, delta, lower=True)
    return x, w


def _positive_beyond_rounding(one_plus: np.ndarray, magnitude: np.ndarray) -> bool:
    """Whether every ``1 + t`` (given with ``|t|``) is positive by more than its rounding error.

    Eigenvalues of a mixture within rounding error of 0 count as not positive definite: the divergence is then
    reported as ``inf``, the conservative side, rather than as a huge number that rounding made finite.
    """
    return bool(np.all(one_plus > _PD_RTOL * (1.0 + magnitude)))


def _renyi_from_spectrum(alpha: float, x: np.ndarray, w: np.ndarray) -> float:
    """``D_alpha`` from the whitened spectrum ``x`` and the mean gap ``w`` in its eigenbasis."""
    mix = 1.0 + alpha * x
    if not _positive_beyond_rounding(mix, alpha * np.abs(x)):
        return math.inf
    mean_term = 0.5 * alpha * _fsum(w * w / mix)
    return mean_term + _fsum(_renyi_logdet_terms(alpha, x))


def _kl_from_spectrum(x: np.ndarray, w: np.ndarray) -> float:
    """``KL(P || Q)`` from the whitened spectrum (the ``alpha -> 1`` limit of ``_renyi_from_spectrum``)."""
    ratio = 1.0 + x
    if not _positive_beyond_rounding(ratio, np.abs(x)):
        return math.inf
    return 0.5 * _fsum(w * w / ratio, _log1p_minus_ratio(x))


# ----------------------------------------------------------------------------------------------------
# Validation of dense inputs
# ----------------------------------------------------------------------------------------------------


def _renyi_order(renyi_order: Any) -> float:
    _check.scalar(renyi_order=renyi_order)
    _check.in_range(1.0, math.inf, closed="neither", renyi_order=renyi_order)
    return float(renyi_order)


def _vector(name: str, value: Any, dim: int | None = None, like: str = "") -> np.ndarray:
    if isinstance(value, DiagonalPlusLowRank):
        raise TypeError(f"{name} must be an array of shape (d,); got a DiagonalPlusLowRank.")
    _check.finite(**{name: value})
    arr = np.array(value, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a 1-D array of shape (d,), d >= 1; got an array of shape {arr.shape}.")
    if dim is not None and arr.shape != (dim,):
        raise ValueError(f"{name} must have shape ({dim},) like {like}; got {name} of shape {arr.shape}.")
    return arr


def _dense_covariance(name: str, value: Any, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Validated symmetric positive-definite matrix and its lower Cholesky factor."""
    if isinstance(value, DiagonalPlusLowRank):
        raise TypeError(
            f"{name} is a DiagonalPlusLowRank; use renyi_gaussian_lowrank / kl_gaussian_lowrank, or pass "
            f"{name}.dense()."
        )
    _check.finite(**{name: value})
    arr = np.array(value, dtype=float)
    if arr.shape != (dim, dim):
        raise ValueError(f"{name} must have shape ({dim}, {dim}) to match the means; got shape {arr.shape}.")
    asym = float(np.max(np.abs(arr - arr.T)))
    size = float(np.max(np.abs(arr)))
    if asym > _SYMMETRY_RTOL * size:
        raise ValueError(
            f"{name} must be symmetric (|{name} - {name}.T| <= {_SYMMETRY_RTOL:g} max|{name}|); "
            f"got max|{name} - {name}.T| = {asym:.3g}."
        )
    arr = 0.5 * (arr + arr.T)
    try:
        chol = scipy.linalg.cholesky(arr, lower=True)
    except np.linalg.LinAlgError:
        smallest = float(np.linalg.eigvalsh(arr)[0])
        raise ValueError(
            f"{name} must be positive definite; got {name} with smallest eigenvalue {smallest:.6g}."
        ) from None
    return arr, chol


def _dense_inputs(
    mean1: Any, cov1: Any, mean2: Any, cov2: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validated (mean1, cov1, chol(cov1), mean2, cov2, chol(cov2))."""
    m1 = _vector("mean1", mean1)
    m2 = _vector("mean2", mean2, m1.size, "mean1")
    c1, chol1 = _dense_covariance("cov1", cov1, m1.size)
    c2, chol2 = _dense_covariance("cov2", cov2, m1.size)
    return m1, c1, chol1, m2, c2, chol2


# ----------------------------------------------------------------------------------------------------
# Dense public API
# ----------------------------------------------------------------------------------------------------


def renyi_gaussian(renyi_order: float, *, mean1: ArrayLike, cov1: ArrayLike, mean2: ArrayLike,
                   cov2: ArrayLike) -> float:
    """Renyi divergence ``D_alpha(N(mean1, cov1) || N(mean2, cov2))`` of order ``alpha = renyi_order > 1``.

    Implements the Gaussian formula of Gil, Alajaji & Linder (2013) with the mixture
    ``Sigma_alpha = alpha * cov2 + (1 - alpha) * cov1`` (see the module docstring for the derivation, and for
    the argument order, which the hsgd paper, seed 000 Lemma C.2, prints swapped). Equal covariances give
    ``alpha * (mean1 - mean2)^T cov^{-1} (mean1 - mean2) / 2`` (Mironov 2017, arXiv:1702.07476v3, Table II).

    Shapes: mean1, mean2 (d,); cov1, cov2 (d, d) symmetric positive definite -> float.

    Args:
        renyi_order: the order alpha, a real number > 1 (use :func:`kl_gaussian` for alpha = 1).
        mean1, cov1: the law P (first argument of the divergence).
        mean2, cov2: the law Q (second argument).

    Returns:
        The divergence, >= 0; ``math.inf`` when ``Sigma_alpha`` is not positive definite (then the integral of
        ``p^alpha q^(1-alpha)`` diverges; in 1-D this happens when ``cov1 > cov2`` and
        ``alpha >= cov1 / (cov1 - cov2)``). A whitened mixture eigenvalue within rounding error of 0
        (``1 + alpha x <= 32 eps (1 + alpha |x|)``) also gives ``inf``: the conservative side, rather than a huge
        number that rounding happened to make finite.

    Formal guarantees:
        Exact (label ``exact``) up to floating-point rounding; relative accuracy is kept for tiny divergences
        (nearly equal covariances) and for orders close to 1. Cost O(d^3).

    Raises:
        ValueError: a non-finite or out-of-range order, mismatched shapes, a non-symmetric or
            non-positive-definite covariance.
        TypeError: a non-scalar order or a :class:`DiagonalPlusLowRank` covariance.
    """
    alpha = _renyi_order(renyi_order)
    m1, c1, chol1, m2, c2, _ = _dense_inputs(mean1, cov1, mean2, cov2)
    x, w = _whitened_spectrum(chol1, c2 - c1, m1 - m2)
    return _renyi_from_spectrum(alpha, x, w)


def kl_gaussian(*, mean1: ArrayLike, cov1: ArrayLike, mean2: ArrayLike, cov2: ArrayLike) -> float:
    """Kullback-Leibler divergence ``KL(N(mean1, cov1) || N(mean2, cov2))``.

    ``(tr(cov2^{-1} cov1) - d + Delta^T cov2^{-1} Delta + log det cov2 - log det cov1) / 2``, the ``alpha ->
    1`` limit of :func:`renyi_gaussian`, evaluated through the whitened spectrum (no difference of
    log-determinants).

    Shapes: mean1, mean2 (d,); cov1, cov2 (d, d) symmetric positive definite -> float.

    Formal guarantees:
        Exact (label ``exact``) up to floating-point rounding. Cost O(d^3).
    """
    m1, c1, chol1, m2, c2, _ = _dense_inputs(mean1, cov1, mean2, cov2)
    x, w = _whitened_spectrum(chol1, c2 - c1, m1 - m2)
    return _kl_from_spectrum(x, w)


# ----------------------------------------------------------------------------------------------------
# Diagonal plus low rank
# ----------------------------------------------------------------------------------------------------


def _triangular_factor(columns: np.ndarray) -> np.ndarray:
    """R of a thin Householder QR of ``columns`` (d, k): shape (min(d, k), k), with ``columns = Q R``."""
    if columns.shape[1] == 0:
        return np.zeros((0, 0))
    return np.asarray(np.linalg.qr(columns, mode="r"))


def _core_eigen(r_factor: np.ndarray, coefficients: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of the symmetric capacitance core ``K = R diag(c) R^T`` (p, p).

    For ``M = diag(D) + F diag(c) F^T`` and ``D^{-1/2} F = Q R``: ``M = D^{1/2} (I + Q K Q^T) D^{1/2}``, so
    M is positive definite iff every eigenvalue of K is > -1, and
    ``log det M = sum(log D) + sum(log1p(eigenvalues of K))``.
    """
    core = (r_factor * coefficients) @ r_factor.T
    return np.linalg.eigh(0.5 * (core + core.T))


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=float, copy=True)
    arr.flags.writeable = False
    return arr


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class DiagonalPlusLowRank:
    """A symmetric positive-definite matrix ``diag(diagonal) + factor @ diag(coefficients) @ factor.T``.

    The representation of the hsgd neighbour covariances (seed 000, section 4.2: ``V_i = D + U_i S_i U_i^T``;
    a symmetric non-diagonal core ``S_i`` is handled by :meth:`from_symmetric_core`). Coefficients may be
    negative or zero as long as the whole matrix is positive definite; the diagonal must be positive. The
    arrays are copied and made read-only. Instances compare and hash by identity.

    Shapes: diagonal (d,), factor (d, r), coefficients (r,); r may be 0.

    Raises:
        ValueError: non-finite entries, a non-positive diagonal entry, mismatched shapes, or a matrix that
            is not positive definite (checked in O(d r^2 + r^3) through the capacitance matrix).
    """

    diagonal: np.ndarray
    factor: np.ndarray
    coefficients: np.ndarray

    def __post_init__(self) -> None:
        _check.positive(diagonal=self.diagonal)
        _check.finite(factor=self.factor, coefficients=self.coefficients)
        diagonal = _readonly(self.diagonal)
        factor = _readonly(self.factor)
        coefficients = _readonly(self.coefficients)
        if diagonal.ndim != 1 or diagonal.size == 0:
            raise ValueError(f"diagonal must be a 1-D array of shape (d,), d >= 1; got shape {diagonal.shape}.")
        d = diagonal.size
        if factor.ndim != 2 or factor.shape[0] != d:
            raise ValueError(f"factor must have shape ({d}, r) to match diagonal; got shape {factor.shape}.")
        r = factor.shape[1]
        if coefficients.shape != (r,):
            raise ValueError(
                f"coefficients must have shape ({r},) to match the columns of factor; got shape {coefficients.shape}."
            )
        inv_sqrt = 1.0 / np.sqrt(diagonal)
        eigvals, _ = _core_eigen(_triangular_factor(factor * inv_sqrt[:, None]), coefficients)
        if np.any(~(1.0 + eigvals > 0.0)):
            smallest = float(np.min(1.0 + eigvals))
            raise ValueError(
                "diag(diagonal) + factor @ diag(coefficients) @ factor.T must be positive definite; got a "
                "matrix whose whitened capacitance I + C F^T D^-1 F has smallest eigenvalue "
                f"{smallest:.6g} (must be > 0)."
            )
        object.__setattr__(self, "diagonal", diagonal)
        object.__setattr__(self, "factor", factor)
        object.__setattr__(self, "coefficients", coefficients)
        object.__setattr__(self, "_inv_sqrt_diagonal", inv_sqrt)
        object.__setattr__(self, "_capacitance_eigvals", eigvals)
        object.__setattr__(self, "_log_diagonal_sum", _fsum(np.log(diagonal)))

    @classmethod
    def from_symmetric_core(cls, *, diagonal: np.ndarray, factor: ArrayLike, core: ArrayLike) -> DiagonalPlusLowRank:
        """``diag(diagonal) + factor @ core @ factor.T`` for a symmetric ``core`` (r, r), e.g. hsgd's ``S_i``.

        The core is diagonalized (``core = V diag(c) V^T``), giving ``factor @ V`` and coefficients ``c``.
        """
        _check.finite(core=core)
        core_arr = np.asarray(core, dtype=float)
        factor_arr = np.asarray(factor, dtype=float)
        if core_arr.ndim != 2 or core_arr.shape[0] != core_arr.shape[1]:
            raise ValueError(f"core must be a square (r, r) array; got shape {core_arr.shape}.")
        if factor_arr.ndim != 2 or factor_arr.shape[1] != core_arr.shape[0]:
            raise ValueError(
                f"factor must have shape (d, {core_arr.shape[0]}) to match core; got shape {factor_arr.shape}."
            )
        asym = float(np.max(np.abs(core_arr - core_arr.T), initial=0.0))
        if asym > _SYMMETRY_RTOL * float(np.max(np.abs(core_arr), initial=0.0)):
            raise ValueError(f"core must be symmetric; got max|core - core.T| = {asym:.3g}.")
        coefficients, vecs = np.linalg.eigh(0.5 * (core_arr + core_arr.T))
        return cls(diagonal=diagonal, factor=factor_arr @ vecs, coefficients=coefficients)

    @property
    def dim(self) -> int:
        """The dimension d."""
        return int(self.diagonal.size)

    @property
    def rank(self) -> int:
        """The number r of low-rank terms (columns of ``factor``)."""
        return int(self.factor.shape[1])

    def dense(self) -> np.ndarray:
        """The (d, d) matrix (for tests and small d)."""
        return np.diag(self.diagonal) + (self.factor * self.coefficients) @ self.factor.T

    def _logdet_capacitance(self) -> float:
        return _fsum(np.log1p(self._capacitance_eigvals))  # type: ignore[attr-defined]

    def logdet(self) -> float:
        """``log det``: ``sum(log diagonal) + log det(I + C F^T D^{-1} F)`` (matrix determinant lemma)."""
        return self._log_diagonal_sum + self._logdet_capacitance()  # type: ignore[attr-defined]

    @functools.cached_property
    def _woodbury(self) -> tuple[np.ndarray, np.ndarray]:
        """Orthonormal B (d, p) and weights w (p,): ``M^{-1} = D^{-1/2} (I - B diag(w) B^T) D^{-1/2}``."""
        whitened = self.factor * self._inv_sqrt_diagonal[:, None]  # type: ignore[attr-defined]
        if whitened.shape[1] == 0:
            return np.zeros((self.dim, 0)), np.zeros(0)
        q, r = np.linalg.qr(whitened)
        eigvals, vecs = _core_eigen(r, self.coefficients)
        return q @ vecs, eigvals / (1.0 + eigvals)

    def solve(self, v: ArrayLike) -> np.ndarray:
        """``M^{-1} v`` by Woodbury's identity, O(d r) per right-hand side. Shapes: (d,) or (d, k) -> same."""
        _check.finite(v=v)
        arr = np.asarray(v, dtype=float)
        if arr.ndim not in (1, 2) or arr.shape[0] != self.dim:
            raise ValueError(f"v must have shape ({self.dim},) or ({self.dim}, k); got shape {arr.shape}.")
        basis, weights = self._woodbury
        scale = self._inv_sqrt_diagonal  # type: ignore[attr-defined]
        if arr.ndim == 2:
            scale = scale[:, None]
            weights = weights[:, None]
        u = arr * scale
        return (u - basis @ (weights * (basis.T @ u))) * scale


def _lowrank_inputs(mean1: Any, cov1: Any, mean2: Any, cov2: Any) -> tuple[np.ndarray, np.ndarray]:
    for name, cov in (("cov1", cov1), ("cov2", cov2)):
        if not isinstance(cov, DiagonalPlusLowRank):
            raise TypeError(
                f"{name} must be a DiagonalPlusLowRank; got {type(cov).__name__} (use renyi_gaussian / "
                "kl_gaussian for dense matrices)."
            )
    if cov2.dim != cov1.dim:
        raise ValueError(f"cov2 must have dimension {cov1.dim} like cov1; got cov2 of dimension {cov2.dim}.")
    m1 = _vector("mean1", mean1, cov1.dim, "cov1")
    m2 = _vector("mean2", mean2, cov1.dim, "cov1")
    return m1, m2


@dataclasses.dataclass(frozen=True)
class _Reduced:
    """Two laws with a common diagonal, reduced exactly to the span of their whitened factors and mean gap."""

    cov1: np.ndarray  # (p, p)
    cov2: np.ndarray  # (p, p)
    diff: np.ndarray  # cov2 - cov1, formed from the low-rank parts only
    delta: np.ndarray  # (p,) whitened mean gap

    def swapped(self) -> _Reduced:
        return _Reduced(self.cov2, self.cov1, -self.diff, -self.delta)


def _reduce_common_diagonal(
    m1: np.ndarray, cov1: DiagonalPlusLowRank, m2: np.ndarray, cov2: DiagonalPlusLowRank
) -> _Reduced:
    """Whiten by the common diagonal D and take one thin QR of ``[U1 U2 Delta] / sqrt(D)``.

    In the orthonormal basis Q of that span, ``D^{-1/2} cov_i D^{-1/2} = I + Q (R_i C_i R_i^T) Q^T`` and
    the whitened mean gap is ``Q t``; on the orthogonal complement both whitened covariances are the identity
    and the mean gap is 0, so the divergence equals the dense divergence of the (p, p) laws
    ``(t, I + R_i C_i R_i^T)``, with p <= r1 + r2 + 1.
    """
    inv_sqrt = 1.0 / np.sqrt(cov1.diagonal)
    r1, r2 = cov1.rank, cov2.rank
    stacked = np.hstack([cov1.factor, cov2.factor, (m1 - m2)[:, None]]) * inv_sqrt[:, None]
    r = _triangular_factor(stacked)
    low1 = (r[:, :r1] * cov1.coefficients) @ r[:, :r1].T
    low2 = (r[:, r1 : r1 + r2] * cov2.coefficients) @ r[:, r1 : r1 + r2].T
    low1 = 0.5 * (low1 + low1.T)
    low2 = 0.5 * (low2 + low2.T)
    eye = np.eye(r.shape[0])
    return _Reduced(eye + low1, eye + low2, low2 - low1, r[:, r1 + r2].copy())


def _reduced_spectrum(red: _Reduced) -> tuple[np.ndarray, np.ndarray]:
    try:
        chol = scipy.linalg.cholesky(red.cov1, lower=True)
    except np.linalg.LinAlgError:
        raise ValueError(
            "cov1 and cov2 must be positive definite; got a DiagonalPlusLowRank that is numerically "
            "singular on the span of the factors."
        ) from None
    return _whitened_spectrum(chol, red.diff, red.delta)


def _renyi_lowrank_general(
    alpha: float, m1: np.ndarray, cov1: DiagonalPlusLowRank, m2: np.ndarray, cov2: DiagonalPlusLowRank
) -> float:
    """Different diagonals: whiten by cov1's diagonal D1; determinant lemma and Woodbury on the mixture."""
    d1, d2 = cov1.diagonal, cov2.diagonal
    inv_sqrt = 1.0 / np.sqrt(d1)
    ratio_m1 = (d2 - d1) / d1  # e_j = D2_j / D1_j - 1, formed from the difference
    beta = alpha - 1.0
    mix_diag = 1.0 + alpha * ratio_m1  # the whitened mixture's diagonal
    bad = ~(mix_diag > _PD_RTOL * (1.0 + alpha * np.abs(ratio_m1)))
    n_bad = int(np.count_nonzero(bad))
    if n_bad > cov1.rank + cov2.rank:
        # span{e_j : j bad} has a non-zero vector orthogonal to every factor column, and there the mixture
        # is a non-positive diagonal.
        return math.inf
    # Coordinates with a non-positive mixture diagonal move into the low-rank part (diagonal 1, unit column).
    unit = np.zeros((d1.size, n_bad))
    unit[np.flatnonzero(bad), np.arange(n_bad)] = 1.0
    mix_coefficients = np.concatenate(
        [(1.0 - alpha) * cov1.coefficients, alpha * cov2.coefficients, mix_diag[bad] - 1.0]
    )
    mix_scale = 1.0 / np.sqrt(np.where(bad, 1.0, mix_diag))
    m = mix_coefficients.size
    # One thin QR of [whitened mixture factor, whitened mean gap]: R = [R_f, t] with the mean gap = Q t.
    stacked = np.hstack([cov1.factor * inv_sqrt[:, None], cov2.factor * inv_sqrt[:, None], unit])
    stacked = np.hstack([stacked, ((m1 - m2) * inv_sqrt)[:, None]]) * mix_scale[:, None]
    r = _triangular_factor(stacked)
    eigvals, vecs = _core_eigen(r[:, :m], mix_coefficients)
    if not _positive_beyond_rounding(1.0 + eigvals, np.abs(eigvals)):
        return math.inf
    projected = vecs.T @ r[:, m]
    mean_term = 0.5 * alpha * _fsum(projected * projected / (1.0 + eigvals))
    diag_terms = _renyi_logdet_terms(alpha, ratio_m1[~bad])
    bad_terms = alpha / (2.0 * beta) * np.log1p(ratio_m1[bad])
    # Determinant lemma: log det of the mixture, of cov2 and of cov1 (all whitened by D1) differ from the
    # diagonal parts above by these small capacitance log-determinants (weights 1, -alpha, alpha-1).
    cap_term = -(_fsum(np.log1p(eigvals)) - alpha * cov2._logdet_capacitance() + beta * cov1._logdet_capacitance()) / (
        2.0 * beta
    )
    return _fsum([mean_term, cap_term], diag_terms, bad_terms)


def _kl_lowrank_general(m1: np.ndarray, cov1: DiagonalPlusLowRank, m2: np.ndarray, cov2: DiagonalPlusLowRank) -> float:
    d1, d2 = cov1.diagonal, cov2.diagonal
    delta = m1 - m2
    # tr(cov2^{-1} cov1) - d + log det cov2 - log det cov1 + Delta^T cov2^{-1} Delta, split as
    #   sum_j [log(D2_j/D1_j) + D1_j/D2_j - 1]            (diagonal parts, each >= 0)
    # - sum_k w_k sum_j (D1_j/D2_j) basis2_jk^2           (Woodbury correction of tr(cov2^{-1} D1))
    # + sum_k c1_k u1_k^T cov2^{-1} u1_k                 (low-rank part of cov1)
    # + log det capacitance(cov2) - log det capacitance(cov1) + the mean term.
    diag_terms = _log1p_minus_ratio((d2 - d1) / d1)
    basis2, weights2 = cov2._woodbury
    trace_corr = -float(weights2 @ ((d1 / d2) @ (basis2 * basis2))) if weights2.size else 0.0
    low1 = float(np.sum(cov1.coefficients * np.sum(cov1.factor * cov2.solve(cov1.factor), axis=0)))
    mean_sq = float(delta @ cov2.solve(delta))
    caps = cov2._logdet_capacitance() - cov1._logdet_capacitance()
    return 0.5 * _fsum(diag_terms, [trace_corr, low1, mean_sq, caps])


def renyi_gaussian_lowrank(
    renyi_order: float,
    *,
    mean1: ArrayLike,
    cov1: DiagonalPlusLowRank,
    mean2: ArrayLike,
    cov2: DiagonalPlusLowRank,
) -> float:
    """:func:`renyi_gaussian` for diagonal-plus-low-rank covariances, in O(d r^2 + r^3) with r = r1 + r2.

    Same formula and argument order as :func:`renyi_gaussian` (``D_alpha(N(mean1, cov1) || N(mean2, cov2))``;
    the hsgd paper, seed 000 Lemma C.2, prints it swapped). The mixture ``alpha cov2 + (1 - alpha) cov1`` is
    diagonal plus rank ``r1 + r2``; its positive definiteness is decided by the combined capacitance matrix
    (seed 000 section 7.2 erratum: the per-process capacitances are not enough).

    * Common diagonal (``cov1.diagonal == cov2.diagonal`` elementwise, the hsgd case): one thin QR of the
      whitened factors and mean gap reduces the problem exactly to a dense divergence in dimension at most
      ``r1 + r2 + 1``, with the accuracy of the dense path (tiny divergences, orders near 1).
    * Different diagonals: the log-determinant ratio is a sum of per-coordinate terms in the diagonal ratios
      (each >= 0, series-evaluated) plus three small capacitance log-determinants (determinant lemma); the
      mean term uses Woodbury's identity. Absolute error ~ 1e-16 * abs(capacitance log-dets) / (alpha - 1).

    Shapes: mean1, mean2 (d,); cov1, cov2 :class:`DiagonalPlusLowRank` of dimension d -> float.

    Returns:
        The divergence (>= 0), or ``math.inf`` when the mixture is not positive definite (or is singular within
        rounding error, as in :func:`renyi_gaussian`).

    Formal guarantees:
        Exact (label ``exact``) up to floating-point rounding.

    Raises:
        TypeError: a covariance that is not a :class:`DiagonalPlusLowRank`, a non-scalar order.
        ValueError: an order <= 1 or not finite, mismatched dimensions.
    """
    alpha = _renyi_order(renyi_order)
    m1, m2 = _lowrank_inputs(mean1, cov1, mean2, cov2)
    if np.array_equal(cov1.diagonal, cov2.diagonal):
        x, w = _reduced_spectrum(_reduce_common_diagonal(m1, cov1, m2, cov2))
        return _renyi_from_spectrum(alpha, x, w)
    return _renyi_lowrank_general(alpha, m1, cov1, m2, cov2)


def kl_gaussian_lowrank(*, mean1: ArrayLike, cov1: DiagonalPlusLowRank, mean2: ArrayLike,
                        cov2: DiagonalPlusLowRank) -> float:
    """:func:`kl_gaussian` for diagonal-plus-low-rank covariances, in O(d r^2 + r^3).

    With a common diagonal the divergence is reduced exactly to the span of the factors and the mean gap (as
    in :func:`renyi_gaussian_lowrank`); otherwise the trace and log-determinant terms are split into
    per-coordinate diagonal terms and small capacitance corrections (Woodbury, determinant lemma).

    Shapes: mean1, mean2 (d,); cov1, cov2 :class:`DiagonalPlusLowRank` of dimension d -> float.

    Formal guarantees:
        Exact (label ``exact``) up to floating-point rounding.
    """
    m1, m2 = _lowrank_inputs(mean1, cov1, mean2, cov2)
    if np.array_equal(cov1.diagonal, cov2.diagonal):
        return _kl_from_spectrum(*_reduced_spectrum(_reduce_common_diagonal(m1, cov1, m2, cov2)))
    return _kl_lowrank_general(m1, cov1, m2, cov2)


def renyi_gaussian_symmetric_sup(renyi_order: float, *, mean1: ArrayLike, cov1: ArrayLike | DiagonalPlusLowRank,
                                 mean2: ArrayLike, cov2: ArrayLike | DiagonalPlusLowRank) -> float:
    """``max(D_alpha(P || Q), D_alpha(Q || P))`` for ``P = N(mean1, cov1)``, ``Q = N(mean2, cov2)``.

    The supremum over both argument orders, which the hsgd accountant takes (seed 000 section 4.3 and
    ambiguity A6: the neighbour relation is closed under swapping, so the worst case does not depend on the
    paper's swapped argument order). Dense arrays use :func:`renyi_gaussian`; two :class:`DiagonalPlusLowRank`
    covariances use :func:`renyi_gaussian_lowrank` (with a common diagonal both orders share one reduction).

    Shapes: mean1, mean2 (d,); cov1, cov2 both (d, d) arrays or both :class:`DiagonalPlusLowRank` -> float.

    Returns:
        The larger divergence, ``math.inf`` if either mixture is not positive definite.

    Formal guarantees:
        Exact (label ``exact``) up to floating-point rounding.

    Raises:
        TypeError: one covariance is a :class:`DiagonalPlusLowRank` and the other is not.
    """
    low1 = isinstance(cov1, DiagonalPlusLowRank)
    low2 = isinstance(cov2, DiagonalPlusLowRank)
    if low1 != low2:
        raise TypeError(
            "cov1 and cov2 must both be dense arrays or both be DiagonalPlusLowRank; got "
            f"cov1 of type {type(cov1).__name__} and cov2 of type {type(cov2).__name__} "
            "(convert with .dense())."
        )
    alpha = _renyi_order(renyi_order)
    if not low1:
        m1, c1, chol1, m2, c2, chol2 = _dense_inputs(mean1, cov1, mean2, cov2)
        forward = _renyi_from_spectrum(alpha, *_whitened_spectrum(chol1, c2 - c1, m1 - m2))
        backward = _renyi_from_spectrum(alpha, *_whitened_spectrum(chol2, c1 - c2, m2 - m1))
        return max(forward, backward)
    cov1, cov2 = cast(DiagonalPlusLowRank, cov1), cast(DiagonalPlusLowRank, cov2)  # both, by the check above
    m1, m2 = _lowrank_inputs(mean1, cov1, mean2, cov2)
    if np.array_equal(cov1.diagonal, cov2.diagonal):
        red = _reduce_common_diagonal(m1, cov1, m2, cov2)
        forward = _renyi_from_spectrum(alpha, *_reduced_spectrum(red))
        backward = _renyi_from_spectrum(alpha, *_reduced_spectrum(red.swapped()))
        return max(forward, backward)
    return max(
        _renyi_lowrank_general(alpha, m1, cov1, m2, cov2),
        _renyi_lowrank_general(alpha, m2, cov2, m1, cov1),
    )
