"""torch: the cost of correlated noise in a PyTorch DP step, and the KAN's closed-form per-example gradients.

Requires the torch extra (torch and Opacus, the reference); without it `privdyn bench` skips these with a note.

* ``torch-noise-default-source-cpu``: the normals of one step for 131,842 parameters (the MLP below) and for
  5,350,000 (``-5m``, a CNN's size), float32, on the CPU: privdyn's default source
  (:class:`privdyn.torch.DeviceNormals`, keyed Philox4x32-10 and Box-Muller) against ``torch.randn`` of the same size
  (torch's own generator, not keyed, not regenerable). Target: at most 1.2x (ratio >= 1/1.2).
  ``torch-noise-default-source`` is the same on the bench device when it is not the CPU (no target).
* ``torch-dp-step-independent`` / ``torch-dp-step-lambda-cgd`` / ``torch-dp-step-blt``: 10 DP steps of an MLP
  512-256-2 (131,842 parameters, float32) on one batch of 256, per-example gradients by Opacus' hooks
  (``GradSampleModule``), flat clipping, SGD. Candidate: privdyn's Opacus-compatible ``DPOptimizer`` with independent,
  lambda-CGD (one buffer) or BLT (four buffers) noise from the default source (device normals, seeded here);
  reference: Opacus' own ``DPOptimizer`` from ``PrivacyEngine.make_private`` (independent noise from a
  torch.Generator). The ratio is reference time / candidate time; targets: candidate at most 1.1x (ratio >= 1/1.1),
  1.1x and 1.3x (ratio >= 1/1.3) the reference. ``torch-dp-step-lambda-cgd-counter`` is the lambda-CGD step with
  privdyn's NumPy counter-based source (the NumPy streams' noise, copied to the device), reported without target.
* ``torch-kan-closed-form``: 10 DP steps of the kan paper's KAN (m = 256, d = 64, p = 8: 131,072 parameters, float32,
  B = 256, independent noise): privdyn's ``PrivateOptimizer`` with the closed-form rank-one per-example gradients
  against Opacus' hooks on the same module (``GradSampleModule`` + ``DPOptimizer``). Target: 10x. CPU only.

The noise (other than ``-cpu``) and DP-step rows run on the bench device: ``privdyn bench --device cuda`` (or the
environment variable ``PRIVDYN_BENCH_DEVICE``); by default CUDA when a GPU is present, else the CPU. On CUDA each timed
call ends with ``torch.cuda.synchronize()``. On the CPU both sides run with one intra-op thread (as the NumPy
benchmarks pin BLAS to one thread): on a shared machine a multi-threaded kernel measures the neighbours. The noise
state is checked in ``agree``: exactly the strategy's buffers, each of the parameters' size.
"""

import functools
import importlib.util
import os

import numpy as np

from privdyn.benchmarking import Benchmark

BATCH_SIZE, STEPS_PER_CALL, CLIP, NOISE_MULTIPLIER, LEARNING_RATE = 256, 10, 1.0, 1.0, 0.05
BLT_DECAYS, BLT_SCALES = (0.999, 0.99, 0.9, 0.5), (0.02, 0.05, 0.1, 0.2)
KAN_WIDTH, KAN_DIM, KAN_GRID = 256, 64, 5
MLP_PARAMETERS, CNN_PARAMETERS = 131_842, 5_350_000
DEVICE_VARIABLE = "PRIVDYN_BENCH_DEVICE"


def _device():
    """The bench device: ``PRIVDYN_BENCH_DEVICE`` (set by ``privdyn bench --device``), else CUDA when present."""
    import torch

    name = os.environ.get(DEVICE_VARIABLE) or ("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _one_thread(fn):
    """One intra-op thread on the CPU; on CUDA, wait for the device's work before the timer stops."""
    @functools.wraps(fn)
    def wrapped(inputs):
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            result = fn(inputs)
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.synchronize()
            return result
        finally:
            torch.set_num_threads(threads)

    return wrapped


# -- (0) the default noise source against torch.randn ----------------------------------------------------------------


def _noise_setup(size, device):
    def setup():
        import torch

        from privdyn.torch import device_normals

        where = torch.device(device) if device is not None else _device()
        outs = [torch.empty(size, dtype=torch.float32, device=where) for _ in range(2)]
        return device_normals(1, "bench/torch-noise"), outs, torch.Generator(device=where).manual_seed(1)

    return setup


@_one_thread
def _default_source(inputs):
    source, outs, _ = inputs
    return source.standard_normal(1, outs[0])


@_one_thread
def _randn(inputs):
    import torch

    _, outs, generator = inputs
    return torch.randn(outs[1].shape, generator=generator, out=outs[1], device=outs[1].device)


def _agree_noise(candidate, reference):
    """Both are standard normals: means and variances within 5 standard errors of 0 and 1."""
    n = candidate.numel()
    for name, z in (("default source", candidate), ("torch.randn", reference)):
        z = z.double()
        if abs(float(z.mean())) > 5 / n**0.5 or abs(float(z.var()) - 1) > 5 * (2 / n) ** 0.5:
            raise AssertionError(f"{name}: mean {float(z.mean())}, variance {float(z.var())}")


# -- (a) the MLP DP step --------------------------------------------------------------------------------------


def _mlp(seed):
    import torch
    from torch import nn

    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 2))


