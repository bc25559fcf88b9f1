"""Risk bounds for the two-layer B-spline KAN trained by DP-SGD with lambda-correlated noise (the kan paper).

Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert & Kloft, "Population Risk Bounds for Kolmogorov-Arnold Networks
Trained by DP-SGD with Correlated Noise" (arXiv 2605.12648v1). Notation: ``width`` = m, ``d`` = input dimension,
``num_basis`` = p, ``num_steps`` = T, ``batch_size`` = B, ``step_size`` = eta, ``noise_multiplier`` = kappa (noise
std ``clip * kappa`` on the sum of clipped gradients), ``noise_correlation`` = lambda, ``clip`` = C_clip,
``ntk_margin`` = gamma of Assumption 3.3, ``projection_radius`` = R*.

Two different deltas appear in the paper under one symbol (e.g. Corollary 5.3); privdyn keeps them apart:
``failure_prob`` is the probability of the bad initialization / algorithm event of a high-probability bound, and
``delta`` is only ever the DP parameter (used by the corollary schedules to calibrate kappa).

Three kinds of results live here:

* **Explicit quantities** with every constant written out: the events on the initialization (Lemma B.5, eq. (15)),
  the gradient bound ``G_delta`` (eq. (5)), the Hessian bound (eq. (4)), the noise / mini-batch / martingale bounds
  of Lemmas C.5, C.6, C.10 and the shifted-bootstrap bound of Lemma C.11 (:func:`lemma_c11_bound`, label
  ``bound``: a formal bound once its conditions hold).
* **Rates with hidden constants**: ``A_corr`` (Theorem 4.1), ``A_van`` (Theorem D.14), ``A_non`` (Theorem E.1) and
  the population bounds of Theorems 5.2, D.16 and E.1. The paper states them with ``≲``; privdyn multiplies them by
  explicit constants (default 1, :class:`HiddenConstants`). They carry the label ``surrogate``: order-of-magnitude
  predictions, not certified numbers.
* **Parameter schedules** of Corollaries 5.3, 5.5 and 5.6.

Every condition of a theorem is returned as a :class:`Condition` whose ``margin`` is ``>= 0`` exactly when the
condition holds, so a user sees by how much a configuration misses it.

The constant ``C_{sigma,b}`` (Lemmas B.6, B.7) is not a free parameter: :func:`kan_constants` derives it from the
basis bounds (:func:`privdyn.models.bspline.bspline_bounds`) and the activation's derivative bounds, as the
maximum of ``4 B'_s B_b B'_b`` (gradient), ``4 B_b^2 (B''_s B'_b + B'_s^2 B''_b)``
(Hessian) and ``9 (B'_s B_b B'_b)^2 + 6 B_b^2 (B''_s B'_b + B'_s^2 B''_b)`` (the value that makes
``||grad f||^2 / 4 + ||hess f|| <= C p^3``). These three inequalities turn the explicit eqs. (3)-(4) into the
``C``-forms of Lemmas B.6-B.7 when ``failure_prob <= 2**(-1/3)`` and ``width >= log(2 width / failure_prob)`` (the
explicit form of Lemma B.7's ``m ≳ log(m / delta)``); functions that use ``C`` report both as conditions
``explicit_constant_failure_prob`` and ``explicit_constant_width``.
"""

from __future__ import annotations

