"""Data-parallel private training: 2 CPU processes (gloo) under DistributedDataParallel take the steps of one
process on the same batches, for PrivateOptimizer and Opacus' DPOptimizer, with lambda-CGD and BLT noise."""

import numpy as np
import pytest

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
opacus = pytest.importorskip("opacus", reason="Opacus is not installed")
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from privdyn.privacy import correlated as cn  # noqa: E402
from privdyn.torch import DeviceNormals, DPOptimizer, PrivateOptimizer, secure_source  # noqa: E402

N, BATCH, STEPS, WORLD = 64, 16, 20, 2
CONFIGS = [("private", "lambda"), ("private", "blt"), ("opacus", "lambda"), ("opacus", "blt")]


def _strategy(name):
    return cn.LambdaCGD(0.6) if name == "lambda" else cn.BufferedToeplitz([0.99, 0.9, 0.5, 0.2], [0.05, 0.1, 0.2, 0.3])


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, 6, generator=g, dtype=torch.float64)
    return x, (x[:, 0] > 0).long() + (x[:, 1] > 0).long()


def _batches():
    rng = np.random.default_rng(1)
    return [np.sort(rng.choice(N, BATCH, replace=False)) for _ in range(STEPS)]


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).double()


def _per_example_loss(out, target):
    return F.cross_entropy(out, target, reduction="none")


def _train(kind, strategy, source, shard, module_wrapper=None):
    """STEPS steps on the batches (this rank's ``shard`` of each); the final parameters and the noise key used."""
    x, y = _data()
    model = _mlp()
    wrap = module_wrapper or (lambda m: m)
    distributed = module_wrapper is not None
    if kind == "private":
        module = wrap(model)
        optimizer = PrivateOptimizer(torch.optim.SGD(module.parameters(), lr=0.3), module, _per_example_loss,
                                     clip=0.5, noise_multiplier=1.0, batch_size=BATCH, strategy=_strategy(strategy),
                                     noise_source=source, num_steps=STEPS, per_example="vmap")
        assert optimizer.distributed == distributed
        for batch in _batches():
            index = torch.from_numpy(batch[shard])
            optimizer.step(x[index], y[index])
    else:
        wrapped = opacus.GradSampleModule(wrap(model))
        optimizer = DPOptimizer(torch.optim.SGD(wrapped.parameters(), lr=0.3), noise_multiplier=1.0, max_grad_norm=0.5,
                                expected_batch_size=BATCH, strategy=_strategy(strategy), noise_source=source,
                                num_steps=STEPS, distributed=distributed)
        for batch in _batches():
            index = torch.from_numpy(batch[shard])
            optimizer.zero_grad()
            F.cross_entropy(wrapped(x[index]), y[index]).backward()
            optimizer.step()
    return [p.detach().clone() for p in model.parameters()], optimizer.noise.source.key


def _rank(rank, init_file, out_file):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD)
    try:
        results = {}
        for kind, strategy in CONFIGS:
            # every rank draws its own secure key: the optimizer must broadcast rank 0's
            results[(kind, strategy)] = _train(kind, strategy, secure_source(), slice(rank, None, WORLD),
                                               torch.nn.parallel.DistributedDataParallel)
        torch.save(results, f"{out_file}.{rank}")
    finally:
        dist.destroy_process_group()


def test_two_ranks_take_the_steps_of_one_process(tmp_path):
    """After 20 steps the parameters of both ranks are identical, and equal (to float64 rounding: the clipped sum is
    added in another order) to one process on the whole batches with rank 0's key."""
    out_file = tmp_path / "result"
    # fork where the platform has it: the ranks inherit the imported modules (a spawned rank re-imports torch and
    # Opacus, seconds each); each rank runs one intra-op thread, as a DataLoader worker does after a fork
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    mp.start_processes(_rank, args=(str(tmp_path / "init"), str(out_file)), nprocs=WORLD, join=True,
                       start_method=method)
    ranks = [torch.load(f"{out_file}.{r}", weights_only=False) for r in range(WORLD)]
    for kind, strategy in CONFIGS:
        (params, key), (other, other_key) = ranks[0][(kind, strategy)], ranks[1][(kind, strategy)]
        assert key == other_key
        for p, q in zip(params, other, strict=True):
            assert torch.equal(p, q)
        single, _ = _train(kind, strategy, DeviceNormals(key), slice(None))
        initial = list(_mlp().parameters())
        for p, q, p0 in zip(params, single, initial, strict=True):
            assert not torch.allclose(q, p0)  # the steps moved the parameters
            torch.testing.assert_close(p, q, rtol=1e-12, atol=1e-12)
