"""Training experiments of the kan paper: Figure 1 (left) re-created on offline data, and the corollaries' rates.

Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert & Kloft, "Population Risk Bounds for Kolmogorov-Arnold Networks
Trained by DP-SGD with Correlated Noise" (arXiv 2605.12648v1). The paper runs no experiment of its own: its
Figure 1 is reproduced from Kalinin et al. 2026a (DP-lambda-CGD, arXiv 2601.22334; a CIFAR-10 CNN, no numbers in the
text). Both experiments train the paper's two-layer KAN (:class:`privdyn.models.kan.KAN`) with Algorithm 1
(:func:`privdyn.algorithms.dpsgd.dpsgd`, noise ``(clip / B) kappa (Z_t - lambda Z_{t-1})`` on the averaged clipped
gradient, fixed-size batches drawn without replacement at every step).

``kan-fig1-left``: test accuracy against the noise correlation lambda, one curve per epsilon, on scikit-learn's
bundled breast-cancer data (malignant = -1, benign = +1) and digits "1" (+1) vs "7" (-1), in two panels:

* ``same_noise`` (a): one noise multiplier for every lambda, the dp-accounting calibration of lambda = 0
  (replace-one neighbours, RDP of the sampled-without-replacement Gaussian). The (epsilon, delta) guarantee holds at
  lambda = 0 only; the panel isolates the mechanism's effect on optimization (Remark 4.2: at fixed kappa the noise
  terms of A_corr scale with (1 - lambda) and (1 - lambda)^2 + lambda^2 eta).
* ``calibrated`` (b): kappa(lambda) at matched (epsilon, delta) for every lambda from one accountant under one
  relation: the amplified bound on the Theorem F.8 pair (:mod:`privdyn.privacy.amplification`, ``method="bound"``:
  the smaller of the spectral bound and the conditional composition, at these sampling rates the spectral bound;
  fixed-size batches, zero-out neighbours; at lambda = 0 the pair is the Poisson-subsampled Gaussian and the bound
  its exact PLD). For lambda > 0 the bound may exceed the truth: at the default config's settings the Monte-Carlo
  estimate of the same pair's epsilon at the bound's kappa contains the target for lambda <= 0.7, as at lambda = 0,
  and lies in [0.94, 0.99] at lambda = 0.9, so the comparison is biased against lambda > 0 by at most about 6% in
  epsilon; the kappas are shipped in ``kan_training/data/fig1_left_kappas.json`` (:mod:`.kappas`) for the quick
  config.

Data: by default (``feature_scaling="box"``) features are standardized with the training split's statistics,
clipped to 3 standard deviations and divided by 3, so every coordinate lies in [-1, 1] (the number of test entries
clipped is recorded); ``feature_scaling="unit_ball"`` is the paper's scaling (divide by the largest training-row norm,
``||x|| <= 1``). Non-private logistic regression on standardized features is reported beside the non-private KAN.
The train/test split is drawn once per dataset from the run seed (stream
``split/dataset=...``), shared by every seed unit; the seeds vary the KAN's initialization (c, W_0), the batches and
the noise, which are shared by every (panel, epsilon, lambda) of one seed (common random numbers). Confidence
intervals: mean +- t_{0.975, k-1} SE over the k seeds (cut to [0, 1] for accuracies).

``kan-bounds``: averaged training and test losses (over the iterates t < T, evaluated on a stated subsample of t) of
runs whose (B, T, eta, kappa) follow the n-dependence of Corollaries 5.3 (correlated), 5.5 (independent) and 5.6
(non-private), on synthetic data in the unit ball labelled by a linear teacher, beside the corollaries' rates, the rates
A_corr / A_van / A_non and the population bounds of Theorems 5.2 / D.16 / E.1 (hidden constants 1; label ``surrogate``)
and the explicit-constant bound of Lemma C.11 (label ``bound``). The corollaries' own constants (eta <= 1/(12 C p^3), m
of order 1/gamma^6, clip = G_delta, about n/gamma^2 epochs) cannot be run at any size a test allows, so the schedules
keep the corollaries' powers of n with hand-set constants (config keys); the NTK margin gamma* (Assumption 3.3) is
measured at each initialization (:func:`privdyn.bounds.ntk_margin.ntk_margin`). The table
``literal_corollary_schedules`` gives the corollaries' own schedules (:mod:`privdyn.bounds.kan`) at the measured gamma*,
or why they are undefined there. Lemma C.11 is evaluated with the comparator W* = W_0 + tau u of Lemma C.12 (u the
margin direction, tau = (log T + sqrt(log(n / failure_prob))) / gamma*, L_S(W*) computed exactly), the smallest shifted
radius meeting its condition (10) and the projection radius it prescribes (used by the runs); the comparison is an
invariant only where every condition of the lemma holds, else a finding with the margins.
"""

from __future__ import annotations

from privdyn.experiments.kan_training.bounds import (  # noqa: F401 - its public names stay importable from the package
    Bounds as Bounds,
)
from privdyn.experiments.kan_training.common import (
    INVARIANT as INVARIANT,
)
from privdyn.experiments.kan_training.common import (
    PANELS as PANELS,
)
from privdyn.experiments.kan_training.common import (
    PAPER as PAPER,
)
from privdyn.experiments.kan_training.common import (
    REFERENCE_RTOL as REFERENCE_RTOL,
)
from privdyn.experiments.kan_training.common import (
    REFERENCE_STEPS as REFERENCE_STEPS,
)
from privdyn.experiments.kan_training.common import (  # noqa: F401 - its public names stay importable from the package
    ActivationName as ActivationName,
)
from privdyn.experiments.kan_training.common import (
    BoundsConfig as BoundsConfig,
)
from privdyn.experiments.kan_training.common import (
    CorollaryName as CorollaryName,
)
from privdyn.experiments.kan_training.common import (
    DatasetName as DatasetName,
)
from privdyn.experiments.kan_training.common import (
    Fig1LeftConfig as Fig1LeftConfig,
)
from privdyn.experiments.kan_training.common import (
    reference_clipped_sgd as reference_clipped_sgd,
)
from privdyn.experiments.kan_training.common import (
    t_interval as t_interval,
)
from privdyn.experiments.kan_training.fig1_left import (  # noqa: F401 - its public names stay importable from the package
    Fig1Left as Fig1Left,
)

EXPERIMENTS = (Fig1Left(), Bounds())
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = [
    "Fig1LeftConfig",
    "Fig1Left",
    "BoundsConfig",
    "Bounds",
    "EXPERIMENTS",
    "t_interval",
    "reference_clipped_sgd",
]
