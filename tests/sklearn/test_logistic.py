"""DPLogisticRegression: estimator checks, refusals before any noise, the accountant against exact Gaussian laws."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privdyn.privacy.conversions import zcdp_to_epsilon
from privdyn.privacy.correlated_allocation import gaussian_epsilon, gaussian_mu
from privdyn.sklearn import DPLogisticRegression, classifier_expected_failed_checks
from privdyn.sklearn._logistic import MultinomialLoss, account


def _data(n: int = 600, d: int = 4, classes: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = 2.0 * rng.normal(size=(classes, d))
    y = rng.integers(0, classes, size=n)
    return centres[y] + rng.normal(size=(n, d)), y


def test_check_estimator() -> None:
    from sklearn.utils.estimator_checks import check_estimator

    estimator = DPLogisticRegression(feature_norm=5.0, random_state=0)
    check_estimator(estimator, expected_failed_checks=classifier_expected_failed_checks(estimator))


@pytest.mark.parametrize("classes", [2, 3])
def test_fit_learns_and_states_its_privacy(classes: int) -> None:
    x, y = _data(classes=classes)
    model = DPLogisticRegression(epsilon=3.0, feature_norm=6.0, random_state=1).fit(x, y)
    assert model.coef_.shape == (1 if classes == 2 else classes, x.shape[1])
    assert model.predict_proba(x).shape == (len(y), classes)
    np.testing.assert_allclose(model.predict_proba(x).sum(axis=1), 1.0)
    assert model.score(x, y) > 0.8  # well-separated centres: chance is 1/classes
    p = model.privacy_
    assert p["epsilon"] <= 3.0 and p["delta"] == pytest.approx(len(y) ** -1.1)
    epsilons = {k: p[f"{k}_epsilon"] for k in ("shifted_interpolation", "corollary_1", "composition")}
    assert p["bound"] == min(epsilons, key=lambda k: epsilons[k]) == "shifted_interpolation"
    assert p["zcdp"] == pytest.approx(0.5 * p["gdp_mu"] ** 2, rel=1e-12)
    assert p["last_iterate_epsilon"] == p["epsilon"] == epsilons["shifted_interpolation"]
    assert p["guarantee"] == "bound" and p["neighboring"] == "replace_one" and p["sampler"] == "full_batch"
    t = model.training_
    assert t["step_size"] < 1.0 / t["smoothness"] and t["ridge"] > 0
    assert t["smoothness"] == pytest.approx((0.25 if classes == 2 else 0.5) + t["ridge"])
    assert t["sensitivity"] == pytest.approx(2.0 if classes == 2 else 2.0 * math.sqrt(2.0))
    # the released coefficients lie in the constraint ball (in the normalized units)
    width = x.shape[1] + 1
    theta = np.column_stack([model.coef_, model.intercept_ / (6.0 / math.sqrt(x.shape[1]))]) / t["row_scale"]
    assert np.linalg.norm(theta) <= t["radius"] * (1 + 1e-9) and theta.size == width * model.coef_.shape[0]


def test_public_classes_fix_the_model_whatever_y_holds() -> None:
    x, y = _data(classes=3)
    model = DPLogisticRegression(feature_norm=6.0, classes=[0, 1, 2, 3], random_state=0).fit(x, y)
    assert list(model.classes_) == [0, 1, 2, 3] and model.coef_.shape == (4, x.shape[1])
    assert "given as classes" in model.privacy_["assumptions"][-1]


def test_default_step_budget_scales_with_the_work_per_step() -> None:
    from privdyn.sklearn._logistic import default_max_iter

    assert default_max_iter(455, 31) == 10_000 and default_max_iter(7420, 10) == 6738
    assert default_max_iter(100_000, 51) == 98
    assert default_max_iter(10**9, 10**4) == 1
    x, y = _data(n=200)
    assert DPLogisticRegression(feature_norm=6.0, random_state=0).fit(x, y).training_["max_iter"] == 10_000


def test_reproducible_from_a_seed() -> None:
    x, y = _data()
    a = DPLogisticRegression(feature_norm=6.0, random_state=5).fit(x, y)
    b = DPLogisticRegression(feature_norm=6.0, random_state=5).fit(x, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize(("change", "data", "name"), [
    ({"feature_norm": None}, None, "feature_norm"),
    ({"ridge": 0.0}, None, "ridge"),
    ({"ridge": -1.0}, None, "ridge"),
    ({"ridge": "big"}, None, "ridge"),
    ({"epsilon": 0.0}, None, "epsilon"),
    ({"delta": 1.0}, None, "delta"),
    ({"coef_norm": 0.0}, None, "coef_norm"),
    ({"max_iter": 0}, None, "max_iter"),
    ({}, "one_class", "y"),
    ({}, "nan", "X"),
    ({}, "weights", "sample_weight"),
    ({"classes": [0]}, None, "classes"),
    ({"classes": [0, 5]}, None, "y must take values in classes"),
])
def test_bad_input_is_refused_before_any_noise(change: dict, data: str | None, name: str) -> None:
    x, y = _data(n=50)
    weights = None
    if data == "one_class":
        y = np.zeros_like(y)
    elif data == "nan":
        x = x.copy()
        x[3, 1] = np.nan
    elif data == "weights":
        weights = np.ones(len(y))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    params = {"feature_norm": 5.0, "random_state": rng, **change}
    with pytest.raises(ValueError, match=name):
        DPLogisticRegression(**params).fit(x, y, sample_weight=weights)
    assert rng.bit_generator.state == state  # nothing drawn


def test_multinomial_loss_gradient_and_constants() -> None:
    """Finite differences of the value; per-example gradients within √2·‖z‖; the Hessian norm <= 1/2 + ridge."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(7, 3))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    onehot = np.eye(4)[rng.integers(0, 4, size=7)]
    loss = MultinomialLoss(classes=4, ridge=0.1)
    theta = 3.0 * rng.normal(size=(1, 12))
    grad = loss.mean_gradient(theta, (z, onehot))
    step = 1e-6
    numeric = [(loss.value(theta + step * e, (z, onehot)) - loss.value(theta - step * e, (z, onehot)))[0] / (2 * step)
               for e in np.eye(12)]
    np.testing.assert_allclose(grad[0], numeric, rtol=1e-6, atol=1e-8)
    per = loss.per_example_gradients(theta, (z, onehot)) - 0.1 * theta[:, None, :]
    assert np.all(np.linalg.norm(per, axis=2) <= math.sqrt(2.0) + 1e-12)
    hessian = np.array([(loss.mean_gradient(theta + step * e, (z, onehot))
                         - loss.mean_gradient(theta - step * e, (z, onehot)))[0] / (2 * step) for e in np.eye(12)])
    assert np.linalg.norm(hessian, 2) <= 0.5 + 0.1 + 1e-6


