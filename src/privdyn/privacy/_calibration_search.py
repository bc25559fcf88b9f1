"""Fast, safe-side noise calibration for the lambda = 0 DP-SGD accountants of dp-accounting.

The inverse problem "the smallest noise multiplier whose epsilon is at most a target" is solved by evaluating the
forward accountant many times. Two observations make most of those evaluations cheap without changing the answer:

* **RDP, fixed-size sampling without replacement** (Wang, Balle & Kasiviswanathan 2019, arXiv 1808.00087,
  Theorem 27): every order of the RDP curve gives a valid epsilon (Balle et al. 2020, arXiv 1905.09982,
  Theorem 21), so a search over a *window* of orders around the optimum is on the safe side (its epsilon is never
  below the minimum over all orders). Orders above ~64 dominate the cost of dp-accounting's computation and are
  only needed at very small epsilon; the window is located with the Poisson RDP curve (closed form, milliseconds)
  and widened whenever the optimum lands on its edge, so the result equals the full-grid calibration.
* **PLD** (Poisson sampling, or the Theorem F.8 pair of fixed-size sampling): the pessimistic discretization of
  dp-accounting is an upper bound at any value-discretization interval ``h``, and with connect-the-dots its excess
  over the exact epsilon is ``c h^2 + o(h^2)`` (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, arXiv
  2207.04380). The search runs at a coarse ``h`` on the Richardson-extrapolated epsilon, then locates the root at
  the coarsest ``h`` the tolerance allows, and one evaluation by dp-accounting at that ``h`` certifies the result
  (its epsilon, as computed, is at most the target). For add-remove and zero-out the search evaluations use
  :func:`pld_epsilon_estimate`, a vectorized computation of the same discretized PLD (Algorithm 1 of that paper,
  FFT composition) that agrees with dp-accounting's to about 1e-8 relative at a fifth of its cost or less; the
  certifying evaluation is dp-accounting's own, so the guarantee does not rest on the estimate.

Both searches return a noise multiplier whose epsilon *as evaluated by a valid accountant* is at most the target.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import fft as sp_fft
from scipy import special

from privdyn.privacy import conversions

__all__ = [
    "DEFAULT_PLD_INTERVAL",
    "wor_rdp",
    "poisson_rdp",
    "wor_rdp_epsilon",
    "calibrate_wor_rdp",
    "pld_epsilon",
    "pld_epsilon_estimate",
    "calibrate_pld",
    "smallest_safe",
    "zcdp_guess",
]

DEFAULT_PLD_INTERVAL = 1e-4
"""dp-accounting's PLD accountant default value-discretization interval: the finest interval a calibration uses."""

_COARSE_PLD_INTERVAL = 1e-3
"""The finer interval of the search's PLD evaluations (about 8x cheaper than the default at 10^4 steps); the
Richardson pair is (1e-3, 2e-3), where the excess is still quadratic in the interval to a few per cent."""

_SEARCH_STOP = 0.125
"""The coarse search stops once its secant step is below this fraction of ``rtol``."""

_MAX_LOG_STEP = math.log(4.0)
"""The largest step (in log z) of the coarse search."""


# ---------------------------------------------------------------------------------------------------------------
# RDP of fixed-size sampling without replacement, on a window of orders
# ---------------------------------------------------------------------------------------------------------------


def _full_orders() -> np.ndarray:
    from dp_accounting.rdp import rdp_privacy_accountant

    return np.asarray(rdp_privacy_accountant.DEFAULT_RDP_ORDERS, dtype=float)


