"""The kan paper's KAN (arXiv 2605.12648, Section 3.1, Appendix B) and logistic regression: forward pass, closed-form
per-example gradients against finite differences and an independent dense implementation, NTK Gram, bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.interpolate import BSpline

from privdyn.models.bspline import BSplineBasis, bspline_bounds
from privdyn.models.kan import ACTIVATIONS, KAN, logistic_loss, logistic_loss_derivative
from privdyn.models.logistic import LogisticRegression


def _data(rng, n, d, max_norm=1.0):
    x = rng.standard_normal((n, d))
    x *= (rng.uniform(0.0, max_norm, n) / np.linalg.norm(x, axis=1))[:, None]
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return x, y


def _small(activation="sigmoid", grid_size=3, spline_order=3, seed=0, width=4, d=3):
    rng = np.random.default_rng(seed)
    model = KAN.initialize(d=d, width=width, rng=rng, grid_size=grid_size, spline_order=spline_order,
                           activation=activation)
    return model, model.initial_parameters(rng), rng


def _reference_forward(model: KAN, params: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The paper's double sum, written independently with scipy's B-spline basis elements."""
    basis = model.basis
    k, p = basis.spline_order, basis.num_basis
    elements = [BSpline.basis_element(basis.knots[i: i + k + 2], extrapolate=False) for i in range(p)]

    def h(v):
        return np.nan_to_num(np.stack([e(v) for e in elements], axis=-1))

    w = params.reshape(model.width, model.d, p)  # w[j, i, k]
    sigma = {"sigmoid": lambda s: 1.0 / (1.0 + np.exp(-s)), "tanh": np.tanh}[model.activation.name]
    out = np.zeros(x.shape[0])
    for row, xi in enumerate(x):
        hx = h(xi)  # (d, p)
        pre = np.einsum("jik,ik->j", w, hx) / math.sqrt(model.d)
        out[row] = np.sum(model.second_layer * h(sigma(pre))) / math.sqrt(model.width)
    return out


@pytest.mark.parametrize("activation", ["sigmoid", "tanh"])
@pytest.mark.parametrize(("grid_size", "spline_order"), [(3, 3), (5, 3), (4, 4)])
def test_forward_matches_the_papers_double_sum(activation, grid_size, spline_order):
    model, params, rng = _small(activation, grid_size, spline_order)
    x, _ = _data(rng, 25, model.d)
    np.testing.assert_allclose(model.forward(params, x), _reference_forward(model, params, x), rtol=1e-12,
                               atol=1e-13)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh"])
@pytest.mark.parametrize(("grid_size", "spline_order"), [(3, 3), (5, 4)])
def test_per_example_gradients_match_finite_differences(activation, grid_size, spline_order):
    model, params, rng = _small(activation, grid_size, spline_order, width=3, d=2)
    x, y = _data(rng, 4, model.d)
    losses, a, h = model.loss_and_gradient_factors(params, x, y)
    np.testing.assert_allclose(losses, model.per_example_losses(params, x, y), rtol=1e-14)
    eps = 1e-5
    for i in range(x.shape[0]):
        dense = np.outer(a[i], h[i])
        np.testing.assert_allclose(model.single_example_gradient(params, x[i], y[i]), dense, rtol=1e-14, atol=0)
        fd = np.zeros(params.size)
        for c in range(params.size):
            e = np.zeros(params.size)
            e[c] = eps
            up = model.per_example_losses(params + e.reshape(params.shape), x[i: i + 1], y[i: i + 1])[0]
            down = model.per_example_losses(params - e.reshape(params.shape), x[i: i + 1], y[i: i + 1])[0]
            fd[c] = (up - down) / (2 * eps)
        # central differences: truncation eps^2 |l'''| / 6 and rounding ~1e-16 / eps, both far below 1e-8
        np.testing.assert_allclose(fd, dense.reshape(-1), rtol=0, atol=1e-8)


