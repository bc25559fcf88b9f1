"""The tightness instance of Chourasia, Ye, Shokri 2021, arXiv 2102.05855, Section 4: the exact divergence, Theorem 3's
lower bound and Corollary 2."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.privacy.labels import Guarantee, PrivacyLoss
from privdyn.privacy.langevin.common import (
    _SRC_C2,
    _SRC_EXACT,
    _SRC_T3,
    _arr,
    _check_count,
    _check_num_steps,
    _check_renyi_order,
    _loss,
    _one_minus_exp_neg,
)

__all__ = ["quadratic_corollary2_rdp", "quadratic_exact_rdp", "quadratic_lower_bound_rdp"]


# ----------------------------------------------------------------------------------------------------
# the quadratic (tightness) instance


def _check_quadratic(
    renyi_order: Any, num_steps: Any, step_size: Any, noise_scale: Any, sensitivity: Any, n: Any
) -> None:
    _check_renyi_order(renyi_order=renyi_order)
    _check_num_steps(num_steps)
    _check.finite(step_size=step_size)
    _check.in_range(0.0, 1.0, closed="neither", step_size=step_size)
    _check.positive(noise_scale=noise_scale, sensitivity=sensitivity)
    _check_count(1, n=n)


def quadratic_exact_rdp(
    renyi_order: ArrayLike,
    *,
    num_steps: ArrayLike,
    step_size: ArrayLike,
    noise_scale: ArrayLike,
    sensitivity: ArrayLike,
    n: ArrayLike,
    init_variance: ArrayLike = 0.0,
) -> PrivacyLoss:
    """The exact Renyi divergence of the last iterate on the paper's tightness instance (quadratic loss).

    Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), section 4: per-example loss ``0.5 * ||theta - x||**2`` on
    C = R^d (strong_convexity = smoothness = 1), so theta_{k+1} = (1 - eta) theta_k + eta * mean(D)
    + sqrt(2 eta) sigma Z_k and theta_K is Gaussian. With q = (1 - eta)**K, a start N(0, v0 * I) and
    neighbours whose means differ by sensitivity/n (the worst case; sensitivity = diameter of the data
    domain), each coordinate of theta_K has mean mean(D) * (1 - q) and variance
    s_K**2 = v0 q**2 + 2 sigma**2 (1 - q**2) / (2 - eta), equal on both datasets, so::

        R = renyi_order * (sensitivity/n)**2 * (1 - q)**2 / (2 s_K**2)

    which for v0 = 0 (theta_0 = 0) is
    renyi_order * sensitivity**2 (2 - eta) / (4 sigma**2 n**2) * (1 - q)/(1 + q). The paper does not print
    this formula; its variance (Section 4) carries a spurious ``/n**2``, which privdyn does not
    reproduce. At K = 1 with v0 = 0 it equals :func:`composition_rdp`.

    Formal guarantee: ``exact`` (the divergence itself) for this loss, this start and worst-case neighbours.

    Arguments not listed below are as in :func:`dynamics_rdp`.

    Args:
        step_size: in (0, 1).
        init_variance: v0 >= 0, the variance per coordinate of the data-independent Gaussian start
            (0 = the deterministic start theta_0 = 0 of Theorem 3; 2 * noise_scale**2 = Corollary 1's start).

    Returns:
        ``PrivacyLoss(value, "exact", quantity="rdp_epsilon")``.
    """
    _check_quadratic(renyi_order, num_steps, step_size, noise_scale, sensitivity, n)
    _check.non_negative(init_variance=init_variance)
    a, k, eta, sigma, s, nn, v0 = map(
        _arr, (renyi_order, num_steps, step_size, noise_scale, sensitivity, n, init_variance)
    )
    log_q = k * np.log1p(-eta)
    one_minus_q = -np.expm1(log_q)
    q = np.exp(log_q)
    deterministic = a * s**2 * (2.0 - eta) / (4.0 * sigma**2 * nn**2) * one_minus_q / (1.0 + q)
    variance = v0 * q**2 - 2.0 * sigma**2 * np.expm1(2.0 * log_q) / (2.0 - eta)
    with np.errstate(divide="ignore", invalid="ignore"):
        gaussian = a * (s / nn) ** 2 * one_minus_q**2 / (2.0 * variance)
    value = np.where(v0 > 0, np.where(one_minus_q > 0, gaussian, 0.0), deterministic)
    return _loss(value, Guarantee.EXACT, _SRC_EXACT)


def quadratic_lower_bound_rdp(
    renyi_order: ArrayLike, *, num_steps: ArrayLike, step_size: ArrayLike, noise_scale: ArrayLike,
    sensitivity: ArrayLike, n: ArrayLike
) -> PrivacyLoss:
    """Theorem 3 (eq. 17): a lower bound on the privacy loss of noisy GD.

    ``renyi_order * sensitivity**2 / (4 noise_scale**2 n**2) * (1 - exp(-step_size * num_steps))``: Chourasia,
    Ye, Shokri 2021 (arXiv 2102.05855), Theorem 3, attained on the quadratic instance of
    :func:`quadratic_exact_rdp` with theta_0 = 0 (which is always >= this value).

    Formal guarantee: none — ``lower_bound``: at most the true privacy loss of that instance; never use it to
    calibrate noise.

    Arguments not listed below are as in :func:`dynamics_rdp`.

    Args:
        step_size: in (0, 1).

    Returns:
        ``PrivacyLoss(value, "lower_bound", quantity="rdp_epsilon")``.
    """
    _check_quadratic(renyi_order, num_steps, step_size, noise_scale, sensitivity, n)
    a, k, eta, sigma, s, nn = map(_arr, (renyi_order, num_steps, step_size, noise_scale, sensitivity, n))
    value = a * s**2 / (4.0 * sigma**2 * nn**2) * _one_minus_exp_neg(eta * k)
    return _loss(value, Guarantee.LOWER_BOUND, _SRC_T3)


def quadratic_corollary2_rdp(
    renyi_order: ArrayLike, *, num_steps: ArrayLike, step_size: ArrayLike, noise_scale: ArrayLike,
    sensitivity: ArrayLike, n: ArrayLike
) -> PrivacyLoss:
    """Corollary 2 (eq. 18, corrected): the Theorem 2 bound for the quadratic loss.

    Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), Corollary 2::

        rdp_epsilon = renyi_order * sensitivity**2 / ((2 - step_size) * noise_scale**2 * n**2)
                      * (1 - exp(-(2 - step_size) * step_size * num_steps / 2))

    i.e. Theorem 2 with c = (2 - step_size) / (2 noise_scale**2). **privdyn differs from the printed paper**:
    the paper prints ``eta**2`` where ``n**2`` belongs (dimensional consistency and Theorem 2 give n**2).

    Formal guarantee: an upper bound (``bound``) for the per-example loss 0.5 * ||theta - x||**2 on R^d, any
    fixed data-independent start theta_0, replace-one neighbours, last iterate released.

    Arguments not listed below are as in :func:`dynamics_rdp`.

    Args:
        step_size: in (0, 1).

    Returns:
        ``PrivacyLoss(value, "bound", quantity="rdp_epsilon")``.
    """
    _check_quadratic(renyi_order, num_steps, step_size, noise_scale, sensitivity, n)
    a, k, eta, sigma, s, nn = map(_arr, (renyi_order, num_steps, step_size, noise_scale, sensitivity, n))
    value = a * s**2 / ((2.0 - eta) * sigma**2 * nn**2) * _one_minus_exp_neg((2.0 - eta) * eta * k / 2.0)
    return _loss(value, Guarantee.BOUND, _SRC_C2)
