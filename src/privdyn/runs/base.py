"""What an experiment is: a config, a list of independent units, and a pure assembly of their outputs.

An experiment regenerates one paper figure or table and checks the paper's claims. It is written as

1. a typed, frozen config (:class:`~privdyn.runs.config.ExperimentConfig`), the paper's setting by default;
2. :meth:`Experiment.units`: a list of independent :class:`Unit` s, each with a key unique in the experiment and the
   part of the config it depends on (a batch of simulator runs, a grid point, one curve);
3. :meth:`Experiment.compute_unit`: a pure function of (config, unit, seed) returning a JSON-compatible mapping; it
   may run in another process or on another machine, and derives its random streams from (seed, unit key);
4. :meth:`Experiment.assemble`: a pure function from the unit outputs to series, tables, metrics and checks;
5. :meth:`Experiment.plot`: draws figures from the assembled result dictionary only.

The runner (:mod:`privdyn.runs.runner`) wires these together and writes the outputs.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from privdyn.runs.config import ExperimentConfig
from privdyn.runs.results import Check, Metric, Series, Table

__all__ = ["Unit", "Findings", "Experiment"]

C = TypeVar("C", bound=ExperimentConfig)
"""The config type of an experiment (``Experiment[Fig1Config]``): its methods take that config."""


@dataclasses.dataclass(frozen=True)
class Unit:
    """An independent piece of work. ``params`` is the part of the config it depends on (JSON-compatible)."""

    key: str
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Findings:
    """Everything an experiment reports, before serialisation."""

    series: Sequence[Series] = ()
    tables: Sequence[Table] = ()
    metrics: Sequence[Metric] = ()
    checks: Sequence[Check] = ()


class Experiment(abc.ABC, Generic[C]):
    """One paper figure or table. Subclasses set the class attributes and implement the abstract methods.

    Generic in its config type ``C``: a subclass ``Fig1(Experiment[Fig1Config])`` sets ``config_class = Fig1Config``
    and its methods take a ``Fig1Config``.
    """

    name: ClassVar[str]
    """``<paper key>-<figure>``, e.g. ``langevin-fig1``."""
    paper_key: ClassVar[str]
    title: ClassVar[str]
    paper: ClassVar[str]
    """Citation of the figure reproduced, e.g. ``"Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), Figure 1"``."""
    description: ClassVar[str]
    config_class: type[C]

    def default_config(self) -> C:
        return self.config_class()

    def config(self, *, quick: bool = False) -> C:
        """The paper's config, or the ``--quick`` one."""
        base = self.default_config()
        return base.quick() if quick else base

    @abc.abstractmethod
    def units(self, config: C) -> list[Unit]:
        """The independent units of work for ``config`` (keys unique)."""

    def unit_config(self, config: C, unit: Unit) -> Mapping[str, Any]:
        """The part of the config a unit's output depends on (part of its cache key).

        The default is the whole config, so any change recomputes every unit; an experiment whose units depend on
        fewer keys may narrow it, letting a changed key reuse the units it does not affect.
        """
        return config.to_dict()

    @abc.abstractmethod
    def compute_unit(self, config: C, unit: Unit, seed: int) -> dict[str, Any]:
        """Compute one unit; a pure function returning JSON-compatible data."""

    @abc.abstractmethod
    def assemble(self, config: C, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        """Turn unit outputs (by unit key) into series, tables, metrics and checks."""

    @abc.abstractmethod
    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        """Draw the figure(s) from the result dictionary into ``out_dir``; return the file names written."""
