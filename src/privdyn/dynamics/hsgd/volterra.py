"""The Volterra equations (6)-(7) of homogenized SGD (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687, Theorem 4.2):
the O(N m) product-trapezoid solver with Romberg extrapolation, and its dense reference."""

from __future__ import annotations

import functools
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._arrays import read_only
from privdyn.hsgd_problem import GroupMoments, HSGDProblem, RiskCurve
from privdyn.schedules import LearningRate

__all__ = ["volterra_risk", "volterra_dense_reference", "MAX_REFINEMENTS", "MAX_GRID_STEPS",
           "MAX_DENSE_GRID_STEPS"]

MAX_REFINEMENTS = 16
"""The largest ``refinements`` of :func:`volterra_risk` (each one doubles the cost)."""
MAX_GRID_STEPS = 2**20
"""The most quadrature steps on the finest grid of :func:`volterra_risk` (about a second per 10 eigen-groups)."""
MAX_DENSE_GRID_STEPS = 2**12
"""The most quadrature steps of :func:`volterra_dense_reference` (its cost grows as the square of the steps)."""


# Rows of the (N, m) exponential tables evaluated at once: bounds the memory at _CHUNK·m doubles per table.
_CHUNK = 512
# Gauss-Legendre nodes per grid interval for Γ(t) = ∫γ when the profile has no closed-form integral.
_GAUSS_NODES = 10


# ----------------------------------------------------------------------------------------------------------------
# Grids and Γ(t)
# ----------------------------------------------------------------------------------------------------------------


def _times(times: Any) -> np.ndarray:
    ts = _check.real_array(times=times)
    if ts.ndim != 1 or ts.size == 0:
        raise ValueError(f"times must be a non-empty 1-D array; got shape {ts.shape}.")
    _check.non_negative(times=ts)
    if np.any(np.diff(ts) <= 0):
        raise ValueError("times must be strictly increasing.")
    return ts


def _check_grid_size(times: np.ndarray, max_step: float, level: int, limit: int = MAX_GRID_STEPS) -> None:
    """The finest grid of :func:`_build_grid` has at most ``limit`` steps (ValueError otherwise)."""
    points = times if times[0] == 0.0 else np.concatenate(([0.0], times))
    with np.errstate(over="ignore"):
        steps = float(np.sum(np.maximum(np.ceil(np.diff(points) / max_step * (1 - 1e-9)), 1.0))) * 2.0**level
    if not steps <= limit:
        raise ValueError(f"max_step={max_step!r} with refinements={level} over times up to {float(points[-1])!r} needs "
                         f"{steps:.3g} quadrature steps; at most {limit} are allowed "
                         "(raise max_step or lower refinements).")


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
        return np.asarray(learning_rate.integral(grid))
    nodes, weights = np.polynomial.legendre.leggauss(_GAUSS_NODES)
    mid, half = (grid[1:] + grid[:-1]) / 2, (grid[1:] - grid[:-1]) / 2
    points = mid[:, None] + half[:, None] * nodes
    values = np.asarray(learning_rate.value(points.ravel())).reshape(points.shape)
    return np.concatenate(([0.0], np.cumsum(half * (values @ weights))))


def _rate_values(learning_rate: LearningRate, grid: np.ndarray) -> np.ndarray:
    values = np.asarray(learning_rate.value(grid))
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


def _forcing(problem: HSGDProblem, moments: GroupMoments, gamma_int: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def volterra_risk(problem: HSGDProblem, times: ArrayLike, *, max_step: float, refinements: int,
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
        refinements: number R of grid halvings for the Romberg extrapolation (0: plain product trapezoid), in
            [0, :data:`MAX_REFINEMENTS`]; the finest grid may hold at most :data:`MAX_GRID_STEPS` steps.
        with_variance: also return the (T, m) per-direction variances V_jj(t) of each group (eq. (10)).

    Returns:
        A :class:`RiskCurve` with ``method="volterra"``. Shapes: times (T,) -> (T,), group_variance (T, m).
    """
    _check.instance(HSGDProblem, problem=problem)
    ts = _times(times)
    _check.scalar(max_step=max_step, refinements=refinements)
    _check.positive(max_step=max_step)
    _check.integer(minimum=0, refinements=refinements)
    _check.at_most(MAX_REFINEMENTS, refinements=refinements)
    _check_grid_size(ts, float(max_step), int(refinements))
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
    return RiskCurve(times=read_only(ts), population_risk=read_only(pop), regularized_risk=read_only(reg),
                     method="volterra", group_variance=None if var is None else read_only(var),
                     population_risk_error=None if pop_err is None else read_only(pop_err),
                     regularized_risk_error=None if reg_err is None else read_only(reg_err),
                     num_steps=num_steps, refinements=int(refinements))


def volterra_dense_reference(problem: HSGDProblem, times: ArrayLike, *, max_step: float,
                             with_variance: bool = False) -> RiskCurve:
    """The product-trapezoid solution of (6)-(7) evaluated densely: a slow reference for tests and benchmarks.

    Same grid and quadrature as :func:`volterra_risk` with ``refinements=0``, but every kernel value K(t_k, t_i) =
    (γ(t_i)²/d) Σ_g n_g λ_g² exp(−2a_g(Γ(t_k) − Γ(t_i))) (and the three other kernels of (6)-(7)) is built from the Γ
    difference of its own pair (k, i), and the forcing 𝒫(X^gf) from the gradient-flow mean written directly as
    e^{−aΓ}x_0 + (1 − e^{−aΓ})x* (the gradient flow, eq. (5)). Cost O(N²·m) time, O(N·m) memory, so N is at most
    :data:`MAX_DENSE_GRID_STEPS` (ValueError otherwise). Public, documented, and not meant for production use.

    Returns:
        A :class:`RiskCurve` with ``method="volterra"`` and no error estimate.
    """
    _check.instance(HSGDProblem, problem=problem)
    ts = _times(times)
    _check.scalar(max_step=max_step)
    _check.positive(max_step=max_step)
    _check_grid_size(ts, float(max_step), 0, MAX_DENSE_GRID_STEPS)
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
    return RiskCurve(times=read_only(ts), population_risk=read_only(pop[out]), regularized_risk=read_only(reg[out]),
                     method="volterra", group_variance=None if variance is None else read_only(variance),
                     num_steps=n - 1, refinements=0)
