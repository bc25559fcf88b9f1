"""privdyn.torch.KAN: the closed-form per-example gradients equal the NumPy KAN's, autograd's and Opacus'."""

import numpy as np
import pytest

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
import torch  # noqa: E402

from privdyn.models.kan import KAN as NumpyKAN  # noqa: E402
from privdyn.torch import KAN  # noqa: E402


def _problem(activation, n=40, d=6, width=9, grid_size=5, seed=0):
    rng = np.random.default_rng(seed)
    model = NumpyKAN.initialize(d=d, width=width, grid_size=grid_size, generator=rng, activation=activation)
    params = model.initial_parameters(rng)
    x = rng.standard_normal((n, d))
    x *= (rng.uniform(0.0, 1.0, n) / np.linalg.norm(x, axis=1))[:, None]
    x[0] = 0.0  # a knot of the basis
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return model, params, x, y


@pytest.mark.parametrize("activation", ["sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_closed_form_equals_numpy_kan(activation, dtype):
    model, params, x, y = _problem(activation)
    twin = KAN.from_numpy(model, params, dtype=dtype)
    losses, a, h = model.loss_and_gradient_factors(params, x, y)
    t_losses, t_a, t_h = twin.loss_and_gradient_factors(torch.tensor(x), torch.tensor(y))
    per_example = np.einsum("ij,ik->ijk", a, h)
    t_per_example = torch.einsum("ij,ik->ijk", t_a, t_h).double().numpy()
    # float64 (the module's default): the 1e-6, met with room to spare; float32: about 100 ulps of the largest
    # entry (the chain of a dozen rounded float32 operations, each conditioned by at most a few units)
    tolerance = 1e-6 if dtype == torch.float64 else 100 * torch.finfo(torch.float32).eps
    scale = np.abs(per_example).max()
    np.testing.assert_allclose(t_per_example, per_example, rtol=0, atol=tolerance * scale)
    np.testing.assert_allclose(t_losses.double().numpy(), losses, rtol=tolerance)
    np.testing.assert_allclose(twin(torch.tensor(x)).detach().double().numpy(), model.forward(params, x),
                               atol=tolerance * 10)
    if dtype == torch.float64:
        np.testing.assert_allclose(t_per_example, per_example, rtol=0, atol=1e-13 * scale)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh"])
def test_closed_form_equals_autograd(activation):
    model, params, x, y = _problem(activation, n=8)
    twin = KAN.from_numpy(model, params)
    _, a, h = twin.loss_and_gradient_factors(torch.tensor(x), torch.tensor(y))
    for i in range(x.shape[0]):
        loss = twin.per_example_losses(twin(torch.tensor(x[i: i + 1])), torch.tensor(y[i: i + 1])).sum()
        (grad,) = torch.autograd.grad(loss, twin.weight)
        torch.testing.assert_close(grad, torch.outer(a[i], h[i]), rtol=0, atol=1e-14)


def test_opacus_hooks_on_the_same_kan_agree():
    opacus = pytest.importorskip("opacus", reason="Opacus is not installed")
    model, params, x, y = _problem("sigmoid", n=16)
    twin = KAN.from_numpy(model, params)
    _, a, h = twin.loss_and_gradient_factors(torch.tensor(x), torch.tensor(y))
    wrapped = opacus.GradSampleModule(twin, loss_reduction="sum")
    twin.per_example_losses(wrapped(torch.tensor(x)), torch.tensor(y)).sum().backward()
    torch.testing.assert_close(twin.weight.grad_sample, torch.einsum("ij,ik->ijk", a, h), rtol=0, atol=1e-13)


def test_kan_refuses_bad_input():
    model, params, x, y = _problem("sigmoid")
    twin = KAN.from_numpy(model, params)
    with pytest.raises(ValueError, match="x must have shape"):
        twin(torch.zeros(3, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="basis interval"):
        twin(torch.full((1, 6), 2.0, dtype=torch.float64))
    with pytest.raises(ValueError, match="y must hold labels"):
        twin.loss_and_gradient_factors(torch.tensor(x), torch.zeros(x.shape[0], dtype=torch.float64))
    with pytest.raises(ValueError, match="second_layer"):
        KAN(3, np.zeros((4, 2)))
    with pytest.raises(ValueError, match="interval"):
        KAN(3, np.zeros((4, 8)), interval=(0.0, 1.0))
