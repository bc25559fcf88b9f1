"""The Gaussian law of linearized homogenized SGD (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687, eq. (10)) and
quadratic statistics under it."""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._arrays import read_only
from privdyn.dynamics.hsgd.volterra import _integrated_rate, volterra_risk
from privdyn.hsgd_problem import HSGDProblem, RiskCurve, X0Policy
from privdyn.schedules import LearningRate

__all__ = ["HSGDLaw", "linearized_law", "quadratic_statistic"]


# ----------------------------------------------------------------------------------------------------------------
# Law of linearized HSGD, eq. (10)
# ----------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class HSGDLaw:
    """The Gaussian law N(m(t), V(t)) of linearized HSGD (9), eq. (10), in the eigenbasis of Σ, at given times.

    m(t) = Φ(t)x_0 + Φ(t)∫₀ᵗΦ(u)⁻¹γ(u)Σx̃ du = x* + e^{−AΓ(t)}(x_0 − x*) (eq. (5)), and
    V(t) = Φ(t)V(0)Φ(t)ᵀ + ∫₀ᵗ Φ(t, u)γ²(u)Q(u)Φ(t, u)ᵀ du with Q(u) = (2P_uΣ + σ²I)/d is diagonal in the eigenbasis:
    V_jj(t) = V(0)e^{−2a_jΓ(t)} + ∫₀ᵗ e^{−2a_j(Γ(t)−Γ(u))}γ(u)²(2P_uλ_j + σ²)/d du (eq. (10)). V(0) = 0 for
    ``fixed`` and ``random_public`` (conditional on the realized x_0), ``init_variance``·I for ``random_secret``
    (whose m(t) uses the initialization's mean). The moments are also those of HSGD (1) itself; the law is exact for
    (9).

    Attributes:
        problem: the :class:`HSGDProblem`.
        times: (T,) times t.
        integrated_learning_rate: (T,) Γ(t).
        mean: (T, d) m_j(t) per eigen-direction (direction order of ``problem.spectrum.groups``).
        group_variance: (T, m) V_jj(t) of one direction j of each group.
        population_risk, regularized_risk: (T,) P_t and R_t (P_t is the one in Q(t)).
        method: how the variances were computed (``"volterra"``, ``"moment_ode"``, ``"closed_form"``).
    """

    problem: HSGDProblem
    times: np.ndarray
    integrated_learning_rate: np.ndarray
    mean: np.ndarray
    group_variance: np.ndarray
    population_risk: np.ndarray
    regularized_risk: np.ndarray
    method: str

    def __post_init__(self) -> None:
        _check.record(self)

    @classmethod
    def from_curve(cls, problem: HSGDProblem, curve: RiskCurve) -> HSGDLaw:
        """The law from a :class:`RiskCurve` that carries ``group_variance`` (any method) and the closed-form mean."""
        if curve.group_variance is None:
            raise ValueError("curve has no group_variance: compute it with with_variance=True.")
        if problem.x0_coordinates is None:
            raise ValueError("the law's mean needs per-direction eigen-coordinates: build the problem with "
                             "HSGDProblem.from_coordinates or from_covariance.")
        times = np.asarray(curve.times)
        gamma_int = _time_integral(problem.learning_rate, times)
        lam, a = problem.spectrum.eigenvalues, problem.hessian_eigenvalues
        groups = problem.spectrum.groups
        x_star = (lam / a)[groups] * problem.target_coordinates
        decay = np.exp(-np.outer(gamma_int, a))[:, groups]  # (T, d) e^{−a_jΓ(t)}
        mean = x_star + decay * (problem.x0_coordinates - x_star)
        return cls(problem=problem, times=read_only(times), integrated_learning_rate=read_only(gamma_int),
                   mean=read_only(mean), group_variance=read_only(curve.group_variance),
                   population_risk=read_only(curve.population_risk), regularized_risk=read_only(curve.regularized_risk),
                   method=curve.method)

    @property
    def x0_policy(self) -> X0Policy:
        return self.problem.x0_policy

    @property
    def dim(self) -> int:
        return self.problem.dim

    @property
    def variance(self) -> np.ndarray:
        """(T, d) V_jj(t) per eigen-direction (a view expanded from ``group_variance``)."""
        return self.group_variance[:, self.problem.spectrum.groups]

    def transition(self, later: int, earlier: int) -> np.ndarray:
        """(m,) Φ(t, s) per group = exp(−a_g(Γ(t) − Γ(s))) for t = times[later], s = times[earlier] (from the Γ
        difference, never a ratio of exponentials)."""
        _check.integer(minimum=0, later=later, earlier=earlier)
        if later < earlier:
            raise ValueError(f"later must be >= earlier; got later={later}, earlier={earlier}.")
        gap = self.integrated_learning_rate[later] - self.integrated_learning_rate[earlier]
        return np.exp(-self.problem.hessian_eigenvalues * gap)

    def mean_in_original_basis(self) -> np.ndarray:
        """(T, d) m(t) in the original coordinates (needs ``problem.eigenvectors``)."""
        if self.problem.eigenvectors is None:
            raise ValueError("the problem has no eigenvectors: build it with HSGDProblem.from_covariance.")
        return self.mean @ self.problem.eigenvectors.T


