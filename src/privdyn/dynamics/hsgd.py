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

import dataclasses
import enum
import functools
import math
from typing import Any, cast

import numpy as np
from scipy import integrate

from privdyn import _check
from privdyn.schedules import Constant, LearningRate
from privdyn.spectra import Spectrum, eigendecomposition

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

REFERENCE = ("Lin, Kolaczyk, Smith, Paquette, High-Dimensional Privacy-Utility Dynamics of Noisy SGD on Least Squares "
             "(arXiv 2510.16687)")

# Rows of the (N, m) exponential tables evaluated at once: bounds the memory at _CHUNK·m doubles per table.
_CHUNK = 512
# Gauss-Legendre nodes per grid interval for Γ(t) = ∫γ when the profile has no closed-form integral.
_GAUSS_NODES = 10


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


def _frozen(array: Any) -> np.ndarray:
    out = np.array(array, dtype=float)
    out.setflags(write=False)
    return out


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
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (m,):
                raise ValueError(f"{name} must have shape (m,) = ({m},) (one value per eigen-group); got "
                                 f"{value.shape}.")
            _check.finite(**{name: value})
            object.__setattr__(self, name, _frozen(value))
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
            value = np.asarray(value, dtype=float)
            if value.shape != (d,):
                raise ValueError(f"{name} must have shape (d,) = ({d},); got {value.shape}.")
            _check.finite(**{name: value})
            object.__setattr__(self, name, _frozen(value))
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
            vectors = np.asarray(self.eigenvectors, dtype=float)
            if vectors.shape != (d, d):
                raise ValueError(f"eigenvectors must have shape (d, d) = ({d}, {d}); got {vectors.shape}.")
            object.__setattr__(self, "eigenvectors", _frozen(vectors))

    # --- constructors -------------------------------------------------------------------------------------------

    @classmethod
    def from_coordinates(cls, spectrum: Spectrum, *, target: Any, x0: Any = None, learning_rate: LearningRate,
                         ridge: float, noise_std: float, label_noise: float = 0.0,
                         x0_policy: X0Policy | str = X0Policy.FIXED, init_variance: float = 1.0,
                         eigenvectors: Any = None) -> HSGDProblem:
        """A problem from eigen-coordinates (d,) of x̃ (``target``) and x_0, in the direction order of the spectrum.

        ``x0`` is required for ``fixed`` and ``random_public`` (the realized x_0); for ``random_secret`` it is the
        mean of the initialization and defaults to 0 (the paper's N(0, I)).
        """
        policy = _policy(x0_policy)
        d = spectrum.dim
        target = np.asarray(target, dtype=float)
        if target.shape != (d,):
            raise ValueError(f"target must have shape (d,) = ({d},); got {target.shape}.")
        if x0 is None:
            if policy is not X0Policy.RANDOM_SECRET:
                raise ValueError(f"x0 is required for x0_policy={policy.value!r} (the realized initialization); only "
                                 "'random_secret' may omit it (mean 0).")
            x0 = np.zeros(d)
        x0 = np.asarray(x0, dtype=float)
        if x0.shape != (d,):
            raise ValueError(f"x0 must have shape (d,) = ({d},); got {x0.shape}.")
        _check.finite(target=target, x0=x0)
        return cls(spectrum=spectrum, learning_rate=learning_rate, ridge=ridge, noise_std=noise_std,
                   x0_sq=spectrum.group_sums(x0**2), x0_dot_target=spectrum.group_sums(x0 * target),
                   target_sq=spectrum.group_sums(target**2), label_noise=label_noise, x0_policy=policy,
                   init_variance=init_variance, x0_coordinates=x0, target_coordinates=target,
                   eigenvectors=eigenvectors)

    @classmethod
    def from_covariance(cls, covariance: Any, *, target: Any, x0: Any = None, learning_rate: LearningRate,
                        ridge: float, noise_std: float, label_noise: float = 0.0,
                        x0_policy: X0Policy | str = X0Policy.FIXED, init_variance: float = 1.0,
                        rtol: float = 1e-10) -> HSGDProblem:
        """A problem from the second-moment matrix Σ (d, d) and x̃, x_0 (d,) in the original basis.

        Σ must be symmetric positive semi-definite (eigenvalues below −1e−10·max|λ| raise ``ValueError``);
        eigenvalues within ``rtol``·max λ are grouped (:func:`privdyn.spectra.eigendecomposition`).
        """
        spectrum, vectors = eigendecomposition(covariance, rtol=rtol)
        d = spectrum.dim
        target = np.asarray(target, dtype=float)
        if target.shape != (d,):
            raise ValueError(f"target must have shape (d,) = ({d},); got {target.shape}.")
        if x0 is not None and np.asarray(x0).shape != (d,):
            raise ValueError(f"x0 must have shape (d,) = ({d},); got {np.asarray(x0).shape}.")
        x0_eig = None if x0 is None else vectors.T @ np.asarray(x0, dtype=float)
        return cls.from_coordinates(spectrum, target=vectors.T @ target, x0=x0_eig, learning_rate=learning_rate,
                                    ridge=ridge, noise_std=noise_std, label_noise=label_noise, x0_policy=x0_policy,
                                    init_variance=init_variance, eigenvectors=vectors)

    @classmethod
    def from_group_moments(cls, spectrum: Spectrum, *, x0_sq: Any, x0_dot_target: Any, target_sq: Any,
                           learning_rate: LearningRate, ridge: float, noise_std: float, label_noise: float = 0.0,
                           x0_policy: X0Policy | str = X0Policy.FIXED, init_variance: float = 1.0) -> HSGDProblem:
        """A problem from the per-group sums (m,) only: risks and variances, but no per-direction mean."""
        return cls(spectrum=spectrum, learning_rate=learning_rate, ridge=ridge, noise_std=noise_std, x0_sq=x0_sq,
                   x0_dot_target=x0_dot_target, target_sq=target_sq, label_noise=label_noise,
                   x0_policy=_policy(x0_policy), init_variance=init_variance)

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

    def _moments(self) -> _GroupMoments:
        lam = self.spectrum.eigenvalues
        a = self.hessian_eigenvalues
        ratio = lam / a
        shrink = self.ridge / a
        proj = self.x0_dot_target - ratio * self.target_sq
        return _GroupMoments(
            lam=lam, a=a, count=self.spectrum.multiplicities.astype(float),
            # Σ_{j∈g}(x0_j − x*_j)², Σ(x0_j − x*_j)(x*_j − x̃_j), Σ(x*_j − x̃_j)², Σ x*_j², Σ x*_j(x0_j − x*_j)
            rr=self.x0_sq - 2 * ratio * self.x0_dot_target + ratio**2 * self.target_sq,
            re=-shrink * proj, ee=shrink**2 * self.target_sq, ss=ratio**2 * self.target_sq, sr=ratio * proj)


