"""The dpgd risk ODE solved (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329, Theorem 1): the final private risk,
the isotropic ODE and the sandwich bounds."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate

from privdyn import _check
from privdyn.dynamics.dpgd.integrator import _solve_exponential
from privdyn.dynamics.dpgd.system import (
    Drive,
    GroupedSystem,
    ODESolverError,
    RiskTrajectory,
    _fill_tail,
    _finish,
    _horizon,
    _validate_method,
    grouped_system,
    validated_drive,
    validated_times,
)
from privdyn.schedules import LearningRate
from privdyn.spectra import Spectrum

__all__ = ["final_private_risk", "isotropic_risk_ode", "sandwich_bounds", "solve_risk_ode"]


# ---------------------------------------------------------------------------------------------------------------
# LSODA (the reference)
# ---------------------------------------------------------------------------------------------------------------


def _lsoda_rhs(system: GroupedSystem, drive: Drive) -> Any:
    rates, A, B, w = system.rates, system.gain_a, system.gain_b, system.weights
    cap = drive.cap

    def rhs(t: float, S: np.ndarray) -> np.ndarray:
        R = float(w @ S)
        eta_bar = min(float(drive.learning_rate.value(t)), cap)
        b = drive.noise_factor * max(-float(drive.learning_rate.squared_derivative(t)), 0.0)
        q, a, *_ = drive.scalars(eta_bar, R)
        return -2.0 * rates * q * S + A * a + B * b

    return rhs


def _solve_lsoda(system: GroupedSystem, drive: Drive, times: np.ndarray, rtol: float, atol: float | None) -> Any:
    horizon = _horizon(drive)
    S0 = system.initial.astype(float)
    w = system.weights
    out = np.full(times.shape, np.nan)
    R0 = float(w @ S0)
    if horizon.end <= 0.0:
        out[:] = R0
        return out, S0, R0, 0
    if atol is None:
        atol = 1e-3 * rtol * max(float(np.max(np.abs(S0))), 1e-12)
    inside = (times > 0.0) & (times < horizon.end)
    t_eval = np.concatenate([[0.0], times[inside], [horizon.end]])
    sol = integrate.solve_ivp(_lsoda_rhs(system, drive), (0.0, horizon.end), S0, method="LSODA", rtol=rtol,
                              atol=atol, t_eval=t_eval)
    if sol.status != 0:
        raise ODESolverError(f"LSODA failed: {sol.message} Try method='exponential' or a larger rtol.")
    risks = w @ sol.y
    out[times <= 0.0] = R0
    out[inside] = risks[1:-1]
    S_end, R_end = sol.y[:, -1], float(risks[-1])
    out[times == horizon.end] = R_end
    S_stop = _finish(system, drive, horizon, S_end, R_end)
    R_stop = float(w @ S_stop)
    _fill_tail(out, times, horizon, R_end, R_stop)
    return out, S_stop, R_stop, int(sol.nfev)


def _solve(system: GroupedSystem, drive: Drive, times: Any, method: str, rtol: float,
           atol: float | None) -> RiskTrajectory:
    ts = validated_times(times)
    _validate_method(method, rtol, atol)
    if method == "exponential":
        risk, S_stop, R_stop, steps, rejected, evaluations = _solve_exponential(system, drive, ts, float(rtol))
    else:
        risk, S_stop, R_stop, evaluations = _solve_lsoda(system, drive, ts, float(rtol), atol)
        steps = rejected = None
    return RiskTrajectory(times=ts, risk=risk, final_risk=R_stop, final_jump=drive.noise_factor * drive.value(1.0) ** 2,
                          final_states=S_stop, method=method, num_steps=steps, num_rejected_steps=rejected,
                          num_rhs_evaluations=evaluations)


# ---------------------------------------------------------------------------------------------------------------
# Public solvers
# ---------------------------------------------------------------------------------------------------------------


def solve_risk_ode(*, spectrum: Spectrum, target_projections: ArrayLike, aspect_ratio: float,
                   learning_rate: LearningRate,
                   clip: float, rho: float, label_noise: float, times: ArrayLike | None = None,
                   method: str = "exponential",
                   rtol: float = 1e-8, atol: float | None = None) -> RiskTrajectory:
    """The deterministic equivalent R(t) of DP-GD's excess risk: the ODE of Theorem 1 (Definition 4.2, eq. 4.7).

    Solves, on the m eigenvalue groups of ``spectrum`` (S_g = Σ_{i∈g} D_i, multiplicity m_g),

        dS_g/dt = −2λ_g η̄ μ_c(R) S_g + m_g[λ_g η̄² ν_c(R)(R + ζ²/2) γ + 2c²σ̃²γ²],   R = (1/d) Σ_g λ_g S_g,

    with η̄ = min(η̃, 2/γ), ρ²σ̃² = max(−dη̃²/dt, 0), c′ = c/√(2R + ζ²) in :func:`clipping_factors`, and
    S_g(0) = d·p_g/2 where p_g = Σ_{i∈g} (ω_iᵀθ*)². R(1) is the limit t → 1⁻; the released iterate's risk is
    R(1) + 2c²η̃(1)²γ²/ρ² (Proposition 4.4, :attr:`RiskTrajectory.final_private_risk`).

    ``method="exponential"`` is an adaptive exponential integrator written for this system. The decay of every group
    is integrated exactly in the clock u = ∫η̄μ dt: over a step, S_g(end) = e^{−2λ_g Δu} S_g(start) + m_g ∫₀^Δu
    e^{−2λ_g(Δu − u)}(λ_g f_a + f_b)(u) du with f_a = a/q and f_b = b/q, so stiffness (rates up to 2λ_max·2/γ) costs
    nothing. f_a and f_b are approximated by cubics in u fixed by their end values and by their integrals to the mid
    node and to the end. Those integrals are ∫a dt and ∫b dt over the step, taken in t where they are smooth:
    ∫b dt = (2c²γ²/ρ²)(η̃²(start) − η̃²(end)) exactly, ∫a dt and the clock by Gauss–Legendre quadrature with η̄ exact
    and R interpolated. So the step is exact in the stiff limit (quasi-static states follow f at the step end) and in
    the non-stiff one (the step's forcing is the integral), also where f is singular: b/q ∝ (1 − t)^(−1/2) near t = 1
    for α = ½. The products with e^{−z} reduce to φ-functions φ₁..φ₄ (Taylor series below z = 0.2), one pass over the m
    groups per clock value. R at the mid node and at the end solve a 2-by-2 Newton system built from two passes; the
    clock's dependence on R enters it to first order, and the passes are redone only if the second-order remainder
    exceeds ``rtol``. This is a second-order midpoint exponential integrator for Definition 4.2's ODE carried to fourth
    order in the non-stiff limit. The step size follows an embedded error estimate, at most ``rtol``·R per step: the
    quadratic f-approximation without the mid-node integral, the quadrature with R cubic against quartic
    (matching dR/dt at the end too), and the Gauss–Legendre rule on the halves against the whole step (which grades
    the mesh where η̄ itself is singular, as √(1 − t) for α = ½). The kink where η̃ crosses 2/γ ends a step; a graded
    mesh near t = 0 for small τ and near t = 1 for α = ½ comes out of the error control. Reported times inside a step
    get their own sub-step from the step start. Against LSODA at rtol = 1e-10, the relative error in R is about
    ``rtol`` or below (tested ≤ 1e-6 at the default 1e-8 over random spectra and the paper's schedules, τ down to
    1e-3 and β up to 1000). When η̃(1) = 0, the last 1e-7 of [0, 1] is crossed in one step with μ, ν frozen and
    ∫σ̃² exact. The step attempt (its passes over the m groups, the Newton solve, the state update and the error
    estimate) runs compiled with numba (compiled on first use, cached on disk); the step-size control runs in Python,
    one compiled call and one evaluation of the schedule per attempt.

    ``method="lsoda"``: scipy ``solve_ivp(method="LSODA", rtol=rtol, atol=atol)`` with its default (finite-difference,
    dense) Jacobian; ``atol`` defaults to 1e-3·rtol·max S_g(0). The test reference; slow for large m in stiff settings.

    Args:
        spectrum: the covariance spectrum (tr Σ = d, as in Assumption 1; otherwise an
            :class:`~privdyn.schedules.OutsideTheoryWarning`).
        target_projections: (m,) p_g, the squared projections of θ* summed within each eigenvalue group
            (e.g. :func:`privdyn.spectra.isotropic_target`).
        aspect_ratio: γ = d/n > 0.
        learning_rate: the profile η̃ (non-increasing; :mod:`privdyn.schedules`).
        clip: c > 0 (C_clip = c√d).
        rho: ρ > 0 (ρ²/2-zCDP).
        label_noise: ζ ≥ 0; ζ = 0 runs with an :class:`~privdyn.schedules.OutsideTheoryWarning` (ζ > 0 is assumed).
        times: (T,) increasing times in [0, 1] where R is reported; None: :data:`DEFAULT_TIMES`.
        method: ``"exponential"`` or ``"lsoda"``.
        rtol: relative tolerance in [1e-13, 1e-2]; for ``"exponential"``, the local error allowed per step relative
            to R (the global error is of the same order).
        atol: LSODA's absolute tolerance (ignored by ``"exponential"``).

    Returns:
        A :class:`RiskTrajectory`. Estimates of the deterministic equivalent; Theorem 1 bounds its distance to
        DP-GD's risk by O(log²n/√n) with overwhelming probability.

    Raises:
        ValueError: a non-positive ``aspect_ratio``, ``clip`` or ``rho``, a negative ``label_noise``, bad ``times``,
            ``target_projections`` of the wrong shape or negative.
        ODESolverError: the solver could not converge (the message names the time and an alternative).

    Shapes: target_projections (m,), times (T,) -> risk (T,), final_states (m,).
    """
    system = grouped_system(spectrum, target_projections)
    drive = validated_drive(learning_rate, aspect_ratio, clip, rho, label_noise)
    return _solve(system, drive, times, method, rtol, atol)


def final_private_risk(*, spectrum: Spectrum, target_projections: ArrayLike, aspect_ratio: float,
                       learning_rate: LearningRate, clip: float, rho: float, label_noise: float,
                       times: ArrayLike | None = None,
                       method: str = "exponential", rtol: float = 1e-8, atol: float | None = None) -> float:
    """R(1) + 2c²η̃(1)²γ²/ρ², the ODE risk of the released iterate (Proposition 4.4 of arXiv 2505.16329).

    Arguments as in :func:`solve_risk_ode`; ``times`` defaults to (1,) here (nothing else is reported).
    """
    trajectory = solve_risk_ode(spectrum=spectrum, target_projections=target_projections, aspect_ratio=aspect_ratio,
                                learning_rate=learning_rate, clip=clip, rho=rho, label_noise=label_noise,
                                times=(1.0,) if times is None else times, method=method, rtol=rtol, atol=atol)
    return trajectory.final_private_risk


def _scalar_system(initial_risk: float, descent: float, variance: float) -> GroupedSystem:
    one = np.ones(1)
    return GroupedSystem(rates=descent * one, gain_a=variance * one, gain_b=one, weights=one,
                         initial=initial_risk * one)


def isotropic_risk_ode(*, initial_risk: float, aspect_ratio: float, learning_rate: LearningRate, clip: float,
                       rho: float, label_noise: float, times: ArrayLike | None = None, method: str = "exponential",
                       rtol: float = 1e-8, atol: float | None = None) -> RiskTrajectory:
    """The scalar risk ODE for Σ = I (eq. 4.11 of arXiv 2505.16329).

        dR/dt = −2η̄ μ_c(R) R + η̄² ν_c(R)(R + ζ²/2) γ + 2c²σ̃²γ²,   R(0) = ‖θ*‖²/2.

    It equals :func:`solve_risk_ode` on ``Spectrum.identity(d)`` for any d (the tests check this). ``final_states``
    holds R(1).

    Args:
        initial_risk: R(0) = ‖θ*‖²/2 ≥ 0 (0.5 in the paper's figures).
        Others: as in :func:`solve_risk_ode`.

    Returns:
        A :class:`RiskTrajectory` (estimate of the deterministic equivalent, accurate to about ``rtol``).
    """
    _check.scalar(initial_risk=initial_risk)
    _check.non_negative(initial_risk=initial_risk)
    drive = validated_drive(learning_rate, aspect_ratio, clip, rho, label_noise)
    return _solve(_scalar_system(float(initial_risk), 1.0, 1.0), drive, times, method, rtol, atol)


def sandwich_bounds(*, spectrum: Spectrum, target_projections: ArrayLike, aspect_ratio: float,
                    learning_rate: LearningRate,
                    clip: float, rho: float, label_noise: float, times: ArrayLike | None = None,
                    method: str = "exponential",
                    rtol: float = 1e-8, atol: float | None = None) -> tuple[RiskTrajectory, RiskTrajectory]:
    """Scalar lower and upper bounds R̲ ≤ R ≤ R̄ of the risk ODE (eq. 4.12, Proposition D.1 of arXiv 2505.16329).

        dR̄/dt = −2λ_min η̃ μ_c(R̄) R̄ + λ_max η̃² ν_c(R̄)(R̄ + ζ²/2) γ + 2c²σ̃²γ²,
        dR̲/dt = −2λ_max η̃ μ_c(R̲) R̲ + η̃² ν_c(R̲)(R̲ + ζ²/2) γ + 2c²σ̃²γ²,    R̄(0) = R̲(0) = R(0).

    The variance coefficients come from 1 ≤ tr(Σ²)/d ≤ λ_max (the proof prints "tr(Σ²) ≥ λ_max tr Σ", a typo). The
    comparison argument uses that μ_c(R) decreases and ν_c(R)(R + ζ²/2) increases in R (Lemma B.2).

    Formal guarantee: bounds on the ODE solution R(t) of :func:`solve_risk_ode` (up to the solvers' tolerance), not on
    DP-GD itself.

    Args:
        As in :func:`solve_risk_ode`. The bounds assume η̃ ≤ 2/γ (no cap): η̃(0) > 2/γ raises (η̃ is non-increasing).

    Returns:
        (lower, upper), two :class:`RiskTrajectory` (``final_states`` holds the bound at t = 1).

    Raises:
        ValueError: η̃(0) > 2/γ, and the errors of :func:`solve_risk_ode`.
    """
    system = grouped_system(spectrum, target_projections)
    drive = validated_drive(learning_rate, aspect_ratio, clip, rho, label_noise)
    eta0 = drive.value(0.0)
    if eta0 > drive.cap:
        raise ValueError(f"learning_rate must stay <= 2/aspect_ratio = {drive.cap:.6g} for the sandwich bounds "
                         f"(eq. 4.12 assumes the cap min(eta, 2/gamma) inactive); got learning_rate.value(0)={eta0!r}.")
    R0 = float(system.weights @ system.initial)
    lam_min, lam_max = float(system.rates[0]), float(system.rates[-1])
    lower = _solve(_scalar_system(R0, lam_max, 1.0), drive, times, method, rtol, atol)
    upper = _solve(_scalar_system(R0, lam_min, lam_max), drive, times, method, rtol, atol)
    return lower, upper
