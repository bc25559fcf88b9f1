"""Correlated noise under random allocation: two sampling-free upper bounds on epsilon, the smaller reported.

**The mechanism.** DP-SGD with a lower-triangular Toeplitz encoder ``C`` (any strategy of
:mod:`privdyn.privacy.correlated`) releases the noisy sums ``X + kappa C^{-1} Z``; by post-processing this is
``C X + kappa Z``. Under random allocation (balls-in-bins) an epoch has ``t`` steps and every record joins exactly
one of them, uniformly and independently of the other records; ``E`` epochs use independent allocations, so the
steps a record joins form a set ``S = {s_0 < ... < s_{E-1}}`` with ``s_e`` in the block ``[e t, (e + 1) t)``: one
step per epoch.

**The bound.** For each fixed ``S`` the record moves ``C X`` by ``C g`` with ``g`` supported on ``S`` and rows of
norm at most the clip (1 here), chosen adaptively; the mechanism is then dominated by the Gaussian mechanism of
L2 sensitivity ``sup ||C g||`` (adaptive rows reduce to their norm bounds: Denisov et al. 2022, arXiv 2202.08312,
Theorem 2.1; Choquette-Choo et al. 2023, arXiv 2211.06530, the same reduction privdyn's
:func:`~privdyn.privacy.correlated.sensitivity` rests on), and ``||C g||^2 = sum_{u,v in S} G_uv <g_u, g_v>
<= sum_{u,v in S} |G_uv|`` with ``G = C^T C``. The released law is the mixture over ``S`` of these mechanisms, and
every hockey-stick divergence is jointly convex, so in both directions (add and remove) the mixture is dominated by
the worst ``S``: the Gaussian mechanism of sensitivity::

    Delta = max_S sqrt(sum_{u,v in S} |G_uv|)    over one-step-per-epoch sets S.

Zero-out neighbours give the same pair (a zeroed record adds nothing to the sum). epsilon then follows exactly from
the Gaussian mechanism's curve at ``mu = Delta / kappa`` (Balle & Wang 2018, arXiv 1805.06530, Theorem 8). Nothing
of the allocation's randomness is used: the bound holds for *any* allocation that puts a record in at most one step
per epoch, and it is loose against amplified accounting wherever amplification matters (small ``1 / t``).

**Computing Delta (an upper bound on it).** With ``a = |c|`` (``c`` the first column of ``C`` over ``E t`` steps)
and ``A(d) = sum_j a_j a_{j+d}``, every ``|G_uv| <= A(|u - v|)`` (the horizon only removes terms), and ``Abar(d) =
max_{d' >= d} A(d')`` is non-increasing. Steps of epochs ``e < f`` are at least ``(f - e - 1) t + 1`` apart, so::

    Delta^2 <= E A(0) + 2 max_r sum_e Abar(t + r_{e+1} - r_e) + 2 sum_{j >= 2} (E - j) Abar((j - 1) t + 1),

the middle term (consecutive epochs, offsets ``r_e`` in ``[0, t)``) maximized exactly by dynamic programming over
the epochs, O(E t^2) time. Where ``c`` is non-negative and non-increasing the larger family "any E steps" has the
exact maximum ``||C 1_{0..E-1}||`` (:func:`~privdyn.privacy.correlated.sensitivity` with ``min_separation=1``),
also an upper bound here; the smaller of the two is used (the second is exact when ``t = 1``). A sum of ``m``
float64 products is rounded up by the relative margin ``4 m u`` (u the unit roundoff) so rounding never lowers it.

**The spectral route (amplified).** Let ``a >= ||C||_2`` (privdyn certifies ``a >= || |C| ||_2 >= ||C||_2``,
:func:`privdyn.privacy.amplification.spectral.operator_norm_bound`) and ``tau = kappa / a``. The noise splits as
``kappa Z = C W + W'`` with ``W ~ N(0, tau^2 I)`` and ``W' ~ N(0, kappa^2 I - tau^2 C C^T)`` independent (the
covariance is positive semi-definite because ``C C^T <= a^2 I``), so the release is ``C (X + W) + W'``: a
post-processing of the *independent-noise* run ``X + W`` at noise multiplier ``tau`` together with ``W'``, which is
independent of the data (the gradients may depend on it: they depend on past releases, functions of past
``X + W`` and of ``W'``, C being lower-triangular). The independent-noise run under random allocation is accounted
by the balls-in-bins pair for adaptive queries (:mod:`privdyn.privacy.random_allocation`), for every value of the
independent ``W'`` and hence for the mixture (joint convexity). So epsilon is at most the random-allocation PLD's at
``tau``: the same argument as privdyn's spectral bound for Poisson sampling
(:mod:`privdyn.privacy.amplification.spectral`), here applied to the mechanism itself rather than to a pair.
:func:`epsilon` reports the smaller of the two bounds and names it in ``source``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import optimize, special

from privdyn import _check
from privdyn.privacy.correlated.participation import gram_column_sums, monotone_non_negative
from privdyn.privacy.correlated.strategies import Strategy
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["allocation_sensitivity", "operator_norm", "unamplified_epsilon", "spectral_epsilon", "epsilon",
           "unamplified_noise_multiplier", "gaussian_epsilon", "gaussian_mu", "SOURCE", "SPECTRAL_SOURCE"]

SOURCE = ("matrix mechanism under random allocation (one step per epoch), amplification ignored: the Gaussian "
          "mechanism of the worst one-step-per-epoch participation set's sensitivity (joint convexity of the "
          "hockey-stick divergence over the allocation; Balle & Wang 2018, arXiv 1805.06530, Theorem 8)")
"""The citation of the bound without amplification, as this module's privacy losses record it."""