from privdyn.bounds.kan.common import (
    _ACTIVATION_BOUNDS as _ACTIVATION_BOUNDS,
)
from privdyn.bounds.kan.common import (
    _EXPLICIT_FAILURE_PROB_MAX as _EXPLICIT_FAILURE_PROB_MAX,
)
from privdyn.bounds.kan.common import (
    _PAPER as _PAPER,
)
from privdyn.bounds.kan.common import (  # noqa: F401 - every name the module had stays importable
    ACTIVATIONS as ACTIVATIONS,
)
from privdyn.bounds.kan.common import (
    Condition as Condition,
)
from privdyn.bounds.kan.common import (
    HiddenConstants as HiddenConstants,
)
from privdyn.bounds.kan.common import (
    KanConstants as KanConstants,
)
from privdyn.bounds.kan.common import (
    RiskBound as RiskBound,
)
from privdyn.bounds.kan.common import (
    Schedule as Schedule,
)
from privdyn.bounds.kan.common import (
    _batch as _batch,
)
from privdyn.bounds.kan.common import (
    _Conditions as _Conditions,
)
from privdyn.bounds.kan.common import (
    _constants as _constants,
)
from privdyn.bounds.kan.common import (
    _correlation as _correlation,
)
from privdyn.bounds.kan.common import (
    _hidden as _hidden,
)
from privdyn.bounds.kan.common import (
    _int as _int,
)
from privdyn.bounds.kan.common import (
    _margin as _margin,
)
from privdyn.bounds.kan.common import (
    _nonneg as _nonneg,
)
from privdyn.bounds.kan.common import (
    _pos as _pos,
)
from privdyn.bounds.kan.common import (
    _prob as _prob,
)
from privdyn.bounds.kan.constants import (  # noqa: F401 - every name the module had stays importable
    activation_bounds as activation_bounds,
)
from privdyn.bounds.kan.constants import (
    batch_fluctuation_bound as batch_fluctuation_bound,
)
from privdyn.bounds.kan.constants import (
    check_inputs as check_inputs,
)
from privdyn.bounds.kan.constants import (
    coefficient_norm_thresholds as coefficient_norm_thresholds,
)
from privdyn.bounds.kan.constants import (
    comparator_loss_bound as comparator_loss_bound,
)
from privdyn.bounds.kan.constants import (
    explicit_constant_conditions as explicit_constant_conditions,
)
from privdyn.bounds.kan.constants import (
    gradient_bound as gradient_bound,
)
from privdyn.bounds.kan.constants import (
    hessian_bound as hessian_bound,
)
from privdyn.bounds.kan.constants import (
    initial_output_bound as initial_output_bound,
)
from privdyn.bounds.kan.constants import (
    initialization_event as initialization_event,
)
from privdyn.bounds.kan.constants import (
    kan_constants as kan_constants,
)
from privdyn.bounds.kan.constants import (
    lemma_c11_bound as lemma_c11_bound,
)
from privdyn.bounds.kan.constants import (
    loss_range_bounds as loss_range_bounds,
)
from privdyn.bounds.kan.constants import (
    noise_norm_bounds as noise_norm_bounds,
)
from privdyn.bounds.kan.constants import (
    potential_fluctuation_bound as potential_fluctuation_bound,
)
from privdyn.bounds.kan.constants import (
    stability_constants as stability_constants,
)
from privdyn.bounds.kan.constants import (
    weak_convexity_constant as weak_convexity_constant,
)
from privdyn.bounds.kan.rates import (  # noqa: F401 - every name the module had stays importable
    _clip_condition as _clip_condition,
)
from privdyn.bounds.kan.rates import (
    _common as _common,
)
from privdyn.bounds.kan.rates import (
    _ntk_width as _ntk_width,
)
from privdyn.bounds.kan.rates import (
    _stability_width_correlated as _stability_width_correlated,
)
from privdyn.bounds.kan.rates import (
    _stability_width_plain as _stability_width_plain,
)
from privdyn.bounds.kan.rates import (
    _theorem_4_1_conditions as _theorem_4_1_conditions,
)
from privdyn.bounds.kan.rates import (
    a_corr as a_corr,
)
from privdyn.bounds.kan.rates import (
    a_non as a_non,
)
from privdyn.bounds.kan.rates import (
    a_van as a_van,
)
from privdyn.bounds.kan.rates import (
    optimization_bound_correlated as optimization_bound_correlated,
)
from privdyn.bounds.kan.rates import (
    optimization_bound_independent as optimization_bound_independent,
)
from privdyn.bounds.kan.rates import (
    optimization_bound_nonprivate as optimization_bound_nonprivate,
)
from privdyn.bounds.kan.rates import (
    population_bound_correlated as population_bound_correlated,
)
from privdyn.bounds.kan.rates import (
    population_bound_independent as population_bound_independent,
)
from privdyn.bounds.kan.rates import (
    population_bound_nonprivate as population_bound_nonprivate,
)
from privdyn.bounds.kan.rates import (
    projection_radius_choice as projection_radius_choice,
)
from privdyn.bounds.kan.schedules import (  # noqa: F401 - every name the module had stays importable
    _MAX_WIDTH as _MAX_WIDTH,
)
from privdyn.bounds.kan.schedules import (
    _schedule_conditions as _schedule_conditions,
)
from privdyn.bounds.kan.schedules import (
    _smallest_width as _smallest_width,
)
from privdyn.bounds.kan.schedules import (
    schedule_corollary_5_3 as schedule_corollary_5_3,
)
from privdyn.bounds.kan.schedules import (
    schedule_corollary_5_5 as schedule_corollary_5_5,
)
from privdyn.bounds.kan.schedules import (
    schedule_corollary_5_6 as schedule_corollary_5_6,
)

__all__ = [
    "ACTIVATIONS",
    "Condition",
    "HiddenConstants",
    "KanConstants",
    "RiskBound",
    "Schedule",
    "a_corr",
    "a_non",
    "a_van",
    "activation_bounds",
    "batch_fluctuation_bound",
    "check_inputs",
    "coefficient_norm_thresholds",
    "comparator_loss_bound",
    "explicit_constant_conditions",
    "gradient_bound",
    "hessian_bound",
    "initial_output_bound",
    "initialization_event",
    "kan_constants",
    "lemma_c11_bound",
    "loss_range_bounds",
    "noise_norm_bounds",
    "optimization_bound_correlated",
    "optimization_bound_independent",
    "optimization_bound_nonprivate",
    "population_bound_correlated",
    "population_bound_independent",
    "population_bound_nonprivate",
    "potential_fluctuation_bound",
    "projection_radius_choice",
    "schedule_corollary_5_3",
    "schedule_corollary_5_5",
    "schedule_corollary_5_6",
    "stability_constants",
    "weak_convexity_constant",
]
