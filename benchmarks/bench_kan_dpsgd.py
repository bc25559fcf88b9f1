"""kan: closed-form per-example gradients of the paper's KAN, and the cost of one private DP-SGD step.

Setting of the issue: width m = 256, input dimension d = 64, cubic B-splines on a grid of 5 intervals (p = 8, so
m d p = 131,072 trainable coefficients), batch size B = 256, sigmoid activation, inputs in the unit ball.

* ``kan-per-example-gradients``: what DP-SGD needs from per-example gradients (their norms and the clipped sum),
  from the rank-one factors (one forward pass, then one matrix product for the clipped sum) against the einsum
  formulation peer libraries use (Opacus' per-sample gradients of a linear layer): the same forward pass, the B
  dense per-example gradients ``einsum("bi,bj->bij", backprops, activations)``, their norms and the clipped sum by
  einsum (target: 3x). It is fair: one vectorized pass, no Python loop over examples, the same factors; what it does
  not use is the rank-one structure, which is the candidate's point.
* ``kan-per-example-gradients-torch-func`` (with the torch extra): the same quantities by ``torch.func``
  (``vmap(grad(loss))`` over the examples, float64, the model ``privdyn.torch.KAN`` built from the same parameters),
  the peer practice for arbitrary models. The features h(x) are computed once outside ``vmap`` (the model's input
  check reads values, which ``vmap`` does not allow); the loss of one example from its features is the model's own
  first layer, activation and second layer. Target 3x.
* ``kan-per-example-gradients-naive``: the naive path, labelled so: a loop that calls the model's single-example
  gradient B times and clips the dense gradients.
* ``kan-dpsgd-step`` / ``kan-dpsgd-step-regenerated``: 10 steps of Algorithm 1 (per-example clipping, lambda-CGD
  noise with one buffer or with Z_{t-1} regenerated, projection onto the ball around W_0, active at every step: the
  costliest case) against 10 non-private steps of the same model (the same batch sampling, forward pass and batch
  gradient; no clipping, noise or projection). The ratio is non-private time / private time: at least 0.5 (at most
  2x slower) with the buffer and 0.4 (2.5x) with regeneration.

Both sides run with BLAS pinned to one thread (as privdyn runs every experiment unit): on a shared machine a
multi-threaded BLAS oversubscribes the cores and its timings say more about the neighbours than about the code.
"""

import functools

import numpy as np
from threadpoolctl import threadpool_limits

from privdyn.algorithms.dpsgd import DPSGD
from privdyn.benchmarking import Benchmark
from privdyn.models.kan import KAN
from privdyn.privacy.correlated import step_normals

WIDTH, DIM, GRID_SIZE, BATCH_SIZE, N = 256, 64, 5, 256, 4096
CLIP, NOISE_MULTIPLIER, NOISE_CORRELATION, STEP_SIZE, RADIUS = 0.01, 1.0, 0.7, 0.5, 1e-3
STEPS_PER_CALL = 10


def _problem():
    rng = np.random.default_rng(0)
    model = KAN.initialize(d=DIM, width=WIDTH, grid_size=GRID_SIZE, rng=rng)
    x = rng.standard_normal((N, DIM))
    x *= (rng.uniform(0.0, 1.0, N) ** (1.0 / DIM) / np.linalg.norm(x, axis=1))[:, None]
    y = np.where(x @ rng.standard_normal(DIM) > 0, 1.0, -1.0)
    return model, model.initial_parameters(rng), x, y


