"""Renyi DP of the last iterate of noisy GD (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): Corollary 1 and Theorem 2,
its asymptote and increments, the composition baseline (Theorem 1), the crossover."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.privacy.labels import Guarantee, PrivacyLoss
from privdyn.privacy.langevin.common import (
    _SRC_BASE,
    _SRC_C1,
    _SRC_C1_INF,
    _SRC_INCREMENT,
    _SRC_T2,
    CROSSOVER_X,
    _arr,
    _check_cor1,
    _check_count,
    _check_num_steps,
    _check_renyi_order,
    _loss,
    _one_minus_exp_neg,
    _out,
)

__all__ = [
    "composition_rdp", "crossover_num_steps", "dynamics_rdp", "dynamics_rdp_asymptote", "dynamics_rdp_increment",
    "dynamics_zcdp", "lsi_rdp", "steps_to_fraction"
]


# ----------------------------------------------------------------------------------------------------
# Corollary 1, Theorem 2, Theorem 1 / composition


def dynamics_rdp(
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
    """Corollary 1: the RDP of the last iterate of noisy GD on a strongly convex, smooth loss.

    Implements Corollary 1 of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855)::

        rdp_epsilon = renyi_order * sensitivity**2 / (strong_convexity * noise_scale**2 * n**2)
                      * (1 - exp(-strong_convexity * step_size * num_steps / 2))

    (Theorem 2 with the Lemma 5 constant c = strong_convexity / (2 * noise_scale**2)), evaluated with
    ``-expm1``. ``smoothness`` enters only through the condition step_size < 1/smoothness. The bound
    converges to :func:`dynamics_rdp_asymptote` at rate ``strong_convexity * step_size / 2`` per step and does
    not depend on d.
    privdyn applies the corollary literally: section 4 of the paper quotes it for the quadratic loss with exponent
    ``step_size * num_steps``, a slip (Corollary 1 has ``strong_convexity * step_size * num_steps / 2``). For small K
    the bound is up to twice the composition baseline; it drops below it after :func:`crossover_num_steps` steps. This
    is Corollary 1 alone, as the paper plots it, not min(Corollary 1, composition): both are bounds, so a caller may
    take the minimum, and :func:`best_gamma_rdp` (a labelled extension) is never above either.

    Formal guarantee: an upper bound (``bound``) on the replace-one RDP of the released last iterate, for a
    strong_convexity-strongly convex, smoothness-smooth per-example loss on a closed convex set, with
    step_size < 1/smoothness and the start Pi_C(N(0, 2*noise_scale**2/strong_convexity * I)).

    Args:
        renyi_order: alpha > 1.
        num_steps: K >= 0 (0 gives 0; a real K evaluates the formula at time step_size * K).
        step_size: eta, 0 < eta < 1/smoothness.
        noise_scale: sigma > 0 (per-step noise std sqrt(2 * eta) * sigma).
        strong_convexity: lambda > 0, <= smoothness.
        smoothness: beta > 0.
        sensitivity: total gradient sensitivity S_g > 0 (<= 2 * lipschitz).
        n: dataset size >= 1.

    Shapes: every argument broadcasts; the value has the broadcast shape (a float for scalar inputs).

    Returns:
        ``PrivacyLoss(value, "bound", quantity="rdp_epsilon", neighboring="replace_one")``.

    Raises:
        ValueError: a non-finite value, renyi_order <= 1, num_steps < 0, step_size >= 1/smoothness,
            strong_convexity > smoothness, noise_scale, sensitivity or step_size <= 0, or n < 1.
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
    with np.errstate(over="ignore", under="ignore"):
        value = a * s**2 / (lam * sigma**2 * nn**2) * _one_minus_exp_neg(lam * eta * k / 2.0)
    _check.representable(value, "the RDP", renyi_order=renyi_order, noise_scale=noise_scale,
                         strong_convexity=strong_convexity, sensitivity=sensitivity, n=n)
    return _loss(value, Guarantee.BOUND, _SRC_C1)


