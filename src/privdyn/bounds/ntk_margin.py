"""The NTK margin at initialization: the distance from 0 to the convex hull of the label-signed NTK features.

Assumption 3.3 of the kan paper (Wang, Schuchardt, Kalinin, et al., arXiv 2605.12648v1) asks for a unit vector u with
``y_i <grad f_{W_0}(x_i), u> >= gamma`` for every i. The best such gamma is the hard-margin SVM margin (through the
origin) of the features ``phi_i = y_i grad f_{W_0}(x_i)``:

    gamma* = max_{||u|| <= 1} min_i <phi_i, u> = min_{alpha in simplex} || sum_i alpha_i phi_i ||_2,

the distance from 0 to the convex hull of the phi_i (0 when the hull contains 0, i.e. when the data are not
NTK-separable). Both sides need only the Gram matrix ``K_ij = <grad f(x_i), grad f(x_j)>``, so the estimator works
with any model that supplies one (for the KAN's rank-1 gradients, :func:`gram_from_rank_one_factors`).

:func:`ntk_margin` solves ``min_alpha alpha' Q alpha`` over the simplex, ``Q = diag(y) K diag(y)``, with Wolfe's
minimum-norm-point algorithm (P. Wolfe 1976, "Finding the nearest point in a polytope", Math. Programming 11) written
in Gram form: a Frank-Wolfe step adds the vertex ``argmin_i (Q alpha)_i`` to the active set, and minor cycles
re-optimize exactly over the affine hull of the active set, dropping vertices whose weight would turn negative. It
terminates finitely in exact arithmetic (a fully-corrective Frank-Wolfe method). Every iterate gives a certified
bracket:

* ``upper = sqrt(alpha' Q alpha) >= gamma*`` (a point of the hull), and
* ``lower = max(0, min_i (Q alpha)_i / sqrt(alpha' Q alpha)) <= gamma*`` (the margin of the explicit unit direction
  ``u = sum_i alpha_i phi_i / ||sum_i alpha_i phi_i||``, feasible in the max form);

their gap closes at the optimum (KKT: ``(Q alpha*)_i >= alpha*' Q alpha*`` for every i).

Cost: one ``O(n s)`` matrix-vector product per major cycle and one ``(s + 1)``-dimensional linear solve per minor
cycle, with s the active-set size (at most ``rank(K) + 1`` in exact arithmetic); the Gram matrix itself costs
``O(n^2)`` memory.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check

__all__ = ["NtkMargin", "gram_from_features", "gram_from_rank_one_factors", "ntk_margin"]


@dataclasses.dataclass(frozen=True)
class NtkMargin:
    """The NTK margin gamma* with a certified bracket.

    Attributes:
        value: the certified margin: ``lower``, the margin the returned direction attains, so Assumption 3.3 holds
            with ``gamma = value``.
        lower, upper: ``lower <= gamma* <= upper`` (exact arithmetic; rounding adds about ``1e-16 max|K|``).
        gap: ``upper - lower``.
        weights: the simplex weights ``alpha`` (sparse): the direction is ``sum_i alpha_i y_i grad f(x_i)``.
        duality_gap: the Frank-Wolfe gap ``alpha' Q alpha - min_i (Q alpha)_i`` (``>= upper * gap``, with equality
            when ``lower > 0``).
        iterations: iterations used (major and minor cycles).
        converged: whether ``gap <= atol + rtol * upper`` was reached within ``max_iter``, or ``alpha' Q alpha``
            fell to the rounding level ``64 eps max_i Q_ii`` (then gamma* = 0 up to rounding, and ``upper`` is of
            order ``sqrt(eps max_i Q_ii)``: the square root magnifies the rounding of the Gram matrix).
    """

    value: float
    lower: float
    upper: float
    gap: float
    weights: np.ndarray
    duality_gap: float
    iterations: int
    converged: bool

    def __post_init__(self) -> None:
        _check.record(self)


def gram_from_features(features: ArrayLike) -> np.ndarray:
    """``K = F F'`` for per-example gradients stacked as the rows of ``features`` (shape ``(n, D)``).

    The Gram matrix of the NTK features of Assumption 3.3 (Wang et al., arXiv 2605.12648v1).
    """
    f = _check.real_array(features=features)
    if f.ndim != 2 or f.shape[0] == 0:
        raise ValueError(f"features must be a non-empty (n, D) array; got shape {f.shape}.")
    _check.finite(features=f)
    return f @ f.T


def gram_from_rank_one_factors(left: ArrayLike, right: ArrayLike, *, scale: float = 1.0) -> np.ndarray:
    """The Gram matrix of rank-1 per-example gradients ``g_i = scale * left_i ⊗ right_i``.

    ``<g_i, g_j> = scale^2 <left_i, left_j> <right_i, right_j>``; for the kan paper's KAN (Lemma B.6),
    ``left = a(x)`` (shape ``(n, m)``), ``right = h(x)`` (shape ``(n, d p)``) and ``scale = 1 / sqrt(m d)``. Costs
    ``O(n^2 (m + d p))`` and never forms the ``n x (m d p)`` gradients. Rank-1 form from the proof of Lemma B.6
    (Wang et al., arXiv 2605.12648v1).
    """
    a = _check.real_array(left=left)
    h = _check.real_array(right=right)
    if a.ndim != 2 or h.ndim != 2 or a.shape[0] != h.shape[0] or a.shape[0] == 0:
        raise ValueError(f"left and right must be non-empty 2-D arrays with the same number of rows; got shapes "
                         f"{a.shape} and {h.shape}.")
    _check.finite(left=a, right=h)
    _check.scalar(scale=scale)
    _check.finite(scale=scale)
    return float(scale) ** 2 * (a @ a.T) * (h @ h.T)


def _signed_gram(gram: Any, labels: Any) -> np.ndarray:
    k = _check.real_array(gram=gram)
    if k.ndim != 2 or k.shape[0] != k.shape[1] or k.shape[0] == 0:
        raise ValueError(f"gram must be a non-empty square (n, n) matrix; got shape {k.shape}.")
    _check.finite(gram=k)
    scale = max(float(np.max(np.abs(k))), np.finfo(float).tiny)
    asym = float(np.max(np.abs(k - k.T)))
    if asym > 1e-8 * scale:
        raise ValueError(f"gram must be symmetric; got max |K - K'| = {asym:.3g} (max |K| = {scale:.3g}).")
    diag = np.diag(k)
    if np.min(diag) < -1e-10 * scale:
        raise ValueError(f"gram must have a non-negative diagonal (it is a Gram matrix); got min diagonal "
                         f"{np.min(diag):.3g}.")
    k = 0.5 * (k + k.T)
    if labels is None:
        return k
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != k.shape[0]:
        raise ValueError(f"labels must be a 1-D array of length n = {k.shape[0]}; got shape {y.shape}.")
    yf = np.asarray(y, dtype=float)
    if not np.all((yf == 1.0) | (yf == -1.0)):
        bad = yf[~((yf == 1.0) | (yf == -1.0))][0]
        raise ValueError(f"labels must be -1 or +1; got a label {bad!r}.")
    return k * np.outer(yf, yf)


def _bracket(f: float, gmin: float) -> tuple[float, float]:
    upper = math.sqrt(max(f, 0.0))
    if upper == 0.0:
        return 0.0, 0.0
    # min_i g_i <= alpha' g = f, so lower <= upper up to rounding
    return min(max(0.0, gmin) / upper, upper), upper


def _affine_minimizer(q_active: np.ndarray) -> np.ndarray:
    """The weights (summing to 1) of the minimizer of ``mu' Q mu`` over the affine hull of the active vertices."""
    s = q_active.shape[0]
    kkt = np.zeros((s + 1, s + 1))
    kkt[:s, :s] = q_active
    kkt[:s, s] = 1.0
    kkt[s, :s] = 1.0
    rhs = np.zeros(s + 1)
    rhs[s] = 1.0
    try:
        mu = np.linalg.solve(kkt, rhs)[:s]
    except np.linalg.LinAlgError:  # affinely dependent active vertices (rounding): the least-squares solution
        mu = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:s]
    return mu


