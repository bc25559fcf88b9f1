"""The spectral bound of the amplification accountant and the routes of ``method="bound"``.

Oracles, independent of the code under test: numpy's dense singular values (the certified operator norm), the
Monte-Carlo estimate of the Theorem F.8 pair (exact privacy loss by enumeration on short horizons; the forward
recursion for lambda-CGD on long ones), dp-accounting's PLD and RDP calibration of the Poisson-subsampled Gaussian
at lambda = 0. Expensive points are marked ``slow``.
"""

from __future__ import annotations

import numpy as np
import pytest

from privdyn.privacy import amplified_epsilon
from privdyn.privacy.amplification import BoundSettings, amplified_noise_multiplier
from privdyn.privacy.amplification import accountant as acc
from privdyn.privacy.amplification.monte_carlo import monte_carlo_epsilon
from privdyn.privacy.amplification.pair import dominating_pair
from privdyn.privacy.amplification.spectral import (
    MAX_CERTIFIED_STEPS,
    operator_norm_bound,
    spectral_noise_multiplier,
)
from privdyn.privacy.correlated import BandedInverse, BufferedToeplitz, Independent, LambdaCGD, SquareRoot, Toeplitz
from privdyn.privacy.labels import Guarantee

STRATEGIES = [LambdaCGD(0.01), LambdaCGD(0.5), LambdaCGD(0.95), BufferedToeplitz([0.9, 0.5], [0.3, 0.2]),
              Toeplitz([1.0, 0.6, 0.3]), SquareRoot(), BandedInverse([1.0, -0.4, -0.2]), Independent()]


def _pld_epsilon(q: float, kappa: float, steps: int, delta: float) -> float:
    import dp_accounting

    event = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(
        kappa)), steps)
    return float(dp_accounting.pld.PLDAccountant().compose(event).get_epsilon(delta))


def _spectral(strategy, **kw) -> float:
    return float(amplified_epsilon(strategy, sampler="poisson", method="spectral", **kw))


# ---------------------------------------------------------------------------------------------------------------
# The constant ||A||_2 and the kernel of the proposition
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES, ids=repr)
@pytest.mark.parametrize("steps", [1, 2, 7, 60, 600])
def test_operator_norm_bound_is_certified_and_tight(strategy, steps):
    pair = dominating_pair(strategy, noise_multiplier=1.0, sampling_prob=0.1, num_steps=steps)
    exact = float(np.linalg.norm(pair.encoder_matrix(), 2))
    bound = operator_norm_bound(pair.coefficients)
    assert bound >= exact * (1 - 1e-13), (strategy, steps, bound, exact)
    # dense eigenvectors up to 512 steps; power iterations above (the cap sum(c) bounds both)
    assert bound <= exact * (1 + (1e-7 if steps <= 512 else 1e-2)), (strategy, steps, bound, exact)
    assert bound <= float(np.sum(pair.coefficients)) * (1 + 2e-9)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=repr)
def test_kernel_noise_covariance_is_positive_semidefinite(strategy):
    # the proposition's kernel adds N(0, kappa^2 I - tau^2 A A^T): it must exist
    pair = dominating_pair(strategy, noise_multiplier=2.0, sampling_prob=0.1, num_steps=200)
    tau = spectral_noise_multiplier(pair)
    a = pair.encoder_matrix()
    smallest = float(np.linalg.eigvalsh(pair.noise_multiplier**2 * np.eye(200) - tau**2 * a @ a.T)[0])
    assert smallest >= -1e-10 * pair.noise_multiplier**2, (strategy, smallest)


def test_operator_norm_bound_rejects_bad_coefficients_and_caps_long_horizons():
    with pytest.raises(ValueError, match="coefficients"):
        operator_norm_bound(np.array([1.0, -0.5]))
    with pytest.raises(ValueError, match="coefficients"):
        operator_norm_bound(np.array([]))
    c = 0.5 ** np.arange(MAX_CERTIFIED_STEPS + 1)
    assert operator_norm_bound(c) == pytest.approx(float(np.sum(c)) * (1 + 1e-9), rel=1e-15)


# ---------------------------------------------------------------------------------------------------------------
# lambda = 0 and continuity at lambda = 0
# ---------------------------------------------------------------------------------------------------------------


CONTINUITY_QUICK = [(0.012, 1.2, 900, 1e-3), (0.3, 10.0, 100, 1e-5)]
CONTINUITY_SLOW = [(0.01, 1.0, 1000, 1e-5), (0.05, 3.0, 1000, 1e-6), (0.001, 0.7, 20_000, 1e-6)]