def dynamics_rdp_asymptote(
    renyi_order: ArrayLike, *, noise_scale: ArrayLike, strong_convexity: ArrayLike, sensitivity: ArrayLike, n: ArrayLike
) -> PrivacyLoss:
    """The K -> infinity limit of Corollary 1.

    ``renyi_order * sensitivity**2 / (strong_convexity * noise_scale**2 * n**2)``: Chourasia, Ye, Shokri 2021
    (arXiv 2102.05855), Corollary 1, its limit as the number of steps grows. Since Corollary 1 increases to this
    value, it is an RDP bound for *every* number of steps (Theorem 4 uses it that way), under Corollary 1's
    assumptions (a step_size < 1/smoothness is implied; neither enters the value).

    Shapes: every argument broadcasts.

    Returns:
        ``PrivacyLoss(value, "bound", quantity="rdp_epsilon")``.
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check.positive(noise_scale=noise_scale, strong_convexity=strong_convexity, sensitivity=sensitivity)
    _check_count(1, n=n)
    a, sigma, lam, s, nn = map(_arr, (renyi_order, noise_scale, strong_convexity, sensitivity, n))
    with np.errstate(over="ignore", under="ignore"):
        value = a * s**2 / (lam * sigma**2 * nn**2)
    _check.representable(value, "the RDP", renyi_order=renyi_order, noise_scale=noise_scale,
                         strong_convexity=strong_convexity, sensitivity=sensitivity, n=n)
    return _loss(value, Guarantee.BOUND, _SRC_C1_INF)


def dynamics_zcdp(
    *,
    num_steps: ArrayLike | None = None,
    step_size: ArrayLike,
    noise_scale: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    sensitivity: ArrayLike,
    n: ArrayLike,
) -> PrivacyLoss:
    """Corollary 1 as zCDP: the slope rho of the RDP curve rdp_epsilon(renyi_order) = renyi_order * rho.

    Corollary 1 of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855) is linear in the order, so it is exactly
    rho-zCDP (dp-accounting's convention) with::

        rho = sensitivity**2 / (strong_convexity * noise_scale**2 * n**2)
              * (1 - exp(-strong_convexity * step_size * num_steps / 2))

    Its (epsilon, delta) conversion at the best order (Mironov 2017, Proposition 3, at the optimal order) is
    ``privdyn.privacy.conversions.zcdp_to_epsilon(rho, delta=delta, method="bun_steinke")``; privdyn does not
    re-derive it here. ``num_steps=None`` gives the K -> infinity value (a guarantee for every K). Use this
    instead of evaluating :func:`dynamics_rdp` at renyi_order = 1, which is not a valid order.

    Formal guarantee: an upper bound (``bound``) under Corollary 1's assumptions (see :func:`dynamics_rdp`).

    Arguments not listed below are as in :func:`dynamics_rdp`.

    Args:
        num_steps: K >= 0, or None for K -> infinity.

    Shapes: every argument broadcasts.

    Returns:
        ``PrivacyLoss(value, "bound", quantity="zcdp")``.
    """
    _check_cor1(
        step_size=step_size,
        noise_scale=noise_scale,
        strong_convexity=strong_convexity,
        smoothness=smoothness,
        sensitivity=sensitivity,
        n=n,
    )
    if num_steps is None:
        factor = np.asarray(1.0)
    else:
        _check_num_steps(num_steps)
        factor = _one_minus_exp_neg(_arr(strong_convexity) * _arr(step_size) * _arr(num_steps) / 2.0)
    sigma, lam, s, nn = map(_arr, (noise_scale, strong_convexity, sensitivity, n))
    with np.errstate(over="ignore", under="ignore"):
        value = s**2 / (lam * sigma**2 * nn**2) * factor
    _check.representable(value, "the RDP", noise_scale=noise_scale, sensitivity=sensitivity, n=n)
    kind = "K -> infinity (asymptote)" if num_steps is None else "finite num_steps"
    return _loss(
        value, Guarantee.BOUND, f"{_SRC_C1}; as zCDP (linear in renyi_order), {kind}", quantity="zcdp"
    )


def dynamics_rdp_increment(
    renyi_order: ArrayLike,
    *,
    step_index: ArrayLike,
    step_size: ArrayLike,
    noise_scale: ArrayLike,
    strong_convexity: ArrayLike,
    smoothness: ArrayLike,
    sensitivity: ArrayLike,
    n: ArrayLike,
) -> PrivacyLoss:
    """The contribution of iteration k to the Corollary 1 bound: eps(k) - eps(k - 1), k >= 1.

    Derived from Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), Corollary 1 (the paper's goal 2 in
    Section 3)::

        Delta_k = asymptote * exp(-strong_convexity * step_size * (k - 1) / 2)
                  * (1 - exp(-strong_convexity * step_size / 2))

    The increments decay geometrically and sum to :func:`dynamics_rdp` at K. The label is ``bound`` because
    the partial sums are the Corollary 1 bound; an increment on its own is not the divergence of any one step.

    Arguments not listed below are as in :func:`dynamics_rdp`.

    Args:
        step_index: k >= 1, an integer (an integral float is accepted).

    Returns:
        ``PrivacyLoss(value, "bound", quantity="rdp_epsilon_increment")``.
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check_count(1, step_index=step_index)
    _check_cor1(
        step_size=step_size,
        noise_scale=noise_scale,
        strong_convexity=strong_convexity,
        smoothness=smoothness,
        sensitivity=sensitivity,
        n=n,
    )
    a, k, eta, sigma, lam, s, nn = map(
        _arr, (renyi_order, step_index, step_size, noise_scale, strong_convexity, sensitivity, n)
    )
    rate = lam * eta / 2.0
    with np.errstate(over="ignore", under="ignore"):
        value = a * s**2 / (lam * sigma**2 * nn**2) * np.exp(-rate * (k - 1.0)) * _one_minus_exp_neg(rate)
    _check.representable(value, "the RDP", noise_scale=noise_scale, sensitivity=sensitivity, n=n)
    return _loss(value, Guarantee.BOUND, _SRC_INCREMENT, quantity="rdp_epsilon_increment")


