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

from privdyn.bounds.kan.common import ACTIVATIONS, Condition, HiddenConstants, KanConstants, RiskBound, Schedule
from privdyn.bounds.kan.constants import (
    activation_bounds,
    batch_fluctuation_bound,
    check_inputs,
    coefficient_norm_thresholds,
    comparator_loss_bound,
    explicit_constant_conditions,
    gradient_bound,
    hessian_bound,
    initial_output_bound,
    initialization_event,
    kan_constants,
    lemma_c11_bound,
    loss_range_bounds,
    noise_norm_bounds,
    potential_fluctuation_bound,
    stability_constants,
    weak_convexity_constant,
)
from privdyn.bounds.kan.rates import (
    a_corr,
    a_non,
    a_van,
    optimization_bound_correlated,
    optimization_bound_independent,
    optimization_bound_nonprivate,
    population_bound_correlated,
    population_bound_independent,
    population_bound_nonprivate,
    projection_radius_choice,
)
from privdyn.bounds.kan.schedules import schedule_corollary_5_3, schedule_corollary_5_5, schedule_corollary_5_6

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
