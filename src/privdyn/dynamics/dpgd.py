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

import dataclasses
import math
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import integrate, optimize, special

from privdyn import _check
from privdyn.rng import CounterStream
from privdyn.schedules import LearningRate, OutsideTheoryWarning
from privdyn.spectra import Spectrum

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

METHODS = ("exponential", "lsoda")
"""The ODE solvers: privdyn's exponential integrator and scipy's LSODA (the reference)."""

DEFAULT_TIMES = np.linspace(0.0, 1.0, 101)
"""Where R is reported when ``times`` is not given: 101 equispaced points of [0, 1] (a risk curve as in Figure 1)."""
DEFAULT_TIMES.setflags(write=False)


class ODESolverError(RuntimeError):
    """A solver could not integrate the risk ODE; the message says where and what to try instead."""


_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

# When η̃ reaches 0 at t_stop (t_stop = 1 for every polynomial schedule with α > 0, or the first zero of a custom
# profile), the solvers stop at t_stop − _END_GAP·t_stop and cross the gap with ``_finish``: there q = η̄μ → 0, so the
# exponential integrator's f = a/q, b/q are singular (for α = ½, b/q ∝ (1 − t)^(−1/2)), and for α < ½ so is σ̃² itself.
# Across the gap the noise is integrated exactly and the other terms by Simpson's rule with μ, ν frozen; for α ≥ ½ the
# error is O(gap^(3/2)), far below any tolerance.
_END_GAP = 1e-7
_MAX_CLOCK_ITERATIONS = 8  # passes over the spectrum per step attempt before the step is shrunk


# ---------------------------------------------------------------------------------------------------------------
# Clipping factors (Lemma B.1)
# ---------------------------------------------------------------------------------------------------------------


def clipping_factors(c_prime: Any) -> tuple[Any, Any]:
    """The descent and variance reduction factors (μ, ν) of clipping the residual at c′ standard deviations.

    Lemma B.1 of arXiv 2505.16329 (eqs. 4.5–4.6): with N ~ N(0, 1) and c′ = c/√(2R + ζ²),

        μ = P(abs(N) ≤ c′) = erf(c′/√2),
        ν = E[min(N², c′²)] = c′² erfc(c′/√2) + erf(c′/√2) − √(2/π) c′ e^{−c′²/2}.

    The last two terms of ν are E[N² 1{abs(N) ≤ c′}] = P(χ²₃ ≤ c′²), computed as the regularized incomplete gamma
    function P(3/2, c′²/2): no cancellation, so ν keeps full relative precision for tiny c′ (ν = c′² − (2/3)√(2/π)c′³ +
    …), where the printed form loses about log₁₀(1/c′) digits. ``erfc`` keeps the large-c′ tails exact. c′ = ∞ (no
    clipping) gives μ = ν = 1.

    Exact (closed forms). Lemma B.2: μ and ν increase from 0 to 1; μ/c′ and ν/c′² decrease from √(2/π) and 1.

    Args:
        c_prime: c′ ≥ 0 (∞ allowed), any shape.

    Returns:
        (mu, nu), each of the shape of ``c_prime`` (NumPy float64 scalars for a scalar input).

    Shapes: c_prime (...) -> (...), (...).
    """
    _check.in_range(0.0, math.inf, c_prime=c_prime)
    cp = np.asarray(c_prime, dtype=float)
    mu, nu = _factor_arrays(cp)
    if cp.ndim == 0:
        return np.float64(mu), np.float64(nu)
    return mu, nu