def _check_continuity(q, kappa, steps, delta):
    reference = _pld_epsilon(q, kappa, steps, delta)
    kw = dict(noise_multiplier=kappa, sampling_prob=q, num_steps=steps, delta=delta)
    at0 = _spectral(LambdaCGD(0.0), **kw)
    assert abs(at0 - reference) <= 0.01 * reference, (at0, reference)
    near0 = [_spectral(LambdaCGD(lam), **kw) for lam in (1e-6, 1e-3, 1e-2)]
    assert at0 <= near0[0] <= near0[1] <= near0[2] <= 1.05 * at0, (at0, near0)
    # the route the allow-list uses (below CONDITIONAL_FROM_RATE it is the spectral bound)
    assert float(amplified_epsilon(LambdaCGD(0.01), sampler="poisson", method="bound", **kw)) == near0[2]


@pytest.mark.parametrize("q,kappa,steps,delta", CONTINUITY_QUICK)
def test_lambda0_equals_dp_accounting_and_continuity(q, kappa, steps, delta):
    _check_continuity(q, kappa, steps, delta)


@pytest.mark.slow
@pytest.mark.parametrize("q,kappa,steps,delta", CONTINUITY_SLOW)
def test_lambda0_equals_dp_accounting_and_continuity_grid(q, kappa, steps, delta):
    _check_continuity(q, kappa, steps, delta)


# ---------------------------------------------------------------------------------------------------------------
# Never below the Monte-Carlo lower confidence bound
# ---------------------------------------------------------------------------------------------------------------

SHORT_QUICK = [(LambdaCGD(0.5), 1.0, 0.3, 8, 1e-2), (SquareRoot(), 1.5, 0.2, 6, 1e-2)]
SHORT_SLOW = [(LambdaCGD(0.5), 1.0, 0.3, 10, 1e-2), (SquareRoot(), 1.5, 0.2, 8, 1e-2),
              (LambdaCGD(0.9), 2.0, 0.1, 12, 1e-3), (BufferedToeplitz([0.9, 0.5], [0.3, 0.2]), 1.0, 0.3, 8, 1e-2),
              (Toeplitz([1.0, 0.6, 0.3]), 0.8, 0.5, 8, 1e-2), (BandedInverse([1.0, -0.4, -0.2]), 1.5, 0.1, 10, 1e-3),
              (LambdaCGD(0.3), 0.7, 0.05, 12, 1e-3), (LambdaCGD(0.7), 3.0, 1.0, 8, 1e-2)]


def _check_short(strategy, kappa, q, steps, delta, seed, samples=40_000):
    # z from a 0.999 one-sided level, Bonferroni over the epsilon grid and both directions (monte_carlo_epsilon)
    pair = dominating_pair(strategy, noise_multiplier=kappa, sampling_prob=q, num_steps=steps)
    mc = monte_carlo_epsilon(pair, delta=delta, num_samples=samples, rng=np.random.default_rng(seed))
    bound = _spectral(strategy, noise_multiplier=kappa, sampling_prob=q, num_steps=steps, delta=delta)
    assert bound >= mc.epsilon_lower, (strategy, bound, mc)


@pytest.mark.parametrize("strategy,kappa,q,steps,delta", SHORT_QUICK)
def test_spectral_never_below_monte_carlo(strategy, kappa, q, steps, delta):
    _check_short(strategy, kappa, q, steps, delta, seed=21, samples=20_000)


@pytest.mark.slow
@pytest.mark.parametrize("strategy,kappa,q,steps,delta", SHORT_SLOW)
def test_spectral_never_below_monte_carlo_grid(strategy, kappa, q, steps, delta):
    _check_short(strategy, kappa, q, steps, delta, seed=22)


LONG_QUICK = [(0.5, 0.05, 3.0, 200, 1e-3)]
LONG_SLOW = [(0.23, 0.012, 1.2, 900, 1e-3), (0.61, 0.045, 3.3, 700, 1e-3), (0.7, 0.3, 10.0, 100, 1e-5),
             (0.5, 0.01, 1.0, 1000, 1e-5), (0.3, 0.05, 3.0, 1000, 1e-5)]


def _check_long(lam, q, kappa, steps, delta, samples, seed):
    pair = dominating_pair(LambdaCGD(lam), noise_multiplier=kappa, sampling_prob=q, num_steps=steps)
    mc = monte_carlo_epsilon(pair, delta=delta, num_samples=samples, rng=np.random.default_rng(seed))
    bound = _spectral(LambdaCGD(lam), noise_multiplier=kappa, sampling_prob=q, num_steps=steps, delta=delta)
    assert bound >= mc.epsilon_lower, (lam, q, kappa, steps, bound, mc)
    return bound, mc


@pytest.mark.parametrize("lam,q,kappa,steps,delta", LONG_QUICK)
def test_spectral_never_below_long_horizon_estimate(lam, q, kappa, steps, delta):
    bound, mc = _check_long(lam, q, kappa, steps, delta, samples=2000, seed=23)
    assert bound <= 2.0 * mc.epsilon_upper  # informative: the bound is not vacuous here