def wor_rdp(dp_noise_multiplier: float, n: int, batch_size: int, num_steps: int, orders: np.ndarray) -> np.ndarray:
    """RDP curve of fixed-size sampling without replacement, replace-one (Wang, Balle & Kasiviswanathan 2019, arXiv
    1808.00087, Theorem 27; Corollary 10 at fractional orders) by dp-accounting."""
    import dp_accounting
    from dp_accounting import rdp

    accountant = rdp.RdpAccountant(orders=orders.tolist(),
                                   neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    step = dp_accounting.SampledWithoutReplacementDpEvent(n, batch_size,
                                                         dp_accounting.GaussianDpEvent(dp_noise_multiplier))
    accountant.compose(dp_accounting.SelfComposedDpEvent(step, num_steps))
    return np.asarray(accountant.rdp, dtype=float)


def poisson_rdp(dp_noise_multiplier: float, sampling_prob: float, num_steps: int, orders: np.ndarray,
                relation: object = None) -> np.ndarray:
    """RDP curve of the Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019, arXiv 1908.10530) by dp-accounting,
    under ``relation`` (a ``dp_accounting.NeighboringRelation``; add-or-remove if None)."""
    import dp_accounting
    from dp_accounting import rdp

    relation = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE if relation is None else relation
    accountant = rdp.RdpAccountant(orders=orders.tolist(), neighboring_relation=relation)
    step = dp_accounting.PoissonSampledDpEvent(sampling_prob, dp_accounting.GaussianDpEvent(dp_noise_multiplier))
    accountant.compose(dp_accounting.SelfComposedDpEvent(step, num_steps))
    return np.asarray(accountant.rdp, dtype=float)


def _epsilon_and_order(orders: np.ndarray, rdp_curve: np.ndarray, delta: float) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an optimum at the edge of the order grid is still a valid bound
        return conversions.rdp_to_epsilon(orders, rdp_curve, delta=delta)


def wor_rdp_epsilon(dp_noise_multiplier: float, *, n: int, batch_size: int, num_steps: int, delta: float,
                    orders: Sequence[float] | np.ndarray | None = None) -> tuple[float, float]:
    """epsilon (and the optimal order) of fixed-size sampling without replacement by RDP over ``orders``.

    ``dp_noise_multiplier`` is dp-accounting's multiplier (noise std over the replace-one sensitivity). ``orders``
    defaults to dp-accounting's full default grid.
    """
    grid = _full_orders() if orders is None else np.asarray(orders, dtype=float)
    return _epsilon_and_order(grid, wor_rdp(dp_noise_multiplier, n, batch_size, num_steps, grid), delta)


def _window(full: np.ndarray, center: float, width: float) -> np.ndarray:
    """The grid orders within a factor ``width`` of ``center`` in ``order - 1``, and at least one on each side."""
    gap = full - 1.0
    inside = (gap >= (center - 1.0) / width) & (gap <= (center - 1.0) * width)
    idx = np.flatnonzero(inside)
    nearest = int(np.argmin(np.abs(np.log(gap) - math.log(center - 1.0))))
    lo = max(0, (idx.min() if idx.size else nearest) - 1)
    hi = min(full.size - 1, (idx.max() if idx.size else nearest) + 1)
    return full[lo:hi + 1]


def smallest_safe(fn: Callable[[float], float], target: float, guess: float, rtol: float,
                  first_step: float = 0.05) -> float:
    """The upper end ``hi`` of an evaluated bracket ``fn(lo) > target >= fn(hi)`` with ``hi / lo - 1 <= rtol``.

    ``fn`` is decreasing. The bracket is found from ``guess`` by steps whose log-size doubles (``first_step``
    relative first, 5% by default, so a good guess costs two or three evaluations), then narrowed by regula falsi
    in (log x, log fn) with the Illinois modification, falling back to bisection. Only evaluated points enter the
    bracket, so ``fn(hi) <= target`` holds exactly as computed.
    """
    step = math.log1p(first_step)
    hi = guess
    f_hi = fn(hi)
    lo, f_lo = hi, f_hi
    if f_hi > target:
        while f_hi > target:
            lo, f_lo = hi, f_hi
            hi *= math.exp(step)
            step *= 2.0
            if hi > 1e12:
                raise ValueError(f"no noise multiplier up to 1e12 reaches epsilon={target!r}.")
            f_hi = fn(hi)
    else:
        while f_lo <= target:
            hi, f_hi = lo, f_lo
            lo *= math.exp(-step)
            step *= 2.0
            if lo < 1e-12:
                return hi
            f_lo = fn(lo)
    x_lo, x_hi = math.log(lo), math.log(hi)
    g_lo = math.log(f_lo / target) if math.isfinite(f_lo) else math.inf
    g_hi = math.log(f_hi / target) if f_hi > 0 else -math.inf
    side = 0
    while x_hi - x_lo > math.log1p(rtol):
        if math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo != g_hi:
            x = x_hi - g_hi * (x_hi - x_lo) / (g_hi - g_lo)
            width = x_hi - x_lo
            x = min(max(x, x_lo + 0.01 * width), x_hi - 0.01 * width)
        else:
            x = 0.5 * (x_lo + x_hi)
        f = fn(math.exp(x))
        g = math.log(f / target) if math.isfinite(f) and f > 0 else (math.inf if f > 0 else -math.inf)
        if f <= target:
            x_hi, g_hi = x, g
            if side == -1:
                g_lo *= 0.5
            side = -1
        else:
            x_lo, g_lo = x, g
            if side == 1:
                g_hi *= 0.5
            side = 1
    return math.exp(x_hi)


def zcdp_guess(*, sampling_prob: float, num_steps: int, epsilon: float, delta: float) -> float:
    """A starting noise multiplier: the small-q approximation ``rdp(alpha) ~ T q^2 alpha / (2 z^2)`` (zCDP with
    ``rho = T q^2 / (2 z^2)``) solved for ``epsilon = rho + 2 sqrt(rho log(1/delta))``. Only a guess."""
    log_inv_delta = -math.log(delta)
    root_rho = math.sqrt(log_inv_delta + epsilon) - math.sqrt(log_inv_delta)
    return max(sampling_prob * math.sqrt(num_steps / 2.0) / root_rho, 1e-3)


def _poisson_start(*, sampling_prob: float, num_steps: int, epsilon: float, delta: float) -> tuple[float, float]:
    """The Poisson-RDP calibration over integer orders (closed form, cheap): ``(z, optimal order at z)``."""
    full = _full_orders()
    integers = full[full == np.round(full)]
    z = zcdp_guess(sampling_prob=sampling_prob, num_steps=num_steps, epsilon=epsilon, delta=delta)
    # The optimal order of the zCDP approximation, 1 + sqrt(log(1/delta) / rho): the large orders (128 .. 1024, whose
    # cost grows with the order) are evaluated only when the optimum is near them.
    rho = num_steps * sampling_prob**2 / (2.0 * z**2)
    center, width = 1.0 + math.sqrt(-math.log(delta) / rho), 4.0
    while True:
        orders = _window(integers, max(center, 2.0), width)

        def fn(z: float, orders: np.ndarray = orders) -> float:
            return _epsilon_and_order(orders, poisson_rdp(z, sampling_prob, num_steps, orders), delta)[0]

        z = smallest_safe(fn, epsilon, z, 2e-2)
        best = _epsilon_and_order(orders, poisson_rdp(z, sampling_prob, num_steps, orders), delta)[1]
        at_low_edge = best == orders[0] and orders[0] != integers[0]
        at_high_edge = best == orders[-1] and orders[-1] != integers[-1]
        if not (at_low_edge or at_high_edge) or orders.size == integers.size:
            return z, best
        center, width = best, width * 2.0


def calibrate_wor_rdp(*, n: int, batch_size: int, num_steps: int, epsilon: float, delta: float,
                      rtol: float) -> tuple[float, float]:
    """dp-accounting multiplier ``z`` with RDP-epsilon(z) <= epsilon, within ``rtol`` of the smallest such ``z``.

    The search evaluates the RDP curve on a window of orders (a valid epsilon at each evaluated point; see the
    module docstring) around the optimal order of the Poisson curve at rate B/n, widened until the optimal order
    at the result is interior to the window or at the end of dp-accounting's default grid, so the result is the
    full-grid calibration.

    Returns:
        ``(z, epsilon_at_z)`` with ``epsilon_at_z <= epsilon`` evaluated over the final window.
    """
    full = _full_orders()
    z, center = _poisson_start(sampling_prob=batch_size / n, num_steps=num_steps, epsilon=epsilon, delta=delta)
    # At small q, Wang-Balle-Kasiviswanathan's replace-one bound is about four times the Poisson add-remove RDP at
    # the same dp-accounting multiplier (the j = 2 term), so the root is near twice the Poisson one.
    z *= 2.0
    width, first_step, shifts = 1.25, 0.05, 0
    while True:
        orders = _window(full, max(center, 1.0 + 1e-3), width)

        def fn(z: float, orders: np.ndarray = orders) -> float:
            return wor_rdp_epsilon(z, n=n, batch_size=batch_size, num_steps=num_steps, delta=delta,
                                   orders=orders)[0]

        z = smallest_safe(fn, epsilon, z, rtol, first_step)
        value, best = wor_rdp_epsilon(z, n=n, batch_size=batch_size, num_steps=num_steps, delta=delta,
                                      orders=orders)
        at_low_edge = best == orders[0] and orders[0] != full[0]
        at_high_edge = best == orders[-1] and orders[-1] != full[-1]
        if not (at_low_edge or at_high_edge) or orders.size == full.size:
            return z, value
        # Re-centre the window on the edge optimum (the cost of an evaluation grows with the window: widen only
        # when re-centring alone has not caught the optimum). A wider window can only lower epsilon, so the root
        # moves down from z, usually by far less than 5%: the next search starts with a small step.
        shifts += 1
        center, width, first_step = best, width * 2.0 if shifts > 1 else width, max(8.0 * rtol, 1e-3)


# ---------------------------------------------------------------------------------------------------------------
# PLD of the Poisson-subsampled Gaussian
# ---------------------------------------------------------------------------------------------------------------


def pld_epsilon(noise_multiplier: float, *, sampling_prob: float, num_steps: int, delta: float, relation: object,
                interval: float = DEFAULT_PLD_INTERVAL) -> float:
    """epsilon of ``num_steps`` Poisson-subsampled Gaussian steps by dp-accounting's PLD (pessimistic).

    The same computation as dp-accounting's ``PLDAccountant`` for ``SelfComposedDpEvent(PoissonSampledDpEvent(
    sampling_prob, GaussianDpEvent(noise_multiplier)), num_steps)``, with the value-discretization interval as a
    parameter. ``relation`` is a ``dp_accounting.NeighboringRelation``.
    """
    from dp_accounting.pld import privacy_loss_distribution

    distribution = privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=noise_multiplier, sampling_prob=sampling_prob, value_discretization_interval=interval,
        neighboring_relation=relation)
    return float(distribution.self_compose(num_steps).get_epsilon_for_delta(delta))


