"""Last-iterate Renyi-DP dynamics of noisy gradient descent (Chourasia, Ye, Shokri 2021, arXiv 2102.05855).

Noisy GD (Algorithm 1 of the paper) runs ``theta_{k+1} = Pi_C(theta_k - step_size * grad L_D(theta_k)
+ sqrt(2 * step_size) * noise_scale * Z_k)`` and releases only the last iterate. This module implements the
paper's privacy bounds, its composition baseline, the exact privacy loss of its tightness instance, noise
calibration and the Theorem 4 utility recipe, all in privdyn's vocabulary (``docs/notation.md``):

==========================  =====  =======================================================================
privdyn name                paper  meaning
==========================  =====  =======================================================================
``renyi_order``             alpha  Renyi order (> 1)
``num_steps``               K      number of iterations; only theta_K is released
``step_size``               eta    step size; "time" after K steps is eta * K
``noise_scale``             sigma  the paper's sigma: the per-step noise std is sqrt(2 * eta) * sigma
``strong_convexity``        lamb.  strong-convexity constant of the per-example loss
``smoothness``              beta   smoothness constant (gradient Lipschitz constant)
``lipschitz``               L      Lipschitz constant of the loss (S_g <= 2L)
``sensitivity``             S_g    total gradient sensitivity (sup of the norm of the difference of the summed
                                   gradients over replace-one neighbours); the mean gradient moves by S_g / n
``n``, ``d``                n, d   dataset size, parameter dimension
``lsi_constant``            c      log-Sobolev constant of the tracing diffusions
==========================  =====  =======================================================================

Neighbouring datasets differ in one record (replace-one). Every privacy number is returned as a
:class:`~privdyn.privacy.labels.PrivacyLoss` whose ``source`` names the result and its assumptions.

Conventions (the same for every function):

* all numeric arguments broadcast against each other with NumPy rules; scalar inputs give a Python ``float``
  inside ``PrivacyLoss.value``, array inputs give an array of the broadcast shape;
* ``num_steps`` is a number K >= 0 of iterations; the algorithm runs an integer K, but a real K is accepted
  and evaluates the closed form at time ``step_size * K`` (used for the crossover and for smooth curves);
  ``num_steps = 0`` gives 0;
* bad input raises :class:`ValueError` naming the parameter, its value and the valid range.

Where privdyn deliberately differs from the printed paper (see also ``docs/langevin.md``):

* Corollary 2 (eq. 18) is implemented with ``n**2`` in the denominator; the paper prints ``eta**2``;
* the tightness instance uses the per-example loss ``0.5 * ||theta - x||**2``
  (strong_convexity = smoothness = 1) and the iterate variance without the paper's extra ``/n**2``;
* Corollary 1 is applied literally (exponent ``strong_convexity * step_size * K / 2``), not the
  ``(1 - exp(-eta * K))`` written in the text of section 4;
* Theorem 4's (epsilon, delta) number of steps is available both as printed and as the exact substitution.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import optimize, special

from privdyn import _check
from privdyn.privacy.conversions import epsilon_to_zcdp, rdp_to_epsilon
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = [
    "CROSSOVER_X",
    "Theorem4Parameters",
    "best_gamma_rdp",
    "composition_noise_scale_for_rdp",
    "composition_rdp",
    "crossover_num_steps",
    "dynamics_rdp",
    "dynamics_rdp_asymptote",
    "dynamics_rdp_increment",
    "dynamics_zcdp",
    "lemma6_excess_risk_bound",
    "lsi_constant_tracker",
    "lsi_rdp",
    "noise_scale_for_dp",
    "noise_scale_for_rdp",
    "quadratic_corollary2_rdp",
    "quadratic_exact_rdp",
    "quadratic_lower_bound_rdp",
    "steps_to_fraction",
    "theorem4_parameters",
    "tracked_lsi_rdp",
]

_PAPER = "Chourasia, Ye, Shokri 2021 (arXiv 2102.05855)"
_LAST_ITERATE = "replace-one neighbours, only the last iterate released"
_C1_ASSUMES = (
    "assumes a strong_convexity-strongly convex, smoothness-smooth per-example loss on a closed convex set, "
    "step_size < 1/smoothness, data-independent start "
    "theta_0 ~ Pi_C(N(0, 2*noise_scale**2/strong_convexity * I)), "
    f"total gradient sensitivity S_g, {_LAST_ITERATE}"
)
_SRC_C1 = f"{_PAPER}, Corollary 1; {_C1_ASSUMES}"
_SRC_C1_INF = (
    f"{_PAPER}, Corollary 1, limit num_steps -> infinity (a bound for every num_steps); {_C1_ASSUMES}"
)
_SRC_INCREMENT = (
    f"{_PAPER}, Corollary 1, increment eps(k) - eps(k-1) of the bound "
    "(per-iteration contribution, section 3); "
    f"the increments sum to the Corollary 1 bound; {_C1_ASSUMES}"
)
_SRC_T2 = (
    f"{_PAPER}, Theorem 2 (eq. 16); assumes both coupled tracing diffusions are lsi_constant-LSI for all "
    f"0 <= t <= step_size*num_steps, total gradient sensitivity S_g, {_LAST_ITERATE}"
)
_SRC_BASE = (
    f"{_PAPER}, Theorem 1 with T = step_size*num_steps = the Figure 1 composition baseline (Appendix E): "
    "the Gaussian mechanism composed num_steps times; no convexity or smoothness assumption; "
    "total gradient sensitivity S_g, replace-one neighbours (holds even if every iterate is released)"
)
_QUADRATIC = (
    "per-example loss 0.5*||theta - x||**2 (strong_convexity = smoothness = 1), unconstrained, "
    "worst-case neighbours with ||mean(D) - mean(D')|| = sensitivity/n "
    "(sensitivity = diameter of the data domain)"
)
_SRC_EXACT = (
    f"{_PAPER}, Section 4 tightness instance, exact Gaussian Renyi divergence of theta_K "
    f"(derived from Theorem 3's construction; the paper's variance has a spurious /n**2); {_QUADRATIC}, "
    "start theta_0 ~ N(0, init_variance * I) (theta_0 = 0 for init_variance = 0)"
)
_SRC_T3 = (
    f"{_PAPER}, Theorem 3 (eq. 17), lower bound on the privacy loss of noisy GD (not a DP guarantee); "
    f"{_QUADRATIC}, start theta_0 = 0"
)
_SRC_C2 = (
    f"{_PAPER}, Corollary 2 (eq. 18) with n**2 in the denominator (the paper prints eta**2: a typo); "
    f"Theorem 2 with lsi_constant = (2 - step_size)/(2*noise_scale**2); {_QUADRATIC}, "
    f"fixed data-independent start theta_0, {_LAST_ITERATE}"
)
_SRC_TRACKED = (
    f"privdyn extension, not in the paper: {_PAPER}, Theorem 2 (eq. 16) with lsi_constant = min_k c_k "
    "from the LSI recursion 1/c_(k+1) = rho**2/c_k + 2*step_size*noise_scale**2, "
    "rho = max(|1 - step_size*strong_convexity|, |1 - step_size*smoothness|); assumes a "
    "strong_convexity-strongly convex, smoothness-smooth per-example loss on a closed convex set, a "
    f"data-independent start that is init_lsi_constant-LSI, total gradient sensitivity S_g, {_LAST_ITERATE}"
)
_SRC_GAMMA = (
    f"privdyn extension, not in the paper: {_PAPER}, Lemma 2 / PDE (15) solved with a free gamma in (0, 1) "
    "(the paper fixes gamma = 1/2), minimised over gamma for each num_steps; "
    f"the gamma -> 1 limit is the composition baseline; {_C1_ASSUMES}"
)

CROSSOVER_X: float = float(2.0 + special.lambertw(-2.0 * math.exp(-2.0), 0).real)
"""The positive root x* = 1.5936242600... of 1 - exp(-x) = x/2, in closed form x* = 2 + W_0(-2 exp(-2)).

