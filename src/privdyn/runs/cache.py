"""The unit cache: each unit's output stored under ``DIR/NAME/.cache/``, so runs resume where they stopped.

A unit's cache key is the SHA-256 of (experiment name, unit key, unit params, the unit's config, run seed, quick
flag, privdyn version, and a hash of the installed package's source files). Editing any source file of privdyn, even
without committing, therefore invalidates every cached unit; the git commit is recorded only as metadata in the
results.

Unit outputs are normalised through JSON (``Infinity``/``NaN`` tokens allowed in this internal format) before they
are cached *and* before they are assembled, so a resumed run assembles exactly the same data as an uninterrupted one.
Only the process that runs the experiment (the client) reads and writes the cache; files are written atomically.
Two runs into one folder share the work: a run computes a unit only while it holds the unit's lock
(:meth:`UnitCache.lock`, an advisory ``flock`` on ``<key>.lock`` that the kernel releases when its holder dies, so a
killed run leaves no stale lock), and a unit another run is computing is read from the cache once its lock is free.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privdyn._version import package_dir, version
from privdyn.runs.base import Unit
from privdyn.runs.outputs import atomic_write_text

__all__ = ["source_hash", "tree_hash", "normalize", "UnitCache", "UnitLock"]

CACHE_FORMAT = 1


@functools.lru_cache(maxsize=1)
def source_hash() -> str:
    """SHA-256 over the installed privdyn package's source files (relative path and bytes of every ``.py``)."""
    return tree_hash(package_dir().resolve())


def tree_hash(root: Path) -> str:
    """SHA-256 over the relative paths and contents of the ``.py`` files below ``root``, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"unit outputs must be JSON-compatible; got a {type(value).__name__}.")


def _dumps(value: Any) -> str:
    return json.dumps(value, default=_default, allow_nan=True, sort_keys=True, separators=(",", ":"))


def normalize(output: Mapping[str, Any]) -> dict[str, Any]:
    """The unit output as it reads back from the cache (tuples become lists, NumPy values Python values)."""
    return json.loads(_dumps(output))


class UnitLock:
    """An exclusive advisory lock on one cache entry (``fcntl.flock``; where there is no ``fcntl``, always granted).

    The lock file stays in place (deleting it would let two runs lock two different files of the same name); it is
    created with the permissions of any new file, 0666 less the umask.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, *, blocking: bool) -> bool:
        """Take the lock; without ``blocking``, return False at once when another process holds it."""
        if self._fd is not None:
            raise RuntimeError(f"the lock {self.path} is already held by this object.")
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no sharing between runs, each computes its own units
            self._fd = -1
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        """Give the lock up (closing the file releases the ``flock``); a no-op when not held."""
        fd, self._fd = self._fd, None
        if fd is not None and fd >= 0:
            os.close(fd)


class UnitCache:
    """The cache of one experiment run: ``directory/<key>.json`` per unit."""

    def __init__(self, directory: Path, *, experiment: str, seed: int, quick: bool) -> None:
        self.directory = Path(directory)
        self._fields = {"format": CACHE_FORMAT, "experiment": experiment, "seed": int(seed), "quick": bool(quick),
                        "privdyn": version(), "source": source_hash()}

    def key(self, unit: Unit, unit_config: Mapping[str, Any]) -> str:
        identity = {**self._fields, "unit_key": unit.key, "unit_params": dict(unit.params),
                    "unit_config": dict(unit_config)}
        return hashlib.sha256(_dumps(identity).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The cached output, or None when absent or unreadable (a torn file is recomputed, never trusted)."""
        found = self.load_timed(key)
        return None if found is None else found[0]

    def load_timed(self, key: str) -> tuple[dict[str, Any], float | None] | None:
        """The cached output and the seconds its computation took (None where the entry records none), or None."""
        path = self._path(key)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict) or record.get("key") != key or "output" not in record:
            return None
        seconds = record.get("compute_s")
        return record["output"], float(seconds) if isinstance(seconds, int | float) else None

    def lock(self, key: str) -> UnitLock:
        """The (not yet acquired) lock that a run holds while it computes the unit of ``key``."""
        return UnitLock(self.directory / f"{key}.lock")

    def store(self, key: str, unit: Unit, output: Mapping[str, Any], *, compute_s: float | None = None) -> None:
        """Cache ``output``, with the seconds its computation took (reported again by every run that reuses it)."""
        record = {"key": key, "unit_key": unit.key, **self._fields, "compute_s": compute_s, "output": output}
        atomic_write_text(self._path(key), _dumps(record) + "\n")

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*.json")) if self.directory.is_dir() else 0