def _hockey_stick(epsilons: np.ndarray, sigma: float, q: float, remove: bool) -> np.ndarray:
    """Hockey-stick divergence ``delta(e) = E_P[(1 - exp(e - L))_+]`` of one Poisson-subsampled Gaussian step.

    With ``N_s = N(s, sigma^2)``, the pair is ``P = (1 - q) N_0 + q N_1, Q = N_0`` (remove) or ``P = N_0,
    Q = (1 - q) N_0 + q N_1`` (add). The privacy loss ``L(x) = +-log(1 - q + q exp((2x - 1) / (2 sigma^2)))`` is
    monotone in ``x``, so ``delta(e) = P(A) - exp(e) Q(A)`` on the half-line ``A = {L > e}``, whose end is
    ``x* = sigma^2 log((exp(+-e) - (1 - q)) / q) + 1/2``.
    """
    s2 = sigma * sigma
    out = np.empty(epsilons.size)
    arg = (np.exp(epsilons) if remove else np.exp(-epsilons)) - (1.0 - q)
    inside = arg > 0.0
    x = s2 * np.log(arg[inside] / q) + 0.5
    scale = np.exp(epsilons[inside])
    if remove:  # A = (x*, inf)
        out[inside] = (1.0 - q - scale) * special.ndtr(-x / sigma) + q * special.ndtr((1.0 - x) / sigma)
        out[~inside] = -np.expm1(epsilons[~inside])  # A is the whole line
    else:  # A = (-inf, x*)
        out[inside] = (1.0 - scale * (1.0 - q)) * special.ndtr(x / sigma) - scale * q * special.ndtr((x - 1.0) / sigma)
        out[~inside] = 0.0  # A is empty: e is above the largest loss, -log(1 - q)
    return np.maximum(out, 0.0)


