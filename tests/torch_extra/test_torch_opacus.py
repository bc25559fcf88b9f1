"""Opacus interop: privdyn's DPOptimizer inside an Opacus training loop, and the drop-in PrivacyEngine."""

import numpy as np
import pytest

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
opacus = pytest.importorskip("opacus", reason="Opacus is not installed")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from privdyn.privacy import correlated as cn  # noqa: E402
from privdyn.torch import DPOptimizer, PrivateOptimizer  # noqa: E402


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3)).double()


def _data(n=96):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 10, generator=g, dtype=torch.float64)
    return x, (x[:, 0] > 0).long() + (x[:, 1] > 0).long()


def test_dp_optimizer_adds_the_privdyn_noise_to_opacus_clipping():
    """Opacus' clipped sum plus clip * kappa * xi_t (lambda-CGD), divided by the expected batch size."""
    x, y = _data(32)
    model = _mlp()
    wrapped = opacus.GradSampleModule(model)
    source = cn.step_normals(0, "opacus")
    optimizer = DPOptimizer(torch.optim.SGD(model.parameters(), lr=0.0), noise_multiplier=0.9, max_grad_norm=0.4,
                            expected_batch_size=32, strategy=cn.LambdaCGD(0.6), noise_source=source)
    size = sum(p.numel() for p in model.parameters())
    reference = cn.LambdaCGD(0.6).stream(size, source, scale=0.9 * 0.4)
    for _ in range(3):
        optimizer.zero_grad()
        F.cross_entropy(wrapped(x), y).backward()
        optimizer.pre_step()
        summed = torch.cat([p.summed_grad.reshape(-1) for p in model.parameters()])
        grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        torch.testing.assert_close(grad, (summed + torch.from_numpy(reference.next().copy())) / 32)
    assert optimizer.steps == 3 and len(optimizer.noise.buffers) == 1


def test_dp_optimizer_matches_the_private_optimizer():
    x, y = _data(32)
    model = _mlp()
    wrapped = opacus.GradSampleModule(model)
    optimizer = DPOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), noise_multiplier=1.0, max_grad_norm=1e3,
                            expected_batch_size=32, strategy=cn.BufferedToeplitz([0.9], [0.2]),
                            noise_source=cn.step_normals(1, "same"))
    twin = _mlp()
    private = PrivateOptimizer(torch.optim.SGD(twin.parameters(), lr=0.1), twin,
                               lambda out, target: F.cross_entropy(out, target, reduction="none"), clip=1e3,
                               noise_multiplier=1.0, batch_size=32, strategy=cn.BufferedToeplitz([0.9], [0.2]),
                               noise_source=cn.step_normals(1, "same"), per_example="vmap")
    for _ in range(3):  # clip far above the norms: Opacus' clip factor clip / (norm + 1e-6) is then exactly 1
        optimizer.zero_grad()
        F.cross_entropy(wrapped(x), y).backward()
        optimizer.step()
        private.step(x, y)
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-10, atol=1e-12)


def test_opacus_accountants_are_refused():
    model = _mlp()
    optimizer = DPOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), noise_multiplier=1.0, max_grad_norm=1.0,
                            expected_batch_size=8, strategy=cn.LambdaCGD(0.5), noise_source=cn.step_normals(0, "r"))
    accountant = opacus.accountants.RDPAccountant()
    with pytest.raises(TypeError, match="independent noise"):
        optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=0.1))


def test_dp_optimizer_refuses_bad_input_before_any_step():
    model = _mlp()
    with pytest.raises(ValueError, match="max_grad_norm must be finite"):
        DPOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), noise_multiplier=1.0, max_grad_norm=float("inf"),
                    expected_batch_size=8, strategy=cn.LambdaCGD(0.5))
    with pytest.raises(ValueError, match="noise_multiplier must be finite"):
        DPOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), noise_multiplier=float("nan"), max_grad_norm=1.0,
                    expected_batch_size=8, strategy=cn.LambdaCGD(0.5))
    with pytest.raises(ValueError, match="num_steps is required"):
        DPOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), noise_multiplier=1.0, max_grad_norm=1.0,
                    expected_batch_size=8, strategy=cn.SquareRoot())


