"""Last-iterate Renyi-DP dynamics of noisy gradient descent (Chourasia, Ye, Shokri 2021, arXiv 2102.05855).

Noisy GD (Algorithm 1 of the paper) runs ``theta_{k+1} = Pi_C(theta_k - step_size * grad L_D(theta_k)
+ sqrt(2 * step_size) * noise_scale * Z_k)`` and releases only the last iterate. This module implements the
paper's privacy bounds, its composition baseline, the exact privacy loss of its tightness instance, noise
calibration and the Theorem 4 utility recipe, all in privdyn's vocabulary (``docs/notation.md``):

==========================  =====  =======================================================================
privdyn name                paper  meaning
==========================  =====  =======================================================================
``renyi_order``             alpha  Renyi order (> 1)
``num_steps``               K      number of iterations; only theta_K is released
``step_size``               eta    step size; "time" after K steps is eta * K
``noise_scale``             sigma  the paper's sigma: the per-step noise std is sqrt(2 * eta) * sigma
``strong_convexity``        lamb.  strong-convexity constant of the per-example loss
``smoothness``              beta   smoothness constant (gradient Lipschitz constant)
``lipschitz``               L      Lipschitz constant of the loss (S_g <= 2L)
``sensitivity``             S_g    total gradient sensitivity (sup of the norm of the difference of the summed
                                   gradients over replace-one neighbours); the mean gradient moves by S_g / n
``n``, ``d``                n, d   dataset size, parameter dimension
``lsi_constant``            c      log-Sobolev constant of the tracing diffusions
==========================  =====  =======================================================================

Neighbouring datasets differ in one record (replace-one). Every privacy number is returned as a
:class:`~privdyn.privacy.labels.PrivacyLoss` whose ``source`` names the result and its assumptions.

Conventions (the same for every function):

* all numeric arguments broadcast against each other with NumPy rules; scalar inputs give a Python ``float``
  inside ``PrivacyLoss.value``, array inputs give an array of the broadcast shape;
* ``num_steps`` is a number K >= 0 of iterations; the algorithm runs an integer K, but a real K is accepted
  and evaluates the closed form at time ``step_size * K`` (used for the crossover and for smooth curves);
  ``num_steps = 0`` gives 0;
* bad input raises :class:`ValueError` naming the parameter, its value and the valid range;
* the six problem constants (``step_size``, ``noise_scale``, ``strong_convexity``, ``smoothness``,
  ``sensitivity``, ``n``) can be held once in a frozen :class:`LangevinSetting`, which checks Corollary 1's
  conditions at construction and evaluates the accountants (``setting.dynamics_rdp(2.0, num_steps=100)``); the
  keyword functions remain the reference spelling and run the same validation.

Where privdyn deliberately differs from the printed paper (see also ``docs/langevin.md``):

* Corollary 2 (eq. 18) is implemented with ``n**2`` in the denominator; the paper prints ``eta**2``;
* the tightness instance uses the per-example loss ``0.5 * ||theta - x||**2``
  (strong_convexity = smoothness = 1) and the iterate variance without the paper's extra ``/n**2``;
* Corollary 1 is applied literally (exponent ``strong_convexity * step_size * K / 2``), not the
  ``(1 - exp(-eta * K))`` written in the text of section 4;
* Theorem 4's (epsilon, delta) number of steps is available both as printed and as the exact substitution.
"""

from __future__ import annotations

from privdyn.privacy.langevin.calibration import (
    composition_noise_scale_for_rdp,
    noise_scale_for_dp,
    noise_scale_for_rdp,
)
from privdyn.privacy.langevin.common import CROSSOVER_X
from privdyn.privacy.langevin.dynamics import (
    composition_rdp,
    crossover_num_steps,
    dynamics_rdp,
    dynamics_rdp_asymptote,
    dynamics_rdp_increment,
    dynamics_zcdp,
    lsi_rdp,
    steps_to_fraction,
)
from privdyn.privacy.langevin.extensions import best_gamma_rdp, lsi_constant_tracker, tracked_lsi_rdp
from privdyn.privacy.langevin.quadratic import quadratic_corollary2_rdp, quadratic_exact_rdp, quadratic_lower_bound_rdp
from privdyn.privacy.langevin.setting import LangevinSetting
from privdyn.privacy.langevin.shifted import contraction_factor, shifted_interpolation_gdp
from privdyn.privacy.langevin.utility import Theorem4Parameters, lemma6_excess_risk_bound, theorem4_parameters

__all__ = [
    "CROSSOVER_X",
    "LangevinSetting",
    "Theorem4Parameters",
    "best_gamma_rdp",
    "composition_noise_scale_for_rdp",
    "composition_rdp",
    "contraction_factor",
    "crossover_num_steps",
    "dynamics_rdp",
    "dynamics_rdp_asymptote",
    "dynamics_rdp_increment",
    "dynamics_zcdp",
    "lemma6_excess_risk_bound",
    "lsi_constant_tracker",
    "lsi_rdp",
    "noise_scale_for_dp",
    "noise_scale_for_rdp",
    "quadratic_corollary2_rdp",
    "quadratic_exact_rdp",
    "quadratic_lower_bound_rdp",
    "shifted_interpolation_gdp",
    "steps_to_fraction",
    "theorem4_parameters",
    "tracked_lsi_rdp",
]
