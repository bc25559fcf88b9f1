"""Independent solver for the risk curves of the hsgd paper (arXiv 2510.16687): the moment closure of HSGD (1) on the
Section 5 design (spike plus bulk of the covariance), integrated by scipy's DOP853, and the renewal-theorem limit P_∞,
written apart from the engine they check (:mod:`privdyn.dynamics.hsgd`)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate

from privdyn.data.hsgd_design import UniformDesign

__all__ = ["REFERENCE_RTOL", "ReferenceMoments", "reference_moments", "reference_limit"]


REFERENCE_RTOL = 1e-12
"""Tolerance of the independent DOP853 solve."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReferenceMoments:
    """The independent moment solve: P_t at ``times`` and V_jj(t) of the spike (column 0) and bulk (column 1)."""

    times: np.ndarray
    population_risk: np.ndarray
    variance: np.ndarray
    mean_spike: np.ndarray
    """(T,) u·m(t), the law's mean along the spike direction u = 1/√d."""


def _projections(design: UniformDesign, x0: np.ndarray) -> dict[str, float]:
    """Projections on u = 1/√d (the spike) and sums over its orthogonal complement (the bulk), from the design."""
    d = design.dim
    u = np.full(d, 1.0 / math.sqrt(d))
    target = np.asarray(design.target, dtype=float)
    x0 = np.asarray(x0, dtype=float)
    t_s, x_s = float(u @ target), float(u @ x0)
    return {"t_s": t_s, "x_s": x_s, "tt_b": float(target @ target) - t_s**2,
            "xt_b": float(x0 @ target) - x_s * t_s, "xx_b": float(x0 @ x0) - x_s**2}


def _reference_inputs(design: UniformDesign, step_size: float, ridge: float) -> tuple[np.ndarray, np.ndarray, float]:
    d = design.dim
    lam_b = 1.0 / (12.0 * d)  # Var a_ij of Unif[0, 1/√d]
    lam_s = lam_b + d * (0.5 / math.sqrt(d)) ** 2  # + d·(E a_ij)²
    lam = np.array([lam_s, lam_b])
    return lam, lam + ridge, step_size * d


