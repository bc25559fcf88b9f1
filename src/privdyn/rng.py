"""Explicit, independent random streams.

A stream is identified by ``(seed, unit_key, run_index, purpose)``. The identifier is hashed with SHA-256 (never
Python's salted :func:`hash`) into the entropy of a :class:`numpy.random.SeedSequence`, which seeds a counter-based
Philox bit generator. Hence

* a unit draws the same numbers in any order, in any process and on any worker;
* run ``i`` of a simulator draws the same numbers whatever the number of runs;
* data, sampling and privacy noise are independent streams (different purposes hash to unrelated keys).

No function here touches NumPy's global random state; a seed is turned into generators only at the top
(the CLI or an experiment), and engines take a :class:`numpy.random.Generator` argument.

**One stream type, one naming rule.** Counter-based normals come from a :class:`NormalStream`: a
:class:`CounterStream` (Philox4x32-10 evaluated on arrays of counters, for simulators vectorized over runs) or
:class:`StepNormals` (NumPy's Philox4x64-10 positioned at a step, for streaming correlated noise). Each keeps its own
bits; both address a number by (run, draw), so it can be regenerated instead of stored. A function argument called
``rng`` is a :class:`numpy.random.Generator` (or, where documented, a privdyn stream); a function that takes
independent streams calls them ``sampling_rng`` and ``noise_rng``, and they must stay independent. Arguments are
checked with ``_check.generator``.
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib

import numpy as np

from privdyn import _check

__all__ = [
    "NormalStream",
    "StepNormals",
    "step_normals",
    "as_step_normals",
    "PURPOSES",
    "Streams",
    "seed_sequence",
    "generator",
    "streams",
    "run_generators",
    "philox4x32",
    "CounterStream",
    "counter_stream",
]

class NormalStream(abc.ABC):
    """Standard normals addressed by position: value (run, draw, j) is a pure function of the stream and the position.

    A run's numbers do not depend on how many runs are drawn together or in which order, and any draw can be drawn
    again later instead of being stored. Implementations keep their own bit generators (so no stream changes).
    """

    __slots__ = ()

    @abc.abstractmethod
    def normals(self, draw: int, size: int, *, num_runs: int = 1) -> np.ndarray:
        """Draw ``draw``'s ``size`` normals for ``num_runs`` consecutive runs from the stream's first run.

        Shapes: -> (num_runs, size).
        """


PURPOSES = ("data", "sampling", "noise")
"""The independent purposes a unit draws random numbers for."""

_DOMAIN = "privdyn.rng.v1"  # changing this string changes every stream: bump only with a major version


def _identifier_digest(seed: int, unit_key: str, run_index: int, purpose: str) -> bytes:
    _validate(seed, unit_key, run_index, purpose)
    text = "\x1f".join((_DOMAIN, str(int(seed)), unit_key, str(int(run_index)), purpose))
    return hashlib.sha256(text.encode("utf-8")).digest()


def _validate(seed: int, unit_key: str, run_index: int, purpose: str) -> None:
    _check.integer(minimum=0, seed=seed, run_index=run_index)
    if not isinstance(unit_key, str):
        raise TypeError(f"unit_key must be a str; got unit_key={unit_key!r}.")
    _check.one_of(PURPOSES, purpose=purpose)


def seed_sequence(seed: int, unit_key: str = "", *, run_index: int = 0,
                  purpose: str = "noise") -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` of one stream, from a stable SHA-256 hash of its identifier."""
    digest = _identifier_digest(seed, unit_key, run_index, purpose)
    return np.random.SeedSequence(int.from_bytes(digest, "little"))


def generator(seed: int, unit_key: str = "", *, run_index: int = 0, purpose: str = "noise") -> np.random.Generator:
    """A Philox-backed generator for one stream ``(seed, unit_key, run_index, purpose)``."""
    return np.random.Generator(np.random.Philox(seed_sequence(seed, unit_key, run_index=run_index, purpose=purpose)))


@dataclasses.dataclass(frozen=True)
class Streams:
    """The three independent generators of one run of one unit."""

    data: np.random.Generator
    sampling: np.random.Generator
    noise: np.random.Generator


