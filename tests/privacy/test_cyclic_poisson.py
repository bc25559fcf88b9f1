"""Banded noise under cyclic Poisson sampling (Theorem 4 of Choquette-Choo et al. 2023): the reduction checked
against an exact computation of the whole mechanism on small cases, the b = 1 case against the Poisson row, and the
conditions and refusals."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize, special

from privdyn.privacy import accounting, correlated, cyclic_poisson
from privdyn.privacy.accounting import NotAccountableError
from privdyn.privacy.labels import NeighboringRelation


def _exact_delta(encoder: np.ndarray, steps: list[int], q: float, kappa: float, points: int):
    """delta(epsilon) of the release y = C x + kappa Z, add-remove (both directions), where one record joins each
    step of ``steps`` independently with probability q (x its 0/1 participation, the clip 1), computed from the
    mechanism's definition and not from the theorem: the privacy loss is a function of u = M^T y (M the columns of
    C at ``steps``), Gaussian under every participation pattern A with mean G 1_A and covariance kappa^2 G
    (G = M^T M, whatever its off-diagonal), integrated on a grid of +-8 standard deviations per coordinate."""
    m = encoder[:, steps]
    gram = m.T @ m
    k = len(steps)
    patterns = np.array(list(itertools.product((0.0, 1.0), repeat=k)))
    log_prob = patterns.sum(1) * math.log(q) + (k - patterns.sum(1)) * math.log1p(-q)
    quad = np.einsum("ai,ij,aj->a", patterns, gram, patterns)
    axis = np.linspace(-8.0, 8.0, points)
    z = np.stack([g.ravel() for g in np.meshgrid(*([axis] * k), indexing="ij")], axis=1)
    weight = np.exp(-0.5 * np.sum(z**2, axis=1)) / (2.0 * math.pi) ** (k / 2) * (axis[1] - axis[0]) ** k
    base = kappa * z @ np.linalg.cholesky(gram).T

    def loss(u: np.ndarray) -> np.ndarray:  # log dP/dQ with P = with the record, Q = without
        return special.logsumexp(log_prob[None, :] + (u @ patterns.T - quad[None, :] / 2.0) / kappa**2, axis=1)

    under_q = loss(base)
    under_p = [(math.exp(lp), loss(base + gram @ a)) for a, lp in zip(patterns, log_prob, strict=True)]

    def delta(eps: float) -> float:
        add = np.sum(weight * np.maximum(-np.expm1(eps + under_q), 0.0))
        remove = sum(w * np.sum(weight * np.maximum(-np.expm1(eps - values), 0.0)) for w, values in under_p)
        return float(max(add, remove))

    return delta


def _exact_epsilon(encoder, steps, q, kappa, delta, points):
    at = _exact_delta(encoder, steps, q, kappa, points)
    return optimize.brentq(lambda e: at(e) - delta, 1e-3, 50.0, xtol=1e-10)


@pytest.mark.parametrize(("coefficients", "num_steps", "q", "kappa", "delta"), [
    ((1.0, 0.5), 4, 0.3, 1.0, 1e-3),
    ((1.0, 0.6, 0.3), 6, 0.5, 1.5, 1e-4),
])
def test_the_reduction_matches_the_exact_mechanism_on_small_cases(coefficients, num_steps, q, kappa, delta):
    """Every part's exact epsilon (its record joins steps j, j + b, ...) is at most the accountant's, and the worst
    part's equals it to 1%. The grid's error is allowed for as the change between 201 and 401 points per axis."""
    strategy = correlated.Toeplitz(coefficients)
    encoder = strategy.encoder_matrix(num_steps)
    b = len(coefficients)
    reported = float(cyclic_poisson.epsilon(strategy, kappa, sampling_prob=q, num_steps=num_steps,
                                            delta=delta).value)
    exact = []
    for part in range(b):
        steps = list(range(part, num_steps, b))
        fine = _exact_epsilon(encoder, steps, q, kappa, delta, 401)
        coarse = _exact_epsilon(encoder, steps, q, kappa, delta, 201)
        assert fine <= reported + abs(fine - coarse)
        exact.append(fine)
    assert reported <= 1.01 * max(exact)


def test_the_exact_computation_sees_participations_closer_than_the_bands():
    """The check has power: a record joining steps 0 and 1 of a two-band encoder (plain Poisson, one part) is not
    two Poisson-subsampled Gaussians at kappa / ||c||; the exact epsilon exceeds that reduction by far."""
    strategy = correlated.Toeplitz([1.0, 0.5])
    wrong = float(cyclic_poisson.epsilon(strategy, 1.0, sampling_prob=0.3, num_steps=4, delta=1e-3).value)
    exact = _exact_epsilon(strategy.encoder_matrix(4), [0, 1], 0.3, 1.0, 1e-3, 301)
    assert exact > 1.2 * wrong


@pytest.mark.parametrize(("n", "batch_size", "num_steps", "kappa"), [
    (1_000, 10, 1_000, 0.8), (200, 50, 40, 2.0), (60_000, 256, 10_000, 1.1)])
def test_independent_noise_is_the_poisson_row(n, batch_size, num_steps, kappa):
    """b = 1 is Poisson sampling at rate B / n: the same epsilon as the allow-list's Poisson row, and the same
    calibrated noise multiplier."""
    common = dict(n=n, batch_size=batch_size, num_steps=num_steps, delta=1e-5, neighboring="add_remove")
    cyclic = accounting.dpsgd_epsilon(correlated.Independent(), noise_multiplier=kappa, sampler="cyclic_poisson",
                                      **common)
    poisson = accounting.dpsgd_epsilon(correlated.Independent(), noise_multiplier=kappa, sampler="poisson",
                                       **common)
    assert float(cyclic.value) == float(poisson.value)
    assert cyclic.sampler == "cyclic_poisson" and cyclic.guarantee == "bound"
    if num_steps <= 1_000:
        one = accounting.dpsgd_noise_multiplier(correlated.Independent(), epsilon=1.0, sampler="cyclic_poisson",
                                                **common)
        other = accounting.dpsgd_noise_multiplier(correlated.Independent(), epsilon=1.0, sampler="poisson", **common)
        assert float(one.value) == pytest.approx(float(other.value), rel=1e-4)


def test_a_one_band_encoder_scales_the_noise_by_its_coefficient():
    """C = 2 I: one part, the noise multiplier kappa / 2 (the sensitivity of one participation is 2 clip)."""
    scaled = cyclic_poisson.epsilon(correlated.Toeplitz([2.0]), 3.0, sampling_prob=0.05, num_steps=300, delta=1e-6)
    plain = cyclic_poisson.epsilon(correlated.Independent(), 1.5, sampling_prob=0.05, num_steps=300, delta=1e-6)
    assert float(scaled.value) == float(plain.value)


def test_releases_are_ceil_t_over_b():
    strategy = correlated.Toeplitz([1.0, 0.4, 0.2])
    at = {t: float(cyclic_poisson.epsilon(strategy, 3.0, sampling_prob=0.1, num_steps=t, delta=1e-5).value)
          for t in (6, 7, 9)}
    assert at[7] == at[9] > at[6]
    more_parts = cyclic_poisson.epsilon(strategy, 3.0, sampling_prob=0.1, num_steps=9, delta=1e-5,
                                        num_partitions=9)
    assert float(more_parts.value) < at[9] and "b = 9, 1 releases" in more_parts.source


def test_allow_list_rows_use_q_equal_b_times_batch_over_n():
    strategy = correlated.Toeplitz([1.0, 0.5, 0.25, 0.125])
    row = accounting.dpsgd_epsilon(strategy, noise_multiplier=2.0, n=1_000, batch_size=25, num_steps=200,
                                   delta=1e-5, sampler="cyclic_poisson", neighboring="zero_out")
    direct = cyclic_poisson.epsilon(strategy, 2.0, sampling_prob=0.1, num_steps=200, delta=1e-5,
                                    neighboring="zero_out")
    assert float(row.value) == float(direct.value)
    assert row.neighboring == NeighboringRelation.ZERO_OUT and "zero-out" in row.source


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_the_calibrated_noise_multiplier_is_certified_and_tight(epsilon):
    strategy = correlated.Toeplitz([1.0, 0.7, 0.3])
    rtol = 1e-3
    loss = cyclic_poisson.noise_multiplier(strategy, epsilon=epsilon, delta=1e-5, sampling_prob=0.2, num_steps=300,
                                           rtol=rtol)
    kappa = float(loss.value)
    at = float(cyclic_poisson.epsilon(strategy, kappa, sampling_prob=0.2, num_steps=300, delta=1e-5).value)
    below = float(cyclic_poisson.epsilon(strategy, kappa / (1 + 2 * rtol), sampling_prob=0.2, num_steps=300,
                                         delta=1e-5).value)
    assert at <= epsilon < below
    assert loss.quantity == "noise_multiplier" and loss.sampler == "cyclic_poisson"


@pytest.mark.parametrize(("strategy", "kind"), [
    (correlated.LambdaCGD(0.5), "lambda_cgd"), (correlated.BandedInverse([1.0, -0.5]), "banded_inverse"),
    (correlated.BufferedToeplitz([0.9], [0.1]), "blt"), (correlated.SquareRoot(), "square_root")])
def test_dense_encoders_are_refused_with_a_named_reason(strategy, kind):
    for call in (lambda: cyclic_poisson.num_partitions(strategy),
                 lambda: cyclic_poisson.epsilon(strategy, 1.0, sampling_prob=0.1, num_steps=10, delta=1e-5),
                 lambda: accounting.dpsgd_epsilon(strategy, noise_multiplier=1.0, n=100, batch_size=5,
                                                  num_steps=10, delta=1e-5, sampler="cyclic_poisson",
                                                  neighboring="add_remove")):
        with pytest.raises(NotAccountableError) as caught:
            call()
        assert caught.value.reason == "cyclic_poisson_dense_encoder"
        assert "cyclic_poisson_dense_encoder" in str(caught.value)


def test_more_bands_than_parts_and_replace_one_are_refused():
    strategy = correlated.Toeplitz([1.0, 0.5, 0.25])
    with pytest.raises(NotAccountableError, match="3 bands but the sampler has num_partitions=2") as caught:
        cyclic_poisson.epsilon(strategy, 1.0, sampling_prob=0.1, num_steps=10, delta=1e-5, num_partitions=2)
    assert caught.value.reason == "cyclic_poisson_bands_exceed_partitions"
    for noise, reason in ((strategy, "correlated_replace_one"), (correlated.Independent(), "relation_not_covered")):
        with pytest.raises(NotAccountableError) as caught:
            cyclic_poisson.epsilon(noise, 1.0, sampling_prob=0.1, num_steps=10, delta=1e-5,
                                   neighboring="replace_one")
        assert caught.value.reason == reason


@pytest.mark.parametrize(("changes", "match"), [
    ({"sampling_prob": 0.0}, r"sampling_prob must be in \(0.0, 1.0\]; got sampling_prob=0.0"),
    ({"sampling_prob": 1.5}, r"sampling_prob must be in \(0.0, 1.0\]; got sampling_prob=1.5"),
    ({"num_steps": 0}, "num_steps"),
    ({"delta": 1.0}, r"delta must be in \(0.0, 1.0\); got delta=1.0"),
    ({"noise_multiplier": -1.0}, "noise_multiplier"),
    ({"num_partitions": 0}, "num_partitions"),
    ({"neighboring": "swap"}, "neighboring must be one of"),
])
def test_bad_input_names_the_parameter(changes, match):
    args = dict(noise_multiplier=1.0, sampling_prob=0.1, num_steps=10, delta=1e-5) | changes
    with pytest.raises(ValueError, match=match):
        cyclic_poisson.epsilon(correlated.Toeplitz([1.0, 0.5]), args.pop("noise_multiplier"), **args)


def test_a_batch_larger_than_a_part_allows_is_refused():
    with pytest.raises(ValueError, match=r"batch_size must be <= n / num_partitions = 33 .* got batch_size=34 with "
                                         r"n=100, num_partitions=3"):
        accounting.dpsgd_epsilon(correlated.Toeplitz([1.0, 0.5, 0.25]), noise_multiplier=1.0, n=100, batch_size=34,
                                 num_steps=10, delta=1e-5, sampler="cyclic_poisson", neighboring="add_remove")
    assert cyclic_poisson.sampling_prob(n=100, batch_size=33, num_partitions=3) == pytest.approx(0.99)
    with pytest.raises(ValueError, match="num_partitions"):
        cyclic_poisson.sampling_prob(n=100, batch_size=3, num_partitions=0)


@pytest.mark.parametrize(("changes", "match"), [
    ({"epsilon": 0.0}, "epsilon must be > 0"),
    ({"epsilon": -1.0}, "epsilon must be > 0"),
    ({"delta": 0.0}, r"delta must be in \(0.0, 1.0\); got delta=0.0"),
    ({"rtol": 2.0}, r"rtol must be in \[1e-12, 1.0\]; got rtol=2.0"),
    ({"sampling_prob": -0.1}, r"sampling_prob must be in \(0.0, 1.0\]"),
])
def test_bad_calibration_input_names_the_parameter(changes, match):
    args = dict(epsilon=1.0, delta=1e-5, sampling_prob=0.1, num_steps=10) | changes
    with pytest.raises(ValueError, match=match):
        cyclic_poisson.noise_multiplier(correlated.Toeplitz([1.0, 0.5]), **args)