def test_batch_gradient_is_the_mean_of_single_example_gradients():
    model, params, rng = _small("tanh", 5, 3, width=6, d=4)
    x, y = _data(rng, 9, model.d)
    dense = np.mean([model.single_example_gradient(params, x[i], y[i]) for i in range(9)], axis=0)
    np.testing.assert_allclose(model.gradient(params, x, y), dense, rtol=1e-13, atol=1e-16)
    # the loss factor: A = l'(y f) y a / sqrt(md) with a from the output gradient
    a_out, h_out = model.output_gradient_factors(params, x)
    f = model.forward(params, x)
    _, a, h = model.loss_and_gradient_factors(params, x, y)
    np.testing.assert_allclose(a, a_out * (logistic_loss_derivative(y * f) * y)[:, None], rtol=1e-14)
    np.testing.assert_array_equal(h, h_out)


def test_output_gradient_matches_finite_differences_of_forward():
    model, params, rng = _small("sigmoid", 4, 3, width=5, d=3)
    x, _ = _data(rng, 3, model.d)
    a, h = model.output_gradient_factors(params, x)
    direction = rng.standard_normal(params.shape)
    eps = 1e-5
    fd = (model.forward(params + eps * direction, x) - model.forward(params - eps * direction, x)) / (2 * eps)
    np.testing.assert_allclose(fd, np.einsum("nj,jc,nc->n", a, direction, h), rtol=0, atol=1e-8)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh"])
def test_hessian_blocks_match_finite_differences_of_the_gradient(activation):
    model, params, rng = _small(activation, 4, 3, width=4, d=3)
    x, _ = _data(rng, 3, model.d)
    q = model.hessian_block_scalars(params, x)
    h = model.features(x)
    direction = rng.standard_normal(params.shape)
    eps = 1e-5
    a_up, _ = model.output_gradient_factors(params + eps * direction, x)
    a_down, _ = model.output_gradient_factors(params - eps * direction, x)
    fd = np.einsum("nj,nc->njc", (a_up - a_down) / (2 * eps), h)  # directional derivative of grad f
    # block j of the Hessian times the direction: q[n, j] h h^T w_j  ->  q[n, j] (h . dir_j) h
    exact = np.einsum("nj,jc,nc,nd->njd", q, direction, h, h)
    np.testing.assert_allclose(fd, exact, rtol=0, atol=1e-8)