def streams(seed: int, unit_key: str = "", *, run_index: int = 0) -> Streams:
    """Independent data, sampling and noise generators for run ``run_index`` of unit ``unit_key``."""
    return Streams(*(generator(seed, unit_key, run_index=run_index, purpose=p) for p in PURPOSES))


def run_generators(seed: int, unit_key: str, num_runs: int, *, purpose: str = "noise") -> list[np.random.Generator]:
    """One generator per run ``0 .. num_runs-1`` (run ``i``'s stream does not depend on ``num_runs``)."""
    _check.integer(minimum=0, num_runs=num_runs)
    return [generator(seed, unit_key, run_index=i, purpose=purpose) for i in range(num_runs)]


# ---------------------------------------------------------------------------------------------------------------
# Counter-based normals: Philox4x32-10 evaluated on arrays of counters
# ---------------------------------------------------------------------------------------------------------------

_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32(counters: np.ndarray, key: tuple[int, int], rounds: int = 10) -> np.ndarray:
    """The Philox4x32 block cipher of Salmon et al. (SC'11, "Parallel random numbers: as easy as 1, 2, 3").

    Args:
        counters: unsigned integers of shape (..., 4), each word < 2**32.
        key: two 32-bit words.
        rounds: number of rounds (10, the standard choice).

    Returns:
        The encrypted counters, shape (..., 4), dtype uint64 (each word < 2**32). Vectorized over counters,
        so any set of (run, draw) positions is generated at once and independently of every other position.
    """
    c = np.asarray(counters, dtype=np.uint64)
    if c.shape[-1:] != (4,):
        raise ValueError(f"counters must have shape (..., 4); got shape {c.shape}.")
    shape = c.shape
    c = c.reshape(-1, 4)
    c0, c1, c2, c3 = (c[:, i] & _MASK32 for i in range(4))  # fresh contiguous arrays
    k0, k1 = int(key[0]) & 0xFFFFFFFF, int(key[1]) & 0xFFFFFFFF
    m0, m1, shift = np.uint64(_PHILOX_M[0]), np.uint64(_PHILOX_M[1]), np.uint64(32)
    p0, p1 = np.empty_like(c0), np.empty_like(c0)
    for r in range(rounds):
        if r:
            k0 = (k0 + _PHILOX_W[0]) & 0xFFFFFFFF
            k1 = (k1 + _PHILOX_W[1]) & 0xFFFFFFFF
        np.multiply(c0, m0, out=p0)  # 32 x 32 -> 64 bits: exact in uint64
        np.multiply(c2, m1, out=p1)
        # new (c0, c1, c2, c3) = (hi(p1) ^ c1 ^ k0, lo(p1), hi(p0) ^ c3 ^ k1, lo(p0)), computed in place
        np.right_shift(p1, shift, out=c0)
        c0 ^= c1
        c0 ^= np.uint64(k0)
        np.bitwise_and(p1, _MASK32, out=c1)
        np.right_shift(p0, shift, out=c2)
        c2 ^= c3
        c2 ^= np.uint64(k1)
        np.bitwise_and(p0, _MASK32, out=c3)
    return np.stack([c0, c1, c2, c3], axis=-1).reshape(shape)


