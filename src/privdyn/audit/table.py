"""The audit table: one row per mechanism, computed through the experiment runner's executors and cache.

An audit is an experiment whose units are mechanisms: :class:`AuditExperiment` (not in the figure registry) has one
:class:`~privdyn.runs.base.Unit` per mechanism, each computed by :func:`~privdyn.audit.core.audit_mechanism`
from the run seed, so ``privdyn audit`` can run units on any executor (serial, a process pool, Dask) and cache them
under an output folder exactly as ``privdyn run`` does.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from privdyn.audit.base import missing_extra
from privdyn.audit.core import DEFAULT_CONFIDENCE, DEFAULT_RUNS, AuditRow, audit_mechanism
from privdyn.audit.mechanisms import MECHANISMS, mechanism
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.results import Check, CheckKind, Table

__all__ = ["AuditConfig", "AuditExperiment", "audit", "available_mechanisms", "default_mechanisms",
           "unavailable_mechanisms"]


def available_mechanisms() -> tuple[str, ...]:
    """The mechanisms that can run here (every optional extra they need is installed), in table order."""
    return tuple(name for name, cls in MECHANISMS.items() if missing_extra(cls) is None)


def default_mechanisms() -> tuple[str, ...]:
    """The rows ``privdyn audit`` runs by default: the available ones whose accountant answers in seconds (the
    amplified-bound rows, about a minute each, run with ``--all`` or by name)."""
    return tuple(name for name in available_mechanisms() if not MECHANISMS[name].slow_accountant)


def unavailable_mechanisms() -> dict[str, str]:
    """The mechanisms that cannot run here, each with the reason (the extra to install)."""
    return {name: reason for name, cls in MECHANISMS.items() if (reason := missing_extra(cls)) is not None}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AuditConfig(ExperimentConfig):
    """What to audit: the mechanisms, the runs per dataset and the confidence of the empirical bounds."""

    mechanisms: tuple[str, ...] = dataclasses.field(default_factory=lambda: available_mechanisms())
    runs: int = DEFAULT_RUNS
    confidence: float = DEFAULT_CONFIDENCE

    def validate(self) -> None:
        if not self.mechanisms:
            raise ValueError("mechanisms must name at least one mechanism; got an empty list.")
        for name in self.mechanisms:
            if name not in MECHANISMS:
                raise ValueError(f"unknown mechanism {name!r}; valid names: {', '.join(MECHANISMS)}.")
            missing = missing_extra(MECHANISMS[name])
            if missing is not None:
                raise ValueError(f"mechanisms: {missing}.")
        if len(set(self.mechanisms)) != len(self.mechanisms):
            raise ValueError(f"mechanisms must not repeat a name; got {list(self.mechanisms)}.")
        if not 100 <= self.runs <= 10**8:
            raise ValueError(f"runs must be an integer in [100, 10**8]; got runs={self.runs!r}.")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be in (0, 1); got confidence={self.confidence!r}.")


_COLUMNS = ("mechanism", "epsilon", "delta", "guarantee", "audited_lower_bound", "confidence", "runs", "ratio",
            "method", "tight", "violation", "surrogate_gap")


class AuditExperiment(Experiment[AuditConfig]):
    """The audit as an experiment: units are mechanisms, the table and one invariant per checked row."""

    name: ClassVar[str] = "audit"
    paper_key: ClassVar[str] = "audit"
    title: ClassVar[str] = "Empirical privacy audit of every mechanism privdyn simulates"
    paper: ClassVar[str] = "Jagielski, Ullman, Oprea 2020 (arXiv 2006.07709); Nasr et al. 2021 (arXiv 2101.04535)"
    description: ClassVar[str] = "audited lower bounds on epsilon against the reported epsilon"
    config_class = AuditConfig

    def units(self, config: ExperimentConfig) -> list[Unit]:
        assert isinstance(config, AuditConfig)
        return [Unit(key=name, params={"mechanism": name}) for name in config.mechanisms]

    def unit_config(self, config: ExperimentConfig, unit: Unit) -> Mapping[str, Any]:
        assert isinstance(config, AuditConfig)
        return {"mechanism": unit.key, "runs": config.runs, "confidence": config.confidence}

    def compute_unit(self, config: ExperimentConfig, unit: Unit, seed: int) -> dict[str, Any]:
        assert isinstance(config, AuditConfig)
        row = audit_mechanism(mechanism(unit.key), runs=config.runs, confidence=config.confidence, seed=seed)
        return row.to_json()

    def assemble(self, config: ExperimentConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        rows = [AuditRow(**outputs[name]) for name in outputs]
        table = Table(name="audit", columns=list(_COLUMNS),
                      rows=[[getattr(row, column) for column in _COLUMNS] for row in rows])
        checks = [Check(name=f"no violation: {row.mechanism}", kind=CheckKind.INVARIANT,
                        claim=f"the audited lower bound is at most the reported epsilon ({row.guarantee})",
                        expected=row.epsilon, measured=row.audited_lower_bound, tolerance=0.0,
                        passed=not row.violation, note=row.method)
                  for row in rows if row.guarantee in ("exact", "bound")]
        return Findings(tables=[table], checks=checks)

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        return []


def audit(names: Sequence[str] | None = None, *, runs: int = DEFAULT_RUNS, confidence: float = DEFAULT_CONFIDENCE,
          seed: int = 0, executor: concurrent.futures.Executor | None = None,
          cache_dir: Path | None = None, progress: Callable[[int, int], None] | None = None) -> list[AuditRow]:
    """Audit the named mechanisms (by default all that can run here); one :class:`AuditRow` each, in the order asked.

    Args:
        names: keys of :data:`privdyn.audit.mechanisms.MECHANISMS`; None for the default rows
            (:func:`default_mechanisms`; :func:`unavailable_mechanisms` lists those whose extra is missing).
        runs: audit runs per dataset, in [100, 10**8].
        confidence: of the empirical lower bounds, in (0, 1).
        seed: the run seed (>= 0): the same seed gives the same table.
        executor: where units run (default: this process).
        cache_dir: if given, each mechanism's row is cached there (keyed like an experiment's units).
        progress: called with (rows done, rows in all) as rows finish (the CLI's progress display).

    Raises:
        ValueError: an unknown mechanism, one whose extra is not installed, or runs or confidence out of range
            (``ConfigError``).
    """
    from privdyn.runs.cache import UnitCache
    from privdyn.runs.runner import compute_units

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0; got seed={seed!r}.")
    config = AuditConfig(mechanisms=tuple(names) if names is not None else default_mechanisms(), runs=runs,
                         confidence=confidence)
    experiment = AuditExperiment()
    cache = UnitCache(cache_dir, experiment=experiment.name, seed=seed, quick=False) if cache_dir else None
    outputs = compute_units(experiment, config, seed=seed, executor=executor, cache=cache, progress=progress)
    return [AuditRow(**outputs[name]) for name in config.mechanisms]