def _factor_arrays(cp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(μ, ν) for an array c′ ≥ 0 without validation (the solvers' inner loops)."""
    erfc = special.erfc(cp / _SQRT2)
    with np.errstate(invalid="ignore"):
        tail = np.where(np.isinf(cp), 0.0, cp * cp * erfc)
    return special.erf(cp / _SQRT2), tail + special.gammainc(1.5, 0.5 * cp * cp)


def _factors(cp: float) -> tuple[float, float, float, float]:
    """Scalar (μ, ν, dμ/dc′, dν/dc′) (dμ/dc′ = √(2/π)e^{−c′²/2}, dν/dc′ = 2c′ erfc(c′/√2))."""
    if cp == math.inf:
        return 1.0, 1.0, 0.0, 0.0
    x = cp / _SQRT2
    erf, erfc = math.erf(x), math.erfc(x)
    g = _SQRT_2_OVER_PI * math.exp(-0.5 * cp * cp)
    if cp < 0.5:  # E[N² 1{|N| ≤ c′}] = √(2/π) Σ_{k≥1} (−1)^{k+1} 2k c′^{2k+1} / ((2k+1) 2^k k!), no cancellation
        x2 = 0.5 * cp * cp
        term, total, k = cp * x2, 0.0, 1  # term = c′^{2k+1}/(2^k k!)
        while True:
            contribution = term * (2.0 * k) / (2.0 * k + 1.0)
            total += contribution if k % 2 else -contribution
            if contribution <= 1e-17 * total:
                break
            k += 1
            term *= x2 / k
        inner = _SQRT_2_OVER_PI * total
    else:
        inner = erf - cp * g
    return erf, cp * cp * erfc + inner, g, 2.0 * cp * erfc


# ---------------------------------------------------------------------------------------------------------------
# Problem description shared by the solvers
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Drive:
    """The scalar functions of (t, R) that drive the ODE: q = η̄μ, a = η̄²ν(R + ζ²/2)γ, b = 2c²σ̃²γ²."""

    learning_rate: LearningRate
    aspect_ratio: float
    clip: float
    rho: float
    label_noise: float

    @property
    def cap(self) -> float:
        """2/γ, the cap of η̄ = min(η̃, 2/γ)."""
        return 2.0 / self.aspect_ratio

    @property
    def noise_factor(self) -> float:
        """2c²γ²/ρ²: b = noise_factor · (−dη̃²/dt)."""
        return 2.0 * self.clip**2 * self.aspect_ratio**2 / self.rho**2

    def value(self, t: float) -> float:
        return float(np.asarray(self.learning_rate.value(np.array([t])), dtype=float)[0])

    def profile(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """η̃(t), η̄(t) and b(t) at the times t (an array)."""
        eta = np.asarray(self.learning_rate.value(t), dtype=float)
        slope = np.asarray(self.learning_rate.squared_derivative(t), dtype=float)
        return eta, np.minimum(eta, self.cap), self.noise_factor * np.maximum(-slope, 0.0)

    def scalars(self, eta_bar: float, R: float) -> tuple[float, float, float, float, float, float]:
        """(q, a, μ, ν, dμ/dR, d[ν(R + ζ²/2)]/dR) at one time; R is clamped at 0 (the derivatives then vanish)."""
        r = R if R > 0.0 else 0.0
        two_p = 2.0 * r + self.label_noise**2
        cp = self.clip / math.sqrt(two_p) if two_p > 0.0 else math.inf
        mu, nu, dmu, dnu = _factors(cp)
        p = 0.5 * two_p
        if R > 0.0 and cp != math.inf:
            dcp = -cp**3 / self.clip**2
            dmu_dr, dnup_dr = dmu * dcp, dnu * dcp * p + nu
        else:
            dmu_dr, dnup_dr = 0.0, nu
        return eta_bar * mu, eta_bar**2 * nu * p * self.aspect_ratio, mu, nu, dmu_dr, dnup_dr


@dataclasses.dataclass(frozen=True)
class _System:
    """dS/dt = −2κ q S + A a + B b, R = w·S, S(0) = S0 (all (m,); κ ascending, ≥ 0).

    Grouped spectrum: κ = λ_g, A = m_g λ_g, B = m_g, w = λ_g/d. Scalar ODEs (4.11), (4.12): m = 1, w = 1.
    """

    rates: np.ndarray
    gain_a: np.ndarray
    gain_b: np.ndarray
    weights: np.ndarray
    initial: np.ndarray


@dataclasses.dataclass(frozen=True, kw_only=True)
class RiskTrajectory:
    """The ODE risk R(t) from one call of a dpgd solver.

    Attributes:
        times: (T,) where R is reported, increasing, in [0, 1].
        risk: (T,) R at ``times``; at t = 1 the limit t → 1⁻ (the iterate before the last step's noise).
        final_risk: R(1), the limit t → 1⁻ (Theorem 1 covers t < 1).
        final_jump: 2c²η̃(1)²γ²/ρ², what the last step's noise adds to the released iterate (Proposition 4.4).
        final_states: (m,) the group states S_g(1) = Σ_{i∈g} D_i(1) (for the scalar ODEs, the one state R(1)).
        method: ``"exponential"`` or ``"lsoda"``.
        num_steps: accepted steps (None for ``"lsoda"``: scipy does not report them).
        num_rejected_steps: rejected step attempts (None for ``"lsoda"``).
        num_rhs_evaluations: ``"lsoda"``: right-hand-side calls (including those of its finite-difference Jacobians);
            ``"exponential"``: passes over the m states (a pass costs about one right-hand-side call: an exponential
            and a few products per group).

    The values are estimates of the deterministic equivalent, accurate to about the solver's ``rtol`` (relative);
    Theorem 1 relates them to DP-GD within O(log²n/√n).
    """

    times: np.ndarray
    risk: np.ndarray
    final_risk: float
    final_jump: float
    final_states: np.ndarray
    method: str
    num_steps: int | None
    num_rejected_steps: int | None
    num_rhs_evaluations: int

    def __post_init__(self) -> None:
        for name in ("times", "risk", "final_states"):
            array = np.array(getattr(self, name), dtype=float)
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    @property
    def final_private_risk(self) -> float:
        """R(1) + 2c²η̃(1)²γ²/ρ²: the excess risk of the released iterate θ_n (Proposition 4.4)."""
        return self.final_risk + self.final_jump


# ---------------------------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------------------------


def _drive(learning_rate: Any, aspect_ratio: Any, clip: Any, rho: Any, label_noise: Any) -> _Drive:
    _check.scalar(aspect_ratio=aspect_ratio, clip=clip, rho=rho, label_noise=label_noise)
    _check.positive(aspect_ratio=aspect_ratio, clip=clip, rho=rho)
    _check.non_negative(label_noise=label_noise)
    if not isinstance(learning_rate, LearningRate):
        raise TypeError("learning_rate must be a privdyn.schedules.LearningRate (Constant, Polynomial, Harmonic or "
                        f"Custom); got learning_rate of type {type(learning_rate).__name__}.")
    if label_noise == 0:
        warnings.warn("label_noise=0 is outside the theory of arXiv 2505.16329: Assumption 1 needs label_noise "
                      "(zeta) > 0, on which the Lipschitz arguments behind Theorem 1 rely; running anyway.",
                      OutsideTheoryWarning, stacklevel=3)
    return _Drive(learning_rate, float(aspect_ratio), float(clip), float(rho), float(label_noise))


def _validate_times(times: Any) -> np.ndarray:
    if times is None:
        return DEFAULT_TIMES.copy()
    ts = np.atleast_1d(np.asarray(times, dtype=float))
    if ts.ndim != 1 or ts.size == 0:
        raise ValueError(f"times must be a non-empty 1-D array of times in [0, 1]; got shape {ts.shape}.")
    _check.in_range(0.0, 1.0, times=ts)
    if np.any(np.diff(ts) <= 0):
        raise ValueError("times must be strictly increasing.")
    return ts


def _validate_method(method: Any, rtol: Any, atol: Any) -> None:
    _check.one_of(METHODS, method=method)
    _check.scalar(rtol=rtol)
    _check.in_range(1e-13, 1e-2, rtol=rtol)
    if atol is not None:
        _check.scalar(atol=atol)
        _check.positive(atol=atol)


def _grouped_system(spectrum: Any, target_projections: Any) -> _System:
    if not isinstance(spectrum, Spectrum):
        raise TypeError(f"spectrum must be a privdyn.spectra.Spectrum; got spectrum of type {type(spectrum).__name__}.")
    projections = np.asarray(target_projections, dtype=float)
    if projections.shape != (spectrum.num_groups,):
        raise ValueError(f"target_projections must have shape (m,) = ({spectrum.num_groups},), one squared projection "
                         f"of theta* per eigenvalue group; got shape {projections.shape}.")
    _check.non_negative(target_projections=projections)
    d = spectrum.dim
    if abs(spectrum.trace / d - 1.0) > 1e-8:
        warnings.warn(f"the spectrum has trace {spectrum.trace:.6g} != d = {d}: Assumption 1 of arXiv 2505.16329 "
                      "normalizes tr(Sigma) = d, which the ODE's clipping and noise terms assume (use "
                      "spectrum.normalized()); solving the ODE as written.", OutsideTheoryWarning, stacklevel=3)
    lam = np.asarray(spectrum.eigenvalues, dtype=float)
    counts = np.asarray(spectrum.multiplicities, dtype=float)
    return _System(rates=lam, gain_a=counts * lam, gain_b=counts, weights=lam / d, initial=d * projections / 2.0)


# ---------------------------------------------------------------------------------------------------------------
# Time structure of a schedule: where η̃ reaches zero, where the cap 2/γ stops binding
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Horizon:
    stop: float  # 1, or the first zero of η̃
    end: float  # where the solvers stop: stop − gap if η̃(stop) = 0, else stop
    kink: float | None  # where η̃ crosses 2/γ (η̄ = min(η̃, 2/γ) is not smooth there): a mandatory step end


def _first_zero(drive: _Drive) -> float:
    """The first t in [0, 1] with η̃(t) = 0 (η̃ non-increasing, bisection), or 1 if η̃(1) > 0."""
    if drive.value(1.0) > 0.0:
        return 1.0
    lo, hi = 0.0, 1.0
    if drive.value(0.0) <= 0.0:
        return 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if drive.value(mid) > 0.0 else (lo, mid)
    return hi


def _horizon(drive: _Drive) -> _Horizon:
    stop = _first_zero(drive)
    if stop == 0.0:
        return _Horizon(0.0, 0.0, None)
    end = stop
    if drive.value(stop) <= 0.0:
        gap = _END_GAP * stop
        while drive.value(stop - gap) <= 0.0 and gap < 1e-3 * stop:
            gap *= 10.0
        end = stop - gap
    kink = None
    if drive.value(0.0) > drive.cap > drive.value(end):
        kink = float(optimize.brentq(lambda t: drive.value(t) - drive.cap, 0.0, end, xtol=1e-15, rtol=1e-15,
                                     maxiter=200))
        if not 0.0 < kink < end:
            kink = None
    return _Horizon(stop, end, kink)


def _finish(system: _System, drive: _Drive, horizon: _Horizon, S_end: np.ndarray, R_end: float) -> np.ndarray:
    """S(stop) from S(end) across the final gap where η̃ → 0 (see ``_END_GAP``).

    μ and ν are frozen at R(end); ∫η̄ and ∫η̄² over the gap use Simpson's rule, ∫σ̃² is exact: (η̃²(end) − η̃²(stop))/ρ².
    """
    if horizon.end >= horizon.stop:
        return S_end
    gap = horizon.stop - horizon.end
    _, eta_bar, _ = drive.profile(np.array([horizon.end, horizon.end + 0.5 * gap, horizon.stop]))
    int_eta = gap * float(eta_bar[0] + 4.0 * eta_bar[1] + eta_bar[2]) / 6.0
    int_eta2 = gap * float(eta_bar[0] ** 2 + 4.0 * eta_bar[1] ** 2 + eta_bar[2] ** 2) / 6.0
    _, _, mu, nu, _, _ = drive.scalars(1.0, R_end)
    p = max(R_end, 0.0) + 0.5 * drive.label_noise**2
    noise = drive.noise_factor * max(drive.value(horizon.end) ** 2 - drive.value(horizon.stop) ** 2, 0.0)
    decay = np.exp(-2.0 * system.rates * mu * int_eta)
    return decay * S_end + system.gain_a * (nu * p * drive.aspect_ratio * int_eta2) + system.gain_b * noise


def _fill_tail(out: np.ndarray, times: np.ndarray, horizon: _Horizon, R_end: float, R_stop: float) -> None:
    """Reported times in [end, 1]: linear between R(end) and R(stop) across the final gap, then constant."""
    for i in np.flatnonzero(times >= horizon.end):
        t = times[i]
        if t >= horizon.stop:
            out[i] = R_stop
        elif t > horizon.end or np.isnan(out[i]):
            out[i] = R_end + (R_stop - R_end) * (t - horizon.end) / (horizon.stop - horizon.end)


# ---------------------------------------------------------------------------------------------------------------
# The exponential integrator
# ---------------------------------------------------------------------------------------------------------------

# z below which φ₄(−z) comes from its Taylor series (12 terms: truncation < 1e-20 relative); above, the forward
# recurrence loses at most ~1e-12 relative in φ₄ (at z = 0.2), far below the solver's tolerances
_SERIES_CUTOFF = 0.2
_SERIES_TERMS = 12
_SERIES_COEFFICIENTS = np.array([(-1.0) ** i / math.factorial(i + 4) for i in range(_SERIES_TERMS)])
_FACTORIALS = np.array([1.0, 1.0, 2.0, 6.0])  # ∫₀¹ e^{−z(1−θ)} θ^j dθ = j! φ_{j+1}(−z)


class _PhiWorkspace:
    """E = e^{−z} and φ_k(−z) = ∫₀¹ e^{−z(1−θ)} θ^{k−1}/(k−1)! dθ, k = 1..4, at z = 2κ·u for the rates κ (ascending).

    For z ≥ 0.2: φ₁ = (1 − E)/z and φ_{k+1} = (1/k! − φ_k)/z (forward recurrence, stable there). Below: φ₄ from its
    Taylor series (one matrix-vector product with the precomputed powers of κ), then the backward recurrence
    φ_k = 1/k! − zφ_{k+1} and E = 1 − zφ₁ (stable for small z). The small-z groups are a prefix, since κ ascends.
    """

    def __init__(self, rates: np.ndarray):
        self.rates = rates
        self.powers = rates[:, None] ** np.arange(_SERIES_TERMS)[None, :]
        self.table = np.empty((5, rates.size))  # rows E, φ₁, φ₂, φ₃, φ₄

    def compute(self, u: float) -> np.ndarray:
        scale = 2.0 * u
        rates, table = self.rates, self.table
        k = int(np.searchsorted(rates, _SERIES_CUTOFF / scale, side="left")) if scale > 0 else rates.size
        if k < rates.size:
            z = rates[k:] * scale
            np.exp(-z, out=table[0, k:])
            for row, c in ((1, 1.0), (2, 1.0), (3, 0.5), (4, 1.0 / 6.0)):
                np.subtract(c, table[row - 1, k:], out=table[row, k:])
                table[row, k:] /= z
        if k > 0:
            z = rates[:k] * scale
            np.dot(self.powers[:k], _SERIES_COEFFICIENTS * scale ** np.arange(_SERIES_TERMS), out=table[4, :k])
            for row, c in ((3, 1.0 / 6.0), (2, 0.5), (1, 1.0), (0, 1.0)):
                np.multiply(z, table[row + 1, :k], out=table[row, :k])
                np.subtract(c, table[row, :k], out=table[row, :k])
        return table


def _histopolation_inverse(theta_mid: float) -> np.ndarray:
    """M⁻¹: (c₀..c₃) = M⁻¹ (p(0), p(1), ∫₀¹p, ∫₀^θmid p) for the cubic p(θ) = Σ c_j θ^j."""
    t = theta_mid
    return np.linalg.inv(np.array([[1.0, 0.0, 0.0, 0.0],
                                   [1.0, 1.0, 1.0, 1.0],
                                   [1.0, 1.0 / 2.0, 1.0 / 3.0, 1.0 / 4.0],
                                   [t, t**2 / 2.0, t**3 / 3.0, t**4 / 4.0]]))


# (c₀, c₁, c₂) of the quadratic with p(0), p(1), ∫₀¹p: the embedded lower-order approximation
_LOW_INVERSE = np.linalg.inv(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0 / 2.0, 1.0 / 3.0]]))

