"""What every audited mechanism provides, and the helpers the canary reductions share.

A :class:`Mechanism` is a frozen dataclass whose fields are its settings. It knows the epsilon privdyn's accountant
reports for it (:meth:`Mechanism.reported`), how to run it on its canary pair and reduce each output to one score
(:meth:`Mechanism.scores`), and, where the score's law is Gaussian, that law (:meth:`Mechanism.gaussian_law`), computed
by propagating the algorithm's own update rather than from the accountant's formula.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar

import numpy as np

from privdyn.audit.law import Sample, WhitenedSample
from privdyn.privacy.labels import PrivacyLoss

__all__ = ["EstimatorRow", "GaussianLaw", "Mechanism", "Runs", "missing_extra"]


@dataclasses.dataclass(frozen=True)
class GaussianLaw:
    """Outputs N(mean, std**2) on D and N(neighbour_mean, std**2) on D' (one-dimensional)."""

    mean: float
    neighbour_mean: float
    std: float


@dataclasses.dataclass(frozen=True)
class Runs:
    """What the audit runs of a row give: one score per run on D and on D', and the row's released outputs as law
    samples (:mod:`privdyn.audit.law`; empty when the release has no stated law to check)."""

    scores: tuple[np.ndarray, np.ndarray]
    law: tuple[Sample, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Mechanism(abc.ABC):
    """A mechanism on its canary pair. Subclasses are frozen dataclasses; fields are the mechanism's settings."""

    name: ClassVar[str]
    description: ClassVar[str]
    entry_point: ClassVar[str]
    """The public function or method every run goes through, end to end (the tests count its calls)."""
    slow_accountant: ClassVar[bool] = False
    """Whether the accountant takes about a minute per call (the amplified bound): such rows run behind ``-m slow``."""
    requires: ClassVar[str | None] = None
    """The optional extra the mechanism runs in (``"torch"``), or None: without it the row is skipped by default and
    refused when named (:func:`missing_extra`)."""

    delta: float = 1e-5
    noise_factor: float = 1.0

    @abc.abstractmethod
    def reported(self) -> PrivacyLoss:
        """The epsilon privdyn's accountant reports at ``delta`` for the nominal noise (``quantity="epsilon"``)."""

    @abc.abstractmethod
    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        """``runs`` scores on D and on D', run with the actual noise.

        The runs on D draw from the streams ``(seed, unit_key + "/D")`` and those on D' from
        ``(seed, unit_key + "/D'")`` (:mod:`privdyn.rng`), so the two sides and two calls with different keys are
        independent.
        """

    def runs_for(self, runs: int) -> int:
        """How many runs per dataset this row makes when ``runs`` are asked: ``runs``, unless an end-to-end run costs
        milliseconds (an estimator's fit), where the row says how many it makes (and states the law check's power
        at that number)."""
        return runs

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        """The audit runs: :meth:`scores` and, where :meth:`gaussian_law` states the score's law, the scores
        whitened by it. Rows whose release has a richer stated law override this."""
        scores = self.scores(seed, unit_key, runs)
        law = self.gaussian_law()
        if law is None:
            return Runs(scores=scores)
        samples = tuple(WhitenedSample(f"score on {side}", (values - mean) / law.std)
                        for side, values, mean in zip(("D", "D'"), scores, (law.mean, law.neighbour_mean),
                                                      strict=True))
        return Runs(scores=scores, law=samples)

    def gaussian_law(self) -> GaussianLaw | None:
        """The exact output law of the score when it is Gaussian with one variance on D and D'; else None."""
        return None

    def surrogate_gap(self) -> float | None:
        """For an accountant labelled ``surrogate`` whose pair of laws has an exact counterpart: the relative gap
        (surrogate divergence / exact divergence - 1) on the audited pair (negative: the surrogate under-reports);
        None otherwise."""
        return None


@dataclasses.dataclass(frozen=True, kw_only=True)
class EstimatorRow(Mechanism):
    """A row whose every run is a scikit-learn estimator's own ``fit``: the estimator has no noise knob, so
    ``noise_factor`` must stay 1 (noise bugs are planted with :mod:`privdyn.audit.mutants`); ``fit_seed`` is the
    ``random_state`` of the reference fit the reported epsilon and the stated law are read from."""

    fit_seed: int = 0

    def __post_init__(self) -> None:
        if self.noise_factor != 1.0:
            raise ValueError(f"{self.name} runs the estimator itself, which has no noise knob: plant noise bugs with "
                             f"privdyn.audit.mutants; got noise_factor={self.noise_factor!r}.")


def _generators(seed: int, unit_key: str) -> tuple[np.random.Generator, np.random.Generator]:
    """The generators of the runs on D and on D' (independent streams of :mod:`privdyn.rng`)."""
    from privdyn.rng import generator

    return generator(seed, f"{unit_key}/D"), generator(seed, f"{unit_key}/D'")


def _epsilon_of_zcdp(loss: PrivacyLoss, delta: float) -> PrivacyLoss:
    from privdyn.privacy.conversions import zcdp_to_epsilon

    epsilon = float(zcdp_to_epsilon(float(loss.value), delta=delta))
    return dataclasses.replace(loss, value=epsilon, quantity="epsilon",
                               source=f"{loss.source}; converted to (epsilon, delta) by zcdp_to_epsilon")


def missing_extra(mechanism: type[Mechanism]) -> str | None:
    """None when ``mechanism`` can run here; else why not, naming the extra to install (its ``requires``)."""
    import importlib.util

    if mechanism.requires is None or importlib.util.find_spec(mechanism.requires) is not None:
        return None
    return (f"{mechanism.name} runs in {mechanism.requires}, which is not installed: "
            f"pip install \"privdyn[{mechanism.requires}]\"")
