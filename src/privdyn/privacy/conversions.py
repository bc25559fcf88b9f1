"""Conversions between Renyi DP, zero-concentrated DP and (epsilon, delta)-DP.

Every conversion returns the guarantee side: an epsilon (or delta) that is a valid upper bound. Values are
rounded *up* by a bound on their floating-point evaluation error (a few units in the last place of the terms),
and calibrations (:func:`epsilon_to_zcdp`) are rounded *down*, so that rounding never produces a claim
stronger than the mathematics.

Conversions (``L = log(1/delta)``):

* ``"mironov"`` (Mironov 2017, arXiv:1702.07476v3, Proposition 3): an (alpha, r)-RDP mechanism is
  ``(r + L / (alpha - 1), delta)``-DP.
* ``"balle2020"`` (Balle et al. 2020, arXiv:1905.09982, Theorem 21; Canonne, Kamath & Steinke 2020,
  arXiv:2004.00010v4, Proposition 12): ``(r + log(1 - 1/alpha) - (log(delta) + log(alpha)) / (alpha - 1),
  delta)``-DP, always smaller than Mironov's at the same order. privdyn calls dp_accounting's
  ``rdp_privacy_accountant.compute_epsilon`` / ``compute_delta`` for it, which also apply the total-variation
  bound ``delta >= sqrt(1 - exp(-r))`` => epsilon = 0 (Bretagnolle-Huber, through ``KL <= D_alpha``).
  **dp_accounting skips the Balle bound at orders <= 1.01** (numerical caution in its source; it then returns
  epsilon = inf for that order unless the total-variation bound gives 0, and delta = sqrt(1 - exp(-r))).
  privdyn takes the minimum with the Mironov bound at those orders, so ``balle2020 <= mironov`` holds at every
  order and the result stays a valid bound. (dp_accounting 0.6's ``compute_delta`` also fails with a math
  domain error for ``0 < r < 2**-53``; privdyn evaluates that case itself, see ``_balle_delta``.)
* zCDP (Bun & Steinke 2016, arXiv:1605.02065v1): ``zcdp``-zCDP means RDP ``zcdp * alpha`` at every order
  alpha > 1 (dp_accounting's ``rho``; the dpgd paper's rho is ``sqrt(2 zcdp)``). ``"bun_steinke"`` is their
  Proposition 1.3, ``epsilon = zcdp + 2 sqrt(zcdp L)`` (the Mironov conversion minimized over real orders);
  ``"optimal"`` minimizes the ``balle2020`` conversion of ``alpha * zcdp`` over all real alpha > 1.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.optimize
from numpy.typing import ArrayLike

from privdyn import _check


def _dp_accounting_rdp() -> Any:
    """dp-accounting's RDP module, imported on first use (it pulls in scipy.signal: ~0.6 s at startup)."""
    from dp_accounting.rdp import rdp_privacy_accountant

    return rdp_privacy_accountant

__all__ = [
    "RDP_CONVERSION_METHODS",
    "ZCDP_CONVERSION_METHODS",
    "rdp_to_epsilon",
    "rdp_to_delta",
    "zcdp_to_epsilon",
    "epsilon_to_zcdp",
    "zcdp_for_epsilon",
    "zcdp_to_epsilon_dp_accounting",
    "optimal_renyi_order",
    "zcdp_to_rdp",
    "gaussian_zcdp",
]

RDP_CONVERSION_METHODS = ("balle2020", "mironov")
"""Methods of :func:`rdp_to_epsilon` and :func:`rdp_to_delta`."""

ZCDP_CONVERSION_METHODS = ("bun_steinke", "optimal")
"""Methods of :func:`zcdp_to_epsilon`, :func:`epsilon_to_zcdp` and :func:`optimal_renyi_order`."""

# dp_accounting (0.6) evaluates the Balle et al. bound only at orders above this value.
_DP_ACCOUNTING_MIN_ORDER = 1.01
# Rounding allowance: a bound on the evaluation error of a sum of a few floating-point terms, per unit of the
# sum of their magnitudes (16 units of 2**-53 covers every formula here with a wide margin).
_ROUNDING = 16.0 * 2.0**-53
# Below this RDP value dp_accounting's compute_delta (0.6) fails (see _balle_delta).
_TINY_RDP = 1e-15


