"""Running experiments: config preparation, unit execution, assembly and output writing.

The pipeline is ``prepare`` (validate everything, write nothing) → ``compute`` (units through a
:class:`concurrent.futures.Executor`) → ``assemble`` (pure) → ``write`` (atomic files). Only this process writes.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from privdyn.experiments import outputs, registry
from privdyn.experiments.base import Experiment, Unit
from privdyn.experiments.config import ConfigError, ExperimentConfig, apply_overrides

__all__ = [
    "DEFAULT_OUT_DIR",
    "SerialExecutor",
    "make_executor",
    "prepare",
    "compute_units",
    "build_result",
    "write_outputs",
    "run_experiment",
    "write_summary",
]

DEFAULT_OUT_DIR = Path("privdyn-results")

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each unit."""


class SerialExecutor(concurrent.futures.Executor):
    """Runs each submitted call immediately in this process (the ``serial`` executor)."""

    def submit(self, fn, /, *args, **kwargs):  # noqa: D102 - concurrent.futures interface
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - delivered through the future, as an executor does
            future.set_exception(exc)
        return future


EXECUTOR_SPECS = ("serial",)


def make_executor(spec: str) -> concurrent.futures.Executor:
    """The executor for an ``--executor`` spec (only ``serial`` for now)."""
    if spec == "serial":
        return SerialExecutor()
    raise ConfigError(f"--executor {spec!r} is not available; valid: {', '.join(EXECUTOR_SPECS)}.")


def prepare(name: str, *, quick: bool = False, overrides: Mapping[str, Any] | None = None,
            ) -> tuple[Experiment, ExperimentConfig]:
    """Look up an experiment and build its validated config (``--quick`` first, then overrides)."""
    try:
        experiment = registry.get(name)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    config = experiment.config(quick=quick)
    if overrides:
        config = apply_overrides(config, overrides)
    return experiment, config


def _run_unit(experiment_name: str, config: ExperimentConfig, unit: Unit, seed: int) -> dict[str, Any]:
    """Compute one unit with BLAS pinned to one thread (identical numbers on every executor)."""
    experiment = registry.get(experiment_name)
    with threadpool_limits(limits=1):
        return experiment.compute_unit(config, unit, seed)


def compute_units(experiment: Experiment, config: ExperimentConfig, *, seed: int,
                  executor: concurrent.futures.Executor | None = None,
                  progress: ProgressCallback | None = None) -> dict[str, dict[str, Any]]:
    """Run every unit; return their outputs by unit key."""
    units = experiment.units(config)
    keys = [u.key for u in units]
    if len(set(keys)) != len(keys):
        raise RuntimeError(f"experiment {experiment.name}: duplicate unit keys.")
    executor = executor or SerialExecutor()
    futures = {executor.submit(_run_unit, experiment.name, config, unit, seed): unit.key for unit in units}
    results: dict[str, dict[str, Any]] = {}
    for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
        results[futures[future]] = future.result()
        if progress is not None:
            progress(done, len(units))
    return {key: results[key] for key in keys}


def build_result(experiment: Experiment, config: ExperimentConfig, unit_outputs: Mapping[str, Mapping[str, Any]],
                 *, seed: int, quick: bool, elapsed_s: float) -> dict[str, Any]:
    """Assemble the ``result.json`` dictionary (without the artifact list, which the writer fills)."""
    findings = experiment.assemble(config, unit_outputs, seed=seed, quick=quick)
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
        "checks": [c.to_json() for c in findings.checks],
        "artifacts": [],
        "environment": outputs.environment(),
        "elapsed_s": elapsed_s,
    }


def write_outputs(experiment: Experiment, result: dict[str, Any], out_dir: Path) -> Path:
    """Write ``DIR/NAME/``: figures, ``series.csv`` and ``result.json`` (last, so it lists the artifacts)."""
    target = out_dir / experiment.name
    target.mkdir(parents=True, exist_ok=True)
    figures = experiment.plot(result, target)
    outputs.atomic_write_text(target / "series.csv", outputs.series_csv(result["series"]))
    result["artifacts"] = [*figures, "series.csv"]
    outputs.write_json(target / "result.json", result)
    return target


def run_experiment(experiment: Experiment, config: ExperimentConfig, *, seed: int = 0, quick: bool = False,
                   out_dir: Path | None = None, executor: concurrent.futures.Executor | None = None,
                   progress: ProgressCallback | None = None) -> dict[str, Any]:
    """Run one experiment end to end; write its outputs when ``out_dir`` is given; return the result dict."""
    start = time.perf_counter()
    unit_outputs = compute_units(experiment, config, seed=seed, executor=executor, progress=progress)
    result = build_result(experiment, config, unit_outputs, seed=seed, quick=quick, elapsed_s=0.0)
    result["elapsed_s"] = time.perf_counter() - start
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
