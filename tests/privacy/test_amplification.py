"""The amplification accountant for correlated noise (privdyn.privacy.amplification).

Oracles, all independent of the code under test: dp-accounting's PLD of the Poisson-subsampled Gaussian (the
Theorem F.8 pair at lambda = 0), a Monte-Carlo estimate of the pair's epsilon with its exact privacy loss by
enumeration (short horizons), Theorem F.12's closed form with the proved constant 2, and dp-accounting's own
``MixtureGaussianPrivacyLoss``. Expensive grids are marked ``slow`` (``pytest -m slow``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from privdyn.privacy import amplified_epsilon
from privdyn.privacy.amplification import BoundSettings, amplified_noise_multiplier
from privdyn.privacy.amplification import conditional as cb
from privdyn.privacy.amplification.monte_carlo import monte_carlo_epsilon
from privdyn.privacy.amplification.pair import dominating_pair, privacy_loss_exact
from privdyn.privacy.correlated import BandedInverse, BufferedToeplitz, Independent, LambdaCGD, SquareRoot, Toeplitz
from privdyn.privacy.correlated_calibration import noise_multiplier_theorem_f12
from privdyn.privacy.labels import Guarantee, NeighboringRelation

COARSE = BoundSettings(value_discretization_interval=1e-3)  # a valid bound too; ten times fewer PLD points


def _poisson_pld_epsilon(q: float, kappa: float, steps: int, delta: float) -> float:
    import dp_accounting

    event = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(
        kappa)), steps)
    return float(dp_accounting.pld.PLDAccountant().compose(event).get_epsilon(delta))


# ---------------------------------------------------------------------------------------------------------------
# lambda = 0: the pair is the Poisson-subsampled Gaussian
# ---------------------------------------------------------------------------------------------------------------

LAMBDA0_QUICK = [(0.001, 0.7, 20_000, 1e-6), (0.01, 1.0, 1000, 1e-5), (0.2, 2.0, 50, 1e-3)]
LAMBDA0_SLOW = list(itertools.product([0.0005, 0.01, 0.3], [0.6, 1.5, 5.0], [10, 2000, 100_000], [1e-8, 1e-5]))


def _check_lambda0(q: float, kappa: float, steps: int, delta: float) -> None:
    reference = _poisson_pld_epsilon(q, kappa, steps, delta)
    for strategy, sampler in [(LambdaCGD(0.0), "poisson"), (Independent(), "fixed_size")]:
        loss = amplified_epsilon(strategy, noise_multiplier=kappa, sampling_prob=q, num_steps=steps, delta=delta,
                                 sampler=sampler)
        assert loss.guarantee is Guarantee.BOUND
        assert abs(float(loss) - reference) <= 0.01 * reference, (strategy, sampler, float(loss), reference)


@pytest.mark.parametrize("q,kappa,steps,delta", LAMBDA0_QUICK)
def test_lambda0_matches_dp_accounting(q, kappa, steps, delta):
    _check_lambda0(q, kappa, steps, delta)


@pytest.mark.slow
@pytest.mark.parametrize("q,kappa,steps,delta", LAMBDA0_SLOW)
def test_lambda0_matches_dp_accounting_grid(q, kappa, steps, delta):
    _check_lambda0(q, kappa, steps, delta)


# ---------------------------------------------------------------------------------------------------------------
# Never below the Monte-Carlo lower confidence bound (exact privacy loss, short horizons)
# ---------------------------------------------------------------------------------------------------------------

MC_QUICK = [(LambdaCGD(0.5), 3.0, 0.1, 8, 1e-2)]
MC_SLOW = [(LambdaCGD(0.3), 1.5, 0.2, 8, 1e-2), (LambdaCGD(0.9), 3.0, 0.1, 10, 1e-3),
           (BufferedToeplitz([0.9, 0.5], [0.3, 0.2]), 2.0, 0.1, 8, 1e-2),
           (Toeplitz([1.0, 0.6, 0.3]), 2.0, 0.2, 8, 1e-2),
           (SquareRoot(), 2.5, 0.1, 8, 1e-2), (BandedInverse([1.0, -0.4, -0.2]), 2.0, 0.1, 8, 1e-2),
           (LambdaCGD(0.7), 4.0, 0.05, 12, 1e-4)]


def _check_above_monte_carlo(strategy, kappa, q, steps, delta, seed, settings=None):
    # z from a 0.999 one-sided level, Bonferroni over the epsilon grid and both directions (monte_carlo_epsilon).
    pair = dominating_pair(strategy, noise_multiplier=kappa, sampling_prob=q, num_steps=steps)
    mc = monte_carlo_epsilon(pair, delta=delta, num_samples=40_000, rng=np.random.default_rng(seed))
    # both formal routes: the default (spectral below rate 0.9) and the conditional composition on its own
    for method in ("bound", "conditional"):
        bound = float(amplified_epsilon(strategy, noise_multiplier=kappa, sampling_prob=q, num_steps=steps,
                                        delta=delta, sampler="poisson", settings=settings, method=method))
        assert bound >= mc.epsilon_lower, (strategy, method, bound, mc)


@pytest.mark.parametrize("strategy,kappa,q,steps,delta", MC_QUICK)
def test_bound_never_below_monte_carlo(strategy, kappa, q, steps, delta):
    # The quick run checks the coarse discretization (also a valid bound); the slow grid checks the default.
    _check_above_monte_carlo(strategy, kappa, q, steps, delta, seed=11, settings=COARSE)


@pytest.mark.slow
@pytest.mark.parametrize("strategy,kappa,q,steps,delta", MC_SLOW)
def test_bound_never_below_monte_carlo_grid(strategy, kappa, q, steps, delta):
    _check_above_monte_carlo(strategy, kappa, q, steps, delta, seed=12)


def test_monte_carlo_brackets_the_exact_lambda0_value():
    # At lambda = 0 the pair's epsilon is dp-accounting's (to its discretization): the interval must contain it.
    pair = dominating_pair(LambdaCGD(0.0), noise_multiplier=1.0, sampling_prob=0.2, num_steps=8)
    mc = monte_carlo_epsilon(pair, delta=1e-2, num_samples=40_000, rng=np.random.default_rng(3))
    reference = _poisson_pld_epsilon(0.2, 1.0, 8, 1e-2)
    assert mc.epsilon_lower <= reference <= mc.epsilon_upper + 0.01  # + the grid step of the estimate


def test_estimate_label_and_reproducibility():
    kwargs = dict(noise_multiplier=2.0, sampling_prob=0.1, num_steps=6, delta=1e-2, sampler="fixed_size",
                  method="estimate", num_samples=5000)
    a = amplified_epsilon(LambdaCGD(0.5), rng=np.random.default_rng(5), **kwargs)
    b = amplified_epsilon(LambdaCGD(0.5), rng=np.random.default_rng(5), **kwargs)
    assert a.guarantee is Guarantee.ESTIMATE and a.neighboring is NeighboringRelation.ZERO_OUT
    assert float(a) == float(b)


# ---------------------------------------------------------------------------------------------------------------
# At most Theorem F.12 (proved constant 2) wherever F.12 applies
# ---------------------------------------------------------------------------------------------------------------

F12_QUICK = [(0.5, 1000, 100, 400, 1.0, 1e-5)]
F12_SLOW = [(lam, n, b, t, eps, dlt) for lam in (0.3, 0.7, 0.9)
            for (n, b, t, eps, dlt) in [(10_000, 1000, 1000, 0.5, 1e-6), (10_000, 5000, 100, 1.0, 1e-5),
                                        (50_000, 500, 5000, 1.0, 1e-5)]]


def _check_below_f12(lam, n, b, steps, eps, dlt):
    kappa = float(noise_multiplier_theorem_f12(lam, n=n, batch_size=b, num_steps=steps, epsilon=eps, delta=dlt,
                                               constant=2.0))
    bound = float(amplified_epsilon(LambdaCGD(lam), noise_multiplier=kappa, sampling_prob=b / n, num_steps=steps,
                                    delta=dlt, sampler="fixed_size"))
    assert bound <= eps, (lam, n, b, steps, bound, eps)
    return bound


@pytest.mark.parametrize("lam,n,b,steps,eps,dlt", F12_QUICK)
def test_at_most_theorem_f12(lam, n, b, steps, eps, dlt):
    _check_below_f12(lam, n, b, steps, eps, dlt)


@pytest.mark.slow
@pytest.mark.parametrize("lam,n,b,steps,eps,dlt", F12_SLOW)
def test_at_most_theorem_f12_grid(lam, n, b, steps, eps, dlt):
    _check_below_f12(lam, n, b, steps, eps, dlt)


# ---------------------------------------------------------------------------------------------------------------
# Monotonicity
# ---------------------------------------------------------------------------------------------------------------


def _eps(kappa=8.0, q=0.05, steps=60, lam=0.5, delta=1e-5, settings=COARSE):
    return float(amplified_epsilon(LambdaCGD(lam), noise_multiplier=kappa, sampling_prob=q, num_steps=steps,
                                   delta=delta, sampler="poisson", settings=settings))


def test_monotone_in_kappa_steps_and_rate():
    kappas = [_eps(kappa=k) for k in (6.0, 8.0, 12.0)]
    assert kappas[0] > kappas[1] > kappas[2]
    steps = [_eps(steps=t) for t in (20, 60, 200)]
    assert steps[0] < steps[1] < steps[2]
    rates = [_eps(q=q) for q in (0.01, 0.05, 0.2)]
    assert rates[0] < rates[1] < rates[2]


# ---------------------------------------------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------------------------------------------


def test_calibration_is_on_the_safe_side():
    kw = dict(epsilon=1.0, delta=1e-5, sampling_prob=0.5, num_steps=20, sampler="poisson")
    result = amplified_noise_multiplier(LambdaCGD(0.5), rtol=1e-2, **kw)
    kappa = float(result)
    assert result.guarantee is Guarantee.BOUND and result.quantity == "noise_multiplier"
    # COARSE is the calibration's own evaluator; the default (finer) bound meets the target too.
    assert _eps(kappa=kappa, q=0.5, steps=20) <= 1.0 < _eps(kappa=kappa / 1.01, q=0.5, steps=20)
    assert _eps(kappa=kappa, q=0.5, steps=20, settings=None) <= 1.0


# ---------------------------------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------------------------------


def test_vectorized_mixture_pld_equals_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    sens, probs = np.array([0.0, 0.5, 1.0, 1.7]), np.array([0.85, 0.08, 0.05, 0.02])
    reference = pld_lib.from_mixture_gaussian_mechanism(1.5, sens.tolist(), probs.tolist(),
                                                        value_discretization_interval=1e-3)
    ours = cb.mixture_pld(1.5, sens, probs, 1e-3)
    for eps in (0.0, 0.2, 0.7, 1.5, 3.0):
        np.testing.assert_allclose(ours.get_delta_for_epsilon(eps), reference.get_delta_for_epsilon(eps), rtol=1e-6)


def test_privacy_loss_exact_against_direct_densities():
    from scipy.stats import multivariate_normal

    strategy, kappa, q, steps = LambdaCGD(0.6), 1.3, 0.3, 3
    pair = dominating_pair(strategy, noise_multiplier=kappa, sampling_prob=q, num_steps=steps)
    c = np.abs(strategy.encoder_matrix(steps))
    theta = np.random.default_rng(0).normal(size=(5, steps))
    density_p = np.zeros(5)
    for bits in itertools.product([0, 1], repeat=steps):
        y = np.array(bits, dtype=float)
        weight = q ** y.sum() * (1 - q) ** (steps - y.sum())
        density_p += weight * multivariate_normal(c @ y, kappa**2 * np.eye(steps)).pdf(theta)
    density_q = multivariate_normal(np.zeros(steps), kappa**2 * np.eye(steps)).pdf(theta)
    np.testing.assert_allclose(privacy_loss_exact(pair, theta), np.log(density_p / density_q), rtol=1e-10)


def test_row_mixture_dominates_rounding():
    # Rounding up and moving atoms up never lowers the law: the mixture's CDF lies below the exact one.
    values = np.array([1.0, 0.3, 0.09, 0.027])
    probs = np.array([0.1, 0.2, 0.2, 0.2])
    settings = BoundSettings(grid_step=2.0**-4, max_atoms=4)
    support, mass = cb._mixture(values, probs, 0.0, settings)
    exact = {}
    for bits in itertools.product([0, 1], repeat=4):
        b = np.array(bits)
        exact[float(values @ b)] = exact.get(float(values @ b), 0.0) + float(np.prod(np.where(b, probs, 1 - probs)))
    for x in np.linspace(0, 2, 41):
        exact_cdf = sum(p for v, p in exact.items() if v <= x)
        ours_cdf = float(mass[support <= x].sum())
        assert ours_cdf <= exact_cdf + 1e-12


# ---------------------------------------------------------------------------------------------------------------
# Refusals and validation
# ---------------------------------------------------------------------------------------------------------------


def test_refusals_and_bad_input():
    kw = dict(noise_multiplier=2.0, sampling_prob=0.1, num_steps=10, delta=1e-5)
    with pytest.raises(ValueError, match="shuffle"):
        amplified_epsilon(LambdaCGD(0.5), sampler="shuffle", **kw)
    with pytest.raises(ValueError, match="sampler"):
        amplified_epsilon(LambdaCGD(0.5), sampler="uniform", **kw)
    with pytest.raises(ValueError, match="method"):
        amplified_epsilon(LambdaCGD(0.5), sampler="poisson", method="rdp", **kw)
    with pytest.raises(ValueError, match="rng"):
        amplified_epsilon(LambdaCGD(0.5), sampler="poisson", method="estimate", **kw)
    with pytest.raises(TypeError, match="strategy"):
        amplified_epsilon(np.eye(3), sampler="poisson", **kw)
    with pytest.raises(ValueError, match="sampling_prob"):
        amplified_epsilon(LambdaCGD(0.5), sampler="poisson", **{**kw, "sampling_prob": 0.0})
    with pytest.raises(ValueError, match="noise_multiplier"):
        amplified_epsilon(LambdaCGD(0.5), sampler="poisson", **{**kw, "noise_multiplier": -1.0})
    with pytest.raises(ValueError, match="delta"):
        amplified_epsilon(LambdaCGD(0.5), sampler="poisson", **{**kw, "delta": 1.0})
    with pytest.raises(ValueError, match="lambda-CGD encoder"):
        amplified_epsilon(Toeplitz([1.0, 0.6, 0.3]), sampler="poisson", method="estimate",
                          rng=np.random.default_rng(0), **{**kw, "num_steps": 40})


def test_neighbouring_relation_per_sampler():
    kw = dict(noise_multiplier=10.0, sampling_prob=0.1, num_steps=20, delta=1e-5, settings=COARSE)
    assert amplified_epsilon(LambdaCGD(0.3), sampler="poisson", **kw).neighboring is NeighboringRelation.ADD_REMOVE
    assert amplified_epsilon(LambdaCGD(0.3), sampler="fixed_size", **kw).neighboring is NeighboringRelation.ZERO_OUT
    assert math.isfinite(float(amplified_epsilon(SquareRoot(), sampler="poisson", **kw)))


# ---------------------------------------------------------------------------------------------------------------
# The shipped kappa(lambda) table
# ---------------------------------------------------------------------------------------------------------------


def _table_entry(rows, n, lam):
    return next(r for r in rows if r["n"] == n and r["batch_size"] == (5000 if n == 10_000 else 500)
                and r["noise_correlation"] == lam)


def test_shipped_table_is_complete_and_consistent():
    from privdyn.privacy.amplification.reference_table import NOISE_CORRELATIONS, REFERENCE_SETTINGS, load_table

    rows = load_table()
    assert len(rows) == len(REFERENCE_SETTINGS) * len(NOISE_CORRELATIONS)
    for row in rows:
        sizes = {k: row[k] for k in ("n", "batch_size", "num_steps", "epsilon", "delta")}
        for constant in (8.0, 2.0):
            f12 = float(noise_multiplier_theorem_f12(row["noise_correlation"], constant=constant, **sizes))
            assert row[f"kappa_f12_constant{int(constant)}"] == pytest.approx(f12, rel=1e-12)
        assert row["kappa_bound"] < row["kappa_f12_constant2"]


@pytest.mark.parametrize("n,lam", [(10_000, 0.0), (10_000, 0.3)])
def test_shipped_table_recomputes(n, lam):
    # A few entries are recomputed (the rest take minutes): the calibration is deterministic.
    from privdyn.privacy.amplification.reference_table import _entry, load_table

    row = _table_entry(load_table(), n, lam)
    setting = {k: row[k] for k in ("n", "batch_size", "num_steps", "epsilon", "delta")}
    again = _entry(setting, lam, row["rtol"])
    assert again["kappa_bound"] == pytest.approx(row["kappa_bound"], rel=1e-9)
