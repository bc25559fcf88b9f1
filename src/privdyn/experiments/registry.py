"""The registry of experiments: every experiment's name and module, loaded on first use, and their configs.

The names are listed here, in paper order, by the module that defines them; a module is imported only when one of
its experiments is asked for, so ``privdyn run langevin-fig1`` (and each worker process) imports one experiment
module, and ``privdyn --help`` none. ``EXPERIMENTS`` (every experiment, an immutable mapping) imports them all.
``tests/experiments/test_registry.py`` checks that each module defines exactly the experiments listed for it.
:func:`prepare` looks an experiment up and builds its validated config, the first step of a run by
:mod:`privdyn.runs.runner`.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from privdyn.runs.config import ConfigError, ExperimentConfig, apply_overrides, has_key

if TYPE_CHECKING:
    from privdyn.runs.base import Experiment

__all__ = ["EXPERIMENTS", "MODULES", "NAMES", "OPT_IN", "get", "prepare", "prepare_selection", "select"]

MODULES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "langevin": ("langevin-fig1", "langevin-tightness", "langevin-table1"),
    "hsgd_risk": ("hsgd-fig1a", "hsgd-fig2a", "hsgd-validation"),
    "hsgd_privacy_figures": ("hsgd-fig1b", "hsgd-fig2b", "hsgd-fig3a", "hsgd-fig3b"),
    "dpgd_trajectory": ("dpgd-fig1",),
    "dpgd_scaling": ("dpgd-fig2", "dpgd-fig3"),
    "dpgd_heatmaps": ("dpgd-fig4", "dpgd-fig5", "dpgd-fig6"),
    "dpgd_schedules": ("dpgd-fig7", "dpgd-fig8"),
    "dpgd_closed_forms": ("dpgd-fig9", "dpgd-fig10", "dpgd-fig11", "dpgd-fig12", "dpgd-fig13"),
    "kan_privacy": ("kan-fig1-right", "kan-calibration"),
    "kan_training": ("kan-fig1-left", "kan-bounds"),
    "kan_identities": ("kan-identities", "kan-stability"),
    "sklearn_regression": ("sklearn-regression",),
    "sklearn_classification": ("sklearn-classification",),
})
"""Each experiment module of :mod:`privdyn.experiments` and the names of the experiments it defines."""

NAMES: tuple[str, ...] = (
    "langevin-fig1", "langevin-tightness", "langevin-table1",
    "hsgd-fig1a", "hsgd-fig1b", "hsgd-fig2a", "hsgd-fig2b", "hsgd-fig3a", "hsgd-fig3b", "hsgd-validation",
    "dpgd-fig1", "dpgd-fig2", "dpgd-fig3", "dpgd-fig4", "dpgd-fig5", "dpgd-fig6", "dpgd-fig7", "dpgd-fig8",
    "dpgd-fig9", "dpgd-fig10", "dpgd-fig11", "dpgd-fig12", "dpgd-fig13",
    "kan-fig1-right", "kan-fig1-left", "kan-calibration", "kan-bounds", "kan-identities", "kan-stability",
)
"""Every experiment name, in paper order (a paper's figures in figure order, then what goes beyond the paper)."""

OPT_IN: tuple[str, ...] = ("sklearn-regression", "sklearn-classification")
"""Experiments run only when named (``privdyn run NAME``, ``--only NAME``): comparisons that need an optional extra
or take long. ``privdyn reproduce`` without ``--only``, globs and ``EXPERIMENTS`` leave them out."""

_MODULE_OF = MappingProxyType({name: module for module, names in MODULES.items() for name in names})


def get(name: str) -> Experiment:
    """The experiment called ``name`` (importing its module only); ``ValueError`` listing the valid names otherwise."""
    try:
        module = _MODULE_OF[name]
    except KeyError:
        raise ValueError(f"unknown experiment {name!r}; valid names: {', '.join(NAMES + OPT_IN)}.") from None
    experiments = importlib.import_module(f"privdyn.experiments.{module}").EXPERIMENTS
    return next(e for e in experiments if e.name == name)


def select(patterns: Iterable[str] | None) -> list[Experiment]:
    """Experiments whose names match any of the exact names or shell-style globs (all when ``patterns`` is empty).

    A pattern that matches nothing is an error. Only the modules of the selected experiments are imported.
    """
    patterns = list(patterns or [])
    if not patterns:
        return [get(name) for name in NAMES]
    chosen: list[str] = []
    for pattern in patterns:
        if pattern in OPT_IN:
            chosen.append(pattern)
            continue
        matched = [name for name in NAMES if fnmatch.fnmatchcase(name, pattern)]
        if not matched:
            raise ValueError(f"--only {pattern!r} matches no experiment; valid names: {', '.join(NAMES)}.")
        chosen.extend(m for m in matched if m not in chosen)
    return [get(name) for name in NAMES + OPT_IN if name in chosen]


def prepare(name: str, *, quick: bool = False, overrides: Mapping[str, Any] | None = None,
            ) -> tuple[Experiment, ExperimentConfig]:
    """Look up an experiment and build its validated config (``--quick`` first, then overrides)."""
    try:
        experiment = get(name)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    config = experiment.config(quick=quick)
    if overrides:
        config = apply_overrides(config, overrides)
    return experiment, config


def prepare_selection(names: Sequence[str], *, quick: bool = False, overrides: Mapping[str, Any] | None = None,
                      ) -> list[tuple[Experiment, ExperimentConfig]]:
    """:func:`prepare` for several experiments, each with the overrides whose keys its config has.

    An override key that no selected experiment has is a :class:`ConfigError`, as is any override value that an
    experiment with the key rejects; everything is validated before anything runs.
    """
    overrides = dict(overrides or {})
    prepared = []
    used: set[str] = set()
    for name in names:
        experiment, config = prepare(name, quick=quick)
        own = {key: value for key, value in overrides.items() if has_key(config, key)}
        used.update(own)
        if own:
            try:
                config = apply_overrides(config, own)
            except ConfigError as exc:
                raise ConfigError(f"{name}: {exc}") from None
        prepared.append((experiment, config))
    unknown = [key for key in overrides if key not in used]
    if unknown:
        raise ConfigError(f"--set key {unknown[0]!r} is a config key of none of the selected experiments "
                          f"({', '.join(names)}); `privdyn show NAME` lists an experiment's keys.")
    return prepared


def __getattr__(name: str) -> Mapping[str, Experiment]:
    if name == "EXPERIMENTS":  # every experiment, by name, in paper order (imports every experiment module)
        experiments = MappingProxyType({n: get(n) for n in NAMES})
        globals()["EXPERIMENTS"] = experiments
        return experiments
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    EXPERIMENTS: Mapping[str, Experiment]
