"""The explicit constants and high-probability quantities of Wang, Schuchardt, Kalinin, et al., arXiv 2605.12648
(Appendix C.1), and Lemma C.11's bound."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.bounds.kan.common import (
    _ACTIVATION_BOUNDS,
    _EXPLICIT_FAILURE_PROB_MAX,
    _PAPER,
    ACTIVATIONS,
    Condition,
    KanConstants,
    RiskBound,
    _constants,
    _correlation,
    _int,
    _margin,
    _nonneg,
    _pos,
    _prob,
)
from privdyn.models.bspline import bspline_bounds, num_basis
from privdyn.privacy.labels import Guarantee

__all__ = [
    "activation_bounds", "batch_fluctuation_bound", "check_inputs", "coefficient_norm_thresholds",
    "comparator_loss_bound", "explicit_constant_conditions", "gradient_bound", "hessian_bound", "initial_output_bound",
    "initialization_event", "kan_constants", "lemma_c11_bound", "loss_range_bounds", "noise_norm_bounds",
    "potential_fluctuation_bound", "stability_constants", "weak_convexity_constant"
]


# ---------------------------------------------------------------------------------------------------------------
# constants of Assumption 3.2 and Lemmas B.5-B.7
# ---------------------------------------------------------------------------------------------------------------


def activation_bounds(activation: str) -> tuple[float, float, float]:
    """``(B_s, B'_s, B''_s)``: the suprema of ``|s|``, ``|s'|``, ``|s''|`` over the real line (Assumption 3.2).

    sigmoid: ``(1, 1/4, 1/(6 sqrt 3))`` (``s'' = s (1-s) (1-2s)`` peaks at ``s = 1/2 - 1/(2 sqrt 3)``); tanh:
    ``(1, 1, 4/(3 sqrt 3))`` (``|tanh''| = 2 |tanh| sech^2`` peaks at ``tanh = +-1/sqrt 3``).

    Source: Wang et al., arXiv 2605.12648v1, Assumption 3.2.
    """
    _check.one_of(ACTIVATIONS, activation=activation)
    return _ACTIVATION_BOUNDS[activation]


def kan_constants(*, activation: str = "sigmoid", grid_size: int, spline_order: int = 3,
                  interval: tuple[float, float] = (-1.0, 1.0)) -> KanConstants:
    """The constants of Assumption 3.2 and the explicit ``C_{sigma,b}`` for a basis and an activation.

    Wang et al. (arXiv 2605.12648v1), Assumption 3.2, eqs. (3)-(5), Lemmas B.6-B.7; ``C_{sigma,b}`` as in the module
    docstring. The interval ``I_b`` must contain ``[-1, 1]`` (the first layer evaluates the basis at coordinates of
    ``||x|| <= 1``) and the range of the activation (``(0, 1)`` for sigmoid, ``(-1, 1)`` for tanh), so it must contain
    ``[-1, 1]`` for both. The paper asks for cubic or higher-degree splines: ``spline_order >= 3``.

    Raises:
        ValueError: unknown activation, ``grid_size < 1``, ``spline_order < 3``, or an interval not containing
            ``[-1, 1]``.
    """
    _check.one_of(ACTIVATIONS, activation=activation)
    g = _int("grid_size", grid_size)
    k = _int("spline_order", spline_order, minimum=3)
    try:
        lo, hi = interval
    except (TypeError, ValueError):
        raise TypeError(f"interval must be a pair (lo, hi); got interval={interval!r}.") from None
    _check.finite(interval=np.asarray([lo, hi], dtype=float))
    if not (float(lo) <= -1.0 and float(hi) >= 1.0):
        raise ValueError(f"interval must contain [-1, 1] (the inputs' coordinates and the range of {activation}); "
                         f"got interval={interval!r}.")
    bb, bb1, bb2 = bspline_bounds(grid_size=g, spline_order=k, interval=(float(lo), float(hi)))
    bs, bs1, bs2 = activation_bounds(activation)
    grad = bs1 * bb * bb1
    hess = bb**2 * (bs2 * bb1 + bs1**2 * bb2)
    c = max(4.0 * grad, 4.0 * hess, 9.0 * grad**2 + 6.0 * hess)
    return KanConstants(activation=activation, grid_size=g, spline_order=k, interval=(float(lo), float(hi)),
                        num_basis=num_basis(grid_size=g, spline_order=k), basis_value_bound=bb,
                        basis_first_derivative_bound=bb1, basis_second_derivative_bound=bb2,
                        activation_value_bound=bs, activation_first_derivative_bound=bs1,
                        activation_second_derivative_bound=bs2, gradient_constant=grad, hessian_constant=hess,
                        c_sigma_b=c)


def explicit_constant_conditions(*, width: int, failure_prob: float) -> tuple[Condition, Condition]:
    """When the explicit ``C_{sigma,b}`` of :func:`kan_constants` is valid in Lemmas B.6-B.7.

    ``failure_prob <= 2**(-1/3)`` (gradient form: ``sqrt(log(2/delta)) <= 2 sqrt(log(1/delta))``) and
    ``width >= log(2 width / failure_prob)`` (the smoothness form; the explicit version of Lemma B.7's
    ``m ≳ log(m / delta)``).

    Source: Wang et al., arXiv 2605.12648v1, Lemmas B.6-B.7.
    """
    m = _int("width", width)
    dl = _prob("failure_prob", failure_prob)
    src = f"{_PAPER}, Lemmas B.6-B.7 with the explicit C_(sigma,b) of kan_constants"
    return (Condition.at_most("explicit_constant_failure_prob", dl, _EXPLICIT_FAILURE_PROB_MAX, src),
            Condition.at_most("explicit_constant_width", math.log(2.0 * m / dl), m, src))


def check_inputs(x: Any) -> float:
    """Check that the inputs lie in the unit ball, as every bound of the paper assumes (Section 1.1: ``||x|| <= 1``).

    Args:
        x: inputs, shape ``(n, d)`` (or ``(d,)`` for one input).

    Returns:
        ``max_i ||x_i||_2``.

    Raises:
        ValueError: non-finite inputs, or an input of norm > 1 (beyond rounding, ``1 + 1e-12``).

    Source: Wang et al., arXiv 2605.12648v1, Section 3 (the input domain of every bound).
    """
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"x must be a non-empty (n, d) array; got shape {np.shape(x)}.")
    _check.finite(x=arr)
    norms = np.linalg.norm(arr, axis=1)
    worst = int(np.argmax(norms))
    if norms[worst] > 1.0 + 1e-12:
        raise ValueError(f"x must lie in the unit ball (the bounds assume ||x|| <= 1); got ||x[{worst}]|| = "
                         f"{norms[worst]:.6g}.")
    return float(norms[worst])


def coefficient_norm_thresholds(*, num_basis: int, width: int, failure_prob: float) -> tuple[float, float]:
    """The thresholds of the event E_delta on the frozen second layer c ~ N(0, I_{mp}) (Lemma B.5, eq. (1)).

    Returns:
        ``(4 sqrt(p m) + 2 sqrt(log(2/delta)), 4 sqrt(p) + 2 sqrt(log(2 m/delta)))``: bounds on ``||c||_2`` and on
        ``max_j ||c_j||_2``; both hold together with probability ``>= 1 - failure_prob``.

    Source: Wang et al., arXiv 2605.12648v1, Lemma B.5.
    """
    p = _int("num_basis", num_basis)
    m = _int("width", width)
    dl = _prob("failure_prob", failure_prob)
    return (4.0 * math.sqrt(p * m) + 2.0 * math.sqrt(math.log(2.0 / dl)),
            4.0 * math.sqrt(p) + 2.0 * math.sqrt(math.log(2.0 * m / dl)))


def initialization_event(second_layer: ArrayLike, *, failure_prob: float) -> tuple[Condition, Condition]:
    """Whether a drawn second layer ``c`` (shape ``(width, num_basis)``) lies in E_delta (Lemma B.5, eq. (1)).

    Returns:
        the conditions ``second_layer_norm`` (``||c||_2 <=`` threshold) and ``second_layer_unit_norm``
        (``max_j ||c_j||_2 <=`` threshold).

    Source: Wang et al., arXiv 2605.12648v1, Lemma B.5.
    """
    c = _check.real_array(second_layer=second_layer)
    if c.ndim != 2 or c.size == 0:
        raise ValueError(f"second_layer must be a non-empty (width, num_basis) array; got shape {c.shape}.")
    _check.finite(second_layer=c)
    total, unit = coefficient_norm_thresholds(num_basis=c.shape[1], width=c.shape[0], failure_prob=failure_prob)
    src = f"{_PAPER}, Lemma B.5, eq. (1)"
    return (Condition.at_most("second_layer_norm", float(np.linalg.norm(c)), total, src),
            Condition.at_most("second_layer_unit_norm", float(np.max(np.linalg.norm(c, axis=1))), unit, src))


def gradient_bound(constants: KanConstants, *, width: int, failure_prob: float) -> float:
    """G_delta = B'_s B_b B'_b p (4 sqrt p + 2 sqrt(log(2/delta) / m)) (eq. (5), from eq. (3)).

    On E_delta it bounds ``||grad f_W(x)||_2`` and hence every per-example loss gradient, for every W and every
    ``||x|| <= 1``: a clip ``>= G_delta`` is never active.

    Source: Wang et al., arXiv 2605.12648v1, eqs. (3) and (5).
    """
    k = _constants(constants)
    m = _int("width", width)
    dl = _prob("failure_prob", failure_prob)
    p = k.num_basis
    return k.gradient_constant * p * (4.0 * math.sqrt(p) + 2.0 * math.sqrt(math.log(2.0 / dl) / m))


def hessian_bound(constants: KanConstants, *, width: int, failure_prob: float) -> float:
    """``B_b^2 (B''_s B'_b + B'_s^2 B''_b) p^{3/2} (4 sqrt p + 2 sqrt(log(2m/delta))) / sqrt m`` (eq. (4)).

    On E_delta it bounds the spectral norm of the Hessian of f_W(x) for every W and every ``||x|| <= 1``.

    Source: Wang et al., arXiv 2605.12648v1, eq. (4), Lemma B.6.
    """
    k = _constants(constants)
    m = _int("width", width)
    dl = _prob("failure_prob", failure_prob)
    p = k.num_basis
    return k.hessian_constant * p**1.5 * (4.0 * math.sqrt(p) + 2.0 * math.sqrt(math.log(2.0 * m / dl))) / math.sqrt(m)


def initial_output_bound(constants: KanConstants, *, n: int, failure_prob: float) -> float:
    """``B_b sqrt(2 p log(2 n / delta))``: bounds ``max_i |f_{W_0}(x_i)|`` over n inputs (eq. (15)).

    Eq. (15) of the proof of Lemma C.12 (eq. (27) of Wang et al. 2026): given W_0, ``f_{W_0}(x)`` is Gaussian in c
    with variance at most ``p B_b^2``, and the two-sided Gaussian tail with a union bound over the n inputs gives
    probability ``>= 1 - failure_prob``. (The paper states ``1 - delta / 2`` for this threshold; the union bound
    gives ``1 - delta``, which privdyn uses. Lemma C.17 writes ``log(4n / delta_f)`` for 2n inputs, consistently
    with ``1 - delta_f``.)

    Source: Wang et al., arXiv 2605.12648v1, eq. (15).
    """
    k = _constants(constants)
    nn = _int("n", n)
    dl = _prob("failure_prob", failure_prob)
    return k.basis_value_bound * math.sqrt(2.0 * k.num_basis * math.log(2.0 * nn / dl))


def comparator_loss_bound(constants: KanConstants, *, n: int, width: int, ntk_margin: float,
                          comparator_distance: float, failure_prob: float) -> float:
    """An explicit bound on ``L_S(W*)`` for the comparator ``W* = W_0 + tau u`` of Lemma C.12.

    The proof of Lemma C.12 (eq. (14)) gives, for every i,
    ``y_i f_{W*}(x_i) >= tau gamma - |f_{W_0}(x_i)| - (tau^2 / 2) ||hess f||``. privdyn keeps its constants: with
    probability ``>= 1 - failure_prob`` over c (half for the output event of eq. (15), half for E_{delta/2} and the
    explicit Hessian bound eq. (4)),
    ``y_i f_{W*}(x_i) >= z := tau gamma - B_b sqrt(2 p log(4 n / delta)) - (tau^2 / 2) H(m, delta / 2)``, hence
    ``L_S(W*) <= log(1 + exp(-z))`` (the loss is decreasing). ``u`` is the unit direction of Assumption 3.3 with
    margin ``gamma`` (e.g. the direction of :func:`privdyn.bounds.ntk_margin.ntk_margin`, whose ``value`` it
    attains); ``comparator_distance`` is ``tau = ||W* - W_0||``. The paper then takes ``tau ≍ (log T +
    sqrt(log(n/delta))) / gamma`` so that ``z ≳ log T`` and ``L_S(W*) <= 1/T``.

    Source: Wang et al., arXiv 2605.12648v1, Lemma C.12 and eq. (14).
    """
    k = _constants(constants)
    nn = _int("n", n)
    m = _int("width", width)
    gam = _margin(ntk_margin)
    tau = _nonneg("comparator_distance", comparator_distance)
    dl = _prob("failure_prob", failure_prob)
    out = initial_output_bound(k, n=nn, failure_prob=dl / 2.0)
    z = tau * gam - out - 0.5 * tau**2 * hessian_bound(k, width=m, failure_prob=dl / 2.0)
    return float(np.logaddexp(0.0, -z))


def loss_range_bounds(constants: KanConstants, *, n: int, width: int, projection_radius: float,
                      failure_prob: float, output_failure_prob: float) -> tuple[float, float]:
    """``(F, U)`` of Lemma C.17: on E_delta and the output event, ``|f_W(x)| <= F`` and ``l(y f_W(x)) <= U`` for
    every W in the projection ball and every input of S and of its independent copy.

    ``F = B_b sqrt(2 p log(4 n / delta_f)) + b_{delta,m} R*`` and ``U = log(1 + e^F)`` (``<= log 2 + F``), with
    ``delta = failure_prob`` (the event E_delta of Lemma B.5) and ``delta_f = output_failure_prob``.

    Source: Wang et al., arXiv 2605.12648v1, Lemma C.17.
    """
    k = _constants(constants)
    nn = _int("n", n)
    m = _int("width", width)
    r_star = _pos("projection_radius", projection_radius)
    dl = _prob("failure_prob", failure_prob)
    df = _prob("output_failure_prob", output_failure_prob)
    _, b = stability_constants(k, width=m, failure_prob=dl)
    f_max = k.basis_value_bound * math.sqrt(2.0 * k.num_basis * math.log(4.0 * nn / df)) + b * r_star
    return f_max, float(np.logaddexp(0.0, f_max))


def weak_convexity_constant(constants: KanConstants, *, width: int, failure_prob: float) -> float:
    """nu = C p^{3/2} (sqrt(log(m/delta)) + sqrt p) / sqrt m: ``lambda_min(hess loss) >= -nu loss`` (Lemma B.7).

    Also the nu of Lemma C.2, whose width condition (7) is ``nu D^2 <= 1/2``.

    Source: Wang et al., arXiv 2605.12648v1, Lemmas B.7 and C.2.
    """
    k = _constants(constants)
    m = _int("width", width)
    dl = _prob("failure_prob", failure_prob)
    p = k.num_basis
    return k.c_sigma_b * p**1.5 * (math.sqrt(math.log(m / dl)) + math.sqrt(p)) / math.sqrt(m)


def stability_constants(constants: KanConstants, *, width: int, failure_prob: float) -> tuple[float, float]:
    """``(a_{delta,m}, b_{delta,m})`` of the stability recursion (Section C.2, before Lemma C.16).

    ``a = 2 C p^{3/2} (sqrt(log(m/delta)) + sqrt p) / sqrt m`` and ``b = C p (sqrt p + sqrt(log(1/delta) / m))``
    (b bounds ``||grad f_W(x)||``, so the loss is b-Lipschitz in W).

    Source: Wang et al., arXiv 2605.12648v1, Section C.2 and Lemma C.16.
    """
    k = _constants(constants)
    m = _int("width", width)
    dl = _prob("failure_prob", failure_prob)
    p = k.num_basis
    a = 2.0 * weak_convexity_constant(k, width=m, failure_prob=dl)
    b = k.c_sigma_b * p * (math.sqrt(p) + math.sqrt(math.log(1.0 / dl) / m))
    return a, b


# ---------------------------------------------------------------------------------------------------------------
# explicit high-probability bounds (Appendix C.1)
# ---------------------------------------------------------------------------------------------------------------


def noise_norm_bounds(*, noise_dim: int, num_steps: int, failure_prob: float) -> tuple[float, float]:
    """``(z, V_Z)`` of Lemma C.5: with probability ``>= 1 - delta_Z``, ``max_t ||Z_t|| <= z`` and
    ``sum_{t=1}^T ||Z_{t-1}||^2 <= V_Z`` (``Z_0 = 0``, ``Z_t ~ N(0, I_D)``, ``D = m d p``).

    ``z = sqrt D + sqrt(2 log(2T/delta_Z))``;
    ``V_Z = (T-1) D + 2 sqrt((T-1) D log(2/delta_Z)) + 2 log(2/delta_Z)`` (Laurent-Massart, Lemma C.4).

    Source: Wang et al., arXiv 2605.12648v1, Lemma C.5.
    """
    dim = _int("noise_dim", noise_dim)
    t = _int("num_steps", num_steps)
    dl = _prob("failure_prob", failure_prob)
    z = math.sqrt(dim) + math.sqrt(2.0 * math.log(2.0 * t / dl))
    k = (t - 1) * dim
    lg = math.log(2.0 / dl)
    return z, k + 2.0 * math.sqrt(k * lg) + 2.0 * lg


def batch_fluctuation_bound(*, gradient_bound: float, num_steps: int, batch_size: int, failure_prob: float) -> float:
    """``V_Delta = 2 T G^2 / B + 8 G^2 log(1/delta_Delta)`` (Lemma C.6): bounds the stopped sum of the squared
    mini-batch fluctuations ``||Delta_t||^2`` with probability ``>= 1 - delta_Delta``.

    Source: Wang et al., arXiv 2605.12648v1, Lemma C.6.
    """
    g = _nonneg("gradient_bound", gradient_bound)
    t = _int("num_steps", num_steps)
    b = _int("batch_size", batch_size)
    dl = _prob("failure_prob", failure_prob)
    return 2.0 * t * g**2 / b + 8.0 * g**2 * math.log(1.0 / dl)


def potential_fluctuation_bound(*, gradient_bound: float, shifted_radius: float, noise_sq_bound: float,
                                step_size: float, num_steps: int, batch_size: int, noise_multiplier: float,
                                noise_correlation: float, clip: float, failure_prob: float) -> float:
    """M_{delta_pot} of Lemma C.10, eqs. (12)-(13): bounds the stopped martingale terms of the shifted recursion.

    ``M = 4 sqrt 2 eta G Rbar sqrt(T log(6/d) / B) + 4 (1-lambda) eta c Rbar sqrt(T log(6/d))
    + 4 (1-lambda) eta^2 c G sqrt(V_Z log(6/d) / B)``, with ``c = clip * kappa / B`` and ``d = delta_pot``.

    Source: Wang et al., arXiv 2605.12648v1, Lemma C.10.
    """
    g = _nonneg("gradient_bound", gradient_bound)
    rbar = _pos("shifted_radius", shifted_radius)
    vz = _nonneg("noise_sq_bound", noise_sq_bound)
    eta = _pos("step_size", step_size)
    t = _int("num_steps", num_steps)
    b = _int("batch_size", batch_size)
    kappa = _nonneg("noise_multiplier", noise_multiplier)
    lam = _correlation(noise_correlation, open_left=False)
    c = _pos("clip", clip) * kappa / b
    lg = math.log(6.0 / _prob("failure_prob", failure_prob))
    return (4.0 * math.sqrt(2.0) * eta * g * rbar * math.sqrt(t * lg / b)
            + 4.0 * (1.0 - lam) * eta * c * rbar * math.sqrt(t * lg)
            + 4.0 * (1.0 - lam) * eta**2 * c * g * math.sqrt(vz * lg / b))


def lemma_c11_bound(constants: KanConstants, *, d: int, width: int, num_steps: int, batch_size: int,
                    step_size: float, noise_multiplier: float, noise_correlation: float, clip: float,
                    projection_radius: float, shifted_radius: float, comparator_distance: float,
                    comparator_loss: float, failure_prob: float) -> RiskBound:
    """The explicit optimization bound of Lemma C.11 (Lemma C.3 on the good event), every constant written out.

    Wang et al. (arXiv 2605.12648v1), Lemma C.11 with Lemmas C.3, C.5, C.6, C.10: for a comparator W* at distance
    ``comparator_distance`` from W_0 with empirical loss ``comparator_loss`` (fixed before the algorithm runs, e.g.
    the W_0 + tau u of Lemma C.12) and a shifted radius Rbar,

        (1/T) sum_{t=1}^T L_S(W_{t-1}) <= 8 L_S(W*) + 3 ||W_0 - W*||^2 / (eta T) + 3 M / (eta T) + 6 eta V_Delta / T
                                          + 3 ((1-lambda)^2 eta + 12 beta lambda^2 eta^2) c^2 V_Z / T,

    with ``c = clip * kappa / B``, ``beta = C p^3``, ``z, V_Z`` of Lemma C.5 (noise dimension ``D = m d p``),
    ``V_Delta`` of Lemma C.6 and ``M`` of Lemma C.10. ``failure_prob`` is split in four equal parts: the
    initialization event E_delta (Lemma B.5), and delta_Z, delta_Delta, delta_pot; the bound holds with probability
    ``>= 1 - failure_prob`` over c and the algorithm when every condition holds:

    * ``clipping_inactive``: ``clip >= G_delta`` (eq. (5));
    * ``step_size``: ``eta <= 1 / (12 beta)``;
    * ``localization_width``: ``nu (Rbar + eta c z)^2 <= 1/2`` (the explicit form of condition (7), Lemma C.2);
    * ``self_consistency``: condition (10), ``||W_0-W*||^2 + (8/3) eta T L_S(W*) + M + 2 eta^2 V_Delta
      + ((1-lambda)^2 eta^2 c^2 + 12 beta lambda^2 eta^3 c^2) V_Z <= Rbar^2`` (the proof of Theorem C.13 writes
      ``2 beta`` for ``12 beta``, a typo);
    * ``projection_radius``: ``R* >= Rbar + ||W* - W_0|| + eta c z``;
    * ``explicit_constant_failure_prob`` and ``explicit_constant_width``: the explicit ``C_{sigma,b}`` is valid.

    The paper states the lemma for ``0 < lambda < 1``; the shifted identity (Lemma C.1) and the proof hold verbatim at
    ``lambda = 0``, which is accepted. Label ``bound``.
    """
    k = _constants(constants)
    dd = _int("d", d)
    m = _int("width", width)
    t = _int("num_steps", num_steps)
    b = _int("batch_size", batch_size)
    eta = _pos("step_size", step_size)
    kappa = _nonneg("noise_multiplier", noise_multiplier)
    lam = _correlation(noise_correlation, open_left=False)
    clip_v = _pos("clip", clip)
    r_star = _pos("projection_radius", projection_radius)
    rbar = _pos("shifted_radius", shifted_radius)
    dist = _nonneg("comparator_distance", comparator_distance)
    loss_star = _nonneg("comparator_loss", comparator_loss)
    dl = _prob("failure_prob", failure_prob) / 4.0

    beta = k.smoothness
    g = gradient_bound(k, width=m, failure_prob=dl)
    c = clip_v * kappa / b
    z, vz = noise_norm_bounds(noise_dim=m * dd * k.num_basis, num_steps=t, failure_prob=dl)
    vd = batch_fluctuation_bound(gradient_bound=g, num_steps=t, batch_size=b, failure_prob=dl)
    big_m = potential_fluctuation_bound(gradient_bound=g, shifted_radius=rbar, noise_sq_bound=vz, step_size=eta,
                                        num_steps=t, batch_size=b, noise_multiplier=kappa, noise_correlation=lam,
                                        clip=clip_v, failure_prob=dl)
    nu = weak_convexity_constant(k, width=m, failure_prob=dl)
    reach = rbar + eta * c * z
    lhs10 = (dist**2 + 8.0 / 3.0 * eta * t * loss_star + big_m + 2.0 * eta**2 * vd
             + ((1.0 - lam) ** 2 * eta**2 * c**2 + 12.0 * beta * lam**2 * eta**3 * c**2) * vz)
    terms = {
        "comparator_loss": 8.0 * loss_star,
        "initial_distance": 3.0 * dist**2 / (eta * t),
        "potential_fluctuation": 3.0 * big_m / (eta * t),
        "batch_fluctuation": 6.0 * eta * vd / t,
        "noise": 3.0 * ((1.0 - lam) ** 2 * eta + 12.0 * beta * lam**2 * eta**2) * c**2 * vz / t,
    }
    value = math.fsum(terms.values())
    terms.update({"gradient_bound": g, "noise_norm_bound": z, "noise_sq_bound": vz, "batch_fluctuation_bound": vd,
                  "potential_fluctuation_bound": big_m, "weak_convexity": nu, "smoothness": beta,
                  "noise_scale": c})
    src = f"{_PAPER}, Lemma C.11"
    conditions = (
        Condition.at_most("clipping_inactive", g, clip_v, f"{_PAPER}, eq. (5): clip >= G_delta"),
        Condition.at_most("step_size", eta, k.max_step_size, f"{src}: eta <= 1/(12 beta)"),
        Condition.at_most("localization_width", nu * reach**2, 0.5, f"{_PAPER}, Lemma C.2, condition (7)"),
        Condition.at_most("self_consistency", lhs10, rbar**2, f"{_PAPER}, Lemma C.3, condition (10)"),
        Condition.at_most("projection_radius", rbar + dist + eta * c * z, r_star, src),
        *explicit_constant_conditions(width=m, failure_prob=dl),
    )
    return RiskBound(value=value, quantity="optimization_risk", conditions=conditions, failure_prob=4.0 * dl,
                     guarantee=Guarantee.BOUND, terms=terms, source=src)