def _round_up(value: float, scale: float) -> float:
    """``value`` plus the rounding allowance for terms of total magnitude ``scale`` (inf and 0 unchanged)."""
    if not math.isfinite(value) or value == 0.0:
        return value
    return value + _ROUNDING * scale


# ----------------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------------



def _rdp_curve(renyi_orders: Any, rdp_epsilons: Any) -> tuple[np.ndarray, np.ndarray]:
    _check.in_range(1.0, math.inf, closed="neither", renyi_orders=renyi_orders)
    _check.in_range(0.0, math.inf, closed="both", rdp_epsilons=rdp_epsilons)
    orders = np.atleast_1d(np.asarray(renyi_orders, dtype=float))
    rdp = np.atleast_1d(np.asarray(rdp_epsilons, dtype=float))
    if orders.ndim != 1:
        raise ValueError(f"renyi_orders must be a scalar or a 1-D array; got an array of shape {orders.shape}.")
    if rdp.ndim != 1:
        raise ValueError(f"rdp_epsilons must be a scalar or a 1-D array; got an array of shape {rdp.shape}.")
    if orders.size == 0:
        raise ValueError("renyi_orders must contain at least one order; got an empty array.")
    if rdp.shape != orders.shape:
        raise ValueError(
            f"rdp_epsilons must have the same length as renyi_orders ({orders.size}); "
            f"got rdp_epsilons of length {rdp.size}."
        )
    return orders, rdp


def _broadcast(**named: Any) -> tuple[bool, list[np.ndarray]]:
    """Broadcast the arrays; also say whether every input was a scalar (then outputs are floats)."""
    arrays = [np.asarray(v, dtype=float) for v in named.values()]
    try:
        out = np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(f"{k} {a.shape}" for k, a in zip(named, arrays, strict=True))
        raise ValueError(f"the arguments must broadcast to one shape; got shapes {shapes}.") from None
    return all(a.ndim == 0 for a in arrays), list(out)


def _output(values: np.ndarray, scalar: bool) -> float | np.ndarray:
    return float(values) if scalar else values


def _warn_if_edge(orders: np.ndarray, best: int, value: float, what: str) -> None:
    """Warn when a non-trivial optimum is at the edge of a grid (a wider grid could improve it)."""
    trivial = value <= 0.0 or not math.isfinite(value) or (what == "delta" and value >= 1.0)
    if orders.size < 2 or trivial:
        return
    order = orders[best]
    if order == orders.min() or order == orders.max():
        warnings.warn(
            f"the optimal renyi_order {order:g} is at the edge of renyi_orders [{orders.min():g}, "
            f"{orders.max():g}]; a wider grid of orders may give a smaller {what}.",
            stacklevel=3,
        )


# ----------------------------------------------------------------------------------------------------
# RDP -> (epsilon, delta)
# ----------------------------------------------------------------------------------------------------


def _mironov_epsilons(orders: np.ndarray, rdp: np.ndarray, delta: float) -> np.ndarray:
    log_inv_delta = -math.log(delta)
    with np.errstate(invalid="ignore"):
        values = rdp + log_inv_delta / (orders - 1.0)
    return np.array([_round_up(float(v), float(v)) for v in values])


def _balle_epsilon(order: float, rdp: float, delta: float) -> float:
    """dp_accounting's conversion at one order (Balle et al. 2020 Thm 21 with the total-variation bound)."""
    value, _ = _dp_accounting_rdp().compute_epsilon([order], [rdp], delta)
    value = float(value)
    if order <= _DP_ACCOUNTING_MIN_ORDER:
        # dp_accounting returns inf here unless the total-variation bound gives 0; Mironov's bound is valid.
        mironov = rdp - math.log(delta) / (order - 1.0)
        return min(value, _round_up(mironov, mironov))
    if value > 0.0 and math.isfinite(value):
        scale = rdp + abs(math.log1p(-1.0 / order)) + abs(math.log(delta * order)) / (order - 1.0)
        value = _round_up(value, scale)
    return value