# The clock u = ∫q dt and ∫a dt over a step: 4-point Gauss–Legendre on each half, η̄ exact at the nodes, R from the
# cubic through R(t0), dR/dt(t0), R(mid), R(end) (the error estimate uses the quartic that also matches dR/dt(end)).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(4)
_THETA_GL = np.concatenate([0.25 + 0.25 * _GL_X, 0.75 + 0.25 * _GL_X])  # (8,) nodes in θ = (t − t0)/h
_W_GL = np.concatenate([0.25 * _GL_W, 0.25 * _GL_W])  # weights in θ; the first four integrate [0, ½]
_POWERS_GL = _THETA_GL[:, None] ** np.arange(4.0)[None, :]
# rows: the weights of (R(t0), h·dR/dt(t0), R(mid), R(end)[, h·dR/dt(end)]) in R at the eight nodes
_CUBIC_ROWS = (_POWERS_GL @ np.linalg.inv(np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0],
                                                    [1.0, 0.5, 0.25, 0.125], [1.0, 1.0, 1.0, 1.0]]))).tolist()
_QUARTIC_ROWS = ((_THETA_GL[:, None] ** np.arange(5.0)[None, :])
                 @ np.linalg.inv(np.array([[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0],
                                           [1.0, 0.5, 0.25, 0.125, 0.0625], [1.0, 1.0, 1.0, 1.0, 1.0],
                                           [0.0, 1.0, 2.0, 3.0, 4.0]]))).tolist()
