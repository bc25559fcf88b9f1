"""Long-time limits and closed forms of homogenized SGD (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687): stability,
the renewal-theorem limits, the isotropic closed form."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._arrays import read_only
from privdyn.dynamics.hsgd.volterra import _times
from privdyn.hsgd_problem import HSGDProblem, RiskCurve, RiskLimit, constant_rate, kernel_mass
from privdyn.spectra import Spectrum

__all__ = ["max_stable_learning_rate", "risk_limit", "isotropic_risk"]


def max_stable_learning_rate(spectrum: Spectrum, *, ridge: float) -> float:
    """γ_max = 2d / Σ_j λ_j²/(λ_j + ridge): a constant learning rate γ is stable (κ_K < 1) iff γ < γ_max.

    κ_K = ∫₀^∞ K_P(τ) dτ = (γ/(2d)) Σ_j λ_j²/a_j is the mass of the renewal kernel of (6). Returns +inf
    for Σ = 0.
    """
    _check.instance(Spectrum, spectrum=spectrum)
    _check.non_negative(ridge=ridge)
    lam = spectrum.eigenvalues
    if lam[0] + ridge <= 0:
        raise ValueError(f"ridge must be > 0 when the covariance has a zero eigenvalue; got ridge={ridge!r}.")
    total = float(np.dot(spectrum.multiplicities, lam**2 / (lam + ridge)))
    return math.inf if total == 0 else 2.0 * spectrum.dim / total


def _require_stable(problem: HSGDProblem) -> float:
    kappa = kernel_mass(problem)
    if kappa >= 1:
        gamma = constant_rate(problem, "the stability check")
        limit = max_stable_learning_rate(problem.spectrum, ridge=problem.ridge)
        raise ValueError(
            f"learning_rate is unstable: the Volterra kernel mass κ_K = γ/(2d)·Σ_j λ_j²/(λ_j + ridge) = {kappa:.6g} "
            f">= 1 ({100 * (kappa - 1):.3g}% above the stability limit), so the risk grows without bound; the constant "
            f"learning rate γ = {gamma:.6g} must be < {limit:.6g} (step_size γ/d < {limit / problem.dim:.6g}).")
    return kappa


def risk_limit(problem: HSGDProblem) -> RiskLimit:
    """Long-time limits P_∞, R_∞ of HSGD with a constant learning rate (derived: renewal theorem for (6)-(7)).

    P_∞ = (𝒫(x*) + N_∞)/(1 − κ_K) with N_∞ = (σ²γ/(4d)) Σ_j λ_j/a_j, x* = A⁻¹Σx̃, and
    R_∞ = ℛ(x*) + (γ/(2d)) tr(Σ) P_∞ + σ²γ/4. Exact for (1) as t → ∞; the initialization (any ``x0_policy``) is
    forgotten. Raises ``ValueError`` naming ``learning_rate`` when κ_K ≥ 1 (unstable), with the margin.
    """
    gamma = constant_rate(problem, "risk_limit")
    kappa = _require_stable(problem)
    g = problem._moments()
    d, sigma2 = problem.dim, problem.noise_std**2
    p_star = 0.5 * float(np.dot(g.lam, g.ee)) + 0.5 * problem.label_noise**2
    noise = sigma2 * gamma / (4 * d) * float(np.dot(g.count, g.lam / g.a))
    pop = (p_star + noise) / (1 - kappa)
    r_star = p_star + 0.5 * problem.ridge * float(g.ss.sum())
    reg = r_star + gamma / (2 * d) * problem.spectrum.trace * pop + sigma2 * gamma / 4
    variance = gamma * (2 * pop * g.lam + sigma2) / (2 * d * g.a)
    return RiskLimit(population_risk=pop, regularized_risk=reg, kernel_mass=kappa, group_variance=read_only(variance))


def _phi1_integral(rate_a: float, rate_b: np.ndarray | float, t: np.ndarray) -> np.ndarray:
    """∫₀ᵗ e^{−a(t−s)} e^{−bs} ds = t·e^{−min(a,b)t}·(1 − e^{−|a−b|t})/(|a−b|t), stable for a ≈ b."""
    gap = np.abs(rate_a - rate_b) * t
    low = np.minimum(rate_a, rate_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(gap > 1e-8, -np.expm1(-gap) / np.where(gap > 0, gap, 1.0), 1.0 - gap / 2)
    return t * np.exp(-low * t) * phi


def isotropic_risk(problem: HSGDProblem, times: ArrayLike) -> RiskCurve:
    """Closed-form P_t, R_t for Σ = λI and a constant learning rate γ (derived; the paper states that it exists).

    The total variance S(t) = Σ_j V_jj(t) solves S' = −ρS + γ²(2λF_P(t) + σ²), ρ = 2γa − γ²λ², S(0) = d·V(0), and
    P_t = F_P(t) + ½λS(t), R_t = F_R(t) + ½aS(t), where F_P(t) = ½λ[e^{−2aγt}‖x_0 − x*‖² + 2e^{−aγt}⟨x_0 − x*, x* − x̃⟩ +
    ‖x* − x̃‖²] + ½E w² is a sum of exponentials, so S is explicit. Exact (no grid).

    Returns:
        A :class:`RiskCurve` with ``method="closed_form"`` and ``group_variance`` (T, 1).
    """
    _check.instance(HSGDProblem, problem=problem)
    ts = _times(times)
    if problem.spectrum.num_groups != 1:
        raise ValueError(f"isotropic_risk needs Σ = λI (one eigen-group); got {problem.spectrum.num_groups} groups.")
    gamma = constant_rate(problem, "isotropic_risk")
    g = problem._moments()
    lam, a, d = float(g.lam[0]), float(g.a[0]), problem.dim
    rr, re, ee, ss, sr = (float(x[0]) for x in (g.rr, g.re, g.ee, g.ss, g.sr))
    sigma2, noise2, ridge = problem.noise_std**2, problem.label_noise**2, problem.ridge
    rho = 2 * gamma * a - gamma**2 * lam**2
    # 2λF_P(s) + σ² = Σ_β c_β e^{−βs}
    terms = ((2 * a * gamma, lam**2 * rr), (a * gamma, 2 * lam**2 * re), (0.0, lam**2 * ee + lam * noise2 + sigma2))
    total = d * problem.initial_variance * np.exp(-rho * ts)
    for beta, coef in terms:
        total = total + gamma**2 * coef * _phi1_integral(rho, beta, ts)
    e = np.exp(-a * gamma * ts)
    f_p = 0.5 * lam * (e**2 * rr + 2 * e * re + ee) + 0.5 * noise2
    f_r = f_p + 0.5 * ridge * (ss + 2 * e * sr + e**2 * rr)
    pop, reg = f_p + 0.5 * lam * total, f_r + 0.5 * a * total
    return RiskCurve(times=read_only(ts), population_risk=read_only(pop), regularized_risk=read_only(reg),
                     method="closed_form", group_variance=read_only((total / d)[:, None]))
