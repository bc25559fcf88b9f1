"""The risk ODE of the dpgd paper (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329, Definition 4.2): the grouped
system, its drive, the horizon, the trajectory type and the final-iterate jump (Proposition 4.4)."""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
from scipy import optimize

from privdyn import _check
from privdyn.dynamics.dpgd.clipping import _factors
from privdyn.schedules import Constant, Harmonic, LearningRate, OutsideTheoryWarning, Polynomial
from privdyn.spectra import Spectrum

__all__ = ["DEFAULT_TIMES", "METHODS", "ODESolverError", "RiskTrajectory", "final_jump"]


METHODS = ("exponential", "lsoda")
"""The ODE solvers: privdyn's exponential integrator and scipy's LSODA (the reference)."""

DEFAULT_TIMES = np.linspace(0.0, 1.0, 101)
"""Where R is reported when ``times`` is not given: 101 equispaced points of [0, 1] (a risk curve as in Figure 1)."""
DEFAULT_TIMES.setflags(write=False)


class ODESolverError(RuntimeError):
    """A solver could not integrate the risk ODE; the message says where and what to try instead."""

# When η̃ reaches 0 at t_stop (t_stop = 1 for every polynomial schedule with α > 0, or the first zero of a custom
# profile), the solvers stop at t_stop − _END_GAP·t_stop and cross the gap with ``_finish``: there q = η̄μ → 0, so the
# exponential integrator's f = a/q, b/q are singular (for α = ½, b/q ∝ (1 − t)^(−1/2)), and for α < ½ so is σ̃² itself.
# Across the gap the noise is integrated exactly and the other terms by Simpson's rule with μ, ν frozen; for α ≥ ½ the
# error is O(gap^(3/2)), far below any tolerance.
_END_GAP = 1e-7
_MAX_CLOCK_ITERATIONS = 8  # passes over the spectrum per step attempt before the step is shrunk


# ---------------------------------------------------------------------------------------------------------------
# Problem description shared by the solvers
# ---------------------------------------------------------------------------------------------------------------


