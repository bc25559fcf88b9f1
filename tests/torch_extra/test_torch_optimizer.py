"""privdyn.torch.PrivateOptimizer: the NumPy DP-SGD trainer's iterates, per-example engines, resume, bad input."""

import functools
import io
import math

import numpy as np
import pytest

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from privdyn.algorithms.dpsgd import DPSGD, sample_batches  # noqa: E402
from privdyn.models.kan import KAN as NumpyKAN  # noqa: E402
from privdyn.privacy import correlated as cn  # noqa: E402
from privdyn.torch import KAN, BatchSampler, PrivateOptimizer  # noqa: E402

CROSS_ENTROPY = functools.partial(F.cross_entropy, reduction="none")


def _mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 3)).double()


def _data(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 10, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g)


@pytest.mark.parametrize("strategy", [cn.LambdaCGD(0.7), cn.BufferedToeplitz([0.9, 0.5], [0.3, 0.1])], ids=repr)
def test_kan_closed_form_matches_numpy_dpsgd(strategy):
    """Same batches, same counter-based noise, SGD underneath: the iterates of privdyn.algorithms.dpsgd.DPSGD."""
    rng = np.random.default_rng(0)
    model = NumpyKAN.initialize(d=5, width=8, grid_size=4, generator=rng)
    params = model.initial_parameters(rng)
    x = rng.standard_normal((60, 5))
    x *= (rng.uniform(0.0, 1.0, 60) / np.linalg.norm(x, axis=1))[:, None]
    y = np.where(x[:, 0] > 0, 1.0, -1.0)
    step_size, clip, kappa, batch_size, steps = 0.5, 0.02, 1.3, 16, 8
    reference = DPSGD(model, params, x, y, step_size=step_size, batch_size=batch_size, clip=clip,
                      noise_multiplier=kappa, strategy=strategy, sampling_generator=np.random.default_rng(1),
                      noise_source=cn.step_normals(0, "torch/dpsgd"))
    twin = KAN.from_numpy(model, params)
    private = PrivateOptimizer(torch.optim.SGD(twin.parameters(), lr=step_size), twin, clip=clip,
                               noise_multiplier=kappa, batch_size=batch_size, strategy=strategy,
                               noise_source=cn.step_normals(0, "torch/dpsgd"), num_steps=steps)
    assert private.per_example == "closed_form"
    batches = sample_batches("fixed_size", n=60, batch_size=batch_size, generator=np.random.default_rng(1))
    clipped = 0
    for _ in range(steps):
        index = next(batches)
        reference.step()
        clipped += reference.last_num_clipped
        private.step(torch.tensor(x[index]), torch.tensor(y[index]))
        np.testing.assert_allclose(twin.weight.detach().numpy(), reference.params, rtol=0, atol=1e-12)
    assert clipped > 0  # clipping was exercised


def test_vmap_and_opacus_engines_agree():
    pytest.importorskip("opacus", reason="Opacus is not installed")
    x, y = _data()
    results = {}
    for engine in ("vmap", "opacus"):
        model = _mlp()
        private = PrivateOptimizer(torch.optim.Adam(model.parameters(), lr=1e-2), model, CROSS_ENTROPY, clip=0.3,
                                   noise_multiplier=0.8, batch_size=32, strategy=cn.LambdaCGD(0.5),
                                   noise_source=cn.step_normals(1, "torch/engines"), per_example=engine)
        for step in range(4):
            private.step(x[step * 16: step * 16 + 32], y[step * 16: step * 16 + 32])
        results[engine] = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    torch.testing.assert_close(results["vmap"], results["opacus"], rtol=0, atol=1e-12)


def test_clipping_and_noise_scale_of_one_step():
    """grad = (sum_i g_i min(1, clip/||g_i||) + clip kappa xi_1) / B, checked against per-example autograd."""
    x, y = _data(n=8)
    model = _mlp()
    clip, kappa = 0.2, 0.7
    per_example = []
    for i in range(8):
        loss = CROSS_ENTROPY(model(x[i: i + 1]), y[i: i + 1]).sum()
        per_example.append(torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, list(model.parameters()))]))
    g = torch.stack(per_example)
    factor = torch.clamp(clip / g.norm(dim=1), max=1.0)
    source = cn.step_normals(4, "torch/one")
    size = g.shape[1]
    expected = ((factor[:, None] * g).sum(0) + clip * kappa * torch.from_numpy(source.draw(1, size))) / 8
    private = PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.0), model, CROSS_ENTROPY, clip=clip,
                               noise_multiplier=kappa, batch_size=8, noise_source=source, per_example="vmap")
    private.step(x, y)
    torch.testing.assert_close(torch.cat([p.grad.reshape(-1) for p in model.parameters()]), expected,
                               rtol=1e-12, atol=1e-15)