def _connect_dots_pmf(sigma: float, q: float, interval: float, remove: bool) -> tuple[int, np.ndarray, float]:
    """The pessimistic connect-the-dots PLD of one step (Doroshenko et al. 2022, arXiv 2207.04380, Algorithm 1).

    On the losses ``e_i = i h``, ``i = floor(e_lo / h) .. ceil(e_hi / h)``, with ``delta_i = delta(e_i)``
    (:func:`_hockey_stick`) and ``d_i = delta_{i+1} - delta_i``, the masses are ``1 - delta_1 + d_1 / (e^h - 1)``,
    ``(d_i - e^h d_{i-1}) / (e^h - 1)`` and ``d_{n-1} / (e^{-h} - 1)``, and ``delta_n`` at ``+inf``. The loss range
    is dp-accounting's: the losses at ``x = -t sigma`` and ``x = t sigma + 1`` with ``Phi(-t) = e^{-50} / 2``.

    Returns:
        ``(i_lo, masses, infinity_mass)``.
    """
    t = -float(special.ndtri(0.5 * math.exp(-50.0)))

    def loss(x: float) -> float:
        value = math.log1p(q * math.expm1((2.0 * x - 1.0) / (2.0 * sigma * sigma)))
        return value if remove else -value

    ends = sorted((loss(-t * sigma), loss(t * sigma + 1.0)))
    i_lo, i_hi = math.floor(ends[0] / interval), math.ceil(ends[1] / interval)
    delta = _hockey_stick(np.arange(i_lo, i_hi + 1) * interval, sigma, q, remove)
    if i_hi == i_lo:
        return i_lo, np.array([1.0 - delta[0]]), float(delta[0])
    d = np.diff(delta)
    em1 = math.expm1(interval)
    masses = np.empty(delta.size)
    masses[0] = 1.0 - delta[0] + d[0] / em1
    masses[1:-1] = (d[1:] - math.exp(interval) * d[:-1]) / em1
    masses[-1] = d[-1] / math.expm1(-interval)
    return i_lo, masses, float(delta[-1])


