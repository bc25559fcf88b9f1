"""The Monte-Carlo estimate at long horizons (lambda-CGD): the forward recursion and the importance sampler.

Oracles independent of the code under test: the enumeration of all ``2^T`` participation patterns (the pair's exact
privacy loss, short horizons), dp-accounting's PLD of the Poisson-subsampled Gaussian (the pair at lambda = 0, any
horizon), and the conditional-composition bound, which an estimate's lower confidence bound must never exceed.
"""

from __future__ import annotations

import numpy as np
import pytest

from privdyn.privacy import amplified_epsilon
from privdyn.privacy.amplification import BoundSettings, amplified_noise_multiplier
from privdyn.privacy.amplification.forward import geometric_ratio, privacy_loss_forward
from privdyn.privacy.amplification.monte_carlo import LongHorizonDraws, monte_carlo_epsilon
from privdyn.privacy.amplification.pair import dominating_pair, privacy_loss_exact
from privdyn.privacy.correlated import BufferedToeplitz, Independent, LambdaCGD, Toeplitz
from privdyn.privacy.labels import Guarantee


def _draws(pair, m, seed):
    rng = np.random.default_rng(seed)
    y = (rng.random((m, pair.num_steps)) < pair.sampling_prob).astype(float)
    return y @ pair.encoder_matrix().T + pair.noise_multiplier * rng.standard_normal((m, pair.num_steps))


@pytest.mark.parametrize("lam,kappa,r,steps", [(0.5, 1.0, 0.3, 10), (0.9, 2.0, 0.1, 12), (0.7, 0.7, 0.5, 12),
                                               (0.3, 0.5, 1.0, 8)])
def test_forward_recursion_converges_to_the_enumeration(lam, kappa, r, steps):
    pair = dominating_pair(LambdaCGD(lam), noise_multiplier=kappa, sampling_prob=r, num_steps=steps)
    theta = _draws(pair, 200, 1)
    exact = privacy_loss_exact(pair, theta)
    errors = [float(np.max(np.abs(privacy_loss_forward(pair, theta, q) - exact))) for q in (8, 16, 32, 64)]
    assert errors[-1] < 2e-4, errors
    # third order: each doubling of q divides the error by about 8 (at least 4 allowed for the pre-asymptotic range)
    assert all(b < a / 4 for a, b in zip(errors[1:], errors[2:], strict=False)), errors


def test_forward_recursion_is_exact_without_correlation():
    pair = dominating_pair(Independent(), noise_multiplier=1.0, sampling_prob=0.2, num_steps=10)
    theta = _draws(pair, 100, 2)
    assert np.allclose(privacy_loss_forward(pair, theta, 4), privacy_loss_exact(pair, theta), atol=1e-12, rtol=0)


def test_forward_recursion_refuses_other_encoders_and_bad_grids():
    toeplitz = dominating_pair(Toeplitz([1.0, 0.6, 0.3]), noise_multiplier=1.0, sampling_prob=0.2, num_steps=30)
    blt = dominating_pair(BufferedToeplitz([0.9, 0.5], [0.3, 0.2]), noise_multiplier=1.0, sampling_prob=0.2,
                          num_steps=30)
    assert geometric_ratio(toeplitz) is None and geometric_ratio(blt) is None
    with pytest.raises(ValueError, match="lambda-CGD"):
        privacy_loss_forward(toeplitz, np.zeros((1, 30)), 8)
    cgd = dominating_pair(LambdaCGD(0.5), noise_multiplier=1.0, sampling_prob=0.2, num_steps=30)
    assert geometric_ratio(cgd) == 0.5
    with pytest.raises(ValueError, match="grid_points_per_unit"):
        privacy_loss_forward(cgd, np.zeros((1, 30)), 2)
    with pytest.raises(ValueError, match="columns"):
        privacy_loss_forward(cgd, np.zeros((1, 29)), 8)


@pytest.mark.parametrize("r,kappa,steps,delta,width", [(0.2, 6.0, 200, 1e-5, 0.1), (0.5, 18.75, 100, 1e-5, 0.1),
                                                       (0.05, 2.0, 400, 1e-6, 0.25), (0.01, 1.0, 300, 1e-5, 1.0)])
