"""Renyi privacy of homogenized SGD (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687): the last iterate (Theorem 4.3),
released iterates (Theorem 4.4) and their average (Theorem 4.5)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from privdyn import _check
from privdyn.dynamics.hsgd import HSGDLaw
from privdyn.privacy.hsgd.common import (
    _CHUNK_ELEMENTS,
    _SURROGATE_NOTE,
    DIRECTIONS,
    REFERENCE,
    RELEASE_MODES,
    NeighboringPairs,
    _Grid,
    _grid,
    _pair_data,
    _PairData,
    _renyi_order,
)
from privdyn.privacy.hsgd.kernels import _compiled
from privdyn.privacy.labels import Guarantee, PrivacyLoss

__all__ = [
    "renyi_divergences", "release_divergences", "average_divergences", "rdp_epsilon", "rdp_epsilon_releases",
    "rdp_epsilon_average"
]


def _pair_tables(grid: _Grid, data: _PairData, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(K+1, P, 2) a_iᵀV(s)a_i and β_i = b_i − a_iᵀm(s) at the grid times s (only ``rows`` filled when given)."""
    npairs = data.b1.size
    var_sums = data.sums.reshape(-1, npairs, 3)  # (m, P, 3)
    var_a = np.zeros((grid.last + 1, npairs, 2))
    beta = np.zeros((grid.last + 1, npairs, 2))
    rows = np.arange(grid.last + 1) if rows is None else np.unique(rows)
    variance, mean = grid.variance[rows], np.asarray(grid.law.mean)[rows]
    var_a[rows] = np.stack([variance @ var_sums[:, :, 0], variance @ var_sums[:, :, 2]], axis=2)
    beta[rows] = np.stack([data.b1[None, :] - mean @ data.a1.T, data.b2[None, :] - mean @ data.a2.T], axis=2)
    return var_a, beta


