"""privdyn's exponential integrator for the dpgd risk ODE (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329,
Definition 4.2): adaptive, fourth order in the non-stiff limit."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from privdyn.dynamics.dpgd.clipping import _factors
from privdyn.dynamics.dpgd.system import (
    _GL_W,
    _GL_X,
    _MAX_CLOCK_ITERATIONS,
    _THETA_GL_FULL,
    _W_GL_FULL,
    ODESolverError,
    _Drive,
    _fill_tail,
    _finish,
    _horizon,
    _System,
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