def ntk_margin(gram: ArrayLike, labels: ArrayLike | None = None, *, atol: float = 1e-12, rtol: float = 1e-9,
               max_iter: int = 100_000) -> NtkMargin:
    """gamma*: the distance from 0 to the convex hull of the label-signed NTK features, with a certified bracket.

    Wang et al. (arXiv 2605.12648v1), Assumption 3.3, in its min-norm (hard-margin SVM dual) form (see the module
    docstring for the algorithm and the certificate).

    Args:
        gram: ``(n, n)`` Gram matrix of the per-example gradients at W_0, ``K_ij = <grad f(x_i), grad f(x_j)>``.
        labels: the labels ``y_i in {-1, +1}``; ``None`` when ``gram`` is already label-signed
            (``y_i y_j K_ij``).
        atol, rtol: stop when ``upper - lower <= atol + rtol * upper``.
        max_iter: the most iterations (major and minor cycles together); an unconverged result still carries a
            valid bracket.

    Returns:
        :class:`NtkMargin`.

    Raises:
        ValueError: a non-square, non-symmetric or non-finite ``gram``, a negative diagonal, labels not in
            ``{-1, +1}`` or of the wrong length, or a bad tolerance.
    """
    q = _signed_gram(gram, labels)
    _check.scalar(atol=atol, rtol=rtol)
    _check.non_negative(atol=atol, rtol=rtol)
    _check.integer(minimum=1, max_iter=max_iter)
    n = q.shape[0]
    floor = 64.0 * np.finfo(float).eps * max(float(np.max(np.diag(q))), np.finfo(float).tiny)

    def done(lower: float, upper: float) -> bool:
        return bool(upper - lower <= atol + rtol * upper or upper * upper <= floor)

    active = [int(np.argmin(np.diag(q)))]
    lam = np.ones(1)
    best: tuple[float, float, np.ndarray] | None = None
    it = 0
    while True:
        g = q[:, active] @ lam
        f = float(lam @ g[active])
        lower, upper = _bracket(f, float(np.min(g)))
        if best is None or upper - lower < best[1] - best[0]:
            weights = np.zeros(n)
            weights[active] = lam
            best = (lower, upper, weights)
        if done(lower, upper) or it >= max_iter:
            break
        j = int(np.argmin(g))
        if j in active:  # no vertex improves on the current point beyond rounding
            break
        active.append(j)
        lam = np.append(lam, 0.0)
        stalled = False
        while it < max_iter:  # minor cycles: exact minimization over the active affine hull
            it += 1
            mu = _affine_minimizer(q[np.ix_(active, active)])
            if np.all(np.isfinite(mu)) and np.all(mu > 0.0):
                lam = mu / np.sum(mu)
                break
            bad = ~(mu > 0.0)
            ratios = np.full(mu.shape, np.inf)
            denom = lam - mu
            ok = bad & (denom > 0.0)
            ratios[ok] = lam[ok] / denom[ok]
            k = int(np.argmin(ratios))
            theta = float(ratios[k]) if np.isfinite(ratios[k]) else 0.0
            if theta == 0.0 and active[k] == j:  # the new vertex would leave at once: rounding stall
                stalled = True
            lam = (1.0 - theta) * lam + theta * mu
            lam[k] = 0.0
            keep = lam > 0.0
            active = [a for a, kp in zip(active, keep, strict=True) if kp]
            lam = lam[keep] / np.sum(lam[keep])
            if stalled:
                break
        if stalled:
            break
    # a fresh certificate for the returned weights
    weights = best[2]
    support = np.flatnonzero(weights > 0.0)
    g = q[:, support] @ weights[support]
    f = float(weights[support] @ g[support])
    lower, upper = _bracket(f, float(np.min(g)))
    return NtkMargin(value=lower, lower=lower, upper=upper, gap=upper - lower, weights=weights,
                     duality_gap=max(f - float(np.min(g)), 0.0), iterations=it, converged=done(lower, upper))
