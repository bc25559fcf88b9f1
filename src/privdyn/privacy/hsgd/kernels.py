"""Compiled kernels of the hsgd accountant (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687): contracted Gram sums and
the rank-4 Gaussian divergence in both orders."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from privdyn.privacy.hsgd.common import _PD_RTOL, _SERIES_CUTOFF, _SERIES_TERMS

__all__: list[str] = []


# ----------------------------------------------------------------------------------------------------------------
# Fast path: Gram-matrix moments per group, then a 4×4 kernel per pair
# ----------------------------------------------------------------------------------------------------------------


def _gram_sums(k_idx: Any, l_idx: Any, q_idx: Any, gamma_int: Any, var: Any, rate: Any, step: Any, shrink: Any,
               noise2: Any, sums_t: Any, out: Any) -> None:  # pragma: no cover
    """Contracted Gram entries out[t, b, c] = Σ_g M_t,g(b)·sums_t[c, g] for the blocks (X_{t_q}, X_{t_k}), s = t_l.

    M_t (t = ff, fk, kk) are the per-group bilinear forms of the whitened columns. q < 0: the last iterate X_{t_k}
    alone, whitened by the common variance K = V(t) − φ²V(s) + φ²(c²V(s) + h²σ²). q ≥ 0: the pair (X_{t_q}, X_{t_k})
    with t_q ≤ s < t_k, whitened by the innovation form of the Markov chain X_{t_q} → X⁰_{t_k}.
    Shapes: k_idx, l_idx, q_idx (B,); var (K+1, m); rate (m,); sums_t (C, m); out (3, B, C).
    """
    num = k_idx.size
    m = rate.size
    cols = sums_t.shape[0]
    mff = np.empty(m)
    mfc = np.empty(m)
    mcc = np.empty(m)
    for b in range(num):
        k = k_idx[b]
        ell = l_idx[b]
        q = q_idx[b]
        h = step[ell]
        c = shrink[ell]
        lag = gamma_int[k] - gamma_int[ell]
        pre_lag = gamma_int[ell] - gamma_int[q] if q >= 0 else 0.0
        for g in range(m):
            phi2 = math.exp(-2.0 * rate[g] * lag)
            vs = var[ell, g]
            fresh_t = max(var[k, g] - phi2 * vs, 0.0)
            pre = 0.0
            fresh_s = vs
            if q >= 0:
                pre = math.exp(-2.0 * rate[g] * pre_lag) * var[q, g]
                fresh_s = max(vs - pre, 0.0)
            w = phi2 / (fresh_t + phi2 * (c * c * fresh_s + h * h * noise2))
            mff[g] = h * h * w
            mfc[g] = -h * c * fresh_s * w
            mcc[g] = c * c * fresh_s * fresh_s * w + pre
        for col in range(cols):
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            for g in range(m):
                a = sums_t[col, g]
                s0 += mff[g] * a
                s1 += mfc[g] * a
                s2 += mcc[g] * a
            out[0, b, col] = s0
            out[1, b, col] = s1
            out[2, b, col] = s2


def _log1p_minus_identity(y: Any) -> Any:  # pragma: no cover (compiled)
    if abs(y) <= _SERIES_CUTOFF:
        acc = 0.0
        for k in range(_SERIES_TERMS + 1, 1, -1):
            acc = acc * y + (-1.0) ** (k + 1) / k
        return acc * y * y
    return math.log1p(y) - y


def _minors(y: Any) -> Any:  # pragma: no cover (compiled)
    """e1..e4 of a 4×4 matrix (sums of principal minors)."""
    e1 = y[0, 0] + y[1, 1] + y[2, 2] + y[3, 3]
    e2 = 0.0
    for i in range(4):
        for j in range(i + 1, 4):
            e2 += y[i, i] * y[j, j] - y[i, j] * y[j, i]
    e3 = 0.0
    for i in range(4):
        for j in range(i + 1, 4):
            for k in range(j + 1, 4):
                e3 += (y[i, i] * (y[j, j] * y[k, k] - y[j, k] * y[k, j])
                       - y[i, j] * (y[j, i] * y[k, k] - y[j, k] * y[k, i])
                       + y[i, k] * (y[j, i] * y[k, j] - y[j, j] * y[k, i]))
    e4 = 0.0
    for c in range(4):
        # cofactor expansion along row 0
        p = 1 if c == 0 else 0
        q = 2 if c <= 1 else 1
        r = 3 if c <= 2 else 2
        minor = (y[1, p] * (y[2, q] * y[3, r] - y[2, r] * y[3, q])
                 - y[1, q] * (y[2, p] * y[3, r] - y[2, r] * y[3, p])
                 + y[1, r] * (y[2, p] * y[3, q] - y[2, q] * y[3, p]))
        e4 += (-1.0) ** c * y[0, c] * minor
    return e1, e2, e3, e4


def _one_order(gram: Any, var1: Any, var2: Any, e: Any, alpha: Any, w1: Any, w2: Any, y: Any, work: Any,
               z: Any) -> Any:  # pragma: no cover (compiled)
    """D_α for the mixture weights (w1, w2) on the two laws: (1 − α, α) is D_α(P_1‖P_2), (α, 1 − α) the reverse."""
    for col in range(4):
        y[0, col] = w1 * (var1 * gram[0, col] + gram[1, col])
        y[1, col] = w1 * gram[0, col]
        y[2, col] = w2 * (var2 * gram[2, col] + gram[3, col])
        y[3, col] = w2 * gram[2, col]
    e1, e2, e3, e4 = _minors(y)
    scale = 1.0
    for i in range(4):
        for j in range(4):
            scale += abs(y[i, j])
    # coefficients of the characteristic polynomial of I + Y: all > 0 iff I + Y (hence the mixture) is PD
    coef = (4.0 + e1, 6.0 + 3.0 * e1 + e2, 4.0 + 3.0 * e1 + 2.0 * e2 + e3, 1.0 + e1 + e2 + e3 + e4)
    binom = (4.0, 6.0, 4.0, 1.0)
    for k in range(4):
        if not coef[k] > _PD_RTOL * binom[k] * scale ** (k + 1):
            return math.inf
    rest = e2 + e3 + e4
    mix = _log1p_minus_identity(e1 + rest) + rest
    # 2×2 blocks: e1 = v G00 + 2 G01, e2 = det(S) det(G_ii) = −(G00 G11 − G01²)
    d1 = -(gram[0, 0] * gram[1, 1] - gram[0, 1] * gram[0, 1])
    l1 = _log1p_minus_identity(var1 * gram[0, 0] + 2.0 * gram[0, 1] + d1) + d1
    d2 = -(gram[2, 2] * gram[3, 3] - gram[2, 3] * gram[2, 3])
    l2 = _log1p_minus_identity(var2 * gram[2, 2] + 2.0 * gram[2, 3] + d2) + d2
    # the weight of law i's log det is −w_i (weights sum: 1 − w1 − w2 = 0), the traces cancel
    logdet = -(mix - w1 * l1 - w2 * l2) / (2.0 * (alpha - 1.0))
    if logdet < 0.0:
        logdet = 0.0
    # mean term: (α/2) eᵀ G (I + Y)⁻¹ e by Gaussian elimination with partial pivoting
    for i in range(4):
        for j in range(4):
            work[i, j] = y[i, j] + (1.0 if i == j else 0.0)
        work[i, 4] = e[i]
    for col in range(4):
        piv = col
        for r in range(col + 1, 4):
            if abs(work[r, col]) > abs(work[piv, col]):
                piv = r
        if piv != col:
            for j in range(5):
                tmp = work[col, j]
                work[col, j] = work[piv, j]
                work[piv, j] = tmp
        for r in range(col + 1, 4):
            f = work[r, col] / work[col, col]
            for j in range(col, 5):
                work[r, j] -= f * work[col, j]
    for i in range(3, -1, -1):
        acc = work[i, 4]
        for j in range(i + 1, 4):
            acc -= work[i, j] * z[j]
        z[i] = acc / work[i, i]
    quad = 0.0
    for i in range(4):
        gz = 0.0
        for j in range(4):
            gz += gram[i, j] * z[j]
        quad += e[i] * gz
    if quad < 0.0:
        quad = 0.0
    return 0.5 * alpha * quad + logdet


def _pair_kernel(x: Any, var_a: Any, beta: Any, alpha: Any, forward: Any,
                 backward: Any) -> None:  # pragma: no cover (compiled)
    """Both orders of D_α for every (pair-of-times b, neighbouring pair p) from the contracted moments.

    x: (3, B, 3P) with x[t, b, 3p + c] = Σ_g A_c,g M_t,g (t: ff, fk, kk; c: a1a1, a1a2, a2a2); var_a, beta: (B, P, 2).
    """
    num = x.shape[1]
    npairs = var_a.shape[1]
    gram = np.empty((4, 4))
    y = np.empty((4, 4))
    work = np.empty((4, 5))
    z = np.empty(4)
    e = np.zeros(4)
    for b in range(num):
        for p in range(npairs):
            base = 3 * p
            g00 = x[0, b, base]
            g01 = x[1, b, base]
            g11 = x[2, b, base]
            g02 = x[0, b, base + 1]
            g03 = x[1, b, base + 1]
            g13 = x[2, b, base + 1]
            g22 = x[0, b, base + 2]
            g23 = x[1, b, base + 2]
            g33 = x[2, b, base + 2]
            gram[0, 0] = g00
            gram[0, 1] = g01
            gram[1, 0] = g01
            gram[1, 1] = g11
            gram[0, 2] = g02
            gram[2, 0] = g02
            gram[0, 3] = g03
            gram[3, 0] = g03
            gram[1, 2] = g03
            gram[2, 1] = g03
            gram[1, 3] = g13
            gram[3, 1] = g13
            gram[2, 2] = g22
            gram[2, 3] = g23
            gram[3, 2] = g23
            gram[3, 3] = g33
            e[0] = beta[b, p, 0]
            e[2] = -beta[b, p, 1]
            v1 = var_a[b, p, 0]
            v2 = var_a[b, p, 1]
            forward[b, p] = _one_order(gram, v1, v2, e, alpha, 1.0 - alpha, alpha, y, work, z)
            backward[b, p] = _one_order(gram, v1, v2, e, alpha, alpha, 1.0 - alpha, y, work, z)


@functools.cache
def _compiled() -> tuple[Any, Any]:
    """The fast-path loops compiled by numba (on first use; cached on disk)."""
    import numba

    jit = functools.partial(numba.njit, cache=True, nogil=True)
    # reassociated (SIMD) sums over the groups; deterministic for a given build
    gram_sums = numba.njit(cache=True, nogil=True, fastmath=True)(_gram_sums)
    log1p_mi = jit(_log1p_minus_identity)
    minors = jit(_minors)
    glb = {"_log1p_minus_identity": log1p_mi, "_minors": minors}
    one_order = _rebind(_one_order, glb)
    one_order_jit = jit(one_order)
    kernel = jit(_rebind(_pair_kernel, {"_one_order": one_order_jit}))
    return gram_sums, kernel


def _rebind(fn: Any, extra: dict[str, Any]) -> Any:
    """``fn`` with some module globals replaced (so that compiled callees are called from compiled code)."""
    import types

    namespace = dict(fn.__globals__)
    namespace.update(extra)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