@dataclasses.dataclass(frozen=True)
class CounterStream(NormalStream):
    """Standard normals addressed by (run, draw, coordinate), for simulators vectorized over runs.

    Value ``(i, k, j)`` (run i, draw k, coordinate j) is a pure function of the stream's key and of (i, k, j):
    run i draws the same numbers whatever the number of runs and however runs are batched into units, and a
    draw can be regenerated later from its counter without storing it. The counter of coordinate pair
    ``j // 2`` is (j // 2, k, i mod 2**32, i // 2**32); its Philox4x32-10 output gives two 53-bit uniforms in
    (0, 1), mapped to normals by the inverse normal CDF.

    Attributes:
        key: the 64-bit Philox key (two 32-bit words).
        first_run: the global index of run 0 of this view (see :meth:`runs`).
    """

    key: tuple[int, int]
    first_run: int = 0

    def runs(self, first_run: int) -> CounterStream:
        """A view whose run 0 is global run ``first_run`` (for a unit holding a block of runs)."""
        _check.integer(minimum=0, first_run=first_run)
        return dataclasses.replace(self, first_run=int(first_run))

    def standard_normal(self, draw: int, num_runs: int, size: int) -> np.ndarray:
        """Normals of draw ``draw`` for runs ``first_run .. first_run + num_runs - 1``: shape (num_runs, size)."""
        _check.integer(minimum=0, draw=draw, num_runs=num_runs, size=size)
        pairs = (size + 1) // 2
        run = np.arange(self.first_run, self.first_run + num_runs, dtype=np.uint64)[:, None]
        pair = np.arange(pairs, dtype=np.uint64)[None, :]
        counters = np.empty((num_runs, pairs, 4), dtype=np.uint64)
        counters[..., 0] = pair
        counters[..., 1] = np.uint64(draw)
        counters[..., 2] = run & _MASK32
        counters[..., 3] = run >> np.uint64(32)
        words = philox4x32(counters, self.key)
        # two 53-bit uniforms strictly inside (0, 1) from (27 + 26)-bit pieces of the four words
        hi = (words[..., 0::2] >> np.uint64(5)).astype(np.float64)
        lo = (words[..., 1::2] >> np.uint64(6)).astype(np.float64)
        uniform = (hi * 67108864.0 + lo + 0.5) / 9007199254740992.0
        from scipy import special  # imported on use: importing the streams stays cheap

        return special.ndtri(uniform).reshape(num_runs, 2 * pairs)[:, :size]

    def normals(self, draw: int, size: int, *, num_runs: int = 1) -> np.ndarray:
        """The :class:`NormalStream` interface: :meth:`standard_normal` (the same numbers)."""
        return self.standard_normal(draw, num_runs, size)


def counter_stream(seed: int, unit_key: str = "", *, purpose: str = "noise") -> CounterStream:
    """The :class:`CounterStream` of ``(seed, unit_key, purpose)`` (key from the same SHA-256 identifier)."""
    digest = _identifier_digest(seed, unit_key, 0, purpose)
    return CounterStream(key=(int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:8], "little")))


# ---------------------------------------------------------------------------------------------------------------
# Counter-based standard normals addressed by step (the correlated-noise streams of privdyn.privacy.correlated)
# ---------------------------------------------------------------------------------------------------------------

# The second word of the Philox key: separates these streams from every other use of a CounterStream key.
_KEY_TAG = int.from_bytes(hashlib.sha256(b"privdyn.privacy.correlated.StepNormals.v1").digest()[:8], "little")


