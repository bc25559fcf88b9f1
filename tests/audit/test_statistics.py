"""The audit's statistics against independent oracles: the binomial distribution, numerical integration."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privdyn.audit.gaussian import gaussian_shift_delta, gaussian_shift_epsilon
from privdyn.audit.statistics import clopper_pearson_upper, epsilon_lower_bound, threshold_audit


@pytest.mark.parametrize(("successes", "trials"), [(0, 10), (3, 10), (17, 10_000), (999, 1000)])
@pytest.mark.parametrize("confidence", [0.95, 1 - 1e-6])
def test_clopper_pearson_upper_is_the_exact_binomial_limit(successes, trials, confidence):
    upper = float(clopper_pearson_upper(successes, trials, confidence=confidence))
    # the defining property: at p_u, seeing <= successes has probability 1 - confidence
    assert stats.binom.cdf(successes, trials, upper) == pytest.approx(1 - confidence, rel=1e-6)


def test_clopper_pearson_upper_edges_and_errors():
    assert clopper_pearson_upper(10, 10, confidence=0.9) == 1.0
    assert float(clopper_pearson_upper(0, 10, confidence=0.9)) == pytest.approx(1 - 0.1 ** (1 / 10))
    with pytest.raises(ValueError, match="successes must be <= trials"):
        clopper_pearson_upper(11, 10, confidence=0.9)
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson_upper(1, 10, confidence=1.0)
    with pytest.raises(TypeError, match="trials"):
        clopper_pearson_upper(1, 10.5, confidence=0.5)


def test_epsilon_lower_bound_follows_the_recipe():
    fp, fn, n, delta, conf = 12, 4000, 10_000, 1e-5, 0.99
    level = 1 - (1 - conf) / 2
    fpr = stats.beta.ppf(level, fp + 1, n - fp)
    fnr = stats.beta.ppf(level, fn + 1, n - fn)
    expected = max(math.log((1 - delta - fnr) / fpr), math.log((1 - delta - fpr) / fnr), 0.0)
    assert float(epsilon_lower_bound(fp, fn, trials=n, delta=delta, confidence=conf)) == pytest.approx(expected,
                                                                                                      rel=1e-12)
    # a useless test certifies nothing
    assert float(epsilon_lower_bound(5000, 5000, trials=n, delta=delta, confidence=conf)) == 0.0


def test_threshold_audit_covers_a_known_mechanism():
    """Randomized response with epsilon = 1 (delta = 0): over 200 seeds, the 95% bound never exceeds 1 by more
    than the 5% the confidence allows (expected failures 10; z = 5 on the binomial count gives <= 21)."""
    eps, runs, failures = 1.0, 2000, 0
    p = math.exp(eps) / (1 + math.exp(eps))
    for seed in range(200):
        rng = np.random.default_rng(seed)
        draws = [(rng.random(runs) < (p if side else 1 - p)).astype(float) for side in (0, 1, 0, 1)]
        result = threshold_audit((draws[0], draws[1]), (draws[2], draws[3]), delta=0.0, confidence=0.95)
        failures += result.epsilon_lower_bound > eps
    assert failures <= 10 + 5 * math.sqrt(200 * 0.05 * 0.95)


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.5])
@pytest.mark.parametrize("epsilon", [0.0, 0.5, 2.0])
def test_gaussian_shift_delta_is_the_hockey_stick_integral(mu, epsilon):
    """delta(epsilon) = integral of (p - e^eps q)_+ for p = N(mu, 1), q = N(0, 1), by quadrature."""
    crossing = epsilon / mu + mu / 2  # p > e^eps q exactly for x > crossing
    integral, _ = integrate.quad(lambda x: stats.norm.pdf(x, mu) - math.exp(epsilon) * stats.norm.pdf(x),
                                 crossing, np.inf, epsabs=1e-14, epsrel=1e-12)
    assert gaussian_shift_delta(mu, epsilon=epsilon) == pytest.approx(integral, rel=1e-8, abs=1e-15)


def test_gaussian_shift_epsilon_inverts_delta():
    for mu in (0.2, 1.0, 3.0):
        eps = gaussian_shift_epsilon(mu, delta=1e-5)
        assert gaussian_shift_delta(mu, epsilon=eps) == pytest.approx(1e-5, rel=1e-8)
    assert gaussian_shift_epsilon(1e-9, delta=0.5) == 0.0
    with pytest.raises(ValueError, match="delta"):
        gaussian_shift_epsilon(1.0, delta=0.0)
    with pytest.raises(ValueError, match="mu"):
        gaussian_shift_epsilon(-1.0, delta=0.1)
