"""privdyn: predict, certify and optimize the privacy-utility trade-off of noisy gradient training.

Four research results are implemented exactly (see ``docs/``):

* ``langevin``: last-iterate Renyi-DP dynamics of noisy gradient descent (Chourasia, Ye, Shokri 2021);
* ``hsgd``: noisy SGD on least squares through homogenized SGD (Lin, Kolaczyk, Smith, Paquette 2025);
* ``dpgd``: one-pass clipped DP-GD for linear regression (Bombari, Luo, Seroussi, Mondelli 2025);
* ``kan``: Kolmogorov-Arnold networks trained by DP-SGD with correlated noise (Wang, Schuchardt, Kalinin, et al.).

The engines live in the subpackages :mod:`privdyn.privacy` (accountants), :mod:`privdyn.dynamics` (risk
predictions), :mod:`privdyn.algorithms` (simulators), :mod:`privdyn.bounds`, :mod:`privdyn.models` and
:mod:`privdyn.data`, each of which re-exports its public names flat (:mod:`privdyn.torch`, the optional PyTorch
extra, likewise, loaded on first access); :mod:`privdyn.plan` chooses hyper-parameters, :mod:`privdyn.report` renders
an output folder as HTML; the figure reproductions live in
:mod:`privdyn.experiments`, the harness that runs them in :mod:`privdyn.runs` and the ``privdyn`` command in
:mod:`privdyn.cli`. The core types are available here:
:class:`Guarantee`, :class:`NeighboringRelation`, :class:`PrivacyLoss`, :class:`Spectrum` and the learning-rate
schedules. Everything loads on first use, so ``import privdyn`` imports no numerical library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "privacy.labels": ("Guarantee", "NeighboringRelation", "PrivacyLoss"),
    "spectra": ("Spectrum",),
    "schedules": ("Constant", "Custom", "Harmonic", "LearningRate", "Polynomial"),
}
_SUBMODULES = ("algorithms", "audit", "bounds", "data", "dynamics", "experiments", "hsgd_problem", "models", "plan",
               "privacy", "reference", "report", "rng", "runs", "schedules", "spectra", "torch", "tuning")
"""Reachable as attributes and imported on first access; ``torch`` (the optional PyTorch extra) is one of them, so
``privdyn.torch`` works without an import of its own and ``import privdyn`` never imports PyTorch."""

_getattr, __dir__, _public = _lazy.attach(__name__, _EXPORTS, submodules=_SUBMODULES)
__all__ = ["__version__", *_public]


def __getattr__(name: str) -> object:
    if name == "__version__":  # importlib.metadata is itself slow to import: look the version up on first use
        from privdyn._version import version

        value = version()
        globals()["__version__"] = value
        return value
    return _getattr(name)


if TYPE_CHECKING:
    from privdyn import algorithms as algorithms
    from privdyn import audit as audit
    from privdyn import bounds as bounds
    from privdyn import data as data
    from privdyn import dynamics as dynamics
    from privdyn import experiments as experiments
    from privdyn import hsgd_problem as hsgd_problem
    from privdyn import models as models
    from privdyn import plan as plan
    from privdyn import privacy as privacy
    from privdyn import reference as reference
    from privdyn import report as report
    from privdyn import rng as rng
    from privdyn import runs as runs
    from privdyn import schedules as schedules
    from privdyn import spectra as spectra
    from privdyn import torch as torch
    from privdyn import tuning as tuning
    from privdyn.privacy.labels import Guarantee as Guarantee
    from privdyn.privacy.labels import NeighboringRelation as NeighboringRelation
    from privdyn.privacy.labels import PrivacyLoss as PrivacyLoss
    from privdyn.schedules import Constant as Constant
    from privdyn.schedules import Custom as Custom
    from privdyn.schedules import Harmonic as Harmonic
    from privdyn.schedules import LearningRate as LearningRate
    from privdyn.schedules import Polynomial as Polynomial
    from privdyn.spectra import Spectrum as Spectrum

    __version__: str
