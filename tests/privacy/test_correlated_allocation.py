"""Correlated noise under random allocation: the one-step-per-epoch sensitivity bound against brute force, the
Gaussian curve against mpmath and two other implementations, the reductions to known cases, and the allow-list
rows."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from privdyn.privacy import accounting, correlated, random_allocation
from privdyn.privacy import correlated_allocation as ca

STRATEGIES = [
    correlated.LambdaCGD(0.5),
    correlated.LambdaCGD(0.9),
    correlated.BufferedToeplitz([0.9, 0.5], [0.1, 0.2]),
    correlated.Toeplitz([1.0, 0.5, 0.25]),
    correlated.BandedInverse([1.0, 0.5, 0.3]),  # encoder coefficients of both signs
    correlated.Toeplitz([1.0, -0.7, 0.4]),
    correlated.Independent(),
]
SHAPES = [(1, 6), (2, 4), (3, 3), (4, 3), (5, 2), (7, 1)]  # (steps per epoch t, epochs E)


def _brute_force(strategy, t, epochs):
    """max over one-step-per-epoch sets S of sum_{u,v in S} G_uv and of sum |G_uv| (G = C^T C), by enumeration."""
    encoder = strategy.encoder_matrix(t * epochs)
    gram = encoder.T @ encoder
    best = best_abs = 0.0
    for steps in itertools.product(*(range(e * t, (e + 1) * t) for e in range(epochs))):
        block = np.ix_(steps, steps)
        best, best_abs = max(best, gram[block].sum()), max(best_abs, np.abs(gram[block]).sum())
    return best, best_abs


@pytest.mark.parametrize("strategy", STRATEGIES, ids=repr)
@pytest.mark.parametrize(("t", "epochs"), SHAPES)
def test_the_sensitivity_bound_is_at_least_the_enumerated_maximum(strategy, t, epochs):
    best, best_abs = _brute_force(strategy, t, epochs)
    sens = ca.allocation_sensitivity(strategy, steps_per_epoch=t, num_epochs=epochs)
    assert sens.guarantee.value == "bound" and sens.quantity == "sensitivity"
    assert float(sens.value) ** 2 >= best_abs * (1 - 1e-12) >= best * (1 - 1e-12)
    # the dynamic programme's set is a one-step-per-epoch set: its value never exceeds the enumerated maximum
    bound = ca._allocation_bound(strategy.encoder_coefficients(t * epochs), t, epochs)
    assert np.all(bound.witness // t == np.arange(epochs))
    column = strategy.encoder_matrix(t * epochs)[:, bound.witness].sum(axis=1)
    assert float(column @ column) <= best * (1 + 1e-12)


@pytest.mark.parametrize(("t", "epochs"), SHAPES)
def test_banded_and_independent_encoders_are_exact_where_the_horizon_does_not_bind(t, epochs):
    # at t = 2, E = 4 the best set needs the last steps, where the horizon cuts the band (the bound drops no term)
    banded = () if (t, epochs) == (2, 4) else (correlated.Toeplitz([1.0, 0.5, 0.25]),)
    for strategy in (correlated.Independent(), *banded):
        best, _ = _brute_force(strategy, t, epochs)
        sens = ca.allocation_sensitivity(strategy, steps_per_epoch=t, num_epochs=epochs)
        assert float(sens.value) ** 2 == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_at_training_horizons_the_bound_is_within_a_percent_of_an_attained_set(lam):
    """T = 10,000 (t = 100, E = 100): the horizon's effect is negligible and the dynamic programme's set attains the
    bound to 0.1%, so the sensitivity is not what makes the bound loose (amplification is)."""
    strategy = correlated.LambdaCGD(lam)
    c = strategy.encoder_coefficients(10_000)
    bound = ca._allocation_bound(c, 100, 100)
    column = np.zeros(10_000)
    for p in bound.witness:
        column[p:] += c[: 10_000 - p]
    assert float(column @ column) <= bound.squared <= 1.001 * float(column @ column)
    # lambda-CGD's closed form away from the horizon: adjacent pairs at every other epoch boundary, E / (1 - lam)
    assert bound.squared == pytest.approx(100 / (1 - lam), rel=1e-3)


def test_reductions_to_known_sensitivities():
    """One epoch: the largest column norm. One step per epoch (t = 1): full participation, the sensitivity of all T
    steps (:func:`correlated.sensitivity`, exact for non-negative, non-increasing coefficients). Independent noise:
    sqrt(E)."""
    for strategy in (correlated.LambdaCGD(0.7), correlated.BufferedToeplitz([0.9, 0.5], [0.1, 0.2])):
        one = ca.allocation_sensitivity(strategy, steps_per_epoch=50, num_epochs=1)
        assert float(one.value) == pytest.approx(float(correlated.sensitivity(strategy, 50)), rel=1e-12)
        full = ca.allocation_sensitivity(strategy, steps_per_epoch=1, num_epochs=60)
        assert float(full.value) == pytest.approx(
            float(correlated.sensitivity(strategy, 60, max_participations=60)), rel=1e-12)
    assert float(ca.allocation_sensitivity(correlated.Independent(), steps_per_epoch=10,
                                           num_epochs=30).value) == pytest.approx(math.sqrt(30), rel=1e-12)


def _mpmath_epsilon(mu, delta):
    mpmath.mp.dps = 50
    mu, delta = mpmath.mpf(mu), mpmath.mpf(delta)

    def curve(eps):
        return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)

    low, high = mpmath.mpf(0), mpmath.mpf(1)
    while curve(high) > delta:
        high *= 2
    for _ in range(120):  # bisection: the curve decreases in epsilon
        middle = (low + high) / 2
        low, high = (middle, high) if curve(middle) > delta else (low, middle)
    return float(high)


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
def test_the_gaussian_curve_matches_mpmath_and_is_on_the_safe_side(mu, delta):
    from dp_accounting.pld import privacy_loss_mechanism

    from privdyn.audit.gaussian import gaussian_shift_epsilon

    exact_delta_at_zero = float(2 * mpmath.ncdf(mpmath.mpf(mu) / 2) - 1)
    eps = ca.gaussian_epsilon(mu, delta)
    if exact_delta_at_zero <= delta:
        assert eps == 0.0
        return
    exact = _mpmath_epsilon(mu, delta)
    assert exact <= eps <= exact * (1 + 1e-6) + 1e-9
    assert eps == pytest.approx(gaussian_shift_epsilon(mu, delta=delta), rel=1e-6)
    mechanism = privacy_loss_mechanism.GaussianPrivacyLoss(1.0 / mu, sensitivity=1.0)
    assert mechanism.get_delta_for_epsilon(eps) <= delta * (1 + 1e-9)


def test_independent_noise_is_never_below_the_amplified_accountant_and_equal_at_full_participation():
    """Ignoring amplification, independent noise over E epochs is the Gaussian mechanism at sqrt(E) / kappa: at
    least the random-allocation PLD's epsilon, and equal to it (to its discretization) at t = 1."""
    for t, epochs, kappa in ((1, 20, 4.0), (10, 20, 4.0), (100, 5, 2.0)):
        ours = float(ca.unamplified_epsilon(correlated.Independent(), kappa, steps_per_epoch=t, num_epochs=epochs,
                                            delta=1e-5).value)
        gaussian = ca.gaussian_epsilon(math.sqrt(epochs) / kappa, 1e-5)
        assert gaussian <= ours <= gaussian * (1 + 1e-9)  # the sensitivity carries its rounding margin
        amplified = float(random_allocation.epsilon(kappa, steps_per_epoch=t, num_epochs=epochs, delta=1e-5).value)
        assert ours >= amplified * (1 - 1e-3)  # the PLD is an upper bound at its discretization
        if t == 1:
            assert amplified == pytest.approx(ours, rel=5e-3)
        # the spectral route at C = I (a = 1, up to its 1e-9 slack) is the independent accountant itself (the PLD's
        # grid follows sigma, so a 1e-9 change of sigma moves epsilon by up to about 1e-7 either way)
        spectral = float(ca.spectral_epsilon(correlated.Independent(), kappa, steps_per_epoch=t, num_epochs=epochs,
                                             delta=1e-5).value)
        assert spectral == pytest.approx(amplified, rel=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES[:4], ids=repr)