def _batch(device):
    import torch

    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(BATCH_SIZE, 512, generator=g), torch.randint(0, 2, (BATCH_SIZE,), generator=g)
    return x.to(device), y.to(device)


def _opacus_step_setup():
    """Opacus as its users set it up: PrivacyEngine.make_private (independent noise, its own accountant)."""
    import opacus
    import torch

    device = _device()
    x, y = _batch(device)
    model = _mlp(0).to(device)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=BATCH_SIZE)
    engine = opacus.PrivacyEngine()
    model, optimizer, _ = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(),
                                                                                        lr=LEARNING_RATE),
                                              data_loader=loader, noise_multiplier=NOISE_MULTIPLIER,
                                              max_grad_norm=CLIP, poisson_sampling=False,
                                              noise_generator=torch.Generator(device=device).manual_seed(1))
    return model, optimizer, x, y


def _privdyn_step_setup(strategy, source_kind):
    import opacus
    import torch

    from privdyn.privacy.correlated import step_normals
    from privdyn.torch import DPOptimizer, device_normals

    device = _device()
    x, y = _batch(device)
    model = _mlp(0).to(device)
    source = device_normals(1, "bench/torch") if source_kind == "default" else step_normals(1, "bench/torch")
    optimizer = DPOptimizer(torch.optim.SGD(model.parameters(), lr=LEARNING_RATE), noise_multiplier=NOISE_MULTIPLIER,
                            max_grad_norm=CLIP, expected_batch_size=BATCH_SIZE, strategy=strategy,
                            noise_source=source)
    return opacus.GradSampleModule(model), optimizer, x, y


def _step_setup(strategy_factory, source_kind):
    def setup():
        return _privdyn_step_setup(strategy_factory(), source_kind), _opacus_step_setup()

    return setup


def _dp_steps(model, optimizer, x, y):
    import torch.nn.functional as F

    for _ in range(STEPS_PER_CALL):
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    return optimizer


@_one_thread
def _candidate_step(inputs):
    return _dp_steps(*inputs[0])


@_one_thread
def _reference_step(inputs):
    return _dp_steps(*inputs[1])


def _agree_step(num_buffers):
    def agree(candidate, reference):
        import torch

        params = [p for g in candidate.param_groups for p in g["params"]]
        size = sum(p.numel() for p in params)
        stream = candidate.noise
        if len(stream.buffers) != num_buffers or any(b.numel() != size for b in stream.buffers):
            raise AssertionError(f"the noise state holds {len(stream.buffers)} buffers, not {num_buffers} of {size}")
        if stream.buffer_bytes != num_buffers * size * params[0].element_size():
            raise AssertionError(f"noise-state memory {stream.buffer_bytes} B is not the strategy's buffers")
        extra = [k for k, v in vars(stream).items() if isinstance(v, torch.Tensor) and v.numel() >= size
                 and k != "_out"]
        if extra:
            raise AssertionError(f"the stream holds other parameter-sized tensors: {extra}")
        for p in params:
            if not torch.all(torch.isfinite(p)):
                raise AssertionError("non-finite parameters")
        if candidate.steps == 0 or reference.original_optimizer is None:
            raise AssertionError("no step was taken")

    return agree


def _independent():
    from privdyn.privacy.correlated import Independent

    return Independent()


def _lambda():
    from privdyn.privacy.correlated import LambdaCGD

    return LambdaCGD(0.7)


def _blt():
    from privdyn.privacy.correlated import BufferedToeplitz

    return BufferedToeplitz(BLT_DECAYS, BLT_SCALES)


