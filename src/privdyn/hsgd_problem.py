"""The noisy least-squares problem of homogenized SGD (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687): its spectrum,
target, start, schedule and noise, the kernel mass, and the risk-curve types shared by data, simulators and engines."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._arrays import read_only
from privdyn.schedules import Constant, LearningRate
from privdyn.spectra import Spectrum, eigendecomposition

__all__ = ['X0Policy', 'HSGDProblem', 'RiskCurve', 'RiskLimit', 'kernel_mass', 'REFERENCE']


REFERENCE = ("Lin, Kolaczyk, Smith, Paquette, High-Dimensional Privacy-Utility Dynamics of Noisy SGD on Least Squares "
             "(arXiv 2510.16687)")
"""The hsgd paper (arXiv 2510.16687), as the problem's records cite it."""


class X0Policy(enum.StrEnum):
    """How x_0 is chosen and what an observer knows about it (``x0_policy``).

    The theory treats x_0 as deterministic; Section 5 draws x_0 ~ N(0, I).

    * ``fixed``: x_0 is a given deterministic vector; V(0) = 0 (the paper's theory, which conditions on x_0).
    * ``random_public``: x_0 ~ N(0, I) was drawn and is then published; the law is conditional on the realized x_0,
      so the engine computes exactly what ``fixed`` computes with that x_0 (the policy is recorded for the accountant).
    * ``random_secret``: x_0 ~ N(x0_mean, init_variance·I) is secret (the paper's experiments draw N(0, I));
      P_t, R_t average over it and V(t) gains Φ(t)V(0)Φ(t)ᵀ = init_variance·e^{−2aΓ(t)} (eq. (10)).
    """

    FIXED = "fixed"
    RANDOM_PUBLIC = "random_public"
    RANDOM_SECRET = "random_secret"



