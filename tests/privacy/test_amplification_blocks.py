"""The two-step block bound of the amplification accountant (lambda-CGD).

Oracles, independent of the code under test: numpy's inverse and eigenvalues (the covariance domination of the
proposition), dp-accounting's PLD of the Poisson-subsampled Gaussian (lambda = 0), the Monte-Carlo estimate of the
Theorem F.8 pair (exact privacy loss by enumeration on short horizons, the forward recursion on long ones), and the
spectral bound. Expensive points are marked ``slow``.
"""

from __future__ import annotations

import numpy as np
import pytest

from privdyn.privacy import amplified_epsilon
from privdyn.privacy.amplification import BoundSettings, amplified_noise_multiplier
from privdyn.privacy.amplification.blocks import (
    BLOCKS_BELOW_SIGNAL,
    blocks_epsilon,
    blocks_may_win,
    blocks_pld,
    geometric_ratio,
)
from privdyn.privacy.amplification.monte_carlo import monte_carlo_epsilon
from privdyn.privacy.amplification.pair import dominating_pair
from privdyn.privacy.correlated import BufferedToeplitz, Independent, LambdaCGD, SquareRoot
from privdyn.privacy.labels import Guarantee


def _pair(lam, kappa, q, steps):
    return dominating_pair(LambdaCGD(lam), noise_multiplier=kappa, sampling_prob=q, num_steps=steps)


def _epsilon(method, lam, kappa, q, steps, delta, interval=1e-4):
    return float(amplified_epsilon(LambdaCGD(lam), noise_multiplier=kappa, sampling_prob=q, num_steps=steps,
                                   delta=delta, sampler="poisson", method=method,
                                   settings=BoundSettings(value_discretization_interval=interval)))


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.7, 0.95])
@pytest.mark.parametrize("steps", [1, 2, 3, 6, 9])
def test_block_covariance_is_below_the_whitened_noise(lam, steps):
    # Sigma = A^-1 A^-T (A_{t,u} = lam^(t-u)) dominates Sigma_B = (1 - lam)^2 I + lam L_B in the Loewner order
    idx = np.arange(steps)
    lag = idx[:, None] - idx[None, :]
    a = np.where(lag >= 0, lam ** np.clip(lag, 0, None), 0.0)
    inverse = np.linalg.inv(a)
    sigma = inverse @ inverse.T
    laplacian = np.zeros((steps, steps))
    for t in range(0, steps - 1, 2):  # the kept edges (0, 1), (2, 3), ...
        edge = np.zeros(steps)
        edge[t], edge[t + 1] = 1.0, -1.0
        laplacian += np.outer(edge, edge)
    sigma_b = (1 - lam) ** 2 * np.eye(steps) + lam * laplacian
    assert np.linalg.eigvalsh(sigma - sigma_b).min() >= -1e-9
    # the decomposition of the module docstring, exactly:
    # (1 - lam)^2 I + lam L_T + lam (1 - lam) e_0 e_0^T + lam e_T e_T^T
    path = np.zeros((steps, steps))
    for t in range(steps - 1):
        edge = np.zeros(steps)
        edge[t], edge[t + 1] = 1.0, -1.0
        path += np.outer(edge, edge)
    ends = np.zeros((steps, steps))
    ends[0, 0] += lam * (1 - lam)
    ends[-1, -1] += lam
    np.testing.assert_allclose(sigma, (1 - lam) ** 2 * np.eye(steps) + lam * path + ends, atol=1e-12)


def test_geometric_ratio_and_when_the_bound_evaluates_it():
    assert geometric_ratio(LambdaCGD(0.7).encoder_coefficients(50)) == pytest.approx(0.7, rel=1e-15)
    assert geometric_ratio(Independent().encoder_coefficients(10)) == 0.0
    assert geometric_ratio(2.0 * 0.5 ** np.arange(8)) == 0.5  # a scaled encoder: k = kappa / c_0
    assert geometric_ratio(SquareRoot().encoder_coefficients(20)) is None
    assert geometric_ratio(BufferedToeplitz([0.9, 0.5], [0.3, 0.2]).encoder_coefficients(20)) is None
    assert geometric_ratio(np.array([1.0, 1.0, 1.0])) is None  # lambda = 1: not contracting
    assert blocks_may_win(_pair(0.7, 3.0, 0.01, 100))  # k (1 - lambda) = 0.9
    assert not blocks_may_win(_pair(0.3, 3.0, 0.01, 100))  # 2.1 >= BLOCKS_BELOW_SIGNAL
    assert not blocks_may_win(_pair(0.0, 0.5, 0.01, 100))  # independent noise: the spectral bound is exact
    assert not blocks_may_win(_pair(0.7, 1.0, 0.01, 1))  # one step: no block


