"""Independent values of the clipping factors of the dpgd paper (arXiv 2505.16329, eqs. 4.5-4.6): μ_c and ν_c by
mpmath quadrature of their definitions, apart from the closed forms of Lemma B.1 that
:func:`privdyn.dynamics.dpgd.clipping_factors` evaluates."""

from __future__ import annotations

__all__ = ["reference_clipping_factors"]


def reference_clipping_factors(c_prime: float) -> tuple[float, float]:
    """``μ = P(|N| ≤ c′)`` and ``ν = E[min(N², c′²)]`` for N ~ N(0, 1) by mpmath quadrature of the definitions
    (eqs. 4.5–4.6).

    A different solver from the engine's closed forms: numerical integration of the Gaussian density at 30 digits.
    """
    import mpmath

    with mpmath.workdps(30):
        cp = mpmath.mpf(c_prime)
        density = lambda x: mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.pi)  # noqa: E731
        inside = mpmath.quad(density, [0, cp])
        inside_second = mpmath.quad(lambda x: x * x * density(x), [0, cp])
        tail = mpmath.quad(density, [cp, mpmath.inf])
        return float(2 * inside), float(2 * inside_second + 2 * cp * cp * tail)
