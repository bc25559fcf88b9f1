"""privdyn extensions of Chourasia, Ye, Shokri 2021, arXiv 2102.05855 (labelled so): the LSI-constant tracker and the
free-gamma solution of PDE (15)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from privdyn import _check
from privdyn.privacy.labels import Guarantee, PrivacyLoss
from privdyn.privacy.langevin.common import (
    _SRC_GAMMA,
    _SRC_TRACKED,
    _arr,
    _check_convexity,
    _check_cor1,
    _check_count,
    _check_num_steps,
    _check_renyi_order,
    _loss,
    _one_minus_exp_neg,
    _show,
)

__all__ = ["best_gamma_rdp", "lsi_constant_tracker", "tracked_lsi_rdp"]


# ----------------------------------------------------------------------------------------------------
# labelled extensions (not in the paper; never used for the figure)


def _contraction(step_size: np.ndarray, strong_convexity: np.ndarray, smoothness: np.ndarray) -> np.ndarray:
    """rho = max(|1 - eta*lambda|, |1 - eta*beta|): the Lipschitz constant of a gradient step."""
    return np.maximum(np.abs(1.0 - step_size * strong_convexity), np.abs(1.0 - step_size * smoothness))


def lsi_constant_tracker(
    *,
    num_steps: int,
    step_size: ArrayLike,
    noise_scale: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    init_lsi_constant: ArrayLike,
) -> np.ndarray:
    """LSI constants c_0, ..., c_K of the noisy-GD iterates (privdyn extension, not in the paper).

    Iterates 1/c_{k+1} = rho**2 / c_k + 2 step_size noise_scale**2 with
    rho = max(abs(1 - step_size*strong_convexity), abs(1 - step_size*smoothness)) (a privdyn extension), from three
    standard facts: a gradient step of a strongly convex, smooth function is rho-Lipschitz (so it maps c-LSI
    to c/rho**2-LSI), adding N(0, s**2 I) noise gives 1/c_new <= 1/c + s**2, and the projection onto a convex
    set is 1-Lipschitz. Within a step the tracing diffusions stay at least min(c_k, c_{k+1})-LSI, so
    Theorem 2 may use c = min_k c_k (:func:`tracked_lsi_rdp`). Not from Chourasia, Ye, Shokri 2021.

    Arguments not listed below are as in :func:`dynamics_rdp`; step_size > 0 is the only step-size condition.

    Args:
        num_steps: K, a scalar integer >= 0.
        init_lsi_constant: c_0 > 0 of the start; ``numpy.inf`` for a deterministic start. Corollary 1's start
            Pi_C(N(0, 2 noise_scale**2/strong_convexity I)) has c_0 = strong_convexity / (2 noise_scale**2).

    Shapes: the arguments other than num_steps broadcast to a shape B; the result has shape (K + 1,) + B.
    """
    _check.integer(minimum=0, num_steps=num_steps)
    if np.ndim(num_steps) != 0:
        raise ValueError(
            f"num_steps must be a scalar integer >= 0; got num_steps of shape {np.shape(num_steps)}."
        )
    _check.positive(step_size=step_size, noise_scale=noise_scale)
    _check_convexity(strong_convexity, smoothness)
    _check_init_lsi(init_lsi_constant)
    eta, sigma, lam, beta, c0 = np.broadcast_arrays(
        *map(_arr, (step_size, noise_scale, strong_convexity, smoothness, init_lsi_constant))
    )
    rho2 = _contraction(eta, lam, beta) ** 2
    inverse = np.empty((int(num_steps) + 1, *eta.shape))
    inverse[0] = 1.0 / c0
    for k in range(int(num_steps)):
        inverse[k + 1] = rho2 * inverse[k] + 2.0 * eta * sigma**2
    with np.errstate(divide="ignore"):
        return 1.0 / inverse


def _check_init_lsi(init_lsi_constant: Any) -> None:
    arr = _arr(init_lsi_constant)
    bad = np.isnan(arr) | ~(arr > 0)
    if np.any(bad):
        raise ValueError(
            "init_lsi_constant must be > 0 (numpy.inf for a deterministic start); "
            f"got init_lsi_constant={_show(arr[bad].flat[0])}."
        )


def tracked_lsi_rdp(
    renyi_order: ArrayLike,
    *,
    num_steps: int,
    step_size: ArrayLike,
    noise_scale: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    sensitivity: ArrayLike,
    n: ArrayLike,
    init_lsi_constant: ArrayLike | None = None,
) -> PrivacyLoss:
    """Theorem 2 with the tracked LSI constant c = min_{0<=k<=K} c_k (privdyn extension, not in the paper).

    Uses :func:`lsi_constant_tracker`'s recursion in closed form: 1/c_k moves monotonically from 1/c_0 towards
    its fixed point, so min_k c_k = min(c_0, c_K), with
    1/c_K = rho**(2K)/c_0 + 2 step_size noise_scale**2 (1 - rho**(2K)) / (1 - rho**2), then applies eq. (16)
    of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855). With Corollary 1's start (the default) it is never above
    :func:`dynamics_rdp`; for the quadratic loss (strong_convexity = smoothness = 1) with a deterministic
    start
    (``init_lsi_constant=numpy.inf``) it is never above Corollary 2 and tends to it as K grows.

    Formal guarantee: an upper bound (``bound``) if the LSI recursion holds (derived here, not in the paper) — a
    privdyn extension, labelled so in ``source``.

    Arguments not listed below are as in :func:`dynamics_rdp`; step_size > 0 is the only step-size condition.

    Args:
        init_lsi_constant: c_0 of the data-independent start; None (default) = Corollary 1's Gaussian start,
            c_0 = strong_convexity / (2 noise_scale**2); ``numpy.inf`` = a deterministic start.

    Returns:
        ``PrivacyLoss(value, "bound", quantity="rdp_epsilon")``.
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check_num_steps(num_steps)
    _check.positive(step_size=step_size, noise_scale=noise_scale, sensitivity=sensitivity)
    _check_convexity(strong_convexity, smoothness)
    _check_count(1, n=n)
    if init_lsi_constant is None:
        init_lsi_constant = _arr(strong_convexity) / (2.0 * _arr(noise_scale) ** 2)
    _check_init_lsi(init_lsi_constant)
    a, k, eta, sigma, lam, beta, s, nn, c0 = map(
        _arr,
        (
            renyi_order,
            num_steps,
            step_size,
            noise_scale,
            strong_convexity,
            smoothness,
            sensitivity,
            n,
            init_lsi_constant,
        ),
    )
    rho = _contraction(eta, lam, beta)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_rho2 = 2.0 * np.log(rho)
        power = np.exp(k * log_rho2)  # rho**(2K); 0 for rho = 0 and K > 0
        # sum_{i<K} rho**(2i): K for rho = 1, min(K, 1) for rho = 0
        ratio = np.expm1(k * log_rho2) / np.expm1(log_rho2)
        geometric = np.where(rho == 1.0, k, np.where(rho == 0.0, np.minimum(k, 1.0), ratio))
        inverse_ck = power / c0 + 2.0 * eta * sigma**2 * geometric
        inverse_c = np.maximum(1.0 / c0, inverse_ck)
        growth = _one_minus_exp_neg(sigma**2 * eta * k / inverse_c)
        value = a * s**2 * inverse_c / (2.0 * sigma**4 * nn**2) * growth
    value = np.where(k > 0, value, 0.0)
    return _loss(value, Guarantee.BOUND, _SRC_TRACKED)