_W_GL_LIST = _W_GL.tolist()
# Gauss–Legendre on the whole step, for the estimate of the quadrature error of the schedule itself
_THETA_GL_FULL, _W_GL_FULL = 0.5 + 0.5 * _GL_X, 0.5 * _GL_W
_STEP_NODES = np.concatenate([[0.5, 1.0], _THETA_GL, _THETA_GL_FULL])  # mid, end, GL on the halves, GL on the whole


class _Node(NamedTuple):
    """The drive at one time: η̃, η̄, b, R and q, a, f_a = a/q, f_b = b/q, with df_a/dR and df_b/dR."""

    eta: float
    eta_bar: float
    b: float
    R: float
    q: float
    a: float
    fa: float
    fb: float
    dfa: float
    dfb: float


class _Clocks(NamedTuple):
    """u at the mid node and at the end, ∫a to both, and their derivatives in (R_mid, R_end)."""

    um: float
    dq: float
    Ia_m: float
    Ia_1: float
    d_um: tuple[float, float]
    d_dq: tuple[float, float]
    d_Ia_m: tuple[float, float]
    d_Ia_1: tuple[float, float]


@dataclasses.dataclass(frozen=True)
class _Step:
    S1: np.ndarray  # the state at the end
    R1: float
    Rm: float  # R at the mid node
    err: float  # estimated local error of R at the end
    schedule_end: tuple[float, float, float]  # (η̃, η̄, b) at the end