def test_calibration_is_on_the_safe_side_and_tight(strategy):
    sizes = dict(steps_per_epoch=100, num_epochs=50, delta=1e-6)
    kappa = ca.unamplified_noise_multiplier(strategy, epsilon=2.0, **sizes)
    assert kappa.guarantee.value == "bound" and kappa.quantity == "noise_multiplier"
    at = float(ca.unamplified_epsilon(strategy, float(kappa.value), **sizes).value)
    assert 2.0 * (1 - 1e-6) <= at <= 2.0
    more = [float(ca.unamplified_epsilon(strategy, float(kappa.value) * f, **sizes).value) for f in (1.5, 3.0)]
    assert at > more[0] > more[1] > 0.0


@pytest.mark.parametrize("kind", ["lambda_cgd", "blt", "banded_inverse", "toeplitz"])
@pytest.mark.parametrize("relation", ["add_remove", "zero_out"])
def test_the_allow_list_rows_report_the_bound_and_calibrate_with_it(kind, relation):
    strategy = {"lambda_cgd": correlated.LambdaCGD(0.9), "blt": correlated.BufferedToeplitz([0.9, 0.5], [0.1, 0.2]),
                "banded_inverse": correlated.BandedInverse([1.0, 0.5, 0.3]),
                "toeplitz": correlated.Toeplitz([1.0, 0.5, 0.25])}[kind]
    sizes = dict(n=1_000, batch_size=100, num_steps=35, delta=1e-5)  # t = 10 steps per epoch, 3.5 epochs -> 4
    row = accounting.accountant_for(strategy, sampler="random_allocation", neighboring=relation)
    assert row.accountant == "allocation_bound" and row.guarantee.value == "bound" and row.conditions
    loss = accounting.dpsgd_epsilon(strategy, noise_multiplier=8.0, sampler="random_allocation",
                                    neighboring=relation, **sizes)
    direct = ca.epsilon(strategy, 8.0, steps_per_epoch=10, num_epochs=4, delta=1e-5, neighboring=relation)
    assert float(loss.value) == float(direct.value) and loss.sampler == "random_allocation"
    assert loss.neighboring.value == relation
    with pytest.raises(accounting.NotAccountableError) as caught:
        accounting.accountant_for(strategy, sampler="random_allocation", neighboring="replace_one")
    assert caught.value.reason == "correlated_replace_one"


