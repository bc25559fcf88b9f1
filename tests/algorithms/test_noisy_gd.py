"""Tests of privdyn.algorithms.noisy_gd (Algorithm 1 of Chourasia, Ye, Shokri 2021, arXiv 2102.05855).

Monte-Carlo checks use z = 5 standard errors (a false-failure rate of about 6e-7 per check) with fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privdyn.algorithms.noisy_gd import (
    Box,
    L2Ball,
    LeastSquaresLoss,
    LogisticLoss,
    Loss,
    QuadraticLoss,
    Unconstrained,
    noisy_gd,
)
from privdyn.privacy.langevin import quadratic_exact_rdp
from privdyn.rng import run_generators

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=100)
Z = 5.0

# spec 10.2 Monte Carlo: 1-D, n = 5, eta = 0.1, sigma = 0.5, K = 30, 2e5 runs
N_DATA, ETA, SIGMA, K, RUNS = 5, 0.1, 0.5, 30, 200_000
DATA = np.array([[-1.2], [0.3], [-0.9], [0.1], [-0.4]])  # mean -0.42
NEIGHBOUR = DATA.copy()
NEIGHBOUR[0, 0] = 3.8  # replace one record: the mean moves by 5/5 = 1 = sensitivity / n with sensitivity 5
SENSITIVITY = 5.0


def theoretical_moments(mean_data: float, init_variance: float) -> tuple[float, float]:
    """Mean and variance of theta_K summed step by step (not the closed form used by the library)."""
    decay = (1 - ETA) ** np.arange(K)
    mean = ETA * mean_data * decay.sum()
    variance = init_variance * (1 - ETA) ** (2 * K) + 2 * ETA * SIGMA**2 * np.sum(decay**2)
    return float(mean), float(variance)


def check_moments(samples: np.ndarray, mean: float, variance: float) -> None:
    n = samples.size
    emp_mean, emp_var = samples.mean(), samples.var(ddof=1)
    assert abs(emp_mean - mean) <= Z * math.sqrt(variance / n), (emp_mean, mean)
    assert abs(emp_var - variance) <= Z * variance * math.sqrt(2 / (n - 1)), (emp_var, variance)


def test_quadratic_monte_carlo_deterministic_start():
    theta = noisy_gd(
        QuadraticLoss(),
        DATA,
        num_steps=K,
        step_size=ETA,
        noise_scale=SIGMA,
        rng=np.random.default_rng(20210211),
        num_runs=RUNS,
        init=np.zeros(1),
    )
    assert theta.shape == (RUNS, 1)
    q = (1 - ETA) ** K
    mean, variance = theoretical_moments(DATA.mean(), 0.0)
    assert mean == pytest.approx(DATA.mean() * (1 - q), rel=1e-12)
    assert variance == pytest.approx(2 * SIGMA**2 * (1 - q**2) / (2 - ETA), rel=1e-12)
    check_moments(theta[:, 0], mean, variance)


def test_quadratic_monte_carlo_gaussian_start():
    theta = noisy_gd(
        QuadraticLoss(),
        DATA,
        num_steps=K,
        step_size=ETA,
        noise_scale=SIGMA,
        rng=np.random.default_rng(7),
        num_runs=RUNS,
        strong_convexity=1.0,
    )
    v0 = 2 * SIGMA**2  # Corollary 1's start N(0, 2 sigma^2 / lambda)
    q = (1 - ETA) ** K
    mean, variance = theoretical_moments(DATA.mean(), v0)
    assert variance == pytest.approx(v0 * q**2 + 2 * SIGMA**2 * (1 - q**2) / (2 - ETA), rel=1e-12)
    check_moments(theta[:, 0], mean, variance)


@pytest.mark.parametrize("init_variance", [0.0, 2 * SIGMA**2])
def test_gaussian_renyi_divergence_matches_exact_rdp(init_variance):
    alpha = 4.0
    exact = quadratic_exact_rdp(
        alpha,
        num_steps=K,
        step_size=ETA,
        noise_scale=SIGMA,
        sensitivity=SENSITIVITY,
        n=N_DATA,
        init_variance=init_variance,
    ).value
    # theoretical moments of the two neighbouring runs: equal variances, so R = alpha * dmu^2 / (2 s^2)
    mean_d, variance = theoretical_moments(DATA.mean(), init_variance)
    mean_n, variance_n = theoretical_moments(NEIGHBOUR.mean(), init_variance)
    assert variance == variance_n
    assert abs(NEIGHBOUR.mean() - DATA.mean()) == pytest.approx(SENSITIVITY / N_DATA, rel=1e-14)
    assert alpha * (mean_d - mean_n) ** 2 / (2 * variance) == pytest.approx(exact, rel=1e-12)

    # the same divergence from simulated moments, within a propagated 5-sigma tolerance
    common = dict(num_steps=K, step_size=ETA, noise_scale=SIGMA, num_runs=RUNS)
    if init_variance == 0.0:
        common["init"] = np.zeros(1)
    else:
        common["strong_convexity"] = 2 * SIGMA**2 / init_variance
    a = noisy_gd(QuadraticLoss(), DATA, rng=np.random.default_rng(101), **common)[:, 0]
    b = noisy_gd(QuadraticLoss(), NEIGHBOUR, rng=np.random.default_rng(202), **common)[:, 0]
    gap = a.mean() - b.mean()
    pooled = 0.5 * (a.var(ddof=1) + b.var(ddof=1))
    estimate = alpha * gap**2 / (2 * pooled)
    se_gap = math.sqrt(2 * variance / RUNS)
    se_pooled = variance * math.sqrt(2 / (RUNS - 1)) / math.sqrt(2)
    rel_se = math.hypot(2 * se_gap / abs(mean_d - mean_n), se_pooled / variance)
    assert abs(estimate - exact) <= Z * rel_se * exact, (estimate, exact, rel_se)


def test_noiseless_gradient_descent_converges():
    theta = noisy_gd(
        QuadraticLoss(),
        DATA,
        num_steps=400,
        step_size=0.1,
        noise_scale=0.0,
        rng=np.random.default_rng(0),
        init=np.array([5.0]),
    )
    np.testing.assert_allclose(theta, [[DATA.mean()]], atol=1e-12)


def test_trajectory_and_projection():
    data = np.random.default_rng(1).normal(size=(20, 3)) + 4.0
    ball = L2Ball(1.0)
    traj = noisy_gd(
        QuadraticLoss(),
        data,
        num_steps=25,
        step_size=0.2,
        noise_scale=0.3,
        rng=np.random.default_rng(2),
        num_runs=7,
        projection=ball,
        strong_convexity=1.0,
        return_trajectory=True,
    )
    assert traj.shape == (26, 7, 3)
    assert np.all(np.linalg.norm(traj, axis=-1) <= 1.0 + 1e-12)
    last = noisy_gd(
        QuadraticLoss(),
        data,
        num_steps=25,
        step_size=0.2,
        noise_scale=0.3,
        rng=np.random.default_rng(2),
        num_runs=7,
        projection=ball,
        strong_convexity=1.0,
    )
    np.testing.assert_array_equal(last, traj[-1])
    box = Box(-0.5, (0.5, 0.25, 1.0))
    out = noisy_gd(
        QuadraticLoss(),
        data,
        num_steps=10,
        step_size=0.2,
        noise_scale=0.3,
        rng=np.random.default_rng(3),
        num_runs=50,
        projection=box,
        init=np.zeros(3),
    )
    assert np.all(out >= -0.5) and np.all(out <= np.array([0.5, 0.25, 1.0]))


def test_per_run_generators_do_not_depend_on_num_runs():
    kw = dict(num_steps=12, step_size=0.1, noise_scale=0.5, strong_convexity=1.0)
    three = noisy_gd(QuadraticLoss(), DATA, rng=run_generators(5, "unit", 3), num_runs=3, **kw)
    one = noisy_gd(QuadraticLoss(), DATA, rng=run_generators(5, "unit", 1), num_runs=1, **kw)
    np.testing.assert_array_equal(three[0], one[0])
    assert not np.array_equal(three[0], three[1])


def test_init_broadcast_and_per_run():
    kw = dict(num_steps=0, step_size=0.1, noise_scale=0.5, rng=np.random.default_rng(0), num_runs=2)
    np.testing.assert_array_equal(noisy_gd(QuadraticLoss(), DATA, init=[0.3], **kw), [[0.3], [0.3]])
    np.testing.assert_array_equal(noisy_gd(QuadraticLoss(), DATA, init=[[0.3], [0.1]], **kw), [[0.3], [0.1]])
    # a given start is projected onto C
    np.testing.assert_array_equal(
        noisy_gd(QuadraticLoss(), DATA, init=[3.0], projection=Box(-1, 1), **kw), [[1.0], [1.0]]
    )


# ----------------------------------------------------------------------------------------------------
# projections


def _points(d):
    return hnp.arrays(np.float64, (2, d), elements=st.floats(-50, 50))


@PROFILE
@given(
    points=_points(3), radius=st.floats(0.1, 10), center=hnp.arrays(np.float64, 3, elements=st.floats(-5, 5))
)
def test_l2_ball_projection(points, radius, center):
    ball = L2Ball(radius, center=center)
    p = ball.project(points)
    assert np.all(np.linalg.norm(p - center, axis=-1) <= radius * (1 + 1e-12))
    np.testing.assert_allclose(ball.project(p), p, atol=1e-12)  # idempotent
    # non-expansive
    assert np.linalg.norm(p[0] - p[1]) <= np.linalg.norm(points[0] - points[1]) * (1 + 1e-12) + 1e-12
    # the nearest point of C: <x - P(x), c - P(x)> <= 0 for c in C
    c = center + radius * np.array([0.6, -0.0, 0.8])
    for x, px in zip(points, p, strict=True):
        assert np.dot(x - px, c - px) <= 1e-9 * (1 + np.linalg.norm(x) ** 2)


@PROFILE
@given(
    points=_points(3),
    low=hnp.arrays(np.float64, 3, elements=st.floats(-5, 0)),
    width=hnp.arrays(np.float64, 3, elements=st.floats(0, 5)),
)
def test_box_projection(points, low, width):
    box = Box(low, low + width)
    p = box.project(points)
    assert np.all(p >= low) and np.all(p <= low + width)
    np.testing.assert_array_equal(box.project(p), p)
    assert np.linalg.norm(p[0] - p[1]) <= np.linalg.norm(points[0] - points[1]) * (1 + 1e-12) + 1e-12
    c = low + 0.5 * width
    for x, px in zip(points, p, strict=True):
        assert np.dot(x - px, c - px) <= 1e-9


def test_projection_objects_are_frozen_and_validated():
    ball = L2Ball(2.0, center=np.array([1.0, 2.0]))
    assert ball.center == (1.0, 2.0)
    assert hash(ball) == hash(L2Ball(2.0, center=(1.0, 2.0)))
    with pytest.raises(AttributeError):
        ball.radius = 3.0  # type: ignore[misc]
    np.testing.assert_array_equal(Unconstrained().project(np.ones((2, 2))), np.ones((2, 2)))
    with pytest.raises(ValueError, match="radius"):
        L2Ball(0.0)
    with pytest.raises(ValueError, match="low must be <= high"):
        Box(1.0, 0.0)
    with pytest.raises(ValueError, match="NaN"):
        Box(math.nan, 1.0)
    assert Box(-np.inf, 0.0).project(np.array([[-1e9, 3.0]])).tolist() == [[-1e9, 0.0]]


# ----------------------------------------------------------------------------------------------------
# losses


def _logistic_data(rng, n=9, d=4):
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return X, y


@pytest.mark.parametrize(
    "loss",
    [LogisticLoss(0.0), LogisticLoss(0.3), LeastSquaresLoss(0.0), LeastSquaresLoss(0.7), QuadraticLoss()],
    ids=repr,
)
def test_gradients_match_finite_differences(loss):
    rng = np.random.default_rng(11)
    if isinstance(loss, QuadraticLoss):
        data = rng.normal(size=(9, 4))
    elif isinstance(loss, LogisticLoss):
        data = _logistic_data(rng)
    else:
        X = rng.normal(size=(9, 4))
        data = (X, X @ rng.normal(size=4) + 0.1 * rng.normal(size=9))
    theta = rng.normal(size=(3, 4))
    grad = loss.mean_gradient(theta, data)
    per_example = loss.per_example_gradients(theta, data)
    assert grad.shape == (3, 4) and per_example.shape == (3, 9, 4)
    np.testing.assert_allclose(per_example.mean(axis=1), grad, rtol=1e-12, atol=1e-14)
    h = 1e-6
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        fd = (loss.value(theta + e, data) - loss.value(theta - e, data)) / (2 * h)
        np.testing.assert_allclose(grad[:, j], fd, rtol=1e-6, atol=1e-8)
    # per-example gradients against finite differences of the single-example loss
    i = 2
    single = data[i : i + 1] if isinstance(loss, QuadraticLoss) else (data[0][i : i + 1], data[1][i : i + 1])
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        fd = (loss.value(theta + e, single) - loss.value(theta - e, single)) / (2 * h)
        np.testing.assert_allclose(per_example[:, i, j], fd, rtol=1e-6, atol=1e-8)


def test_loss_constants():
    rng = np.random.default_rng(3)
    X, y = _logistic_data(rng)
    assert LogisticLoss(0.5).strong_convexity == 0.5
    assert LogisticLoss(0.5).smoothness((X, y)) == pytest.approx(np.max(np.sum(X**2, axis=1)) / 4 + 0.5)
    assert LeastSquaresLoss(0.5).smoothness((X, y)) == pytest.approx(np.max(np.sum(X**2, axis=1)) + 0.5)
    assert QuadraticLoss().strong_convexity == 1.0 and QuadraticLoss().smoothness == 1.0
    with pytest.raises(ValueError, match="ridge"):
        LogisticLoss(-1.0)
    with pytest.raises(ValueError, match="y must hold labels"):
        LogisticLoss().dimension((X, np.zeros(len(y))))
    with pytest.raises(ValueError, match="y must have shape"):
        LeastSquaresLoss().dimension((X, y[:-1]))


def test_default_mean_gradient_for_user_losses():
    class Shifted(Loss):
        def per_example_gradients(self, theta, data):
            return theta[:, None, :] - 2.0 * np.asarray(data)[None, :, :]

        def dimension(self, data):
            return np.asarray(data).shape[1]

    data = np.arange(6.0).reshape(3, 2)
    theta = noisy_gd(
        Shifted(),
        data,
        num_steps=200,
        step_size=0.1,
        noise_scale=0.0,
        rng=np.random.default_rng(0),
        init=np.zeros(2),
    )
    np.testing.assert_allclose(theta, [2.0 * data.mean(axis=0)], atol=1e-8)


# ----------------------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize(
    ("override", "error", "match"),
    [
        (dict(rng=None), TypeError, "rng"),
        (dict(rng=42), TypeError, "rng"),
        (dict(rng=[np.random.default_rng(0)], num_runs=2), ValueError, "rng must hold one Generator per run"),
        (dict(num_steps=-1), ValueError, "num_steps"),
        (dict(num_steps=2.5), TypeError, "num_steps"),
        (dict(num_runs=0), ValueError, "num_runs"),
        (dict(step_size=0.0), ValueError, "step_size"),
        (dict(step_size=math.nan), ValueError, "step_size"),
        (dict(noise_scale=-1.0), ValueError, "noise_scale"),
        (dict(strong_convexity=None), ValueError, "strong_convexity is required"),
        (dict(strong_convexity=0.0), ValueError, "strong_convexity"),
        (dict(init=np.zeros(3), strong_convexity=None), ValueError, "init must have shape"),
        (dict(init=[math.inf], strong_convexity=None), ValueError, "init"),
    ],
)
def test_noisy_gd_validation(override, error, match):
    kwargs = dict(
        num_steps=3,
        step_size=0.1,
        noise_scale=0.5,
        rng=np.random.default_rng(0),
        num_runs=1,
        strong_convexity=1.0,
    )
    kwargs.update(override)
    with pytest.raises(error, match=match):
        noisy_gd(QuadraticLoss(), DATA, **kwargs)


def test_bad_data_rejected():
    with pytest.raises(ValueError, match="data must have shape"):
        noisy_gd(
            QuadraticLoss(),
            np.zeros((2, 2, 2)),
            num_steps=1,
            step_size=0.1,
            noise_scale=0.1,
            rng=np.random.default_rng(0),
            init=np.zeros(2),
        )
    with pytest.raises(ValueError, match="data must be a pair"):
        noisy_gd(
            LogisticLoss(0.1),
            np.zeros((3, 2)),
            num_steps=1,
            step_size=0.1,
            noise_scale=0.1,
            rng=np.random.default_rng(0),
            init=np.zeros(2),
        )
    with pytest.raises(ValueError, match="X must be finite"):
        noisy_gd(
            LeastSquaresLoss(),
            (np.full((3, 2), np.nan), np.zeros(3)),
            num_steps=1,
            step_size=0.1,
            noise_scale=0.1,
            rng=np.random.default_rng(0),
            init=np.zeros(2),
        )


def test_counter_stream_runs_do_not_depend_on_batching():
    """Run i is the same whatever the number of runs and however runs are split into batches."""
    from privdyn import rng as streams

    data = np.linspace(-1.0, 1.0, 4)[:, None]
    stream = streams.counter_stream(3, "noisy_gd")
    kwargs = dict(num_steps=12, step_size=0.1, noise_scale=0.7, strong_convexity=1.0)
    whole = noisy_gd(QuadraticLoss(), data, rng=stream, num_runs=60, **kwargs)
    part = noisy_gd(QuadraticLoss(), data, rng=stream.runs(20), num_runs=15, **kwargs)
    np.testing.assert_array_equal(part, whole[20:35])