class _Stepper:
    """The exponential integrator on one :class:`_System` (the scheme is described in :func:`solve_risk_ode`)."""

    def __init__(self, system: _System, drive: _Drive, rtol: float):
        self.system, self.drive, self.rtol = system, drive, rtol
        self.work = _PhiWorkspace(system.rates)
        w = system.weights
        k2 = 2.0 * system.rates
        # columns: Σ w A φ, Σ w B φ (give R) and Σ 2κ w A φ, Σ 2κ w B φ (give Σ 2κ w S, the decay part of dR/du)
        self.weight_matrix = np.stack([w * system.gain_a, w * system.gain_b, k2 * w * system.gain_a,
                                       k2 * w * system.gain_b], axis=1)  # (m, 4)
        self.sum_wa, self.sum_wb = (float(v) for v in self.weight_matrix[:, :2].sum(axis=0))
        self.rate_weights = k2 * w
        self.state_weights = np.stack([w, self.rate_weights])  # (2, m)
        self.max_rate = float(system.rates[-1])
        self.passes = 0

    def node(self, eta: float, eta_bar: float, b: float, R: float) -> _Node:
        drive = self.drive
        q, a, mu, nu, dmu, dnup = drive.scalars(eta_bar, R)
        gamma = drive.aspect_ratio
        p = max(R, 0.0) + 0.5 * drive.label_noise**2
        return _Node(eta, eta_bar, b, R, q, a, eta_bar * nu * p * gamma / mu, b / q,
                     eta_bar * gamma * (dnup * mu - nu * p * dmu) / mu**2, -b * dmu / (eta_bar * mu**2))

    def node_at(self, t: float, R: float, capped: bool | None = None) -> _Node:
        """The drive at t; ``capped`` forces the side of the cap at a kink (None: η̃ > 2/γ decides)."""
        eta, _, b = self.drive.profile(np.array([t]))
        e = float(eta[0])
        is_capped = e > self.drive.cap if capped is None else capped
        return self.node(e, self.drive.cap if is_capped else e, float(b[0]), R)

    def slope(self, S: np.ndarray, n: _Node) -> float:
        """dR/dt = −q Σ 2κ w S + a Σ w A + b Σ w B."""
        return -n.q * float(self.rate_weights @ S) + n.a * self.sum_wa + n.b * self.sum_wb

    def sums(self, u: float, S0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One pass over the m states at z = 2κu.

        Returns ((Σ w E S0, Σ 2κ w E S0), the 4×4 matrix j!·Σ φ_{j+1}(z)·(wA, wB, 2κwA, 2κwB), rows j = 0..3).
        """
        table = self.work.compute(u)
        self.passes += 1
        return self.state_weights @ (table[0] * S0), _FACTORIALS[:, None] * (table[1:] @ self.weight_matrix)

    def clocks(self, h: float, eta_bar: Sequence[float], R0: float, slopes: Sequence[float], x: Sequence[float],
               rows: Sequence[Sequence[float]] = _CUBIC_ROWS) -> _Clocks:
        """Gauss–Legendre u and ∫a over the step, with R at the nodes interpolated (``rows``) from R(t0), x =
        (R_mid, R_end) and ``slopes`` = h·dR/dt at t0 (and at the end, for the quartic rows)."""
        drive = self.drive
        half_zeta2 = 0.5 * drive.label_noise**2
        clip, gamma = drive.clip, drive.aspect_ratio
        x0, x1 = x
        s0 = slopes[0]
        s1 = slopes[1] if len(slopes) > 1 else 0.0
        um = dq = Ia_m = Ia_1 = 0.0
        d_um0 = d_um1 = d_dq0 = d_dq1 = d_am0 = d_am1 = d_a10 = d_a11 = 0.0
        for i in range(8):
            row = rows[i]
            bm, b1 = row[2], row[3]
            R = row[0] * R0 + row[1] * s0 + bm * x0 + b1 * x1 + (row[4] * s1 if len(row) > 4 else 0.0)
            positive = R > 0.0
            p = (R if positive else 0.0) + half_zeta2
            cp = clip / math.sqrt(2.0 * p) if p > 0.0 else math.inf
            mu, nu, dmu, dnu = _factors(cp)
            wq = h * _W_GL_LIST[i] * eta_bar[i]
            wa = wq * eta_bar[i] * gamma
            q_term, a_term = wq * mu, wa * nu * p
            if positive and cp != math.inf:
                dcp = -cp * cp * cp / (clip * clip)
                dq_dr, da_dr = wq * dmu * dcp, wa * (dnu * dcp * p + nu)
            else:
                dq_dr, da_dr = 0.0, wa * nu
            dq += q_term
            Ia_1 += a_term
            d_dq0 += dq_dr * bm
            d_dq1 += dq_dr * b1
            d_a10 += da_dr * bm
            d_a11 += da_dr * b1
            if i == 3:
                um, Ia_m, d_um0, d_um1, d_am0, d_am1 = dq, Ia_1, d_dq0, d_dq1, d_a10, d_a11
        return _Clocks(um, dq, Ia_m, Ia_1, (d_um0, d_um1), (d_dq0, d_dq1), (d_am0, d_am1), (d_a10, d_a11))

    def step(self, t0: float, h: float, S0: np.ndarray, n0: _Node, slope0: float, guesses: tuple[float, float],
             end_capped: bool | None) -> _Step | None:
        """One step from t0 to t0 + h; None if the nonlinear solve fails (the caller then shrinks h).

        ``n0`` is the drive at t0 (at R(t0)) and ``slope0`` = dR/dt there; ``guesses`` start R at the mid node and at
        the end; ``end_capped`` forces the side of the cap at the end (a kink).
        """
        system, drive, tol = self.system, self.drive, self.rtol
        eta, eta_bar, b = drive.profile(t0 + h * _STEP_NODES)
        e1 = float(eta[1])
        is_capped = e1 > drive.cap if end_capped is None else end_capped
        sched_1 = (e1, drive.cap if is_capped else e1, float(b[1]))
        eta_bar_gl = eta_bar[2:10].tolist()
        # quadrature error of the schedule alone (e.g. η̄ ∝ √(1 − t) near the end for α = ½): the halves' rule
        # against the whole step's, for ∫η̄ and ∫η̄²
        gl_error = (h * abs(float(_W_GL @ eta_bar[2:10] - _W_GL_FULL @ eta_bar[10:])),
                    h * abs(float(_W_GL @ eta_bar[2:10] ** 2 - _W_GL_FULL @ eta_bar[10:] ** 2)))
        # ∫b dt from t0 to the mid node and to the end, exactly: b = (2c²γ²/ρ²)(−dη̃²/dt)
        nf = drive.noise_factor
        Ib_m, Ib_1 = nf * max(n0.eta**2 - float(eta[0]) ** 2, 0.0), nf * max(n0.eta**2 - e1**2, 0.0)
        slope_term = h * slope0
        x0, x1 = guesses
        clk = self.clocks(h, eta_bar_gl, n0.R, (slope_term,), (x0, x1))
        um_p, dq_p = clk.um, clk.dq
        newton_tol = 1e-4 * tol
        sum_wa, sum_wb = self.sum_wa, self.sum_wb
        fa0, fb0 = n0.fa, n0.fb
        for _ in range(_MAX_CLOCK_ITERATIONS):
            if not (dq_p > 0.0 and 0.0 < um_p < dq_p):
                return None
            th = um_p / dq_p
            pw = (1.0, th, th * th, th * th * th)
            M = _histopolation_inverse(th).tolist()
            (Hm, Km), Gm = self.sums(um_p, S0)
            (H1, K1), G1 = self.sums(dq_p, S0)
            g1 = G1.T.tolist()  # g1[column] = (j! Σ φ_{j+1} X)_j, columns wA, wB, 2κwA, 2κwB
            gm = (Gm * np.array(pw)[:, None]).T.tolist()
            # R-sensitivities π = Mᵀ g to v = (f(0), f(1), ∫₀¹, ∫₀^θmid), per part (a, b)
            pm = [[sum(M[j][i] * gm[col][j] for j in range(4)) for i in range(4)] for col in (0, 1)]
            p1 = [[sum(M[j][i] * g1[col][j] for j in range(4)) for i in range(4)] for col in (0, 1)]
            # Newton on (R_mid, R_end). The clock at x differs by δ (end) and δ_mid from the clock of the
            # φ-functions: R is corrected to first order. The approximation P(u) of f keeps its end values and
            # integrals on the moved interval (δc = M⁻¹δv, δv = (0, −p′(1)δ, −f(1)δ, −p(θmid)δ_mid)/dq) and R moves
            # by dR/du·δ.
            for _newton in range(40):
                n1 = self.node(*sched_1, x1)
                clk = self.clocks(h, eta_bar_gl, n0.R, (slope_term,), (x0, x1))
                delta, delta_m = clk.dq - dq_p, clk.um - um_p
                parts = []
                for f0, f1, I1, Im in ((fa0, n1.fa, clk.Ia_1, clk.Ia_m), (fb0, n1.fb, Ib_1, Ib_m)):
                    v = (f0, f1, I1 / dq_p, Im / dq_p)
                    c = [M[i][0] * v[0] + M[i][1] * v[1] + M[i][2] * v[2] + M[i][3] * v[3] for i in range(4)]
                    slope_end = c[1] + 2.0 * c[2] + 3.0 * c[3]  # p′(1)
                    value_mid = c[0] + c[1] * th + c[2] * pw[2] + c[3] * pw[3]  # p(θmid)
                    # δv per unit δ (end): (0, −p′(1), −f(1), 0)/dq; per unit δ_mid: (0, 0, 0, −p(θ))/dq
                    se = (-slope_end / dq_p, -f1 / dq_p)
                    sm = -value_mid / dq_p
                    dv1, dv2, dv3 = se[0] * delta, se[1] * delta, sm * delta_m
                    C = [c[i] + M[i][1] * dv1 + M[i][2] * dv2 + M[i][3] * dv3 for i in range(4)]
                    parts.append((c, C, se, sm, value_mid))
                (ca, Ca, sea, sma, pa_mid), (cb, Cb, seb, smb, pb_mid) = parts
                drdu_1 = sum_wa * n1.fa + sum_wb * n1.fb - K1 - dq_p * (_dot(g1[2], ca) + _dot(g1[3], cb))
                drdu_m = sum_wa * pa_mid + sum_wb * pb_mid - Km - um_p * (_dot(gm[2], ca) + _dot(gm[3], cb))
                rm = Hm + um_p * (_dot(gm[0], Ca) + _dot(gm[1], Cb)) + drdu_m * delta_m - x0
                r1 = H1 + dq_p * (_dot(g1[0], Ca) + _dot(g1[1], Cb)) + drdu_1 * delta - x1
                # Jacobian through f(end), the a-integrals and the clocks (also inside the δ-corrections)
                jac = [[0.0, 0.0], [0.0, 0.0]]
                for k in range(2):
                    d_dq, d_um = clk.d_dq[k], clk.d_um[k]
                    dva = (0.0, (n1.dfa if k else 0.0) + sea[0] * d_dq, clk.d_Ia_1[k] / dq_p + sea[1] * d_dq,
                           clk.d_Ia_m[k] / dq_p + sma * d_um)
                    dvb = (0.0, (n1.dfb if k else 0.0) + seb[0] * d_dq, seb[1] * d_dq, smb * d_um)
                    jac[0][k] = um_p * (_dot(pm[0], dva) + _dot(pm[1], dvb)) + drdu_m * d_um
                    jac[1][k] = dq_p * (_dot(p1[0], dva) + _dot(p1[1], dvb)) + drdu_1 * d_dq
                jac[0][0] -= 1.0
                jac[1][1] -= 1.0
                det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0]
                if det == 0.0 or not math.isfinite(det):
                    return None
                dx0 = (jac[1][1] * rm - jac[0][1] * r1) / det
                dx1 = (jac[0][0] * r1 - jac[1][0] * rm) / det
                x0, x1 = x0 - dx0, x1 - dx1
                if not (math.isfinite(x0) and math.isfinite(x1)):
                    return None
                if abs(dx0) <= newton_tol * abs(x0) + 1e-300 and abs(dx1) <= newton_tol * abs(x1) + 1e-300:
                    break
            else:
                return None
            n1 = self.node(*sched_1, x1)
            # the second-order terms of the clock correction must be below the tolerance, else new φ-functions
            if (2.0 * self.max_rate * delta) ** 2 <= tol and (delta / dq_p) ** 2 + (delta_m / um_p) ** 2 <= tol:
                break
            um_p, dq_p = clk.um, clk.dq
        else:
            return None
        table = self.work.table  # at z = 2κ·dq_p (the last pass)
        S1 = table[0] * S0
        S1 += system.gain_a * ((dq_p * _FACTORIALS * np.array(Ca)) @ table[1:])
        S1 += system.gain_b * ((dq_p * _FACTORIALS * np.array(Cb)) @ table[1:])
        if delta != 0.0:
            S1 += delta * (-2.0 * system.rates * S1 + system.gain_a * n1.fa + system.gain_b * n1.fb)
        # error estimate: (i) the embedded quadratic with the same end values and total integral but without the
        # mid-node integral (the approximation of f); (ii) the clock and ∫a with R quadratic instead of cubic in t
        err = 0.0
        for col, (f0, f1, I1, c) in enumerate(((fa0, n1.fa, clk.Ia_1, ca), (fb0, n1.fb, Ib_1, cb))):
            low = _LOW_INVERSE @ np.array([f0, f1, I1 / dq_p])
            err += dq_p * abs(float(low @ G1[:3, col]) - _dot(g1[col], c))
        # the cubic interpolation of R in the quadrature against the quartic that also matches dR/dt at the end (known
        # now: q(end)·dR/du); per half, so that errors of opposite signs in the two halves do not cancel
        high = self.clocks(h, eta_bar_gl, n0.R, (slope_term, h * n1.q * drdu_1), (x0, x1), _QUARTIC_ROWS)
        clock_error = abs(high.um - clk.um) + abs((high.dq - high.um) - (clk.dq - clk.um))
        a_error = abs(high.Ia_m - clk.Ia_m) + abs((high.Ia_1 - high.Ia_m) - (clk.Ia_1 - clk.Ia_m))
        err += abs(drdu_1) * clock_error + abs(p1[0][2]) * a_error
        # (iii) the quadrature of η̄ and η̄² themselves, with μ and ν(R + ζ²/2)γ = a/η̄² at the end
        err += abs(drdu_1) * (n1.q / n1.eta_bar) * gl_error[0] + abs(p1[0][2]) * (n1.a / n1.eta_bar**2) * gl_error[1]
        return _Step(S1=S1, R1=float(system.weights @ S1), Rm=x0, err=err, schedule_end=sched_1)


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]


def _extrapolate(last: tuple[float, float, float, float, float], t: float, fallback: float) -> float:
    """The quadratic through the last step's (t0, R0), (t0 + h/2, Rm), (t0 + h, R1) at t (``fallback`` if ≤ 0)."""
    t0, h, R0, Rm, R1 = last
    s = (t - t0) / h
    value = R0 + (-3.0 * R0 + 4.0 * Rm - R1) * s + (2.0 * R0 - 4.0 * Rm + 2.0 * R1) * s * s
    return value if value > 0.0 and math.isfinite(value) else fallback


def _attempt(stepper: _Stepper, t: float, h: float, S: np.ndarray, node0: _Node, slope0: float,
             last: tuple[float, float, float, float, float] | None, end_capped: bool | None) -> _Step | None:
    """A step with R guessed from the last step's quadratic, or from dR/dt for the first step."""
    R = node0.R
    if last is None:
        guesses = (max(R + 0.5 * h * slope0, 0.5 * R), max(R + h * slope0, 0.5 * R))
    else:
        guesses = (_extrapolate(last, t + 0.5 * h, R), _extrapolate(last, t + h, R))
    return stepper.step(t, h, S, node0, slope0, guesses, end_capped)


def _solve_exponential(system: _System, drive: _Drive, times: np.ndarray, rtol: float) -> Any:
    horizon = _horizon(drive)
    stepper = _Stepper(system, drive, rtol)
    S = system.initial.astype(float).copy()
    R = float(system.weights @ S)
    out = np.full(times.shape, np.nan)
    out[times <= 0.0] = R
    t = 0.0
    steps = rejected = 0
    breakpoints = [b for b in (horizon.kink, horizon.end) if b is not None and b > 0.0]
    if horizon.end > 0.0:
        node0 = stepper.node_at(0.0, R)
        slope0 = stepper.slope(S, node0)
        h = min(1e-4, 0.1 * horizon.end)
        last: tuple[float, float, float, float, float] | None = None  # (t0, h, R0, Rm, R1) of the last step
        index = int(np.searchsorted(times, 0.0, side="right"))
        while t < horizon.end:
            target = next(b for b in breakpoints if b > t)
            hits = t + 1.05 * h >= target
            if hits:
                h = target - t
            info = _attempt(stepper, t, h, S, node0, slope0, last, True if hits and target == horizon.kink else None)
            if info is None:
                rejected += 1
                h *= 0.25
                if h < 1e-14 * max(t, 1e-3):
                    raise ODESolverError(f"the exponential solver failed to converge at t={t:.6g}; try method='lsoda'.")
                continue
            err, tol = info.err, rtol * abs(info.R1)
            if err > tol and h > 1e-13:
                rejected += 1
                h *= max(0.2, 0.9 * (tol / err) ** 0.25)
                continue
            t_new = target if hits else t + h
            while index < times.size and times[index] <= t_new:  # reported times inside the step: a sub-step
                ti = float(times[index])
                if ti == t_new:
                    out[index] = info.R1
                else:
                    sub = _attempt(stepper, t, ti - t, S, node0, slope0, (t, h, R, info.Rm, info.R1), None)
                    if sub is None:
                        raise ODESolverError(f"the exponential solver failed at the reported time t={ti:.6g}; "
                                           "try method='lsoda'.")
                    out[index] = sub.R1
                index += 1
            last = (t, h, R, info.Rm, info.R1)
            S, R, t = info.S1, info.R1, t_new
            node0 = stepper.node_at(t, R, False) if t == horizon.kink else stepper.node(*info.schedule_end, R)
            slope0 = stepper.slope(S, node0)
            steps += 1
            h *= 5.0 if err == 0 else min(5.0, max(0.2, 0.9 * (tol / err) ** 0.25))
    S_stop = _finish(system, drive, horizon, S, R)
    R_stop = float(system.weights @ S_stop)
    _fill_tail(out, times, horizon, R, R_stop)
    return out, S_stop, R_stop, steps, rejected, stepper.passes


# ---------------------------------------------------------------------------------------------------------------
# LSODA (the reference)
# ---------------------------------------------------------------------------------------------------------------


def _lsoda_rhs(system: _System, drive: _Drive) -> Any:
    rates, A, B, w = system.rates, system.gain_a, system.gain_b, system.weights
    cap = drive.cap

    def rhs(t: float, S: np.ndarray) -> np.ndarray:
        R = float(w @ S)
        eta_bar = min(float(drive.learning_rate.value(t)), cap)
        b = drive.noise_factor * max(-float(drive.learning_rate.squared_derivative(t)), 0.0)
        q, a, *_ = drive.scalars(eta_bar, R)
        return -2.0 * rates * q * S + A * a + B * b

    return rhs


def _solve_lsoda(system: _System, drive: _Drive, times: np.ndarray, rtol: float, atol: float | None) -> Any:
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


def _solve(system: _System, drive: _Drive, times: Any, method: str, rtol: float, atol: float | None) -> RiskTrajectory:
    ts = _validate_times(times)
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


def solve_risk_ode(*, spectrum: Spectrum, target_projections: Any, aspect_ratio: float, learning_rate: LearningRate,
                   clip: float, rho: float, label_noise: float, times: Any = None, method: str = "exponential",
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
    ∫σ̃² exact.

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
    system = _grouped_system(spectrum, target_projections)
    drive = _drive(learning_rate, aspect_ratio, clip, rho, label_noise)
    return _solve(system, drive, times, method, rtol, atol)


def final_private_risk(*, spectrum: Spectrum, target_projections: Any, aspect_ratio: float,
                       learning_rate: LearningRate, clip: float, rho: float, label_noise: float, times: Any = None,
                       method: str = "exponential", rtol: float = 1e-8, atol: float | None = None) -> float:
    """R(1) + 2c²η̃(1)²γ²/ρ², the ODE risk of the released iterate (Proposition 4.4 of arXiv 2505.16329).

    Arguments as in :func:`solve_risk_ode`; ``times`` defaults to (1,) here (nothing else is reported).
    """
    trajectory = solve_risk_ode(spectrum=spectrum, target_projections=target_projections, aspect_ratio=aspect_ratio,
                                learning_rate=learning_rate, clip=clip, rho=rho, label_noise=label_noise,
                                times=(1.0,) if times is None else times, method=method, rtol=rtol, atol=atol)
    return trajectory.final_private_risk


def final_jump(*, aspect_ratio: float, learning_rate: LearningRate, clip: float, rho: float) -> float:
    """2c²η̃(1)²γ²/ρ²: what the last step's noise adds to the released iterate's risk (Proposition 4.4).

    The last step adds 2c√d·σ_n·N(0, I) with σ_n = η̃(1)/(nρ); its excess risk is ½·4c²dσ_n²·tr Σ with tr Σ = d.
    Exact. 0 for every polynomial schedule with α > 0.
    """
    _check.scalar(aspect_ratio=aspect_ratio, clip=clip, rho=rho)
    _check.positive(aspect_ratio=aspect_ratio, clip=clip, rho=rho)
    drive = _drive(learning_rate, aspect_ratio, clip, rho, 1.0)
    return drive.noise_factor * drive.value(1.0) ** 2


def _scalar_system(initial_risk: float, descent: float, variance: float) -> _System:
    one = np.ones(1)
    return _System(rates=descent * one, gain_a=variance * one, gain_b=one, weights=one, initial=initial_risk * one)


def isotropic_risk_ode(*, initial_risk: float, aspect_ratio: float, learning_rate: LearningRate, clip: float,
                       rho: float, label_noise: float, times: Any = None, method: str = "exponential",
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
    drive = _drive(learning_rate, aspect_ratio, clip, rho, label_noise)
    return _solve(_scalar_system(float(initial_risk), 1.0, 1.0), drive, times, method, rtol, atol)


def sandwich_bounds(*, spectrum: Spectrum, target_projections: Any, aspect_ratio: float, learning_rate: LearningRate,
                    clip: float, rho: float, label_noise: float, times: Any = None, method: str = "exponential",
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
    system = _grouped_system(spectrum, target_projections)
    drive = _drive(learning_rate, aspect_ratio, clip, rho, label_noise)
    eta0 = drive.value(0.0)
    if eta0 > drive.cap:
        raise ValueError(f"learning_rate must stay <= 2/aspect_ratio = {drive.cap:.6g} for the sandwich bounds "
                         f"(eq. 4.12 assumes the cap min(eta, 2/gamma) inactive); got learning_rate.value(0)={eta0!r}.")
    R0 = float(system.weights @ system.initial)
    lam_min, lam_max = float(system.rates[0]), float(system.rates[-1])
    lower = _solve(_scalar_system(R0, lam_max, 1.0), drive, times, method, rtol, atol)
    upper = _solve(_scalar_system(R0, lam_min, lam_max), drive, times, method, rtol, atol)
    return lower, upper


# ---------------------------------------------------------------------------------------------------------------
# Homogenized SDE (Remark 4.3, Definition C.1)
# ---------------------------------------------------------------------------------------------------------------

NoiseSource = np.random.Generator | Sequence[np.random.Generator] | CounterStream

_DRAW_CHUNK = 1 << 20  # normals drawn at once per run when every run has its own Generator


class _Normals:
    """Standard normals (num_runs, d) per step from one Generator, one Generator per run, or a CounterStream."""

    def __init__(self, rng: Any, num_runs: int, d: int):
        if isinstance(rng, np.random.Generator | CounterStream):
            self.source: Any = rng
        elif isinstance(rng, Sequence) and all(isinstance(g, np.random.Generator) for g in rng):
            if len(rng) != num_runs:
                raise ValueError(f"rng must hold one Generator per run (num_runs={num_runs}); got {len(rng)}.")
            self.source = list(rng)
        else:
            raise TypeError("rng must be a numpy.random.Generator, a sequence of num_runs Generators or a "
                            f"privdyn.rng.CounterStream; got rng of type {type(rng).__name__}.")
        self.num_runs, self.d = num_runs, d
        self.block = max(1, _DRAW_CHUNK // max(d * num_runs, 1))
        self.buffer: np.ndarray | None = None

    def draw(self, k: int) -> np.ndarray:
        if isinstance(self.source, np.random.Generator):
            return self.source.standard_normal((self.num_runs, self.d))
        if isinstance(self.source, CounterStream):
            return self.source.standard_normal(k, self.num_runs, self.d)
        j = k % self.block
        if j == 0 or self.buffer is None:  # run i draws its next block from its own Generator
            self.buffer = np.stack([g.standard_normal((self.block, self.d)) for g in self.source], axis=1)
        return self.buffer[j]


def simulate_homogenized_sde(*, spectrum: Spectrum, target_projections: Any, aspect_ratio: float,
                             learning_rate: LearningRate, clip: float, rho: float, label_noise: float, n: int,
                             num_runs: int, rng: NoiseSource, times: Any) -> np.ndarray:
    """Euler–Maruyama paths of homogenized DP-GD (Remark 4.3, Definition C.1 of arXiv 2505.16329); R at ``times``.

    The SDE, in the eigenbasis of a diagonal Σ (V = Θ − θ*, one coordinate per direction, d = ``spectrum.dim``):

        dV = −η̄ μ_c(R) ΣV dt + η̄ √(2ν_c(R)(R + ζ²/2) Σ/n) dB^s + (2√d/n) c σ̃ dB^p,    R = ½ VᵀΣV,

    with η̄ = min(η̃, 2n/d), ρ²σ̃² = −dη̃²/dt, c′ = c/√(2R + ζ²), V(0) = −θ*. **Drift factor 1, not 2:** (4.14) and
    (C.1) print −2η̄μ∇P, but the Itô expansions (C.9), (C.27), (C.29) use −η̄μ⟨ΣV, ∇q⟩, and only factor 1 gives back
    the ODE (4.7): E d(V_i²) = (−2η̄μλ_i V_i² + 2η̄²νPλ_i/n + 4dc²σ̃²/n²) dt, i.e. D_i = dV_i²/2 follows (4.7) with
    γ = d/n. One Euler–Maruyama step per sample (Δt = 1/n, t_k = k/n); the two independent Brownian terms enter as
    one Gaussian increment with the sum of their variances. θ*'s squared projection p_g is split equally over the
    m_g directions of group g (signs do not matter for a diagonal Σ and Gaussian noise).

    Args:
        spectrum, target_projections, learning_rate, clip, rho, label_noise: as in :func:`solve_risk_ode`.
        aspect_ratio: γ = d/n; must equal ``spectrum.dim / n`` (the SDE is at finite n).
        n: number of samples (steps), ≥ 1.
        num_runs: independent paths, ≥ 1.
        rng: a numpy Generator (runs share it, so run i depends on num_runs), a sequence of num_runs Generators
            (run i draws only from rng[i]) or a :class:`privdyn.rng.CounterStream` (draw k = step k).
        times: (T,) increasing times in [0, 1]; R is recorded at step round(t·n).

    Returns:
        (num_runs, T) the excess risk ½(Θ_t − θ*)ᵀΣ(Θ_t − θ*) of each path at ``times`` (before the final-step
        noise of Proposition 4.4). Monte Carlo: its mean estimates the ODE's R(t) up to O(1/√d)-type fluctuations.

    Shapes: target_projections (m,), times (T,) -> (num_runs, T).
    """
    _grouped_system(spectrum, target_projections)  # validation
    drive = _drive(learning_rate, aspect_ratio, clip, rho, label_noise)
    _check.integer(minimum=1, n=n, num_runs=num_runs)
    d = spectrum.dim
    if abs(d / n - drive.aspect_ratio) > 1e-9 * drive.aspect_ratio:
        raise ValueError(f"aspect_ratio must equal spectrum.dim / n = {d}/{n} = {d / n:.6g} for the SDE at finite n; "
                         f"got aspect_ratio={aspect_ratio!r}.")
    ts = _validate_times(times)
    record = np.rint(ts * n).astype(np.int64)
    lam = np.asarray(spectrum.per_direction(), dtype=float)
    per_direction = (np.asarray(target_projections, dtype=float) / spectrum.multiplicities)[spectrum.groups]
    V = np.repeat(-np.sqrt(per_direction)[None, :], num_runs, axis=0)
    normals = _Normals(rng, num_runs, d)
    k_all = np.arange(n) / n
    _, eta_bar, b = drive.profile(k_all)
    dt = 1.0 / n
    private_var = b / (drive.aspect_ratio**2) * (2.0 * d / n**2) * dt  # 4dc²σ̃²/n²·Δt = (b/γ²)(2d/n²)Δt
    out = np.empty((num_runs, ts.size))
    zeta2 = drive.label_noise**2
    for k in range(n + 1):
        R = 0.5 * ((V * V) @ lam)
        hit = record == k
        if np.any(hit):
            out[:, hit] = R[:, None]
        if k == n:
            break
        with np.errstate(divide="ignore"):
            cp = drive.clip / np.sqrt(2.0 * R + zeta2)
        mu, nu = _factor_arrays(cp)
        e = float(eta_bar[k])
        drift = (-e * dt) * mu  # (runs,)
        sample_var = (e * e * 2.0 * dt / n) * nu * (R + 0.5 * zeta2)  # times λ_i per direction
        std = np.sqrt(sample_var[:, None] * lam[None, :] + private_var[k])
        V += (drift[:, None] * lam[None, :]) * V + std * normals.draw(k)
    return out