def rdp_to_epsilon(
    renyi_orders: ArrayLike, rdp_epsilons: ArrayLike, *, delta: float, method: str = "balle2020"
) -> tuple[float, float]:
    """The smallest epsilon such that an RDP curve implies (epsilon, delta)-DP, and the order achieving it.

    ``"balle2020"`` (default): Balle et al. 2020 (arXiv:1905.09982) Theorem 21 / Canonne, Kamath & Steinke
    (arXiv:2004.00010v4) Proposition 12, through dp_accounting's ``compute_epsilon``, with the total-variation
    bound (epsilon = 0 when ``delta**2 > 1 - exp(-r)``). At orders <= 1.01 dp_accounting does not evaluate the
    Balle bound (it gives inf); privdyn uses Mironov's bound there. ``"mironov"``: Mironov 2017
    (arXiv:1702.07476v3) Proposition 3, ``r + log(1/delta) / (alpha - 1)``.

    A warning is issued when the optimum is at the smallest or largest of several orders.

    Shapes: renyi_orders (n,) or scalar; rdp_epsilons (n,) or scalar -> (float, float).

    Args:
        renyi_orders: orders alpha > 1.
        rdp_epsilons: the RDP values at those orders, >= 0; ``inf`` allowed.
        delta: the target delta, in (0, 1).
        method: ``"balle2020"`` or ``"mironov"``.

    Returns:
        ``(epsilon, renyi_order)``: the minimum over the given orders and the order attaining it (the first
        one on ties). If every value is infinite, ``(inf, renyi_orders[0])``.

    Formal guarantees:
        An upper bound (label ``bound``): the result is never below the exact value of the chosen conversion
        at the returned order (rounded up by its evaluation-error bound; the total-variation test is evaluated
        as in dp_accounting, exact up to rounding at its boundary).
    """
    orders, rdp = _rdp_curve(renyi_orders, rdp_epsilons)
    delta = _check.delta(delta)
    _check.one_of(RDP_CONVERSION_METHODS, method=method)
    if method == "mironov":
        values = _mironov_epsilons(orders, rdp, delta)
    else:
        values = np.array([_balle_epsilon(float(a), float(r), delta) for a, r in zip(orders, rdp, strict=True)])
    best = int(np.argmin(values))
    _warn_if_edge(orders, best, float(values[best]), "epsilon")
    return float(values[best]), float(orders[best])


def _balle_delta(order: float, rdp: float, epsilon: float) -> float:
    """dp_accounting's delta at one order (Canonne et al. Prop. 12 and the total-variation bound)."""
    # dp_accounting 0.6 evaluates log1p(-exp(-r)), a math domain error when 0 < r < 2**-53 (exp(-r) == 1).
    # There privdyn passes r = _TINY_RDP instead (both bounds increase with r, so this is conservative) and
    # evaluates the total-variation bound sqrt(1 - exp(-r)) at the true r itself.
    tiny = 0.0 < rdp < _TINY_RDP
    value, _ = _dp_accounting_rdp().compute_delta([order], [_TINY_RDP if tiny else rdp], epsilon)
    value = float(value)
    if 0.0 < value < 1.0:
        scale = (order - 1.0) * (rdp + epsilon + abs(math.log1p(-1.0 / order))) + math.log(order) + 2.0
        value = min(1.0, value * (1.0 + _ROUNDING * scale))
    if tiny:
        value = min(value, math.sqrt(-math.expm1(-rdp)) * (1.0 + _ROUNDING))
    if order <= _DP_ACCOUNTING_MIN_ORDER:
        # dp_accounting uses only the total-variation bound here; Mironov's bound is valid too.
        value = min(value, _mironov_delta(order, rdp, epsilon))
    return value


def _mironov_delta(order: float, rdp: float, epsilon: float) -> float:
    exponent = (order - 1.0) * (rdp - epsilon)
    if exponent >= 0.0:
        return 1.0
    scale = (order - 1.0) * (rdp + epsilon) + 2.0
    return min(1.0, math.exp(exponent) * (1.0 + _ROUNDING * scale))


