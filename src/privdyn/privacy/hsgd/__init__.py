"""Renyi privacy of noisy one-pass SGD on least squares through neighbouring homogenized-SGD laws (surrogate).

Implements the privacy side of Lin, Kolaczyk, Smith, Paquette, "High-Dimensional Privacy-Utility Dynamics of Noisy SGD
on Least Squares" (arXiv 2510.16687; cited as "the paper", with its equation and theorem numbers); where privdyn departs
from the printed paper, ``docs/hsgd.md`` says how and why. Names: ``ridge`` δ, ``noise_std`` σ, ``learning_rate`` γ(t),
``step_size`` η = γ/d, ``renyi_order`` α; a record is a feature vector a and a label b.

**What the numbers are.** Every HSGD number here is labelled ``surrogate``: it is the Renyi divergence between two
*linearized homogenized-SGD* laws (a diffusion approximation of noisy SGD, exact only as d → ∞ by the paper's
Conjecture 3.1), taken over a *data-dependent* set of neighbouring pairs (records of the observed dataset, not the
supremum over a data domain). It is not a worst-case differential-privacy guarantee. The paper's "suffix" reading of
Theorem 4.4 is labelled ``lower_bound``. The exact Gaussian law of discrete noisy SGD for a fixed data order
(:func:`exact_sgd_law`, :func:`exact_sgd_renyi`; not in the paper) is labelled ``exact``: the ground truth the surrogate
is compared with. Measured on a Gaussian design in the paper's experimental scaling (tr Σ = 1/3, step_size 0.05, n =
1.5d; tests/privacy/test_hsgd_privacy.py): for the same pair, position and iterate the surrogate was 1-8% *below* the
exact fixed-order divergence at d = 50-400, the gap shrinking with d at short lags (RMS 5.0% at d = 50, 2.3% at d = 200)
and staying near 2-3% at lags of n/3 and more up to d = 400. A surrogate can under-report.

**Neighbouring laws (Lemma C.1, eqs. (11)-(13)).** The differing record is used at SGD step ℓ, embedded at
s = ℓ/d with h = γ(s)/d; before s both processes have the law N(m(s), V(s)) of :class:`privdyn.dynamics.hsgd.HSGDLaw`.
The differentiating update X_{s+} = C_i X_{s−} + h b_i a_i + e, C_i = (1 − hδ)I − h a_i a_iᵀ, e ~ N(0, h²σ²I), then the
linear SDE (9) up to t give, in the eigenbasis of Σ, with c = 1 − hδ, φ = Φ(t, s) = e^{−A(Γ(t) − Γ(s))} (diagonal),

    X_t^{(i)} = X_t^0 + f_i ξ_i,   f_i = hΦa_i,   ξ_i = b_i − a_iᵀX_{s−},

where X_t^0 is the process with the record-free update cX_{s−} + e. Hence V_i(t; s) = K + [f_i, k_i]S_i[f_i, k_i]ᵀ
with the diagonal K = Cov X_t^0 = V(t) − φ²V(s) + φ²(c²V(s) + h²σ²) common to both laws,
k_i = Cov(X_t^0, ξ_i) = −cφV(s)a_i, S_i = [[a_iᵀV(s)a_i, 1], [1, 0]], and m_i(t; s) = m(t) − hΦ∇f(m(s); a_i, b_i),
so the mean gap is Δ = hΦ g_s(θ) with g_s(θ) = a(b − aᵀm(s)) − a'(b' − a'ᵀm(s)).
This is the diagonal-plus-low-rank form of Lemma C.1's covariance with rescaled columns.

**Divergence and argument order (Lemma C.2, eq. (14)).** The paper prints the Gaussian Renyi divergence
with its arguments swapped (its M_α = αV_1 + (1 − α)V_2 gives D_α(P_2 ‖ P_1)). privdyn computes
D_α(P_1 ‖ P_2) with the mixture αV_2 + (1 − α)V_1 (:mod:`privdyn.privacy.divergences`) and the accountants take the
supremum over both orders (``direction="max"``), which does not depend on the convention (the neighbour relation is
symmetric). A mixture that is not positive definite gives D_α = +inf (documented, conservative).

**Fast path: O(m) per (t, s) pair.** K, Φ and V(s) depend on a direction only through its eigen-group, so every inner
product of the whitened columns [f_1, k_1, f_2, k_2] is Σ_g (Σ_{j∈g} a_{ij}a_{kj}) M_g(t, s): the 4×4 Gram matrix costs
O(m) per (t, s) pair (m ≤ d groups; one compiled loop over a batch of pairs). The divergence is then a function of the
Gram matrix only: with Y = blkdiag(w_1S_1, w_2S_2)·Gram for the mixture weights (w_1, w_2) = (1 − α, α), the mean
term is (α/2)eᵀGram(I + Y)⁻¹e with e = (β_1, 0, −β_2, 0), β_i = b_i − a_iᵀm(s), and the log-determinant term is
−[ℓ(I + Y) − αℓ(I + S_2Gram_22) − (1 − α)ℓ(I + S_1Gram_11)]/(2(α − 1)) with ℓ(I + Y) = log det(I + Y) − tr Y. The
traces cancel exactly (weights (1 − α) + α − 1 = 0) and ℓ is evaluated from the characteristic-polynomial
coefficients e_2, e_3, e_4 of Y and the series of log1p(y) − y, so no first-order quantity is subtracted from another:
the common diagonal, whose log-determinant is a sum of d logarithms, cancels analytically. The mixture is positive
definite iff all eigenvalues of I + Y are > 0; they are real (Y is similar to a symmetric matrix), so by Descartes' rule
of signs this holds iff every coefficient e_k(I + Y), k = 1..4, is > 0: a rank-4 check (checking each law's own
capacitance matrix is not enough), without an eigendecomposition. The per-pair :func:`neighboring_laws` /
:func:`renyi_divergence` build the diagonal-plus-low-rank laws explicitly and use
:func:`privdyn.privacy.divergences.renyi_gaussian_lowrank` (O(d)).

**Accountants (Theorems 4.3-4.5, eqs. (15), (21), (24); Lemma C.3).** The position of the differing record is uniform
over the n = ``num_steps`` steps of the pass; a record at step ℓ changes iterate k iff ℓ ≤ k − 1. The mixture bound
gives, on the SGD grid (eq. (15) of Theorem 4.3, with the position mixture of Lemma C.3),

    rdp_epsilon(k) = (1/(α−1)) [ logsumexp({log(n − k)} ∪ {(α−1) max_θ D_α(k; ℓ, θ) : ℓ = 0..k−1}) − log n ],

evaluated in log space. The differing step sits at s = ℓ/d and HSGD then flows for (k − ℓ)/d, one step more than the
k − ℓ − 1 SGD steps that follow it (the paper's embedding; an O(1/d) difference).

*J released iterates* k_1 < … < k_J (Theorem 4.4; eq. (21) misses a "+"): by the Markov property of both
processes, the stacked release for a record at step ℓ has exactly the divergence of the pair (X_{t_q}, X_{t_r}) with
k_q the last release with k_q ≤ ℓ (unchanged by the record) and k_r the first with k_r > ℓ: given X_{t_r}, the later
blocks follow the same kernel in both processes, and given X_{t_q} the earlier ones are independent of the record.
``mode="keep_last_block"`` computes that exact divergence (cross-covariance Cov(X_{t_r}, X_{t_q}) =
Φ(t_r, s)C_iΦ(s, t_q)V(t_q)); ``mode="suffix"`` is the paper's statement that drops X_{t_q}: by data processing
it is at most the true divergence and is labelled ``lower_bound`` (it equals the last-iterate divergence at t_r). *The
average* (Theorem 4.5, eq. (23)-(24)) of all J releases, including the blocks before s (which the paper leaves
undefined; privdyn uses the unperturbed laws with the C_i cross terms), has the same structure with a diagonal common
part.
"""

