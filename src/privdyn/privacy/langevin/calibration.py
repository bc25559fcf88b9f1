"""Noise calibration for the langevin accountant (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): RDP targets, (epsilon,
delta) targets, the composition baseline."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.privacy.conversions import epsilon_to_zcdp
from privdyn.privacy.labels import Guarantee, PrivacyLoss
from privdyn.privacy.langevin.common import (
    _SRC_BASE,
    _SRC_C1,
    _arr,
    _check_convexity,
    _check_count,
    _check_num_steps,
    _check_renyi_order,
    _check_step_below_inverse_smoothness,
    _loss,
    _one_minus_exp_neg,
    _show,
)

__all__ = ["composition_noise_scale_for_rdp", "noise_scale_for_dp", "noise_scale_for_rdp"]


# ----------------------------------------------------------------------------------------------------
# calibration


def _time_factor(num_steps: Any, step_size: Any, strong_convexity: Any) -> np.ndarray:
    """1 - exp(-lambda eta K / 2), or 1 for K = None (the asymptote)."""
    if num_steps is None:
        return np.asarray(1.0)
    _check_num_steps(num_steps, minimum=1.0)
    return _one_minus_exp_neg(_arr(strong_convexity) * _arr(step_size) * _arr(num_steps) / 2.0)


def noise_scale_for_rdp(
    renyi_order: ArrayLike,
    rdp_epsilon: ArrayLike,
    *,
    num_steps: ArrayLike | None = None,
    step_size: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    sensitivity: ArrayLike,
    n: ArrayLike,
) -> PrivacyLoss:
    """The smallest noise_scale for which Corollary 1 certifies (renyi_order, rdp_epsilon)-RDP.

    Inverts Corollary 1 of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855) in closed form (the exponent does not
    involve noise_scale)::

        noise_scale**2 = renyi_order * sensitivity**2 * (1 - exp(-strong_convexity step_size num_steps / 2))
                         / (strong_convexity * rdp_epsilon * n**2)

    ``num_steps=None`` means K -> infinity (the asymptote, a guarantee for every K); with sensitivity = 2L
    this is Theorem 4's noise_variance 4 renyi_order L**2 / (strong_convexity rdp_epsilon n**2).

    Arguments not listed below are as in :func:`dynamics_rdp`.

    Args:
        rdp_epsilon: the target RDP value > 0.
        num_steps: K >= 1, or None for K -> infinity.

    Shapes: every argument broadcasts.

    Returns:
        ``PrivacyLoss(noise_scale, "bound", quantity="noise_scale")``: the sigma (not sigma**2) to use; the
        guarantee label is that of the bound it was calibrated with (Corollary 1).
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check.positive(rdp_epsilon=rdp_epsilon)
    _check.positive(step_size=step_size, sensitivity=sensitivity)
    _check_convexity(strong_convexity, smoothness)
    _check_step_below_inverse_smoothness(step_size, smoothness)
    _check_count(1, n=n)
    factor = _time_factor(num_steps, step_size, strong_convexity)
    a, e, lam, s, nn = map(_arr, (renyi_order, rdp_epsilon, strong_convexity, sensitivity, n))
    with np.errstate(over="ignore", under="ignore"):
        sigma = np.sqrt(a * s**2 * factor / (lam * e * nn**2))
    _check.representable(sigma, "the noise scale", sensitivity=sensitivity, n=n)
    kind = "K -> infinity (asymptote)" if num_steps is None else "finite num_steps"
    return _loss(
        sigma,
        Guarantee.BOUND,
        f"{_SRC_C1}; calibrated by inverting Corollary 1, {kind}",
        quantity="noise_scale",
    )