def _exact_last_iterate_zcdp(*, n: int, num_steps: int, step_size: float, noise_scale: float, ridge: float,
                             sensitivity: float, start_variance: float | None = None) -> float:
    """The exact zCDP of θ_K for noisy GD on the quadratic (ridge/2)(θ − x)² in d = 1 (an independent oracle).

    θ_{k+1} = (1 − ridge·η)θ_k + ridge·η·mean(D) + √(2η)σZ_k from N(0, 2σ²/ridge) (or N(0, ``start_variance``)):
    Gaussian with equal variances on neighbours whose means of the data differ by sensitivity/(ridge·n) (the
    per-example gradients ridge(θ − x) differ by at most ``sensitivity``); its Rényi divergence is α·Δ²/(2v), i.e.
    Δ²/(2v)-zCDP exactly, and it is exactly √(Δ²/v)-GDP.
    """
    mean_gap = 0.0
    variance = 2.0 * noise_scale**2 / ridge if start_variance is None else start_variance
    contraction = 1.0 - ridge * step_size
    for _ in range(num_steps):
        mean_gap = contraction * mean_gap + step_size * sensitivity / n
        variance = contraction**2 * variance + 2.0 * step_size * noise_scale**2
    return mean_gap**2 / (2.0 * variance)


@pytest.mark.parametrize("ridge", [0.01, 0.3, 1.0])
@pytest.mark.parametrize("num_steps", [1, 10, 300, 3000])
def test_accountant_never_below_the_exact_gaussian_divergence_on_a_quadratic(ridge: float, num_steps: int) -> None:
    """The quadratic (λ/2)(θ − x)² is λ-strongly convex and λ-smooth: the accountant at β = λ must dominate the exact
    divergence of the last iterate at every step size below 1/β, noise and n."""
    for step_fraction in (0.05, 0.5, 0.99):
        for noise_scale, n in ((0.1, 10), (1.0, 100), (3.0, 7)):
            step_size = step_fraction / ridge
            accounted = account(n=n, num_steps=num_steps, step_size=step_size, noise_scale=noise_scale,
                                strong_convexity=ridge, smoothness=ridge, sensitivity=1.0, delta=1e-5)
            exact = _exact_last_iterate_zcdp(n=n, num_steps=num_steps, step_size=step_size, noise_scale=noise_scale,
                                             ridge=ridge, sensitivity=1.0)
            assert accounted["zcdp"] >= exact * (1.0 - 1e-12), (step_size, noise_scale, n)
            assert accounted["epsilon"] >= gaussian_epsilon(math.sqrt(2.0 * exact), 1e-5) * (1 - 1e-9)
            assert accounted["corollary_1_epsilon"] >= float(zcdp_to_epsilon(exact, delta=1e-5, method="optimal"))