def _time_integral(learning_rate: LearningRate, times: np.ndarray) -> np.ndarray:
    """Γ at arbitrary increasing times (closed form, or Gauss-Legendre on the intervals between them)."""
    if type(learning_rate).integral is not LearningRate.integral:
        return np.asarray(learning_rate.integral(times))
    points = times if times[0] == 0.0 else np.concatenate(([0.0], times))
    gamma_int = _integrated_rate(learning_rate, points)
    return gamma_int if times[0] == 0.0 else gamma_int[1:]


def linearized_law(problem: HSGDProblem, times: ArrayLike, *, max_step: float, refinements: int) -> HSGDLaw:
    """The law (10) of linearized HSGD at ``times``, its variances from :func:`volterra_risk` on the same grid.

    See :class:`HSGDLaw` for the formulas and :func:`volterra_risk` for ``max_step`` and ``refinements`` (the
    variances are extrapolated with the risks). Shapes: times (T,) -> mean (T, d), group_variance (T, m).
    """
    curve = volterra_risk(problem, times, max_step=max_step, refinements=refinements, with_variance=True)
    return HSGDLaw.from_curve(problem, curve)


def quadratic_statistic(law: HSGDLaw, *, matrix: ArrayLike, vector: ArrayLike | None = None,
                        constant: float = 0.0) -> np.ndarray:
    """E q(X_t) for a quadratic q(x) = ½xᵀTx + uᵀx + c (Definition 2), from the first two moments of the law.

    E q(X_t) = ½Σ_j T_jj V_jj(t) + ½m(t)ᵀT m(t) + uᵀm(t) + c. Itô's formula (29) closes on the first two moments
    (E[𝒫(X_t)Σ] = P_tΣ), so this is exact for HSGD (1) as well as for linearized HSGD (9).

    Args:
        law: an :class:`HSGDLaw`.
        matrix: T in eigen-coordinates: (d,) its diagonal, or (d, d) symmetric (use UᵀTU for a matrix in the
            original basis).
        vector: u (d,) in eigen-coordinates (Uᵀu), or None for 0.
        constant: c.

    Returns:
        (T,) the expected statistic at ``law.times``.
    """
    _check.instance(HSGDLaw, law=law)
    d = law.dim
    t_mat = _check.real_array(matrix=matrix)
    _check.finite(matrix=t_mat, constant=constant)
    mean = law.mean
    if t_mat.shape == (d,):
        diag = t_mat
        quad = (mean**2) @ t_mat
    elif t_mat.shape == (d, d):
        if not np.allclose(t_mat, t_mat.T, rtol=1e-12, atol=1e-12 * max(np.abs(t_mat).max(), 1e-300)):
            raise ValueError("matrix must be symmetric.")
        diag = np.diag(t_mat)
        quad = np.einsum("ti,ij,tj->t", mean, t_mat, mean)
    else:
        raise ValueError(f"matrix must have shape (d,) or (d, d) with d = {d}; got {t_mat.shape}.")
    value = 0.5 * law.variance @ diag + 0.5 * quad + float(constant)
    if vector is not None:
        u = np.asarray(vector)
        if u.shape != (d,):
            raise ValueError(f"vector must have shape (d,) = ({d},); got {u.shape}.")
        _check.finite(vector=u)
        value = value + mean @ u
    return value