class StepNormals(NormalStream):
    """Standard normals ``Z_t`` of each step ``t >= 1``: a pure function of (key, run, t), regenerable at will.

    Step ``t`` of run ``r`` is the output of NumPy's Philox4x64-10 bit generator with the 128-bit key
    ``(key, tag)`` and counter ``(0, 0, t, r)``, turned into normals by NumPy's Ziggurat sampler. Different steps
    (and runs) start 2**128 blocks apart, so their streams never overlap; a step's numbers can be drawn in
    consecutive pieces (each piece continues the same stream), which lets a stream regenerate ``Z_{t-1}`` chunk by
    chunk with no parameter-sized scratch.

    Build one from a :class:`privdyn.rng.CounterStream` (:meth:`from_counter_stream`, or :func:`step_normals`
    from a seed), so that the key follows privdyn's SHA-256 stream identifiers.

    Args:
        key: a 64-bit integer key.
        run: the run index (>= 0), e.g. the global run index of a simulator vectorized over runs.
    """

    __slots__ = ("_key", "_run")

    def __init__(self, key: int, run: int = 0) -> None:
        _check.integer(minimum=0, key=key, run=run)
        if int(key) >= 2**64 or int(run) >= 2**64:
            raise ValueError(f"key and run must be < 2**64; got key={key!r}, run={run!r}.")
        self._key = int(key)
        self._run = int(run)

    @classmethod
    def from_counter_stream(cls, stream: CounterStream, run: int = 0) -> StepNormals:
        """The step normals of run ``run`` of ``stream`` (its 64-bit key; run offset by ``stream.first_run``)."""
        if not isinstance(stream, CounterStream):
            raise TypeError(f"stream must be a privdyn.rng.CounterStream; got {type(stream).__name__}.")
        _check.integer(minimum=0, run=run)
        key = int(stream.key[0]) | (int(stream.key[1]) << 32)
        return cls(key, stream.first_run + int(run))

    @property
    def key(self) -> int:
        return self._key

    @property
    def run(self) -> int:
        return self._run

    def generator(self, step: int) -> np.random.Generator:
        """A generator positioned at the start of step ``step``'s normals (``step >= 1``)."""
        _check.integer(minimum=1, step=step)
        return self._reset(np.random.Generator(np.random.Philox(0)), int(step))

    def _reset(self, generator: np.random.Generator, step: int) -> np.random.Generator:
        """Position an existing Philox-backed generator at the start of ``step`` (as :meth:`generator` builds it)."""
        generator.bit_generator.state = {
            "bit_generator": "Philox",
            "state": {"counter": np.array([0, 0, step, self._run], dtype=np.uint64),
                      "key": np.array([self._key, _KEY_TAG], dtype=np.uint64)},
            "buffer": np.zeros(4, dtype=np.uint64), "buffer_pos": 4, "has_uint32": 0, "uinteger": 0,
        }
        return generator

    def draw(self, step: int, size: int | None = None, *, out: np.ndarray | None = None,
             generator: np.random.Generator | None = None) -> np.ndarray:
        """``Z_step``: ``size`` standard normals (float64), or as many as ``out`` holds, written into it.

        Every whole-step draw of privdyn's step normals goes through here (the noise streams of
        :mod:`privdyn.privacy.correlated` included), so the audit's rows that run those streams cover this method.

        Args:
            step: the step ``t >= 1``.
            size: the number of normals; give it or ``out``, not both.
            out: a writable C-contiguous float64 array to fill (the same numbers as ``size=out.size``).
            generator: a Philox-backed generator to reposition at ``step`` instead of building one (streams reuse
                one generator across steps); its previous state is discarded.
        """
        if (size is None) == (out is None):
            raise TypeError(f"give exactly one of size and out; got size={size!r} and out of type "
                            f"{type(out).__name__}.")
        _check.integer(minimum=1, step=step)
        if out is None:
            _check.integer(minimum=0, size=size)
            out = np.empty(int(size))  # type: ignore[arg-type]
        source = self.generator(step) if generator is None else self._reset(generator, int(step))
        source.standard_normal(out=out)
        return out

    def normals(self, draw: int, size: int, *, num_runs: int = 1) -> np.ndarray:
        """Step ``draw``'s normals for runs ``run .. run + num_runs - 1``: shape (num_runs, size)."""
        _check.integer(minimum=1, draw=draw)
        _check.integer(minimum=0, size=size, num_runs=num_runs)
        return np.stack([StepNormals(self._key, self._run + i).draw(int(draw), int(size)) for i in range(num_runs)]
                        ).reshape(int(num_runs), int(size))

    def __repr__(self) -> str:
        return f"StepNormals(key={self._key:#018x}, run={self._run})"


def step_normals(seed: int, unit_key: str = "", *, run: int = 0) -> StepNormals:
    """The :class:`StepNormals` of the privacy-noise stream ``(seed, unit_key)`` (see :mod:`privdyn.rng`)."""
    return StepNormals.from_counter_stream(counter_stream(seed, unit_key, purpose="noise"), run)


def as_step_normals(source: StepNormals | CounterStream) -> StepNormals:
    """``source`` as :class:`StepNormals` (a :class:`CounterStream` gives its run 0; ``TypeError`` otherwise)."""
    if isinstance(source, StepNormals):
        return source
    if isinstance(source, CounterStream):
        return StepNormals.from_counter_stream(source)
    raise TypeError("source must be a privdyn.privacy.correlated.StepNormals or a privdyn.rng.CounterStream; "
                    f"got source of type {type(source).__name__}.")