def composition_noise_scale_for_rdp(
    renyi_order: ArrayLike, rdp_epsilon: ArrayLike, *, num_steps: ArrayLike, step_size: ArrayLike,
    sensitivity: ArrayLike, n: ArrayLike
) -> PrivacyLoss:
    """The smallest noise_scale for which the composition baseline certifies (renyi_order, rdp_epsilon)-RDP.

    Inverts :func:`composition_rdp` (Theorem 1 / the Figure 1 baseline of Chourasia, Ye, Shokri 2021,
    arXiv 2102.05855)::

        noise_scale**2 = renyi_order * sensitivity**2 * step_size * num_steps / (4 * n**2 * rdp_epsilon)

    The noise grows like sqrt(num_steps): there is no K -> infinity limit. This is the calibration a
    composition-based analysis (e.g. noisy SGD in the paper's Appendix F) would use; compare it with
    :func:`noise_scale_for_rdp`.

    Arguments not listed below are as in :func:`composition_rdp`.

    Args:
        rdp_epsilon: the target RDP value > 0.
        num_steps: K >= 1.

    Shapes: every argument broadcasts.

    Returns:
        ``PrivacyLoss(noise_scale, "bound", quantity="noise_scale")`` (sigma, not sigma**2).
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check.positive(rdp_epsilon=rdp_epsilon, step_size=step_size, sensitivity=sensitivity)
    _check_num_steps(num_steps, minimum=1.0)
    _check_count(1, n=n)
    a, e, k, eta, s, nn = map(_arr, (renyi_order, rdp_epsilon, num_steps, step_size, sensitivity, n))
    with np.errstate(over="ignore", under="ignore"):
        sigma = np.sqrt(a * s**2 * eta * k / (4.0 * nn**2 * e))
    _check.representable(sigma, "the noise scale", sensitivity=sensitivity, n=n)
    return _loss(
        sigma,
        Guarantee.BOUND,
        f"{_SRC_BASE}; calibrated by inverting the composition bound",
        quantity="noise_scale",
    )


def _paper_renyi_order(epsilon: np.ndarray, delta: np.ndarray) -> np.ndarray:
    return 1.0 + 2.0 * np.log(1.0 / delta) / epsilon


def _check_dp_target(epsilon: Any, delta: Any) -> None:
    _check.positive(epsilon=epsilon)
    _check.deltas(delta)  # arrays: δ broadcasts here


def _check_paper_recipe(epsilon: Any, delta: Any) -> None:
    e, dl = np.broadcast_arrays(_arr(epsilon), _arr(delta))
    limit = 2.0 * np.log(1.0 / dl)
    bad = ~(e <= limit)
    if np.any(bad):
        raise ValueError(
            f"epsilon must be <= 2*ln(1/delta) = {_show(limit[bad].flat[0])} for Theorem 4's recipe "
            f"(method='paper'); got epsilon={_show(e[bad].flat[0])} (delta={_show(dl[bad].flat[0])})."
        )


def noise_scale_for_dp(
    epsilon: ArrayLike,
    delta: ArrayLike,
    *,
    method: str = "paper",
    num_steps: ArrayLike | None = None,
    step_size: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    sensitivity: ArrayLike,
    n: ArrayLike,
) -> PrivacyLoss:
    """A noise_scale for which Corollary 1 certifies (epsilon, delta)-DP.

    ``method="paper"``: Theorem 4's recipe of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), generalised to
    any sensitivity and num_steps: renyi_order = 1 + 2 ln(1/delta)/epsilon and rdp_epsilon = epsilon/2, then
    :func:`noise_scale_for_rdp`; Mironov's conversion rdp_epsilon + ln(1/delta)/(renyi_order - 1) gives back
    epsilon. With sensitivity = 2L and num_steps=None this is exactly Theorem 4's
    noise_variance 8 L**2 (epsilon + 2 ln(1/delta)) / (strong_convexity epsilon**2 n**2). The recipe requires
    epsilon <= 2 ln(1/delta) (Theorem 4's condition), checked.

    ``method="optimal_order"``: Corollary 1 is linear in renyi_order, rdp_epsilon = renyi_order * rho, i.e.
    rho-zCDP; the largest rho meeting (epsilon, delta) at the best order is
    ``epsilon_to_zcdp(epsilon, delta=delta, method="bun_steinke")`` (Mironov 2017, Proposition 3, at the
    optimal order), and noise_scale**2 = sensitivity**2 (1 - exp(-strong_convexity step_size K/2))
    / (strong_convexity n**2 rho). Never noisier than "paper". Requires 0 < delta < 1, epsilon > 0.

    Arguments not listed below are as in :func:`dynamics_rdp`.

    Args:
        epsilon: target epsilon > 0.
        delta: target delta in (0, 1).
        method: ``"paper"`` or ``"optimal_order"``.
        num_steps: K >= 1, or None for K -> infinity (a guarantee for every K).

    Shapes: every numeric argument broadcasts.

    Returns:
        ``PrivacyLoss(noise_scale, "bound", quantity="noise_scale")`` (sigma, not sigma**2).

    Raises:
        ValueError: as :func:`noise_scale_for_rdp`, an unknown method, delta outside (0, 1), or (paper)
            epsilon > 2 ln(1/delta).
    """
    _check.one_of(("paper", "optimal_order"), method=method)
    _check_dp_target(epsilon, delta)
    _check.positive(step_size=step_size, sensitivity=sensitivity)
    _check_convexity(strong_convexity, smoothness)
    _check_step_below_inverse_smoothness(step_size, smoothness)
    _check_count(1, n=n)
    factor = _time_factor(num_steps, step_size, strong_convexity)
    e, dl, lam, s, nn = map(_arr, (epsilon, delta, strong_convexity, sensitivity, n))
    kind = "K -> infinity (asymptote)" if num_steps is None else "finite num_steps"
    if method == "paper":
        _check_paper_recipe(epsilon, delta)
        order = _paper_renyi_order(e, dl)
        with np.errstate(over="ignore", under="ignore"):
            sigma = np.sqrt(order * s**2 * factor / (lam * (e / 2.0) * nn**2))
        _check.representable(sigma, "the noise scale", sensitivity=sensitivity, n=n)
        how = (
            "Theorem 4's recipe: renyi_order = 1 + 2 ln(1/delta)/epsilon, rdp_epsilon = epsilon/2, "
            "Mironov's RDP -> DP conversion"
        )
    else:
        zcdp = _arr(epsilon_to_zcdp(e, delta=dl, method="bun_steinke"))
        with np.errstate(over="ignore", under="ignore"):
            sigma = np.sqrt(s**2 * factor / (lam * nn**2 * zcdp))
        _check.representable(sigma, "the noise scale", sensitivity=sensitivity, n=n)
        how = (
            "Corollary 1 as zCDP, epsilon_to_zcdp(method='bun_steinke') "
            "(Mironov's conversion at the best order)"
        )
    return _loss(
        sigma,
        Guarantee.BOUND,
        f"{_SRC_C1}; calibrated for (epsilon, delta)-DP by {how}, {kind}",
        quantity="noise_scale",
    )
