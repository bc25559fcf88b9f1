"""Running experiments: executors, cached unit execution, assembly and output writing.

The pipeline is :func:`privdyn.experiments.registry.prepare` (validate everything, write nothing) →
``compute_units`` (units not in the cache, through any :class:`concurrent.futures.Executor`; each output cached as it
arrives) → ``assemble`` (pure) → ``write_outputs`` (atomic files). Only this process (the client) reads and writes
files; workers only compute. Every unit runs with BLAS pinned to one thread, so all executors give the same numbers.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from threadpoolctl import threadpool_limits

from privdyn.runs import outputs, plotting
from privdyn.runs.base import Experiment, Unit
from privdyn.runs.cache import UnitCache, UnitLock, normalize
from privdyn.runs.config import (
    DEFAULT_EXECUTOR,
    DEFAULT_OUT_DIR,
    EXECUTOR_SPECS,
    ConfigError,
    ExperimentConfig,
)
from privdyn.runs.power import quick_power_check

__all__ = [
    "DEFAULT_OUT_DIR",
    "DEFAULT_EXECUTOR",
    "SerialExecutor",
    "UnitCounts",
    "open_executor",
    "compute_units",
    "build_result",
    "write_outputs",
    "run_experiment",
    "write_summary",
]

ProgressCallback = Callable[[int, int], None]
T = TypeVar("T")
"""Called as ``progress(done, total)`` after each unit."""


class SerialExecutor(concurrent.futures.Executor):
    """Runs each submitted call immediately in this process (the ``serial`` executor)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        """Call ``fn(*args, **kwargs)`` now; return a future that holds its result or the exception it raised."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - delivered through the future, as an executor does
            future.set_exception(exc)
        return future


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _die_with_parent(parent_pid: int) -> None:
    """Pool worker initializer: end this worker when the process that started the pool dies (even by SIGKILL).

    On Linux the kernel sends SIGKILL to the worker when its parent exits (``prctl(PR_SET_PDEATHSIG)``); elsewhere,
    or if that call fails, a daemon thread polls the parent id and exits the worker once it is reparented. Either way
    a killed ``privdyn`` command leaves no orphaned workers computing for nobody.
    """
    import signal
    import sys
    import threading

    armed = False
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent_pid:  # the parent died before the worker got here
        os._exit(1)
    if armed:
        return

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="privdyn-parent-watch", daemon=True).start()


def _check_executor_spec(spec: str) -> None:
    if spec in ("serial", "local", "dask-local"):
        return
    if spec.startswith("tcp://"):
        host, _, port = spec[len("tcp://"):].rpartition(":")
        if host and port.isdigit() and 0 < int(port) < 65536:
            return
        raise ConfigError(f"--executor {spec!r} is not a scheduler address; expected tcp://HOST:PORT.")
    raise ConfigError(f"--executor {spec!r} is not known; valid: {', '.join(EXECUTOR_SPECS)}.")


def _dask() -> Any:
    try:
        import distributed
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise ConfigError("the dask executors need the dask extra: pip install 'privdyn[dask]'.") from None
    return distributed


@contextlib.contextmanager
def open_executor(spec: str = DEFAULT_EXECUTOR, *,
                  connect_timeout_s: float = 10.0) -> Iterator[concurrent.futures.Executor]:
    """The executor for an ``--executor`` spec, closed on exit.

    ``serial`` runs units in this process; ``local`` in a process pool with one worker per core (each worker dies
    with this process, see :func:`_die_with_parent`); ``dask-local`` on a
    new ``dask.distributed.LocalCluster`` (one single-threaded worker process per core; each worker exits when the
    pipe to this process closes, Dask's own guard, so it too dies with this process); ``tcp://HOST:PORT`` on an
    existing Dask scheduler (its workers need the same privdyn version installed). A scheduler that cannot be reached
    within ``connect_timeout_s`` raises :class:`ConfigError` before anything runs.
    """
    _check_executor_spec(spec)
    if spec == "serial":
        yield SerialExecutor()
        return
    if spec == "local":
        workers = os.cpu_count() or 1
        spawn = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=spawn, initializer=_die_with_parent,
                                                    initargs=(os.getpid(),)) as pool:
            yield pool
        return
    distributed = _dask()
    if spec == "dask-local":
        cluster = distributed.LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.ERROR)
        with cluster, distributed.Client(cluster) as client:
            yield client.get_executor()
        return
    try:
        client = distributed.Client(spec, timeout=f"{connect_timeout_s}s")
    except (OSError, TimeoutError) as exc:
        raise ConfigError(f"--executor {spec}: cannot reach the Dask scheduler ({exc}).") from None
    with client:
        yield client.get_executor()


def _run_unit(experiment: Experiment, config: ExperimentConfig, unit: Unit,
              seed: int) -> tuple[dict[str, Any], float]:
    """Compute one unit with BLAS pinned to one thread (identical numbers on every executor); return its output and
    the wall time it took on the worker."""
    start = time.perf_counter()
    with threadpool_limits(limits=1):
        output = normalize(experiment.compute_unit(config, unit, seed))
    return output, time.perf_counter() - start


@dataclasses.dataclass
class UnitCounts:
    """How many units a run took from the cache and how many it computed, and what computing them cost.

    ``compute_s`` sums the wall time of every unit of the result as it was measured when the unit was computed: a unit
    taken from the cache brings the time recorded with it, so a cached rerun reports the cost of the run that computed
    the result, not its own. ``untimed`` counts cached units that carry no recorded time (caches written before times
    were recorded).
    """

    cached: int = 0
    computed: int = 0
    compute_s: float = 0.0
    untimed: int = 0

    def add_cached(self, seconds: float | None) -> None:
        self.cached += 1
        if seconds is None:
            self.untimed += 1
        else:
            self.compute_s += seconds


def compute_units(experiment: Experiment, config: ExperimentConfig, *, seed: int, quick: bool = False,
                  executor: concurrent.futures.Executor | None = None, cache: UnitCache | None = None,
                  force: bool = False, progress: ProgressCallback | None = None,
                  counts: UnitCounts | None = None) -> dict[str, dict[str, Any]]:
    """Run every unit not already cached; return all outputs by unit key (in the experiment's unit order).

    Each output is stored in ``cache`` as soon as its unit finishes, so an interrupted run loses only the units
    in flight. With ``force`` the cache is ignored (and overwritten). With a cache, a unit is computed only under its
    lock (:meth:`UnitCache.lock`): a unit that another run into the same folder is computing is waited for and read
    from the cache, so concurrent runs compute each unit once.
    """
    units = experiment.units(config)
    keys = [u.key for u in units]
    if len(set(keys)) != len(keys):
        raise RuntimeError(f"experiment {experiment.name}: duplicate unit keys.")
    counts = counts if counts is not None else UnitCounts()
    results: dict[str, dict[str, Any]] = {}
    cache_keys: dict[str, str] = {}
    pending: list[Unit] = []
    for unit in units:
        if cache is not None:
            cache_keys[unit.key] = cache.key(unit, experiment.unit_config(config, unit))
            cached = None if force else cache.load_timed(cache_keys[unit.key])
            if cached is not None:
                results[unit.key] = cached[0]
                counts.add_cached(cached[1])
                continue
        pending.append(unit)
    if progress is not None:
        progress(len(results), len(units))
    executor = executor or SerialExecutor()
    # The serial executor computes on submit: submit one unit at a time so that each is cached before the next
    # starts. Other executors get every unit at once and deliver them as they finish.
    window = 1 if isinstance(executor, SerialExecutor) else max(len(pending), 1)
    queue = iter(pending)
    deferred: list[Unit] = []  # units whose lock another run holds: read from the cache once it is free
    locks: dict[str, UnitLock] = {}
    in_flight: dict[concurrent.futures.Future, Unit] = {}

    def claim(unit: Unit, blocking: bool) -> bool:
        """True when this run computes the unit (holding its lock); False when it was deferred or found cached."""
        if cache is None:
            return True
        lock = cache.lock(cache_keys[unit.key])
        if not lock.acquire(blocking=blocking):
            deferred.append(unit)
            return False
        cached = None if force else cache.load_timed(cache_keys[unit.key])
        if cached is not None:  # another run computed it while this one waited
            lock.release()
            results[unit.key] = cached[0]
            counts.add_cached(cached[1])
            if progress is not None:
                progress(len(results), len(units))
            return False
        locks[unit.key] = lock
        return True

    try:
        while True:
            while len(in_flight) < window:
                candidate = next(queue, None)
                blocking = False
                if candidate is None:
                    if in_flight or not deferred:
                        break
                    candidate, blocking = deferred.pop(0), True  # nothing else to do: wait for the other run
                if claim(candidate, blocking):
                    in_flight[executor.submit(_run_unit, experiment, config, candidate, seed)] = candidate
            if not in_flight:
                break
            finished, _ = concurrent.futures.wait(in_flight, return_when=concurrent.futures.FIRST_COMPLETED)
            failed = [f for f in finished if f.exception() is not None]
            for future in sorted(finished, key=lambda f: f in failed):  # cache every success before raising
                unit = in_flight.pop(future)
                output, seconds = future.result()
                if cache is not None:
                    cache.store(cache_keys[unit.key], unit, output, compute_s=seconds)
                    locks.pop(unit.key).release()
                results[unit.key] = output
                counts.computed += 1
                counts.compute_s += seconds
                if progress is not None:
                    progress(len(results), len(units))
    except BaseException:
        for future in in_flight:
            future.cancel()
        raise
    finally:
        for lock in locks.values():
            lock.release()
    return {key: results[key] for key in keys}


def build_result(experiment: Experiment, config: ExperimentConfig, unit_outputs: Mapping[str, Mapping[str, Any]],
                 *, seed: int, quick: bool, elapsed_s: float) -> dict[str, Any]:
    """Assemble the ``result.json`` dictionary (without the artifact list, which the writer fills).

    A run of an unmodified quick config also gets the invariant that its Monte-Carlo checks kept their power
    (:func:`privdyn.runs.power.quick_power_check`).
    """
    findings = experiment.assemble(config, unit_outputs, seed=seed, quick=quick)
    checks = [c.to_json() for c in findings.checks]
    if quick and config.to_dict() == experiment.config(quick=True).to_dict():  # the quick config, unmodified
        power = quick_power_check(experiment.name, checks)
        if power is not None:
            checks.append(power.to_json())
    return {
        "experiment": experiment.name,
        "title": experiment.title,
        "paper": experiment.paper,
        "config": config.to_dict(),
        "seed": seed,
        "quick": quick,
        "series": [s.to_json() for s in findings.series],
        "tables": [t.to_json() for t in findings.tables],
        "metrics": [m.to_json() for m in findings.metrics],
        "checks": checks,
        "artifacts": [],
        "environment": outputs.environment(),
        "elapsed_s": elapsed_s,
        "outputs_s": None,
        "compute_s": None,
    }


def write_outputs(experiment: Experiment, result: dict[str, Any], out_dir: Path) -> Path:
    """Write ``DIR/NAME/``: figures (PNG and SVG), ``series.csv`` and ``result.json`` (last: it lists the artifacts).

    ``result["outputs_s"]`` records the wall time spent writing the figures and ``series.csv`` (``elapsed_s`` covers
    computing and assembling the result, not writing it).
    """
    start = time.perf_counter()
    target = out_dir / experiment.name
    target.mkdir(parents=True, exist_ok=True)
    figures = experiment.plot(result, target)
    outputs.atomic_write_text(target / "series.csv", outputs.series_csv(result["series"]))
    result["artifacts"] = [*(name for figure in figures for name in plotting.figure_files(figure)), "series.csv"]
    result["outputs_s"] = time.perf_counter() - start
    outputs.write_json(target / "result.json", result)
    return target


def run_experiment(experiment: Experiment, config: ExperimentConfig, *, seed: int = 0, quick: bool = False,
                   out_dir: Path | None = None, executor: concurrent.futures.Executor | None = None,
                   force: bool = False, progress: ProgressCallback | None = None,
                   counts: UnitCounts | None = None) -> dict[str, Any]:
    """Run one experiment end to end and return the result dict.

    With ``out_dir`` the units are cached under ``out_dir/NAME/.cache/`` (a rerun resumes: it computes only the
    missing units, and its result equals an uninterrupted run's except the timings ``elapsed_s``, ``outputs_s`` and
    ``compute_s``) and the outputs are written (``outputs_s`` is None when nothing is written). ``compute_s`` is the
    sum of the units' compute times as recorded when each was computed (see :class:`UnitCounts`), so a cached rerun
    keeps the cost of the run that computed the result; None where a cached unit recorded no time.
    """
    start = time.perf_counter()
    cache = (UnitCache(out_dir / experiment.name / ".cache", experiment=experiment.name, seed=seed, quick=quick)
             if out_dir is not None else None)
    counts = counts if counts is not None else UnitCounts()
    unit_outputs = compute_units(experiment, config, seed=seed, quick=quick, executor=executor, cache=cache,
                                 force=force, progress=progress, counts=counts)
    result = build_result(experiment, config, unit_outputs, seed=seed, quick=quick, elapsed_s=0.0)
    result["elapsed_s"] = time.perf_counter() - start
    if not counts.untimed:  # the units' recorded times: what computing this result cost, whichever run did it
        result["compute_s"] = counts.compute_s
    if out_dir is not None:
        write_outputs(experiment, result, out_dir)
    return result


def write_summary(results: Sequence[Mapping[str, Any]], out_dir: Path) -> None:
    """``DIR/summary.json`` and ``DIR/summary.md`` for a ``reproduce`` run."""
    summary = {
        "experiments": [
            {
                "experiment": r["experiment"],
                "quick": r["quick"],
                "elapsed_s": r["elapsed_s"],
                "outputs_s": r.get("outputs_s"),
                "compute_s": r.get("compute_s"),
                "checks_passed": sum(c["passed"] is True for c in r["checks"]),
                "checks_failed": sum(c["passed"] is False for c in r["checks"]),
                "checks_not_applicable_or_findings": sum(c["passed"] is None for c in r["checks"]),
            }
            for r in results
        ],
        "checks": outputs.summary_rows(results),
    }
    outputs.write_json(out_dir / "summary.json", summary)
    outputs.atomic_write_text(out_dir / "summary.md", outputs.summary_markdown(results))