def _schedule(learning_rate: LearningRate, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """η̃(t) and dη̃²/dt at the solver's own times t ∈ [0, 1].

    For the closed-form schedules of :mod:`privdyn.schedules` (Constant, Polynomial eq. 5.1, Harmonic eq. 5.18) the
    same expressions as their ``value`` and ``squared_derivative``, without their input checks (the solver calls this
    once per step attempt, and its times are valid by construction; the tests check that the values are identical);
    any other profile through its methods.
    """
    exact = type(learning_rate) in (Harmonic, Polynomial, Constant)  # a subclass may override the formulas
    if exact and isinstance(learning_rate, Harmonic):
        scale, shifted = learning_rate.harmonic_scale, t + learning_rate.harmonic_offset
        return scale / shifted, -2.0 * scale**2 / shifted**3
    if exact and isinstance(learning_rate, Polynomial):
        a, eta0 = learning_rate.schedule_exponent, learning_rate.initial_learning_rate
        remaining = 1.0 - t
        if a == 0:
            return eta0 * remaining**a, np.zeros_like(remaining)
        with np.errstate(divide="ignore"):
            return eta0 * remaining**a, -2.0 * a * eta0**2 * remaining ** (2 * a - 1)
    if exact and isinstance(learning_rate, Constant):
        return np.full_like(t, learning_rate.initial_learning_rate, dtype=float), np.zeros_like(t, dtype=float)
    return (np.asarray(learning_rate.value(t), dtype=float),
            np.asarray(learning_rate.squared_derivative(t), dtype=float))


@dataclasses.dataclass(frozen=True)
class Drive:
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
        """2c²γ²/ρ²: b = noise_factor · (−dη̃²/dt) (as 2(cγ/ρ)², finite whenever :func:`validated_drive` accepted it)."""
        return 2.0 * (self.clip * self.aspect_ratio / self.rho) ** 2

    def value(self, t: float) -> float:
        return float(np.asarray(self.learning_rate.value(np.array([t])), dtype=float)[0])

    def profile(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """η̃(t), η̄(t) and b(t) at the times t (an array of the solver's own times, in [0, 1])."""
        eta, slope = _schedule(self.learning_rate, t)
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
class GroupedSystem:
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
            array = np.array(_check.real_array(**{name: getattr(self, name)}))
            array.setflags(write=False)
            object.__setattr__(self, name, array)
        _check.record(self)

    @property
    def final_private_risk(self) -> float:
        """R(1) + 2c²η̃(1)²γ²/ρ²: the excess risk of the released iterate θ_n (Proposition 4.4)."""
        return self.final_risk + self.final_jump


# ---------------------------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------------------------


def validated_drive(learning_rate: Any, aspect_ratio: Any, clip: Any, rho: Any, label_noise: Any) -> Drive:
    """The :class:`Drive` of the risk ODE (Definition 4.2) for the user's parameters, checked.

    Raises an error naming the parameter when γ = ``aspect_ratio``, ``clip`` or ``rho`` is not a positive scalar,
    ``label_noise`` is negative, ``learning_rate`` is not a :class:`~privdyn.schedules.LearningRate`, or one of 2/γ,
    2c²γ²/ρ², ζ², c² overflows; warns (:class:`~privdyn.schedules.OutsideTheoryWarning`) at ζ = 0, outside
    Assumption 1. Shared by the ODE solvers and the homogenized-SDE simulator, so both accept the same parameters.
    """
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
    drive = Drive(learning_rate, float(aspect_ratio), float(clip), float(rho), float(label_noise))
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        scales = np.array([drive.cap, 2.0 * (np.float64(drive.clip) * drive.aspect_ratio / drive.rho) ** 2,
                           np.float64(drive.label_noise) ** 2, np.float64(drive.clip) ** 2])
    _check.representable(scales, "2/aspect_ratio, 2 clip² aspect_ratio²/rho², label_noise² or clip²",
                         aspect_ratio=aspect_ratio, clip=clip, rho=rho, label_noise=label_noise)
    return drive


def validated_times(times: Any) -> np.ndarray:
    """``times`` as a strictly increasing 1-D float array in [0, 1] (:data:`DEFAULT_TIMES` for ``None``), checked."""
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


def grouped_system(spectrum: Any, target_projections: Any) -> GroupedSystem:
    """The :class:`GroupedSystem` of a spectrum and θ*'s squared projections (one per eigenvalue group), checked.

    Raises an error naming the parameter for a non-:class:`~privdyn.spectra.Spectrum` or projections of the wrong
    shape or sign; warns (:class:`~privdyn.schedules.OutsideTheoryWarning`) when tr Σ ≠ d (Assumption 1).
    """
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
    return GroupedSystem(rates=lam, gain_a=counts * lam, gain_b=counts, weights=lam / d, initial=d * projections / 2.0)


# ---------------------------------------------------------------------------------------------------------------
# Time structure of a schedule: where η̃ reaches zero, where the cap 2/γ stops binding
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Horizon:
    stop: float  # 1, or the first zero of η̃
    end: float  # where the solvers stop: stop − gap if η̃(stop) = 0, else stop
    kink: float | None  # where η̃ crosses 2/γ (η̄ = min(η̃, 2/γ) is not smooth there): a mandatory step end


def _first_zero(drive: Drive) -> float:
    """The first t in [0, 1] with η̃(t) = 0 (η̃ non-increasing), or 1 if η̃(1) > 0.

    Multisection: η̃ at 63 equispaced interior points of the bracket (lo, hi) per call (one vectorized schedule
    evaluation), the bracket shrinking to the sub-interval where η̃ first reaches 0, until lo and hi are adjacent floats
    (about 9 calls, where bisection takes 53 near t = 1). For a non-increasing η̃ this is the t bisection finds.
    """
    if drive.value(1.0) > 0.0:
        return 1.0
    lo, hi = 0.0, 1.0
    if drive.value(0.0) <= 0.0:
        return 0.0
    fractions = np.arange(1, 64) / 64.0
    for _ in range(200):
        points = lo + (hi - lo) * fractions
        zero = np.flatnonzero(np.asarray(drive.learning_rate.value(points), dtype=float) <= 0.0)
        i = int(zero[0]) if zero.size else points.size
        new_lo = float(points[i - 1]) if i > 0 else lo
        new_hi = float(points[i]) if i < points.size else hi
        if (new_lo, new_hi) == (lo, hi) or np.nextafter(new_lo, new_hi) >= new_hi:
            lo, hi = new_lo, new_hi
            break
        lo, hi = new_lo, new_hi
    return hi


def _horizon(drive: Drive) -> _Horizon:
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


def _finish(system: GroupedSystem, drive: Drive, horizon: _Horizon, S_end: np.ndarray, R_end: float) -> np.ndarray:
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

# The clock u = ∫q dt and ∫a dt over a step: 4-point Gauss–Legendre on each half, η̄ exact at the nodes, R from the
# cubic through R(t0), dR/dt(t0), R(mid), R(end) (the error estimate uses the quartic that also matches dR/dt(end)).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(4)
# Gauss–Legendre on the whole step, for the estimate of the quadrature error of the schedule itself
_THETA_GL_FULL, _W_GL_FULL = 0.5 + 0.5 * _GL_X, 0.5 * _GL_W


def final_jump(*, aspect_ratio: float, learning_rate: LearningRate, clip: float, rho: float) -> float:
    """2c²η̃(1)²γ²/ρ²: what the last step's noise adds to the released iterate's risk (Proposition 4.4).

    The last step adds 2c√d·σ_n·N(0, I) with σ_n = η̃(1)/(nρ); its excess risk is ½·4c²dσ_n²·tr Σ with tr Σ = d.
    Exact. 0 for every polynomial schedule with α > 0.
    """
    _check.scalar(aspect_ratio=aspect_ratio, clip=clip, rho=rho)
    _check.positive(aspect_ratio=aspect_ratio, clip=clip, rho=rho)
    drive = validated_drive(learning_rate, aspect_ratio, clip, rho, 1.0)
    return drive.noise_factor * drive.value(1.0) ** 2
