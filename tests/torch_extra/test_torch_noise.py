"""privdyn.torch noise streams: the NumPy strategies' noise on tensors, covariance, checkpoint/resume, secure mode."""

import io

import numpy as np
import pytest

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
import torch  # noqa: E402

from privdyn.privacy import correlated as cn  # noqa: E402
from privdyn.runs.results import bonferroni_z  # noqa: E402
from privdyn.torch import device_normals, noise_stream, secure_source  # noqa: E402

STRATEGIES = [
    cn.Independent(), cn.LambdaCGD(0.7), cn.LambdaCGD(0.0), cn.BandedInverse([1.0, -0.5, 0.2, 0.1]), cn.SquareRoot(),
    cn.Toeplitz([1.0, 0.5, 0.25]), cn.BufferedToeplitz([0.999, 0.99, 0.9, 0.5], [0.02, 0.05, 0.1, 0.2]),
]
CASES = [(s, r) for s in STRATEGIES for r in ([False, True] if s.supports_regeneration else [False])]
T = 12


def _ids(case):
    return f"{case[0]!r}-{'regenerated' if case[1] else 'buffered'}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-13), (torch.float32, 2e-6)])
def test_equals_numpy_stream_on_shared_normals(case, dtype, tolerance):
    strategy, regenerate = case
    source = cn.step_normals(3, "torch/equal")
    reference = strategy.stream((7, 11), source, num_steps=T, regenerate=regenerate, scale=0.3)
    stream = noise_stream(strategy, (7, 11), source, num_steps=T, regenerate=regenerate, scale=0.3, dtype=dtype,
                          chunk_size=16)
    for _ in range(T):
        expected = reference.next()
        got = stream.next()
        assert got.shape == (7, 11) and got.dtype == dtype
        np.testing.assert_allclose(got.double().numpy(), expected, rtol=0,
                                   atol=tolerance * max(1.0, np.abs(expected).max()))
    assert len(stream.buffers) == strategy.num_buffers(T, regenerate=regenerate)
    assert stream.buffer_bytes == len(stream.buffers) * 77 * torch.empty((), dtype=dtype).element_size()


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s.supports_regeneration], ids=repr)
@pytest.mark.parametrize("source_kind", ["generator", "device"])
def test_regenerated_equals_buffered(strategy, source_kind):
    if source_kind == "generator":
        a, b = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    else:
        a = b = device_normals(5, "torch/regenerate")
    buffered = noise_stream(strategy, (100,), a, num_steps=T, dtype=torch.float64, chunk_size=30)
    regenerated = noise_stream(strategy, (100,), b, num_steps=T, regenerate=True, dtype=torch.float64, chunk_size=30)
    assert len(regenerated.buffers) == 0
    for _ in range(T):
        assert torch.equal(buffered.next(), regenerated.next())


@pytest.mark.parametrize("strategy", [cn.LambdaCGD(0.6), cn.SquareRoot(), cn.Toeplitz([1.0, 0.5, 0.25]),
                                      cn.BufferedToeplitz([0.9, 0.5], [0.3, 0.2])], ids=repr)
@pytest.mark.parametrize("source_kind", ["generator", "counter", "device"])
def test_empirical_covariance_matches_noise_matrix(strategy, source_kind):
    """Each coordinate is an independent draw of the T-vector (C^{-1} Z): its covariance is C^{-1} C^{-T}."""
    steps, size = 6, 200_000
    source = (torch.Generator().manual_seed(11) if source_kind == "generator" else
              cn.step_normals(11, "torch/cov") if source_kind == "counter" else secure_source())
    stream = noise_stream(strategy, (size,), source, num_steps=steps, dtype=torch.float64)
    noise = np.stack([stream.next().numpy().copy() for _ in range(steps)])
    empirical = noise @ noise.T / size
    d = strategy.noise_matrix(steps)
    sigma = d @ d.T
    # Var(xi_s xi_t) = Sigma_ss Sigma_tt + Sigma_st^2 for jointly Gaussian (xi_s, xi_t)
    se = np.sqrt((np.outer(np.diag(sigma), np.diag(sigma)) + sigma**2) / size)
    z = bonferroni_z(steps * (steps + 1) // 2)
    upper = np.triu_indices(steps)
    assert np.all(np.abs(empirical - sigma)[upper] <= z * se[upper])


def _roundtrip(state):
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("source_kind", ["generator", "counter", "secure", "secure-numpy", "device"])
def test_checkpoint_resume_is_bit_identical(case, source_kind):
    strategy, regenerate = case

    def source():
        if source_kind == "generator":
            return torch.Generator().manual_seed(2)
        if source_kind == "device":
            return device_normals(2, "torch/resume")
        return cn.step_normals(2, "torch/resume") if source_kind == "counter" else secure_key

    secure_key = secure_source(numpy_identical=source_kind == "secure-numpy")
    uninterrupted = noise_stream(strategy, (50,), source(), num_steps=T, regenerate=regenerate, chunk_size=20)
    expected = [uninterrupted.next().clone() for _ in range(T)]
    first = noise_stream(strategy, (50,), source(), num_steps=T, regenerate=regenerate, chunk_size=20)
    for t in range(5):
        assert torch.equal(first.next(), expected[t])
    state = _roundtrip(first.state_dict())
    assert state["holds_secret"] == source_kind.startswith(("secure", "generator"))
    fresh_source = (secure_source(numpy_identical=source_kind == "secure-numpy") if source_kind.startswith("secure")
                    else source())
    resumed = noise_stream(strategy, (50,), fresh_source, num_steps=T, regenerate=regenerate, chunk_size=20)
    resumed.load_state_dict(state)
    for t in range(5, T):
        assert torch.equal(resumed.next(), expected[t])


@pytest.mark.parametrize("numpy_identical", [False, True])
def test_secure_source_keeps_the_key_out_of_reprs(numpy_identical):
    source = secure_source(numpy_identical=numpy_identical)
    stream = noise_stream(cn.LambdaCGD(0.5), (4,), source)
    key_texts = (str(source.key), f"{source.key:#018x}", f"{source.key:x}")
    for text in (repr(source), repr(stream), str(stream)):
        assert not any(k in text for k in key_texts)
    assert "hidden" in repr(source)
    assert stream.holds_secret and stream.state_dict()["holds_secret"]
    assert secure_source(numpy_identical=numpy_identical).key != source.key


def test_stream_refuses_bad_input():
    source = cn.step_normals(0, "torch/bad")
    stream = noise_stream(cn.LambdaCGD(0.5), (3,), source, num_steps=2)
    stream.next()
    stream.next()
    with pytest.raises(ValueError, match="num_steps=2"):
        stream.next()
    with pytest.raises(ValueError, match="num_steps is required"):
        noise_stream(cn.SquareRoot(), (3,), source)
    with pytest.raises(ValueError, match="regenerate"):
        noise_stream(cn.BufferedToeplitz([0.5], [0.5]), (3,), source, regenerate=True)
    with pytest.raises(TypeError, match="source"):
        noise_stream(cn.LambdaCGD(0.5), (3,), 42)
    with pytest.raises(TypeError, match="dtype"):
        noise_stream(cn.LambdaCGD(0.5), (3,), source, dtype=torch.int64)
    with pytest.raises(ValueError, match="scale"):
        noise_stream(cn.LambdaCGD(0.5), (3,), source, scale=float("nan"))
    other = noise_stream(cn.LambdaCGD(0.4), (3,), source)
    with pytest.raises(ValueError, match="strategy"):
        other.load_state_dict(stream.state_dict())