@pytest.mark.slow
@pytest.mark.parametrize("lam,q,kappa,steps,delta", LONG_SLOW)
def test_spectral_never_below_long_horizon_estimate_grid(lam, q, kappa, steps, delta):
    _check_long(lam, q, kappa, steps, delta, samples=8000, seed=24)


# ---------------------------------------------------------------------------------------------------------------
# The routes of method="bound", labels and calibration
# ---------------------------------------------------------------------------------------------------------------


def test_bound_is_the_smaller_route_and_labelled():
    kw = dict(noise_multiplier=3.0, sampling_prob=0.95, num_steps=4, delta=1e-3, sampler="poisson",
              settings=BoundSettings(value_discretization_interval=1e-3))
    strategy = LambdaCGD(0.3)
    assert acc.conditional_may_win(dominating_pair(strategy, noise_multiplier=3.0, sampling_prob=0.95,
                                                   num_steps=4))
    values = {m: amplified_epsilon(strategy, method=m, **kw) for m in ("bound", "spectral", "conditional")}
    assert all(v.guarantee is Guarantee.BOUND for v in values.values())
    assert float(values["bound"]) == min(float(values["spectral"]), float(values["conditional"]))
    winner = "spectral" if float(values["spectral"]) <= float(values["conditional"]) else "conditional composition"
    assert winner in values["bound"].source
    # independent noise, and rates below CONDITIONAL_FROM_RATE: the conditional composition is not evaluated
    assert not acc.conditional_may_win(dominating_pair(Independent(), noise_multiplier=0.5, sampling_prob=1.0,
                                                       num_steps=10))
    assert not acc.conditional_may_win(dominating_pair(LambdaCGD(0.5), noise_multiplier=1.0,
                                                       sampling_prob=0.99 * acc.CONDITIONAL_FROM_RATE, num_steps=10))


def test_spectral_calibration_is_the_rescaled_lambda0_calibration():
    # epsilon_spectral(kappa) = epsilon_poisson(kappa / a): the calibrated kappa is a times dp-accounting's
    lam, q, steps, eps, delta = 0.5, 0.01, 1000, 2.0, 1e-5
    result = amplified_noise_multiplier(LambdaCGD(lam), epsilon=eps, delta=delta, sampling_prob=q, num_steps=steps,
                                        sampler="poisson", method="spectral", rtol=1e-3)
    kappa = float(result)
    assert result.guarantee is Guarantee.BOUND and "spectral" in result.source
    a = operator_norm_bound(lam ** np.arange(steps))
    assert _pld_epsilon(q, kappa / a, steps, delta) <= eps * (1 + 2e-3)
    assert _pld_epsilon(q, kappa / a / 1.003, steps, delta) > eps * (1 - 2e-3)


def test_spectral_calibrations_share_tau_and_meet_the_target_whatever_the_order():
    # at rates below CONDITIONAL_FROM_RATE the bound's calibration is a * tau, tau shared (cached) between strategies:
    # each kappa meets the target as the bound computes it, kappa / (1 + rtol) does not, and the order of the calls
    # does not change a result (the tau search starts from a guess that depends on the sizes and budget only)
    q, steps, eps, delta, rtol = 0.05, 60, 1.5, 1e-5, 1e-2
    strategies = [LambdaCGD(0.2), BandedInverse([1.0, -0.4, 0.1])]

    def calibrate(strategy):
        return float(amplified_noise_multiplier(strategy, epsilon=eps, delta=delta, sampling_prob=q, num_steps=steps,
                                                sampler="poisson", rtol=rtol))

    acc._subsampled_gaussian_calibration.cache_clear()
    forward = [calibrate(s) for s in strategies]
    acc._subsampled_gaussian_calibration.cache_clear()
    backward = [calibrate(s) for s in reversed(strategies)][::-1]
    assert forward == backward
    assert acc._subsampled_gaussian_calibration.cache_info().misses == 1
    for strategy, kappa in zip(strategies, forward, strict=True):
        assert float(amplified_epsilon(strategy, noise_multiplier=kappa, sampling_prob=q, num_steps=steps,
                                       delta=delta, sampler="poisson",
                                       settings=BoundSettings(value_discretization_interval=1e-3))) <= eps
        assert float(amplified_epsilon(strategy, noise_multiplier=kappa / (1 + 1.5 * rtol), sampling_prob=q,
                                       num_steps=steps, delta=delta, sampler="poisson",
                                       settings=BoundSettings(value_discretization_interval=1e-3))) > eps


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="method"):
        amplified_epsilon(LambdaCGD(0.5), noise_multiplier=1.0, sampling_prob=0.1, num_steps=10, delta=1e-5,
                          sampler="poisson", method="rdp")
