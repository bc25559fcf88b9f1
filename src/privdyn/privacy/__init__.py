"""Privacy accountants, divergences and conversions; no simulation, no I/O.

Every public name is importable from here, e.g. ``from privdyn.privacy import noise_multiplier_theorem_f12,
LambdaCGD, renyi_gaussian``; names load on first use, so importing this package is cheap. The modules stay importable
as namespaces (``privdyn.privacy.langevin``, ``privdyn.privacy.hsgd``, ...). Where a module's name is generic
(the hsgd accountant's ``rdp_epsilon``), the flat name carries the paper key (``hsgd_rdp_epsilon``), and the
dpgd paper's amplification-by-iteration calibration is ``dpgd_noise_calibration`` / ``dpgd_privacy_level``.
A DP-SGD run is described once by its :class:`DPSGDMechanism` record, whose ``privacy_loss`` and ``calibration`` are
where privdyn accounts and calibrates it: only what is on the allow-list (:data:`ALLOW_LIST`), everything else refused
(:func:`dpsgd_epsilon` and :func:`dpsgd_noise_multiplier` are conveniences that build the record). Mechanism records
(:class:`DPSGDMechanism`, :class:`GaussianRelease`, :mod:`privdyn.privacy.mechanism`; homogenized SGD's
:class:`HSGDMechanism`, a ``surrogate``) describe a mechanism once:
its ``privacy_loss``, ``calibrate``, ``statement`` (a :class:`PrivacyStatement`, with the best membership test's
true-positive rate) and ``dp_event`` for composing it in dp-accounting. The step normals that drive the
correlated-noise streams are random streams: :class:`privdyn.rng.StepNormals` and :func:`privdyn.rng.step_normals`
(still importable from ``privdyn.privacy.correlated``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "labels": (
        "AMPLIFIED_SAMPLERS", "DPSGD_SAMPLERS", "DP_ACCOUNTING_SAMPLERS", "SAMPLERS", "STATEMENT_SAMPLERS", "Guarantee",
        "NeighboringRelation", "PrivacyLoss", "Sampler",
    ),
    "accounting": (
        "ALLOW_LIST", "NOISE_KINDS", "AllowListRow", "NotAccountableError", "accountant_for", "dpsgd_epsilon",
        "dpsgd_noise_multiplier", "noise_kind",
    ),
    "conversions": (
        "RDP_CONVERSION_METHODS", "ZCDP_CONVERSION_METHODS", "epsilon_to_zcdp", "gaussian_zcdp",
        "optimal_renyi_order", "rdp_to_delta", "rdp_to_epsilon", "zcdp_for_epsilon", "zcdp_to_epsilon",
        "zcdp_to_epsilon_dp_accounting", "zcdp_to_rdp",
    ),
    "divergences": (
        "DiagonalPlusLowRank", "kl_gaussian", "kl_gaussian_lowrank", "renyi_gaussian", "renyi_gaussian_lowrank",
        "renyi_gaussian_symmetric_sup",
    ),
    "langevin": (
        "CROSSOVER_X", "LangevinSetting", "Theorem4Parameters", "best_gamma_rdp", "composition_noise_scale_for_rdp",
        "composition_rdp",
        "crossover_num_steps", "dynamics_rdp", "dynamics_rdp_asymptote", "dynamics_rdp_increment", "dynamics_zcdp",
        "lemma6_excess_risk_bound", "lsi_constant_tracker", "lsi_rdp", "noise_scale_for_dp", "noise_scale_for_rdp",
        "quadratic_corollary2_rdp", "quadratic_exact_rdp", "quadratic_lower_bound_rdp", "steps_to_fraction",
        "theorem4_parameters", "tracked_lsi_rdp",
    ),
    "hidden_state": ("ye_shokri_rdp", "ye_shokri_step_rdp"),
    "hsgd": (
        "ExactSGDLaw", "HSGDMechanism", "NeighboringLaws", "NeighboringPairs", "exact_sgd_law", "exact_sgd_renyi",
        "sgd_grid_law",
    ),
    "iteration": ("epsilon_to_rho", "rho_to_epsilon", "rho_to_zcdp"),
    "correlated": (
        "BandedInverse", "BufferedToeplitz", "Independent", "LambdaCGD", "NoiseStream", "SquareRoot", "Strategy",
        "Toeplitz", "prefix_sum_max_error", "prefix_sum_rmse",
    ),
    "amplification": ("amplified_epsilon", "amplified_noise_multiplier"),
    "mechanism": (
        "DPSGDMechanism", "GaussianRelease", "GaussianReleases", "NoisyGDMechanism", "NotExpressibleError",
        "OnePassDPGDMechanism",
    ),
    "membership": ("MEMBERSHIP_FPRS", "gaussian_tpr", "pld_tpr", "profile_tpr", "zcdp_membership", "zcdp_tpr"),
    "statement": ("PlanningShare", "PrivacyStatement"),
    "correlated_calibration": (
        "F12_CONSTANTS", "epsilon_dp_accounting", "noise_multiplier_dp_accounting", "noise_multiplier_theorem_d9",
        "noise_multiplier_theorem_f12", "rdp_dp_accounting",
    ),
}
_ALIASES: dict[str, tuple[str, str]] = {
    "hsgd_average_divergences": ("hsgd", "average_divergences"),
    "hsgd_neighboring_laws": ("hsgd", "neighboring_laws"),
    "hsgd_rdp_epsilon": ("hsgd", "rdp_epsilon"),
    "hsgd_rdp_epsilon_average": ("hsgd", "rdp_epsilon_average"),
    "hsgd_rdp_epsilon_releases": ("hsgd", "rdp_epsilon_releases"),
    "hsgd_release_divergences": ("hsgd", "release_divergences"),
    "hsgd_renyi_divergence": ("hsgd", "renyi_divergence"),
    "hsgd_renyi_divergences": ("hsgd", "renyi_divergences"),
    "hsgd_select_pairs": ("hsgd", "select_pairs"),
    "HSGD_RELEASE_MODES": ("hsgd", "RELEASE_MODES"),
    "HSGD_DIRECTIONS": ("hsgd", "DIRECTIONS"),
    "dpgd_noise_calibration": ("iteration", "noise_calibration"),
    "dpgd_privacy_level": ("iteration", "privacy_level"),
    "correlated_sensitivity": ("correlated", "sensitivity"),
}
_SUBMODULES = (
    "accounting", "amplification", "conversions", "correlated", "correlated_calibration", "cyclic_poisson",
    "divergences",
    "hidden_state", "hsgd",
    "iteration", "labels", "langevin", "mechanism", "membership", "random_allocation", "shuffling", "statement",
)

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS, aliases=_ALIASES, submodules=_SUBMODULES)

if TYPE_CHECKING:
    from privdyn.privacy import accounting as accounting
    from privdyn.privacy import amplification as amplification
    from privdyn.privacy import conversions as conversions
    from privdyn.privacy import correlated as correlated
    from privdyn.privacy import correlated_calibration as correlated_calibration
    from privdyn.privacy import cyclic_poisson as cyclic_poisson
    from privdyn.privacy import divergences as divergences
    from privdyn.privacy import hidden_state as hidden_state
    from privdyn.privacy import hsgd as hsgd
    from privdyn.privacy import iteration as iteration
    from privdyn.privacy import labels as labels
    from privdyn.privacy import langevin as langevin
    from privdyn.privacy import mechanism as mechanism
    from privdyn.privacy import membership as membership
    from privdyn.privacy import random_allocation as random_allocation
    from privdyn.privacy import shuffling as shuffling
    from privdyn.privacy import statement as statement
    from privdyn.privacy.accounting import ALLOW_LIST as ALLOW_LIST
    from privdyn.privacy.accounting import NOISE_KINDS as NOISE_KINDS
    from privdyn.privacy.accounting import AllowListRow as AllowListRow
    from privdyn.privacy.accounting import NotAccountableError as NotAccountableError
    from privdyn.privacy.accounting import accountant_for as accountant_for
    from privdyn.privacy.accounting import dpsgd_epsilon as dpsgd_epsilon
    from privdyn.privacy.accounting import dpsgd_noise_multiplier as dpsgd_noise_multiplier
    from privdyn.privacy.accounting import noise_kind as noise_kind
    from privdyn.privacy.amplification import amplified_epsilon as amplified_epsilon
    from privdyn.privacy.amplification import amplified_noise_multiplier as amplified_noise_multiplier
    from privdyn.privacy.conversions import RDP_CONVERSION_METHODS as RDP_CONVERSION_METHODS
    from privdyn.privacy.conversions import ZCDP_CONVERSION_METHODS as ZCDP_CONVERSION_METHODS
    from privdyn.privacy.conversions import epsilon_to_zcdp as epsilon_to_zcdp
    from privdyn.privacy.conversions import gaussian_zcdp as gaussian_zcdp
    from privdyn.privacy.conversions import optimal_renyi_order as optimal_renyi_order
    from privdyn.privacy.conversions import rdp_to_delta as rdp_to_delta
    from privdyn.privacy.conversions import rdp_to_epsilon as rdp_to_epsilon
    from privdyn.privacy.conversions import zcdp_for_epsilon as zcdp_for_epsilon
    from privdyn.privacy.conversions import zcdp_to_epsilon as zcdp_to_epsilon
    from privdyn.privacy.conversions import zcdp_to_epsilon_dp_accounting as zcdp_to_epsilon_dp_accounting
    from privdyn.privacy.conversions import zcdp_to_rdp as zcdp_to_rdp
    from privdyn.privacy.correlated import BandedInverse as BandedInverse
    from privdyn.privacy.correlated import BufferedToeplitz as BufferedToeplitz
    from privdyn.privacy.correlated import Independent as Independent
    from privdyn.privacy.correlated import LambdaCGD as LambdaCGD
    from privdyn.privacy.correlated import NoiseStream as NoiseStream
    from privdyn.privacy.correlated import SquareRoot as SquareRoot
    from privdyn.privacy.correlated import Strategy as Strategy
    from privdyn.privacy.correlated import Toeplitz as Toeplitz
    from privdyn.privacy.correlated import prefix_sum_max_error as prefix_sum_max_error
    from privdyn.privacy.correlated import prefix_sum_rmse as prefix_sum_rmse
    from privdyn.privacy.correlated import sensitivity as correlated_sensitivity  # noqa: F401 - re-exported under this name
    from privdyn.privacy.correlated_calibration import F12_CONSTANTS as F12_CONSTANTS
    from privdyn.privacy.correlated_calibration import epsilon_dp_accounting as epsilon_dp_accounting
    from privdyn.privacy.correlated_calibration import noise_multiplier_dp_accounting as noise_multiplier_dp_accounting
    from privdyn.privacy.correlated_calibration import noise_multiplier_theorem_d9 as noise_multiplier_theorem_d9
    from privdyn.privacy.correlated_calibration import noise_multiplier_theorem_f12 as noise_multiplier_theorem_f12
    from privdyn.privacy.correlated_calibration import rdp_dp_accounting as rdp_dp_accounting
    from privdyn.privacy.divergences import DiagonalPlusLowRank as DiagonalPlusLowRank
    from privdyn.privacy.divergences import kl_gaussian as kl_gaussian
    from privdyn.privacy.divergences import kl_gaussian_lowrank as kl_gaussian_lowrank
    from privdyn.privacy.divergences import renyi_gaussian as renyi_gaussian
    from privdyn.privacy.divergences import renyi_gaussian_lowrank as renyi_gaussian_lowrank
    from privdyn.privacy.divergences import renyi_gaussian_symmetric_sup as renyi_gaussian_symmetric_sup
    from privdyn.privacy.hidden_state import ye_shokri_rdp as ye_shokri_rdp
    from privdyn.privacy.hidden_state import ye_shokri_step_rdp as ye_shokri_step_rdp
    from privdyn.privacy.hsgd import DIRECTIONS as HSGD_DIRECTIONS  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import RELEASE_MODES as HSGD_RELEASE_MODES  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import ExactSGDLaw as ExactSGDLaw
    from privdyn.privacy.hsgd import HSGDMechanism as HSGDMechanism
    from privdyn.privacy.hsgd import NeighboringLaws as NeighboringLaws
    from privdyn.privacy.hsgd import NeighboringPairs as NeighboringPairs
    from privdyn.privacy.hsgd import average_divergences as hsgd_average_divergences  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import exact_sgd_law as exact_sgd_law
    from privdyn.privacy.hsgd import exact_sgd_renyi as exact_sgd_renyi
    from privdyn.privacy.hsgd import neighboring_laws as hsgd_neighboring_laws  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import rdp_epsilon as hsgd_rdp_epsilon  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import rdp_epsilon_average as hsgd_rdp_epsilon_average  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import rdp_epsilon_releases as hsgd_rdp_epsilon_releases  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import release_divergences as hsgd_release_divergences  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import renyi_divergence as hsgd_renyi_divergence  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import renyi_divergences as hsgd_renyi_divergences  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import select_pairs as hsgd_select_pairs  # noqa: F401 - re-exported under this name
    from privdyn.privacy.hsgd import sgd_grid_law as sgd_grid_law
    from privdyn.privacy.iteration import epsilon_to_rho as epsilon_to_rho
    from privdyn.privacy.iteration import noise_calibration as dpgd_noise_calibration  # noqa: F401 - re-exported under this name
    from privdyn.privacy.iteration import privacy_level as dpgd_privacy_level  # noqa: F401 - re-exported under this name
    from privdyn.privacy.iteration import rho_to_epsilon as rho_to_epsilon
    from privdyn.privacy.iteration import rho_to_zcdp as rho_to_zcdp
    from privdyn.privacy.labels import AMPLIFIED_SAMPLERS as AMPLIFIED_SAMPLERS
    from privdyn.privacy.labels import DP_ACCOUNTING_SAMPLERS as DP_ACCOUNTING_SAMPLERS
    from privdyn.privacy.labels import DPSGD_SAMPLERS as DPSGD_SAMPLERS
    from privdyn.privacy.labels import SAMPLERS as SAMPLERS
    from privdyn.privacy.labels import STATEMENT_SAMPLERS as STATEMENT_SAMPLERS
    from privdyn.privacy.labels import Guarantee as Guarantee
    from privdyn.privacy.labels import NeighboringRelation as NeighboringRelation
    from privdyn.privacy.labels import PrivacyLoss as PrivacyLoss
    from privdyn.privacy.labels import Sampler as Sampler
    from privdyn.privacy.langevin import CROSSOVER_X as CROSSOVER_X
    from privdyn.privacy.langevin import LangevinSetting as LangevinSetting
    from privdyn.privacy.langevin import Theorem4Parameters as Theorem4Parameters
    from privdyn.privacy.langevin import best_gamma_rdp as best_gamma_rdp
    from privdyn.privacy.langevin import composition_noise_scale_for_rdp as composition_noise_scale_for_rdp
    from privdyn.privacy.langevin import composition_rdp as composition_rdp
    from privdyn.privacy.langevin import crossover_num_steps as crossover_num_steps
    from privdyn.privacy.langevin import dynamics_rdp as dynamics_rdp
    from privdyn.privacy.langevin import dynamics_rdp_asymptote as dynamics_rdp_asymptote
    from privdyn.privacy.langevin import dynamics_rdp_increment as dynamics_rdp_increment
    from privdyn.privacy.langevin import dynamics_zcdp as dynamics_zcdp
    from privdyn.privacy.langevin import lemma6_excess_risk_bound as lemma6_excess_risk_bound
    from privdyn.privacy.langevin import lsi_constant_tracker as lsi_constant_tracker
    from privdyn.privacy.langevin import lsi_rdp as lsi_rdp
    from privdyn.privacy.langevin import noise_scale_for_dp as noise_scale_for_dp
    from privdyn.privacy.langevin import noise_scale_for_rdp as noise_scale_for_rdp
    from privdyn.privacy.langevin import quadratic_corollary2_rdp as quadratic_corollary2_rdp
    from privdyn.privacy.langevin import quadratic_exact_rdp as quadratic_exact_rdp
    from privdyn.privacy.langevin import quadratic_lower_bound_rdp as quadratic_lower_bound_rdp
    from privdyn.privacy.langevin import steps_to_fraction as steps_to_fraction
    from privdyn.privacy.langevin import theorem4_parameters as theorem4_parameters
    from privdyn.privacy.langevin import tracked_lsi_rdp as tracked_lsi_rdp
    from privdyn.privacy.mechanism import DPSGDMechanism as DPSGDMechanism
    from privdyn.privacy.mechanism import GaussianRelease as GaussianRelease
    from privdyn.privacy.mechanism import GaussianReleases as GaussianReleases
    from privdyn.privacy.mechanism import NoisyGDMechanism as NoisyGDMechanism
    from privdyn.privacy.mechanism import NotExpressibleError as NotExpressibleError
    from privdyn.privacy.mechanism import OnePassDPGDMechanism as OnePassDPGDMechanism
    from privdyn.privacy.membership import MEMBERSHIP_FPRS as MEMBERSHIP_FPRS
    from privdyn.privacy.membership import gaussian_tpr as gaussian_tpr
    from privdyn.privacy.membership import pld_tpr as pld_tpr
    from privdyn.privacy.membership import profile_tpr as profile_tpr
    from privdyn.privacy.membership import zcdp_membership as zcdp_membership
    from privdyn.privacy.membership import zcdp_tpr as zcdp_tpr
    from privdyn.privacy.statement import PlanningShare as PlanningShare
    from privdyn.privacy.statement import PrivacyStatement as PrivacyStatement
