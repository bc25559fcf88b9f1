"""privdyn.torch.DeviceNormals: the Philox bits, the CPU kernel against the tensor (CUDA) path, the law of the normals,
independence of keys, and the noise streams built on it."""

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
import torch  # noqa: E402

from privdyn.rng import philox4x32  # noqa: E402
from privdyn.torch import DeviceNormals, device_normals, noise_stream, secure_source  # noqa: E402
from privdyn.torch.device_source import _fill_pairs, _philox_words  # noqa: E402

Z = 5.0  # the tests' z (every check holds at any key)


def test_philox_words_are_privdyn_rng_philox4x32():
    """The tensor path's words are the reference cipher's (privdyn.rng.philox4x32, itself tested against the
    Random123 known answers) on the counter (pair, step, run lo, run hi)."""
    key = (0x89ABCDEF, 0x01234567)
    run = 3 * 2**32 + 5
    words = torch.stack(_philox_words(*key, 7, run, 2**32 - 4, 4, torch.device("cpu")), dim=1).numpy()
    counters = np.array([[2**32 - 4 + j, 7, 5, 3] for j in range(4)], dtype=np.uint64)
    np.testing.assert_array_equal(words.astype(np.uint64), philox4x32(counters, key))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cpu_kernel_equals_the_tensor_path(dtype):
    """The numba CPU kernel and the int64 tensor path (the one CUDA runs) give the same normals, bit for bit."""
    key = 0x0123456789ABCDEF
    compiled = torch.empty(4096, dtype=dtype)
    tensor = torch.empty(4096, dtype=dtype)
    _fill_pairs(key & 0xFFFFFFFF, key >> 32, 9, 2, 100, compiled, cpu_kernel=True)
    _fill_pairs(key & 0xFFFFFFFF, key >> 32, 9, 2, 100, tensor, cpu_kernel=False)
    assert torch.equal(compiled, tensor)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_equals_cpu(dtype):
    """Same (key, t): the same bits on both devices, then torch's log, sqrt and cos of each device (a few ulp)."""
    source = secure_source()
    cpu = source.standard_normal(3, torch.empty(100_001, dtype=dtype))
    cuda = source.standard_normal(3, torch.empty(100_001, dtype=dtype, device="cuda")).cpu()
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(cuda, cpu, rtol=16 * eps, atol=16 * eps)


def test_normals_are_a_pure_function_of_key_step_and_position():
    source = device_normals(0, "pure")
    whole = source.standard_normal(4, torch.empty(70_001, dtype=torch.float64))
    for first, size in [(0, 1), (1, 1), (1, 2), (3, 40_000), (40_001, 30_000), (69_999, 2)]:
        part = source.standard_normal(4, torch.empty(size, dtype=torch.float64), first=first)
        assert torch.equal(part, whole[first: first + size])
    assert torch.equal(DeviceNormals(source.key).standard_normal(4, torch.empty(70_001, dtype=torch.float64)), whole)
    other_step = source.standard_normal(5, torch.empty(70_001, dtype=torch.float64))
    other_run = DeviceNormals(source.key, run=1).standard_normal(4, torch.empty(70_001, dtype=torch.float64))
    assert not torch.equal(other_step, whole) and not torch.equal(other_run, whole)
    single = source.standard_normal(4, torch.empty(70_001, dtype=torch.float32))
    torch.testing.assert_close(single, whole.float(), rtol=4e-6, atol=4e-6)
    half = source.standard_normal(4, torch.empty(10, dtype=torch.bfloat16))
    torch.testing.assert_close(half.float(), whole[:10].float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_law_moments_and_kolmogorov_smirnov_on_a_million_draws(dtype):
    """10^6 normals of a fresh secure key: mean, variance, skewness, excess kurtosis within Z standard errors, and
    the Kolmogorov-Smirnov test against N(0, 1) (p > 1e-6, the two-sided tail of Z = 5)."""
    n = 10**6
    z = secure_source().standard_normal(1, torch.empty(n, dtype=dtype)).double().numpy()
    assert abs(z.mean()) <= Z / np.sqrt(n)
    assert abs(z.var() - 1.0) <= Z * np.sqrt(2.0 / n)
    assert abs(stats.skew(z)) <= Z * np.sqrt(6.0 / n)
    assert abs(stats.kurtosis(z)) <= Z * np.sqrt(24.0 / n)
    assert stats.kstest(z, "norm").pvalue > 1e-6
    assert np.abs(z).max() < np.sqrt(106 * np.log(2))  # the Box-Muller bound of u1 >= 2**-53


def test_two_keys_and_two_steps_give_independent_streams():
    """Correlation of two keys' streams (and of one key's consecutive steps, and of the two normals of one Philox
    block): each within Z / sqrt(n) of 0; the pairs (Z_{2j}, Z_{2j+1}) are also independent in their squares."""
    n = 10**6
    a, b = secure_source(), secure_source()
    za = a.standard_normal(1, torch.empty(n, dtype=torch.float64)).numpy()
    zb = b.standard_normal(1, torch.empty(n, dtype=torch.float64)).numpy()
    za2 = a.standard_normal(2, torch.empty(n, dtype=torch.float64)).numpy()
    se = Z / np.sqrt(n)
    assert abs(np.corrcoef(za, zb)[0, 1]) <= se
    assert abs(np.corrcoef(za, za2)[0, 1]) <= se
    even, odd = za[0::2], za[1::2]
    assert abs(np.corrcoef(even, odd)[0, 1]) <= Z / np.sqrt(n / 2)
    # Var(Z^2) = 2: the correlation of the squares has standard error 1 / sqrt(n / 2) as well
    assert abs(np.corrcoef(even**2, odd**2)[0, 1]) <= Z / np.sqrt(n / 2)


def test_secure_keys_are_hidden_and_fresh():
    source = secure_source()
    stream = noise_stream(__import__("privdyn.privacy.correlated", fromlist=["LambdaCGD"]).LambdaCGD(0.5), (4,),
                          source)
    texts = (str(source.key), f"{source.key:#018x}", f"{source.key:x}")
    for text in (repr(source), repr(stream)):
        assert not any(k in text for k in texts)
    assert isinstance(source, DeviceNormals) and source.secret and stream.holds_secret
    assert secure_source().key != source.key
    assert not device_normals(0, "x").secret and device_normals(0, "x").key == device_normals(0, "x").key
    assert device_normals(0, "x").key != device_normals(0, "y").key


def test_device_normals_refuse_bad_input():
    source = device_normals(0, "bad")
    with pytest.raises(ValueError, match="step"):
        source.standard_normal(0, torch.empty(3))
    with pytest.raises(ValueError, match="step must be < 2\\*\\*32"):
        source.standard_normal(2**32, torch.empty(3))
    with pytest.raises(TypeError, match="out must be"):
        source.standard_normal(1, torch.empty(3, dtype=torch.int64))
    with pytest.raises(TypeError, match="out must be"):
        source.standard_normal(1, torch.empty(3, 2).T)
    with pytest.raises(ValueError, match="key"):
        DeviceNormals(2**64)
    with pytest.raises(ValueError, match="<hidden>"):
        DeviceNormals(2**64, secret=True)
