"""Simulators of the private algorithms, vectorized over runs.

Every public name is importable from here; the modules stay importable as namespaces (``privdyn.algorithms.dpgd``,
``privdyn.algorithms.noisy_gd``, ...). A function that has its module's name is exported under a name that says
what it does: ``run_dpgd`` (``dpgd.dpgd``: Algorithm 1 of the dpgd paper on one dataset), ``run_noisy_sgd``
(``noisy_sgd.noisy_sgd``), ``run_dpsgd`` (``dpsgd.dpsgd``: DP-SGD training of the kan paper) and
``simulate_noisy_gd`` (``noisy_gd.noisy_gd``: the langevin paper's noisy GD, vectorized over runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpgd": ("DPGDHyperparameters", "DPGDSimulation", "simulate_dpgd"),
    "homogenized_sde": ("simulate_homogenized_sde",),
    "dpsgd": ("DPSGD", "DPSGDLog", "DPSGDResult", "PerExampleGradientModel", "SAMPLERS", "sample_batches"),
    "noisy_gd": (
        "Box", "L2Ball", "LeastSquaresLoss", "LogisticLoss", "Loss", "Projection", "QuadraticLoss", "Unconstrained",
    ),
    "noisy_sgd": ("CLIP_CONVENTIONS", "sgd_step_sizes", "simulate_noisy_sgd"),
    "homogenized_sgd": ("simulate_hsgd",),
    "sgd_simulation": ("NoisySGDSimulation",),
}
_ALIASES: dict[str, tuple[str, str]] = {
    "run_dpgd": ("dpgd", "dpgd"),
    "run_dpsgd": ("dpsgd", "dpsgd"),
    "run_noisy_sgd": ("noisy_sgd", "noisy_sgd"),
    "simulate_noisy_gd": ("noisy_gd", "noisy_gd"),
}
_SUBMODULES = ("dpgd", "dpsgd", "homogenized_sde", "homogenized_sgd", "noisy_gd", "noisy_sgd", "sgd_simulation")

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS, aliases=_ALIASES, submodules=_SUBMODULES)

if TYPE_CHECKING:
    from privdyn.algorithms import dpgd as dpgd
    from privdyn.algorithms import dpsgd as dpsgd
    from privdyn.algorithms import homogenized_sde as homogenized_sde
    from privdyn.algorithms import homogenized_sgd as homogenized_sgd
    from privdyn.algorithms import noisy_gd as noisy_gd
    from privdyn.algorithms import noisy_sgd as noisy_sgd
    from privdyn.algorithms import sgd_simulation as sgd_simulation
    from privdyn.algorithms.dpgd import DPGDHyperparameters as DPGDHyperparameters
    from privdyn.algorithms.dpgd import DPGDSimulation as DPGDSimulation
    from privdyn.algorithms.dpgd import dpgd as run_dpgd  # noqa: F401 - re-exported under this name
    from privdyn.algorithms.dpgd import simulate_dpgd as simulate_dpgd
    from privdyn.algorithms.dpsgd import DPSGD as DPSGD
    from privdyn.algorithms.dpsgd import SAMPLERS as SAMPLERS
    from privdyn.algorithms.dpsgd import DPSGDLog as DPSGDLog
    from privdyn.algorithms.dpsgd import DPSGDResult as DPSGDResult
    from privdyn.algorithms.dpsgd import PerExampleGradientModel as PerExampleGradientModel
    from privdyn.algorithms.dpsgd import dpsgd as run_dpsgd  # noqa: F401 - re-exported under this name
    from privdyn.algorithms.dpsgd import sample_batches as sample_batches
    from privdyn.algorithms.homogenized_sde import simulate_homogenized_sde as simulate_homogenized_sde
    from privdyn.algorithms.homogenized_sgd import simulate_hsgd as simulate_hsgd
    from privdyn.algorithms.noisy_gd import Box as Box
    from privdyn.algorithms.noisy_gd import L2Ball as L2Ball
    from privdyn.algorithms.noisy_gd import LeastSquaresLoss as LeastSquaresLoss
    from privdyn.algorithms.noisy_gd import LogisticLoss as LogisticLoss
    from privdyn.algorithms.noisy_gd import Loss as Loss
    from privdyn.algorithms.noisy_gd import Projection as Projection
    from privdyn.algorithms.noisy_gd import QuadraticLoss as QuadraticLoss
    from privdyn.algorithms.noisy_gd import Unconstrained as Unconstrained
    from privdyn.algorithms.noisy_gd import noisy_gd as simulate_noisy_gd  # noqa: F401 - re-exported under this name
    from privdyn.algorithms.noisy_sgd import CLIP_CONVENTIONS as CLIP_CONVENTIONS
    from privdyn.algorithms.noisy_sgd import noisy_sgd as run_noisy_sgd  # noqa: F401 - re-exported under this name
    from privdyn.algorithms.noisy_sgd import sgd_step_sizes as sgd_step_sizes
    from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd as simulate_noisy_sgd
    from privdyn.algorithms.sgd_simulation import NoisySGDSimulation as NoisySGDSimulation
