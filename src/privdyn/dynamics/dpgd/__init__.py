"""The dpgd deterministic equivalent: clipping factors, the risk ODE, its sandwich bounds.

Bombari, Luo, Seroussi, Mondelli, *High-Dimensional Private Linear Regression with Optimal Rates*, arXiv 2505.16329
(v2). One-pass clipped DP-GD on Gaussian linear regression (clip threshold C_clip = c√d, steps η_k = η̃(k/n)/n,
noise calibrated by ρ²σ_k² = η_k² − η_{k+1}²) has an excess risk that concentrates (Theorem 1) around
R(t) = (1/d) Σ λ_i D_i(t), where (Definition 4.2, eq. 4.7)

    dD_i/dt = −2λ_i η̄ μ_c(R) D_i + λ_i η̄² ν_c(R)(R + ζ²/2) γ + 2c²σ̃²γ²,    D_i(0) = d(ω_iᵀθ*)²/2,

with η̄ = min(η̃, 2/γ), ρ²σ̃² = −dη̃²/dt, and the clipping factors μ_c, ν_c of Lemma B.1 at c′ = c/√(2R + ζ²)
(:func:`clipping_factors`). The released iterate adds the last step's noise: its risk is R(1) + 2c²η̃(1)²γ²/ρ²
(Proposition 4.4).

Directions with equal eigenvalues obey the same equation, so the engine works on the m groups of a
:class:`~privdyn.spectra.Spectrum`: with S_g = Σ_{i∈g} D_i and m_g the multiplicity,

    dS_g/dt = −2λ_g q S_g + m_g(λ_g a + b),    q = η̄μ_c(R),  a = η̄²ν_c(R)(R + ζ²/2)γ,  b = 2c²σ̃²γ²,

and R = (1/d) Σ_g λ_g S_g: three scalar functions of (t, R) drive all m states. Names follow ``docs/notation.md``:
``aspect_ratio`` γ = d/n, ``clip`` c, ``rho`` ρ (the algorithm is ρ²/2-zCDP, ``zcdp = rho**2 / 2``), ``label_noise``
ζ, ``learning_rate`` the profile η̃ (a :class:`~privdyn.schedules.LearningRate`).

Solvers (``method``):

* ``"exponential"`` (default): an adaptive exponential integrator written for this system (see
  :func:`solve_risk_ode`). It integrates the linear decay exactly, so the stiffness (rates up to 2λ_max·(2/γ), ~10⁴ at
  γ = 10⁻³) costs nothing; its step count does not grow with m.
* ``"lsoda"``: scipy's ``solve_ivp(method="LSODA")`` on the same right-hand side with its default finite-difference
  Jacobian: the reference the tests compare against (slow for large m in stiff settings, where its Jacobian is dense).

Where privdyn deliberately differs from the paper's text: the homogenized SDE's drift has factor 1, not the printed 2
(its simulator is :func:`privdyn.algorithms.simulate_homogenized_sde`); the sandwich bounds use
1 ≤ tr(Σ²)/d ≤ λ_max (the proof of Prop. D.1 prints "tr(Σ²) ≥ λ_max tr Σ", a typo).
"""

from __future__ import annotations

from privdyn.dynamics.dpgd.clipping import clipping_factors
from privdyn.dynamics.dpgd.ode import final_private_risk, isotropic_risk_ode, sandwich_bounds, solve_risk_ode
from privdyn.dynamics.dpgd.system import DEFAULT_TIMES, METHODS, ODESolverError, RiskTrajectory, final_jump

__all__ = [
    "DEFAULT_TIMES",
    "METHODS",
    "ODESolverError",
    "RiskTrajectory",
    "clipping_factors",
    "final_jump",
    "final_private_risk",
    "isotropic_risk_ode",
    "sandwich_bounds",
    "solve_risk_ode",
]