def lsi_rdp(
    renyi_order: ArrayLike,
    *,
    lsi_constant: ArrayLike,
    num_steps: ArrayLike,
    step_size: ArrayLike,
    noise_scale: ArrayLike,
    sensitivity: ArrayLike,
    n: ArrayLike,
) -> PrivacyLoss:
    """Theorem 2: the RDP of noisy GD when the tracing diffusions satisfy a log-Sobolev inequality.

    Implements eq. (16) of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855)::

        rdp_epsilon = renyi_order * sensitivity**2 / (2 * c * noise_scale**4 * n**2)
                      * (1 - exp(-noise_scale**2 * c * step_size * num_steps))

    with c = ``lsi_constant``. Corollary 1 is the case c = strong_convexity / (2 * noise_scale**2);
    Corollary 2 the case c = (2 - step_size) / (2 * noise_scale**2). The value decreases in c.

    Formal guarantee: an upper bound (``bound``), *provided* both coupled tracing diffusions are c-LSI for all
    0 <= t <= step_size * num_steps, for every pair of neighbouring datasets. privdyn cannot check that
    assumption; :func:`dynamics_rdp` and :func:`tracked_lsi_rdp` supply a c that is proved.

    Arguments not listed below are as in :func:`dynamics_rdp`; there is no smoothness condition here.

    Args:
        lsi_constant: c > 0.

    Returns:
        ``PrivacyLoss(value, "bound", quantity="rdp_epsilon")``.
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check_num_steps(num_steps)
    _check.positive(
        lsi_constant=lsi_constant, step_size=step_size, noise_scale=noise_scale, sensitivity=sensitivity
    )
    _check_count(1, n=n)
    a, c, k, eta, sigma, s, nn = map(
        _arr, (renyi_order, lsi_constant, num_steps, step_size, noise_scale, sensitivity, n)
    )
    with np.errstate(over="ignore", under="ignore"):
        value = a * s**2 / (2.0 * c * sigma**4 * nn**2) * _one_minus_exp_neg(sigma**2 * c * eta * k)
    _check.representable(value, "the RDP", noise_scale=noise_scale, sensitivity=sensitivity, n=n)
    return _loss(value, Guarantee.BOUND, _SRC_T2)


def composition_rdp(
    renyi_order: ArrayLike, *, num_steps: ArrayLike, step_size: ArrayLike, noise_scale: ArrayLike,
    sensitivity: ArrayLike, n: ArrayLike
) -> PrivacyLoss:
    """The composition baseline (Theorem 1).

    ``renyi_order * sensitivity**2 * step_size * num_steps / (4 * n**2 * noise_scale**2)``: Chourasia, Ye,
    Shokri 2021 (arXiv 2102.05855), Theorem 1 with S_v = sensitivity/n and T = step_size * num_steps,
    identical to the Figure 1 dashed lines (moments accountant, Appendix E). It is the Gaussian mechanism
    composed num_steps times: per step the update moves by at most step_size * sensitivity / n and carries
    noise of variance 2 * step_size * noise_scale**2, i.e. a noise multiplier (noise std on the summed
    gradient over the sensitivity) z = n * noise_scale * sqrt(2 / step_size) / sensitivity and a per-step RDP
    of renyi_order / (2 z**2).

    Formal guarantee: an upper bound (``bound``) with no convexity or smoothness assumption, valid even when
    all iterates are released.

    Shapes: every argument broadcasts.

    Returns:
        ``PrivacyLoss(value, "bound", quantity="rdp_epsilon")``.

    Raises:
        ValueError: an input outside its range, or inputs whose composed RDP exceeds the float range (it is finite
            mathematically, so privdyn does not return ``inf``).
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check_num_steps(num_steps)
    _check.positive(step_size=step_size, noise_scale=noise_scale, sensitivity=sensitivity)
    _check_count(1, n=n)
    a, k, eta, sigma, s, nn = map(_arr, (renyi_order, num_steps, step_size, noise_scale, sensitivity, n))
    with np.errstate(over="ignore", under="ignore"):
        value = a * s**2 * eta * k / (4.0 * nn**2 * sigma**2)
    _check.representable(value, "the composed RDP", renyi_order=renyi_order, num_steps=num_steps,
                         step_size=step_size, noise_scale=noise_scale, sensitivity=sensitivity, n=n)
    return _loss(value, Guarantee.BOUND, _SRC_BASE)