Corollary 1 lies below the composition baseline exactly when strong_convexity * step_size * K / 2 > x*.
"""


# ----------------------------------------------------------------------------------------------------
# validation and shaping helpers


def _arr(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=float)


def _out(value: np.ndarray) -> float | np.ndarray:
    """A Python float for a 0-d result, else the array."""
    value = np.array(value, dtype=float)  # a copy: never a read-only broadcast view
    return float(value) if value.ndim == 0 else value


def _loss(value: np.ndarray, guarantee: Guarantee, source: str, quantity: str = "rdp_epsilon") -> PrivacyLoss:
    return PrivacyLoss(
        _out(value), guarantee, quantity=quantity, neighboring=NeighboringRelation.REPLACE_ONE, source=source
    )


def _show(value: Any) -> str:
    return repr(float(value))


def _check_renyi_order(**named: Any) -> None:
    _check.finite(**named)
    _check.in_range(1.0, math.inf, closed="neither", **named)


def _check_count(minimum: int, **named: Any) -> None:
    """Finite, integer-valued (an integral float is accepted) and >= minimum."""
    _check.finite(**named)
    for name, value in named.items():
        arr = _arr(value)
        bad = arr != np.round(arr)
        if np.any(bad):
            raise ValueError(f"{name} must be an integer >= {minimum}; got {name}={_show(arr[bad].flat[0])}.")
        bad = ~(arr >= minimum)
        if np.any(bad):
            raise ValueError(f"{name} must be an integer >= {minimum}; got {name}={_show(arr[bad].flat[0])}.")


def _check_num_steps(num_steps: Any, minimum: float = 0.0) -> None:
    _check.finite(num_steps=num_steps)
    arr = _arr(num_steps)
    bad = ~(arr >= minimum)
    if np.any(bad):
        raise ValueError(f"num_steps must be >= {minimum:g}; got num_steps={_show(arr[bad].flat[0])}.")


def _check_convexity(strong_convexity: Any, smoothness: Any) -> None:
    _check.positive(strong_convexity=strong_convexity, smoothness=smoothness)
    lam, beta = np.broadcast_arrays(_arr(strong_convexity), _arr(smoothness))
    bad = ~(lam <= beta)
    if np.any(bad):
        raise ValueError(
            f"strong_convexity must be <= smoothness = {_show(beta[bad].flat[0])}; "
            f"got strong_convexity={_show(lam[bad].flat[0])}."
        )


def _check_step_below_inverse_smoothness(step_size: Any, smoothness: Any) -> None:
    eta, beta = np.broadcast_arrays(_arr(step_size), _arr(smoothness))
    bad = ~(eta < 1.0 / beta)
    if np.any(bad):
        b = beta[bad].flat[0]
        raise ValueError(
            f"step_size must be < 1/smoothness = {_show(1.0 / b)}; got step_size={_show(eta[bad].flat[0])} "
            f"(smoothness={_show(b)})."
        )


def _check_cor1(
    *, step_size: Any, noise_scale: Any, strong_convexity: Any, smoothness: Any, sensitivity: Any, n: Any
) -> None:
    """The assumptions of Corollary 1 that can be checked from the constants."""
    _check.positive(step_size=step_size, noise_scale=noise_scale, sensitivity=sensitivity)
    _check_convexity(strong_convexity, smoothness)
    _check_step_below_inverse_smoothness(step_size, smoothness)
    _check_count(1, n=n)


def _one_minus_exp_neg(x: np.ndarray) -> np.ndarray:
    """1 - exp(-x), accurate for small x."""
    return -np.expm1(-x)


# ----------------------------------------------------------------------------------------------------
# Corollary 1, Theorem 2, Theorem 1 / composition


def dynamics_rdp(
    renyi_order: Any,
    *,
    num_steps: Any,
    step_size: Any,
    noise_scale: Any,
    strong_convexity: Any,
    smoothness: Any,
    sensitivity: Any,
    n: Any,
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
    value = a * s**2 / (lam * sigma**2 * nn**2) * _one_minus_exp_neg(lam * eta * k / 2.0)
    return _loss(value, Guarantee.BOUND, _SRC_C1)


def dynamics_rdp_asymptote(
    renyi_order: Any, *, noise_scale: Any, strong_convexity: Any, sensitivity: Any, n: Any
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
    return _loss(a * s**2 / (lam * sigma**2 * nn**2), Guarantee.BOUND, _SRC_C1_INF)


def dynamics_zcdp(
    *,
    num_steps: Any = None,
    step_size: Any,
    noise_scale: Any,
    strong_convexity: Any,
    smoothness: Any,
    sensitivity: Any,
    n: Any,
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
    value = s**2 / (lam * sigma**2 * nn**2) * factor
    kind = "K -> infinity (asymptote)" if num_steps is None else "finite num_steps"
    return _loss(
        value, Guarantee.BOUND, f"{_SRC_C1}; as zCDP (linear in renyi_order), {kind}", quantity="zcdp"
    )


def dynamics_rdp_increment(
    renyi_order: Any,
    *,
    step_index: Any,
    step_size: Any,
    noise_scale: Any,
    strong_convexity: Any,
    smoothness: Any,
    sensitivity: Any,
    n: Any,
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
    value = a * s**2 / (lam * sigma**2 * nn**2) * np.exp(-rate * (k - 1.0)) * _one_minus_exp_neg(rate)
    return _loss(value, Guarantee.BOUND, _SRC_INCREMENT, quantity="rdp_epsilon_increment")


def lsi_rdp(
    renyi_order: Any,
    *,
    lsi_constant: Any,
    num_steps: Any,
    step_size: Any,
    noise_scale: Any,
    sensitivity: Any,
    n: Any,
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
    value = a * s**2 / (2.0 * c * sigma**4 * nn**2) * _one_minus_exp_neg(sigma**2 * c * eta * k)
    return _loss(value, Guarantee.BOUND, _SRC_T2)


def composition_rdp(
    renyi_order: Any, *, num_steps: Any, step_size: Any, noise_scale: Any, sensitivity: Any, n: Any
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
    """
    _check_renyi_order(renyi_order=renyi_order)
    _check_num_steps(num_steps)
    _check.positive(step_size=step_size, noise_scale=noise_scale, sensitivity=sensitivity)
    _check_count(1, n=n)
    a, k, eta, sigma, s, nn = map(_arr, (renyi_order, num_steps, step_size, noise_scale, sensitivity, n))
    return _loss(a * s**2 * eta * k / (4.0 * nn**2 * sigma**2), Guarantee.BOUND, _SRC_BASE)


