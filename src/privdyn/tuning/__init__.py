"""Hyper-parameter search on the theory engines: one search over the dpgd ODE, used by the planner and the figures.

The final private risk of one-pass DP-GD predicted by the ODE of Bombari, Luo, Seroussi, Mondelli (arXiv
2505.16329v2, Definition 4.2 and Proposition 4.4) is evaluated in one place, :class:`Objective`, for the schedule
families of :class:`Candidate` inside one search box (:data:`CLIP_BOUNDS`, η̃(0) ≤ 2/γ). Two strategies minimize it:

* :func:`search` (:mod:`privdyn.tuning.staged`): every family in few solves, along the landscape's shape, with
  :func:`line_search` as its one-dimensional step; the planner's (``privdyn plan dpgd``, ``DPLinearRegression``);
* :func:`tune_polynomial` and :func:`tune_harmonic` (:mod:`privdyn.tuning.dpgd`): one family exhaustively, by
  :func:`minimize_final_risk` (a log grid and multi-start bounded local refinement); the figures' (``dpgd-fig7``),
  with :func:`refine_log_minimum` for Figure 4's heatmaps and :func:`optimize_initial_learning_rate` (η̃(0) alone)
  for Figures 2 and 3.

The minimizers (:mod:`privdyn.tuning.minimize`) take any objective over positive parameters. Every public name is
importable from here; the modules stay importable as namespaces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "minimize": (
        "DEFAULT_GRID_POINTS", "DEFAULT_MAX_LOCAL_EVALUATIONS", "DEFAULT_STARTS", "DEFAULT_TOLERANCE",
        "FLAT_TOLERANCE", "LOCAL_METHODS", "LOG_TOLERANCE", "OptimumAtBoundWarning", "TuningResult", "line_search",
        "minimize_final_risk", "optimize_initial_learning_rate", "refine_log_minimum",
    ),
    "dpgd": (
        "CLIP_BOUNDS", "Candidate", "HARMONIC_OFFSET_BOUNDS", "LEARNING_RATE_MIN", "Objective", "POLYNOMIAL_EXPONENTS",
        "candidates", "tune_harmonic", "tune_polynomial",
    ),
    "staged": ("Found", "RECHECK_TOLERANCE", "START_CLIP_PER_LABEL_NOISE", "linearized_optimum", "linearized_risk",
               "search"),
}
_SUBMODULES = ("dpgd", "minimize", "staged")

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS, submodules=_SUBMODULES)

if TYPE_CHECKING:
    from privdyn.tuning import dpgd as dpgd
    from privdyn.tuning import minimize as minimize
    from privdyn.tuning import staged as staged
    from privdyn.tuning.dpgd import CLIP_BOUNDS as CLIP_BOUNDS
    from privdyn.tuning.dpgd import HARMONIC_OFFSET_BOUNDS as HARMONIC_OFFSET_BOUNDS
    from privdyn.tuning.dpgd import LEARNING_RATE_MIN as LEARNING_RATE_MIN
    from privdyn.tuning.dpgd import POLYNOMIAL_EXPONENTS as POLYNOMIAL_EXPONENTS
    from privdyn.tuning.dpgd import Candidate as Candidate
    from privdyn.tuning.dpgd import Objective as Objective
    from privdyn.tuning.dpgd import candidates as candidates
    from privdyn.tuning.dpgd import tune_harmonic as tune_harmonic
    from privdyn.tuning.dpgd import tune_polynomial as tune_polynomial
    from privdyn.tuning.minimize import DEFAULT_GRID_POINTS as DEFAULT_GRID_POINTS
    from privdyn.tuning.minimize import DEFAULT_MAX_LOCAL_EVALUATIONS as DEFAULT_MAX_LOCAL_EVALUATIONS
    from privdyn.tuning.minimize import DEFAULT_STARTS as DEFAULT_STARTS
    from privdyn.tuning.minimize import DEFAULT_TOLERANCE as DEFAULT_TOLERANCE
    from privdyn.tuning.minimize import FLAT_TOLERANCE as FLAT_TOLERANCE
    from privdyn.tuning.minimize import LOCAL_METHODS as LOCAL_METHODS
    from privdyn.tuning.minimize import LOG_TOLERANCE as LOG_TOLERANCE
    from privdyn.tuning.minimize import OptimumAtBoundWarning as OptimumAtBoundWarning
    from privdyn.tuning.minimize import TuningResult as TuningResult
    from privdyn.tuning.minimize import line_search as line_search
    from privdyn.tuning.minimize import minimize_final_risk as minimize_final_risk
    from privdyn.tuning.minimize import optimize_initial_learning_rate as optimize_initial_learning_rate
    from privdyn.tuning.minimize import refine_log_minimum as refine_log_minimum
    from privdyn.tuning.staged import RECHECK_TOLERANCE as RECHECK_TOLERANCE
    from privdyn.tuning.staged import START_CLIP_PER_LABEL_NOISE as START_CLIP_PER_LABEL_NOISE
    from privdyn.tuning.staged import Found as Found
    from privdyn.tuning.staged import linearized_optimum as linearized_optimum
    from privdyn.tuning.staged import linearized_risk as linearized_risk
    from privdyn.tuning.staged import search as search
