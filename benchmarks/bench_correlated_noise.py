"""Correlated noise: streaming lambda-CGD and BLT noise against independent DP-SGD noise.

A parameter vector of 131,072 entries over 1000 steps. The reference is independent noise as DP-SGD draws it: one
Philox generator filling a preallocated array with standard normals at every step. The ratio is reference time /
candidate time, i.e. the candidate's throughput relative to independent noise (targets: 0.9 for lambda-CGD with one
buffer, 0.4 with regeneration of Z_{t-1} and no buffer; BLT is reported, and its buffers are counted and measured).

The BLT stream's memory is measured on the stream itself: the bytes of every numpy array it holds (its state, output
and scratch, found by walking its attributes), which must be the output, one parameter-sized buffer per BLT buffer,
one scratch chunk and the 2k coefficients. Measuring the process's allocations instead (tracemalloc's peak) also
counts what numpy, numba's first compilation and the allocator do around the stream, and varies from run to run.
"""

import numpy as np

from privdyn.benchmarking import Benchmark
from privdyn.privacy import correlated as cn

SIZE = 131_072
NUM_STEPS = 1000
LAMBDA = 0.7
BLT_DECAYS = (0.999, 0.99, 0.9, 0.5)
BLT_SCALES = (0.02, 0.05, 0.1, 0.2)


def _source():
    return cn.step_normals(0, "bench/correlated")


def _independent(inputs):
    generator = np.random.Generator(np.random.Philox(12345))
    out = np.empty(SIZE)
    for _ in range(NUM_STEPS):
        generator.standard_normal(out=out)
    return out


def _run(stream):
    out = None
    for _ in range(NUM_STEPS):
        out = stream.next()
    return stream, out


def _lambda_buffered(source):
    return _run(cn.LambdaCGD(LAMBDA).stream(SIZE, source))


def _lambda_regenerated(source):
    return _run(cn.LambdaCGD(LAMBDA).stream(SIZE, source, regenerate=True))


def _blt(source):
    stream, out = _run(cn.BufferedToeplitz(BLT_DECAYS, BLT_SCALES).stream(SIZE, source))
    assert len(stream.buffers) == len(BLT_DECAYS), "BLT must hold exactly one parameter-sized buffer per buffer"
    return stream, out


def _agree_lambda(candidate, reference):
    """The last step is Z_T + (-lambda) Z_{T-1}, bit for bit, with the stream's buffers as the strategy says."""
    stream, out = candidate
    source = stream.source
    expected = source.draw(NUM_STEPS, SIZE) + (-LAMBDA) * source.draw(NUM_STEPS - 1, SIZE)
    if not np.array_equal(out, expected):
        raise AssertionError("streamed lambda-CGD noise differs from Z_T - lambda Z_{T-1}")
    want = 0 if stream.regenerate else 1
    if len(stream.buffers) != want:
        raise AssertionError(f"lambda-CGD stream holds {len(stream.buffers)} buffers, expected {want}")
    if reference.shape != (SIZE,):
        raise AssertionError("reference produced the wrong shape")


def _held_bytes(obj: object) -> int:
    """Bytes of the distinct numpy arrays ``obj`` holds in its attributes (directly or in lists and tuples)."""
    seen: dict[int, int] = {}

    def visit(value: object) -> None:
        if isinstance(value, np.ndarray):
            base = value
            while isinstance(base.base, np.ndarray):
                base = base.base
            seen[id(base)] = base.nbytes
        elif isinstance(value, list | tuple):
            for item in value:
                visit(item)

    for value in vars(obj).values():
        visit(value)
    return sum(seen.values())


def _blt_setup():
    """Measure the BLT stream's memory (untimed): output + k buffers + one scratch chunk, nothing else."""
    source = _source()
    k = len(BLT_DECAYS)
    stream = cn.BufferedToeplitz(BLT_DECAYS, BLT_SCALES).stream(SIZE, source)
    for _ in range(3):
        stream.next()
    if not (len(stream.buffers) == k and all(b.shape == (SIZE,) for b in stream.buffers)):
        raise AssertionError(f"BLT must hold exactly {k} parameter-sized buffers")
    held, expected = _held_bytes(stream), (k + 1) * 8 * SIZE + 8 * stream.chunk_size + 2 * 8 * k
    if held > expected:
        raise AssertionError(f"the BLT stream holds {held} B of arrays; expected at most {expected} B (output + {k} "
                             f"buffers of {SIZE} entries + a scratch chunk of {stream.chunk_size} + 2k coefficients)")
    return source


def _agree_blt(candidate, reference):
    stream, out = candidate
    dense_steps = 6  # the first steps against the dense C^{-1} Z, on a slice of the vector
    check = cn.BufferedToeplitz(BLT_DECAYS, BLT_SCALES).stream(1000, stream.source)
    z = np.stack([stream.source.draw(t, 1000) for t in range(1, dense_steps + 1)])
    noise = cn.BufferedToeplitz(BLT_DECAYS, BLT_SCALES).noise_matrix(dense_steps) @ z
    for t in range(dense_steps):
        np.testing.assert_allclose(check.next(), noise[t], rtol=0, atol=1e-12)
    if not np.all(np.isfinite(out)):
        raise AssertionError("BLT noise is not finite")


BENCHMARKS = (
    Benchmark(
        name="correlated-lambda-buffer",
        description=f"lambda-CGD (lambda={LAMBDA}) with one buffer, {SIZE} entries x {NUM_STEPS} steps",
        candidate_name="LambdaCGD stream (Z_{t-1} buffered)",
        reference_name="independent noise: Philox standard_normal into a preallocated array",
        setup=_source,
        candidate=_lambda_buffered,
        reference=_independent,
        agree=_agree_lambda,
        target_ratio=0.9,
        repeats=5,
    ),
    Benchmark(
        name="correlated-lambda-regenerate",
        description=f"lambda-CGD (lambda={LAMBDA}) regenerating Z_{{t-1}}, no buffer, {SIZE} entries x {NUM_STEPS} "
                    "steps",
        candidate_name="LambdaCGD stream (Z_{t-1} regenerated)",
        reference_name="independent noise: Philox standard_normal into a preallocated array",
        setup=_source,
        candidate=_lambda_regenerated,
        reference=_independent,
        agree=_agree_lambda,
        target_ratio=0.4,
        repeats=5,
    ),
    Benchmark(
        name="correlated-blt",
        description=f"BLT with {len(BLT_DECAYS)} buffers (exactly {len(BLT_DECAYS)} parameter-sized buffers, "
                    f"asserted), {SIZE} entries x {NUM_STEPS} steps",
        candidate_name=f"BufferedToeplitz stream ({len(BLT_DECAYS)} buffers)",
        reference_name="independent noise: Philox standard_normal into a preallocated array",
        setup=_blt_setup,
        candidate=_blt,
        reference=_independent,
        agree=_agree_blt,
        repeats=5,
    ),
)