@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class HSGDProblem:
    """Noisy HSGD on ridge-regularized least squares, reduced to the eigen-groups of Σ.

    Build it with :meth:`from_covariance` (a matrix and vectors in the original basis), :meth:`from_coordinates`
    (eigen-coordinates per direction) or :meth:`from_group_moments` (the per-group sums only: enough for the risk, not
    for the law's mean). The per-group quantities are defined in the module docstring.

    Attributes:
        spectrum: the m eigen-groups of Σ (eigenvalues λ_g ≥ 0, multiplicities n_g, d = Σ n_g).
        learning_rate: the continuous-time profile γ(t) ≥ 0 (step_size η = γ(t)/d at SGD step k = t·d).
        ridge: δ ≥ 0; every a_g = λ_g + ridge must be > 0 (A = Σ + ridge·I positive definite).
        noise_std: σ ≥ 0, the absolute std of the Gaussian noise added to every stochastic gradient.
        x0_sq, x0_dot_target, target_sq: (m,) group sums (module docstring). For ``random_secret`` the x_0 sums are
            those of the initialization's mean.
        label_noise: √(E w²) ≥ 0, the root-mean-square label noise (E w² enters 𝒫 as ½E w²).
        x0_policy: an :class:`X0Policy` (a string is accepted).
        init_variance: the per-coordinate variance of a ``random_secret`` initialization (1 in the paper); unused
            by the other policies.
        x0_coordinates, target_coordinates: (d,) eigen-coordinates u_jᵀx_0 and u_jᵀx̃ in the direction order of
            ``spectrum.groups``, or None (then the law's mean is unavailable).
        eigenvectors: (d, d) columns u_j in direction order, when built from a matrix (else None).
    """

    spectrum: Spectrum
    learning_rate: LearningRate
    ridge: float
    noise_std: float
    x0_sq: np.ndarray
    x0_dot_target: np.ndarray
    target_sq: np.ndarray
    label_noise: float = 0.0
    x0_policy: X0Policy = X0Policy.FIXED
    init_variance: float = 1.0
    x0_coordinates: np.ndarray | None = None
    target_coordinates: np.ndarray | None = None
    eigenvectors: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.spectrum, Spectrum):
            raise TypeError(f"spectrum must be a privdyn.spectra.Spectrum; got {type(self.spectrum).__name__}.")
        if not isinstance(self.learning_rate, LearningRate):
            raise TypeError("learning_rate must be a privdyn.schedules.LearningRate (use schedules.Custom("
                            f"..., check_non_increasing=False) for any positive profile); got "
                            f"{type(self.learning_rate).__name__}.")
        _check.scalar(ridge=self.ridge, noise_std=self.noise_std, label_noise=self.label_noise,
                      init_variance=self.init_variance)
        _check.non_negative(ridge=self.ridge, noise_std=self.noise_std, label_noise=self.label_noise)
        _check.positive(init_variance=self.init_variance)
        _check.one_of(tuple(p.value for p in X0Policy), x0_policy=self.x0_policy)
        object.__setattr__(self, "x0_policy", X0Policy(self.x0_policy))
        for name in ("ridge", "noise_std", "label_noise", "init_variance"):
            object.__setattr__(self, name, float(getattr(self, name)))
        lam = self.spectrum.eigenvalues
        if lam[0] + self.ridge <= 0:
            raise ValueError("ridge must be > 0 when the covariance has a zero eigenvalue (A = Σ + ridge·I must be "
                             f"positive definite); got ridge={self.ridge!r} with smallest eigenvalue {lam[0]:g}.")
        m = self.spectrum.num_groups
        for name in ("x0_sq", "x0_dot_target", "target_sq"):
            value = np.asarray(getattr(self, name))
            if value.shape != (m,):
                raise ValueError(f"{name} must have shape (m,) = ({m},) (one value per eigen-group); got "
                                 f"{value.shape}.")
            _check.finite(**{name: value})
            object.__setattr__(self, name, read_only(value))
        _check.non_negative(x0_sq=self.x0_sq, target_sq=self.target_sq)
        bound = np.sqrt(self.x0_sq * self.target_sq)
        if np.any(np.abs(self.x0_dot_target) > bound * (1 + 1e-9) + 1e-300):
            raise ValueError("x0_dot_target must satisfy |x0_dot_target| <= sqrt(x0_sq * target_sq) in every group "
                             "(Cauchy-Schwarz); the group sums are inconsistent.")
        d = self.spectrum.dim
        for name in ("x0_coordinates", "target_coordinates"):
            value = getattr(self, name)
            if value is None:
                continue
            value = np.asarray(value)
            if value.shape != (d,):
                raise ValueError(f"{name} must have shape (d,) = ({d},); got {value.shape}.")
            _check.finite(**{name: value})
            object.__setattr__(self, name, read_only(value))
        if (self.x0_coordinates is None) != (self.target_coordinates is None):
            raise ValueError("give both x0_coordinates and target_coordinates, or neither.")
        if self.x0_coordinates is not None and self.target_coordinates is not None:
            sums = {"x0_sq": self.spectrum.group_sums(self.x0_coordinates**2),
                    "x0_dot_target": self.spectrum.group_sums(self.x0_coordinates * self.target_coordinates),
                    "target_sq": self.spectrum.group_sums(self.target_coordinates**2)}
            scale = 1.0 + float(np.sum(self.x0_coordinates**2 + self.target_coordinates**2))
            for name, value in sums.items():
                if not np.allclose(value, getattr(self, name), rtol=1e-9, atol=1e-12 * scale):
                    raise ValueError(f"{name} does not match the group sums of the coordinates.")
        if self.eigenvectors is not None:
            vectors = np.asarray(self.eigenvectors)
            if vectors.shape != (d, d):
                raise ValueError(f"eigenvectors must have shape (d, d) = ({d}, {d}); got {vectors.shape}.")
            object.__setattr__(self, "eigenvectors", read_only(vectors))

    # --- constructors -------------------------------------------------------------------------------------------

    @classmethod
    def from_coordinates(cls, spectrum: Spectrum, *, target: ArrayLike, x0: ArrayLike | None = None,
                         learning_rate: LearningRate, ridge: float, noise_std: float, label_noise: float = 0.0,
                         x0_policy: X0Policy | str = X0Policy.FIXED, init_variance: float = 1.0,
                         eigenvectors: np.ndarray | None = None) -> HSGDProblem:
        """A problem from eigen-coordinates (d,) of x̃ (``target``) and x_0, in the direction order of the spectrum.

        ``x0`` is required for ``fixed`` and ``random_public`` (the realized x_0); for ``random_secret`` it is the
        mean of the initialization and defaults to 0 (the paper's N(0, I)).
        """
        policy = as_x0_policy(x0_policy)
        d = spectrum.dim
        target = np.asarray(target)
        if target.shape != (d,):
            raise ValueError(f"target must have shape (d,) = ({d},); got {target.shape}.")
        if x0 is None:
            if policy is not X0Policy.RANDOM_SECRET:
                raise ValueError(f"x0 is required for x0_policy={policy.value!r} (the realized initialization); only "
                                 "'random_secret' may omit it (mean 0).")
            x0 = np.zeros(d)
        x0 = np.asarray(x0)
        if x0.shape != (d,):
            raise ValueError(f"x0 must have shape (d,) = ({d},); got {x0.shape}.")
        _check.finite(target=target, x0=x0)
        return cls(spectrum=spectrum, learning_rate=learning_rate, ridge=ridge, noise_std=noise_std,
                   x0_sq=spectrum.group_sums(x0**2), x0_dot_target=spectrum.group_sums(x0 * target),
                   target_sq=spectrum.group_sums(target**2), label_noise=label_noise, x0_policy=policy,
                   init_variance=init_variance, x0_coordinates=x0, target_coordinates=target,
                   eigenvectors=eigenvectors)

    @classmethod
    def from_covariance(cls, covariance: ArrayLike, *, target: ArrayLike, x0: ArrayLike | None = None,
                        learning_rate: LearningRate, ridge: float, noise_std: float, label_noise: float = 0.0,
                        x0_policy: X0Policy | str = X0Policy.FIXED, init_variance: float = 1.0,
                        rtol: float = 1e-10) -> HSGDProblem:
        """A problem from the second-moment matrix Σ (d, d) and x̃, x_0 (d,) in the original basis.

        Σ must be symmetric positive semi-definite (eigenvalues below −1e−10·max|λ| raise ``ValueError``);
        eigenvalues within ``rtol``·max λ are grouped (:func:`privdyn.spectra.eigendecomposition`).
        """
        spectrum, vectors = eigendecomposition(covariance, rtol=rtol)
        d = spectrum.dim
        target = np.asarray(target)
        if target.shape != (d,):
            raise ValueError(f"target must have shape (d,) = ({d},); got {target.shape}.")
        if x0 is not None and np.asarray(x0).shape != (d,):
            raise ValueError(f"x0 must have shape (d,) = ({d},); got {np.asarray(x0).shape}.")
        x0_eig = None if x0 is None else vectors.T @ np.asarray(x0)
        return cls.from_coordinates(spectrum, target=vectors.T @ target, x0=x0_eig, learning_rate=learning_rate,
                                    ridge=ridge, noise_std=noise_std, label_noise=label_noise, x0_policy=x0_policy,
                                    init_variance=init_variance, eigenvectors=vectors)

    @classmethod
    def from_group_moments(cls, spectrum: Spectrum, *, x0_sq: np.ndarray, x0_dot_target: np.ndarray,
                           target_sq: np.ndarray, learning_rate: LearningRate, ridge: float, noise_std: float,
                           label_noise: float = 0.0,
                           x0_policy: X0Policy | str = X0Policy.FIXED, init_variance: float = 1.0) -> HSGDProblem:
        """A problem from the per-group sums (m,) only: risks and variances, but no per-direction mean."""
        return cls(spectrum=spectrum, learning_rate=learning_rate, ridge=ridge, noise_std=noise_std, x0_sq=x0_sq,
                   x0_dot_target=x0_dot_target, target_sq=target_sq, label_noise=label_noise,
                   x0_policy=as_x0_policy(x0_policy), init_variance=init_variance)

    # --- derived quantities -------------------------------------------------------------------------------------

    @property
    def dim(self) -> int:
        """The dimension d (the 1/d of eq. (1) uses it)."""
        return self.spectrum.dim

    @property
    def hessian_eigenvalues(self) -> np.ndarray:
        """a_g = λ_g + ridge, the eigenvalues of A = Σ + ridge·I per group: shape (m,)."""
        return self.spectrum.eigenvalues + self.ridge

    @property
    def initial_variance(self) -> float:
        """V_jj(0): ``init_variance`` for ``random_secret``, else 0."""
        return self.init_variance if self.x0_policy is X0Policy.RANDOM_SECRET else 0.0

    def replace(self, **changes: Any) -> HSGDProblem:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def _moments(self) -> GroupMoments:
        lam = self.spectrum.eigenvalues
        a = self.hessian_eigenvalues
        ratio = lam / a
        shrink = self.ridge / a
        proj = self.x0_dot_target - ratio * self.target_sq
        return GroupMoments(
            lam=lam, a=a, count=self.spectrum.multiplicities.astype(float),
            # Σ_{j∈g}(x0_j − x*_j)², Σ(x0_j − x*_j)(x*_j − x̃_j), Σ(x*_j − x̃_j)², Σ x*_j², Σ x*_j(x0_j − x*_j)
            rr=self.x0_sq - 2 * ratio * self.x0_dot_target + ratio**2 * self.target_sq,
            re=-shrink * proj, ee=shrink**2 * self.target_sq, ss=ratio**2 * self.target_sq, sr=ratio * proj)