def _divergence_batch(grid: _Grid, data: _PairData, alpha: float, k_idx: np.ndarray, l_idx: np.ndarray,
                      q_idx: np.ndarray, var_a: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward D_α, shapes (B, P), for blocks (q, k) at positions l (q = −1: last iterate only)."""
    gram_sums, kernel = _compiled()
    num = k_idx.size
    npairs = data.b1.size
    forward, backward = np.empty((num, npairs)), np.empty((num, npairs))
    sums_t = np.ascontiguousarray(data.sums.T)
    rows = max(1, _CHUNK_ELEMENTS // max(3 * sums_t.shape[0], 1))
    for lo in range(0, num, rows):
        hi = min(num, lo + rows)
        x = np.empty((3, hi - lo, sums_t.shape[0]))
        gram_sums(k_idx[lo:hi], l_idx[lo:hi], q_idx[lo:hi], grid.gamma_int, grid.variance, grid.rate, grid.step,
                  grid.shrink, grid.noise2, sums_t, x)
        ell = l_idx[lo:hi]
        kernel(x, np.ascontiguousarray(var_a[ell]), np.ascontiguousarray(beta[ell]), alpha, forward[lo:hi],
               backward[lo:hi])
    return forward, backward


def _combine(forward: np.ndarray, backward: np.ndarray, direction: str) -> np.ndarray:
    if direction == "forward":
        return forward
    if direction == "backward":
        return backward
    return np.maximum(forward, backward)


def renyi_divergences(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, iterates: ArrayLike,
                      positions: ArrayLike,
                      direction: str = "max") -> PrivacyLoss:
    """D_α(t_k; s_ℓ, θ) (eq. (14), correct order) for a batch of (k, ℓ) and every pair: the O(m)-per-pair fast path.

    Same quantity as :func:`renyi_divergence` (module docstring, "Fast path"), vectorized over the (k, ℓ) pairs. A
    surrogate: divergences of diffusion-approximation laws on a data-dependent set of pairs, not a worst-case DP
    guarantee. Accuracy: the second-order log-determinant terms are formed without first-order cancellation, so the
    relative error stays at the level of rounding (≈ 1e-13 against the low-rank path of :mod:`divergences` in the
    benchmark) unless both the mean gap and the covariance change are tiny, where it is absolute, ≈ 1e-16 times the
    size of the whitened covariance change.

    Args:
        renyi_order: α > 1.
        law: an :class:`~privdyn.dynamics.hsgd.HSGDLaw` on the SGD grid (:func:`sgd_grid_law`).
        pairs: the neighbouring pairs.
        iterates, positions: integer arrays of one shape (B,), entries in [0, K]; ℓ > k gives 0 (s > t).
        direction: ``"forward"``, ``"backward"`` or ``"max"`` (:data:`DIRECTIONS`).

    Returns:
        :class:`PrivacyLoss` (``surrogate``) with ``value`` of shape (B, P); +inf where the mixture is not PD.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(DIRECTIONS, direction=direction)
    grid = _grid(law)
    k_idx, l_idx = _index_arrays(grid, iterates, positions)
    data = _pair_data(law, pairs)
    var_a, beta = _pair_tables(grid, data, l_idx)
    after = l_idx > k_idx  # the record is used after iterate k: identical laws, D = 0 (Theorem 4.3)
    fwd, bwd = _divergence_batch(grid, data, alpha, np.where(after, l_idx, k_idx), l_idx,
                                 np.full(k_idx.size, -1, dtype=np.int64), var_a, beta)
    fwd[after], bwd[after] = 0.0, 0.0
    return PrivacyLoss(value=_combine(fwd, bwd, direction), guarantee=Guarantee.SURROGATE, quantity="renyi_divergence",
                       source=REFERENCE + ", eq. (14), correct argument order; " + _SURROGATE_NOTE)


def _index_arrays(grid: _Grid, iterates: Any, positions: Any) -> tuple[np.ndarray, np.ndarray]:
    k_idx = np.atleast_1d(np.asarray(iterates))
    l_idx = np.atleast_1d(np.asarray(positions))
    _check.integer(minimum=0, iterates=k_idx, positions=l_idx)
    if k_idx.shape != l_idx.shape or k_idx.ndim != 1:
        raise ValueError(f"iterates and positions must be 1-D arrays of one shape; got {k_idx.shape} and "
                         f"{l_idx.shape}.")
    k_idx, l_idx = k_idx.astype(np.int64), l_idx.astype(np.int64)
    if np.any(k_idx > grid.last):
        raise ValueError(f"iterates must be <= {grid.last} (the last time of the law); got {int(k_idx.max())}.")
    return k_idx, l_idx


# ----------------------------------------------------------------------------------------------------------------
# Accountants
# ----------------------------------------------------------------------------------------------------------------


def _mixture(alpha: float, worst: np.ndarray, num_steps: int, affected: int) -> float:
    """(1/(α−1)) [logsumexp({log(n − k)} ∪ (α−1)·worst) − log n] (Lemma C.3 on the SGD grid)."""
    if np.any(np.isinf(worst)):
        return math.inf
    terms = (alpha - 1.0) * worst
    if num_steps > affected:
        terms = np.concatenate(([math.log(num_steps - affected)], terms))
    if terms.size == 0:
        return 0.0
    return max(0.0, (float(logsumexp(terms)) - math.log(num_steps)) / (alpha - 1.0))


def _num_steps(grid: _Grid, num_steps: Any) -> int:
    _check.integer(minimum=1, num_steps=num_steps)
    return int(num_steps)


def rdp_epsilon(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, num_steps: int,
                iterates: ArrayLike | None = None) -> PrivacyLoss:
    """Last-iterate RDP curve of Theorem 4.3, eq. (15), on the SGD grid (labelled ``surrogate``).

    rdp_epsilon(k) = (1/(α−1)) [logsumexp({log(n − k)} ∪ {(α−1) max_θ D_α(k; ℓ, θ) : ℓ < k}) − log n], with D_α the
    correct-order divergence (14) maximized over both orders and the ``pairs`` (module docstring). O(k·m) per iterate
    (the divergences of all positions ℓ < k in one batch).

    This is a diffusion approximation on a data-dependent set of pairs, not a worst-case DP guarantee.

    Args:
        renyi_order: α > 1.
        law: the HSGD law on the SGD grid t_k = k/d up to at least max(iterates) (:func:`sgd_grid_law`).
        pairs: the candidate neighbouring pairs (e.g. :func:`select_pairs`).
        num_steps: n, the dataset size = number of steps of the pass (the differing record's position is uniform
            over the n steps); T = n/d.
        iterates: iterates k ∈ [0, n] (default 0..n).

    Returns:
        :class:`PrivacyLoss` (``surrogate``) with ``value`` (len(iterates),).
    """
    alpha = _renyi_order(renyi_order)
    grid = _grid(law)
    n = _num_steps(grid, num_steps)
    ks = _iterates(grid, n, iterates)
    data = _pair_data(law, pairs)
    var_a, beta = _pair_tables(grid, data)
    out = np.zeros(ks.size)
    for i, k in enumerate(ks.tolist()):
        if k == 0:
            continue
        ell = np.arange(k, dtype=np.int64)
        fwd, bwd = _divergence_batch(grid, data, alpha, np.full(k, k, dtype=np.int64), ell,
                                     np.full(k, -1, dtype=np.int64), var_a, beta)
        out[i] = _mixture(alpha, np.maximum(fwd, bwd).max(axis=1), n, k)
    return PrivacyLoss(value=out, guarantee=Guarantee.SURROGATE, quantity="rdp_epsilon",
                       source=REFERENCE + ", Theorem 4.3 eq. (15) (correct argument order, both orders); "
                              + _SURROGATE_NOTE)


def _iterates(grid: _Grid, n: int, iterates: Any) -> np.ndarray:
    ks = np.arange(n + 1) if iterates is None else np.atleast_1d(np.asarray(iterates))
    _check.integer(minimum=0, iterates=ks)
    ks = ks.astype(np.int64)
    if ks.ndim != 1:
        raise ValueError(f"iterates must be a 1-D array; got shape {ks.shape}.")
    limit = min(n, grid.last)
    if np.any(ks > limit):
        raise ValueError(f"iterates must be <= min(num_steps, last grid index of the law) = {limit}; got "
                         f"{int(ks.max())}.")
    return ks


def _release_iterates(grid: _Grid, n: int, release_iterates: Any) -> np.ndarray:
    ks = np.atleast_1d(np.asarray(release_iterates))
    _check.integer(minimum=1, release_iterates=ks)
    ks = ks.astype(np.int64)
    if ks.ndim != 1 or ks.size == 0:
        raise ValueError(f"release_iterates must be a non-empty 1-D array; got shape {ks.shape}.")
    if np.any(np.diff(ks) <= 0):
        raise ValueError(f"release_iterates must be strictly increasing (release times in order); got {ks.tolist()}.")
    limit = min(n, grid.last)
    if ks[-1] > limit:
        raise ValueError(f"release_iterates must be <= num_steps = {n} (t_J <= T) and within the law "
                         f"(last index {grid.last}); got {int(ks[-1])}.")
    return ks


def release_divergences(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, release_iterates: ArrayLike,
                        positions: ArrayLike, mode: str = "keep_last_block", direction: str = "max") -> PrivacyLoss:
    """D_α^{[J]} (Theorem 4.4, eq. (20)) of the release X_{t_1}, …, X_{t_J} for records at steps ``positions``.

    ``mode="keep_last_block"``: the exact divergence of the release, = that of (X_{t_q}, X_{t_r}) with k_q the last
    release ≤ ℓ and k_r the first > ℓ (Markov property; module docstring), labelled ``surrogate``.
    ``mode="suffix"``: the paper's suffix (t_r, …, t_J) only (= the last-iterate divergence at t_r), labelled
    ``lower_bound``. Positions ℓ ≥ k_J give 0. Either way a diffusion approximation on a data-dependent set of pairs,
    not a worst-case DP guarantee.

    Returns:
        :class:`PrivacyLoss` with ``value`` (L, P).
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(RELEASE_MODES, mode=mode)
    _check.one_of(DIRECTIONS, direction=direction)
    grid = _grid(law)
    ks = _release_iterates(grid, grid.last, release_iterates)
    ells = np.atleast_1d(np.asarray(positions))
    _check.integer(minimum=0, positions=ells)
    ells = ells.astype(np.int64)
    fwd, bwd = _release_batch(grid, _pair_data(law, pairs), alpha, ks, ells, mode)
    label = Guarantee.LOWER_BOUND if mode == "suffix" else Guarantee.SURROGATE
    return PrivacyLoss(value=_combine(fwd, bwd, direction), guarantee=label, quantity="renyi_divergence",
                       source=REFERENCE + f", Theorem 4.4 eq. (20), mode={mode}; " + _SURROGATE_NOTE)


def _release_batch(grid: _Grid, data: _PairData, alpha: float, ks: np.ndarray, ells: np.ndarray,
                   mode: str) -> tuple[np.ndarray, np.ndarray]:
    npairs = data.b1.size
    fwd, bwd = np.zeros((ells.size, npairs)), np.zeros((ells.size, npairs))
    live = ells < ks[-1]
    if not np.any(live):
        return fwd, bwd
    ell = ells[live]
    first_after = np.searchsorted(ks, ell, side="right")  # r: k_r > ℓ
    k_idx = ks[first_after]
    if mode == "keep_last_block":
        q_idx = np.where(first_after > 0, ks[np.maximum(first_after - 1, 0)], -1).astype(np.int64)
    else:
        q_idx = np.full(ell.size, -1, dtype=np.int64)
    var_a, beta = _pair_tables(grid, data, ell)
    f, b = _divergence_batch(grid, data, alpha, k_idx, ell, q_idx, var_a, beta)
    fwd[live], bwd[live] = f, b
    return fwd, bwd


def rdp_epsilon_releases(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, num_steps: int,
                         release_iterates: ArrayLike, mode: str = "keep_last_block") -> PrivacyLoss:
    """RDP of releasing the iterates k_1 < … < k_J (Theorem 4.4, eq. (21) with its missing "+" restored).

    (1/(α−1)) [logsumexp({log(n − k_J)} ∪ {(α−1) max_θ D_α^{[J]}(ℓ, θ) : ℓ < k_J}) − log n], both orders.
    ``mode="keep_last_block"`` (default) uses the exact law of the release and is labelled ``surrogate``;
    ``mode="suffix"`` is the paper's reading, at most the true value, labelled ``lower_bound`` (never a guarantee).
    Surrogate: a diffusion approximation on a data-dependent set of pairs, not a worst-case DP guarantee.

    Raises:
        ValueError: release times not strictly increasing, or beyond num_steps (t_J > T) or the law.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(RELEASE_MODES, mode=mode)
    grid = _grid(law)
    n = _num_steps(grid, num_steps)
    ks = _release_iterates(grid, n, release_iterates)
    ells = np.arange(ks[-1], dtype=np.int64)
    fwd, bwd = _release_batch(grid, _pair_data(law, pairs), alpha, ks, ells, mode)
    value = _mixture(alpha, np.maximum(fwd, bwd).max(axis=1), n, int(ks[-1]))
    label = Guarantee.LOWER_BOUND if mode == "suffix" else Guarantee.SURROGATE
    return PrivacyLoss(value=value, guarantee=label, quantity="rdp_epsilon",
                       source=REFERENCE + f", Theorem 4.4 eq. (21), mode={mode}; " + _SURROGATE_NOTE)


# ----------------------------------------------------------------------------------------------------------------
# Average of the releases (Theorem 4.5)
# ----------------------------------------------------------------------------------------------------------------


def _average_moments(grid: _Grid, ks: np.ndarray, ell: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-group M_ff, M_fk, M_kk (L, m) of the averaged release X̄ = (1/J)Σ_r X_{t_r} for records at steps ``ell``.

    With φ_r = Φ(t_r, s) (post blocks k_r > ℓ) and ψ_p = Φ(s, t_p) (pre blocks): f̄ = (h/J)Σ_post φ_r,
    k̄ = −(1/J)[Σ_pre V(t_p)ψ_p + cV(s)Σ_post φ_r], and the common variance K̄ = (1/J²)Σ_{r,r'} Cov(X⁰_{t_r}, X⁰_{t_r'})
    with Cov = Φ(t_r', t_r)V(t_r) (pre, r ≤ r'), φ_r' c ψ_p V(t_p) (post r', pre p), Φ(t_r', t_r)K_r (post, r ≤ r'),
    K_r = V(t_r) − φ_r²V(s) + φ_r²(c²V(s) + h²σ²).
    """
    j = ks.size
    gi, var, rate = grid.gamma_int, grid.variance, grid.rate
    h = grid.step[ell][:, None]
    c = grid.shrink[ell][:, None]
    vs = var[ell]
    post = ks[None, :] > ell[:, None]  # (L, J)
    f_sum = np.zeros_like(vs)
    k_pre = np.zeros_like(vs)
    cov_blocks = []
    for r in range(j):
        lag = (gi[ks[r]] - gi[ell])[:, None] * rate[None, :]  # Γ(t_r) − Γ(s), either sign
        is_post = post[:, r][:, None]
        phi = np.exp(-np.where(is_post, lag, 0.0))
        psi = np.exp(np.where(is_post, 0.0, lag))  # Φ(s, t_p) = e^{−a(Γ(s) − Γ(t_p))}
        vr = var[ks[r]][None, :]
        f_sum += np.where(is_post, phi, 0.0)
        k_pre += np.where(is_post, 0.0, vr * psi)
        own = np.where(is_post, np.maximum(vr - phi**2 * vs, 0.0) + phi**2 * (c * c * vs + h * h * grid.noise2),
                       vr)
        cov_blocks.append((phi, psi, own, is_post))
    total = np.zeros_like(vs)
    for r in range(j):
        phi_r, psi_r, own_r, post_r = cov_blocks[r]
        total += own_r
        for r2 in range(r + 1, j):
            phi_2, _, _, post_2 = cov_blocks[r2]
            link = np.exp(-(gi[ks[r2]] - gi[ks[r]]) * rate)[None, :]
            # r < r2: pre-pre and post-post propagate the earlier block; post-pre goes through the update
            cross = np.where(post_r, link * own_r, np.where(post_2, phi_2 * c * psi_r * var[ks[r]][None, :],
                                                              link * own_r))
            total += 2.0 * cross
    fbar = h * f_sum / j
    kbar = -(k_pre + c * vs * f_sum) / j
    kvar = total / j**2
    return fbar**2 / kvar, fbar * kbar / kvar, kbar**2 / kvar


def average_divergences(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, release_iterates: ArrayLike,
                        positions: ArrayLike, direction: str = "max") -> PrivacyLoss:
    """D_α^{avg} (Theorem 4.5, eq. (23), correct order) of the average of the releases, per position (L, P).

    Blocks released before the record's step are the unperturbed ones, with the C_i cross terms (Theorem 4.5 leaves
    them undefined).
    Labelled ``surrogate``: a diffusion approximation on a data-dependent set of pairs, not a worst-case DP guarantee.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(DIRECTIONS, direction=direction)
    grid = _grid(law)
    ks = _release_iterates(grid, grid.last, release_iterates)
    ells = np.atleast_1d(np.asarray(positions))
    _check.integer(minimum=0, positions=ells)
    fwd, bwd = _average_batch(grid, _pair_data(law, pairs), alpha, ks, ells.astype(np.int64))
    return PrivacyLoss(value=_combine(fwd, bwd, direction), guarantee=Guarantee.SURROGATE, quantity="renyi_divergence",
                       source=REFERENCE + ", Theorem 4.5 eq. (23); " + _SURROGATE_NOTE)