@pytest.mark.parametrize(("strategy", "epsilon", "route"), [
    pytest.param(correlated.LambdaCGD(0.9), 8.0, "Gaussian", marks=pytest.mark.slow),
    (correlated.BufferedToeplitz([0.9, 0.5], [0.1, 0.2]), 3.0, "spectral"),
])
def test_the_rows_calibrate_on_the_safe_side_within_rtol(strategy, epsilon, route):
    """The row's kappa is the smaller of the two routes' (each certified): for lambda-CGD (0.9) at epsilon = 8 and one
    step in ten the unamplified bound needs less noise, for the BLT at epsilon = 3 the spectral route does."""
    sizes = dict(n=1_000, batch_size=100, num_steps=95, delta=1e-5, sampler="random_allocation",
                 neighboring="add_remove")
    kappa = accounting.dpsgd_noise_multiplier(strategy, epsilon=epsilon, rtol=1e-3, **sizes)
    assert kappa.guarantee.value == "bound" and kappa.sampler == "random_allocation" and route in kappa.source
    at, below = (float(accounting.dpsgd_epsilon(strategy, noise_multiplier=float(kappa.value) * f, **sizes).value)
                 for f in (1.0, 1.0 / 1.002))
    assert at <= epsilon < below  # safe, and within twice rtol (the search's, then the certification's step)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: ca.epsilon(correlated.LambdaCGD(0.5), -1.0, steps_per_epoch=10, num_epochs=2, delta=1e-5),
     "noise_multiplier"),
    (lambda: ca.epsilon(correlated.LambdaCGD(0.5), 1.0, steps_per_epoch=0, num_epochs=2, delta=1e-5),
     "steps_per_epoch"),
    (lambda: ca.epsilon(correlated.LambdaCGD(0.5), 1.0, steps_per_epoch=10, num_epochs=2.5, delta=1e-5),
     "num_epochs"),
    (lambda: ca.epsilon(correlated.LambdaCGD(0.5), 1.0, steps_per_epoch=10, num_epochs=2, delta=1.0), "delta"),
    (lambda: ca.epsilon(correlated.LambdaCGD(0.5), 1.0, steps_per_epoch=10, num_epochs=2, delta=1e-5,
                        neighboring="replace_one"), "neighboring"),
    (lambda: ca.unamplified_noise_multiplier(correlated.LambdaCGD(0.5), epsilon=0.0, steps_per_epoch=10,
                                             num_epochs=2, delta=1e-5), "epsilon"),
    (lambda: ca.spectral_epsilon(correlated.LambdaCGD(0.5), -1.0, steps_per_epoch=10, num_epochs=2, delta=1e-5),
     "noise_multiplier"),
    (lambda: ca.allocation_sensitivity("lambda", steps_per_epoch=10, num_epochs=2), "strategy"),
    (lambda: ca.allocation_sensitivity(correlated.BandedInverse([1.0, -2.0]), steps_per_epoch=1_000,
                                       num_epochs=2), "strategy"),  # encoder 2^k: overflows at k = 1024
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def _monte_carlo_delta(strategy, t, epochs, kappa, eps, samples, seed):
    """Monte-Carlo delta(eps) of the exact pair of random allocation with this encoder, both directions: P the mixture
    over the t^E one-step-per-epoch sets S of N(C 1_S / kappa, I), Q = N(0, I); returns (estimate, standard error)
    per direction. Privacy loss L(y) = log mean_S exp(<y, m_S> - |m_S|^2 / 2)."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(seed)
    steps = t * epochs
    sets = np.array(list(np.ndindex(*(t,) * epochs))) + t * np.arange(epochs)
    indicators = np.zeros((len(sets), steps))
    np.put_along_axis(indicators, sets, 1.0, axis=1)
    means = indicators @ strategy.encoder_matrix(steps).T / kappa  # row S: C 1_S / kappa
    half = 0.5 * np.sum(means**2, axis=1)

    def loss(y):
        return logsumexp(y @ means.T - half, axis=1) - math.log(len(means))

    remove = loss(means[rng.integers(0, len(means), samples)] + rng.standard_normal((samples, steps)))
    add = loss(rng.standard_normal((samples, steps)))
    out = []
    for values in (-np.expm1(eps - remove), -np.expm1(eps + add)):
        values = np.maximum(values, 0.0)
        out.append((float(values.mean()), float(values.std(ddof=1) / math.sqrt(samples))))
    return out


def test_the_monte_carlo_oracle_recovers_the_gaussian_mechanism_at_full_participation():
    """t = 1: no randomness in the allocation, the pair is the Gaussian mechanism at ||C 1|| / kappa (exact)."""
    from privdyn.audit.gaussian import gaussian_shift_delta

    strategy, kappa, eps = correlated.LambdaCGD(0.5), 6.0, 0.5
    mu = float(correlated.sensitivity(strategy, 8, max_participations=8)) / kappa
    exact = gaussian_shift_delta(mu, epsilon=eps)
    for estimate, error in _monte_carlo_delta(strategy, 1, 8, kappa, eps, 200_000, seed=1):
        assert abs(estimate - exact) <= 5.0 * error


@pytest.mark.parametrize(("lam", "t", "epochs", "kappa", "delta"), [
    (0.5, 2, 6, 3.5, 1e-2), (0.9, 2, 5, 8.0, 1e-2), (0.9, 3, 4, 6.0, 1e-3), (0.5, 4, 3, 2.0, 1e-2),
    pytest.param(0.5, 16, 2, 2.0, 1e-2, marks=pytest.mark.slow)])
def test_the_bound_is_never_below_the_exact_pairs_monte_carlo_delta(lam, t, epochs, kappa, delta):
    """At the bound's epsilon the exact pair's delta, in both directions, is at most the target: the lower confidence
    bound (z = 5) of the Monte-Carlo estimate (2 10^5 samples per direction) never exceeds delta."""
    strategy = correlated.LambdaCGD(lam)
    eps = float(ca.epsilon(strategy, kappa, steps_per_epoch=t, num_epochs=epochs, delta=delta).value)
    for estimate, error in _monte_carlo_delta(strategy, t, epochs, kappa, eps, 200_000, seed=2):
        assert estimate - 5.0 * error <= delta


def _quadrature_epsilon(strategy, kappa, delta):
    """The exact epsilon of one epoch of t = 2 steps (both directions): P = (N(c_0, kappa^2 I) + N(c_1, kappa^2 I)) / 2
    against Q = N(0, kappa^2 I) in R^2, c_j the columns of C, by quadrature on a grid of 0.01 kappa over +-12 kappa."""
    from scipy import optimize
    from scipy.special import logsumexp

    columns = strategy.encoder_matrix(2).T
    axis = np.arange(-12.0, 12.0 + 1e-9, 0.01) * kappa
    grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
    cell = (0.01 * kappa) ** 2 / (2.0 * math.pi * kappa**2)
    q = np.exp(-0.5 * np.sum(grid**2, axis=1) / kappa**2) * cell
    p = np.exp(logsumexp(-0.5 * np.sum((grid[:, None, :] - columns[None]) ** 2, axis=2) / kappa**2, axis=1)
               - math.log(2.0)) * cell
    assert abs(p.sum() - 1.0) < 1e-9 and abs(q.sum() - 1.0) < 1e-9

    def curve(eps):
        return max(np.maximum(p - math.exp(eps) * q, 0.0).sum(), np.maximum(q - math.exp(eps) * p, 0.0).sum())

    return optimize.brentq(lambda e: curve(e) - delta, 0.0, 30.0, xtol=1e-6)


@pytest.mark.parametrize(("strategy", "kappa"), [
    (correlated.LambdaCGD(0.5), 3.0),
    pytest.param(correlated.LambdaCGD(0.9), 5.0, marks=pytest.mark.slow),
    pytest.param(correlated.BufferedToeplitz([0.9, 0.5], [0.3, 0.2]), 2.0, marks=pytest.mark.slow),
], ids=repr)
def test_one_epoch_of_two_steps_against_the_exact_pair_by_quadrature(strategy, kappa):
    """Measured (exact / reported, the spectral route / unamplified): lambda-CGD 0.5 at kappa 3: 1.1452 / 1.1998 /
    1.4378; lambda-CGD 0.9 at kappa 5: 0.7961 / 0.8186 / 1.0042; the BLT at kappa 2: 1.8154 / 2.0222 / -."""
    exact = _quadrature_epsilon(strategy, kappa, 1e-5)
    reported = float(ca.epsilon(strategy, kappa, steps_per_epoch=2, num_epochs=1, delta=1e-5).value)
    unamplified = float(ca.unamplified_epsilon(strategy, kappa, steps_per_epoch=2, num_epochs=1, delta=1e-5).value)
    assert exact <= reported <= unamplified
