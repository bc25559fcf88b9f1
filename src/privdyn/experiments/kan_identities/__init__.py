"""Exact identities and the stability bound of the kan paper, measured on real DP-SGD runs.

Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert & Kloft, "Population Risk Bounds for Kolmogorov-Arnold Networks
Trained by DP-SGD with Correlated Noise" (arXiv 2605.12648v1). Both experiments train the paper's two-layer KAN
(:class:`privdyn.models.kan.KAN`) with Algorithm 1 (:func:`privdyn.algorithms.dpsgd.dpsgd`, fixed-size batches drawn
without replacement, noise ``(C_clip / B) kappa (Z_t - lambda Z_{t-1})``) on scikit-learn's bundled breast-cancer data
(or the digits "1" vs "7"), standardized and scaled by the largest row norm so that ``||x|| <= 1``. The step size
defaults to the theory's ``1 / (12 beta)`` (``beta = C_{sigma,b} p^3``, Lemma B.7) and the clip to ``G_delta`` of
eq. (5) (:func:`privdyn.bounds.kan.gradient_bound`), the regime in which the identities and Theorem C.22 are stated.

``kan-identities`` (invariants):

* **Shifted iterate (Section C.1, Step 2).** With ``c_priv = C_clip kappa / B``, ``U_t = W_t + eta c_priv Z_t``
  satisfies ``U_t = U_{t-1} - eta (g_t + Delta_t + (1 - lambda) c_priv Z_{t-1})``: the lambda-correlated noise
  becomes one lagged, independent-noise term. ``W_t`` are the engine's iterates; ``g_t = grad L_S(W_{t-1})``, the
  mini-batch fluctuation ``Delta_t``, the batches and ``Z_t`` are recomputed here from the same random streams.
  Tolerance on the sup-norm residual: ``2 (B + 6) u s_t`` (``u`` the unit roundoff, ``s_t`` the sup-norm scale of
  the terms; ``B + 6`` bounds the rounding of a ``B``-term sum and six further operations, doubled for the two
  independent evaluations).
* **Lemma C.1 (eq. (6))**, the exact expansion of ``||U_t - W*||^2``, for a comparator ``W*`` at distance ``R*/2``
  from ``W_0``. Tolerance: the recursion tolerance propagated through the square (``2 sqrt(D) tol_t ||U_t - W*||``)
  plus ``2 (D + 8) u`` times the sum of the magnitudes of the terms (``D = m d p`` products per inner product).
* **Lemma B.2** by exact enumeration of all ``C(n', B)`` batches of ``n'`` vectors (the per-example loss gradients at
  ``W_0``) for every ``B = 1 .. n'``: unbiasedness, the closed form ``(n' - B) / (B (n' - 1)) (1/n') sum ||x_i -
  x_bar||^2`` and the bound ``G^2 / B``. The two facts its proof uses, ``P(i in B) = B/n`` and ``P(i, j in B) =
  B (B - 1) / (n (n - 1))``, are checked on the engine's fixed-size sampler by Monte Carlo (Bonferroni z over the
  cells, family-wise level 1e-6).
* **Clipping and projection inactive** (eq. (5), Section C.1): on the event E_delta of Lemma B.5 every per-example
  gradient norm is ``<= G_delta``, so ``C_clip >= G_delta`` clips nothing; the projection never acts when
  ``R* >= eta T (C_clip + (1 + lambda) c_priv z)`` and ``max_t ||Z_t|| <= z`` (``z`` of Lemma C.5), since then no
  iterate leaves the ball. The fractions of clipped examples and projected steps must be 0; the event margins are
  recorded.

``kan-stability``: on-average argument stability (Definition C.14) by coupled runs. Per seed, S and S~ are drawn
iid (with replacement) from the pool's empirical distribution; for every replaced index i the run on ``S^(i)`` shares
the initialization (fixed across seeds: Theorem C.22 holds conditionally on it), the batches and the noise with the
run on S. Measured: ``(1/n) sum_i ||W_T - W_T^(i)||`` averaged over seeds. Theorem C.22's bound:
``(2 e eta b_{delta,m} / n) sum_{t<T} E L_S(W_t) + 2 R* delta_stab`` with ``b_{delta,m}`` of
:func:`privdyn.bounds.kan.stability_constants` and ``delta_stab = delta`` (as Theorem C.23 sets it). The check is a
paired Monte-Carlo comparison in the direction that certifies the bound: per seed ``X = bound_seed - measured_seed``
and the invariant requires the lower z = 5 confidence limit ``mean(X) - 5 SE(X) >= 0``, i.e. the measured stability
plus 5 SE stays below the bound. (The lenient direction, "not significantly above the bound", could not fail for
lack of data; this one can, and then says the runs were too few to certify the bound.) Also checked pathwise: Lemma
C.21, ``||W_T - W_T^(i)|| <= e sum_k R_k^(i)``, on every coupled pair whose checkable event conditions hold
(``sum_t M_t^(i) <= 1``, the quasi-convexity condition ``(a/2) max_t ||W_t - W_t^(i)||^2 <= 1`` and the output
event of Lemma C.17). Findings: how loose the bound is (ratios), and the event frequencies.
"""

from __future__ import annotations

from privdyn.experiments.kan_identities.common import (
    DATASETS as DATASETS,
)
from privdyn.experiments.kan_identities.common import (
    INVARIANT as INVARIANT,
)
from privdyn.experiments.kan_identities.common import (
    MAX_ENUMERATION_N as MAX_ENUMERATION_N,
)
from privdyn.experiments.kan_identities.common import (
    PAPER as PAPER,
)
from privdyn.experiments.kan_identities.common import (
    UNIT_ROUNDOFF as UNIT_ROUNDOFF,
)
from privdyn.experiments.kan_identities.common import (  # noqa: F401 - its public names stay importable from the package
    ActivationName as ActivationName,
)
from privdyn.experiments.kan_identities.common import (
    DatasetName as DatasetName,
)
from privdyn.experiments.kan_identities.common import (
    load_pool as load_pool,
)
from privdyn.experiments.kan_identities.identities import (  # noqa: F401 - its public names stay importable from the package
    Identities as Identities,
)
from privdyn.experiments.kan_identities.identities import (
    IdentitiesConfig as IdentitiesConfig,
)
from privdyn.experiments.kan_identities.stability import (  # noqa: F401 - its public names stay importable from the package
    Stability as Stability,
)
from privdyn.experiments.kan_identities.stability import (
    StabilityConfig as StabilityConfig,
)
from privdyn.runs.results import (  # noqa: F401 - the former module constant stays importable
    Z_SCORE as Z_SCORE,
)

EXPERIMENTS = (Identities(), Stability())
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = [
    "DATASETS",
    "load_pool",
    "IdentitiesConfig",
    "Identities",
    "StabilityConfig",
    "Stability",
    "EXPERIMENTS",
]
