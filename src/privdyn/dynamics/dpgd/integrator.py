"""privdyn's exponential integrator for the dpgd risk ODE (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329,
Definition 4.2): adaptive, fourth order in the non-stiff limit."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import numpy as np

from privdyn.dynamics.dpgd.system import (
    _GL_W,
    _GL_X,
    _MAX_CLOCK_ITERATIONS,
    _THETA_GL_FULL,
    _W_GL_FULL,
    Drive,
    GroupedSystem,
    ODESolverError,
    _fill_tail,
    _finish,
    _horizon,
)

__all__: list[str] = []


# ---------------------------------------------------------------------------------------------------------------
# The exponential integrator
# ---------------------------------------------------------------------------------------------------------------

# z below which φ₄(−z) comes from its Taylor series (12 terms: truncation < 1e-20 relative); above, the forward
# recurrence loses at most ~1e-12 relative in φ₄ (at z = 0.2), far below the solver's tolerances
_SERIES_CUTOFF = 0.2
_SERIES_TERMS = 12
_SERIES_COEFFICIENTS = np.array([(-1.0) ** i / math.factorial(i + 4) for i in range(_SERIES_TERMS)])
_FACTORIALS = np.array([1.0, 1.0, 2.0, 6.0])  # ∫₀¹ e^{−z(1−θ)} θ^j dθ = j! φ_{j+1}(−z)

# (c₀, c₁, c₂) of the quadratic with p(0), p(1), ∫₀¹p: the embedded lower-order approximation
_LOW_INVERSE = np.linalg.inv(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0 / 2.0, 1.0 / 3.0]]))
_THETA_GL = np.concatenate([0.25 + 0.25 * _GL_X, 0.75 + 0.25 * _GL_X])  # (8,) nodes in θ = (t − t0)/h
_W_GL = np.concatenate([0.25 * _GL_W, 0.25 * _GL_W])  # weights in θ; the first four integrate [0, ½]
_POWERS_GL = _THETA_GL[:, None] ** np.arange(4.0)[None, :]
# rows: the weights of (R(t0), h·dR/dt(t0), R(mid), R(end), h·dR/dt(end)) in R at the eight nodes; the cubic ignores
# the last (its column is zero)
_CUBIC_ROWS = np.concatenate([_POWERS_GL @ np.linalg.inv(np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0],
                                                                  [1.0, 0.5, 0.25, 0.125], [1.0, 1.0, 1.0, 1.0]])),
                              np.zeros((8, 1))], axis=1)
_QUARTIC_ROWS = ((_THETA_GL[:, None] ** np.arange(5.0)[None, :])
                 @ np.linalg.inv(np.array([[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0],
                                           [1.0, 0.5, 0.25, 0.125, 0.0625], [1.0, 1.0, 1.0, 1.0, 1.0],
                                           [0.0, 1.0, 2.0, 3.0, 4.0]])))
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


@dataclasses.dataclass(frozen=True)
class _Step:
    S1: np.ndarray  # the state at the end
    R1: float
    Rm: float  # R at the mid node
    err: float  # estimated local error of R at the end
    schedule_end: tuple[float, float, float]  # (η̃, η̄, b) at the end


@functools.cache
def _kernel() -> Any:
    """The compiled step (:mod:`privdyn.dynamics.dpgd.kernel`), imported on first use: it loads numba."""
    from privdyn.dynamics.dpgd import kernel

    return kernel


class _Stepper:
    """The exponential integrator on one :class:`GroupedSystem` (the scheme is described in :func:`solve_risk_ode`).

    The step itself (the passes over the m groups, the Newton iteration on R at the mid node and at the end, the
    state update and the error estimate) runs compiled; the schedule is evaluated here, once per step attempt.
    """

    def __init__(self, system: GroupedSystem, drive: Drive, rtol: float):
        self.system, self.drive, self.rtol = system, drive, rtol
        self.kernel = _kernel()
        contiguous = [np.ascontiguousarray(a, dtype=float) for a in (system.rates, system.gain_a, system.gain_b,
                                                                      system.weights)]
        self.rates, self.gain_a, self.gain_b, self.weights = contiguous
        self.wa, self.wb = self.weights * self.gain_a, self.weights * self.gain_b
        self.sum_wa, self.sum_wb = float(self.wa.sum()), float(self.wb.sum())
        self.rate_weights = 2.0 * self.rates * self.weights
        self.max_rate = float(self.rates[-1])
        self.table = np.empty((5, self.rates.size))  # E, φ₁..φ₄ at the end clock of the last pass
        self.scratch = np.empty((5, self.rates.size))  # the same at the mid clock
        self.scalars = np.empty(18)
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

    def step(self, t0: float, h: float, S0: np.ndarray, n0: _Node, slope0: float, guesses: tuple[float, float],
             end_capped: bool | None) -> _Step | None:
        """One step from t0 to t0 + h; None if the nonlinear solve fails (the caller then shrinks h).

        ``n0`` is the drive at t0 (at R(t0)) and ``slope0`` = dR/dt there; ``guesses`` start R at the mid node and at
        the end; ``end_capped`` forces the side of the cap at the end (a kink).
        """
        drive = self.drive
        eta, eta_bar, b = drive.profile(t0 + h * _STEP_NODES)
        e1 = float(eta[1])
        is_capped = e1 > drive.cap if end_capped is None else end_capped
        sched_1 = (e1, drive.cap if is_capped else e1, float(b[1]))
        self.scalars[:] = (h, n0.R, n0.fa, n0.fb, h * slope0, guesses[0], guesses[1], sched_1[1], sched_1[2],
                           drive.noise_factor * n0.eta**2, drive.noise_factor, self.rtol, drive.aspect_ratio,
                           drive.clip, drive.label_noise, self.sum_wa, self.sum_wb, self.max_rate)
        S1 = np.empty_like(self.rates)
        kernel = self.kernel
        status, R1, Rm, err, passes = kernel.step_kernel(
            self.rates, self.gain_a, self.gain_b, self.weights, self.wa, self.wb, S0, S1, self.table, self.scratch,
            self.scalars, eta, eta_bar, _W_GL, _W_GL_FULL, _CUBIC_ROWS, _QUARTIC_ROWS, _LOW_INVERSE,
            _SERIES_COEFFICIENTS, _SERIES_CUTOFF, _MAX_CLOCK_ITERATIONS)
        self.passes += passes
        if status != kernel.STEP_OK:
            return None
        return _Step(S1=S1, R1=R1, Rm=Rm, err=err, schedule_end=sched_1)


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


def _solve_exponential(system: GroupedSystem, drive: Drive, times: np.ndarray, rtol: float) -> Any:
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
