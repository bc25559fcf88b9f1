"""Random allocation (balls-in-bins) with Gaussian noise: the accountant against independent oracles.

Oracles: the exact Gaussian epsilon (t = 1), a Monte-Carlo estimate from the exact pair (its lower confidence bound
at z = 5 must not exceed the accountant's delta), the certified lower bound of the same module (a different
discretization: convex-order contraction instead of spreading), Poisson sampling at the same rate (Feldman &
Shenfeld), and pld-accounting 2.0 (the slow comparison, marked ``slow``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special

from privdyn.privacy import random_allocation as ra

Z = 5.0


def _gaussian_delta(epsilon: float, sigma: float) -> float:
    """The Gaussian mechanism's exact delta(epsilon) at sensitivity 1 (Balle & Wang 2018, Theorem 8)."""
    return float(special.ndtr(0.5 / sigma - epsilon * sigma)
                 - math.exp(epsilon) * special.ndtr(-0.5 / sigma - epsilon * sigma))


def _exact_gaussian_epsilon(sigma: float, delta: float) -> float:
    return float(optimize.brentq(lambda e: _gaussian_delta(e, sigma) - delta, 0.0, 100.0, xtol=1e-12))


def _monte_carlo_delta(sigma: float, t: int, epochs: int, epsilon: float, samples: int,
                       rng: np.random.Generator) -> tuple[float, float]:
    """delta(epsilon) of the exact pair, both directions, estimated by sampling the privacy loss: returns the
    larger estimate and its standard error. Remove: L = log mean_j exp((y_j - 1/2)/sigma^2) under P (one
    coordinate shifted by 1); add: -L under Q. delta = E[(1 - exp(epsilon - L))_+], a variable in [0, 1]."""
    a = 1.0 / sigma ** 2
    results = []
    for direction in ("remove", "add"):
        total = np.zeros(samples)
        for _ in range(epochs):
            y = rng.standard_normal((samples, t)) * sigma
            if direction == "remove":
                y[np.arange(samples), rng.integers(0, t, samples)] += 1.0
            loss = special.logsumexp((y - 0.5) * a, axis=1) - math.log(t)
            total += loss if direction == "remove" else -loss
        values = np.clip(-np.expm1(epsilon - total), 0.0, None)
        results.append((float(values.mean()), float(values.std(ddof=1) / math.sqrt(samples))))
    return max(results)


def test_one_step_per_epoch_is_the_gaussian_mechanism():
    for sigma in (0.7, 1.0, 2.0):
        exact = _exact_gaussian_epsilon(sigma, 1e-5)
        upper = float(ra.epsilon(sigma, steps_per_epoch=1, num_epochs=1, delta=1e-5).value)
        lower = ra.epsilon_lower_bound(sigma, steps_per_epoch=1, num_epochs=1, delta=1e-5)
        assert lower <= exact <= upper
        assert upper - lower <= 2e-3 * exact


SLOW = pytest.mark.slow


@pytest.mark.parametrize(("sigma", "t", "epochs", "delta"), [
    (1.0, 10, 1, 1e-2),
    pytest.param(0.7, 4, 3, 1e-2, marks=SLOW),
    pytest.param(1.5, 20, 2, 1e-3, marks=SLOW),
])
def test_never_below_a_monte_carlo_lower_confidence_bound(sigma, t, epochs, delta):
    """The accountant's epsilon has delta(epsilon) <= delta; the Monte-Carlo lower confidence bound of the exact
    pair's delta at that epsilon must not exceed delta (z = 5; the estimator is unbiased, no bias allowance)."""
    upper = float(ra.epsilon(sigma, steps_per_epoch=t, num_epochs=epochs, delta=delta).value)
    lower = ra.epsilon_lower_bound(sigma, steps_per_epoch=t, num_epochs=epochs, delta=delta)
    rng = np.random.default_rng(20261127)
    estimate, se = _monte_carlo_delta(sigma, t, epochs, upper, 100_000, rng)
    assert estimate - Z * se <= delta
    # And the certified lower bound is consistent with the estimate: at it, delta is at least the target.
    estimate_low, se_low = _monte_carlo_delta(sigma, t, epochs, lower, 100_000, rng)
    assert estimate_low + Z * se_low >= delta


SETTINGS = [(1.0, 10, 1), pytest.param(1.0, 1000, 1, marks=SLOW), pytest.param(0.8, 100, 3, marks=SLOW),
            (2.0, 10, 20)]