_CHERNOFF_ORDERS = np.geomspace(1e-2, 1e3, 11)


def _composed_epsilon(i_lo: int, masses: np.ndarray, infinity_mass: float, interval: float, num_steps: int,
                      delta: float, tail_mass: float = 1e-15) -> float:
    """epsilon at ``delta`` of the ``num_steps``-fold composition of a PLD on the grid ``(i_lo + k) h``.

    The composition is the FFT power of the masses on a window that a Chernoff bound
    ``P(S > s) <= exp(T K(l) - l s)`` (``K`` the log-MGF of one step, orders ``l`` on a log grid, both signs)
    shows to hold all but ``tail_mass`` of the sum. epsilon is the smallest ``e`` with
    ``delta(e) = m_inf + sum_{l_j > e} p_j (1 - e^{e - l_j}) <= delta`` (the hockey-stick divergence of a PLD),
    ``m_inf = 1 - (1 - infinity_mass)^T``.
    """
    losses = (i_lo + np.arange(masses.size)) * interval
    positive = np.maximum(masses, 0.0)
    with np.errstate(divide="ignore"):
        log_masses = np.log(positive)
    log_half_tail = math.log(0.5 * tail_mass)
    upper, lower = math.inf, -math.inf
    for order in np.concatenate([_CHERNOFF_ORDERS, -_CHERNOFF_ORDERS]):
        exponent = order * losses + log_masses
        top = float(exponent.max())
        cumulant = top + math.log(float(np.exp(exponent - top).sum()))
        bound = (num_steps * cumulant - log_half_tail) / order
        upper, lower = (min(upper, bound), lower) if order > 0 else (upper, max(lower, bound))
    first = max(math.floor(lower / interval), num_steps * i_lo)
    last = min(math.ceil(upper / interval), num_steps * (i_lo + masses.size - 1))
    size = last - first + 1
    length = sp_fft.next_fast_len(max(size, masses.size), real=True)
    cyclic = sp_fft.irfft(sp_fft.rfft(masses, length) ** num_steps, length)
    composed = np.roll(cyclic, -((first - num_steps * i_lo) % length))[:size][::-1]  # descending losses
    composed_losses = (last - np.arange(size)) * interval
    composed_infinity = -math.expm1(num_steps * math.log1p(-infinity_mass)) if infinity_mass < 1.0 else 1.0
    if composed_infinity > delta:
        return math.inf
    # Masses above each loss (inclusive) and their e^{-loss}-weighted sums, largest loss first.
    mass_upper = composed_infinity + np.cumsum(composed)
    mass_lower = np.cumsum(composed * np.exp(-composed_losses))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        solution = np.log((mass_upper - delta) / mass_lower)
    # The solution on the segment below the k-th largest loss holds once it is at least the (k+1)-th largest
    # loss; a loss so large that e^{-loss} is zero is itself the answer once the mass above reaches delta.
    valid = np.flatnonzero((mass_upper[:-1] > delta) & (mass_lower[:-1] > 0.0)
                           & (solution[:-1] >= composed_losses[1:]))
    underflow = np.flatnonzero((mass_upper >= delta) & (mass_lower == 0.0))
    if underflow.size and (not valid.size or underflow[0] < valid[0] + 1):
        return max(0.0, float(composed_losses[underflow[0]]))
    if valid.size:
        return max(0.0, float(solution[valid[0]]))
    if mass_upper[-1] <= mass_lower[-1] + delta:
        return 0.0
    return float(solution[-1])


