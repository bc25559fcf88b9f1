"""Utility of noisy GD in Chourasia, Ye, Shokri 2021, arXiv 2102.05855: Lemma 6's excess-risk bound and Theorem 4's
hyper-parameters."""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.privacy.conversions import rdp_to_epsilon
from privdyn.privacy.labels import Guarantee, PrivacyLoss
from privdyn.privacy.langevin.calibration import _check_dp_target, _check_paper_recipe, _paper_renyi_order
from privdyn.privacy.langevin.common import (
    _C1_ASSUMES,
    _PAPER,
    _arr,
    _check_convexity,
    _check_count,
    _check_num_steps,
    _check_renyi_order,
    _loss,
    _out,
    _show,
)
from privdyn.privacy.langevin.dynamics import dynamics_rdp

__all__ = ["Theorem4Parameters", "lemma6_excess_risk_bound", "theorem4_parameters"]


# ----------------------------------------------------------------------------------------------------
# utility: Lemma 6 and Theorem 4


def lemma6_excess_risk_bound(
    *,
    num_steps: ArrayLike,
    step_size: ArrayLike,
    noise_scale: ArrayLike,
    lipschitz: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    d: ArrayLike,
) -> float | np.ndarray:
    """Lemma 6 (eq. 20): the expected excess empirical risk of noisy GD after num_steps steps.

    Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), Lemma 6::

        E[L_D(theta_K) - L_D(theta*)] <= 2 smoothness lipschitz**2 / strong_convexity**2
                                         * exp(-strong_convexity step_size num_steps)
                                         + 2 smoothness d noise_scale**2 / strong_convexity

    for an L-Lipschitz, strongly convex, smooth loss on a closed convex set, step_size <= strong_convexity /
    (2 smoothness**2), start Pi_C(N(0, 2 noise_scale**2/strong_convexity I)) and theta* in the relative
    interior of C. A bound on a risk, not a privacy number, so a plain float/array is returned.

    Args:
        num_steps: K >= 0.
        noise_scale: sigma >= 0 (0 = plain gradient descent).
        d: parameter dimension >= 1.

    Shapes: every argument broadcasts; a float for scalar inputs.
    """
    _check_num_steps(num_steps)
    _check.positive(step_size=step_size, lipschitz=lipschitz)
    _check.non_negative(noise_scale=noise_scale)
    _check_convexity(strong_convexity, smoothness)
    _check_count(1, d=d)
    k, eta, sigma, L, lam, beta, dd = np.broadcast_arrays(
        *map(_arr, (num_steps, step_size, noise_scale, lipschitz, strong_convexity, smoothness, d))
    )
    limit = lam / (2.0 * beta**2)
    bad = ~(eta <= limit)
    if np.any(bad):
        raise ValueError(
            f"step_size must be <= strong_convexity/(2*smoothness**2) = {_show(limit[bad].flat[0])} "
            "for Lemma 6; "
            f"got step_size={_show(eta[bad].flat[0])}."
        )
    return _out(2.0 * beta * L**2 / lam**2 * np.exp(-lam * eta * k) + 2.0 * beta * dd * sigma**2 / lam)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Theorem4Parameters:
    """The noisy-GD hyper-parameters of Theorem 4 and what they achieve.

    Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), Theorem 4. Array fields
    when :func:`theorem4_parameters` was given arrays.

    Attributes:
        form: ``"rdp"`` (given renyi_order, rdp_epsilon) or ``"dp"`` (given epsilon, delta).
        num_steps_formula: ``"printed"`` or ``"exact"`` (they differ only for the ``"dp"`` form).
        step_size: strong_convexity / (2 smoothness**2).
        noise_scale: sigma = sqrt(noise_variance).
        noise_variance: sigma**2 (the paper's "noise variance"; the per-step variance is
            2 step_size sigma**2).
        renyi_order: the order the guarantee is stated at (given, or 1 + 2 ln(1/delta)/epsilon).
        rdp_epsilon: the RDP level at renyi_order for every number of steps (given, or epsilon/2).
        num_steps_real: K* as a real number.
        num_steps: ceil(K*), the number of steps to run.
        rdp_epsilon_at_num_steps: Corollary 1 (sensitivity 2L) at num_steps; <= rdp_epsilon.
        excess_risk_bound: Lemma 6 at num_steps.
        gradient_complexity: n * num_steps per-example gradient evaluations.
        privacy: the guarantee achieved: (renyi_order, rdp_epsilon)-RDP (quantity ``"rdp_epsilon"``) for the
            ``"rdp"`` form; for the ``"dp"`` form the epsilon given by Mironov's conversion of that RDP level
            (quantity ``"epsilon"``; equal to the requested epsilon up to rounding). Both hold for every K.
    """

    form: str
    num_steps_formula: str
    step_size: float | np.ndarray
    noise_scale: float | np.ndarray
    noise_variance: float | np.ndarray
    renyi_order: float | np.ndarray
    rdp_epsilon: float | np.ndarray
    num_steps_real: float | np.ndarray
    num_steps: int | np.ndarray
    rdp_epsilon_at_num_steps: float | np.ndarray
    excess_risk_bound: float | np.ndarray
    gradient_complexity: int | np.ndarray
    privacy: PrivacyLoss

    def __post_init__(self) -> None:
        _check.record(self)