@dataclasses.dataclass(frozen=True)
class _GroupMoments:
    """Per-group coefficients of the spectral form of eqs. (6)-(7) (x* = A⁻¹Σx̃, ρ = x_0 − x*, e = x* − x̃)."""

    lam: np.ndarray
    a: np.ndarray
    count: np.ndarray
    rr: np.ndarray
    re: np.ndarray
    ee: np.ndarray
    ss: np.ndarray
    sr: np.ndarray


def _policy(value: Any) -> X0Policy:
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


# ----------------------------------------------------------------------------------------------------------------
# Grids and Γ(t)
# ----------------------------------------------------------------------------------------------------------------


def _times(times: Any) -> np.ndarray:
    ts = np.asarray(times, dtype=float)
    if ts.ndim != 1 or ts.size == 0:
        raise ValueError(f"times must be a non-empty 1-D array; got shape {ts.shape}.")
    _check.non_negative(times=ts)
    if np.any(np.diff(ts) <= 0):
        raise ValueError("times must be strictly increasing.")
    return ts


def _build_grid(times: np.ndarray, max_step: float, level: int) -> tuple[np.ndarray, np.ndarray]:
    """The quadrature grid: 0 and ``times``, each interval cut into ceil(length/max_step)·2^level equal steps.

    Returns the grid (N+1,) and the grid index of every requested time (T,). Refining (level + 1) halves every step,
    so the coarse grid points stay on the fine grid (what Romberg extrapolation needs).
    """
    start_at_zero = times[0] == 0.0
    points = times if start_at_zero else np.concatenate(([0.0], times))
    lengths = np.diff(points)
    pieces = np.maximum(np.ceil(lengths / max_step * (1 - 1e-9)), 1).astype(np.int64) * (2**level)
    total = int(pieces.sum())
    interval = np.repeat(np.arange(lengths.size), pieces)
    first = np.concatenate(([0], np.cumsum(pieces)))
    local = np.arange(total) - first[interval]
    grid = np.empty(total + 1)
    grid[:-1] = points[interval] + lengths[interval] * (local / pieces[interval])
    grid[-1] = points[-1]
    grid[first[:-1]] = points[:-1]  # the requested times exactly
    index = first if start_at_zero else first[1:]
    return grid, index


