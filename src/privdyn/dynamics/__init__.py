"""Deterministic equivalents of noisy training dynamics: risk ODEs, Volterra equations, scaling laws.

No simulation and no I/O here. Every public name is importable from here (``from privdyn.dynamics import
solve_risk_ode, volterra_risk``); the modules stay importable as namespaces (``privdyn.dynamics.dpgd``,
``privdyn.dynamics.hsgd``, ``privdyn.dynamics.scaling``, ``privdyn.dynamics.closed_forms``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpgd": (
        "ODESolverError", "RiskTrajectory", "clipping_factors", "final_jump", "final_private_risk",
        "isotropic_risk_ode", "sandwich_bounds", "solve_risk_ode",
    ),
    "hsgd": (
        "HSGDLaw", "HSGDProblem", "RiskCurve", "RiskLimit", "X0Policy", "isotropic_risk", "kernel_mass",
        "linearized_law", "max_stable_learning_rate", "moment_ode_risk", "quadratic_statistic", "risk_limit",
        "volterra_dense_reference", "volterra_risk",
    ),
    "scaling": (
        "Theorem4Case", "critical_privacy_exponent", "exponent_terms", "harmonic_rate", "large_clip_rate",
        "limiting_scaling_exponent", "log_correction", "loglog_rate", "minimax_lower_bound", "polynomial_rate",
        "privacy_threshold_exponent", "scaling_exponent", "theorem2_parameters", "theorem4_case",
    ),
    "ssp": ("RESOLVED_RATIO", "SSPPrediction", "SSPRisk", "ssp_excess_risk", "ssp_prediction"),
    "closed_forms": (
        "constant_noise_surrogate_risk", "generalized_exponential_integral", "harmonic_surrogate_risk",
        "output_perturbation_surrogate_risk", "polynomial_surrogate_risk",
    ),
}
_ALIASES: dict[str, tuple[str, str]] = {
    "DPGD_ODE_METHODS": ("dpgd", "METHODS"),
}
_SUBMODULES = ("closed_forms", "dpgd", "hsgd", "scaling", "ssp")

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS, aliases=_ALIASES, submodules=_SUBMODULES)

if TYPE_CHECKING:
    from privdyn.dynamics import closed_forms as closed_forms
    from privdyn.dynamics import dpgd as dpgd
    from privdyn.dynamics import hsgd as hsgd
    from privdyn.dynamics import scaling as scaling
    from privdyn.dynamics import ssp as ssp
    from privdyn.dynamics.closed_forms import constant_noise_surrogate_risk as constant_noise_surrogate_risk
    from privdyn.dynamics.closed_forms import generalized_exponential_integral as generalized_exponential_integral
    from privdyn.dynamics.closed_forms import harmonic_surrogate_risk as harmonic_surrogate_risk
    from privdyn.dynamics.closed_forms import output_perturbation_surrogate_risk as output_perturbation_surrogate_risk
    from privdyn.dynamics.closed_forms import polynomial_surrogate_risk as polynomial_surrogate_risk
    from privdyn.dynamics.dpgd import METHODS as DPGD_ODE_METHODS  # noqa: F401 - re-exported under this name
    from privdyn.dynamics.dpgd import ODESolverError as ODESolverError
    from privdyn.dynamics.dpgd import RiskTrajectory as RiskTrajectory
    from privdyn.dynamics.dpgd import clipping_factors as clipping_factors
    from privdyn.dynamics.dpgd import final_jump as final_jump
    from privdyn.dynamics.dpgd import final_private_risk as final_private_risk
    from privdyn.dynamics.dpgd import isotropic_risk_ode as isotropic_risk_ode
    from privdyn.dynamics.dpgd import sandwich_bounds as sandwich_bounds
    from privdyn.dynamics.dpgd import solve_risk_ode as solve_risk_ode
    from privdyn.dynamics.hsgd import HSGDLaw as HSGDLaw
    from privdyn.dynamics.hsgd import HSGDProblem as HSGDProblem
    from privdyn.dynamics.hsgd import RiskCurve as RiskCurve
    from privdyn.dynamics.hsgd import RiskLimit as RiskLimit
    from privdyn.dynamics.hsgd import X0Policy as X0Policy
    from privdyn.dynamics.hsgd import isotropic_risk as isotropic_risk
    from privdyn.dynamics.hsgd import kernel_mass as kernel_mass
    from privdyn.dynamics.hsgd import linearized_law as linearized_law
    from privdyn.dynamics.hsgd import max_stable_learning_rate as max_stable_learning_rate
    from privdyn.dynamics.hsgd import moment_ode_risk as moment_ode_risk
    from privdyn.dynamics.hsgd import quadratic_statistic as quadratic_statistic
    from privdyn.dynamics.hsgd import risk_limit as risk_limit
    from privdyn.dynamics.hsgd import volterra_dense_reference as volterra_dense_reference
    from privdyn.dynamics.hsgd import volterra_risk as volterra_risk
    from privdyn.dynamics.scaling import Theorem4Case as Theorem4Case
    from privdyn.dynamics.scaling import critical_privacy_exponent as critical_privacy_exponent
    from privdyn.dynamics.scaling import exponent_terms as exponent_terms
    from privdyn.dynamics.scaling import harmonic_rate as harmonic_rate
    from privdyn.dynamics.scaling import large_clip_rate as large_clip_rate
    from privdyn.dynamics.scaling import limiting_scaling_exponent as limiting_scaling_exponent
    from privdyn.dynamics.scaling import log_correction as log_correction
    from privdyn.dynamics.scaling import loglog_rate as loglog_rate
    from privdyn.dynamics.scaling import minimax_lower_bound as minimax_lower_bound
    from privdyn.dynamics.scaling import polynomial_rate as polynomial_rate
    from privdyn.dynamics.scaling import privacy_threshold_exponent as privacy_threshold_exponent
    from privdyn.dynamics.scaling import scaling_exponent as scaling_exponent
    from privdyn.dynamics.scaling import theorem2_parameters as theorem2_parameters
    from privdyn.dynamics.scaling import theorem4_case as theorem4_case
    from privdyn.dynamics.ssp import RESOLVED_RATIO as RESOLVED_RATIO
    from privdyn.dynamics.ssp import SSPPrediction as SSPPrediction
    from privdyn.dynamics.ssp import SSPRisk as SSPRisk
    from privdyn.dynamics.ssp import ssp_excess_risk as ssp_excess_risk
    from privdyn.dynamics.ssp import ssp_prediction as ssp_prediction