def test_privacy_engine_defaults_are_opacus_semantics():
    """An Opacus script with one line changed: Poisson sampling, add/remove neighbours and len(data_loader) steps per
    epoch (here 400 examples in batches of 30: 14 steps, not 400 // 30 = 13), device-native secure noise."""
    import warnings

    from privdyn.torch import BatchSampler, DeviceNormals, PrivacyEngine

    x, y = _data(400)
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=30)
    engine = PrivacyEngine(sampling_generator=np.random.default_rng(0))  # Opacus: PrivacyEngine()
    assert (engine.sampler, engine.neighboring) == ("poisson", "add_remove")
    assert isinstance(engine.noise_source, DeviceNormals) and engine.noise_source.secret
    model, optimizer, private_loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                           noise_multiplier=2.0, max_grad_norm=1.0, epochs=2)
    assert isinstance(private_loader.batch_sampler, BatchSampler)
    assert private_loader.batch_sampler.sampler == "poisson" and len(private_loader) == len(loader) == 14
    assert engine.accountant.num_steps == 28
    sizes = []
    for xb, yb in private_loader:
        sizes.append(xb.shape[0])
        optimizer.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    assert optimizer.steps == 14 == engine.accountant.steps and len(set(sizes)) > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Opacus' semantics: no warning
        epsilon = engine.get_epsilon(1e-5)
    loss = engine.privacy_spent(1e-5)
    assert epsilon == float(loss) > 0 and loss.sampler == "poisson" and loss.neighboring == "add_remove"


def test_privacy_engine_names_other_semantics_with_every_epsilon():
    """Fixed-size batches and zero-out neighbours are explicit (the data loader's batch sampler), and every
    get_epsilon says so (not Opacus')."""
    from privdyn.torch import BatchSampler, PrivacyEngine, SemanticsWarning

    x, y = _data(400)
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    batches = BatchSampler(400, 40, sampler="fixed_size", neighboring="zero_out", num_steps=10,
                           generator=np.random.default_rng(0))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_sampler=batches)
    engine = PrivacyEngine(strategy=cn.LambdaCGD(0.5), noise_source=cn.step_normals(0, "engine"))
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=2.0, max_grad_norm=1.0, epochs=1)
    assert loader.batch_sampler is batches and engine.accountant.batch_sampler is batches
    assert (engine.accountant.sampler, engine.accountant.neighboring) == ("fixed_size", "zero_out")
    for xb, yb in loader:
        assert xb.shape[0] == 40
        optimizer.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    assert optimizer.steps == 10 == engine.accountant.steps
    for _ in range(2):
        with pytest.warns(SemanticsWarning, match="fixed_size sampling and zero_out neighbours"):
            engine.get_epsilon(1e-5)


def test_privacy_engine_with_poisson_sampling_trains_through_empty_batches():
    """Poisson batches can be empty: the engine's loader yields them (size 0) and a step adds only noise."""
    from privdyn.torch import PrivacyEngine

    x, y = _data(40)
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=1)
    engine = PrivacyEngine(strategy=cn.Independent(), noise_source=cn.step_normals(0, "empty"),
                           sampling_generator=np.random.default_rng(0))
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=1.0, max_grad_norm=1.0, num_steps=40)
    sizes = []
    for xb, yb in loader:  # rate 1/40: about a third of the batches are empty
        sizes.append(xb.shape[0])
        assert xb.shape[1:] == x.shape[1:] and xb.dtype == x.dtype and yb.dtype == y.dtype
        before = [p.detach().clone() for p in model.parameters()]
        optimizer.zero_grad()
        F.cross_entropy(model(xb), yb, reduction="sum").backward()
        optimizer.step()
        after = list(model.parameters())
        assert all(torch.isfinite(p).all() and not torch.equal(p, b) for p, b in zip(after, before, strict=True))
    assert 0 in sizes and max(sizes) >= 1


def test_allow_empty_batches_collates_the_data_and_refuses_an_empty_dataset():
    from privdyn.torch import allow_empty_batches

    dataset = torch.utils.data.TensorDataset(torch.ones(3, 2, 5), torch.arange(3))
    collate = allow_empty_batches(dataset)
    xb, yb = collate([])
    assert xb.shape == (0, 2, 5) and yb.shape == (0,) and yb.dtype == torch.int64
    xb, yb = collate([dataset[0], dataset[2]])
    assert xb.shape == (2, 2, 5) and yb.tolist() == [0, 2]
    with pytest.raises(ValueError, match="dataset is empty"):
        allow_empty_batches(torch.utils.data.TensorDataset(torch.ones(0, 2)))([])
