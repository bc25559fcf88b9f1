"""Independent solver for the risk ODE of the dpgd paper (arXiv 2505.16329, Definition 4.2, eq. 4.7): the isotropic
per-eigenvalue system integrated by scipy's LSODA with the printed closed forms of Lemma B.1, written apart from the
engine it checks (:mod:`privdyn.dynamics.dpgd`)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate

__all__ = ["reference_risk_ode"]


def _mu_nu_printed(c_prime: float) -> tuple[float, float]:
    """μ_c and ν_c in the printed closed forms of Lemma B.1 (erf/erfc; the engine uses a different route)."""
    x = c_prime / math.sqrt(2.0)
    mu = math.erf(x)
    nu = c_prime**2 * math.erfc(x) + mu - math.sqrt(2.0 / math.pi) * c_prime * math.exp(-0.5 * c_prime**2)
    return mu, nu


def reference_risk_ode(*, eigenvalues: ArrayLike, theta_star: ArrayLike, aspect_ratio: float, clip: float, rho: float,
                       label_noise: float, initial_learning_rate: float, schedule_exponent: float,
                       times: ArrayLike, rtol: float = 1e-10) -> tuple[np.ndarray, float]:
    """R(t) of Definition 4.2 (eq. 4.7 of arXiv 2505.16329) for η̃(t) = η̃(0)(1 − t)^α, by scipy's LSODA.

    Written independently of :mod:`privdyn.dynamics.dpgd` (the reference of ``dpgd-fig1``'s solver invariant):
    directions with equal eigenvalues (exactly equal floats) are merged, S_g = Σ_{i∈g} D_i with
    D_i(0) = d(θ*_i)²/2, and

        dS_g/dt = −2λ_g η̄ μ_c(R) S_g + m_g [λ_g η̄² ν_c(R)(R + ζ²/2) γ + 2c²σ̃²γ²],   R = (1/d) Σ_g λ_g S_g,

    with η̄ = min(η̃, 2/γ), ρ²σ̃² = 2αη̃(0)²(1 − t)^{2α−1} (0 for α = 0) and μ_c, ν_c at c′ = c/√(2R + ζ²) in the
    printed forms of Lemma B.1 (adequate here: for c′ ≳ 0.01 their cancellation costs under 1e-12 relative).

    Returns:
        (R at ``times``, R(1) + 2c²η̃(1)²γ²/ρ²) — the second is the final private risk of Proposition 4.4.
    """
    lam_per_direction = np.asarray(eigenvalues, dtype=float)
    theta = np.asarray(theta_star, dtype=float)
    d = lam_per_direction.size
    lam, inverse, mult = np.unique(lam_per_direction, return_inverse=True, return_counts=True)
    s0 = np.bincount(inverse, weights=d * theta**2 / 2.0, minlength=lam.size)
    gamma, c, zeta, eta0, alpha = aspect_ratio, clip, label_noise, initial_learning_rate, schedule_exponent

    def rhs(t: float, s: np.ndarray) -> np.ndarray:
        risk = max(float(lam @ s) / d, 0.0)
        mu, nu = _mu_nu_printed(c / math.sqrt(2.0 * risk + zeta**2))
        remaining = max(1.0 - t, 0.0)
        eta_bar = min(eta0 * remaining**alpha, 2.0 / gamma)
        sigma2 = 0.0 if alpha == 0 else 2.0 * alpha * eta0**2 * remaining ** (2.0 * alpha - 1.0) / rho**2
        return -2.0 * lam * eta_bar * mu * s + mult * (lam * eta_bar**2 * nu * (risk + zeta**2 / 2.0) * gamma
                                                       + 2.0 * c**2 * sigma2 * gamma**2)

    ts = np.atleast_1d(np.asarray(times, dtype=float))
    if ts.ndim != 1 or ts.size == 0 or np.any(np.diff(ts) <= 0) or ts[0] < 0 or ts[-1] > 1:
        raise ValueError(f"times must be a non-empty increasing 1-D array in [0, 1]; got times={times!r}.")
    t_eval = np.union1d(ts, [1.0])
    sol = integrate.solve_ivp(rhs, (0.0, 1.0), s0, method="LSODA", t_eval=t_eval, rtol=rtol,
                              atol=1e-3 * rtol * max(float(s0.max()), 1e-300))
    if sol.status != 0:
        raise RuntimeError(f"reference LSODA solve failed: {sol.message}")
    risk_all = lam @ sol.y / d
    risk = risk_all[np.searchsorted(t_eval, ts)]
    end_eta = eta0 if alpha == 0 else 0.0
    final = float(risk_all[-1])
    return risk, final + 2.0 * c**2 * end_eta**2 * gamma**2 / rho**2