# ----------------------------------------------------------------------------------------------------
# time scales


def crossover_num_steps(*, step_size: Any, strong_convexity: Any) -> float | np.ndarray:
    """The real K at which Corollary 1 drops below the composition baseline.

    ``2 * CROSSOVER_X / (strong_convexity * step_size)``, derived from Corollary 1 and the Figure 1 baseline
    of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855): Corollary 1 < composition iff
    1 - exp(-x) < x/2 with x = strong_convexity * step_size * K / 2, i.e. x > :data:`CROSSOVER_X`.
    Independent of renyi_order, noise_scale, sensitivity and n. Figure 1 (step_size 0.02): 159.36, 79.68,
    39.84 for strong_convexity 1, 2, 4.

    Shapes: the arguments broadcast; a float for scalar inputs.
    """
    _check.positive(step_size=step_size, strong_convexity=strong_convexity)
    return _out(2.0 * CROSSOVER_X / (_arr(strong_convexity) * _arr(step_size)))


def steps_to_fraction(fraction: Any, *, step_size: Any, strong_convexity: Any) -> float | np.ndarray:
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
    return _out(-2.0 * np.log1p(-_arr(fraction)) / (_arr(strong_convexity) * _arr(step_size)))


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
    renyi_order: Any,
    *,
    num_steps: Any,
    step_size: Any,
    noise_scale: Any,
    sensitivity: Any,
    n: Any,
    init_variance: Any = 0.0,
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
    renyi_order: Any, *, num_steps: Any, step_size: Any, noise_scale: Any, sensitivity: Any, n: Any
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
    renyi_order: Any, *, num_steps: Any, step_size: Any, noise_scale: Any, sensitivity: Any, n: Any
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


