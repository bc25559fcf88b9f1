"""The exact moment closure of homogenized SGD (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687, eq. (1) with Ito's
formula (29)): a second, independent risk solver."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate

from privdyn import _check
from privdyn._arrays import read_only
from privdyn.dynamics.hsgd.volterra import _times
from privdyn.hsgd_problem import HSGDProblem, RiskCurve

__all__ = ["moment_ode_risk"]


# ----------------------------------------------------------------------------------------------------------------
# Moment ODE (exact closure)
# ----------------------------------------------------------------------------------------------------------------


def moment_ode_risk(problem: HSGDProblem, times: ArrayLike, *, rtol: float, atol: float,
                    method: str = "Radau") -> RiskCurve:
    """P_t, R_t and the group variances from the exact moment closure of HSGD (Itô's formula (29) applied to eq. (1)).

    With v = X − x̃ in eigen-coordinates, S_g = Σ_{j∈g} E v_j², C_g = Σ_{j∈g} x̃_j E v_j, M_g = Σ_{j∈g} (E v_j)²:

        dS_g/dt = −2γ(a_g S_g + ridge·C_g) + (γ²/d) n_g (2λ_g P_t + σ²),
        dC_g/dt = −γ(a_g C_g + ridge·target_sq_g),
        dM_g/dt = −2γ(a_g M_g + ridge·C_g),
        P_t = ½Σ_g λ_g S_g + ½E w²,   R_t = P_t + (ridge/2) Σ_g (S_g + 2C_g + target_sq_g),

    closed because E[𝒫(X_t)λ_j] = P_tλ_j. The per-direction variance is V_jj = (S_g − M_g)/n_g. This is a linear
    system of 3m equations integrated by :func:`scipy.integrate.solve_ivp` with its exact Jacobian; it uses γ(t)
    only (not Γ), which makes it an independent check of :func:`volterra_risk`.

    Args:
        problem: the :class:`HSGDProblem`.
        times: (T,) strictly increasing times ≥ 0.
        rtol, atol: the integrator's tolerances (no defaults: e.g. rtol=1e-10 and atol=1e-12 times the risk scale).
        method: a ``solve_ivp`` method; the implicit ``"Radau"`` handles stiff spectra (large 2γ·max a_g).

    Returns:
        A :class:`RiskCurve` with ``method="moment_ode"`` and ``group_variance`` (T, m).
    """
    _check.instance(HSGDProblem, problem=problem)
    ts = _times(times)
    _check.positive(rtol=rtol, atol=atol)
    lam = problem.spectrum.eigenvalues
    count = problem.spectrum.multiplicities.astype(float)
    a, ridge, d, m = problem.hessian_eigenvalues, problem.ridge, problem.dim, lam.size
    sigma2, noise2, target_sq = problem.noise_std**2, problem.label_noise**2, problem.target_sq
    lr = problem.learning_rate
    err0 = problem.x0_sq - 2 * problem.x0_dot_target + target_sq
    z0 = np.concatenate([err0 + count * problem.initial_variance, problem.x0_dot_target - target_sq, err0])

    def rate(t: float) -> float:
        return float(lr.value(t))

    def rhs(t: float, z: np.ndarray) -> np.ndarray:
        gamma = rate(t)
        s, c, q = z[:m], z[m:2 * m], z[2 * m:]
        p = 0.5 * np.dot(lam, s) + 0.5 * noise2
        return np.concatenate([-2 * gamma * (a * s + ridge * c) + gamma**2 / d * count * (2 * lam * p + sigma2),
                               -gamma * (a * c + ridge * target_sq),
                               -2 * gamma * (a * q + ridge * c)])

    eye = np.eye(m)

    def jacobian(t: float, z: np.ndarray) -> np.ndarray:
        gamma = rate(t)
        jac = np.zeros((3 * m, 3 * m))
        jac[:m, :m] = -2 * gamma * np.diag(a) + gamma**2 / d * np.outer(count * lam, lam)
        jac[:m, m:2 * m] = -2 * gamma * ridge * eye
        jac[m:2 * m, m:2 * m] = -gamma * np.diag(a)
        jac[2 * m:, 2 * m:] = -2 * gamma * np.diag(a)
        jac[2 * m:, m:2 * m] = -2 * gamma * ridge * eye
        return jac

    states = np.empty((ts.size, 3 * m))
    at_zero = ts == 0.0
    states[at_zero] = z0
    if np.any(~at_zero):
        options = {"jac": jacobian} if method in ("Radau", "BDF", "LSODA") else {}
        sol = integrate.solve_ivp(rhs, (0.0, float(ts[-1])), z0, method=method, t_eval=ts[~at_zero], rtol=rtol,
                                  atol=atol, **options)
        if not sol.success:
            raise ValueError(f"the moment ODE integration failed ({sol.message}); try a looser rtol/atol or "
                             "method='LSODA'.")
        states[~at_zero] = sol.y.T
    s, c, q = states[:, :m], states[:, m:2 * m], states[:, 2 * m:]
    pop = 0.5 * s @ lam + 0.5 * noise2
    reg = pop + 0.5 * ridge * (s.sum(axis=1) + 2 * c.sum(axis=1) + target_sq.sum())
    return RiskCurve(times=read_only(ts), population_risk=read_only(pop), regularized_risk=read_only(reg),
                     method="moment_ode", group_variance=read_only((s - q) / count))