@dataclasses.dataclass(frozen=True)
class GroupMoments:
    """Per-group coefficients of the spectral form of eqs. (6)-(7) (x* = A⁻¹Σx̃, ρ = x_0 − x*, e = x* − x̃)."""

    lam: np.ndarray
    a: np.ndarray
    count: np.ndarray
    rr: np.ndarray
    re: np.ndarray
    ee: np.ndarray
    ss: np.ndarray
    sr: np.ndarray


def as_x0_policy(value: Any) -> X0Policy:
    _check.one_of(tuple(p.value for p in X0Policy), x0_policy=value)
    return X0Policy(value)


# ----------------------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class RiskCurve:
    """Expected risks of HSGD at the requested times.

    Attributes:
        times: (T,) the requested times t (SGD step k is t = k/d).
        population_risk: (T,) P_t = E𝒫(X_t).
        regularized_risk: (T,) R_t = Eℛ(X_t).
        method: ``"volterra"``, ``"moment_ode"`` or ``"closed_form"`` (ARCHITECTURE.md's ``method`` values).
        group_variance: (T, m) the variance V_jj(t) of one direction j of each group (None when not requested).
        population_risk_error, regularized_risk_error: (T,) Romberg error estimates (None without refinement).
        num_steps: the number of quadrature steps of the finest grid (0 for non-grid methods).
        refinements: the number of grid halvings used by the Romberg extrapolation.
    """

    times: np.ndarray
    population_risk: np.ndarray
    regularized_risk: np.ndarray
    method: str
    group_variance: np.ndarray | None = None
    population_risk_error: np.ndarray | None = None
    regularized_risk_error: np.ndarray | None = None
    num_steps: int = 0
    refinements: int = 0

    def __post_init__(self) -> None:
        _check.record(self)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RiskLimit:
    """Long-time limit of HSGD with a constant learning rate (derived: the renewal theorem for (6)-(7)).

    Attributes:
        population_risk: P_∞ = (𝒫(x*) + N_∞)/(1 − κ_K).
        regularized_risk: R_∞ = ℛ(x*) + (γ/(2d)) tr(Σ) P_∞ + σ²γ/4.
        kernel_mass: κ_K = ∫₀^∞ K_P = (γ/(2d)) Σ_j λ_j²/a_j (< 1).
        group_variance: (m,) stationary V_jj = γ(2P_∞λ_g + σ²)/(2d a_g).
    """

    population_risk: float
    regularized_risk: float
    kernel_mass: float
    group_variance: np.ndarray

    def __post_init__(self) -> None:
        _check.record(self)


# ----------------------------------------------------------------------------------------------------------------
# Constant learning rate: stability, long-time limit, isotropic closed form
# ----------------------------------------------------------------------------------------------------------------


def constant_rate(problem: HSGDProblem, what: str) -> float:
    _check.instance(HSGDProblem, problem=problem)
    if not isinstance(problem.learning_rate, Constant):
        raise ValueError(f"{what} needs a constant learning_rate (schedules.Constant); got "
                         f"{type(problem.learning_rate).__name__}.")
    return float(problem.learning_rate.initial_learning_rate)


def kernel_mass(problem: HSGDProblem) -> float:
    """κ_K = (γ/(2d)) Σ_j λ_j²/(λ_j + ridge) for a constant learning rate γ; stable iff κ_K < 1."""
    gamma = constant_rate(problem, "kernel_mass")
    lam, count = problem.spectrum.eigenvalues, problem.spectrum.multiplicities
    return gamma / (2 * problem.dim) * float(np.dot(count, lam**2 / problem.hessian_eigenvalues))