def _average_batch(grid: _Grid, data: _PairData, alpha: float, ks: np.ndarray,
                   ells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, kernel = _compiled()
    npairs = data.b1.size
    fwd, bwd = np.zeros((ells.size, npairs)), np.zeros((ells.size, npairs))
    live = np.flatnonzero(ells < ks[-1])
    if live.size == 0:
        return fwd, bwd
    var_a, beta = _pair_tables(grid, data, ells[live])
    m = grid.rate.size
    rows = max(1, _CHUNK_ELEMENTS // max(m * ks.size, 1))
    for lo in range(0, live.size, rows):
        sel = live[lo:lo + rows]
        ell = ells[sel]
        mff, mfc, mcc = _average_moments(grid, ks, ell)
        x = np.stack([mff @ data.sums, mfc @ data.sums, mcc @ data.sums])
        f, b = np.empty((sel.size, npairs)), np.empty((sel.size, npairs))
        kernel(x, np.ascontiguousarray(var_a[ell]), np.ascontiguousarray(beta[ell]), alpha, f, b)
        fwd[sel], bwd[sel] = f, b
    return fwd, bwd


def rdp_epsilon_average(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, num_steps: int,
                        release_iterates: ArrayLike) -> PrivacyLoss:
    """RDP of releasing the average of the iterates k_1 < … < k_J (Theorem 4.5, eq. (24)), labelled ``surrogate``.

    (1/(α−1)) [logsumexp({log(n − k_J)} ∪ {(α−1) max_θ D_α^{avg}(ℓ, θ) : ℓ < k_J}) − log n], both orders. A diffusion
    approximation on a data-dependent set of pairs, not a worst-case DP guarantee.
    """
    alpha = _renyi_order(renyi_order)
    grid = _grid(law)
    n = _num_steps(grid, num_steps)
    ks = _release_iterates(grid, n, release_iterates)
    ells = np.arange(ks[-1], dtype=np.int64)
    fwd, bwd = _average_batch(grid, _pair_data(law, pairs), alpha, ks, ells)
    value = _mixture(alpha, np.maximum(fwd, bwd).max(axis=1), n, int(ks[-1]))
    return PrivacyLoss(value=value, guarantee=Guarantee.SURROGATE, quantity="rdp_epsilon",
                       source=REFERENCE + ", Theorem 4.5 eq. (24); " + _SURROGATE_NOTE)
