"""``amplified_epsilon`` and ``amplified_noise_multiplier``: DP-SGD with correlated noise under i.i.d. participation.

One entry point for the Theorem F.8 pair (Wang et al., arXiv 2605.12648v1) of any correlated-noise strategy of
:mod:`privdyn.privacy.correlated` under fixed-size per-step batches (``zero_out`` neighbours) or Poisson sampling
(``add_remove`` neighbours):

* ``method="bound"`` (label ``bound``): the smallest of the formal upper bounds below, each valid on its own (the
  minimum of valid upper bounds on the same epsilon at the same delta is one); the block bound and the conditional
  composition are evaluated only where they can win (:func:`~privdyn.privacy.amplification.blocks.blocks_may_win`,
  :func:`conditional_may_win`), which decides speed, never validity.
* ``method="spectral"`` (label ``bound``): the pair is a post-processing of the Poisson-subsampled Gaussian with
  noise multiplier ``kappa / ||C||_2`` (:mod:`privdyn.privacy.amplification.spectral`), accounted by
  dp-accounting's PLD; equal to it at lambda = 0 and continuous in the strategy's coefficients.
* ``method="blocks"`` (label ``bound``, lambda-CGD only): the whitened pair is a post-processing of independent
  blocks of two steps (:mod:`privdyn.privacy.amplification.blocks`), each accounted on a grid of the plane on the safe
  side; tighter than the spectral bound where a few participations decide epsilon.
* ``method="conditional"`` (label ``bound``): conditional composition of mixture-of-Gaussians PLDs (Choquette-Choo,
  Ganesh, Steinke & Thakurta, ICLR 2024, arXiv 2310.15526), both directions of the pair, with the bad-event
  probability spent from delta (:mod:`privdyn.privacy.amplification.conditional`).
* ``method="estimate"`` (label ``estimate``): a Monte-Carlo upper confidence bound from the pair, with its exact
  privacy loss for ``T <= 16`` (any strategy) and, for lambda-CGD at any horizon, the forward recursion on a state grid
  with importance sampling (:mod:`privdyn.privacy.amplification.monte_carlo`).

``noise_multiplier`` is kappa of Theorem F.8: the noise std on the **sum** of clipped per-example gradients divided by
the clip (``docs/amplification.md`` relates it to the other relations).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from privdyn import _check
from privdyn.privacy.amplification import conditional
from privdyn.privacy.amplification.blocks import blocks_epsilon, blocks_may_win
from privdyn.privacy.amplification.monte_carlo import LongHorizonDraws, monte_carlo_epsilon
from privdyn.privacy.amplification.pair import (
    MAX_ENUMERATION_STEPS,
    NEIGHBORING,
    PAPER,
    DominatingPair,
    dominating_pair,
    validate_sampler,
)
from privdyn.privacy.amplification.spectral import operator_norm_bound, spectral_epsilon
from privdyn.privacy.labels import Guarantee, PrivacyLoss

if TYPE_CHECKING:  # the strategies import scipy through privdyn.rng: keep `import privdyn.privacy` light
    from privdyn.privacy.correlated import Strategy

__all__ = ["METHODS", "CONDITIONAL_FROM_RATE", "amplified_epsilon", "amplified_noise_multiplier", "conditional_may_win"]

METHODS = ("bound", "spectral", "blocks", "conditional", "estimate")
"""The values of ``method`` (module docstring): ``"bound"`` (the default), ``"spectral"``, ``"blocks"``,
``"conditional"`` and ``"estimate"``."""

CONDITIONAL_FROM_RATE = 0.9
"""``method="bound"`` also evaluates the conditional composition at sampling rates from this on: below it the spectral
bound was smaller at every point compared (``docs/amplification.md``, Section 4), and the conditional composition
costs seconds to minutes; at rates near 1 it was smaller by up to 3.5%."""

_MMCC = "Choquette-Choo, Ganesh, Steinke & Thakurta, arXiv 2310.15526"



def _conditional_epsilon(pair: Any, delta: float, settings: conditional.BoundSettings) -> float:
    bound = conditional.conditional_bound(pair, delta, settings)
    pld = conditional.pld_of_bound(bound, pair.noise_multiplier, settings)
    return float(pld.get_epsilon_for_delta(delta - bound.bad_event_prob))


def conditional_may_win(pair: DominatingPair) -> bool:
    """Whether ``method="bound"`` also evaluates the conditional composition (a speed rule, not a validity one).

    True when the sampling rate is at least :data:`CONDITIONAL_FROM_RATE`, unless the strategy is independent noise
    (``|C| = c_0 I``: the spectral bound is then dp-accounting's PLD of the pair itself).
    """
    if int(np.count_nonzero(pair.coefficients)) <= 1:
        return False
    return pair.sampling_prob >= CONDITIONAL_FROM_RATE


def _bound_epsilon(pair: DominatingPair, delta: float, settings: conditional.BoundSettings,
                   method: str = "bound") -> tuple[float, str]:
    """epsilon of the requested bound route(s) and the name of the route that gave it."""
    candidates: dict[str, float] = {}
    if method in ("bound", "spectral"):
        candidates["spectral"] = spectral_epsilon(pair, delta, settings.value_discretization_interval)
    if method == "blocks" or (method == "bound" and blocks_may_win(pair)):
        candidates["blocks"] = blocks_epsilon(pair, delta, settings.value_discretization_interval)
    if method == "conditional" or (method == "bound" and conditional_may_win(pair)):
        candidates["conditional"] = _conditional_epsilon(pair, delta, settings)
    route = min(candidates, key=lambda name: candidates[name])
    return candidates[route], route


def _route_source(route: str, settings: conditional.BoundSettings) -> str:
    if route == "spectral":
        return (f"spectral bound: post-processing of the Poisson-subsampled Gaussian at noise multiplier "
                f"kappa/||C||_2, dp-accounting PLD (discretization {settings.value_discretization_interval:g})")
    if route == "blocks":
        return (f"two-step block bound: the whitened lambda-CGD pair as a post-processing of independent blocks of two "
                f"steps, each block's PLD on a grid on the safe side, dp-accounting composition (discretization "
                f"{settings.value_discretization_interval:g})")
    return (f"conditional composition of mixture-of-Gaussians PLDs ({_MMCC}), dp-accounting PLD, bad events "
            f"{settings.bad_event_fraction:g} * delta")


def amplified_epsilon(strategy: Strategy, *, noise_multiplier: float, sampling_prob: float, num_steps: int,
                      delta: float, sampler: str, method: str = "bound",
                      settings: conditional.BoundSettings | None = None, num_samples: int = 200_000,
                      confidence: float = 0.999, rng: np.random.Generator | None = None) -> PrivacyLoss:
    """epsilon of ``num_steps`` steps of DP-SGD with the noise ``strategy`` under i.i.d. per-step participation.

    Args:
        strategy: a :class:`privdyn.privacy.correlated.Strategy` (lambda-CGD, banded inverse, Toeplitz, BLT, square
            root or independent noise).
        noise_multiplier: kappa > 0, the noise std on the sum of clipped gradients divided by the clip.
        sampling_prob: r in (0, 1]: ``batch_size / n`` (fixed-size batches) or the Poisson rate.
        num_steps: T, the number of noisy steps.
        delta: in (0, 1).
        sampler: ``"fixed_size"`` (batches of B drawn without replacement independently at every step; zero-out
            neighbours) or ``"poisson"`` (add-remove neighbours). ``"shuffle"`` is refused.
        method: ``"bound"`` (the smallest of the formal upper bounds ``"spectral"``, ``"blocks"`` and
            ``"conditional"``), one of those alone (``"blocks"``: lambda-CGD only), or ``"estimate"`` (a
            Monte-Carlo upper confidence bound at level ``confidence``; needs ``rng``, and lambda-CGD when
            ``num_steps > 16``).
        settings: the bound's numerical settings (default :class:`~conditional.BoundSettings`).
        num_samples, confidence, rng: the estimate's draws per direction, level and generator.

    Returns:
        ``PrivacyLoss(value=epsilon, quantity="epsilon", guarantee=..., neighboring=...)``.
    """
    sampler = validate_sampler(sampler)
    _check.one_of(METHODS, method=method)
    dlt = _check.delta(delta)
    pair = dominating_pair(strategy, noise_multiplier=noise_multiplier, sampling_prob=sampling_prob,
                           num_steps=num_steps)
    common = (f"{PAPER}, Theorem F.8 pair for {pair.strategy}, sampler {sampler!r}, "
              f"{NEIGHBORING[sampler].value} neighbours, kappa on the summed clipped gradients")
    if method != "estimate":
        settings = conditional.BoundSettings() if settings is None else settings
        value, route = _bound_epsilon(pair, dlt, settings, method)
        return PrivacyLoss(value=value, guarantee=Guarantee.BOUND, quantity="epsilon",
                           neighboring=NEIGHBORING[sampler], source=f"{common}; {_route_source(route, settings)}")
    if rng is None:
        raise ValueError("method='estimate' needs rng (a numpy.random.Generator); got rng=None.")
    estimate = monte_carlo_epsilon(pair, delta=dlt, num_samples=num_samples, rng=rng, confidence=confidence)
    return PrivacyLoss(value=estimate.epsilon_upper, guarantee=Guarantee.ESTIMATE, quantity="epsilon",
                       neighboring=NEIGHBORING[sampler],
                       source=f"{common}; {_estimate_source(estimate, confidence, num_samples)}")


def _estimate_source(estimate: Any, confidence: float, num_samples: int) -> str:
    if estimate.grid_points_per_unit is None:
        loss = "exact privacy loss"
    else:
        loss = (f"privacy loss by the forward recursion on {estimate.grid_points_per_unit} grid points per unit of "
                f"state, allowance {estimate.grid_allowance:.2g} added; mixture importance sampling")
    return (f"Monte-Carlo upper confidence bound at level {confidence:g} ({num_samples} draws per direction, {loss}; "
            f"lower confidence bound {estimate.epsilon_lower:.6g})")


def amplified_noise_multiplier(strategy: Strategy, *, epsilon: float, delta: float, sampling_prob: float,
                               num_steps: int, sampler: str, rtol: float = 1e-3,
                               settings: conditional.BoundSettings | None = None,
                               initial: float | None = None, method: str = "bound", num_samples: int = 4000,
                               confidence: float = 0.999, rng: np.random.Generator | None = None) -> PrivacyLoss:
    """The smallest kappa (to ``rtol``) whose ``amplified_epsilon(..., method=method)`` is <= ``epsilon``.

    Always on the safe side: the returned kappa was evaluated and meets the target; a kappa smaller by the factor
    ``1 + rtol`` was evaluated and does not (a bracket of evaluated points, regula falsi in log-log). The search
    evaluates the bound with ``settings`` (default: PLD discretization 1e-3, ten times coarser than
    :func:`amplified_epsilon`'s, for speed); every discretization gives an upper bound, so the returned kappa meets
    the target whatever the discretization, and is at most about 1% larger than with a finer one.

    Where the bound is the spectral route alone (``method="spectral"``, or ``"bound"`` at rates below
    :data:`CONDITIONAL_FROM_RATE` where the block bound is not evaluated at the spectral answer) and no ``initial``
    is given, the search runs on tau = kappa / a instead (the
    Poisson-subsampled Gaussian that the bound is, :mod:`.spectral`) on the vectorized PLD estimate, certified by one
    evaluation of dp-accounting's PLD at tau, cached per (rate, steps, budget, rtol, discretization) and shared by
    every strategy at those sizes. The returned kappa is the float next to ``a * tau`` with ``kappa / a == tau``
    exactly, so the bound's epsilon at kappa is that certified value: it meets the target as computed, as with the
    search on kappa; the bracket end ``kappa / (1 + rtol)`` was evaluated by the estimate, 1e-7 below the target.

    With ``method="estimate"`` every kappa is evaluated on the same random numbers (common random numbers, drawn
    once from ``rng``), with ``num_samples`` draws per direction at level ``confidence``: the returned kappa is the
    smallest whose Monte-Carlo upper confidence bound meets the target (label ``estimate``).

    Returns:
        ``PrivacyLoss(value=kappa, guarantee="bound" or "estimate", quantity="noise_multiplier", neighboring=...)``.
    """
    from privdyn.privacy._calibration_search import smallest_safe

    sampler = validate_sampler(sampler)
    _check.scalar(epsilon=epsilon)
    _check.positive(epsilon=epsilon)
    dlt = _check.delta(delta)
    _check.scalar(rtol=rtol)
    _check.in_range(1e-6, 1.0, closed="both", rtol=rtol)
    _check.one_of(METHODS, method=method)
    settings = conditional.BoundSettings(value_discretization_interval=1e-3) if settings is None else settings
    first = dominating_pair(strategy, noise_multiplier=1.0, sampling_prob=sampling_prob, num_steps=num_steps)
    guess = float(initial) if initial is not None else _initial_guess(strategy, epsilon, dlt, sampling_prob,
                                                                       num_steps)
    target = f"calibrated to epsilon={float(epsilon)!r}, delta={dlt!r} (rtol {float(rtol):g})"
    if method != "estimate" and initial is None and (method == "spectral" or
                                                     (method == "bound" and not conditional_may_win(first))):
        scaled = _spectral_calibration(first, float(epsilon), dlt, float(rtol), settings)
        if scaled is not None and method == "bound" and blocks_may_win(
                dominating_pair(strategy, noise_multiplier=scaled, sampling_prob=sampling_prob, num_steps=num_steps)):
            guess = scaled  # the block bound may be smaller there: search below the spectral answer
        elif scaled is not None:
            return PrivacyLoss(value=scaled, guarantee=Guarantee.BOUND, quantity="noise_multiplier",
                               neighboring=NEIGHBORING[sampler],
                               source=f"{PAPER}, Theorem F.8 pair for {strategy!r}, sampler {sampler!r}; "
                                      f"{_route_source('spectral', settings)}; {target}")
    if method != "estimate":
        routes: dict[float, str] = {}

        def fn(kappa: float) -> float:
            pair = dominating_pair(strategy, noise_multiplier=kappa, sampling_prob=sampling_prob,
                                   num_steps=num_steps)
            value, routes[kappa] = _bound_epsilon(pair, dlt, settings, method)
            return value

        kappa = smallest_safe(fn, float(epsilon), guess, float(rtol))
        route = routes[min(routes, key=lambda k: abs(k - kappa))]
        return PrivacyLoss(value=kappa, guarantee=Guarantee.BOUND, quantity="noise_multiplier",
                           neighboring=NEIGHBORING[sampler],
                           source=f"{PAPER}, Theorem F.8 pair for {strategy!r}, sampler {sampler!r}; "
                                  f"{_route_source(route, settings)}; {target}")
    if rng is None:
        raise ValueError("method='estimate' needs rng (a numpy.random.Generator); got rng=None.")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}.")
    _check.integer(minimum=100, num_samples=num_samples)
    _check.scalar(confidence=confidence)
    _check.in_range(0.0, 1.0, closed="neither", confidence=confidence)
    estimate_at = _common_random_numbers(first, dlt, int(num_samples), float(confidence), rng)
    evaluated: dict[float, Any] = {}

    def fn_estimate(kappa: float) -> float:
        pair = dominating_pair(strategy, noise_multiplier=kappa, sampling_prob=sampling_prob, num_steps=num_steps)
        evaluated[kappa] = estimate_at(pair)
        return float(evaluated[kappa].epsilon_upper)

    kappa = smallest_safe(fn_estimate, float(epsilon), guess, float(rtol))
    # the search may hand back its bracket end through exp(log(kappa)): the evaluation nearest to it is that one
    nearest = min(evaluated, key=lambda k: abs(k - kappa))
    return PrivacyLoss(value=kappa, guarantee=Guarantee.ESTIMATE, quantity="noise_multiplier",
                       neighboring=NEIGHBORING[sampler],
                       source=f"{PAPER}, Theorem F.8 pair for {strategy!r}, sampler {sampler!r}; "
                              f"{_estimate_source(evaluated[nearest], confidence, num_samples)}; {target}")


_ESTIMATE_MARGIN = 1e-7
"""The tau search aims this much (relative) below the target epsilon: it runs on the vectorized PLD estimate, which
agrees with dp-accounting's value to about 1e-8 relative (4e-10 at the CIFAR-sized setting); the certificate is
dp-accounting's own evaluation."""


@functools.lru_cache(maxsize=256)
def _subsampled_gaussian_calibration(sampling_prob: float, num_steps: int, epsilon: float, delta: float, rtol: float,
                                     discretization: float) -> tuple[float, float]:
    """``(tau, epsilon at tau)``: a tau within about ``rtol`` of the smallest whose Poisson-subsampled Gaussian meets
    (epsilon, delta), and its epsilon by dp-accounting's pessimistic PLD at ``discretization`` (the certificate).

    The search evaluates :func:`privdyn.privacy._calibration_search.pld_epsilon_estimate` (the same PLD, vectorized)
    from :func:`_initial_guess` of independent noise, so the result is a pure function of its arguments; it is
    cached, and every strategy calibrated by the spectral bound at the same sizes and budget shares it.
    """
    from privdyn.privacy._calibration_search import pld_epsilon_estimate, smallest_safe
    from privdyn.privacy.amplification.spectral import subsampled_gaussian_pld
    from privdyn.privacy.correlated import Independent

    def estimate(tau: float) -> float:
        return pld_epsilon_estimate(tau, sampling_prob=sampling_prob, num_steps=num_steps, delta=delta,
                                    interval=discretization)

    guess = _initial_guess(Independent(), epsilon, delta, sampling_prob, num_steps)
    tau = smallest_safe(estimate, epsilon * (1.0 - _ESTIMATE_MARGIN), guess, rtol)
    certified = float(subsampled_gaussian_pld(tau, sampling_prob, num_steps, discretization)
                      .get_epsilon_for_delta(delta))
    return tau, certified


def _spectral_calibration(pair: DominatingPair, epsilon: float, delta: float, rtol: float,
                          settings: conditional.BoundSettings) -> float | None:
    """The spectral bound's kappa: ``a * tau`` with ``a`` the certificate of ``||A||_2`` (:mod:`.spectral`: the bound
    at kappa is the Poisson-subsampled Gaussian at ``kappa / a``), or None where the caller must search on kappa.

    kappa is chosen among the floats next to ``a * tau`` so that ``kappa / a`` is ``tau`` exactly, as the bound
    computes it (:func:`~.spectral.spectral_noise_multiplier`): the bound's epsilon at kappa is then the certified
    epsilon at tau, the very same computation, and it meets the target. None if the certificate misses the target
    (the estimate erred) or no such float exists.
    """
    a = operator_norm_bound(pair.coefficients)
    if not a > 0.0:
        return None
    tau, certified = _subsampled_gaussian_calibration(pair.sampling_prob, pair.num_steps, epsilon, delta, rtol,
                                                      settings.value_discretization_interval)
    if not certified <= epsilon:
        return None
    kappa = a * tau
    for _ in range(8):
        if kappa / a == tau:
            return kappa
        kappa = math.nextafter(kappa, math.inf if kappa / a < tau else -math.inf)
    return None


def _common_random_numbers(pair: DominatingPair, delta: float, num_samples: int, confidence: float,
                           rng: np.random.Generator) -> Any:
    """A function of the pair giving its Monte-Carlo estimate, on the same random numbers at every kappa."""
    if pair.num_steps <= MAX_ENUMERATION_STEPS:
        seed = int(rng.integers(0, 2**63 - 1))
        return lambda p: monte_carlo_epsilon(p, delta=delta, num_samples=num_samples, confidence=confidence,
                                             rng=np.random.default_rng(seed))
    draws = LongHorizonDraws.from_rng(num_samples, rng)
    return lambda p: monte_carlo_epsilon(p, delta=delta, num_samples=num_samples, confidence=confidence, rng=rng,
                                         draws=draws)


def _initial_guess(strategy: Strategy, epsilon: float, delta: float, sampling_prob: float, num_steps: int) -> float:
    """A starting kappa, meant to lie a little above the answer (a heuristic; it only sets where the search starts).

    The bound is cheap to evaluate at large kappa (small epsilon) and up to twenty times dearer below the answer, so
    the search should approach from above: 1.5 x the Poisson-subsampled Gaussian's RDP calibration (closed form,
    cheap) x the sum of the encoder's coefficients (1/(1 - lambda) for lambda-CGD, 1 for independent noise). On the
    reference settings of ``data/kappa_reference.json`` this lands between 1.0 and 1.7 times the calibrated kappa.
    """
    from privdyn.privacy._calibration_search import _poisson_start

    c = np.asarray(strategy.encoder_coefficients(num_steps), dtype=float)
    independent, _ = _poisson_start(sampling_prob=sampling_prob, num_steps=num_steps, epsilon=epsilon, delta=delta)
    return 1.5 * independent * max(1.0, float(np.abs(c).sum()))
