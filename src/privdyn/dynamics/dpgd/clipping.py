"""The clipping factors mu_c and nu_c of the dpgd paper (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329, Lemma B.1)
and their tables."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from privdyn import _check

__all__ = ["clipping_factors"]


_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# ---------------------------------------------------------------------------------------------------------------
# Clipping factors (Lemma B.1)
# ---------------------------------------------------------------------------------------------------------------


def clipping_factors(c_prime: ArrayLike) -> tuple[np.float64 | np.ndarray, np.float64 | np.ndarray]:
    """The descent and variance reduction factors (μ, ν) of clipping the residual at c′ standard deviations.

    Lemma B.1 of arXiv 2505.16329 (eqs. 4.5–4.6): with N ~ N(0, 1) and c′ = c/√(2R + ζ²),

        μ = P(abs(N) ≤ c′) = erf(c′/√2),
        ν = E[min(N², c′²)] = c′² erfc(c′/√2) + erf(c′/√2) − √(2/π) c′ e^{−c′²/2}.

    The last two terms of ν are E[N² 1{abs(N) ≤ c′}] = P(χ²₃ ≤ c′²), computed as the regularized incomplete gamma
    function P(3/2, c′²/2): no cancellation, so ν keeps full relative precision for tiny c′ (ν = c′² − (2/3)√(2/π)c′³ +
    …), where the printed form loses about log₁₀(1/c′) digits. ``erfc`` keeps the large-c′ tails exact. c′ = ∞ (no
    clipping) gives μ = ν = 1.

    Exact (closed forms). Lemma B.2: μ and ν increase from 0 to 1; μ/c′ and ν/c′² decrease from √(2/π) and 1.

    Args:
        c_prime: c′ ≥ 0 (∞ allowed), any shape.

    Returns:
        (mu, nu), each of the shape of ``c_prime`` (NumPy float64 scalars for a scalar input).

    Shapes: c_prime (...) -> (...), (...).
    """
    _check.in_range(0.0, math.inf, c_prime=c_prime)
    cp = np.asarray(c_prime, dtype=float)
    mu, nu = clipping_factor_arrays(cp)
    if cp.ndim == 0:
        return np.float64(mu), np.float64(nu)
    return mu, nu


def clipping_factor_arrays(cp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(μ, ν) of Lemma B.1, as :func:`clipping_factors`, for an array c′ ≥ 0 (∞ allowed) without validation: the
    inner loops of the ODE solvers and the homogenized-SDE simulator."""
    erfc = special.erfc(cp / _SQRT2)
    # c′² erfc(c′/√2) is 0 wherever erfc underflows (c′ > 38.5, where c′² may overflow) and at c′ = ∞; gammainc(1.5,
    # 0.5 c′²) is 1 where 0.5 c′² overflows to ∞.
    with np.errstate(over="ignore", invalid="ignore"):
        tail = np.where(erfc > 0.0, cp * cp * erfc, 0.0)
        return special.erf(cp / _SQRT2), tail + special.gammainc(1.5, 0.5 * cp * cp)


def _factors(cp: float) -> tuple[float, float, float, float]:
    """Scalar (μ, ν, dμ/dc′, dν/dc′) (dμ/dc′ = √(2/π)e^{−c′²/2}, dν/dc′ = 2c′ erfc(c′/√2))."""
    if cp == math.inf:
        return 1.0, 1.0, 0.0, 0.0
    x = cp / _SQRT2
    erf, erfc = math.erf(x), math.erfc(x)
    g = _SQRT_2_OVER_PI * math.exp(-0.5 * cp * cp)
    if cp < 0.5:  # E[N² 1{|N| ≤ c′}] = √(2/π) Σ_{k≥1} (−1)^{k+1} 2k c′^{2k+1} / ((2k+1) 2^k k!), no cancellation
        x2 = 0.5 * cp * cp
        term, total, k = cp * x2, 0.0, 1  # term = c′^{2k+1}/(2^k k!)
        while True:
            contribution = term * (2.0 * k) / (2.0 * k + 1.0)
            total += contribution if k % 2 else -contribution
            if contribution <= 1e-17 * total:
                break
            k += 1
            term *= x2 / k
        inner = _SQRT_2_OVER_PI * total
    else:
        inner = erf - cp * g
    return erf, cp * cp * erfc + inner, g, 2.0 * cp * erfc