def rdp_to_delta(
    renyi_orders: ArrayLike, rdp_epsilons: ArrayLike, *, epsilon: float, method: str = "balle2020"
) -> tuple[float, float]:
    """The smallest delta such that an RDP curve implies (epsilon, delta)-DP, and the order achieving it.

    The inverse direction of :func:`rdp_to_epsilon`. ``"balle2020"``: dp_accounting's ``compute_delta``
    (Canonne, Kamath & Steinke, arXiv:2004.00010v4, Proposition 12:
    ``delta = exp((alpha - 1)(r - epsilon + log(1 - 1/alpha)) - log(alpha))``, and the total-variation bound
    ``sqrt(1 - exp(-r))``); at orders <= 1.01 dp_accounting uses only the total-variation bound, and privdyn
    also takes Mironov's there. ``"mironov"`` (Mironov 2017, Proposition 3):
    ``exp((alpha - 1)(r - epsilon))``.

    Shapes: renyi_orders (n,) or scalar; rdp_epsilons (n,) or scalar -> (float, float).

    Args:
        renyi_orders: orders alpha > 1.
        rdp_epsilons: the RDP values at those orders, >= 0; ``inf`` allowed.
        epsilon: the target epsilon, finite and >= 0.
        method: ``"balle2020"`` or ``"mironov"``.

    Returns:
        ``(delta, renyi_order)``, delta in [0, 1] (1 when every RDP value is infinite).

    Formal guarantees:
        An upper bound (label ``bound``), rounded up by its evaluation-error bound.
    """
    orders, rdp = _rdp_curve(renyi_orders, rdp_epsilons)
    _check.scalar(epsilon=epsilon)
    _check.non_negative(epsilon=epsilon)
    epsilon = float(epsilon)
    _check.one_of(RDP_CONVERSION_METHODS, method=method)
    convert = _mironov_delta if method == "mironov" else _balle_delta
    values = np.array([convert(float(a), float(r), epsilon) for a, r in zip(orders, rdp, strict=True)])
    best = int(np.argmin(values))
    _warn_if_edge(orders, best, float(values[best]), "delta")
    return float(values[best]), float(orders[best])


# ----------------------------------------------------------------------------------------------------
# zCDP
# ----------------------------------------------------------------------------------------------------


def _log1p_exp(u: float) -> float:
    """``log(1 + exp(u))`` without overflow: ``log(alpha)`` for ``alpha - 1 = exp(u)``."""
    return u + math.log1p(math.exp(-u)) if u > 0.0 else math.log1p(math.exp(u))


