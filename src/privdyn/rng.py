"""Explicit, independent random streams.

A stream is identified by ``(seed, unit_key, run_index, purpose)``. The identifier is hashed with SHA-256 (never
Python's salted :func:`hash`) into the entropy of a :class:`numpy.random.SeedSequence`, which seeds a counter-based
Philox bit generator. Hence

* a unit draws the same numbers in any order, in any process and on any worker;
* run ``i`` of a simulator draws the same numbers whatever the number of runs;
* data, sampling and privacy noise are independent streams (different purposes hash to unrelated keys).

No function here touches NumPy's global random state; a seed is turned into generators only at the top
(the CLI or an experiment), and engines take a :class:`numpy.random.Generator` argument.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from privdyn import _check

__all__ = [
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
class CounterStream:
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


def counter_stream(seed: int, unit_key: str = "", *, purpose: str = "noise") -> CounterStream:
    """The :class:`CounterStream` of ``(seed, unit_key, purpose)`` (key from the same SHA-256 identifier)."""
    digest = _identifier_digest(seed, unit_key, 0, purpose)
    return CounterStream(key=(int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:8], "little")))
