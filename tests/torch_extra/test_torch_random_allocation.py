"""Random allocation (balls-in-bins) in privdyn.torch: the sampler, empty batches, the accountant's row, refusals."""

import functools

import numpy as np
import pytest

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from privdyn.algorithms.dpsgd import sample_batches  # noqa: E402
from privdyn.privacy import accounting, random_allocation  # noqa: E402
from privdyn.privacy import correlated as cn  # noqa: E402
from privdyn.torch import BatchSampler, DPSGDAccountant, PrivateOptimizer, allow_empty_batches  # noqa: E402

CROSS_ENTROPY = functools.partial(F.cross_entropy, reduction="none")
N, DELTA = 20, 1e-5  # batch_size 1: epochs of 20 steps, each batch empty with probability (19/20)^20 = 0.36


def _data(n=N):
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, 10, generator=g, dtype=torch.float64), torch.randint(0, 3, (n,), generator=g)


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 8), nn.Tanh(), nn.Linear(8, 3)).double()


def test_batch_sampler_draws_the_numpy_allocation_in_whole_epochs():
    sampler = BatchSampler(N, 3, sampler="random_allocation", num_steps=14, generator=np.random.default_rng(4))
    reference = sample_batches("random_allocation", n=N, batch_size=3, rng=np.random.default_rng(4))
    assert sampler.steps_per_epoch == 7 and len(sampler) == 14
    for _ in range(2):  # a second pass continues the stream
        batches = list(sampler)
        assert batches == [next(reference).tolist() for _ in range(14)]
        for epoch in (batches[:7], batches[7:]):  # every record in exactly one step of each epoch
            assert sorted(i for batch in epoch for i in batch) == list(range(N))
    with pytest.raises(ValueError, match=r"num_steps must be a multiple of the 7 steps .* got num_steps=10"):
        BatchSampler(N, 3, sampler="random_allocation", num_steps=10, generator=np.random.default_rng(0))


@pytest.mark.parametrize("per_example", ["vmap", "opacus"])
def test_empty_batches_add_the_steps_noise_and_step_the_accountant(per_example):
    """A DataLoader over the shipped sampler (collate: allow_empty_batches) and PrivateOptimizer bound to it: an empty
    batch moves the parameters by exactly the step's noise, and the accountant counts all 40 steps (two epochs) and
    reports, through the allow-list's random-allocation row, the epsilon of privacy.random_allocation itself."""
    if per_example == "opacus":
        pytest.importorskip("opacus", reason="Opacus is not installed")
    x, y = _data()
    dataset = torch.utils.data.TensorDataset(x, y)
    sampler = BatchSampler(N, 1, sampler="random_allocation", neighboring="add_remove", num_steps=N,
                           generator=np.random.default_rng(1))
    loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler, collate_fn=allow_empty_batches(dataset))
    model, kappa, lr, key = _mlp(), 1.3, 0.1, "empty-allocation"
    private = PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=lr), model, CROSS_ENTROPY, clip=1.0,
                               noise_multiplier=kappa, noise_source=cn.step_normals(0, key), num_steps=2 * N,
                               batch_sampler=sampler, per_example=per_example)
    assert private.accountant.row.accountant == "random_allocation_pld" and private.accountant.n == N
    size = sum(p.numel() for p in model.parameters())
    sizes = []
    for _ in range(2):
        for xb, yb in loader:
            before = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
            private.zero_grad()
            private.step(xb, yb)
            after = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
            sizes.append(xb.shape[0])
            if xb.shape[0] == 0:
                noise = torch.from_numpy(cn.step_normals(0, key).draw(private.steps, size))
                torch.testing.assert_close(after - before, -lr * kappa * noise, rtol=1e-12, atol=1e-12)
    assert sizes.count(0) >= 5 and sum(sizes[:N]) == sum(sizes[N:]) == N
    assert private.steps == private.accountant.steps == 2 * N
    spent = private.privacy_spent(DELTA)
    assert spent.sampler == "random_allocation" and spent.guarantee.value == "bound"
    expected = random_allocation.epsilon(kappa, steps_per_epoch=N, num_epochs=2, delta=DELTA,
                                         neighboring="add_remove")
    assert float(spent) == float(expected.value)