def test_per_example_gradient_gram_is_the_ntk_gram():
    model, params, rng = _small("tanh", 3, 3, width=5, d=3)
    x, y = _data(rng, 7, model.d)
    phi = np.stack([(y[i] * np.outer(*[f[i] for f in model.output_gradient_factors(params, x)])).reshape(-1)
                    for i in range(7)])
    np.testing.assert_allclose(model.per_example_gradient_gram(params, x, y), phi @ phi.T, rtol=1e-12, atol=1e-15)
    unsigned = model.per_example_gradient_gram(params, x)
    np.testing.assert_allclose(unsigned, (phi * y[:, None]) @ (phi * y[:, None]).T, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh"])
def test_gradient_norm_obeys_the_lemma_b6_bound(activation):
    # ||grad f|| = ||a|| ||h|| / sqrt(md) <= (B'_s B'_b sqrt(p) ||c||) (sqrt(dp) B_b) / sqrt(md)
    #            = B'_s B_b B'_b p ||c|| / sqrt(m), which on the event E_delta gives eq. (5) of the paper.
    # It holds for every W, so W is scaled over three orders of magnitude.
    model, params, rng = _small(activation, 5, 3, width=16, d=6)
    b, db, _ = bspline_bounds(grid_size=5)
    bound = ACTIVATIONS[activation].first_derivative_bound * b * db * model.num_basis
    bound *= np.linalg.norm(model.second_layer) / math.sqrt(model.width)
    for scale in (0.1, 1.0, 10.0):
        x, _ = _data(rng, 50, model.d)
        a, h = model.output_gradient_factors(scale * params, x)
        norms = np.linalg.norm(a, axis=1) * np.linalg.norm(h, axis=1)
        assert np.all(norms <= bound)


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_activation_bounds_are_the_suprema(name):
    act = ACTIVATIONS[name]
    s = np.linspace(-20, 20, 400001)
    values = act.derivatives(s)
    for got, bound in zip(values, act.bounds, strict=True):
        assert np.abs(got).max() <= bound + 1e-15
        assert np.abs(got).max() >= bound - 1e-8  # grid step 1e-4 near a smooth maximum: O(1e-8) below
    lo, hi = act.output_range
    assert values[0].min() >= lo and values[0].max() <= hi


def test_logistic_loss_is_stable():
    z = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    np.testing.assert_allclose(logistic_loss(z), [800.0, 30.0 + math.log1p(math.exp(-30)), math.log(2),
                                                  math.log1p(math.exp(-30)), 0.0], rtol=1e-15)
    np.testing.assert_allclose(logistic_loss_derivative(z), [-1.0, -1 / (1 + math.exp(-30)), -0.5,
                                                             -1 / (1 + math.exp(30)), 0.0], rtol=1e-15)


def test_initialization_is_standard_normal_and_seeded():
    model = KAN.initialize(d=4, width=200, rng=np.random.default_rng(3))
    assert model.parameter_shape == (200, 4 * 8) and model.num_parameters == 200 * 4 * 8
    same = KAN.initialize(d=4, width=200, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(model.second_layer, same.second_layer)
    c = model.second_layer.reshape(-1)
    # mean and variance of 1600 N(0,1) draws within z = 5 standard errors
    assert abs(c.mean()) <= 5 / math.sqrt(c.size)
    assert abs(c.var() - 1.0) <= 5 * math.sqrt(2.0 / c.size)


def test_logistic_regression_interface():
    rng = np.random.default_rng(1)
    model = LogisticRegression(d=5)
    x, y = _data(rng, 12, 5, max_norm=3.0)
    w = rng.standard_normal((1, 5))
    losses, a, h = model.loss_and_gradient_factors(w, x, y)
    np.testing.assert_allclose(losses, np.log1p(np.exp(-y * (x @ w[0]))), rtol=1e-13)
    dense = np.stack([model.single_example_gradient(w, x[i], y[i])[0] for i in range(12)])
    np.testing.assert_allclose(dense, (-y / (1 + np.exp(y * (x @ w[0]))))[:, None] * x, rtol=1e-13)
    np.testing.assert_allclose(model.gradient(w, x, y)[0], dense.mean(0), rtol=1e-13)
    np.testing.assert_allclose(model.per_example_gradient_gram(w, x, y), np.outer(y, y) * (x @ x.T), rtol=1e-14)
    eps = 1e-6
    fd = [(model.loss(w + eps * e, x, y) - model.loss(w - eps * e, x, y)) / (2 * eps) for e in np.eye(5)[:, None]]
    np.testing.assert_allclose(fd, model.gradient(w, x, y)[0], atol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"width": 0}, "width"), ({"grid_size": 0}, "grid_size"), ({"d": 0}, "d"),
     ({"activation": "relu"}, "activation"), ({"interval": (0.0, 1.0)}, "basis.interval")],
)
def test_bad_construction(kwargs, name):
    args = {"d": 3, "width": 4, "rng": np.random.default_rng(0)} | kwargs
    with pytest.raises(ValueError, match=name):
        KAN.initialize(**args)


def test_bad_inputs():
    model, params, rng = _small()
    x, y = _data(rng, 5, model.d)
    with pytest.raises(ValueError, match=r"x must have rows with \|\|x\|\|_2 <= 1"):
        model.forward(params, 1.5 * x / np.linalg.norm(x, axis=1, keepdims=True))
    bad = x.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="x must be finite"):
        model.forward(params, bad)
    with pytest.raises(ValueError, match="x must have shape"):
        model.forward(params, x[:, :2])
    with pytest.raises(ValueError, match="y must hold labels"):
        model.loss(params, x, np.zeros(5))
    with pytest.raises(ValueError, match="params must have shape"):
        model.forward(params[:, :-1], x)
    with pytest.raises(ValueError, match="x must be finite"):
        LogisticRegression(d=3).forward(np.zeros((1, 3)), bad)
    with pytest.raises(ValueError, match="x must have rows"):
        LogisticRegression(d=3, input_norm_bound=1.0).forward(np.zeros((1, 3)), 2 * x)
    # Without the norm bound, coordinates must still lie in the basis interval.
    loose = KAN(d=3, second_layer=model.second_layer, basis=BSplineBasis(grid_size=3), input_norm_bound=None)
    loose.forward(params, np.full((1, 3), 0.9))
    with pytest.raises(ValueError, match="basis interval"):
        loose.forward(params, np.full((1, 3), 1.1))
