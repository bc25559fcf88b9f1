"""Privacy experiments of the hsgd paper: Figures 1(b), 2(b), 3(a) and 3(b).

Lin, Kolaczyk, Smith, Paquette, "High-Dimensional Privacy-Utility Dynamics of Noisy SGD on Least Squares" (arXiv
2510.16687; cited as "the paper"), Section 5. The readings of what the paper leaves open are listed in ``docs/hsgd.md``.

* ``hsgd-fig1b`` — Figure 1(b): the per-pair privacy loss against the size of the pair's gradient gap, over random
  neighbouring pairs of the observed dataset (σ = 1.5), with Spearman coefficients for the paper's proxy ‖g(θ)‖₂,
  g(θ) = (ba − b'a') − (aaᵀ − a'a'ᵀ + δI)1_d (Section 5), and for the exact mean gap
  g_s(θ) = a(b − aᵀm(s)) − a'(b' − a'ᵀm(s)) (Lemma C.1).
* ``hsgd-fig2b`` — Figure 2(b): the last-iterate RDP curve rdp_epsilon(k) of Theorem 4.3 (eq. (15)) per
  ``noise_std``, with the supremum over the top ``num_pairs`` proxy pairs, and the paper's claim that larger σ is
  "uniformly smaller in both transient and steady state" against the σ-independent plateau that the linearized laws
  predict.
* ``hsgd-fig3a`` — Figure 3(a): the population risk of clipped noisy SGD (``clips``) against the unclipped run.
* ``hsgd-fig3b`` — Figure 3(b): the Ye & Shokri (2022) last-iterate RDP bound of the clipped runs (labelled
  ``bound``) against the HSGD curve of the unclipped run (labelled ``surrogate``).

**What the numbers are** (ARCHITECTURE.md, "Privacy numbers say what they are"). Every HSGD number is a ``surrogate``:
the Rényi divergence of linearized homogenized-SGD laws (a diffusion approximation of SGD) over a data-dependent set
of pairs, not a DP guarantee (:mod:`privdyn.privacy.hsgd`). The Ye–Shokri numbers are a formal ``bound`` under their
assumptions (strong convexity, clipping, one shuffled epoch, hidden intermediate iterates;
:mod:`privdyn.privacy.hidden_state`). Series ``params`` carry ``guarantee``, ``method`` (``volterra`` for HSGD: the law
comes from the Volterra solve; ``ye_shokri``; ``simulation``), ``renyi_order``, ``mode`` (``keep_last_block``: the
exact law of the release, which for the last iterate alone coincides with the paper's ``suffix`` reading; ``None`` for
the Ye–Shokri bound), ``num_pairs``, ``x0_policy``, ``noise_std``, ``clip``, ``ridge``, ``step_size``, ``d``, ``n``
and ``quantity``.

**Setting** (Section 5): d = 1000, n = 1500, step_size η = 0.05 (the discrete step, so γ = ηd), ridge δ = 0.1,
σ ∈ {1, 1.25, 1.5}, clips c ∈ {3, 5, 7}, the uniform design of :func:`privdyn.data.hsgd_design.paper_design`. x̃ and
x_0 ~ N(0, I_d) are those of :func:`privdyn.experiments.hsgd_risk.paper_setting` (the same problem as ``hsgd-fig1a``
and ``hsgd-fig2a``). The observed dataset (n records) is drawn once per (seed, d, n) from its own stream; neighbouring
pairs are pairs of its records (record i replaced by record j).

**Choices the paper leaves open, recorded here.** Rényi order α = ``renyi_order`` = 2. The divergence is taken in the
correct argument order and maximized over both orders (Lemma C.2 prints them swapped). ``x0_policy``:
``random_public`` (default: the law conditions on the realized x_0, V(0) = 0) or ``random_secret`` (V(0) = I). The
pair set of Figure 2(b) and 3(b): the top ``num_pairs`` = 5 *ordered* pairs of the dataset by the paper's proxy.
Figure 1(b): ``num_pairs`` = 300 ordered pairs (i ≠ j) drawn uniformly without replacement; the privacy quantity is
the per-pair curve rdp_epsilon(k; θ), the mixture (15) for that pair alone (both orders), at the iterates
``iterates``; the exact gap is taken at s = (k − 1)/d, the last position that still changes iterate k. Clipping: the
full per-example gradient including δx is clipped (``clip_convention``), with the absolute noise σ. Ye–Shokri: noise
multiplier σ/c, contraction 1 − ηδ, n steps, sensitivity 2c, the position-mixture trajectory over k.

**Checks** (``expected`` never comes from the engine checked):

* invariant: the whole rdp_epsilon curve (and, in Figure 1(b), the per-pair curves of the first
  ``num_reference_pairs`` pairs) equals an independent solver written here: the two neighbouring laws (Lemma C.1)
  restricted exactly to the subspace where they differ — spanned, group by group of equal eigenvalues of Σ, by the
  projections of a and a' — as small dense matrices, with numpy's log-determinants and solves and this module's own
  mixture (15) in log space (:func:`reference_divergences`, :func:`reference_rdp_epsilon`);
* invariant: single divergences D_α(k; ℓ, θ) (both orders) equal a dense d × d computation of Lemma C.1's
  laws and the Gaussian divergence (whitened by the common diagonal; :func:`dense_divergences`);
* invariant: the Gaussian-mechanism oracle D_α(0; 0, θ) = α‖g_0(θ)‖²/(2σ²) at t = s+ with V(0) = 0 (derived);
* invariant: the Ye–Shokri curve equals the closed form ε_j = α(2q^{j−1})²/(2σ_m² Σ_{i<j} q^{2i}) (the Gaussian
  mechanism of the contracted linear recursion, summed here) with this module's mixture, and, at the paper's setting,
  the reference values 8.687, 37.13, 79.80 (c = 3, 5, 7) of an independent implementation;
* invariant: clipping thresholds that never bind leave the runs bit-identical to the unclipped ones (common random
  numbers);
* paper claims: Figure 1(b)'s positive relation (Spearman coefficient of the proxy > 0 at one-sided z = 5); Figure
  2(b)'s ordering in σ, transient and steady state; Figure 3(a)'s "unclipped attains the lowest risk" (paired
  differences within z = 5 standard errors); Figure 3(b)'s ordering (bound above HSGD; smaller c, smaller bound);
* findings: Spearman coefficients, the σ-spread of the plateau and its decomposition into mean and log-determinant
  terms, the reference magnitudes of an independent implementation, clipping frequencies, bound-over-surrogate ratios.
"""