SPECTRAL_SOURCE = ("matrix mechanism under random allocation, spectral route: a post-processing of independent "
                   "noise at kappa / a, a >= ||C||_2 certified, accounted by the random-allocation PLD")
"""The citation of the spectral route, as this module's privacy losses record it."""

_UNIT_ROUNDOFF = float(np.finfo(float).eps) / 2.0
_DELTA_MARGIN = 1e-9  # the Gaussian curve is certified at delta (1 - 1e-9): far above its float64 evaluation error


# ---------------------------------------------------------------------------------------------------------------
# The sensitivity over one-step-per-epoch sets
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Bound:
    """``squared``: an upper bound on max_S ||C 1_S||^2 (S one step per epoch); ``witness``: a one-step-per-epoch
    set the dynamic programme chose (where ``G`` is non-negative its exact ``||C 1_S||^2`` is attained: a lower
    end for the maximum)."""

    squared: float
    witness: np.ndarray
    route: str


def _abs_autocorrelation(c: np.ndarray) -> np.ndarray:
    """``Abar(d) = max_{d' >= d} sum_j |c_j| |c_{j+d'}|`` for d = 0 .. len(c) - 1, rounded up."""
    a = np.abs(c)
    nonzero = np.flatnonzero(a)
    support = int(nonzero[-1]) + 1 if nonzero.size else 1
    head = a[:support]
    auto = np.zeros(c.size)
    auto[:support] = np.correlate(head, head, mode="full")[support - 1:]
    auto *= 1.0 + 4.0 * support * _UNIT_ROUNDOFF
    return np.maximum.accumulate(auto[::-1])[::-1]