def test_checkpoint_resume_gives_the_same_run():
    x, y = _data()

    def build():
        model = _mlp()
        return model, PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), model,
                                       CROSS_ENTROPY, clip=0.5, noise_multiplier=1.0, batch_size=16,
                                       strategy=cn.BufferedToeplitz([0.9, 0.5], [0.3, 0.1]),
                                       noise_source=torch.Generator().manual_seed(3), per_example="vmap",
                                       num_steps=6)

    model, private = build()
    for step in range(6):
        private.step(x[step * 8: step * 8 + 16], y[step * 8: step * 8 + 16])
    expected = [p.detach().clone() for p in model.parameters()]
    model, private = build()
    for step in range(3):
        private.step(x[step * 8: step * 8 + 16], y[step * 8: step * 8 + 16])
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "private": private.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=True)
    assert saved["private"]["holds_secret"]
    model, private = build()
    model.load_state_dict(saved["model"])
    private.load_state_dict(saved["private"])
    for step in range(3, 6):
        private.step(x[step * 8: step * 8 + 16], y[step * 8: step * 8 + 16])
    with pytest.raises(ValueError, match="num_steps=6"):
        private.step(x[:16], y[:16])
    for p, q in zip(model.parameters(), expected, strict=True):
        assert torch.equal(p, q)


def test_batch_sampler_draws_the_numpy_batches():
    sampler = BatchSampler(50, 7, sampler="fixed_size", num_steps=4, generator=np.random.default_rng(9))
    reference = sample_batches("fixed_size", n=50, batch_size=7, generator=np.random.default_rng(9))
    assert len(sampler) == 4
    for _ in range(2):  # a second pass continues the stream
        for batch in sampler:
            assert batch == next(reference).tolist()
    with pytest.raises(ValueError, match="batch_size must be <= n=50"):
        BatchSampler(50, 51, sampler="fixed_size", num_steps=1, generator=np.random.default_rng(0))


def test_batch_sampler_draws_cyclic_poisson_batches_with_the_strategy_parts():
    """The parts come from the strategy (its encoder's bands, as the accountant's), never from the user."""
    strategy = cn.Toeplitz([1.0, 0.5, 0.25])
    sampler = BatchSampler(60, 4, sampler="cyclic_poisson", num_steps=5, generator=np.random.default_rng(9),
                           strategy=strategy)
    reference = sample_batches("cyclic_poisson", n=60, batch_size=4, rng=np.random.default_rng(9), num_partitions=3)
    assert sampler.num_partitions == 3 and "num_partitions=3" in repr(sampler)
    for _ in range(2):  # a second pass continues the stream (and the cycle of parts)
        for batch in sampler:
            assert batch == next(reference).tolist()
    with pytest.raises(ValueError, match="strategy is required by sampler='cyclic_poisson'"):
        BatchSampler(60, 4, sampler="cyclic_poisson", num_steps=1, generator=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"batch_size must be <= n / num_partitions = 20 .* got batch_size=21"):
        BatchSampler(60, 21, sampler="cyclic_poisson", num_steps=1, generator=np.random.default_rng(0),
                     strategy=strategy)
    from privdyn.privacy.accounting import NotAccountableError

    with pytest.raises(NotAccountableError, match="cyclic_poisson_dense_encoder"):
        BatchSampler(60, 4, sampler="cyclic_poisson", num_steps=1, generator=np.random.default_rng(0),
                     strategy=cn.LambdaCGD(0.5))


def test_empty_poisson_batch_adds_noise_only():
    model = _mlp()
    before = [p.detach().clone() for p in model.parameters()]
    private = PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=1.0), model, CROSS_ENTROPY, clip=1.0,
                               noise_multiplier=1.0, batch_size=4, noise_source=cn.step_normals(0, "e"),
                               per_example="vmap")
    private.step(torch.zeros(0, 10, dtype=torch.float64), torch.zeros(0, dtype=torch.int64))
    size = sum(p.numel() for p in before)
    expected = -torch.from_numpy(cn.step_normals(0, "e").draw(1, size)) / 4
    moved = torch.cat([(p.detach() - b).reshape(-1) for p, b in zip(model.parameters(), before, strict=True)])
    torch.testing.assert_close(moved, expected)


@pytest.mark.parametrize("engine", ["vmap", "opacus"])
def test_bad_input_is_refused_before_any_step(engine):
    if engine == "opacus":
        pytest.importorskip("opacus", reason="Opacus is not installed")
    model = _mlp()

    def make(**overrides):
        kwargs = dict(clip=1.0, noise_multiplier=1.0, batch_size=8, noise_source=cn.step_normals(0, "b"),
                      per_example=engine)
        kwargs.update(overrides)
        return PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, CROSS_ENTROPY, **kwargs)

    with pytest.raises(ValueError, match="clip must be finite"):
        make(clip=math.inf)
    with pytest.raises(ValueError, match="noise_multiplier must be finite"):
        make(noise_multiplier=math.nan)
    with pytest.raises(ValueError, match="batch_size must be <= n=5"), pytest.warns(DeprecationWarning):
        make(batch_size=8, n=5, sampler="fixed_size", neighboring="zero_out")  # the deprecated strings
    with pytest.raises(ValueError, match="num_steps is required"):
        make(strategy=cn.SquareRoot())
    with pytest.raises(TypeError, match="source must be"):
        make(noise_source=42)
    assert make(noise_source=None).noise.holds_secret  # the default: secure_source()
    norm_model = nn.Sequential(nn.Linear(10, 4), nn.BatchNorm1d(4)).double()
    with pytest.raises(ValueError, match="no per-example gradient rule"):
        PrivateOptimizer(torch.optim.SGD(norm_model.parameters(), lr=0.1), norm_model, CROSS_ENTROPY, clip=1.0,
                         noise_multiplier=1.0, batch_size=8, noise_source=cn.step_normals(0, "b"), per_example=engine)
    with pytest.raises(ValueError, match="closed-form"):
        make(per_example="closed_form")
