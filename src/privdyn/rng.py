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

__all__ = ["PURPOSES", "Streams", "seed_sequence", "generator", "streams", "run_generators"]

PURPOSES = ("data", "sampling", "noise")
"""The independent purposes a unit draws random numbers for."""

_DOMAIN = "privdyn.rng.v1"  # changing this string changes every stream: bump only with a major version


def _validate(seed: int, unit_key: str, run_index: int, purpose: str) -> None:
    _check.integer(minimum=0, seed=seed, run_index=run_index)
    if not isinstance(unit_key, str):
        raise TypeError(f"unit_key must be a str; got unit_key={unit_key!r}.")
    _check.one_of(PURPOSES, purpose=purpose)


def seed_sequence(seed: int, unit_key: str = "", *, run_index: int = 0,
                  purpose: str = "noise") -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` of one stream, from a stable SHA-256 hash of its identifier."""
    _validate(seed, unit_key, run_index, purpose)
    text = "\x1f".join((_DOMAIN, str(int(seed)), unit_key, str(int(run_index)), purpose))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
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