def reference_moments(design: UniformDesign, *, x0: np.ndarray, init_variance: float, step_size: float, ridge: float,
                      noise_std: float, times: ArrayLike) -> ReferenceMoments:
    """E𝒫(X_t) and the law's variances from the moment closure of HSGD (1) (Itô's formula (29)), solved
    independently.

    Written separately from :mod:`privdyn.dynamics.hsgd` (the reference of the solver invariants): Σ = λ_b I +
    ¼·uuᵀ with u = 1/√d, λ_b = 1/(12d), λ_s = λ_b + ¼; the spike direction is followed by its mean μ_s = u·E(X − x̃)
    and second moment S_s, the bulk (u's complement) by the sums S_b = Σ E v_j², C_b = Σ x̃_j E v_j, M_b = Σ (E v_j)²:

        dμ_s = −γ(a_s μ_s + δ t_s),                 dS_s = −2γ(a_s S_s + δ t_s μ_s) + (γ²/d)(2Pλ_s + σ²),
        dC_b = −γ(a_b C_b + δ Σ_b x̃_j²),           dM_b = −2γ(a_b M_b + δ C_b),
        dS_b = −2γ(a_b S_b + δ C_b) + (γ²/d)(d − 1)(2Pλ_b + σ²),   P = ½(λ_s S_s + λ_b S_b) + ½E w²,

    with γ = step_size·d, a = λ + ridge, t_s = u·x̃, from x_0 (mean ``x0``, variance ``init_variance``·I), integrated by
    scipy's DOP853 at rtol 1e−12.
    """
    d = design.dim
    lam, a, gamma = _reference_inputs(design, step_size, ridge)
    p = _projections(design, x0)
    noise2 = design.label_noise_second_moment
    sigma2 = noise_std**2
    mu_s0 = p["x_s"] - p["t_s"]
    m_b0 = p["xx_b"] - 2 * p["xt_b"] + p["tt_b"]
    z0 = np.array([mu_s0, mu_s0**2 + init_variance, p["xt_b"] - p["tt_b"], m_b0, m_b0 + (d - 1) * init_variance])

    def rhs(_t: float, z: np.ndarray) -> np.ndarray:
        mu_s, s_s, c_b, m_b, s_b = z
        risk = 0.5 * (lam[0] * s_s + lam[1] * s_b) + 0.5 * noise2
        return np.array([
            -gamma * (a[0] * mu_s + ridge * p["t_s"]),
            -2 * gamma * (a[0] * s_s + ridge * p["t_s"] * mu_s) + gamma**2 / d * (2 * risk * lam[0] + sigma2),
            -gamma * (a[1] * c_b + ridge * p["tt_b"]),
            -2 * gamma * (a[1] * m_b + ridge * c_b),
            -2 * gamma * (a[1] * s_b + ridge * c_b) + gamma**2 / d * (d - 1) * (2 * risk * lam[1] + sigma2),
        ])

    ts = np.asarray(times, dtype=float)
    if ts.ndim != 1 or ts.size == 0 or ts[0] < 0 or np.any(np.diff(ts) <= 0):
        raise ValueError(f"times must be a non-empty increasing 1-D array of times >= 0; got times={times!r}.")
    states = np.repeat(z0[:, None], ts.size, axis=1)
    later = ts > 0
    if np.any(later):
        scale = float(np.max(np.abs(z0))) + 1.0
        sol = integrate.solve_ivp(rhs, (0.0, float(ts[-1])), z0, method="DOP853", t_eval=ts[later],
                                  rtol=REFERENCE_RTOL, atol=REFERENCE_RTOL * 1e-3 * scale)
        if sol.status != 0:
            raise RuntimeError(f"reference DOP853 solve failed: {sol.message}")
        states[:, later] = sol.y
    mu_s, s_s, _, m_b, s_b = states
    pop = 0.5 * (lam[0] * s_s + lam[1] * s_b) + 0.5 * noise2
    variance = np.stack([s_s - mu_s**2, (s_b - m_b) / (d - 1)], axis=1)
    return ReferenceMoments(times=ts, population_risk=pop, variance=variance, mean_spike=mu_s + p["t_s"])


def reference_limit(design: UniformDesign, *, step_size: float, ridge: float, noise_std: float) -> dict[str, float]:
    """P_∞ = (𝒫(x*) + N_∞)/(1 − κ_K) (renewal theorem for (6)-(7)) for the Section 5 design, from the design.

    κ_K = (γ/(2d)) Σ_j λ_j²/a_j, N_∞ = (σ²γ/(4d)) Σ_j λ_j/a_j, 𝒫(x*) = ½Σ_j λ_j (δx̃_j/a_j)² + ½E w², with the spike
    and the d − 1 bulk directions of Σ. Also returns the relaxation time τ = 1/(γ min_j a_j).
    """
    d = design.dim
    lam, a, gamma = _reference_inputs(design, step_size, ridge)
    p = _projections(design, np.zeros(d))
    count = np.array([1.0, d - 1.0])
    kappa = gamma / (2 * d) * float(np.sum(count * lam**2 / a))
    noise = noise_std**2 * gamma / (4 * d) * float(np.sum(count * lam / a))
    p_star = 0.5 * (lam[0] * (ridge * p["t_s"] / a[0]) ** 2 + lam[1] * ridge**2 * p["tt_b"] / a[1] ** 2)
    p_star += 0.5 * design.label_noise_second_moment
    return {"population_risk": (p_star + noise) / (1.0 - kappa), "kernel_mass": kappa, "noise_limit": noise,
            "risk_at_minimizer": p_star, "relaxation_time": 1.0 / (gamma * float(a.min()))}