# ----------------------------------------------------------------------------------------------------
# labelled extensions (not in the paper; never used for the figure)


def _contraction(step_size: np.ndarray, strong_convexity: np.ndarray, smoothness: np.ndarray) -> np.ndarray:
    """rho = max(|1 - eta*lambda|, |1 - eta*beta|): the Lipschitz constant of a gradient step."""
    return np.maximum(np.abs(1.0 - step_size * strong_convexity), np.abs(1.0 - step_size * smoothness))


def lsi_constant_tracker(
    *,
    num_steps: Any,
    step_size: Any,
    noise_scale: Any,
    strong_convexity: Any,
    smoothness: Any,
    init_lsi_constant: Any,
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
    renyi_order: Any,
    *,
    num_steps: Any,
    step_size: Any,
    noise_scale: Any,
    strong_convexity: Any,
    smoothness: Any,
    sensitivity: Any,
    n: Any,
    init_lsi_constant: Any = None,
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
    renyi_order: Any,
    *,
    num_steps: Any,
    step_size: Any,
    noise_scale: Any,
    strong_convexity: Any,
    smoothness: Any,
    sensitivity: Any,
    n: Any,
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


# ----------------------------------------------------------------------------------------------------
# calibration


def _time_factor(num_steps: Any, step_size: Any, strong_convexity: Any) -> np.ndarray:
    """1 - exp(-lambda eta K / 2), or 1 for K = None (the asymptote)."""
    if num_steps is None:
        return np.asarray(1.0)
    _check_num_steps(num_steps, minimum=1.0)
    return _one_minus_exp_neg(_arr(strong_convexity) * _arr(step_size) * _arr(num_steps) / 2.0)


def noise_scale_for_rdp(
    renyi_order: Any,
    rdp_epsilon: Any,
    *,
    num_steps: Any = None,
    step_size: Any,
    strong_convexity: Any,
    smoothness: Any,
    sensitivity: Any,
    n: Any,
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
    sigma = np.sqrt(a * s**2 * factor / (lam * e * nn**2))
    kind = "K -> infinity (asymptote)" if num_steps is None else "finite num_steps"
    return _loss(
        sigma,
        Guarantee.BOUND,
        f"{_SRC_C1}; calibrated by inverting Corollary 1, {kind}",
        quantity="noise_scale",
    )


def composition_noise_scale_for_rdp(
    renyi_order: Any, rdp_epsilon: Any, *, num_steps: Any, step_size: Any, sensitivity: Any, n: Any
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
    sigma = np.sqrt(a * s**2 * eta * k / (4.0 * nn**2 * e))
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
    _check.finite(delta=delta)
    _check.in_range(0.0, 1.0, closed="neither", delta=delta)


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
    epsilon: Any,
    delta: Any,
    *,
    method: str = "paper",
    num_steps: Any = None,
    step_size: Any,
    strong_convexity: Any,
    smoothness: Any,
    sensitivity: Any,
    n: Any,
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
        sigma = np.sqrt(order * s**2 * factor / (lam * (e / 2.0) * nn**2))
        how = (
            "Theorem 4's recipe: renyi_order = 1 + 2 ln(1/delta)/epsilon, rdp_epsilon = epsilon/2, "
            "Mironov's RDP -> DP conversion"
        )
    else:
        zcdp = _arr(epsilon_to_zcdp(e, delta=dl, method="bun_steinke"))
        sigma = np.sqrt(s**2 * factor / (lam * nn**2 * zcdp))
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


# ----------------------------------------------------------------------------------------------------
# utility: Lemma 6 and Theorem 4


def lemma6_excess_risk_bound(
    *,
    num_steps: Any,
    step_size: Any,
    noise_scale: Any,
    lipschitz: Any,
    strong_convexity: Any,
    smoothness: Any,
    d: Any,
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


def _as_int(value: np.ndarray) -> int | np.ndarray:
    value = np.asarray(value).astype(np.int64)
    return int(value) if value.ndim == 0 else value


def theorem4_parameters(
    *,
    lipschitz: Any,
    strong_convexity: Any,
    smoothness: Any,
    n: Any,
    d: Any,
    renyi_order: Any = None,
    rdp_epsilon: Any = None,
    epsilon: Any = None,
    delta: Any = None,
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