@pytest.mark.parametrize("lam,kappa,q", [(0.3, 3.0, 0.05), (0.3, 3.0, 0.01), (0.5, 4.0, 0.05), (0.6, 5.0, 0.3)])
def test_skipping_the_blocks_at_the_threshold_loses_nothing(lam, kappa, q):
    """``method="bound"`` skips the block bound where kappa (1 - lambda) >= BLOCKS_BELOW_SIGNAL (a speed rule): at
    the threshold's edge, where the blocks come closest to winning, they are not below the spectral bound."""
    from privdyn.privacy.amplification.spectral import spectral_epsilon

    pair = _pair(lam, kappa, q, 100)
    assert kappa * (1 - lam) >= BLOCKS_BELOW_SIGNAL and not blocks_may_win(pair)
    assert blocks_epsilon(pair, 1e-5, 1e-3) >= spectral_epsilon(pair, 1e-5, 1e-3)


def test_below_the_threshold_the_blocks_win():
    from privdyn.privacy.amplification.spectral import spectral_epsilon

    pair = _pair(0.7, 3.0, 0.05, 100)  # kappa (1 - lambda) = 0.9
    assert blocks_may_win(pair)
    assert blocks_epsilon(pair, 1e-5, 1e-3) < 0.9 * spectral_epsilon(pair, 1e-5, 1e-3)


@pytest.mark.parametrize("q,kappa,steps,delta", [(0.05, 2.0, 100, 1e-5), (0.01, 1.0, 301, 1e-5), (0.3, 3.0, 10, 1e-3)])
def test_lambda0_is_at_or_above_dp_accounting_and_close(q, kappa, steps, delta):
    import dp_accounting

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(kappa)), steps)
    exact = float(dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4).compose(event)
                  .get_epsilon(delta))
    ours = blocks_epsilon(_pair(0.0, kappa, q, steps), delta, 1e-4)
    assert exact * (1 - 1e-3) <= ours <= exact * 1.03, (ours, exact)


SHORT = [(0.7, 1.0, 0.3, 8, 1e-2), (0.3, 0.5, 0.2, 7, 1e-2)]
SHORT_SLOW = [(0.5, 0.7, 0.05, 12, 1e-3), (0.9, 2.0, 0.1, 12, 1e-3)]


@pytest.mark.parametrize("lam,kappa,q,steps,delta",
                         SHORT + [pytest.param(*p, marks=pytest.mark.slow) for p in SHORT_SLOW])
def test_never_below_the_exact_pair_on_short_horizons(lam, kappa, q, steps, delta):
    # the Monte-Carlo estimate with the pair's exact privacy loss (enumeration); its lower confidence bound is at
    # level 0.999 one-sided, Bonferroni-corrected over the epsilon grid and both directions
    pair = _pair(lam, kappa, q, steps)
    mc = monte_carlo_epsilon(pair, delta=delta, num_samples=20_000, rng=np.random.default_rng(31))
    assert blocks_epsilon(pair, delta, 1e-4) >= mc.epsilon_lower, mc


def test_never_below_the_long_horizon_estimate_and_tighter_than_spectral():
    lam, q, kappa, steps, delta = 0.7, 0.01, 3.0, 100, 1e-5
    mc = monte_carlo_epsilon(_pair(lam, kappa, q, steps), delta=delta, num_samples=2000,
                             rng=np.random.default_rng(32))
    blocks = _epsilon("blocks", lam, kappa, q, steps, delta)
    spectral = _epsilon("spectral", lam, kappa, q, steps, delta)
    assert mc.epsilon_lower <= blocks <= 0.75 * spectral, (mc, blocks, spectral)