def _best_gamma_factor(x: float) -> float:
    """inf over u = 1 - gamma in (0, 1) of (1 - exp(-u x)) / (u (1 - u)), including the u -> 0 limit x."""
    if x <= 2.0:
        # the derivative at u = 0 is 1 - x/2 >= 0 and the objective is unimodal: the infimum is the limit x
        return x

    def objective(u: float) -> float:
        return float(-np.expm1(-u * x) / (u * (1.0 - u)))

    grid = np.linspace(0.0, 1.0, 65)[1:-1]
    values = -np.expm1(-grid * x) / (grid * (1.0 - grid))
    i = int(np.argmin(values))
    lo, hi = (grid[i - 1] if i > 0 else 1e-12), (grid[i + 1] if i + 1 < grid.size else 1.0 - 1e-12)
    res = optimize.minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    return min(float(res.fun), float(values[i]), x)


def best_gamma_rdp(
    renyi_order: ArrayLike,
    *,
    num_steps: ArrayLike,
    step_size: ArrayLike,
    noise_scale: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    sensitivity: ArrayLike,
    n: ArrayLike,
) -> PrivacyLoss:
    """The general-gamma variant of Corollary 1, minimised over gamma (privdyn extension, not in the paper).

    Solving PDE (15) of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855) with a free gamma in (0, 1) instead of
    the paper's 1/2, and c = strong_convexity / (2 noise_scale**2) (Lemma 5), gives::

        R_gamma = renyi_order * sensitivity**2 / (4 gamma (1 - gamma) strong_convexity noise_scale**2 n**2)
                  * (1 - exp(-(1 - gamma) strong_convexity step_size num_steps))

    gamma = 1/2 is Corollary 1; gamma -> 1 is the composition baseline. Every gamma is a valid bound, so the
    minimum over gamma (computed per K by a bounded scalar minimisation; the objective is unimodal in gamma)
    is one too, and it is never above min(Corollary 1, composition). For strong_convexity * step_size * K <= 2
    the infimum is the gamma -> 1 limit, i.e. the composition baseline. The paper does not do this; keep it
    out of the figure-reproduction path.

    Formal guarantee: an upper bound (``bound``) under Corollary 1's assumptions and Lemma 2 for gamma in
    (0, 1) — a privdyn extension, labelled so in ``source``.

    Shapes: every argument broadcasts.

    Returns:
        ``PrivacyLoss(value, "bound", quantity="rdp_epsilon")``.
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check_num_steps(num_steps)
    _check_cor1(
        step_size=step_size,
        noise_scale=noise_scale,
        strong_convexity=strong_convexity,
        smoothness=smoothness,
        sensitivity=sensitivity,
        n=n,
    )
    a, k, eta, sigma, lam, s, nn = map(
        _arr, (renyi_order, num_steps, step_size, noise_scale, strong_convexity, sensitivity, n)
    )
    x = lam * eta * k
    unique, inverse = np.unique(x, return_inverse=True)
    factors = np.array([_best_gamma_factor(float(v)) for v in unique])[inverse].reshape(x.shape)
    value = a * s**2 / (4.0 * lam * sigma**2 * nn**2) * factors
    return _loss(value, Guarantee.BOUND, _SRC_GAMMA)