def pld_epsilon_estimate(noise_multiplier: float, *, sampling_prob: float, num_steps: int, delta: float,
                         interval: float) -> float:
    """The value of :func:`pld_epsilon` (add-remove or zero-out), computed in vectorized form: a search aid only.

    Builds the pessimistic connect-the-dots PLD of one step (:func:`_connect_dots_pmf`) for both directions of
    the pair and composes each (:func:`_composed_epsilon`); epsilon is the larger. It agrees with dp-accounting's
    value to about 1e-8 relative at a fraction of its cost, but it is not a certificate: the calibration certifies
    its answer with :func:`pld_epsilon`.
    """
    return max(_composed_epsilon(*_connect_dots_pmf(noise_multiplier, sampling_prob, interval, remove), interval,
                                 num_steps, delta) for remove in (True, False))


def calibrate_pld(*, sampling_prob: float, num_steps: int, epsilon: float, delta: float, relation: object,
                  rtol: float) -> tuple[float, float, float]:
    """Noise multiplier of the Poisson-subsampled Gaussian with PLD-epsilon <= epsilon, within ~rtol of the smallest.

    1. Start: the zCDP guess (:func:`zcdp_guess`) for add-remove and zero-out, whose PLD the vectorized
       :func:`pld_epsilon_estimate` computes; otherwise the Poisson RDP calibration over integer orders, and every
       search evaluation below is dp-accounting's own.
    2. A log-log secant search on the Richardson extrapolation ``eps(h) - (eps(2h) - eps(h)) / 3`` at the coarse
       interval ``h`` (the excess of connect-the-dots is ``c h^2 + o(h^2)``) locates the root of the exact epsilon
       to far below ``rtol``; ``c`` is re-estimated at each point when evaluations are cheap.
    3. The certifying interval ``h_f`` is the coarsest (at most ``h``, at least dp-accounting's default) whose
       predicted excess ``c h_f^2`` moves the root by ``s <= rtol / 2`` (``s = 0`` at the default interval).
       Secant steps of the estimate at ``h_f`` locate its root there.
    4. Certification: dp-accounting's PLD at ``h_f``, ``rtol / 8`` above the located root. The point is returned
       when its epsilon, as computed at ``h_f``, is at most the target and its predicted distance above the root
       at ``h_f`` is at most ``0.8 (rtol - s)``, so at most ``s + 0.8 (rtol - s) < rtol`` above the root at the
       default interval (a fifth of the remaining tolerance kept for the excess model); otherwise secant steps at
       ``h_f`` continue.

    Returns:
        ``(noise_multiplier, epsilon_at_it, interval_used)``: the epsilon was evaluated by dp-accounting
        (pessimistic PLD at the returned interval, a valid upper bound) and is at most ``epsilon``.
    """
    import dp_accounting

    def at(z: float, interval: float) -> float:
        return pld_epsilon(z, sampling_prob=sampling_prob, num_steps=num_steps, delta=delta, relation=relation,
                           interval=interval)

    relations = dp_accounting.NeighboringRelation
    fast = relation in (relations.ADD_OR_REMOVE_ONE, relations.REPLACE_SPECIAL)

    def estimate(z: float, interval: float) -> float:
        if fast:
            return pld_epsilon_estimate(z, sampling_prob=sampling_prob, num_steps=num_steps, delta=delta,
                                        interval=interval)
        return at(z, interval)

    def secant_slope(points: list[tuple[float, float]]) -> float:
        if len(points) < 2:
            return -1.0  # epsilon ~ 1 / z to first order
        (x0, y0), (x1, y1) = points[-2], points[-1]
        slope = (y1 - y0) / (x1 - x0) if x1 != x0 else -1.0
        return slope if (slope < 0.0 and math.isfinite(slope)) else -1.0

    if fast:
        z = zcdp_guess(sampling_prob=sampling_prob, num_steps=num_steps, epsilon=epsilon, delta=delta)
    else:
        z, _ = _poisson_start(sampling_prob=sampling_prob, num_steps=num_steps, epsilon=epsilon, delta=delta)
    raw: list[tuple[float, float]] = []  # (log z, epsilon at the coarse interval)
    coefficient = math.nan
    slope, step = -1.0, math.inf
    for _ in range(30):
        value = estimate(z, _COARSE_PLD_INTERVAL)
        if not (math.isfinite(value) and value > 0.0):
            break
        # The excess coefficient varies slowly with z: estimate it at the first point and, when evaluations are
        # cheap, again at each point once the search is within a few per cent of the root.
        if math.isnan(coefficient) or (fast and abs(step) < 0.03):
            coefficient = max(estimate(z, 2.0 * _COARSE_PLD_INTERVAL) - value, 0.0) / (3.0 * _COARSE_PLD_INTERVAL**2)
        raw.append((math.log(z), value))
        # Every point's extrapolated epsilon under the current coefficient; the bracket of evaluated points.
        points = [(x, math.log(max(v - coefficient * _COARSE_PLD_INTERVAL**2, 1e-300))) for x, v in raw]
        above = max((x for x, y in points if y > math.log(epsilon)), default=-math.inf)
        below = min((x for x, y in points if y <= math.log(epsilon)), default=math.inf)
        slope = secant_slope(points)
        step = (math.log(epsilon) - points[-1][1]) / slope
        # Safeguards: a step of at most a factor 4, and inside the bracket once there is one.
        x = points[-1][0] + min(max(step, -_MAX_LOG_STEP), _MAX_LOG_STEP)
        if not above < x < below and math.isfinite(above) and math.isfinite(below):
            x = 0.5 * (above + below)
        z = math.exp(x)
        if abs(step) < _SEARCH_STOP * rtol:
            break
    slope = abs(slope)
    coefficient = 0.0 if math.isnan(coefficient) else coefficient
    # The certifying interval: the coarsest whose predicted excess moves the root by at most half the tolerance.
    interval = DEFAULT_PLD_INTERVAL
    if coefficient > 0.0:
        allowed_excess = 0.5 * rtol * slope * epsilon
        interval = min(_COARSE_PLD_INTERVAL, max(DEFAULT_PLD_INTERVAL, math.sqrt(allowed_excess / coefficient)))
    # The root at the certifying interval, predicted from the excess model; ``shift`` is its predicted log-distance
    # above the root at dp-accounting's default interval (zero when certifying at that interval).
    shift = 0.0
    if interval > DEFAULT_PLD_INTERVAL:
        shift = math.log1p(coefficient * interval**2 / (slope * epsilon)) / slope
    z *= math.exp(shift)
    if fast:  # the estimate's root at the certifying interval, to a small fraction of the tolerance
        located: list[tuple[float, float]] = []
        for _ in range(10):
            value = estimate(z, interval)
            if not (math.isfinite(value) and value > 0.0):
                break
            located.append((math.log(z), math.log(value)))
            local = abs(secant_slope(located)) if len(located) > 1 else slope
            gap = math.log(value / epsilon) / local
            z *= math.exp(gap)
            if abs(gap) < 0.5 * rtol:  # the step's error is a small fraction of it (the slope's relative error)
                break
    # Accept a certified point at most ``window`` above the root at the certifying interval (with a fifth of the
    # remaining tolerance kept for the models); aim an eighth of the tolerance above that root.
    window = 0.8 * (math.log1p(rtol) - shift)
    aim = 0.125 * math.log1p(rtol)
    z *= math.exp(aim)
    safe: tuple[float, float] | None = None
    certified: list[tuple[float, float]] = []
    for _ in range(30):
        value = at(z, interval)
        certified.append((math.log(z), math.log(value)))
        if value <= epsilon:
            safe = (z, value) if safe is None or z < safe[0] else safe
        local = abs(secant_slope(certified)) if len(certified) > 1 else slope
        gap = math.log(value / epsilon) / local  # predicted log-distance to the root (> 0: z is too small)
        if safe is not None and -window <= gap <= 0.0:
            return safe[0], safe[1], interval
        z *= math.exp(gap + aim)
    if safe is not None:
        return safe[0], safe[1], interval
    raise ValueError(f"the PLD calibration did not converge for epsilon={epsilon!r} (sampling_prob="
                     f"{sampling_prob!r}, num_steps={num_steps!r}, delta={delta!r}).")