@pytest.mark.parametrize(("sigma", "t", "epochs"), SETTINGS)
def test_upper_and_certified_lower_bounds_are_within_half_a_percent(sigma, t, epochs):
    upper = float(ra.epsilon(sigma, steps_per_epoch=t, num_epochs=epochs, delta=1e-5).value)
    lower = ra.epsilon_lower_bound(sigma, steps_per_epoch=t, num_epochs=epochs, delta=1e-5)
    assert 0.0 < lower <= upper <= 1.005 * lower


@pytest.mark.parametrize(("sigma", "t", "epochs"), SETTINGS)
def test_at_most_poisson_at_the_same_rate(sigma, t, epochs):
    """Feldman & Shenfeld (arXiv 2602.17284): for the Gaussian mechanism random allocation is at least as private
    as Poisson sampling at rate 1/t over the same steps: our upper bound is at most dp-accounting's Poisson
    epsilon (connect-the-dots at interval 1e-4, the number a Poisson user reports)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    poisson = pld.from_gaussian_mechanism(sigma, sampling_prob=1.0 / t, value_discretization_interval=1e-4,
                                          use_connect_dots=True).self_compose(t * epochs)
    upper = float(ra.epsilon(sigma, steps_per_epoch=t, num_epochs=epochs, delta=1e-5).value)
    assert upper <= poisson.get_epsilon_for_delta(1e-5)


def test_pld_accounting_quick():
    """pld-accounting 2.0 (Feldman & Shenfeld's implementation) brackets our epsilon at one fast setting."""
    pld_accounting = pytest.importorskip("PLD_accounting")
    params = pld_accounting.PrivacyParams(sigma=1.0, num_steps=10, num_epochs=1, delta=1e-5)
    config = pld_accounting.AllocationSchemeConfig()
    theirs = pld_accounting.gaussian_allocation_epsilon_configurable(params=params, config=config)
    ours = float(ra.epsilon(1.0, steps_per_epoch=10, num_epochs=1, delta=1e-5).value)
    assert abs(ours - theirs) <= 0.01 * theirs


@pytest.mark.slow
@pytest.mark.parametrize(("sigma", "t", "epochs", "discretization"), [
    (1.0, 1000, 1, 3e-3), (0.8, 100, 10, 1e-2), (2.0, 10, 10, 1e-2), (0.9, 50, 4, 1e-2)])
# Not here: (2, 10, 100), (1, 100, 100) and (0.8, 50, 20) (pld-accounting did not finish in 25 minutes on a 2-core
# machine), and (1, 10,000, 1) (epsilon ~ 0.037: at 2e-3, 26 minutes, pld-accounting's upper bound is 1.6% above
# ours while its own bracket [0.0339, 0.0379] has not converged; docs/accounting.md).
def test_pld_accounting_brackets_and_matches_within_one_percent(sigma, t, epochs, discretization):
    """pld-accounting's own lower bound (IS_DOMINATED) <= our epsilon <= its upper bound (DOMINATES, default
    configuration), and ours is within 1% of its upper bound at a loss discretization fine for this epsilon (its
    default 1e-2 is 7-27% of epsilon at the two small-epsilon settings and loose there by 2-8%). Minutes each."""
    pld_accounting = pytest.importorskip("PLD_accounting")
    params = pld_accounting.PrivacyParams(sigma=sigma, num_steps=t, num_epochs=epochs, delta=1e-5)

    def theirs(bound, loss_discretization=1e-2):
        config = pld_accounting.AllocationSchemeConfig(loss_discretization=loss_discretization)
        return pld_accounting.gaussian_allocation_epsilon_configurable(params=params, config=config, bound_type=bound)

    ours = float(ra.epsilon(sigma, steps_per_epoch=t, num_epochs=epochs, delta=1e-5).value)
    assert theirs(pld_accounting.BoundType.IS_DOMINATED) <= ours <= theirs(pld_accounting.BoundType.DOMINATES)
    fine = theirs(pld_accounting.BoundType.DOMINATES, discretization)
    assert abs(ours - fine) <= 0.01 * fine


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(sigma=0.0), "sigma"), (dict(sigma=math.nan), "sigma"), (dict(steps_per_epoch=0), "steps_per_epoch"),
    (dict(num_epochs=1.5), "num_epochs"), (dict(delta=1.0), "delta"), (dict(neighboring="replace_one"),
                                                                       "neighboring"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = dict(sigma=1.0, steps_per_epoch=10, num_epochs=1, delta=1e-5) | kwargs
    sigma = args.pop("sigma")
    with pytest.raises((ValueError, TypeError), match=name):
        ra.epsilon(sigma, **args)