@pytest.mark.slow
@pytest.mark.parametrize("lam,q,kappa,steps,delta", [(0.23, 0.012, 1.2, 900, 1e-3), (0.7, 0.01, 3.0, 1000, 1e-5),
                                                     (0.3, 0.01, 1.0, 1000, 1e-5), (0.5, 0.05, 1.0, 100, 1e-5)])
def test_never_below_the_long_horizon_estimate_grid(lam, q, kappa, steps, delta):
    mc = monte_carlo_epsilon(_pair(lam, kappa, q, steps), delta=delta, num_samples=8000,
                             rng=np.random.default_rng(33))
    assert _epsilon("blocks", lam, kappa, q, steps, delta) >= mc.epsilon_lower, mc


def test_bound_takes_the_smaller_route_and_names_it():
    settings = BoundSettings(value_discretization_interval=1e-3)
    for lam, kappa, q, steps, winner in [(0.7, 3.0, 0.01, 100, "two-step block bound"),
                                         (0.3, 3.0, 0.05, 101, "spectral bound")]:
        loss = amplified_epsilon(LambdaCGD(lam), noise_multiplier=kappa, sampling_prob=q, num_steps=steps,
                                 delta=1e-5, sampler="poisson", settings=settings)
        expected = min(_epsilon("spectral", lam, kappa, q, steps, 1e-5, interval=1e-3),
                       _epsilon("blocks", lam, kappa, q, steps, 1e-5, interval=1e-3)
                       if blocks_may_win(_pair(lam, kappa, q, steps)) else np.inf)
        assert float(loss) == expected and loss.guarantee is Guarantee.BOUND
        assert winner in loss.source
    # fixed-size batches (zero-out neighbours) have the same pair
    fixed = amplified_epsilon(LambdaCGD(0.7), noise_multiplier=3.0, sampling_prob=0.01, num_steps=100, delta=1e-5,
                              sampler="fixed_size", settings=settings)
    assert float(fixed) == _epsilon("blocks", 0.7, 3.0, 0.01, 100, 1e-5, interval=1e-3)


def test_odd_horizons_and_full_participation():
    import dp_accounting

    # T odd: the floor(T/2) blocks, then one Poisson-subsampled Gaussian step at k (1 - lambda) (the last 1 x 1 block)
    lam, kappa, q, interval = 0.5, 1.5, 0.05, 1e-3
    even = blocks_pld(_pair(lam, kappa, q, 40), interval)
    single = dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=kappa * (1 - lam), sensitivity=1.0, sampling_prob=q, pessimistic_estimate=True,
        value_discretization_interval=interval)
    odd = blocks_epsilon(_pair(lam, kappa, q, 41), 1e-5, interval)
    assert odd == even.compose(single).get_epsilon_for_delta(1e-5)
    # two more steps (one more block) never lower epsilon
    assert blocks_epsilon(_pair(lam, kappa, q, 40), 1e-5, interval) <= blocks_epsilon(_pair(lam, kappa, q, 42), 1e-5,
                                                                                      interval)
    # r = 1: every step participates (two of the four patterns have weight zero)
    assert np.isfinite(_epsilon("blocks", 0.5, 3.0, 1.0, 10, 1e-5, interval=1e-3))


def test_calibration_uses_the_block_bound_where_it_wins_and_meets_the_target():
    lam, q, steps, eps, delta = 0.7, 0.01, 100, 0.7, 1e-5
    kw = dict(epsilon=eps, delta=delta, sampling_prob=q, num_steps=steps, sampler="poisson")
    bound = amplified_noise_multiplier(LambdaCGD(lam), **kw)
    spectral = amplified_noise_multiplier(LambdaCGD(lam), method="spectral", **kw)
    assert float(bound) < 0.9 * float(spectral), (float(bound), float(spectral))
    assert "two-step block bound" in bound.source
    assert _epsilon("bound", lam, float(bound), q, steps, delta, interval=1e-3) <= eps


def test_non_geometric_encoders_are_refused_by_the_block_route():
    with pytest.raises(ValueError, match="lambda-CGD only.*BufferedToeplitz"):
        amplified_epsilon(BufferedToeplitz([0.9, 0.5], [0.3, 0.2]), noise_multiplier=2.0, sampling_prob=0.01,
                          num_steps=20, delta=1e-5, sampler="poisson", method="blocks")
