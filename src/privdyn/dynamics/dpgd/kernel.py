"""The compiled inner loops of the dpgd exponential integrator (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329,
Definition 4.2): one step attempt, with its passes over the eigenvalue groups fused into single loops.

This module imports numba at import time; :mod:`privdyn.dynamics.dpgd.integrator` imports it on first use only, so that
``import privdyn`` stays free of numba. The scheme is described in :func:`privdyn.dynamics.dpgd.solve_risk_ode`; the
functions here evaluate it in compiled code, operation for operation as written there, so that results agree with the
scheme to rounding (the summation order of the passes may differ).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from privdyn.dynamics.dpgd.clipping import _factors

__all__: list[str] = []

# the pass: reassociation lets its sums vectorize; no flag that assumes finite values (c' = inf is meaningful)
_PASS_FASTMATH = {"reassoc", "contract", "arcp", "nsz"}

# status codes of :func:`step_kernel`
STEP_OK, STEP_FAILED = 0, 1

_factors_compiled = numba.njit(cache=True, nogil=True)(_factors)


@numba.njit(cache=True, nogil=True)
def _node(eta_bar: float, b: float, R: float, gamma: float, clip: float, label_noise: float
          ) -> tuple[float, float, float, float, float, float]:
    """(q, a, f_a = a/q, f_b = b/q, df_a/dR, df_b/dR) at one time; R is clamped at 0 (the derivatives then vanish)."""
    r = R if R > 0.0 else 0.0
    two_p = 2.0 * r + label_noise * label_noise
    cp = clip / math.sqrt(two_p) if two_p > 0.0 else math.inf
    mu, nu, dmu, dnu = _factors_compiled(cp)
    p = 0.5 * two_p
    if R > 0.0 and cp != math.inf:
        dcp = -cp * cp * cp / (clip * clip)
        dmu_dr, dnup_dr = dmu * dcp, dnu * dcp * p + nu
    else:
        dmu_dr, dnup_dr = 0.0, nu
    q = eta_bar * mu
    a = eta_bar * eta_bar * nu * p * gamma
    return (q, a, eta_bar * nu * p * gamma / mu, b / q, eta_bar * gamma * (dnup_dr * mu - nu * p * dmu_dr) / (mu * mu),
            -b * dmu_dr / (eta_bar * mu * mu))


@numba.njit(cache=True, nogil=True)
def _clocks(h: float, eta_bar_gl: np.ndarray, weights_gl: np.ndarray, R0: float, s0: float, s1: float, x0: float,
            x1: float, rows: np.ndarray, gamma: float, clip: float, label_noise: float) -> np.ndarray:
    """Gauss–Legendre u and ∫a over the step (R at the 8 nodes from ``rows`` (8, 5) applied to (R0, s0, x0, x1, s1)).

    Returns (u_mid, u_end, ∫a to mid, ∫a to end, and their derivatives in (x0, x1): d_um0, d_um1, d_dq0, d_dq1,
    d_am0, d_am1, d_a10, d_a11).
    """
    half_zeta2 = 0.5 * label_noise * label_noise
    out = np.zeros(12)
    dq = Ia_1 = d_dq0 = d_dq1 = d_a10 = d_a11 = 0.0
    for i in range(8):
        bm, b1 = rows[i, 2], rows[i, 3]
        R = rows[i, 0] * R0 + rows[i, 1] * s0 + bm * x0 + b1 * x1 + rows[i, 4] * s1
        positive = R > 0.0
        p = (R if positive else 0.0) + half_zeta2
        cp = clip / math.sqrt(2.0 * p) if p > 0.0 else math.inf
        mu, nu, dmu, dnu = _factors_compiled(cp)
        wq = h * weights_gl[i] * eta_bar_gl[i]
        wa = wq * eta_bar_gl[i] * gamma
        if positive and cp != math.inf:
            dcp = -cp * cp * cp / (clip * clip)
            dq_dr, da_dr = wq * dmu * dcp, wa * (dnu * dcp * p + nu)
        else:
            dq_dr, da_dr = 0.0, wa * nu
        dq += wq * mu
        Ia_1 += wa * nu * p
        d_dq0 += dq_dr * bm
        d_dq1 += dq_dr * b1
        d_a10 += da_dr * bm
        d_a11 += da_dr * b1
        if i == 3:
            out[0], out[2], out[4], out[5], out[8], out[9] = dq, Ia_1, d_dq0, d_dq1, d_a10, d_a11
    out[1], out[3], out[6], out[7], out[10], out[11] = dq, Ia_1, d_dq0, d_dq1, d_a10, d_a11
    return out


@numba.njit(cache=True, nogil=True, fastmath=_PASS_FASTMATH)
def _phi_pass(rates: np.ndarray, wa: np.ndarray, wb: np.ndarray, ws: np.ndarray, u: float, series: np.ndarray,
              cutoff: float, table: np.ndarray) -> np.ndarray:
    """One pass over the m groups at z = 2κu: E = e^{−z}, φ₁..φ₄(−z) (φ_k = ∫₀¹ e^{−z(1−θ)} θ^{k−1}/(k−1)! dθ).

    For z ≥ ``cutoff`` the forward recurrence φ₁ = (1 − E)/z, φ_{k+1} = (1/k! − φ_k)/z; below, φ₄ from its Taylor
    series (``series``: (−1)^i/(i + 4)!) and the backward recurrence φ_k = 1/k! − zφ_{k+1}, E = 1 − zφ₁. The rows
    (E, φ₁, .., φ₄) are written to ``table`` (5, m); returns (Σ wES₀, Σ 2κwES₀, then G row-major:
    G[j, col] = j!·Σ φ_{j+1}·X_col, X = (wA, wB, 2κwA, 2κwB)). Each loop is branch-free, so that the compiler
    vectorizes it.
    """
    scale = 2.0 * u
    m = rates.size
    k = 0
    if scale > 0.0:
        bound = cutoff / scale
        while k < m and rates[k] < bound:  # κ ascends: the series groups are a prefix
            k += 1
    else:
        k = m
    nterms = series.size
    for i in range(k):
        z = rates[i] * scale
        p4 = series[nterms - 1]
        for j in range(nterms - 2, -1, -1):
            p4 = series[j] + z * p4
        p3 = 1.0 / 6.0 - z * p4
        p2 = 0.5 - z * p3
        p1 = 1.0 - z * p2
        table[0, i] = 1.0 - z * p1
        table[1, i] = p1
        table[2, i] = p2
        table[3, i] = p3
        table[4, i] = p4
    for i in range(k, m):  # the exponentials alone, then the recurrence: both loops stay simple
        table[0, i] = math.exp(-rates[i] * scale)
    for i in range(k, m):
        iz = 1.0 / (rates[i] * scale)
        p1 = (1.0 - table[0, i]) * iz
        p2 = (1.0 - p1) * iz
        p3 = (0.5 - p2) * iz
        table[1, i] = p1
        table[2, i] = p2
        table[3, i] = p3
        table[4, i] = (1.0 / 6.0 - p3) * iz
    h = kk = 0.0
    a1 = a2 = a3 = a4 = b1 = b2 = b3 = b4 = c1 = c2 = c3 = c4 = d1 = d2 = d3 = d4 = 0.0
    for i in range(m):
        e, p1, p2, p3, p4 = table[0, i], table[1, i], table[2, i], table[3, i], table[4, i]
        k2 = 2.0 * rates[i]
        es = e * ws[i]
        h += es
        kk += k2 * es
        xa, xb = wa[i], wb[i]
        ka, kb = k2 * xa, k2 * xb
        a1 += p1 * xa
        a2 += p1 * xb
        a3 += p1 * ka
        a4 += p1 * kb
        b1 += p2 * xa
        b2 += p2 * xb
        b3 += p2 * ka
        b4 += p2 * kb
        c1 += p3 * xa
        c2 += p3 * xb
        c3 += p3 * ka
        c4 += p3 * kb
        d1 += p4 * xa
        d2 += p4 * xb
        d3 += p4 * ka
        d4 += p4 * kb
    out = np.empty(18)
    out[0], out[1] = h, kk
    out[2], out[3], out[4], out[5] = a1, a2, a3, a4
    out[6], out[7], out[8], out[9] = b1, b2, b3, b4
    out[10], out[11], out[12], out[13] = 2.0 * c1, 2.0 * c2, 2.0 * c3, 2.0 * c4
    out[14], out[15], out[16], out[17] = 6.0 * d1, 6.0 * d2, 6.0 * d3, 6.0 * d4
    return out


@numba.njit(cache=True, nogil=True)
def _inverse4(a: np.ndarray) -> np.ndarray:
    """The inverse of a 4×4 matrix by Gauss–Jordan elimination with partial pivoting."""
    n = 4
    work = a.copy()
    inv = np.eye(n)
    for col in range(n):
        pivot = col
        for r in range(col + 1, n):
            if abs(work[r, col]) > abs(work[pivot, col]):
                pivot = r
        if pivot != col:
            for c in range(n):
                work[col, c], work[pivot, c] = work[pivot, c], work[col, c]
                inv[col, c], inv[pivot, c] = inv[pivot, c], inv[col, c]
        d = work[col, col]
        for c in range(n):
            work[col, c] /= d
            inv[col, c] /= d
        for r in range(n):
            if r != col:
                f = work[r, col]
                if f != 0.0:
                    for c in range(n):
                        work[r, c] -= f * work[col, c]
                        inv[r, c] -= f * inv[col, c]
    return inv


@numba.njit(cache=True, nogil=True)
def _histopolation_inverse(t: float) -> np.ndarray:
    """M⁻¹: (c₀..c₃) = M⁻¹ (p(0), p(1), ∫₀¹p, ∫₀^θmid p) for the cubic p(θ) = Σ c_j θ^j, θmid = t."""
    m = np.array([[1.0, 0.0, 0.0, 0.0],
                  [1.0, 1.0, 1.0, 1.0],
                  [1.0, 1.0 / 2.0, 1.0 / 3.0, 1.0 / 4.0],
                  [t, t * t / 2.0, t * t * t / 3.0, t * t * t * t / 4.0]])
    return _inverse4(m)


@numba.njit(cache=True, nogil=True)
def _dot4(a: np.ndarray, b: np.ndarray) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]


@numba.njit(cache=True, nogil=True)
def step_kernel(rates: np.ndarray, gain_a: np.ndarray, gain_b: np.ndarray, weights: np.ndarray, wa: np.ndarray,
                wb: np.ndarray, S0: np.ndarray, S1: np.ndarray, table: np.ndarray, scratch: np.ndarray,
                scalars: np.ndarray,
                eta: np.ndarray, eta_bar: np.ndarray, weights_gl: np.ndarray, weights_gl_full: np.ndarray,
                cubic_rows: np.ndarray, quartic_rows: np.ndarray, low_inverse: np.ndarray, series: np.ndarray,
                cutoff: float, max_clock_iterations: int) -> tuple[int, float, float, float, int]:
    """One step attempt of the exponential integrator; fills ``S1`` and returns (status, R1, R_mid, err, passes).

    ``table`` receives E, φ₁..φ₄ at the end clock (the state update reads it), ``scratch`` those at the mid clock.

    ``eta``, ``eta_bar``: η̃ and η̄ at the step's nodes (mid, end, Gauss–Legendre on the halves, on the whole step).
    ``scalars``: h, R0, f_a(t0), f_b(t0), h·dR/dt(t0), guesses of R at the mid node and at the end, η̄ and b at the
    end, (2c²γ²/ρ²)·η̃(t0)², 2c²γ²/ρ², rtol, γ, c, ζ, Σ wA, Σ wB, max κ.
    """
    h, R0, fa0, fb0, slope_term, x0, x1 = (scalars[0], scalars[1], scalars[2], scalars[3], scalars[4], scalars[5],
                                           scalars[6])
    eta_bar1, b_end, noise0, noise_factor, tol = scalars[7], scalars[8], scalars[9], scalars[10], scalars[11]
    gamma, clip, zeta, sum_wa, sum_wb, max_rate = (scalars[12], scalars[13], scalars[14], scalars[15], scalars[16],
                                                   scalars[17])
    eta_bar_gl = eta_bar[2:10]
    # quadrature error of the schedule alone (e.g. η̄ ∝ √(1 − t) near the end for α = ½): the halves' rule against
    # the whole step's, for ∫η̄ and ∫η̄²
    half1 = half2 = whole1 = whole2 = 0.0
    for i in range(8):
        half1 += weights_gl[i] * eta_bar_gl[i]
        half2 += weights_gl[i] * eta_bar_gl[i] * eta_bar_gl[i]
    for i in range(weights_gl_full.size):
        whole1 += weights_gl_full[i] * eta_bar[10 + i]
        whole2 += weights_gl_full[i] * eta_bar[10 + i] * eta_bar[10 + i]
    gl_error0, gl_error1 = h * abs(half1 - whole1), h * abs(half2 - whole2)
    # ∫b dt from t0 to the mid node and to the end, exactly: b = (2c²γ²/ρ²)(−dη̃²/dt)
    Ib_m = max(noise0 - noise_factor * eta[0] * eta[0], 0.0)
    Ib_1 = max(noise0 - noise_factor * eta[1] * eta[1], 0.0)
    m = rates.size
    ws = weights * S0
    passes = 0
    clk = _clocks(h, eta_bar_gl, weights_gl, R0, slope_term, 0.0, x0, x1, cubic_rows, gamma, clip, zeta)
    um_p, dq_p = clk[0], clk[1]
    newton_tol = 1e-4 * tol
    g1 = np.empty((4, 4))  # g1[col, j] = j!·Σ φ_{j+1}·X_col at the end clock
    gm = np.empty((4, 4))  # the same at the mid clock, times θmid^j
    pm = np.empty((2, 4))
    p1 = np.empty((2, 4))
    ca, cb, Ca, Cb = np.empty(4), np.empty(4), np.empty(4), np.empty(4)
    dva, dvb = np.zeros(4), np.zeros(4)
    M = np.empty((4, 4))
    Hm = Km = H1 = K1 = 0.0
    delta = delta_m = drdu_1 = 0.0
    n1 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    sea0 = sea1 = seb0 = seb1 = 0.0
    converged = False
    for _outer in range(max_clock_iterations):
        if not (dq_p > 0.0 and 0.0 < um_p < dq_p):
            return STEP_FAILED, 0.0, 0.0, 0.0, passes
        th = um_p / dq_p
        pw = np.array([1.0, th, th * th, th * th * th])
        M = _histopolation_inverse(th)
        sm_ = _phi_pass(rates, wa, wb, ws, um_p, series, cutoff, scratch)
        s1_ = _phi_pass(rates, wa, wb, ws, dq_p, series, cutoff, table)
        passes += 2
        Hm, Km, H1, K1 = sm_[0], sm_[1], s1_[0], s1_[1]
        for j in range(4):
            for col in range(4):
                g1[col, j] = s1_[2 + 4 * j + col]
                gm[col, j] = sm_[2 + 4 * j + col] * pw[j]
        for col in range(2):
            for i in range(4):
                pm[col, i] = M[0, i] * gm[col, 0] + M[1, i] * gm[col, 1] + M[2, i] * gm[col, 2] + M[3, i] * gm[col, 3]
                p1[col, i] = M[0, i] * g1[col, 0] + M[1, i] * g1[col, 1] + M[2, i] * g1[col, 2] + M[3, i] * g1[col, 3]
        newton_ok = False
        for _newton in range(40):
            n1 = _node(eta_bar1, b_end, x1, gamma, clip, zeta)
            clk = _clocks(h, eta_bar_gl, weights_gl, R0, slope_term, 0.0, x0, x1, cubic_rows, gamma, clip, zeta)
            delta, delta_m = clk[1] - dq_p, clk[0] - um_p
            pa_mid = pb_mid = sma = smb = 0.0
            for part in range(2):
                if part == 0:
                    f0, f1, I1, Im, c, C = fa0, n1[2], clk[3], clk[2], ca, Ca
                else:
                    f0, f1, I1, Im, c, C = fb0, n1[3], Ib_1, Ib_m, cb, Cb
                v0, v1, v2, v3 = f0, f1, I1 / dq_p, Im / dq_p
                for i in range(4):
                    c[i] = M[i, 0] * v0 + M[i, 1] * v1 + M[i, 2] * v2 + M[i, 3] * v3
                slope_end = c[1] + 2.0 * c[2] + 3.0 * c[3]  # p′(1)
                value_mid = c[0] + c[1] * th + c[2] * pw[2] + c[3] * pw[3]  # p(θmid)
                se0, se1 = -slope_end / dq_p, -f1 / dq_p
                smv = -value_mid / dq_p
                dv1, dv2, dv3 = se0 * delta, se1 * delta, smv * delta_m
                for i in range(4):
                    C[i] = c[i] + M[i, 1] * dv1 + M[i, 2] * dv2 + M[i, 3] * dv3
                if part == 0:
                    sea0, sea1, sma, pa_mid = se0, se1, smv, value_mid
                else:
                    seb0, seb1, smb, pb_mid = se0, se1, smv, value_mid
            drdu_1 = sum_wa * n1[2] + sum_wb * n1[3] - K1 - dq_p * (_dot4(g1[2], ca) + _dot4(g1[3], cb))
            drdu_m = sum_wa * pa_mid + sum_wb * pb_mid - Km - um_p * (_dot4(gm[2], ca) + _dot4(gm[3], cb))
            rm = Hm + um_p * (_dot4(gm[0], Ca) + _dot4(gm[1], Cb)) + drdu_m * delta_m - x0
            r1 = H1 + dq_p * (_dot4(g1[0], Ca) + _dot4(g1[1], Cb)) + drdu_1 * delta - x1
            j00 = j01 = j10 = j11 = 0.0
            for kx in range(2):
                d_um, d_dq = clk[4 + kx], clk[6 + kx]
                dva[1] = (n1[4] if kx else 0.0) + sea0 * d_dq
                dva[2] = clk[10 + kx] / dq_p + sea1 * d_dq
                dva[3] = clk[8 + kx] / dq_p + sma * d_um
                dvb[1] = (n1[5] if kx else 0.0) + seb0 * d_dq
                dvb[2] = seb1 * d_dq
                dvb[3] = smb * d_um
                jm = um_p * (_dot4(pm[0], dva) + _dot4(pm[1], dvb)) + drdu_m * d_um
                je = dq_p * (_dot4(p1[0], dva) + _dot4(p1[1], dvb)) + drdu_1 * d_dq
                if kx == 0:
                    j00, j10 = jm, je
                else:
                    j01, j11 = jm, je
            j00 -= 1.0
            j11 -= 1.0
            det = j00 * j11 - j01 * j10
            if det == 0.0 or not math.isfinite(det):
                return STEP_FAILED, 0.0, 0.0, 0.0, passes
            dx0 = (j11 * rm - j01 * r1) / det
            dx1 = (j00 * r1 - j10 * rm) / det
            x0, x1 = x0 - dx0, x1 - dx1
            if not (math.isfinite(x0) and math.isfinite(x1)):
                return STEP_FAILED, 0.0, 0.0, 0.0, passes
            if abs(dx0) <= newton_tol * abs(x0) + 1e-300 and abs(dx1) <= newton_tol * abs(x1) + 1e-300:
                newton_ok = True
                break
        if not newton_ok:
            return STEP_FAILED, 0.0, 0.0, 0.0, passes
        n1 = _node(eta_bar1, b_end, x1, gamma, clip, zeta)
        # the second-order terms of the clock correction must be below the tolerance, else new φ-functions
        if (2.0 * max_rate * delta) ** 2 <= tol and (delta / dq_p) ** 2 + (delta_m / um_p) ** 2 <= tol:
            converged = True
            break
        um_p, dq_p = clk[0], clk[1]
    if not converged:
        return STEP_FAILED, 0.0, 0.0, 0.0, passes
    # the state at the end from the φ-functions of the last pass (at the clock dq_p)
    wa_end = dq_p * np.array([Ca[0], Ca[1], 2.0 * Ca[2], 6.0 * Ca[3]])
    wb_end = dq_p * np.array([Cb[0], Cb[1], 2.0 * Cb[2], 6.0 * Cb[3]])
    R1 = 0.0
    for i in range(m):
        fa_i = wa_end[0] * table[1, i] + wa_end[1] * table[2, i] + wa_end[2] * table[3, i] + wa_end[3] * table[4, i]
        fb_i = wb_end[0] * table[1, i] + wb_end[1] * table[2, i] + wb_end[2] * table[3, i] + wb_end[3] * table[4, i]
        s = table[0, i] * S0[i] + gain_a[i] * fa_i + gain_b[i] * fb_i
        if delta != 0.0:
            s += delta * (-2.0 * rates[i] * s + gain_a[i] * n1[2] + gain_b[i] * n1[3])
        S1[i] = s
        R1 += weights[i] * s
    # error estimate: (i) the embedded quadratic with the same end values and total integral but without the
    # mid-node integral; (ii) the clock and ∫a with R quadratic instead of cubic in t; (iii) the schedule's quadrature
    err = 0.0
    for col in range(2):
        if col == 0:
            f0, f1, I1, c = fa0, n1[2], clk[3], ca
        else:
            f0, f1, I1, c = fb0, n1[3], Ib_1, cb
        v = np.array([f0, f1, I1 / dq_p])
        low = low_inverse @ v
        err += dq_p * abs(low[0] * g1[col, 0] + low[1] * g1[col, 1] + low[2] * g1[col, 2] - _dot4(g1[col], c))
    high = _clocks(h, eta_bar_gl, weights_gl, R0, slope_term, h * n1[0] * drdu_1, x0, x1, quartic_rows, gamma, clip,
                   zeta)
    clock_error = abs(high[0] - clk[0]) + abs((high[1] - high[0]) - (clk[1] - clk[0]))
    a_error = abs(high[2] - clk[2]) + abs((high[3] - high[2]) - (clk[3] - clk[2]))
    err += abs(drdu_1) * clock_error + abs(p1[0, 2]) * a_error
    err += abs(drdu_1) * (n1[0] / eta_bar1) * gl_error0 + abs(p1[0, 2]) * (n1[1] / (eta_bar1 * eta_bar1)) * gl_error1
    return STEP_OK, R1, x0, err, passes
