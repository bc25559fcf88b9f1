"""The dpgd deterministic equivalent: clipping factors, the risk ODE, its sandwich bounds, the homogenized SDE.

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
(:func:`simulate_homogenized_sde`); the sandwich bounds use 1 ≤ tr(Σ²)/d ≤ λ_max (the proof of Prop. D.1 prints
"tr(Σ²) ≥ λ_max tr Σ", a typo).
"""

from __future__ import annotations

from privdyn.dynamics.dpgd.clipping import (  # noqa: F401 - every name the module had stays importable
    _SQRT2 as _SQRT2,
)
from privdyn.dynamics.dpgd.clipping import (
    _SQRT_2_OVER_PI as _SQRT_2_OVER_PI,
)
from privdyn.dynamics.dpgd.clipping import (
    _factor_arrays as _factor_arrays,
)
from privdyn.dynamics.dpgd.clipping import (
    _factors as _factors,
)
from privdyn.dynamics.dpgd.clipping import (
    clipping_factors as clipping_factors,
)
from privdyn.dynamics.dpgd.integrator import (  # noqa: F401 - every name the module had stays importable
    _CUBIC_ROWS as _CUBIC_ROWS,
)
from privdyn.dynamics.dpgd.integrator import (
    _FACTORIALS as _FACTORIALS,
)
from privdyn.dynamics.dpgd.integrator import (
    _LOW_INVERSE as _LOW_INVERSE,
)
from privdyn.dynamics.dpgd.integrator import (
    _POWERS_GL as _POWERS_GL,
)
from privdyn.dynamics.dpgd.integrator import (
    _QUARTIC_ROWS as _QUARTIC_ROWS,
)
from privdyn.dynamics.dpgd.integrator import (
    _SERIES_COEFFICIENTS as _SERIES_COEFFICIENTS,
)
from privdyn.dynamics.dpgd.integrator import (
    _SERIES_CUTOFF as _SERIES_CUTOFF,
)
from privdyn.dynamics.dpgd.integrator import (
    _SERIES_TERMS as _SERIES_TERMS,
)
from privdyn.dynamics.dpgd.integrator import (
    _STEP_NODES as _STEP_NODES,
)
from privdyn.dynamics.dpgd.integrator import (
    _THETA_GL as _THETA_GL,
)
from privdyn.dynamics.dpgd.integrator import (
    _W_GL as _W_GL,
)
from privdyn.dynamics.dpgd.integrator import (
    _attempt as _attempt,
)
from privdyn.dynamics.dpgd.integrator import (
    _extrapolate as _extrapolate,
)
from privdyn.dynamics.dpgd.integrator import (
    _Node as _Node,
)
from privdyn.dynamics.dpgd.integrator import (
    _solve_exponential as _solve_exponential,
)
from privdyn.dynamics.dpgd.integrator import (
    _Step as _Step,
)
from privdyn.dynamics.dpgd.integrator import (
    _Stepper as _Stepper,
)
from privdyn.dynamics.dpgd.ode import (  # noqa: F401 - every name the module had stays importable
    _lsoda_rhs as _lsoda_rhs,
)
from privdyn.dynamics.dpgd.ode import (
    _scalar_system as _scalar_system,
)
from privdyn.dynamics.dpgd.ode import (
    _solve as _solve,
)
from privdyn.dynamics.dpgd.ode import (
    _solve_lsoda as _solve_lsoda,
)
from privdyn.dynamics.dpgd.ode import (
    final_private_risk as final_private_risk,
)
from privdyn.dynamics.dpgd.ode import (
    isotropic_risk_ode as isotropic_risk_ode,
)
from privdyn.dynamics.dpgd.ode import (
    sandwich_bounds as sandwich_bounds,
)
from privdyn.dynamics.dpgd.ode import (
    solve_risk_ode as solve_risk_ode,
)
from privdyn.dynamics.dpgd.system import (
    _END_GAP as _END_GAP,
)
from privdyn.dynamics.dpgd.system import (
    _GL_W as _GL_W,
)
from privdyn.dynamics.dpgd.system import (
    _GL_X as _GL_X,
)
from privdyn.dynamics.dpgd.system import (
    _MAX_CLOCK_ITERATIONS as _MAX_CLOCK_ITERATIONS,
)
from privdyn.dynamics.dpgd.system import (
    _THETA_GL_FULL as _THETA_GL_FULL,
)
from privdyn.dynamics.dpgd.system import (
    _W_GL_FULL as _W_GL_FULL,
)
from privdyn.dynamics.dpgd.system import (  # noqa: F401 - every name the module had stays importable
    DEFAULT_TIMES as DEFAULT_TIMES,
)
from privdyn.dynamics.dpgd.system import (
    METHODS as METHODS,
)
from privdyn.dynamics.dpgd.system import (
    ODESolverError as ODESolverError,
)
from privdyn.dynamics.dpgd.system import (
    RiskTrajectory as RiskTrajectory,
)
from privdyn.dynamics.dpgd.system import (
    _Drive as _Drive,
)
from privdyn.dynamics.dpgd.system import (
    _drive as _drive,
)
from privdyn.dynamics.dpgd.system import (
    _fill_tail as _fill_tail,
)
from privdyn.dynamics.dpgd.system import (
    _finish as _finish,
)
from privdyn.dynamics.dpgd.system import (
    _first_zero as _first_zero,
)
from privdyn.dynamics.dpgd.system import (
    _grouped_system as _grouped_system,
)
from privdyn.dynamics.dpgd.system import (
    _Horizon as _Horizon,
)
from privdyn.dynamics.dpgd.system import (
    _horizon as _horizon,
)
from privdyn.dynamics.dpgd.system import (
    _System as _System,
)
from privdyn.dynamics.dpgd.system import (
    _validate_method as _validate_method,
)
from privdyn.dynamics.dpgd.system import (
    _validate_times as _validate_times,
)
from privdyn.dynamics.dpgd.system import (
    final_jump as final_jump,
)

_MOVED = frozenset({"NoiseSource", "_DRAW_CHUNK", "_Normals", "simulate_homogenized_sde"})
"""The homogenized-SDE simulator moved to :mod:`privdyn.algorithms.homogenized_sde` (a simulator, not a theory
engine); its names stay importable from here, loaded on first use so that this package does not import a simulator."""


def __getattr__(name: str) -> object:
    if name in _MOVED:
        from privdyn.algorithms import homogenized_sde

        return getattr(homogenized_sde, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    "simulate_homogenized_sde",
    "solve_risk_ode",
]