def _integrated_rate(learning_rate: LearningRate, grid: np.ndarray) -> np.ndarray:
    """Γ(t) = ∫₀ᵗ γ on the grid: the profile's closed form when it has one, else Gauss-Legendre per interval."""
    if type(learning_rate).integral is not LearningRate.integral:
        return np.asarray(learning_rate.integral(grid), dtype=float)
    nodes, weights = np.polynomial.legendre.leggauss(_GAUSS_NODES)
    mid, half = (grid[1:] + grid[:-1]) / 2, (grid[1:] - grid[:-1]) / 2
    points = mid[:, None] + half[:, None] * nodes
    values = np.asarray(learning_rate.value(points.ravel()), dtype=float).reshape(points.shape)
    return np.concatenate(([0.0], np.cumsum(half * (values @ weights))))


def _rate_values(learning_rate: LearningRate, grid: np.ndarray) -> np.ndarray:
    values = np.asarray(learning_rate.value(grid), dtype=float)
    if values.shape != grid.shape or not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError("learning_rate must be finite and >= 0 on [0, times[-1]].")
    return values


def _trapezoid_weights(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Product-trapezoid weights: ``history[i]`` of node i < k in ∫₀^{t_k}, ``end[k]`` of the end node t_k."""
    h = np.diff(grid)
    history = np.empty(grid.size)
    history[0] = h[0] / 2 if h.size else 0.0
    history[1:-1] = (h[:-1] + h[1:]) / 2
    history[-1] = np.nan  # never used: the last node is never a history node
    end = np.concatenate(([0.0], h / 2))
    return history, end


def _forcing(problem: HSGDProblem, moments: _GroupMoments, gamma_int: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F_P(t) = E𝒫(X^gf(t)), F_R(t) = Eℛ(X^gf(t)) (eqs. (6)-(7), first terms, in spectral form), plus for a secret
    initialization the decayed initial variance ½Σ n_g λ_g V(0) e^{−2a_gΓ} (and its ℛ analogue): shape (N+1,) each."""
    g = moments
    v0 = problem.initial_variance
    sq = g.rr + g.count * v0
    p_lin, p_sq = g.lam * g.re, 0.5 * g.lam * sq
    r_lin, r_sq = p_lin + problem.ridge * g.sr, p_sq + 0.5 * problem.ridge * sq
    p_const = 0.5 * float(np.dot(g.lam, g.ee)) + 0.5 * problem.label_noise**2
    r_const = p_const + 0.5 * problem.ridge * float(g.ss.sum())
    fp, fr = np.empty(gamma_int.size), np.empty(gamma_int.size)
    shape = (min(_CHUNK, gamma_int.size), g.a.size)
    decay, decay_sq = np.empty(shape), np.empty(shape)  # reused buffers: no page faults per chunk
    for lo in range(0, gamma_int.size, _CHUNK):
        hi = min(lo + _CHUNK, gamma_int.size)
        e, e2 = decay[:hi - lo], decay_sq[:hi - lo]
        np.multiply.outer(-gamma_int[lo:hi], g.a, out=e)
        np.exp(e, out=e)
        np.multiply(e, e, out=e2)
        fp[lo:hi] = p_const + e @ p_lin + e2 @ p_sq
        fr[lo:hi] = r_const + e @ r_lin + e2 @ r_sq
    return fp, fr


# ----------------------------------------------------------------------------------------------------------------
# Volterra equations (6)-(7): recursive O(N·m) product trapezoid
# ----------------------------------------------------------------------------------------------------------------


def _volterra_on_grid(problem: HSGDProblem, grid: np.ndarray, out: np.ndarray,
                      with_variance: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Product trapezoid for (6)-(7) on ``grid``; P, R at the grid indices ``out`` (and the group variances).

    With E_g(k, i) = exp(−2a_g(Γ(t_k) − Γ(t_i))) and y_g(i) = γ(t_i)²(2λ_g P_i + σ²)/d, eq. (6) is
    P_k = F_P(t_k) + ½Σ_g n_g λ_g W_g(k), eq. (7) is R_k = F_R(t_k) + ½Σ_g n_g a_g W_g(k), where
    W_g(k) = Σ_{i≤k} w_{k,i} E_g(k, i) y_g(i) is the trapezoid sum of the variance integral of eq. (10).
    The history part H_g(k) = Σ_{i<k} w_i E_g(k, i) y_g(i) obeys H_g(k+1) = E_g(k+1, k)(H_g(k) + w_k y_g(k)), because
    the trapezoid weight w_i of a node i < k does not depend on k. The end node enters with weight h_k/2, which
    makes each step a scalar implicit equation for P_k, solved exactly (division by 1 − ½h_k K_P(t_k, t_k)).
    """
    g = problem._moments()
    d = problem.dim
    sigma2 = problem.noise_std**2
    gamma_int = _integrated_rate(problem.learning_rate, grid)
    rate2 = _rate_values(problem.learning_rate, grid) ** 2 / d  # γ(t_k)²/d
    w_hist, w_end = _trapezoid_weights(grid)
    fp, fr = _forcing(problem, g, gamma_int)
    half_nl, half_na = 0.5 * g.count * g.lam, 0.5 * g.count * g.a
    two_lam = 2.0 * g.lam
    sum_nl2, sum_nl, sum_nal, sum_na = (float(np.dot(g.count, g.lam**2)), float(half_nl.sum()) * 2,
                                        float(np.dot(g.count, g.a * g.lam)), float(half_na.sum()) * 2)
    end_rate = w_end * rate2
    denominator = 1.0 - end_rate * sum_nl2  # 1 − ½h K_P(t, t), K_P(t, t) = γ²/d Σ n λ²
    bad = np.flatnonzero(denominator <= 0)
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"max_step is too large: the implicit trapezoid step divides by 1 − ½h·K_P(t, t) = "
                         f"{denominator[k]:.3g} <= 0 at t = {grid[k]:.6g} (h = {2 * w_end[k]:.3g}); use max_step < "
                         f"{0.5 * 2 * w_end[k] / (1 - denominator[k]):.3g}.")
    p_end = 0.5 * end_rate * sigma2 * sum_nl  # end-node noise term of (6)
    r_end_const, r_end_p = 0.5 * end_rate * sigma2 * sum_na, end_rate * sum_nal
    n = grid.size
    pop, reg = np.empty(n), np.empty(n)
    out_variance = np.empty((out.size if with_variance else 0, g.a.size))
    history, y = np.zeros(g.a.size), np.zeros(g.a.size)
    neg_two_a = -2.0 * g.a
    recursion = _compiled_recursion()
    out_pos = 0
    steps = np.concatenate(([0.0], np.diff(gamma_int)))  # Γ_k − Γ_{k−1}
    buffer = np.empty((min(_CHUNK, n), g.a.size))
    for lo in range(0, n, _CHUNK):
        hi = min(lo + _CHUNK, n)
        transition = buffer[:hi - lo]  # row r: E(k, k−1) = exp(−2a_g(Γ_k − Γ_{k−1})), k = lo + r
        np.multiply.outer(steps[lo:hi], neg_two_a, out=transition)
        np.exp(transition, out=transition)
        out_pos = recursion(lo, hi, transition, history, y, w_hist, w_end, rate2, denominator, fp, fr, p_end,
                            r_end_const, r_end_p, half_nl, half_na, two_lam, sigma2, pop, reg, out, out_pos,
                            out_variance, with_variance)
    if with_variance:
        out_variance += problem.initial_variance * np.exp(np.outer(gamma_int[out], neg_two_a))
    return pop[out], reg[out], out_variance if with_variance else None


def _recursion(lo: Any, hi: Any, transition: Any, history: Any, y: Any, w_hist: Any, w_end: Any, rate2: Any,
               denominator: Any, fp: Any, fr: Any, p_end: Any, r_end_const: Any, r_end_p: Any, half_nl: Any,
               half_na: Any, two_lam: Any, sigma2: Any, pop: Any, reg: Any, out: Any, out_pos: Any, out_variance: Any,
               with_variance: Any) -> Any:  # pragma: no cover (compiled)
    """Grid steps k = lo .. hi−1 of the recursion of :func:`_volterra_on_grid`, updating ``history`` and ``y`` in
    place (history: H_g(k); y: y_g(k)); writes P_k, R_k and the variances at the output indices. Returns the next
    output position. Shapes: transition (hi − lo, m); history, y, half_nl, half_na, two_lam (m,); the rest (N+1,)."""
    m = history.size
    for k in range(lo, hi):
        row = k - lo
        carry = w_hist[k - 1] if k > 0 else 0.0
        s_p = 0.0
        s_r = 0.0
        for g in range(m):
            if k > 0:
                history[g] = transition[row, g] * (history[g] + carry * y[g])
            s_p += half_nl[g] * history[g]
            s_r += half_na[g] * history[g]
        p_k = (fp[k] + s_p + p_end[k]) / denominator[k]
        pop[k] = p_k
        reg[k] = fr[k] + s_r + r_end_const[k] + r_end_p[k] * p_k
        for g in range(m):
            y[g] = rate2[k] * (two_lam[g] * p_k + sigma2)
        if with_variance and out_pos < out.size and out[out_pos] == k:
            for g in range(m):
                out_variance[out_pos, g] = history[g] + w_end[k] * y[g]
            out_pos += 1
    return out_pos


@functools.cache
def _compiled_recursion() -> Any:
    """:func:`_recursion` compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)(_recursion)


def _romberg(levels: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
    """Romberg extrapolation of values whose error expands in h², h⁴, …; returns the value and an error estimate."""
    table = [levels[0]]
    previous_diagonal = levels[0]
    for r in range(1, len(levels)):
        row = [levels[r]]
        for k in range(1, r + 1):
            row.append(row[k - 1] + (row[k - 1] - table[k - 1]) / (4.0**k - 1.0))
        previous_diagonal, table = table[-1], row
    if len(levels) == 1:
        return table[-1], None
    return table[-1], np.abs(table[-1] - previous_diagonal)


def volterra_risk(problem: HSGDProblem, times: Any, *, max_step: float, refinements: int,
                  with_variance: bool = False) -> RiskCurve:
    """P_t and R_t from the Volterra equations (6)-(7) of Theorem 4.2, in O(N·m) per grid.

    Eq. (6): P_t = 𝒫(X^gf_{Γ(t)}) + ∫₀ᵗ G(t, s; Σ) P_s ds + ∫₀ᵗ G'(t, s; Σ) ds, eq. (7) the same with Σ + ridge·I in the
    kernels, G(t, s; M) = (γ²(s)/d) tr(Σ M Φ²(t, s)), G'(t, s; M) = (σ²γ²(s)/(2d)) tr(M Φ²(t, s)), evaluated in the
    eigen-groups (the spectral form of Theorem 4.2). Both integrals use the product trapezoid rule on the grid made of 0
    and ``times``, each interval cut into ceil(length/max_step) equal steps; the kernel, a sum of m exponentials in Γ(t)
    − Γ(s), is carried recursively, so each grid step costs O(m) and the result equals, up to rounding, the dense
    evaluation :func:`volterra_dense_reference` of the same quadrature. For a random secret x_0 the forcing is averaged
    over it.

    Accuracy: the product trapezoid rule has a global error c₂h² + c₄h⁴ + … for a smooth γ. With
    ``refinements = R`` > 0 the grid is halved R times (all steps, so the coarse nodes stay on every grid) and the
    R + 1 solutions are combined by Romberg extrapolation (order 2R + 2); the error estimate is the distance to the
    previous Romberg diagonal (an estimate, not a bound). The kernel decays at rates 2γ(t)a_g, so the steps must
    resolve them, and the variation of γ(t) itself: max_step·2γ·max a_g ≲ 0.2 with at least ~16 steps over the
    horizon is a good start. Cost: about 2^{R+1}·N·m operations.

    Args:
        problem: the :class:`HSGDProblem`.
        times: (T,) strictly increasing times ≥ 0 at which to report (0 is always on the grid).
        max_step: the largest quadrature step of the coarsest grid, e.g. 1/d for the SGD grid.
        refinements: number R ≥ 0 of grid halvings for the Romberg extrapolation (0: plain product trapezoid).
        with_variance: also return the (T, m) per-direction variances V_jj(t) of each group (eq. (10)).

    Returns:
        A :class:`RiskCurve` with ``method="volterra"``. Shapes: times (T,) -> (T,), group_variance (T, m).
    """
    ts = _times(times)
    _check.positive(max_step=max_step)
    _check.integer(minimum=0, refinements=refinements)
    levels_p: list[np.ndarray] = []
    levels_r: list[np.ndarray] = []
    levels_v: list[np.ndarray | None] = []
    num_steps = 0
    for level in range(int(refinements) + 1):
        grid, out = _build_grid(ts, float(max_step), level)
        pop, reg, var = _volterra_on_grid(problem, grid, out, with_variance)
        levels_p.append(pop)
        levels_r.append(reg)
        levels_v.append(var)
        num_steps = grid.size - 1
    pop, pop_err = _romberg(levels_p)
    reg, reg_err = _romberg(levels_r)
    var = _romberg(cast(list[np.ndarray], levels_v))[0] if with_variance else None
    return RiskCurve(times=_frozen(ts), population_risk=_frozen(pop), regularized_risk=_frozen(reg),
                     method="volterra", group_variance=None if var is None else _frozen(var),
                     population_risk_error=None if pop_err is None else _frozen(pop_err),
                     regularized_risk_error=None if reg_err is None else _frozen(reg_err),
                     num_steps=num_steps, refinements=int(refinements))


def volterra_dense_reference(problem: HSGDProblem, times: Any, *, max_step: float,
                             with_variance: bool = False) -> RiskCurve:
    """The product-trapezoid solution of (6)-(7) evaluated densely: a slow reference for tests and benchmarks.

    Same grid and quadrature as :func:`volterra_risk` with ``refinements=0``, but every kernel value K(t_k, t_i) =
    (γ(t_i)²/d) Σ_g n_g λ_g² exp(−2a_g(Γ(t_k) − Γ(t_i))) (and the three other kernels of (6)-(7)) is built from the Γ
    difference of its own pair (k, i), and the forcing 𝒫(X^gf) from the gradient-flow mean written directly as
    e^{−aΓ}x_0 + (1 − e^{−aΓ})x* (the gradient flow, eq. (5)). Cost O(N²·m) time, O(N·m) memory. Public, documented, and
    not meant for production use.

    Returns:
        A :class:`RiskCurve` with ``method="volterra"`` and no error estimate.
    """
    ts = _times(times)
    _check.positive(max_step=max_step)
    grid, out = _build_grid(ts, float(max_step), 0)
    d = problem.dim
    lam = problem.spectrum.eigenvalues
    count = problem.spectrum.multiplicities.astype(float)
    a = problem.hessian_eigenvalues
    sigma2, v0, ridge = problem.noise_std**2, problem.initial_variance, problem.ridge
    gamma_int = _integrated_rate(problem.learning_rate, grid)
    rate2 = _rate_values(problem.learning_rate, grid) ** 2
    h = np.diff(grid)
    # Trapezoid weights of ∫₀^{t_k}: h₁/2, (h_i + h_{i+1})/2, …, h_k/2.
    interior = np.concatenate(([h[0] / 2 if h.size else 0.0], (h[:-1] + h[1:]) / 2, [0.0]))
    # Rows of the four kernels of (6)-(7): K_P, G'_P, K_R, G'_R (coefficients of exp(−2aΔΓ)·γ(s)²).
    kernel_rows = np.stack([count * lam**2 / d, sigma2 * count * lam / (2 * d),
                            count * lam * a / d, sigma2 * count * a / (2 * d)])
    n = grid.size
    pop, reg = np.empty(n), np.empty(n)
    variance = np.empty((out.size, lam.size)) if with_variance else None
    out_lookup = {int(k): i for i, k in enumerate(out)}
    for k in range(n):
        e = np.exp(-a * gamma_int[k])
        # gradient-flow mean minus x̃ per direction: e·x0 − c·x̃ with c = (ridge + e·λ)/a; ‖mean‖² uses 1 − c.
        c = (ridge + e * lam) / a
        err_sq = e**2 * problem.x0_sq - 2 * e * c * problem.x0_dot_target + c**2 * problem.target_sq
        mean_sq = e**2 * problem.x0_sq + 2 * e * (1 - c) * problem.x0_dot_target + (1 - c) ** 2 * problem.target_sq
        init = count * v0 * e**2
        f_p = 0.5 * np.dot(lam, err_sq + init) + 0.5 * problem.label_noise**2
        f_r = f_p + 0.5 * ridge * np.sum(mean_sq + init)
        if k == 0:
            pop[0], reg[0] = f_p, f_r
            if 0 in out_lookup and variance is not None:
                variance[out_lookup[0]] = v0
            continue
        weights = interior[:k + 1].copy()
        weights[k] = h[k - 1] / 2
        decay = np.exp(-2.0 * np.outer(a, gamma_int[k] - gamma_int[:k + 1]))  # (m, k+1), from Γ differences
        kernels = (kernel_rows @ decay) * rate2[:k + 1]  # (4, k+1)
        wk = weights * kernels
        p_k = (f_p + np.dot(wk[0, :k], pop[:k]) + wk[1].sum()) / (1.0 - wk[0, k])
        pop[k] = p_k
        reg[k] = f_r + np.dot(wk[2, :k], pop[:k]) + wk[2, k] * p_k + wk[3].sum()
        if variance is not None and k in out_lookup:
            source = (2.0 * np.outer(lam, pop[:k + 1]) + sigma2) * (weights * rate2[:k + 1] / d)
            variance[out_lookup[k]] = np.sum(decay * source, axis=1) + v0 * np.exp(-2 * a * gamma_int[k])
    return RiskCurve(times=_frozen(ts), population_risk=_frozen(pop[out]), regularized_risk=_frozen(reg[out]),
                     method="volterra", group_variance=None if variance is None else _frozen(variance),
                     num_steps=n - 1, refinements=0)


# ----------------------------------------------------------------------------------------------------------------
# Moment ODE (exact closure)
# ----------------------------------------------------------------------------------------------------------------


def moment_ode_risk(problem: HSGDProblem, times: Any, *, rtol: float, atol: float,
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
    return RiskCurve(times=_frozen(ts), population_risk=_frozen(pop), regularized_risk=_frozen(reg),
                     method="moment_ode", group_variance=_frozen((s - q) / count))


# ----------------------------------------------------------------------------------------------------------------
# Constant learning rate: stability, long-time limit, isotropic closed form
# ----------------------------------------------------------------------------------------------------------------


def _constant_rate(problem: HSGDProblem, what: str) -> float:
    if not isinstance(problem.learning_rate, Constant):
        raise ValueError(f"{what} needs a constant learning_rate (schedules.Constant); got "
                         f"{type(problem.learning_rate).__name__}.")
    return float(problem.learning_rate.initial_learning_rate)


def max_stable_learning_rate(spectrum: Spectrum, *, ridge: float) -> float:
    """γ_max = 2d / Σ_j λ_j²/(λ_j + ridge): a constant learning rate γ is stable (κ_K < 1) iff γ < γ_max.

    κ_K = ∫₀^∞ K_P(τ) dτ = (γ/(2d)) Σ_j λ_j²/a_j is the mass of the renewal kernel of (6). Returns +inf
    for Σ = 0.
    """
    _check.non_negative(ridge=ridge)
    lam = spectrum.eigenvalues
    if lam[0] + ridge <= 0:
        raise ValueError(f"ridge must be > 0 when the covariance has a zero eigenvalue; got ridge={ridge!r}.")
    total = float(np.dot(spectrum.multiplicities, lam**2 / (lam + ridge)))
    return math.inf if total == 0 else 2.0 * spectrum.dim / total


def kernel_mass(problem: HSGDProblem) -> float:
    """κ_K = (γ/(2d)) Σ_j λ_j²/(λ_j + ridge) for a constant learning rate γ; stable iff κ_K < 1."""
    gamma = _constant_rate(problem, "kernel_mass")
    lam, count = problem.spectrum.eigenvalues, problem.spectrum.multiplicities
    return gamma / (2 * problem.dim) * float(np.dot(count, lam**2 / problem.hessian_eigenvalues))


def _require_stable(problem: HSGDProblem) -> float:
    kappa = kernel_mass(problem)
    if kappa >= 1:
        gamma = _constant_rate(problem, "the stability check")
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
    gamma = _constant_rate(problem, "risk_limit")
    kappa = _require_stable(problem)
    g = problem._moments()
    d, sigma2 = problem.dim, problem.noise_std**2
    p_star = 0.5 * float(np.dot(g.lam, g.ee)) + 0.5 * problem.label_noise**2
    noise = sigma2 * gamma / (4 * d) * float(np.dot(g.count, g.lam / g.a))
    pop = (p_star + noise) / (1 - kappa)
    r_star = p_star + 0.5 * problem.ridge * float(g.ss.sum())
    reg = r_star + gamma / (2 * d) * problem.spectrum.trace * pop + sigma2 * gamma / 4
    variance = gamma * (2 * pop * g.lam + sigma2) / (2 * d * g.a)
    return RiskLimit(population_risk=pop, regularized_risk=reg, kernel_mass=kappa, group_variance=_frozen(variance))


def _phi1_integral(rate_a: float, rate_b: np.ndarray | float, t: np.ndarray) -> np.ndarray:
    """∫₀ᵗ e^{−a(t−s)} e^{−bs} ds = t·e^{−min(a,b)t}·(1 − e^{−|a−b|t})/(|a−b|t), stable for a ≈ b."""
    gap = np.abs(rate_a - rate_b) * t
    low = np.minimum(rate_a, rate_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(gap > 1e-8, -np.expm1(-gap) / np.where(gap > 0, gap, 1.0), 1.0 - gap / 2)
    return t * np.exp(-low * t) * phi


def isotropic_risk(problem: HSGDProblem, times: Any) -> RiskCurve:
    """Closed-form P_t, R_t for Σ = λI and a constant learning rate γ (derived; the paper states that it exists).

    The total variance S(t) = Σ_j V_jj(t) solves S' = −ρS + γ²(2λF_P(t) + σ²), ρ = 2γa − γ²λ², S(0) = d·V(0), and
    P_t = F_P(t) + ½λS(t), R_t = F_R(t) + ½aS(t), where F_P(t) = ½λ[e^{−2aγt}‖x_0 − x*‖² + 2e^{−aγt}⟨x_0 − x*, x* − x̃⟩ +
    ‖x* − x̃‖²] + ½E w² is a sum of exponentials, so S is explicit. Exact (no grid).

    Returns:
        A :class:`RiskCurve` with ``method="closed_form"`` and ``group_variance`` (T, 1).
    """
    ts = _times(times)
    if problem.spectrum.num_groups != 1:
        raise ValueError(f"isotropic_risk needs Σ = λI (one eigen-group); got {problem.spectrum.num_groups} groups.")
    gamma = _constant_rate(problem, "isotropic_risk")
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
    return RiskCurve(times=_frozen(ts), population_risk=_frozen(pop), regularized_risk=_frozen(reg),
                     method="closed_form", group_variance=_frozen((total / d)[:, None]))


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
        return cls(problem=problem, times=_frozen(times), integrated_learning_rate=_frozen(gamma_int),
                   mean=_frozen(mean), group_variance=_frozen(curve.group_variance),
                   population_risk=_frozen(curve.population_risk), regularized_risk=_frozen(curve.regularized_risk),
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
        return np.asarray(learning_rate.integral(times), dtype=float)
    points = times if times[0] == 0.0 else np.concatenate(([0.0], times))
    gamma_int = _integrated_rate(learning_rate, points)
    return gamma_int if times[0] == 0.0 else gamma_int[1:]


def linearized_law(problem: HSGDProblem, times: Any, *, max_step: float, refinements: int) -> HSGDLaw:
    """The law (10) of linearized HSGD at ``times``, its variances from :func:`volterra_risk` on the same grid.

    See :class:`HSGDLaw` for the formulas and :func:`volterra_risk` for ``max_step`` and ``refinements`` (the
    variances are extrapolated with the risks). Shapes: times (T,) -> mean (T, d), group_variance (T, m).
    """
    curve = volterra_risk(problem, times, max_step=max_step, refinements=refinements, with_variance=True)
    return HSGDLaw.from_curve(problem, curve)


def quadratic_statistic(law: HSGDLaw, *, matrix: Any, vector: Any = None, constant: float = 0.0) -> np.ndarray:
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
    d = law.dim
    t_mat = np.asarray(matrix, dtype=float)
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
        u = np.asarray(vector, dtype=float)
        if u.shape != (d,):
            raise ValueError(f"vector must have shape (d,) = ({d},); got {u.shape}.")
        _check.finite(vector=u)
        value = value + mean @ u
    return value