def _one_blas_thread(fn):
    @functools.wraps(fn)
    def wrapped(inputs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(inputs)

    return wrapped


# -- (a) per-example gradients ----------------------------------------------------------------------------------


def _gradient_setup():
    model, params, x, y = _problem()
    return model, params, x[:BATCH_SIZE], y[:BATCH_SIZE]


@_one_blas_thread
def _factored(inputs):
    model, params, x, y = inputs
    _, a, h = model.loss_and_gradient_factors(params, x, y)
    norms = np.sqrt(np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", h, h))
    scale = np.minimum(1.0, CLIP / np.maximum(norms, 1e-300))
    return norms, (a * scale[:, None]).T @ h


@_one_blas_thread
def _per_example_loop(inputs):
    model, params, x, y = inputs
    norms = np.empty(x.shape[0])
    total = np.zeros(params.shape)
    for i in range(x.shape[0]):
        g = model.single_example_gradient(params, x[i], y[i])
        norms[i] = np.linalg.norm(g)
        total += g * min(1.0, CLIP / max(norms[i], 1e-300))
    return norms, total


@_one_blas_thread
def _einsum(inputs):
    model, params, x, y = inputs
    _, backprops, activations = model.loss_and_gradient_factors(params, x, y)
    per_example = np.einsum("bi,bj->bij", backprops, activations)
    norms = np.sqrt(np.einsum("bij,bij->b", per_example, per_example))
    scale = np.minimum(1.0, CLIP / np.maximum(norms, 1e-300))
    return norms, np.einsum("b,bij->ij", scale, per_example)


def _torch_func_setup():
    import torch

    from privdyn.torch import KAN as TorchKAN

    model, params, x, y = _gradient_setup()
    twin = TorchKAN.from_numpy(model, params, dtype=torch.float64)
    with torch.no_grad():
        features = twin.features(torch.tensor(x))
    return twin, features, torch.tensor(y)


def _torch_func(inputs):
    import torch
    from torch.func import grad, vmap

    twin, features, y = inputs
    inverse_sqrt_d, inverse_sqrt_m = 1.0 / np.sqrt(twin.d), 1.0 / np.sqrt(twin.width)

    def loss(weight, h, label):
        u, _ = twin._activation(torch.nn.functional.linear(h[None, :] * inverse_sqrt_d, weight))
        value, _ = twin._second_layer(u, slope=False)
        return twin.per_example_losses(value.sum(1) * inverse_sqrt_m, label[None])[0]

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            weight = twin.weight.detach()
        per_example = vmap(grad(loss), in_dims=(None, 0, 0))(weight, features, y)
        norms = torch.linalg.vector_norm(per_example.flatten(1), dim=1)
        scale = torch.clamp(CLIP / torch.clamp(norms, min=1e-300), max=1.0)
        total = torch.einsum("b,bij->ij", scale, per_example)
    finally:
        torch.set_num_threads(threads)
    return norms.numpy(), total.numpy()


def _agree_gradients(candidate, reference):
    np.testing.assert_allclose(candidate[0], reference[0], rtol=1e-12)
    np.testing.assert_allclose(candidate[1], reference[1], rtol=1e-10, atol=1e-14 * np.abs(reference[1]).max())
    if not np.any(candidate[0] > CLIP):
        raise AssertionError("no per-example gradient was clipped: the benchmark would not exercise clipping")


# -- (b) one DP-SGD step -------------------------------------------------------------------------------------------


class _NonPrivate:
    """Mini-batch SGD on the same model: same sampler, forward pass and batch gradient; nothing private."""

    def __init__(self, model, params, x, y):
        self.model, self.params, self.x, self.y = model, params.copy(), x, y
        self.generator = np.random.default_rng(1)

    def step(self):
        index = self.generator.choice(self.x.shape[0], size=BATCH_SIZE, replace=False)
        self.params -= STEP_SIZE * self.model.gradient(self.params, self.x[index], self.y[index])


def _step_setup(regenerate):
    def setup():
        model, params, x, y = _problem()
        private = DPSGD(model, params, x, y, step_size=STEP_SIZE, batch_size=BATCH_SIZE, clip=CLIP,
                        noise_multiplier=NOISE_MULTIPLIER, noise_correlation=NOISE_CORRELATION,
                        projection_radius=RADIUS, sampling_rng=np.random.default_rng(1),
                        noise_rng=step_normals(0, "bench/kan"), regenerate=regenerate)
        return private, _NonPrivate(model, params, x, y)

    return setup


@_one_blas_thread
def _private_steps(inputs):
    private, _ = inputs
    for _ in range(STEPS_PER_CALL):
        private.step()
    return private


@_one_blas_thread
def _non_private_steps(inputs):
    _, plain = inputs
    for _ in range(STEPS_PER_CALL):
        plain.step()
    return plain


def _agree_steps(regenerate):
    def agree(candidate, reference):
        if not (np.all(np.isfinite(candidate.params)) and np.all(np.isfinite(reference.params))):
            raise AssertionError("non-finite iterates")
        buffers = len(candidate.noise_stream.buffers)
        if buffers != (0 if regenerate else 1):
            raise AssertionError(f"the lambda-CGD stream holds {buffers} parameter-sized buffers")
        if candidate.last_num_clipped == 0:
            raise AssertionError("no per-example gradient was clipped: the benchmark would not exercise clipping")
        if not candidate.last_projected:
            raise AssertionError("the projection was inactive: the benchmark would not exercise its rescaling")

    return agree


_SIZE_TEXT = f"m={WIDTH}, d={DIM}, p={GRID_SIZE + 3} (grid {GRID_SIZE}, cubic), B={BATCH_SIZE}"

BENCHMARKS = (
    Benchmark(
        name="kan-per-example-gradients",
        description=f"per-example gradient norms and clipped sum of the KAN, {_SIZE_TEXT}",
        candidate_name="rank-one factors: one forward pass and one matrix product",
        reference_name="einsum formulation (Opacus-style): the same forward pass, B dense per-example gradients",
        setup=_gradient_setup,
        candidate=_factored,
        reference=_einsum,
        agree=_agree_gradients,
        target_ratio=3.0,
        repeats=7,
    ),
    Benchmark(
        name="kan-per-example-gradients-naive",
        description=f"per-example gradient norms and clipped sum of the KAN, {_SIZE_TEXT}",
        candidate_name="rank-one factors: one forward pass and one matrix product",
        reference_name="naive path: loop over the batch calling single_example_gradient (dense m x dp gradients)",
        setup=_gradient_setup,
        candidate=_factored,
        reference=_per_example_loop,
        agree=_agree_gradients,
        repeats=5,
    ),
    Benchmark(
        name="kan-dpsgd-step",
        description=f"{STEPS_PER_CALL} DP-SGD steps (clipping, lambda-CGD one buffer, projection), {_SIZE_TEXT}",
        candidate_name="DPSGD.step with lambda-CGD noise (Z_{t-1} buffered)",
        reference_name="non-private mini-batch SGD step of the same model",
        setup=_step_setup(False),
        candidate=_private_steps,
        reference=_non_private_steps,
        agree=_agree_steps(False),
        target_ratio=0.5,
        repeats=7,
    ),
    Benchmark(
        name="kan-dpsgd-step-regenerated",
        description=f"{STEPS_PER_CALL} DP-SGD steps (clipping, lambda-CGD regenerated, projection), {_SIZE_TEXT}",
        candidate_name="DPSGD.step with lambda-CGD noise (Z_{t-1} regenerated, no buffer)",
        reference_name="non-private mini-batch SGD step of the same model",
        setup=_step_setup(True),
        candidate=_private_steps,
        reference=_non_private_steps,
        agree=_agree_steps(True),
        target_ratio=0.4,
        repeats=7,
    ),
)

BENCHMARKS += (
    Benchmark(
        name="kan-per-example-gradients-torch-func",
        description=f"per-example gradient norms and clipped sum of the KAN, {_SIZE_TEXT}, float64",
        candidate_name="rank-one factors: one forward pass and one matrix product",
        reference_name="torch.func: vmap(grad(loss)) over the examples (privdyn.torch.KAN, one thread)",
        setup=lambda: (_gradient_setup(), _torch_func_setup()),
        candidate=lambda inputs: _factored(inputs[0]),
        reference=lambda inputs: _torch_func(inputs[1]),
        agree=_agree_gradients,
        target_ratio=3.0,
        repeats=7,
        requires=(("torch", "torch"),),
    ),
)