def _optimal_log_order_gap(zcdp: float, log_inv_delta: float) -> float:
    """``u = log(alpha* - 1)``: the minimizer of the Balle et al. conversion of RDP ``alpha * zcdp``.

    With ``f(alpha) = alpha rho + log(1 - 1/alpha) + (L - log alpha) / (alpha - 1)``,
    ``f'(alpha) = rho - (L - log alpha) / (alpha - 1)^2``, increasing wherever it is <= 0, so the minimizer is
    the unique root of ``rho (alpha - 1)^2 + log(alpha) = L``. It lies between
    ``alpha - 1 = min(L/2, sqrt(L / (2 rho))) / 2`` (left side <= 3L/8) and Mironov's optimum
    ``alpha - 1 = sqrt(L / rho)`` (left side > L). Solved by Brent's method in ``u``.
    """
    log_rho = math.log(zcdp)
    log_l = math.log(log_inv_delta)

    def stationarity(u: float) -> float:
        return math.exp(log_rho + 2.0 * u) + _log1p_exp(u) - log_inv_delta

    u_low = math.log(0.5) + min(log_l - math.log(2.0), 0.5 * (log_l - math.log(2.0) - log_rho))
    u_high = 0.5 * (log_l - log_rho)
    while stationarity(u_high) <= 0.0:  # only by rounding, for astronomically large zcdp
        u_high += 1.0
    return float(scipy.optimize.brentq(stationarity, u_low, u_high, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def _optimal_epsilon_scalar(zcdp: float, delta: float) -> float:
    if zcdp == 0.0:
        return 0.0
    if delta**2 + math.expm1(-zcdp) > 0.0:
        # Total-variation bound (as in dp_accounting): KL <= zcdp, so TV <= sqrt(1 - exp(-zcdp)) < delta.
        return 0.0
    log_inv_delta = -math.log(delta)
    u = _optimal_log_order_gap(zcdp, log_inv_delta)
    log_order = _log1p_exp(u)
    inv_gap = math.exp(-u)
    # log(1 - 1/alpha) = u - log(alpha), without cancellation.
    log_ratio = -math.log1p(inv_gap) if u > 0.0 else u - math.log1p(math.exp(u))
    # alpha rho + log(1 - 1/alpha) + (L - log alpha) / (alpha - 1), with alpha - 1 = e^u.
    terms = (zcdp, math.exp(math.log(zcdp) + u), log_ratio, (log_inv_delta - log_order) * inv_gap)
    value = math.fsum(terms)
    scale = sum(abs(t) for t in terms) + (log_inv_delta + log_order) * inv_gap
    if value + _ROUNDING * scale <= 0.0:
        return 0.0
    return max(value, 0.0) + _ROUNDING * scale


def _bun_steinke_epsilon(zcdp: np.ndarray, delta: np.ndarray) -> np.ndarray:
    value = zcdp + 2.0 * np.sqrt(zcdp * -np.log(delta))
    return value * (1.0 + _ROUNDING)


def zcdp_to_epsilon(zcdp: ArrayLike, *, delta: ArrayLike, method: str = "bun_steinke") -> float | np.ndarray:
    """The epsilon such that ``zcdp``-zCDP implies (epsilon, delta)-DP.

    ``"bun_steinke"`` (default): Bun & Steinke 2016 (arXiv:1605.02065v1) Proposition 1.3,
    ``zcdp + 2 sqrt(zcdp log(1/delta))``. ``"optimal"``: the infimum over all real orders alpha > 1 of the
    ``balle2020`` conversion (see :func:`rdp_to_epsilon`) of the RDP value ``alpha * zcdp``, including the
    total-variation bound (epsilon = 0 when ``delta**2 > 1 - exp(-zcdp)``); the minimizing order is found by
    root-finding on the stationarity condition ``zcdp (alpha - 1)^2 + log(alpha) = log(1/delta)`` (see
    :func:`optimal_renyi_order`), and the value there is reported. Always ``optimal <= bun_steinke``.

    Shapes: zcdp and delta broadcast together; scalars give a float, arrays an array of the broadcast shape.

    Args:
        zcdp: the zCDP parameter (dp_accounting's rho), finite and >= 0; 0 gives epsilon = 0. A ``zcdp`` whose
            epsilon exceeds the float range (about 1.8e308) raises ``ValueError``.
        delta: in (0, 1).
        method: ``"bun_steinke"`` or ``"optimal"``.

    Formal guarantees:
        An upper bound (label ``bound``): never below the exact value of the conversion (the value at the
        computed order is at least the infimum, and it is rounded up by its evaluation-error bound).
    """
    _check.non_negative(zcdp=zcdp)
    _check.deltas(delta)
    _check.one_of(ZCDP_CONVERSION_METHODS, method=method)
    scalar, (rho, dlt) = _broadcast(zcdp=zcdp, delta=delta)
    if method == "bun_steinke":
        with np.errstate(over="ignore"):
            value = _bun_steinke_epsilon(rho, dlt)
        _check.representable(value, "epsilon", zcdp=zcdp)
        return _output(value, scalar)
    with np.errstate(over="ignore"):
        values = np.array([_optimal_epsilon_scalar(float(r), float(d))
                           for r, d in zip(rho.flat, dlt.flat, strict=True)])
    _check.representable(values, "epsilon", zcdp=zcdp)
    return _output(values.reshape(rho.shape), scalar)


def optimal_renyi_order(zcdp: ArrayLike, *, delta: ArrayLike, method: str = "bun_steinke") -> float | np.ndarray:
    """The Renyi order at which :func:`zcdp_to_epsilon` is attained.

    ``"bun_steinke"``: ``1 + sqrt(log(1/delta) / zcdp)`` (the minimizer of Mironov's conversion
    ``alpha zcdp + log(1/delta) / (alpha - 1)``). ``"optimal"``: the root of
    ``zcdp (alpha - 1)^2 + log(alpha) = log(1/delta)``, the minimizer of the Balle et al. conversion (it is
    smaller than the Mironov order). ``inf`` for ``zcdp = 0``. When the total-variation bound gives epsilon
    = 0, the order is still the minimizer of the Balle et al. formula.

    Shapes: zcdp and delta broadcast together; scalars give a float.
    """
    _check.non_negative(zcdp=zcdp)
    _check.deltas(delta)
    _check.one_of(ZCDP_CONVERSION_METHODS, method=method)
    scalar, (rho, dlt) = _broadcast(zcdp=zcdp, delta=delta)
    log_inv_delta = -np.log(dlt)
    if method == "bun_steinke":
        with np.errstate(divide="ignore"):
            return _output(1.0 + np.sqrt(log_inv_delta / rho), scalar)
    orders = np.array(
        [
            math.inf if r == 0.0 else 1.0 + math.exp(_optimal_log_order_gap(float(r), float(ell)))
            for r, ell in zip(rho.flat, log_inv_delta.flat, strict=True)
        ]
    )
    return _output(orders.reshape(rho.shape), scalar)


def _largest_safe(predicate: Callable[[float], bool], low: float, high: float) -> float:
    """Bisection for the largest point with ``predicate`` true; ``predicate(low)`` holds, ``(high)`` not."""
    while high - low > 4 * np.finfo(float).eps * high:
        middle = 0.5 * (low + high)
        if middle <= low or middle >= high:
            break
        if predicate(middle):
            low = middle
        else:
            high = middle
    return low


def _optimal_zcdp_scalar(epsilon: float, delta: float) -> float:
    """The largest zcdp (to ~1e-15 relative) whose ``optimal`` conversion is <= epsilon."""

    def gap(rho: float) -> float:
        return _optimal_epsilon_scalar(rho, delta) - epsilon

    log_inv_delta = -math.log(delta)
    low = (epsilon / (math.sqrt(log_inv_delta + epsilon) + math.sqrt(log_inv_delta))) ** 2  # Bun-Steinke
    if gap(low) > 0.0:  # not expected: optimal <= bun_steinke
        low = 0.0
    high = 2.0 * low if low > 0.0 else 1.0
    while gap(high) <= 0.0:
        low, high = high, 2.0 * high
    if epsilon == 0.0:  # the zero set of the conversion is an interval [0, rho_0]: bisect its end
        return _largest_safe(lambda rho: gap(rho) <= 0.0, low, high)
    if gap(low) == 0.0:
        return low
    tol = 1e-13 * high
    root = float(scipy.optimize.brentq(gap, low, high, xtol=tol, rtol=4 * np.finfo(float).eps))
    # Report the safe side of the root, as dp_accounting's calibration does.
    if gap(root) <= 0.0:
        return root
    if root - tol >= low and gap(root - tol) <= 0.0:
        return root - tol
    return _largest_safe(lambda rho: gap(rho) <= 0.0, low, root)


def epsilon_to_zcdp(epsilon: ArrayLike, *, delta: ArrayLike, method: str = "bun_steinke") -> float | np.ndarray:
    """The largest zcdp such that zcdp-zCDP implies (epsilon, delta)-DP (inverse of :func:`zcdp_to_epsilon`).

    ``"bun_steinke"``: the closed form ``(sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)))**2``, evaluated
    as ``epsilon**2 / (sqrt(log(1/delta) + epsilon) + sqrt(log(1/delta)))**2`` (no cancellation) and rounded
    down. ``"optimal"``: Brent's method on ``zcdp_to_epsilon(zcdp, method="optimal") = epsilon``, then the
    safe side of the root, so that ``zcdp_to_epsilon(result, delta=delta, method="optimal") <= epsilon``
    always (as dp_accounting's ``calibrate_dp_mechanism`` does); relative accuracy ~1e-13. ``epsilon = 0``
    gives the largest zcdp whose conversion is 0 (for ``"optimal"``, the total-variation region), 0 for
    ``"bun_steinke"``.

    Shapes: epsilon and delta broadcast together; scalars give a float.

    Args:
        epsilon: finite and >= 0.
        delta: in (0, 1).
        method: ``"bun_steinke"`` or ``"optimal"``.

    Formal guarantees:
        Calibration on the safe side: converting the result back never exceeds ``epsilon``.
    """
    _check.non_negative(epsilon=epsilon)
    _check.deltas(delta)
    _check.one_of(ZCDP_CONVERSION_METHODS, method=method)
    scalar, (eps, dlt) = _broadcast(epsilon=epsilon, delta=delta)
    if method == "bun_steinke":
        log_inv_delta = -np.log(dlt)
        value = (eps / (np.sqrt(log_inv_delta + eps) + np.sqrt(log_inv_delta))) ** 2
        # Rounded down by 4 allowances: the log-derivative of the forward map is >= 1/2, so the (rounded-up)
        # forward conversion of the result stays <= epsilon.
        return _output(value * (1.0 - 4.0 * _ROUNDING), scalar)
    values = np.array([_optimal_zcdp_scalar(float(e), float(d)) for e, d in zip(eps.flat, dlt.flat, strict=True)])
    return _output(values.reshape(eps.shape), scalar)


def zcdp_to_rdp(zcdp: ArrayLike, renyi_order: ArrayLike) -> float | np.ndarray:
    """The RDP value ``zcdp * renyi_order`` implied by ``zcdp``-zCDP (Bun & Steinke 2016, Definition 1.1).

    ``inf`` where the product exceeds the largest float (an RDP bound that says nothing, on the safe side) or where
    ``zcdp`` is ``inf``.

    Shapes: zcdp and renyi_order broadcast together; scalars give a float.
    """
    _check.non_negative(zcdp=zcdp)
    _check.in_range(1.0, math.inf, closed="neither", renyi_order=renyi_order)
    scalar, (rho, order) = _broadcast(zcdp=zcdp, renyi_order=renyi_order)
    with np.errstate(over="ignore"):
        return _output(rho * order, scalar)


def gaussian_zcdp(*, sensitivity: ArrayLike, noise_std: ArrayLike) -> float | np.ndarray:
    """zCDP of the Gaussian mechanism: ``sensitivity**2 / (2 noise_std**2)`` (Bun & Steinke 2016, Prop. 1.6).

    ``sensitivity`` is the l2 sensitivity of the released quantity and ``noise_std`` the absolute standard
    deviation of the isotropic Gaussian noise. Exact (label ``exact``): the mechanism's RDP is exactly
    ``alpha * zcdp`` at every order.

    Shapes: sensitivity and noise_std broadcast together; scalars give a float.

    Raises:
        ValueError: a negative ``sensitivity``, a ``noise_std`` <= 0, or a ratio so large that the zCDP exceeds the
            float range (about 1.8e308).
    """
    _check.non_negative(sensitivity=sensitivity)
    _check.positive(noise_std=noise_std)
    scalar, (sens, std) = _broadcast(sensitivity=sensitivity, noise_std=noise_std)
    with np.errstate(over="ignore"):
        value = 0.5 * (sens / std) ** 2
    _check.representable(value, "the zCDP", sensitivity=sensitivity, noise_std=noise_std)
    return _output(value, scalar)


def zcdp_to_epsilon_dp_accounting(zcdp: float, delta: float) -> float:
    """ε of ``zcdp``-zCDP at ``delta`` by dp-accounting: an ``RdpAccountant`` composed with ``ZCDpEvent(zcdp)`` (its
    grid of orders and Balle et al.'s conversion): the independent cross-check of :func:`zcdp_to_epsilon`."""
    import dp_accounting
    from dp_accounting import rdp

    _check.scalar(zcdp=zcdp)
    _check.finite(zcdp=zcdp)
    _check.non_negative(zcdp=zcdp)
    accountant = rdp.RdpAccountant()
    accountant.compose(dp_accounting.ZCDpEvent(float(zcdp)))
    return float(accountant.get_epsilon(_check.delta(delta)))


def zcdp_for_epsilon(epsilon: float, delta: float) -> float:
    """The largest zCDP parameter whose ε at ``delta`` is <= ``epsilon`` by both privdyn's ``"optimal"`` conversion
    and dp-accounting's (:func:`zcdp_to_epsilon_dp_accounting`): the calibration every zCDP mechanism of privdyn uses.

    Starts from ``epsilon_to_zcdp(method="optimal")`` and, when dp-accounting's grid gives more than ``epsilon``
    there, bisects down towards the Bun-Steinke value (whose Mironov conversion dominates dp-accounting's at every
    order) until both agree; the result is on the safe side of both to about 1e-9 relative. dp-accounting's grid
    optimum is slightly worse than the continuous one, so its condition binds by a few parts in 10⁶; requiring both
    means the guarantee recomputed by either path never exceeds the request.
    """
    _check.scalar(epsilon=epsilon)
    _check.finite(epsilon=epsilon)
    _check.positive(epsilon=epsilon)
    dlt = _check.delta(delta)
    high = float(epsilon_to_zcdp(epsilon, delta=dlt, method="optimal"))
    if zcdp_to_epsilon_dp_accounting(high, dlt) <= epsilon:
        return high
    low = float(epsilon_to_zcdp(epsilon, delta=dlt, method="bun_steinke"))
    while zcdp_to_epsilon_dp_accounting(low, dlt) > epsilon:  # not expected; halve until safe
        low *= 0.5
    while high - low > 1e-9 * high:
        middle = 0.5 * (low + high)
        if (zcdp_to_epsilon_dp_accounting(middle, dlt) <= epsilon
                and float(zcdp_to_epsilon(middle, delta=dlt, method="optimal")) <= epsilon):
            low = middle
        else:
            high = middle
    return low