@pytest.mark.parametrize("ridge", [0.01, 0.3, 1.0])
@pytest.mark.parametrize("num_steps", [1, 10, 300, 3000])
def test_shifted_interpolation_is_exact_on_the_quadratic_from_a_point(ridge: float, num_steps: int) -> None:
    """From a point start (no start variance) the quadratic's last iterate is a Gaussian shift of exactly the μ of
    shifted interpolation at β = λ (its map is θ ↦ (1 − ηλ)θ + shift): the bound is tight, not just valid."""
    from privdyn.privacy.langevin import shifted_interpolation_gdp

    for step_fraction in (0.05, 0.5, 0.99):
        for noise_scale, n in ((0.1, 10), (1.0, 100), (3.0, 7)):
            step_size = step_fraction / ridge
            mu = shifted_interpolation_gdp(num_steps=num_steps, step_size=step_size, noise_scale=noise_scale,
                                           strong_convexity=ridge, smoothness=ridge, sensitivity=1.0, n=n).value
            exact = _exact_last_iterate_zcdp(n=n, num_steps=num_steps, step_size=step_size, noise_scale=noise_scale,
                                             ridge=ridge, sensitivity=1.0, start_variance=0.0)
            assert mu == pytest.approx(math.sqrt(2.0 * exact), rel=1e-9), (step_size, noise_scale, n)


def test_exact_oracle_matches_the_paper_instance() -> None:
    """At λ = 1 the oracle is privdyn's quadratic_exact_rdp with Corollary 1's start (two independent paths)."""
    from privdyn.privacy.langevin import quadratic_exact_rdp

    for k in (1, 17, 400):
        exact = quadratic_exact_rdp(2.0, num_steps=k, step_size=0.3, noise_scale=0.7, sensitivity=1.0, n=9,
                                    init_variance=2 * 0.7**2).value / 2.0
        ours = _exact_last_iterate_zcdp(n=9, num_steps=k, step_size=0.3, noise_scale=0.7, ridge=1.0, sensitivity=1.0)
        assert ours == pytest.approx(exact, rel=1e-10)


# the must-hold ratios: last-iterate epsilon over composition epsilon at equal noise, >= 1000 steps
RATIO_SETTINGS = (  # (n, classes, ridge, epsilon, num_steps): the estimator's loss constants at sizes of the datasets
    (5093, 2, 0.01, 1.0, 1000),
    (455, 2, 0.03, 3.0, 1000),
    (1437, 10, 0.03, 1.0, 2000),
    (7420, 2, 0.003, 8.0, 5000),
)


def last_iterate_ratio(n: int, classes: int, ridge: float, epsilon: float, num_steps: int) -> dict[str, float]:
    """Every bound's epsilon at the noise shifted interpolation calibrates to (epsilon, 1/n^1.1) at num_steps (equal
    noise for all)."""
    from privdyn.privacy.langevin import shifted_interpolation_gdp
    from privdyn.sklearn._logistic import _Constants

    c = _Constants(classes, ridge)
    delta = n**-1.1
    unit = shifted_interpolation_gdp(num_steps=num_steps, step_size=c.step_size, noise_scale=1.0,
                                     strong_convexity=ridge, smoothness=c.smoothness, sensitivity=c.sensitivity,
                                     n=n).value
    sigma = unit / gaussian_mu(epsilon, delta)
    return account(n=n, num_steps=num_steps, step_size=c.step_size, noise_scale=sigma, strong_convexity=ridge,
                   smoothness=c.smoothness, sensitivity=c.sensitivity, delta=delta)


@pytest.mark.parametrize(("n", "classes", "ridge", "epsilon", "num_steps"), RATIO_SETTINGS)
def test_last_iterate_saves_at_least_half_at_many_steps(n: int, classes: int, ridge: float, epsilon: float,
                                                        num_steps: int) -> None:
    accounted = last_iterate_ratio(n, classes, ridge, epsilon, num_steps)
    assert 0.99 * epsilon <= accounted["last_iterate_epsilon"] <= epsilon * (1 + 1e-9)
    assert accounted["last_iterate_epsilon"] <= 0.5 * accounted["composition_epsilon"]


def test_audit_row_runs_the_fit_without_violation() -> None:
    from privdyn.audit.core import audit_mechanism
    from privdyn.audit.mechanisms import mechanism

    row = audit_mechanism(mechanism("sklearn-dplogisticregression"), runs=200, seed=0)
    assert not row.violation and row.guarantee == "bound"
    fitted = DPLogisticRegression(epsilon=2.0, delta=1e-5, feature_norm=1.0, fit_intercept=False, ridge=0.5,
                                  max_iter=50, random_state=0).fit(*mechanism("sklearn-dplogisticregression")
                                                                    .datasets()[0])
    assert row.epsilon == fitted.privacy_["epsilon"]


def test_the_same_coefficients_whatever_the_number_of_blas_threads() -> None:
    """The fit pins BLAS to one thread: OpenBLAS splits the gradient's sum over the rows among its threads at this
    size, which changes its last bits (and, over the steps, the coefficients')."""
    from threadpoolctl import threadpool_limits

    x, y = _data(n=20_000, d=50)
    fits = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            model = DPLogisticRegression(feature_norm=20.0, random_state=3, max_iter=20).fit(x, y)
        fits.append(np.concatenate([model.coef_.ravel(), model.intercept_]))
    np.testing.assert_array_equal(fits[0], fits[1])