from __future__ import annotations

from privdyn.experiments.hsgd_privacy_figures.common import (  # noqa: F401 - its public names stay importable from the package
    CLAIM as CLAIM,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    EARLY_ITERATES as EARLY_ITERATES,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    FINDING as FINDING,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    INVARIANT as INVARIANT,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    REFERENCE_RTOL as REFERENCE_RTOL,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    REFERENCE_STRIDE as REFERENCE_STRIDE,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    REFINEMENTS as REFINEMENTS,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    RELAXATION_TIMES as RELAXATION_TIMES,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    Fig1bConfig as Fig1bConfig,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    Fig2bConfig as Fig2bConfig,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    Fig3aConfig as Fig3aConfig,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    Fig3bConfig as Fig3bConfig,
)
from privdyn.experiments.hsgd_privacy_figures.common import (
    observed_dataset as observed_dataset,
)
from privdyn.experiments.hsgd_privacy_figures.fig1b import (  # noqa: F401 - its public names stay importable from the package
    Fig1b as Fig1b,
)
from privdyn.experiments.hsgd_privacy_figures.fig2b import (  # noqa: F401 - its public names stay importable from the package
    Fig2b as Fig2b,
)
from privdyn.experiments.hsgd_privacy_figures.fig3 import (  # noqa: F401 - its public names stay importable from the package
    Fig3a as Fig3a,
)
from privdyn.experiments.hsgd_privacy_figures.fig3 import (
    Fig3b as Fig3b,
)
from privdyn.reference.hsgd_privacy import (
    dense_divergences as dense_divergences,
)
from privdyn.reference.hsgd_privacy import (
    reference_divergences as reference_divergences,
)
from privdyn.reference.hsgd_privacy import (
    reference_rdp_epsilon as reference_rdp_epsilon,
)
from privdyn.reference.hsgd_privacy import (
    reference_ye_shokri as reference_ye_shokri,
)
from privdyn.runs.results import (  # noqa: F401 - the former module constant Z stays importable
    Z_SCORE as Z,
)

EXPERIMENTS = (Fig1b(), Fig2b(), Fig3a(), Fig3b())
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = [
    "Fig1bConfig",
    "Fig2bConfig",
    "Fig3aConfig",
    "Fig3bConfig",
    "Fig1b",
    "Fig2b",
    "Fig3a",
    "Fig3b",
    "EXPERIMENTS",
    "observed_dataset",
    "reference_divergences",
    "reference_rdp_epsilon",
    "dense_divergences",
    "reference_ye_shokri",
]
