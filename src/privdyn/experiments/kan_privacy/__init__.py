"""The kan paper's privacy side: Figure 1 (right) and the noise calibrations (Wang et al., arXiv 2605.12648).

Two experiments:

* ``kan-fig1-right``: the cumulative noise of DP-lambda-CGD. Algorithm 1 adds ``(clip / B) kappa xi_t`` with
  ``xi_t = Z_t - lambda Z_{t-1}`` (``Z_0 = 0``) to the averaged gradient, so the noise the parameter trajectory
  accumulates after t steps is ``-eta (clip / B) kappa sum_{s<=t} xi_s``. The figure (reproduced by the paper from
  Kalinin et al., arXiv 2601.22334) illustrates that subtracting ``lambda Z_{t-1}`` partially cancels consecutive
  perturbations, so the cumulative noise grows more slowly than for independent noise. The experiment streams
  the actual noise of :class:`~privdyn.privacy.correlated.LambdaCGD` (noise on the summed gradients with a unit
  clip, ``scale = kappa``), accumulates the prefix sums ``sum_{s<=t} xi_s`` over ``num_coordinates`` independent
  coordinates, and compares the per-coordinate variance with the closed form of :func:`cumulative_noise_variance`,
  ``kappa^2 (1 + (1 - lambda)^2 (t - 1))`` (derived from eqs. (24)-(25) of Appendix F.1).
* ``kan-calibration``: the noise multiplier kappa of every calibration of the paper and of dp-accounting across
  the noise correlation lambda, at ``sampling_prob = batch_size / n`` and each epsilon: Theorem F.12 (= Thm 5.1,
  zero-out, constant 8 as stated and 2 as its proof gives), Theorem D.9 (= Thm 5.4, replace-one, ``heuristic``)
  and dp-accounting at lambda = 0 (fixed-size batches without replacement under replace-one, RDP; Poisson
  sampling under add-remove, PLD). Each number carries its ``accountant``, ``neighboring`` and ``guarantee``.

Monte-Carlo standard errors (``kan-fig1-right``): the D coordinates of the prefix sum are independent, so the
variance estimate ``mean_i S_{t,i}^2`` (the mean is known to be 0) has standard error ``sd_i(S_{t,i}^2) / sqrt(D)``
(the sample standard deviation of the squared values; for Gaussian coordinates it estimates the chi-square value
``v_t sqrt(2 / D)``). The estimate is unbiased, so no bias allowance is needed. The comparison along one curve uses a
Bonferroni-corrected z at family-wise level 1e-6 over its ``num_steps`` time points (valid although the points of
one curve are dependent); all noise correlations share the same ``Z_t`` (common random numbers).
"""

from __future__ import annotations

from privdyn.experiments.kan_privacy.calibration import (
    DP_ACCOUNTING_SAMPLINGS as DP_ACCOUNTING_SAMPLINGS,
)
from privdyn.experiments.kan_privacy.calibration import (
    F12_CONSTANTS as F12_CONSTANTS,
)
from privdyn.experiments.kan_privacy.calibration import (  # noqa: F401 - its public names stay importable from the package
    Calibration as Calibration,
)
from privdyn.experiments.kan_privacy.calibration import (
    CalibrationConfig as CalibrationConfig,
)
from privdyn.experiments.kan_privacy.calibration import (
    reference_noise_multiplier_d9 as reference_noise_multiplier_d9,
)
from privdyn.experiments.kan_privacy.calibration import (
    reference_noise_multiplier_f12 as reference_noise_multiplier_f12,
)
from privdyn.experiments.kan_privacy.common import (  # noqa: F401 - its public names stay importable from the package
    CLAIM as CLAIM,
)
from privdyn.experiments.kan_privacy.common import (
    INVARIANT as INVARIANT,
)
from privdyn.experiments.kan_privacy.common import (
    PAPER as PAPER,
)
from privdyn.experiments.kan_privacy.common import (
    cumulative_noise_variance as cumulative_noise_variance,
)
from privdyn.experiments.kan_privacy.fig1_right import (
    MIN_COORDINATES as MIN_COORDINATES,
)
from privdyn.experiments.kan_privacy.fig1_right import (  # noqa: F401 - its public names stay importable from the package
    CumulativeNoiseConfig as CumulativeNoiseConfig,
)
from privdyn.experiments.kan_privacy.fig1_right import (
    Fig1Right as Fig1Right,
)

EXPERIMENTS = (Fig1Right(), Calibration())
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = [
    "PAPER",
    "MIN_COORDINATES",
    "CumulativeNoiseConfig",
    "Fig1Right",
    "CalibrationConfig",
    "Calibration",
    "EXPERIMENTS",
    "cumulative_noise_variance",
    "reference_noise_multiplier_f12",
    "reference_noise_multiplier_d9",
]