def test_an_optimizer_that_disagrees_with_its_batch_sampler_is_refused():
    model = _mlp()
    sampler = BatchSampler(N, 2, sampler="random_allocation", neighboring="add_remove", num_steps=10,
                           generator=np.random.default_rng(0))

    def make(**overrides):
        kwargs = dict(clip=1.0, noise_multiplier=1.0, noise_source=cn.step_normals(0, "b"), batch_sampler=sampler,
                      per_example="vmap")
        kwargs.update(overrides)
        return PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, CROSS_ENTROPY, **kwargs)

    with pytest.raises(ValueError, match="sampler='poisson' disagrees with the batch sampler's "
                                         "sampler='random_allocation'"), pytest.warns(DeprecationWarning):
        make(n=N, sampler="poisson")
    with pytest.raises(ValueError, match="n=40 disagrees with the batch sampler's n=20"), \
            pytest.warns(DeprecationWarning):
        make(n=40, sampler="random_allocation")
    with pytest.raises(ValueError, match="neighboring='zero_out' disagrees with the batch sampler's "
                                         "neighboring='add_remove'"), pytest.warns(DeprecationWarning):
        make(neighboring="zero_out")
    with pytest.raises(ValueError, match="batch_size=4 disagrees with the batch sampler's batch_size=2"):
        make(batch_size=4)
    unrelated = BatchSampler(N, 2, sampler="random_allocation", num_steps=10, generator=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"BatchSampler\(\.\.\., neighboring="):
        make(batch_sampler=unrelated)
    with pytest.raises(TypeError, match="batch_sampler must be a privdyn.torch.BatchSampler"):
        make(batch_sampler=torch.utils.data.BatchSampler(range(N), 2, drop_last=False))
    bound = make()
    assert (bound.accountant.sampler, bound.accountant.n, bound.batch_size) == ("random_allocation", N, 2)


@pytest.mark.parametrize(("strategy", "neighboring", "reason"), [
    (cn.LambdaCGD(0.5), "replace_one", "correlated_replace_one"),
    (cn.SquareRoot(), "zero_out", "square_root_cost"),
    (cn.Independent(), "replace_one", "relation_not_covered"),
])
def test_what_the_allow_list_refuses_is_refused_before_training(strategy, neighboring, reason):
    sampler = BatchSampler(N, 2, sampler="random_allocation", neighboring=neighboring, num_steps=10,
                           generator=np.random.default_rng(0))
    with pytest.raises(accounting.NotAccountableError, match="sampler='random_allocation'") as refused:
        DPSGDAccountant(strategy, sampler, noise_multiplier=1.0)
    assert refused.value.reason == reason
    model = _mlp()
    with pytest.raises(accounting.NotAccountableError, match="sampler='random_allocation'"):
        PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, CROSS_ENTROPY, clip=1.0,
                         noise_multiplier=1.0, strategy=strategy, noise_source=cn.step_normals(0, "r"),
                         num_steps=10, batch_sampler=sampler, per_example="vmap")


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
def test_privacy_engine_trains_random_allocation_epochs_through_empty_batches():
    pytest.importorskip("opacus", reason="Opacus is not installed")
    from privdyn.torch import PrivacyEngine, SemanticsWarning

    x, y = _data()
    sampler = BatchSampler(N, 1, sampler="random_allocation", neighboring="add_remove", num_steps=N,
                           generator=np.random.default_rng(2))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_sampler=sampler)
    model = _mlp()
    engine = PrivacyEngine(noise_source=cn.step_normals(0, "engine"))
    model, optimizer, private_loader = engine.make_private(module=model,
                                                           optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                                           data_loader=loader, noise_multiplier=1.0,
                                                           max_grad_norm=1.0, epochs=2)
    for _ in range(2):
        seen = []
        for xb, yb in private_loader:
            seen.append(xb.shape[0])
            optimizer.zero_grad()
            F.cross_entropy(model(xb), yb, reduction="sum").backward()
            optimizer.step()
        assert len(seen) == N and sum(seen) == N and 0 in seen  # every example once per epoch, empty batches
    assert optimizer.steps == engine.accountant.steps == 2 * N
    with pytest.warns(SemanticsWarning, match="random_allocation sampling"):
        epsilon = engine.get_epsilon(DELTA)
    assert epsilon == float(random_allocation.epsilon(1.0, steps_per_epoch=N, num_epochs=2, delta=DELTA,
                                                      neighboring="add_remove").value)
    assert private_loader.batch_sampler is sampler is engine.accountant.batch_sampler  # one sampler object
    dropping = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=3, drop_last=True)
    with pytest.raises(ValueError, match=r"ceil\(n / batch_size\) = 7 steps .* len\(data_loader\) = 6"), \
            pytest.warns(DeprecationWarning, match="'sampler' is deprecated"):
        PrivacyEngine(sampler="random_allocation").make_private(
            module=_mlp(), optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=dropping,
            noise_multiplier=1.0, max_grad_norm=1.0, epochs=1)



def test_cyclic_poisson_optimizer_with_another_band_count_is_refused():
    """The optimizer's strategy implies a number of cyclic-Poisson parts; a batch sampler built for another is
    refused."""
    model = _mlp()
    sampler = BatchSampler(N, 2, sampler="cyclic_poisson", neighboring="add_remove", num_steps=10,
                           generator=np.random.default_rng(0), strategy=cn.Toeplitz([1.0, 0.5]))
    with pytest.raises(ValueError, match="num_partitions=2"):
        PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, CROSS_ENTROPY, clip=1.0,
                         noise_multiplier=1.0, strategy=cn.Toeplitz([1.0, 0.5, 0.25]),
                         noise_source=cn.step_normals(0, "c"), num_steps=10, batch_sampler=sampler,
                         per_example="vmap")