from __future__ import annotations

from privdyn.privacy.hsgd.common import (
    DIRECTIONS,
    REFERENCE,
    RELEASE_MODES,
    NeighboringLaws,
    NeighboringPairs,
    neighboring_laws,
    renyi_divergence,
    select_pairs,
    sgd_grid_law,
)
from privdyn.privacy.hsgd.divergences import (
    average_divergences,
    rdp_epsilon,
    rdp_epsilon_average,
    rdp_epsilon_releases,
    release_divergences,
    renyi_divergences,
)
from privdyn.privacy.hsgd.exact import ExactSGDLaw, exact_sgd_law, exact_sgd_renyi
from privdyn.privacy.hsgd.mechanism import HSGDMechanism

__all__ = [
    "NeighboringPairs",
    "NeighboringLaws",
    "select_pairs",
    "sgd_grid_law",
    "neighboring_laws",
    "renyi_divergence",
    "renyi_divergences",
    "release_divergences",
    "average_divergences",
    "rdp_epsilon",
    "rdp_epsilon_releases",
    "rdp_epsilon_average",
    "ExactSGDLaw",
    "exact_sgd_law",
    "exact_sgd_renyi",
    "HSGDMechanism",
    "RELEASE_MODES",
    "DIRECTIONS",
    "REFERENCE",
]