def _as_int(value: np.ndarray) -> int | np.ndarray:
    value = np.asarray(value).astype(np.int64)
    return int(value) if value.ndim == 0 else value


def theorem4_parameters(
    *,
    lipschitz: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    n: ArrayLike,
    d: ArrayLike,
    renyi_order: ArrayLike | None = None,
    rdp_epsilon: ArrayLike | None = None,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    num_steps_formula: str = "printed",
) -> Theorem4Parameters:
    """Theorem 4's recipe: step size, noise and number of steps with near-optimal utility under privacy.

    Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), Theorem 4, with sensitivity S_g = 2L and
    step_size = strong_convexity / (2 smoothness**2):

    * RDP form (given renyi_order alpha, rdp_epsilon eps'):
      noise_variance = 4 alpha L**2 / (lambda eps' n**2),
      K* = (2 beta**2 / lambda**2) ln(n**2 eps' / (alpha d));
    * (epsilon, delta) form: noise_variance = 8 L**2 (epsilon + 2 ln(1/delta)) / (lambda epsilon**2 n**2),
      which is the RDP form at alpha = 1 + 2 ln(1/delta)/epsilon, eps' = epsilon/2 (requires
      epsilon <= 2 ln(1/delta)); K* as printed, (2 beta**2/lambda**2) ln(n**2 epsilon**2 / (4 ln(1/delta) d))
      (``num_steps_formula="printed"``, the default, for reproduction), or from the exact substitution,
      (2 beta**2/lambda**2) ln(n**2 epsilon**2 / (2 (epsilon + 2 ln(1/delta)) d)) (``"exact"``). **The printed
      K* drops the epsilon term**; privacy is unaffected (it holds for every K), only the
      utility constant changes.

    num_steps = ceil(K*); the excess-risk bound is Lemma 6 at num_steps.

    Args:
        lipschitz, strong_convexity, smoothness: L, lambda <= beta, beta (all > 0).
        n, d: dataset size and dimension (integers >= 1).
        renyi_order, rdp_epsilon: the RDP form (both or neither).
        epsilon, delta: the (epsilon, delta) form (both or neither); exactly one form must be given.
        num_steps_formula: ``"printed"`` or ``"exact"``.

    Shapes: every numeric argument broadcasts; the fields have the broadcast shape.

    Raises:
        ValueError: no form or both forms given, an incomplete pair, invalid constants,
            epsilon > 2 ln(1/delta), or a log argument <= 1 (K* not positive: n is too small for the target).
    """
    _check.one_of(("printed", "exact"), num_steps_formula=num_steps_formula)
    rdp_given = renyi_order is not None or rdp_epsilon is not None
    dp_given = epsilon is not None or delta is not None
    if rdp_given == dp_given:
        raise ValueError(
            "theorem4_parameters needs exactly one of the pairs (renyi_order, rdp_epsilon) and "
            f"(epsilon, delta); got renyi_order={renyi_order!r}, rdp_epsilon={rdp_epsilon!r}, "
            f"epsilon={epsilon!r}, delta={delta!r}."
        )
    _check.positive(lipschitz=lipschitz)
    _check_convexity(strong_convexity, smoothness)
    _check_count(1, n=n, d=d)
    L, lam, beta, nn, dd = map(_arr, (lipschitz, strong_convexity, smoothness, n, d))
    if rdp_given:
        if renyi_order is None or rdp_epsilon is None:
            missing = "renyi_order" if renyi_order is None else "rdp_epsilon"
            raise ValueError(
                f"{missing} is required with the RDP form of theorem4_parameters; got {missing}=None."
            )
        _check_renyi_order(renyi_order=renyi_order)
        _check.positive(rdp_epsilon=rdp_epsilon)
        form = "rdp"
        order, eps_rdp = _arr(renyi_order), _arr(rdp_epsilon)
        variance = 4.0 * order * L**2 / (lam * eps_rdp * nn**2)
        log_arg = nn**2 * eps_rdp / (order * dd)
        log_text = "n**2 * rdp_epsilon / (renyi_order * d)"
    else:
        if epsilon is None or delta is None:
            missing = "epsilon" if epsilon is None else "delta"
            raise ValueError(
                f"{missing} is required with the (epsilon, delta) form of theorem4_parameters; "
                f"got {missing}=None."
            )
        _check_dp_target(epsilon, delta)
        _check_paper_recipe(epsilon, delta)
        form = "dp"
        e, dl = _arr(epsilon), _arr(delta)
        log_inv_delta = np.log(1.0 / dl)
        order, eps_rdp = _paper_renyi_order(e, dl), e / 2.0
        variance = 8.0 * L**2 * (e + 2.0 * log_inv_delta) / (lam * e**2 * nn**2)
        if num_steps_formula == "printed":
            log_arg = nn**2 * e**2 / (4.0 * log_inv_delta * dd)
            log_text = "n**2 * epsilon**2 / (4 ln(1/delta) * d) (printed)"
        else:
            log_arg = nn**2 * e**2 / (2.0 * (e + 2.0 * log_inv_delta) * dd)
            log_text = "n**2 * epsilon**2 / (2 (epsilon + 2 ln(1/delta)) * d) (exact)"
    bad = ~(log_arg > 1.0)
    if np.any(bad):
        raise ValueError(
            f"Theorem 4's number of steps K* is not positive: its log argument {log_text} must be > 1; got "
            f"{_show(np.broadcast_to(log_arg, bad.shape)[bad].flat[0])} (increase n or the privacy budget)."
        )
    step = lam / (2.0 * beta**2)
    k_real = 2.0 * beta**2 / lam**2 * np.log(log_arg)
    k_int = np.ceil(k_real)
    sigma = np.sqrt(variance)
    at_k = dynamics_rdp(
        order,
        num_steps=k_int,
        step_size=step,
        noise_scale=sigma,
        strong_convexity=lam,
        smoothness=beta,
        sensitivity=2.0 * L,
        n=nn,
    ).value
    risk = lemma6_excess_risk_bound(
        num_steps=k_int,
        step_size=step,
        noise_scale=sigma,
        lipschitz=L,
        strong_convexity=lam,
        smoothness=beta,
        d=dd,
    )
    shape = np.broadcast(order, eps_rdp, variance, k_real).shape
    source = (
        f"{_PAPER}, Theorem 4 ({form} form), sensitivity = 2*lipschitz, "
        f"step_size = strong_convexity/(2*smoothness**2); {_C1_ASSUMES}"
    )
    if form == "rdp":
        privacy = _loss(np.broadcast_to(eps_rdp, shape), Guarantee.BOUND, source)
    else:
        o_b, r_b, d_b = np.broadcast_arrays(order, eps_rdp, np.broadcast_to(dl, shape))
        eps_dp = np.array(
            [
                rdp_to_epsilon([float(o)], [float(r)], delta=float(x), method="mironov")[0]
                for o, r, x in zip(o_b.ravel(), r_b.ravel(), d_b.ravel(), strict=True)
            ]
        ).reshape(shape)
        how = "(epsilon, delta) by Mironov's conversion at renyi_order"
        privacy = _loss(eps_dp, Guarantee.BOUND, f"{source}; {how}", quantity="epsilon")
    return Theorem4Parameters(
        form=form,
        num_steps_formula=num_steps_formula,
        step_size=_out(np.broadcast_to(step, shape)),
        noise_scale=_out(np.broadcast_to(sigma, shape)),
        noise_variance=_out(np.broadcast_to(variance, shape)),
        renyi_order=_out(np.broadcast_to(order, shape)),
        rdp_epsilon=_out(np.broadcast_to(eps_rdp, shape)),
        num_steps_real=_out(np.broadcast_to(k_real, shape)),
        num_steps=_as_int(np.broadcast_to(k_int, shape)),
        rdp_epsilon_at_num_steps=_out(np.broadcast_to(at_k, shape)),
        excess_risk_bound=_out(np.broadcast_to(risk, shape)),
        gradient_complexity=_as_int(np.broadcast_to(nn * k_int, shape)),
        privacy=privacy,
    )
