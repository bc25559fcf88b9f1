"""Closed-form risk bounds of the kan paper and the NTK margin at initialization; no simulation, no I/O.

Every public name is importable from here; ``privdyn.bounds.kan`` and ``privdyn.bounds.ntk_margin`` stay importable
as namespaces. The margin itself is ``compute_ntk_margin`` (``ntk_margin.ntk_margin``, which shares its module's
name).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "kan": (
        "ACTIVATIONS", "Condition", "HiddenConstants", "KanConstants", "RiskBound", "Schedule", "a_corr", "a_non",
        "a_van", "activation_bounds", "batch_fluctuation_bound", "coefficient_norm_thresholds",
        "comparator_loss_bound", "explicit_constant_conditions", "gradient_bound", "hessian_bound",
        "initial_output_bound", "initialization_event", "kan_constants", "lemma_c11_bound", "loss_range_bounds",
        "noise_norm_bounds", "optimization_bound_correlated", "optimization_bound_independent",
        "optimization_bound_nonprivate", "population_bound_correlated", "population_bound_independent",
        "population_bound_nonprivate", "potential_fluctuation_bound", "projection_radius_choice",
        "schedule_corollary_5_3", "schedule_corollary_5_5", "schedule_corollary_5_6", "stability_constants",
        "weak_convexity_constant",
    ),
    "ntk_margin": ("NtkMargin", "gram_from_features", "gram_from_rank_one_factors"),
}
_ALIASES: dict[str, tuple[str, str]] = {
    "compute_ntk_margin": ("ntk_margin", "ntk_margin"),
}
_SUBMODULES = ("kan", "ntk_margin")

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS, aliases=_ALIASES, submodules=_SUBMODULES)

if TYPE_CHECKING:
    from privdyn.bounds import kan as kan
    from privdyn.bounds import ntk_margin as ntk_margin
    from privdyn.bounds.kan import ACTIVATIONS as ACTIVATIONS
    from privdyn.bounds.kan import Condition as Condition
    from privdyn.bounds.kan import HiddenConstants as HiddenConstants
    from privdyn.bounds.kan import KanConstants as KanConstants
    from privdyn.bounds.kan import RiskBound as RiskBound
    from privdyn.bounds.kan import Schedule as Schedule
    from privdyn.bounds.kan import a_corr as a_corr
    from privdyn.bounds.kan import a_non as a_non
    from privdyn.bounds.kan import a_van as a_van
    from privdyn.bounds.kan import activation_bounds as activation_bounds
    from privdyn.bounds.kan import batch_fluctuation_bound as batch_fluctuation_bound
    from privdyn.bounds.kan import coefficient_norm_thresholds as coefficient_norm_thresholds
    from privdyn.bounds.kan import comparator_loss_bound as comparator_loss_bound
    from privdyn.bounds.kan import explicit_constant_conditions as explicit_constant_conditions
    from privdyn.bounds.kan import gradient_bound as gradient_bound
    from privdyn.bounds.kan import hessian_bound as hessian_bound
    from privdyn.bounds.kan import initial_output_bound as initial_output_bound
    from privdyn.bounds.kan import initialization_event as initialization_event
    from privdyn.bounds.kan import kan_constants as kan_constants
    from privdyn.bounds.kan import lemma_c11_bound as lemma_c11_bound
    from privdyn.bounds.kan import loss_range_bounds as loss_range_bounds
    from privdyn.bounds.kan import noise_norm_bounds as noise_norm_bounds
    from privdyn.bounds.kan import optimization_bound_correlated as optimization_bound_correlated
    from privdyn.bounds.kan import optimization_bound_independent as optimization_bound_independent
    from privdyn.bounds.kan import optimization_bound_nonprivate as optimization_bound_nonprivate
    from privdyn.bounds.kan import population_bound_correlated as population_bound_correlated
    from privdyn.bounds.kan import population_bound_independent as population_bound_independent
    from privdyn.bounds.kan import population_bound_nonprivate as population_bound_nonprivate
    from privdyn.bounds.kan import potential_fluctuation_bound as potential_fluctuation_bound
    from privdyn.bounds.kan import projection_radius_choice as projection_radius_choice
    from privdyn.bounds.kan import schedule_corollary_5_3 as schedule_corollary_5_3
    from privdyn.bounds.kan import schedule_corollary_5_5 as schedule_corollary_5_5
    from privdyn.bounds.kan import schedule_corollary_5_6 as schedule_corollary_5_6
    from privdyn.bounds.kan import stability_constants as stability_constants
    from privdyn.bounds.kan import weak_convexity_constant as weak_convexity_constant
    from privdyn.bounds.ntk_margin import NtkMargin as NtkMargin
    from privdyn.bounds.ntk_margin import gram_from_features as gram_from_features
    from privdyn.bounds.ntk_margin import gram_from_rank_one_factors as gram_from_rank_one_factors
    from privdyn.bounds.ntk_margin import ntk_margin as compute_ntk_margin  # noqa: F401 - re-exported under this name