# -- (b) the KAN: closed form against Opacus' hooks -----------------------------------------------------------


def _kan_problem():
    import torch

    from privdyn.models.kan import KAN as NumpyKAN
    from privdyn.torch import KAN

    rng = np.random.default_rng(0)
    model = NumpyKAN.initialize(d=KAN_DIM, width=KAN_WIDTH, grid_size=KAN_GRID, generator=rng)
    params = model.initial_parameters(rng)
    x = rng.standard_normal((BATCH_SIZE, KAN_DIM))
    x *= (rng.uniform(0.0, 1.0, BATCH_SIZE) ** (1.0 / KAN_DIM) / np.linalg.norm(x, axis=1))[:, None]
    y = np.where(x @ rng.standard_normal(KAN_DIM) > 0, 1.0, -1.0)

    def twin():
        return KAN.from_numpy(model, params, dtype=torch.float32)

    return twin, torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)


KAN_CLIP = 0.01


def _kan_setup():
    import opacus
    import torch

    from privdyn.torch import PrivateOptimizer

    twin, x, y = _kan_problem()
    closed = twin()
    private = PrivateOptimizer(torch.optim.SGD(closed.parameters(), lr=LEARNING_RATE), closed, clip=KAN_CLIP,
                               noise_multiplier=NOISE_MULTIPLIER, batch_size=BATCH_SIZE,
                               noise_source=torch.Generator().manual_seed(1), per_example="closed_form")
    hooked = twin()
    wrapped = opacus.GradSampleModule(hooked, loss_reduction="mean")
    reference = opacus.optimizers.DPOptimizer(torch.optim.SGD(hooked.parameters(), lr=LEARNING_RATE),
                                              noise_multiplier=NOISE_MULTIPLIER, max_grad_norm=KAN_CLIP,
                                              expected_batch_size=BATCH_SIZE,
                                              generator=torch.Generator().manual_seed(1))
    return (private, x, y), (hooked, wrapped, reference, x, y)


@_one_thread
def _kan_closed_form(inputs):
    private, x, y = inputs[0]
    for _ in range(STEPS_PER_CALL):
        private.step(x, y)
    return private


@_one_thread
def _kan_hooks(inputs):
    import warnings

    hooked, wrapped, optimizer, x, y = inputs[1]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        for _ in range(STEPS_PER_CALL):
            optimizer.zero_grad()
            hooked.per_example_losses(wrapped(x), y).mean().backward()
            optimizer.step()
    return optimizer


def _agree_kan(candidate, reference):
    """Before the timed calls, one step of each from the same W_0 must give the same clipped gradient sum."""
    import torch

    twin, x, y = _kan_problem()
    a, b = twin(), twin()
    _, factor_a, factor_h = a.loss_and_gradient_factors(x, y)
    norms = factor_a.norm(dim=1) * factor_h.norm(dim=1)
    if not bool((norms > KAN_CLIP).any()):
        raise AssertionError("no per-example gradient was clipped")
    import opacus

    wrapped = opacus.GradSampleModule(b, loss_reduction="sum")
    b.per_example_losses(wrapped(x), y).sum().backward()
    hook_norms = b.weight.grad_sample.flatten(1).norm(dim=1)
    torch.testing.assert_close(hook_norms, norms, rtol=1e-4, atol=1e-9)


_TORCH = (("torch", "torch"), ("opacus", "torch"))


def _torch_device_is_not_cpu() -> bool:
    """Whether the bench device is a GPU (False without torch: the CPU rows are then skipped with a note)."""
    return importlib.util.find_spec("torch") is not None and _device().type != "cpu"