def _chain(abar: np.ndarray, steps_per_epoch: int, num_epochs: int) -> tuple[float, np.ndarray]:
    """``max_r sum_{e < E-1} Abar(t + r_{e+1} - r_e)`` over offsets r in [0, t)^E, and a maximizing r."""
    t = steps_per_epoch
    if num_epochs == 1:
        return 0.0, np.zeros(1, dtype=np.int64)
    r = np.arange(t)
    value = np.zeros(t)
    choices = []
    chunk = max(1, 2_000_000 // t)
    for _ in range(num_epochs - 1):
        best, arg = np.empty(t), np.empty(t, dtype=np.int64)
        for start in range(0, t, chunk):
            nxt = r[start:start + chunk]
            total = value[:, None] + abar[t + nxt[None, :] - r[:, None]]
            arg[start:start + chunk] = np.argmax(total, axis=0)
            best[start:start + chunk] = total[arg[start:start + chunk], np.arange(nxt.size)]
        choices.append(arg)
        value = best
    offsets = np.empty(num_epochs, dtype=np.int64)
    offsets[-1] = int(np.argmax(value))
    for e in range(num_epochs - 1, 0, -1):
        offsets[e - 1] = choices[e - 1][offsets[e]]
    return float(np.max(value)), offsets


def _allocation_bound(c: np.ndarray, steps_per_epoch: int, num_epochs: int) -> _Bound:
    t, epochs = steps_per_epoch, num_epochs
    abar = _abs_autocorrelation(c)
    chain, offsets = _chain(abar, t, epochs)
    j = np.arange(2, epochs)
    far = float(np.dot(epochs - j, abar[(j - 1) * t + 1])) if epochs > 2 else 0.0
    terms = 2 * epochs * epochs  # the sums above add at most this many non-negative terms
    squared = (epochs * float(abar[0]) + 2.0 * chain + 2.0 * far) * (1.0 + 4.0 * terms * _UNIT_ROUNDOFF)
    witness = offsets + t * np.arange(epochs)
    route = "one-step-per-epoch dynamic programme over |C^T C| <= A(|u - v|)"
    if monotone_non_negative(c):
        consecutive = gram_column_sums(c, np.arange(epochs)) * (1.0 + 4.0 * epochs * c.size * _UNIT_ROUNDOFF)
        if consecutive < squared:
            squared = consecutive
            route = "any E steps (non-negative, non-increasing coefficients: E consecutive steps, exact)"
    return _Bound(squared=squared, witness=witness, route=route)


def _relation(neighboring: Any) -> NeighboringRelation:
    try:
        relation = NeighboringRelation(neighboring)
    except ValueError:
        relation = None
    if relation not in (NeighboringRelation.ADD_REMOVE, NeighboringRelation.ZERO_OUT):
        raise ValueError(f"neighboring must be 'add_remove' or 'zero_out' (a replace-one neighbour is two zero-out "
                         f"steps, not accounted here); got neighboring={neighboring!r}.")
    return relation


def _epochs(steps_per_epoch: Any, num_epochs: Any) -> tuple[int, int]:
    _check.scalar(steps_per_epoch=steps_per_epoch, num_epochs=num_epochs)
    _check.finite(steps_per_epoch=steps_per_epoch, num_epochs=num_epochs)
    _check.integer(minimum=1, steps_per_epoch=steps_per_epoch, num_epochs=num_epochs)
    return int(steps_per_epoch), int(num_epochs)


def _coefficients(strategy: Strategy, num_steps: int) -> np.ndarray:
    _check.instance(Strategy, strategy=strategy)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging encoder is refused below, not warned about
        c = np.asarray(strategy.encoder_coefficients(num_steps), dtype=float)
    if not np.all(np.isfinite(c)):
        raise ValueError(f"strategy must have finite encoder coefficients over {num_steps} steps; {strategy!r} "
                         f"has non-finite ones (its encoder diverges).")
    return c


def allocation_sensitivity(strategy: Strategy, *, steps_per_epoch: int, num_epochs: int,
                           neighboring: str | NeighboringRelation = NeighboringRelation.ZERO_OUT) -> PrivacyLoss:
    """An upper bound on ``max_S ||C 1_S||`` over sets S with one step in each of ``num_epochs`` blocks of
    ``steps_per_epoch`` consecutive steps (unit clip; module docstring), label ``bound``.

    Raises:
        ValueError / TypeError: bad input (the message names the parameter and its valid range).
    """
    t, epochs = _epochs(steps_per_epoch, num_epochs)
    relation = _relation(neighboring)
    bound = _allocation_bound(_coefficients(strategy, t * epochs), t, epochs)
    return PrivacyLoss(value=math.sqrt(bound.squared), guarantee=Guarantee.BOUND, quantity="sensitivity",
                       neighboring=relation, sampler="random_allocation",
                       source=f"sensitivity of {strategy!r} over one step in each of {epochs} epochs of {t} steps "
                              f"(upper bound: {bound.route})")


# ---------------------------------------------------------------------------------------------------------------
# The Gaussian mechanism's curve (Balle & Wang 2018, Theorem 8)
# ---------------------------------------------------------------------------------------------------------------


def _log_delta(mu: float, eps: float) -> float:
    """log of delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), in log space (no cancellation)."""
    first = float(special.log_ndtr(mu / 2.0 - eps / mu))
    second = eps + float(special.log_ndtr(-mu / 2.0 - eps / mu))
    if second >= first:
        return -math.inf
    return first + math.log(-math.expm1(second - first))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon >= 0 with delta(epsilon) <= delta (1 - 1e-9) for a Gaussian shift ``mu``, rounded up:
    an upper bound on the Gaussian mechanism's exact epsilon at ``delta``; inf at mu = inf."""
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    target = math.log(delta) + math.log1p(-_DELTA_MARGIN)
    if _log_delta(mu, 0.0) <= target:
        return 0.0
    high = max(1.0, mu * mu)
    while _log_delta(mu, high) > target:
        high *= 2.0
    root = optimize.brentq(lambda e: _log_delta(mu, e) - target, 0.0, high, xtol=1e-13, rtol=1e-13)
    eps = root
    while _log_delta(mu, eps) > target:  # certify the safe side
        eps += max(1e-12, 1e-12 * eps)
    return float(eps)


def gaussian_mu(eps: float, delta: float) -> float:
    """The largest Gaussian shift mu (rounded down) with delta(eps) <= delta (1 - 1e-9)."""
    target = math.log(delta) + math.log1p(-_DELTA_MARGIN)
    low, high = 1e-3, 1.0
    while _log_delta(low, eps) > target:
        low /= 2.0
    while _log_delta(high, eps) <= target:
        high *= 2.0
    mu = optimize.brentq(lambda m: _log_delta(m, eps) - target, low, high, xtol=1e-14, rtol=1e-13)
    while _log_delta(mu, eps) > target:
        mu *= 1.0 - 1e-12
    return float(mu)


# ---------------------------------------------------------------------------------------------------------------
# The accountant
# ---------------------------------------------------------------------------------------------------------------



def unamplified_epsilon(strategy: Strategy, noise_multiplier: float, *, steps_per_epoch: int, num_epochs: int,
                        delta: float,
                        neighboring: str | NeighboringRelation = NeighboringRelation.ADD_REMOVE) -> PrivacyLoss:
    """An upper bound on epsilon of ``num_epochs`` epochs of random allocation (one of ``steps_per_epoch`` steps per
    epoch) with this strategy's correlated noise of multiplier ``noise_multiplier`` (noise std on the sum over the
    clip), add-remove or zero-out neighbours: the Gaussian mechanism at ``mu = Delta / kappa`` (module docstring),
    no amplification.

    Returns:
        ``PrivacyLoss(value=epsilon, guarantee="bound", quantity="epsilon", sampler="random_allocation")``; inf at
        kappa = 0.
    """
    _check.scalar(noise_multiplier=noise_multiplier)
    _check.finite(noise_multiplier=noise_multiplier)
    _check.non_negative(noise_multiplier=noise_multiplier)
    delta = _check.delta(delta)
    sens = allocation_sensitivity(strategy, steps_per_epoch=steps_per_epoch, num_epochs=num_epochs,
                                  neighboring=neighboring)
    kappa = float(noise_multiplier)
    value = math.inf if kappa == 0.0 else gaussian_epsilon(float(sens.value) / kappa, delta)
    return PrivacyLoss(value=value, guarantee=Guarantee.BOUND, quantity="epsilon", neighboring=sens.neighboring,
                       sampler="random_allocation",
                       source=f"{SOURCE}; {sens.source}: Delta = {float(sens.value):.6g}, mu = Delta / kappa")


def unamplified_noise_multiplier(
        strategy: Strategy, *, epsilon: float, delta: float, steps_per_epoch: int, num_epochs: int,
        neighboring: str | NeighboringRelation = NeighboringRelation.ADD_REMOVE) -> PrivacyLoss:
    """The noise multiplier kappa = Delta / mu* with mu* the largest Gaussian shift that is (epsilon, delta)-DP
    (rounded down), so :func:`unamplified_epsilon` at kappa is at most the target; label ``bound``."""
    _check.scalar(epsilon=epsilon)
    _check.finite(epsilon=epsilon)
    _check.positive(epsilon=epsilon)
    delta = _check.delta(delta)
    sens = allocation_sensitivity(strategy, steps_per_epoch=steps_per_epoch, num_epochs=num_epochs,
                                  neighboring=neighboring)
    kappa = float(sens.value) / gaussian_mu(float(epsilon), delta)
    while gaussian_epsilon(float(sens.value) / kappa, delta) > epsilon:  # certify through the reporting function
        kappa *= 1.0 + 1e-12
    return PrivacyLoss(value=kappa, guarantee=Guarantee.BOUND, quantity="noise_multiplier",
                       neighboring=sens.neighboring, sampler="random_allocation",
                       source=f"{SOURCE}; {sens.source}: kappa = Delta / mu*, mu* the largest Gaussian shift that "
                              f"is ({epsilon!r}, {delta!r})-DP")


# ---------------------------------------------------------------------------------------------------------------
# The spectral route, and the smaller of the two
# ---------------------------------------------------------------------------------------------------------------


def operator_norm(strategy: Strategy, num_steps: int) -> float:
    """A certified ``a >= || |C| ||_2 >= ||C||_2`` over ``num_steps`` steps (module docstring)."""
    from privdyn.privacy.amplification.spectral import operator_norm_bound

    return operator_norm_bound(np.abs(_coefficients(strategy, int(num_steps))))


def spectral_epsilon(strategy: Strategy, noise_multiplier: float, *, steps_per_epoch: int, num_epochs: int,
                     delta: float,
                     neighboring: str | NeighboringRelation = NeighboringRelation.ADD_REMOVE) -> PrivacyLoss:
    """An upper bound on the same epsilon by the spectral route: the random-allocation PLD of independent noise at
    ``kappa / a`` (module docstring); label ``bound``, inf at kappa = 0."""
    from privdyn.privacy import random_allocation

    _check.scalar(noise_multiplier=noise_multiplier)
    _check.finite(noise_multiplier=noise_multiplier)
    _check.non_negative(noise_multiplier=noise_multiplier)
    t, epochs = _epochs(steps_per_epoch, num_epochs)
    relation = _relation(neighboring)
    delta = _check.delta(delta)
    a = operator_norm(strategy, t * epochs)
    kappa = float(noise_multiplier)
    source = f"{SPECTRAL_SOURCE}; {strategy!r}, a = {a:.6g}, {epochs} epochs of {t} steps"
    if kappa == 0.0:
        return PrivacyLoss(value=math.inf, guarantee=Guarantee.BOUND, quantity="epsilon", neighboring=relation,
                           sampler="random_allocation", source=source)
    loss = random_allocation.epsilon(kappa / a, steps_per_epoch=t, num_epochs=epochs, delta=delta,
                                     neighboring=relation)
    return dataclasses.replace(loss, source=f"{source}: {loss.source}")


def epsilon(strategy: Strategy, noise_multiplier: float, *, steps_per_epoch: int, num_epochs: int, delta: float,
            neighboring: str | NeighboringRelation = NeighboringRelation.ADD_REMOVE) -> PrivacyLoss:
    """The smaller of :func:`unamplified_epsilon` and :func:`spectral_epsilon` (both upper bounds); ``source`` says
    which, and gives the other's value."""
    unamplified = unamplified_epsilon(strategy, noise_multiplier, steps_per_epoch=steps_per_epoch,
                                      num_epochs=num_epochs, delta=delta, neighboring=neighboring)
    spectral = spectral_epsilon(strategy, noise_multiplier, steps_per_epoch=steps_per_epoch, num_epochs=num_epochs,
                                delta=delta, neighboring=neighboring)
    best, other = ((unamplified, spectral) if float(unamplified.value) <= float(spectral.value)
                   else (spectral, unamplified))
    return dataclasses.replace(best, source=f"{best.source} (the smaller bound; the other gives "
                                            f"{float(other.value):.6g})")