def test_long_horizon_estimate_brackets_dp_accounting_at_lambda0(r, kappa, steps, delta, width):
    # At lambda = 0 the pair is the Poisson-subsampled Gaussian: dp-accounting's PLD is exact up to its
    # discretization (1e-4 here); the importance-sampled estimate must bracket it (up to the 0.01 epsilon grid).
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(r, dp_accounting.GaussianDpEvent(kappa)), steps)
    reference = float(PLDAccountant(value_discretization_interval=1e-4).compose(event).get_epsilon(delta))
    pair = dominating_pair(LambdaCGD(0.0), noise_multiplier=kappa, sampling_prob=r, num_steps=steps)
    mc = monte_carlo_epsilon(pair, delta=delta, num_samples=2000, rng=np.random.default_rng(5))
    assert mc.grid_points_per_unit is not None
    assert mc.epsilon_lower - 0.01 <= reference <= mc.epsilon_upper + 0.01, (mc, reference)
    # informative: the interval's width relative to epsilon (narrow where the noise dominates the privacy loss, wider
    # where the few participations of a small sampling rate do)
    assert mc.epsilon_upper - mc.epsilon_lower < width * reference


@pytest.mark.slow
def test_bound_never_below_the_long_horizon_estimate():
    kw = dict(noise_multiplier=8.0, sampling_prob=0.2, num_steps=60, delta=1e-5, sampler="poisson")
    bound = amplified_epsilon(LambdaCGD(0.7), settings=BoundSettings(value_discretization_interval=1e-3), **kw)
    pair = dominating_pair(LambdaCGD(0.7), noise_multiplier=8.0, sampling_prob=0.2, num_steps=60)
    mc = monte_carlo_epsilon(pair, delta=1e-5, num_samples=2000, rng=np.random.default_rng(7))
    assert mc.epsilon_lower <= float(bound), (mc, float(bound))
    assert mc.epsilon_upper <= 1.5 * float(bound)  # informative, not vacuous: the bound is within ~10% here


def test_estimate_calibration_uses_common_random_numbers():
    kw = dict(epsilon=1.0, delta=1e-5, sampling_prob=0.2, num_steps=20, sampler="fixed_size", rtol=0.05,
              method="estimate", num_samples=500)
    first = amplified_noise_multiplier(LambdaCGD(0.5), rng=np.random.default_rng(3), **kw)
    again = amplified_noise_multiplier(LambdaCGD(0.5), rng=np.random.default_rng(3), **kw)
    assert first.guarantee is Guarantee.ESTIMATE and float(first) == float(again)
    # on the same draws, the returned kappa meets the target and one smaller by the factor 1 + rtol does not
    draws = LongHorizonDraws.from_rng(500, np.random.default_rng(3))
    for kappa, meets in [(float(first), True), (float(first) / 1.05, False)]:
        pair = dominating_pair(LambdaCGD(0.5), noise_multiplier=kappa, sampling_prob=0.2, num_steps=20)
        at = monte_carlo_epsilon(pair, delta=1e-5, num_samples=500, rng=np.random.default_rng(0), draws=draws)
        assert (at.epsilon_upper <= 1.0) is meets, (kappa, at)
    with pytest.raises(ValueError, match="rng"):
        amplified_noise_multiplier(LambdaCGD(0.5), **kw)


def test_long_horizon_estimate_is_reproducible_and_labelled():
    kw = dict(noise_multiplier=5.0, sampling_prob=0.1, num_steps=50, delta=1e-5, sampler="poisson",
              method="estimate", num_samples=500)
    a = amplified_epsilon(LambdaCGD(0.5), rng=np.random.default_rng(11), **kw)
    b = amplified_epsilon(LambdaCGD(0.5), rng=np.random.default_rng(11), **kw)
    assert float(a) == float(b) and a.guarantee is Guarantee.ESTIMATE
    assert "forward recursion" in a.source and "allowance" in a.source


def test_shipped_estimate_columns_are_consistent_and_recompute():
    # Every shipped row carries the estimate; at the bound's kappa its lower confidence bound never exceeds the
    # target; one entry (T = 100) is recomputed from its seed and must agree exactly (same draws, same grid).
    from privdyn.privacy.amplification.reference_table import _at_bound, load_table

    rows = load_table()
    for row in rows:
        assert row["kappa_estimate"] > 0 and row["epsilon_estimate_lower_at_kappa_bound"] <= row["epsilon"], row
        assert row["epsilon_estimate_lower_at_kappa_bound"] <= row["epsilon_estimate_at_kappa_bound"]
    row = next(r for r in rows if r["num_steps"] == 100 and r["noise_correlation"] == 0.3)
    again = _at_bound(row, row["estimate_samples"], row["estimate_seed"])
    assert again["epsilon_estimate_at_kappa_bound"] == row["epsilon_estimate_at_kappa_bound"]
    assert again["epsilon_estimate_lower_at_kappa_bound"] == row["epsilon_estimate_lower_at_kappa_bound"]