BENCHMARKS = (
    Benchmark(
        name="torch-noise-default-source-cpu",
        description=f"the normals of one step for {MLP_PARAMETERS:,} parameters, float32, CPU",
        candidate_name="privdyn.torch.DeviceNormals.standard_normal (keyed Philox4x32-10, Box-Muller)",
        reference_name="torch.randn (torch's CPU generator)",
        setup=_noise_setup(MLP_PARAMETERS, "cpu"), candidate=_default_source, reference=_randn,
        agree=_agree_noise, target_ratio=1 / 1.2, repeats=9, requires=_TORCH),
    Benchmark(
        name="torch-noise-default-source-cpu-5m",
        description=f"the normals of one step for {CNN_PARAMETERS:,} parameters, float32, CPU",
        candidate_name="privdyn.torch.DeviceNormals.standard_normal (keyed Philox4x32-10, Box-Muller)",
        reference_name="torch.randn (torch's CPU generator)",
        setup=_noise_setup(CNN_PARAMETERS, "cpu"), candidate=_default_source, reference=_randn,
        agree=_agree_noise, target_ratio=1 / 1.2, repeats=5, requires=_TORCH),
    *((Benchmark(
        name="torch-noise-default-source",
        description=f"the normals of one step for {CNN_PARAMETERS:,} parameters, float32, on the bench device",
        candidate_name="privdyn.torch.DeviceNormals.standard_normal (keyed Philox4x32-10, Box-Muller)",
        reference_name="torch.randn (the device's generator)",
        setup=_noise_setup(CNN_PARAMETERS, None), candidate=_default_source, reference=_randn,
        agree=_agree_noise, target_ratio=None, repeats=9, requires=_TORCH),) if _torch_device_is_not_cpu() else ()),
    Benchmark(
        name="torch-dp-step-independent",
        description=f"{STEPS_PER_CALL} DP steps, MLP 512-256-2 (131,842 parameters), batch {BATCH_SIZE}, Opacus "
                    "hooks; independent noise from the default source vs Opacus' independent noise",
        candidate_name="privdyn.torch.DPOptimizer, Independent(), DeviceNormals",
        reference_name="Opacus PrivacyEngine.make_private DPOptimizer (independent noise)",
        setup=_step_setup(_independent, "default"), candidate=_candidate_step, reference=_reference_step,
        agree=_agree_step(0), target_ratio=1 / 1.1, repeats=7, requires=_TORCH),
    Benchmark(
        name="torch-dp-step-lambda-cgd",
        description=f"{STEPS_PER_CALL} DP steps, MLP 512-256-2 (131,842 parameters), batch {BATCH_SIZE}, Opacus "
                    "hooks; lambda-CGD (one buffer, default source) vs Opacus' independent noise",
        candidate_name="privdyn.torch.DPOptimizer, LambdaCGD(0.7), DeviceNormals",
        reference_name="Opacus PrivacyEngine.make_private DPOptimizer (independent noise)",
        setup=_step_setup(_lambda, "default"), candidate=_candidate_step, reference=_reference_step,
        agree=_agree_step(1), target_ratio=1 / 1.1, repeats=7, requires=_TORCH),
    Benchmark(
        name="torch-dp-step-blt",
        description=f"{STEPS_PER_CALL} DP steps, MLP 512-256-2, batch {BATCH_SIZE}, Opacus hooks; BLT (four "
                    "buffers, default source) vs Opacus' independent noise",
        candidate_name=f"privdyn.torch.DPOptimizer, BufferedToeplitz({BLT_DECAYS}, {BLT_SCALES}), DeviceNormals",
        reference_name="Opacus PrivacyEngine.make_private DPOptimizer (independent noise)",
        setup=_step_setup(_blt, "default"), candidate=_candidate_step, reference=_reference_step,
        agree=_agree_step(4), target_ratio=1 / 1.3, repeats=7, requires=_TORCH),
    Benchmark(
        name="torch-dp-step-lambda-cgd-counter",
        description=f"{STEPS_PER_CALL} DP steps, MLP 512-256-2, batch {BATCH_SIZE}, Opacus hooks; lambda-CGD "
                    "from privdyn's NumPy counter-based source (NumPy Philox normals copied to the tensor)",
        candidate_name="privdyn.torch.DPOptimizer, LambdaCGD(0.7), StepNormals source",
        reference_name="Opacus PrivacyEngine.make_private DPOptimizer (independent noise)",
        setup=_step_setup(_lambda, "counter"), candidate=_candidate_step, reference=_reference_step,
        agree=_agree_step(1), target_ratio=None, repeats=7, requires=_TORCH),
    Benchmark(
        name="torch-kan-closed-form",
        description=f"{STEPS_PER_CALL} DP steps of the KAN, m={KAN_WIDTH}, d={KAN_DIM}, p={KAN_GRID + 3} "
                    f"(131,072 parameters), batch {BATCH_SIZE}, float32",
        candidate_name="privdyn.torch.PrivateOptimizer, closed-form rank-one per-example gradients",
        reference_name="Opacus GradSampleModule hooks + DPOptimizer on the same KAN module",
        setup=_kan_setup, candidate=_kan_closed_form, reference=_kan_hooks, agree=_agree_kan,
        target_ratio=10.0, repeats=5, requires=_TORCH),
)