# ----------------------------------------------------------------------------------------------------
# time scales


def crossover_num_steps(*, step_size: ArrayLike, strong_convexity: ArrayLike) -> float | np.ndarray:
    """The real K at which Corollary 1 drops below the composition baseline.

    ``2 * CROSSOVER_X / (strong_convexity * step_size)``, derived from Corollary 1 and the Figure 1 baseline
    of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855): Corollary 1 < composition iff
    1 - exp(-x) < x/2 with x = strong_convexity * step_size * K / 2, i.e. x > :data:`CROSSOVER_X`.
    Independent of renyi_order, noise_scale, sensitivity and n. Figure 1 (step_size 0.02): 159.36, 79.68,
    39.84 for strong_convexity 1, 2, 4.

    Shapes: the arguments broadcast; a float for scalar inputs.
    """
    _check.positive(step_size=step_size, strong_convexity=strong_convexity)
    _check.broadcastable(step_size=step_size, strong_convexity=strong_convexity)
    return _out(_per_rate(2.0 * CROSSOVER_X, step_size=step_size, strong_convexity=strong_convexity))


def steps_to_fraction(fraction: ArrayLike, *, step_size: ArrayLike, strong_convexity: ArrayLike) -> float | np.ndarray:
    """The real K at which Corollary 1 reaches ``fraction`` of its asymptote.

    ``2 ln(1/(1 - fraction)) / (strong_convexity * step_size)``, derived from Corollary 1 of Chourasia, Ye,
    Shokri 2021 (arXiv 2102.05855). Figure 1 (step_size 0.02, fraction 0.95): 299.6,
    149.8, 74.9 for strong_convexity 1, 2, 4.

    Args:
        fraction: in [0, 1).

    Shapes: the arguments broadcast; a float for scalar inputs.
    """
    _check.finite(fraction=fraction)
    _check.in_range(0.0, 1.0, closed="left", fraction=fraction)
    _check.positive(step_size=step_size, strong_convexity=strong_convexity)
    _check.broadcastable(fraction=fraction, step_size=step_size, strong_convexity=strong_convexity)
    return _out(_per_rate(-2.0 * np.log1p(-_arr(fraction)), step_size=step_size, strong_convexity=strong_convexity))


def _per_rate(numerator: ArrayLike, *, step_size: ArrayLike, strong_convexity: ArrayLike) -> np.ndarray:
    """``numerator / (strong_convexity * step_size)`` (numerator finite, >= 0) without a spurious overflow: divided
    one factor at a time where the product is subnormal or 0; ``ValueError`` naming both where the quotient itself
    exceeds the largest float."""
    top, rate, eta = np.broadcast_arrays(_arr(numerator), _arr(strong_convexity), _arr(step_size))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        product = rate * eta
        steps = np.where(product >= np.finfo(float).tiny, top / product, top / rate / eta)
    if not np.all(np.isfinite(steps)):
        raise ValueError(f"strong_convexity * step_size is too small: the number of steps exceeds the largest float; "
                         f"got strong_convexity={strong_convexity!r}, step_size={step_size!r}.")
    return steps
