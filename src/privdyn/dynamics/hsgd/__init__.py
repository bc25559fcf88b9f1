"""Risk and law of noisy homogenized SGD (HSGD) on least squares: Volterra equations, moment ODE, closed forms.

Implements the risk side of Lin, Kolaczyk, Smith, Paquette, "High-Dimensional Privacy-Utility Dynamics of Noisy SGD on
Least Squares" (cited below as "the paper"; arXiv 2510.16687; equation and theorem numbers are the
paper's). Results marked *derived* follow from the paper's equations but are not printed in it; ``docs/hsgd.md``
lists where privdyn departs from the printed paper.

**The process.** Noisy HSGD, eq. (1), is the SDE

    dX_t = −γ(t) ∇ℛ(X_t) dt + γ(t) √((2𝒫(X_t) Σ + σ² I_d)/d) dB_t,   X_0 = x_0,

with 𝒫(x) = ½(x − x̃)ᵀΣ(x − x̃) + ½E w² and ℛ(x) = 𝒫(x) + (ridge/2)‖x‖². One SGD step k is time t = k/d and the
discrete step is step_size η = γ(t)/d. Names (``docs/notation.md``): ``ridge`` δ, ``noise_std`` σ, ``learning_rate``
the profile γ(t) (a :class:`privdyn.schedules.LearningRate`), ``label_noise`` √(E w²), ``target`` x̃.

**Eigen-groups.** Everything is diagonal in the eigenbasis of Σ and depends on a direction only through its
eigenvalue, so directions with equal eigenvalues are merged (:class:`privdyn.spectra.Spectrum`). For group g with
eigenvalue λ_g, multiplicity n_g and a_g = λ_g + ridge (an eigenvalue of A = Σ + ridge·I), the per-group inputs are

=================  =========================================  ==========================================
name               definition                                 meaning
=================  =========================================  ==========================================
``x0_sq``          Σ_{j∈g} (u_jᵀx_0)²                         squared projection of x_0 on eigenspace g
``x0_dot_target``  Σ_{j∈g} (u_jᵀx_0)(u_jᵀx̃)                   cross projection of x_0 and x̃
``target_sq``      Σ_{j∈g} (u_jᵀx̃)²                           squared projection of x̃
=================  =========================================  ==========================================

(x_0 is the *mean* of the initialization for ``x0_policy="random_secret"``.) The risk only needs these group
sums; the law N(m(t), V(t)) needs the per-direction eigen-coordinates u_jᵀx_0, u_jᵀx̃ for its mean. Every variance
returned per group (``group_variance``) is the variance V_jj(t) of *one* direction j of the group (all directions of a
group have the same variance), not a sum over the group.

**What is computed.**

* :func:`volterra_risk` — P_t = E𝒫(X_t), R_t = Eℛ(X_t) from the Volterra equations (6)–(7) of Theorem 4.2 by the
  product trapezoid rule in O(N·m) (the sum-of-exponentials kernel carried recursively), with Romberg (Richardson)
  extrapolation; :func:`volterra_dense_reference` is the O(N²·m) dense evaluation of the *same* quadrature.
* :func:`moment_ode_risk` — the exact per-group moment closure (derived: Itô's formula (29) applied to the moments of
  (1)).
* :func:`risk_limit` — P_∞, R_∞ for a constant learning rate (derived: the renewal theorem for (6)-(7)) with the
  stability check κ_K < 1.
* :func:`isotropic_risk` — the closed form for Σ = λI and constant γ (derived; the paper states that it exists).
* :func:`linearized_law` / :class:`HSGDLaw` — the Gaussian law (10) of linearized HSGD (9), V diagonal in the
  eigenbasis, for each :class:`X0Policy`; :func:`quadratic_statistic` — E q(X_t) for any quadratic q (eq. (29)).

The first two moments of HSGD (1) and of linearized HSGD (9) coincide exactly (E[𝒫(X_t)Σ] = P_tΣ closes Itô's
formula on them), so P_t, R_t and every E q(X_t) here are exact for both processes; only the Gaussianity of the law is
specific to (9).
"""

from __future__ import annotations

from privdyn.dynamics.hsgd.law import HSGDLaw, linearized_law, quadratic_statistic
from privdyn.dynamics.hsgd.limits import isotropic_risk, max_stable_learning_rate, risk_limit
from privdyn.dynamics.hsgd.moments import moment_ode_risk
from privdyn.dynamics.hsgd.volterra import volterra_dense_reference, volterra_risk
from privdyn.hsgd_problem import REFERENCE, HSGDProblem, RiskCurve, RiskLimit, X0Policy, kernel_mass

__all__ = [
    "X0Policy",
    "HSGDProblem",
    "RiskCurve",
    "RiskLimit",
    "HSGDLaw",
    "volterra_risk",
    "volterra_dense_reference",
    "moment_ode_risk",
    "kernel_mass",
    "max_stable_learning_rate",
    "risk_limit",
    "isotropic_risk",
    "linearized_law",
    "quadratic_statistic",
    "REFERENCE",
]
