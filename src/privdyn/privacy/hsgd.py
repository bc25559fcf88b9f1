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

import dataclasses
import functools
import math
import weakref
from typing import Any

import numpy as np
from scipy.special import logsumexp

from privdyn import _check
from privdyn.dynamics import hsgd as hsgd_dynamics
from privdyn.dynamics.hsgd import HSGDLaw, HSGDProblem
from privdyn.privacy import divergences
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss
from privdyn.schedules import Constant

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
    "RELEASE_MODES",
    "DIRECTIONS",
    "REFERENCE",
]

REFERENCE = hsgd_dynamics.REFERENCE
RELEASE_MODES = ("keep_last_block", "suffix")
"""Modes of :func:`rdp_epsilon_releases` (ARCHITECTURE.md ``mode``)."""
DIRECTIONS = ("forward", "backward", "max")
"""``forward``: D_α(P_1 ‖ P_2) (P_1 the law with the first record); ``backward``: D_α(P_2 ‖ P_1); ``max``: both."""

_SURROGATE_NOTE = ("surrogate: Renyi divergence of linearized homogenized-SGD laws (a diffusion approximation of noisy "
                   "SGD) over a data-dependent set of neighbouring pairs; not a worst-case DP guarantee")
# Below this magnitude log1p(y) − y is evaluated by its series (as in privacy.divergences).
_SERIES_CUTOFF = 0.1
_SERIES_TERMS = 26
# A coefficient of the characteristic polynomial of I + Y must exceed this (relative) to count as positive.
_PD_RTOL = 32 * np.finfo(float).eps
# Doubles per temporary (pairs × groups) table of the fast path.
_CHUNK_ELEMENTS = 1 << 21


# ----------------------------------------------------------------------------------------------------------------
# Neighbouring pairs
# ----------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class NeighboringPairs:
    """P neighbouring pairs θ = ((a, b), (a', b')): the record of one dataset and its replacement in the other.

    Features are in the *problem's basis*: the original basis of a problem built with
    :meth:`~privdyn.dynamics.hsgd.HSGDProblem.from_covariance` (rotated internally by its eigenvectors), the
    eigen-coordinates of one built with ``from_coordinates``.

    Attributes:
        features, other_features: (P, d) a and a'.
        labels, other_labels: (P,) b and b'.
        indices: (P, 2) dataset indices (i, j) of the pair when chosen by :func:`select_pairs`, else None.
        scores: (P,) the selection score ‖g(θ)‖₂, else None.
    """

    features: np.ndarray
    labels: np.ndarray
    other_features: np.ndarray
    other_labels: np.ndarray
    indices: np.ndarray | None = None
    scores: np.ndarray | None = None

    def __post_init__(self) -> None:
        feats = np.atleast_2d(np.asarray(self.features, dtype=float))
        other = np.atleast_2d(np.asarray(self.other_features, dtype=float))
        labels = np.atleast_1d(np.asarray(self.labels, dtype=float))
        other_labels = np.atleast_1d(np.asarray(self.other_labels, dtype=float))
        if feats.ndim != 2 or feats.shape != other.shape or feats.shape[0] == 0:
            raise ValueError("features and other_features must both have shape (P, d) with P >= 1; got "
                             f"{feats.shape} and {other.shape}.")
        if labels.shape != (feats.shape[0],) or other_labels.shape != labels.shape:
            raise ValueError(f"labels and other_labels must have shape (P,) = ({feats.shape[0]},); got "
                             f"{labels.shape} and {other_labels.shape}.")
        _check.finite(features=feats, other_features=other, labels=labels, other_labels=other_labels)
        for name, value in (("features", feats), ("other_features", other), ("labels", labels),
                            ("other_labels", other_labels)):
            value = np.array(value)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def num_pairs(self) -> int:
        return int(self.features.shape[0])

    @property
    def dim(self) -> int:
        return int(self.features.shape[1])

    @classmethod
    def single(cls, feature: Any, label: float, other_feature: Any, other_label: float) -> NeighboringPairs:
        """One pair ((a, b), (a', b'))."""
        return cls(features=np.asarray(feature, dtype=float)[None, :], labels=np.asarray([label], dtype=float),
                   other_features=np.asarray(other_feature, dtype=float)[None, :],
                   other_labels=np.asarray([other_label], dtype=float))

    def swapped(self) -> NeighboringPairs:
        """The pairs with the two records exchanged."""
        return NeighboringPairs(features=self.other_features, labels=self.other_labels, other_features=self.features,
                                other_labels=self.labels,
                                indices=None if self.indices is None else self.indices[:, ::-1],
                                scores=self.scores)


def _top_k(scores_fn: Any, n: int, num_pairs: int, symmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    """Top ``num_pairs`` (i, j), i ≠ j (i < j if ``symmetric``), of the squared scores ``scores_fn(lo, hi)``."""
    rows = max(1, min(n, _CHUNK_ELEMENTS // max(n, 1)))
    best_score = np.empty(0)
    best_index = np.empty((0, 2), dtype=np.int64)
    cols = np.arange(n)
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        block = scores_fn(lo, hi)  # (hi − lo, n) squared norms
        rid = np.arange(lo, hi)[:, None]
        invalid = (cols[None, :] <= rid) if symmetric else (cols[None, :] == rid)
        block = np.where(invalid, -np.inf, block)
        flat = block.ravel()
        take = min(num_pairs, flat.size)
        part = np.argpartition(-flat, take - 1)[:take]
        part = part[np.isfinite(flat[part])]
        idx = np.stack([lo + part // n, part % n], axis=1)
        best_score = np.concatenate([best_score, flat[part]])
        best_index = np.concatenate([best_index, idx])
        if best_score.size > num_pairs:
            keep = np.lexsort((best_index[:, 1], best_index[:, 0], -best_score))[:num_pairs]
            best_score, best_index = best_score[keep], best_index[keep]
    order = np.lexsort((best_index[:, 1], best_index[:, 0], -best_score))
    return best_index[order], np.sqrt(np.maximum(best_score[order], 0.0))


def select_pairs(features: Any, labels: Any, *, ridge: float, num_pairs: int, gap: str = "proxy",
                 mean: Any = None) -> NeighboringPairs:
    """The ``num_pairs`` pairs of records of a dataset with the largest gradient gap (Section 5 of the paper).

    * ``gap="proxy"`` — the paper's score ‖g(θ)‖₂ with g(θ) = (b a − b' a') − (a aᵀ − a' a'ᵀ + δI)1_d over all n(n − 1)
      *ordered* pairs (it is not symmetric). It is the mean gap at s+ with the mean m(s) replaced by the all-ones vector
      1_d of the data's basis, and keeps a δI1_d term that cancels in the true gap; reproduced as written. *
      ``gap="exact"`` — the true gap ‖g_s(θ)‖₂, g_s(θ) = a(b − aᵀm) − a'(b' − a'ᵀm) at the given ``mean`` m = m(s) (the
      difference of the differentiating updates of eqs. (11)-(13)). It is symmetric in the two records, so each
      unordered pair (i < j) is listed once (the accountants
      evaluate both orders).

    Gram-matrix trick: with w_i = b_i a_i − (a_iᵀ1)a_i, ‖g_ij‖² = ‖w_i‖² + ‖w_j‖² − 2w_iᵀw_j
    − 2δ1ᵀ(w_i − w_j) + δ²d (proxy), and with z_i = a_i(b_i − a_iᵀm), ‖g_ij‖² = ‖z_i‖² + ‖z_j‖² − 2z_iᵀz_j (exact):
    O(n²d) in row blocks of bounded memory, keeping a running top-K. Ties are broken by (i, j).

    Args:
        features: (n, d) the records' features a_i (the basis in which 1_d is taken for the proxy).
        labels: (n,) the labels b_i.
        ridge: δ ≥ 0 (enters the proxy only).
        num_pairs: K ≥ 1 (capped at the number of available pairs).
        gap: ``"proxy"`` or ``"exact"``.
        mean: (d,) m(s) in the features' basis; required for ``gap="exact"`` (e.g. ``law.mean_in_original_basis()[ℓ]``).

    Returns:
        :class:`NeighboringPairs` with ``indices`` (K, 2) = (i, j) (record i replaced by record j) and ``scores``
        ‖g‖₂, by decreasing score. The selection is data-dependent: a sup over it is a surrogate, not the sup over
        the data domain.
    """
    a = np.asarray(features, dtype=float)
    b = np.asarray(labels, dtype=float)
    if a.ndim != 2 or a.shape[0] < 2:
        raise ValueError(f"features must have shape (n, d) with n >= 2; got {a.shape}.")
    n, d = a.shape
    if b.shape != (n,):
        raise ValueError(f"labels must have shape (n,) = ({n},); got {b.shape}.")
    _check.finite(features=a, labels=b)
    _check.non_negative(ridge=ridge)
    _check.integer(minimum=1, num_pairs=num_pairs)
    _check.one_of(("proxy", "exact"), gap=gap)
    ridge = float(ridge)
    if gap == "proxy":
        w = b[:, None] * a - a.sum(axis=1)[:, None] * a
        sums = w.sum(axis=1)
        sq = np.einsum("ij,ij->i", w, w)

        def scores(lo: int, hi: int) -> np.ndarray:
            return (sq[lo:hi, None] + sq[None, :] - 2.0 * (w[lo:hi] @ w.T)
                    - 2.0 * ridge * (sums[lo:hi, None] - sums[None, :]) + ridge**2 * d)

        symmetric = False
        total = n * (n - 1)
    else:
        if mean is None:
            raise ValueError("mean (m(s), shape (d,)) is required for gap='exact'.")
        m = np.asarray(mean, dtype=float)
        if m.shape != (d,):
            raise ValueError(f"mean must have shape (d,) = ({d},); got {m.shape}.")
        _check.finite(mean=m)
        z = (b - a @ m)[:, None] * a
        sq = np.einsum("ij,ij->i", z, z)

        def scores(lo: int, hi: int) -> np.ndarray:
            return sq[lo:hi, None] + sq[None, :] - 2.0 * (z[lo:hi] @ z.T)

        symmetric = True
        total = n * (n - 1) // 2
    index, score = _top_k(scores, n, min(int(num_pairs), total), symmetric)
    return NeighboringPairs(features=a[index[:, 0]], labels=b[index[:, 0]], other_features=a[index[:, 1]],
                            other_labels=b[index[:, 1]], indices=index, scores=score)


# ----------------------------------------------------------------------------------------------------------------
# The law on the SGD grid
# ----------------------------------------------------------------------------------------------------------------


def _require_stable(problem: HSGDProblem) -> None:
    if not isinstance(problem.learning_rate, Constant):
        return
    kappa = hsgd_dynamics.kernel_mass(problem)
    if kappa >= 1:
        limit = hsgd_dynamics.max_stable_learning_rate(problem.spectrum, ridge=problem.ridge)
        gamma = float(problem.learning_rate.initial_learning_rate)
        raise ValueError(
            f"learning_rate is unstable: κ_K = γ/(2d)·Σ_j λ_j²/(λ_j + ridge) = {kappa:.6g} >= 1 "
            f"({100 * (kappa - 1):.3g}% above the stability limit); the constant learning rate γ = {gamma:.6g} must be "
            f"< {limit:.6g} "
            f"(step_size < {limit / problem.dim:.6g}).")


def sgd_grid_law(problem: HSGDProblem, num_steps: int, *, refinements: int = 2) -> HSGDLaw:
    """The law N(m(t), V(t)) of linearized HSGD (eq. (10)) on the SGD grid t_k = k/d, k = 0..``num_steps``.

    :func:`privdyn.dynamics.hsgd.linearized_law` with ``max_step = 1/d`` and Romberg ``refinements`` (the
    accountants need the law exactly at the grid times). Raises ``ValueError`` naming ``learning_rate`` when a
    constant learning rate is unstable (κ_K ≥ 1, with the margin), and ``noise_std`` when it is 0 (no privacy).
    """
    _check.integer(minimum=1, num_steps=num_steps)
    _check.integer(minimum=0, refinements=refinements)
    _require_privacy_noise(problem)
    _require_stable(problem)
    d = problem.dim
    times = np.arange(int(num_steps) + 1) / d
    return hsgd_dynamics.linearized_law(problem, times, max_step=1.0 / d, refinements=int(refinements))


def _require_privacy_noise(problem: HSGDProblem) -> None:
    if not problem.noise_std > 0:
        raise ValueError(f"noise_std must be > 0 for privacy accounting (with noise_std = 0 the laws are degenerate); "
                         f"got noise_std={problem.noise_std!r}.")


@dataclasses.dataclass(frozen=True)
class _Grid:
    """Validated law on the SGD grid, per-group arrays, and per-step constants."""

    law: HSGDLaw
    gamma_int: np.ndarray  # (K+1,)
    variance: np.ndarray  # (K+1, m)
    rate: np.ndarray  # (m,) a_g = λ_g + ridge
    step: np.ndarray  # (K+1,) h_ℓ = γ(ℓ/d)/d
    shrink: np.ndarray  # (K+1,) c_ℓ = 1 − h_ℓ·ridge
    noise2: float
    last: int


# Validated grids, keyed by the (immutable) law object.
_GRID_CACHE: weakref.WeakKeyDictionary[HSGDLaw, _Grid] = weakref.WeakKeyDictionary()


def _grid(law: HSGDLaw) -> _Grid:
    if not isinstance(law, HSGDLaw):
        raise TypeError(f"law must be a privdyn.dynamics.hsgd.HSGDLaw; got {type(law).__name__}.")
    cached = _GRID_CACHE.get(law)
    if cached is not None:
        return cached
    grid = _validated_grid(law)
    _GRID_CACHE[law] = grid
    return grid


def _validated_grid(law: HSGDLaw) -> _Grid:
    problem = law.problem
    _require_privacy_noise(problem)
    d = problem.dim
    times = np.asarray(law.times)
    steps = np.arange(times.size)
    if times[0] != 0.0 or not np.allclose(times * d, steps, rtol=0, atol=1e-9 * max(1, times.size)):
        raise ValueError("law must be computed on the SGD grid t_k = k/d, k = 0, 1, ..., K (use sgd_grid_law).")
    variance = np.asarray(law.group_variance, dtype=float)
    if not np.all(np.isfinite(variance)) or np.any(variance < 0):
        raise ValueError("law.group_variance must be finite and >= 0 (V(t) must be a positive semi-definite "
                         f"covariance); got min {float(np.nanmin(variance)):.6g}.")
    step = np.asarray(problem.learning_rate.value(times), dtype=float) / d
    return _Grid(law=law, gamma_int=np.asarray(law.integrated_learning_rate, dtype=float),
                 variance=variance, rate=problem.hessian_eigenvalues.astype(float),
                 step=step, shrink=1.0 - step * problem.ridge, noise2=problem.noise_std**2, last=times.size - 1)


def _renyi_order(renyi_order: Any) -> float:
    _check.scalar(renyi_order=renyi_order)
    _check.in_range(1.0, math.inf, closed="neither", renyi_order=renyi_order)
    return float(renyi_order)


@dataclasses.dataclass(frozen=True)
class _PairData:
    """Eigen-coordinates of the pairs and their group sums."""

    a1: np.ndarray  # (P, d)
    a2: np.ndarray  # (P, d)
    b1: np.ndarray  # (P,)
    b2: np.ndarray  # (P,)
    sums: np.ndarray  # (m, 3P): Σ_{j∈g} a1a1, a1a2, a2a2 for each pair, pair-major


def _pair_data(law: HSGDLaw, pairs: NeighboringPairs) -> _PairData:
    if not isinstance(pairs, NeighboringPairs):
        raise TypeError(f"pairs must be NeighboringPairs; got {type(pairs).__name__}.")
    problem = law.problem
    if pairs.dim != problem.dim:
        raise ValueError(f"pairs must have dimension d = {problem.dim}; got {pairs.dim}.")
    if problem.x0_coordinates is None:
        raise ValueError("the law has no mean: build the problem with HSGDProblem.from_coordinates or "
                         "from_covariance.")
    rot = problem.eigenvectors
    a1 = pairs.features if rot is None else pairs.features @ rot
    a2 = pairs.other_features if rot is None else pairs.other_features @ rot
    groups, m = problem.spectrum.groups, problem.spectrum.num_groups
    cols = []
    for p in range(pairs.num_pairs):
        for prod in (a1[p] * a1[p], a1[p] * a2[p], a2[p] * a2[p]):
            cols.append(np.bincount(groups, weights=prod, minlength=m))
    return _PairData(a1=a1, a2=a2, b1=np.asarray(pairs.labels), b2=np.asarray(pairs.other_labels),
                     sums=np.stack(cols, axis=1))


# ----------------------------------------------------------------------------------------------------------------
# Per-pair laws (explicit, diagonal plus low rank)
# ----------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class NeighboringLaws:
    """The two laws N(mean1, cov1), N(mean2, cov2) of X_t after the differentiating update (eq. (13), Lemma C.1).

    In the eigen-coordinates of Σ; ``cov1`` and ``cov2`` are diagonal plus rank 2 with a common diagonal (module
    docstring). ``guarantee`` is ``surrogate``.
    """

    mean1: np.ndarray
    cov1: divergences.DiagonalPlusLowRank
    mean2: np.ndarray
    cov2: divergences.DiagonalPlusLowRank
    iterate: int
    position: int
    guarantee: Guarantee = Guarantee.SURROGATE


def _check_pair_index(grid: _Grid, iterate: Any, position: Any) -> tuple[int, int]:
    _check.integer(minimum=0, iterate=iterate, position=position)
    k, ell = int(iterate), int(position)
    if k > grid.last:
        raise ValueError(f"iterate must be <= {grid.last} (the last time of the law); got iterate={k}.")
    if ell > k:
        raise ValueError(f"position must be <= iterate = {k} (a record used after iterate k does not change it); got "
                         f"position={ell}.")
    return k, ell


def neighboring_laws(law: HSGDLaw, pairs: NeighboringPairs, *, iterate: int, position: int,
                     pair: int = 0) -> NeighboringLaws:
    """The neighbouring HSGD laws at t = iterate/d for the record of ``pairs[pair]`` used at step ``position``.

    Eqs. (11)-(13) / Lemma C.1 with s = position/d: m_i = m(t) − hΦ(t, s)∇f(m(s); a_i, b_i),
    V_i = K + [f_i, k_i]S_i[f_i, k_i]ᵀ (module docstring). ``position == iterate`` gives the law right after the
    update (t = s+). O(d).
    """
    grid = _grid(law)
    k, ell = _check_pair_index(grid, iterate, position)
    data = _pair_data(law, pairs)
    _check.integer(minimum=0, pair=pair)
    if pair >= pairs.num_pairs:
        raise ValueError(f"pair must be < {pairs.num_pairs}; got pair={pair}.")
    problem = law.problem
    groups = problem.spectrum.groups
    h, c = grid.step[ell], grid.shrink[ell]
    phi = np.exp(-grid.rate * (grid.gamma_int[k] - grid.gamma_int[ell]))[groups]
    vs, vt = grid.variance[ell][groups], grid.variance[k][groups]
    fresh = np.maximum(vt - phi**2 * vs, 0.0)
    diag = fresh + phi**2 * (c * c * vs + h * h * grid.noise2)
    ms, mt = law.mean[ell], law.mean[k]
    out = []
    for a, b in ((data.a1[pair], data.b1[pair]), (data.a2[pair], data.b2[pair])):
        grad = a * (a @ ms - b) + problem.ridge * ms
        mean = mt - h * phi * grad
        factor = np.stack([h * phi * a, -c * phi * vs * a], axis=1)
        core = np.array([[float(a @ (vs * a)), 1.0], [1.0, 0.0]])
        out.append((mean, divergences.DiagonalPlusLowRank.from_symmetric_core(diagonal=diag, factor=factor,
                                                                              core=core)))
    return NeighboringLaws(mean1=out[0][0], cov1=out[0][1], mean2=out[1][0], cov2=out[1][1], iterate=k,
                           position=ell)


def renyi_divergence(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, iterate: int, position: int,
                     pair: int = 0, direction: str = "max") -> PrivacyLoss:
    """D_α(t; s, θ) of eq. (14) with the correct argument order, for one pair and one (t, s) (labelled surrogate).

    Builds :func:`neighboring_laws` and evaluates :func:`privdyn.privacy.divergences.renyi_gaussian_lowrank`
    (``direction="forward"``: D_α(P_1 ‖ P_2), ``"backward"``: D_α(P_2 ‖ P_1), ``"max"``: the larger). The paper's
    printed formula (Lemma C.2) is the ``backward`` value. +inf when the mixture is not positive definite; 0 when
    ``position > iterate`` (s > t). Surrogate: a divergence of diffusion-approximation laws for one pair of records,
    not a worst-case DP guarantee.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(DIRECTIONS, direction=direction)
    _check.integer(minimum=0, iterate=iterate, position=position)
    if int(position) > int(iterate):  # s > t: the two laws coincide (Theorem 4.3)
        _check_pair_index(_grid(law), iterate, iterate)
        return PrivacyLoss(value=0.0, guarantee=Guarantee.SURROGATE, quantity="renyi_divergence",
                           source=REFERENCE + ", Theorem 4.3 (s > t); " + _SURROGATE_NOTE)
    laws = neighboring_laws(law, pairs, iterate=iterate, position=position, pair=pair)
    values = []
    if direction in ("forward", "max"):
        values.append(divergences.renyi_gaussian_lowrank(alpha, mean1=laws.mean1, cov1=laws.cov1, mean2=laws.mean2,
                                                         cov2=laws.cov2))
    if direction in ("backward", "max"):
        values.append(divergences.renyi_gaussian_lowrank(alpha, mean1=laws.mean2, cov1=laws.cov2, mean2=laws.mean1,
                                                         cov2=laws.cov1))
    return PrivacyLoss(value=max(values), guarantee=Guarantee.SURROGATE, quantity="renyi_divergence",
                       neighboring=NeighboringRelation.REPLACE_ONE,
                       source=REFERENCE + ", eq. (14) with the arguments in the correct order; " + _SURROGATE_NOTE)


# ----------------------------------------------------------------------------------------------------------------
# Fast path: Gram-matrix moments per group, then a 4×4 kernel per pair
# ----------------------------------------------------------------------------------------------------------------


def _gram_sums(k_idx: Any, l_idx: Any, q_idx: Any, gamma_int: Any, var: Any, rate: Any, step: Any, shrink: Any,
               noise2: Any, sums_t: Any, out: Any) -> None:  # pragma: no cover
    """Contracted Gram entries out[t, b, c] = Σ_g M_t,g(b)·sums_t[c, g] for the blocks (X_{t_q}, X_{t_k}), s = t_l.

    M_t (t = ff, fk, kk) are the per-group bilinear forms of the whitened columns. q < 0: the last iterate X_{t_k}
    alone, whitened by the common variance K = V(t) − φ²V(s) + φ²(c²V(s) + h²σ²). q ≥ 0: the pair (X_{t_q}, X_{t_k})
    with t_q ≤ s < t_k, whitened by the innovation form of the Markov chain X_{t_q} → X⁰_{t_k}.
    Shapes: k_idx, l_idx, q_idx (B,); var (K+1, m); rate (m,); sums_t (C, m); out (3, B, C).
    """
    num = k_idx.size
    m = rate.size
    cols = sums_t.shape[0]
    mff = np.empty(m)
    mfc = np.empty(m)
    mcc = np.empty(m)
    for b in range(num):
        k = k_idx[b]
        ell = l_idx[b]
        q = q_idx[b]
        h = step[ell]
        c = shrink[ell]
        lag = gamma_int[k] - gamma_int[ell]
        pre_lag = gamma_int[ell] - gamma_int[q] if q >= 0 else 0.0
        for g in range(m):
            phi2 = math.exp(-2.0 * rate[g] * lag)
            vs = var[ell, g]
            fresh_t = max(var[k, g] - phi2 * vs, 0.0)
            pre = 0.0
            fresh_s = vs
            if q >= 0:
                pre = math.exp(-2.0 * rate[g] * pre_lag) * var[q, g]
                fresh_s = max(vs - pre, 0.0)
            w = phi2 / (fresh_t + phi2 * (c * c * fresh_s + h * h * noise2))
            mff[g] = h * h * w
            mfc[g] = -h * c * fresh_s * w
            mcc[g] = c * c * fresh_s * fresh_s * w + pre
        for col in range(cols):
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            for g in range(m):
                a = sums_t[col, g]
                s0 += mff[g] * a
                s1 += mfc[g] * a
                s2 += mcc[g] * a
            out[0, b, col] = s0
            out[1, b, col] = s1
            out[2, b, col] = s2


def _log1p_minus_identity(y: Any) -> Any:  # pragma: no cover (compiled)
    if abs(y) <= _SERIES_CUTOFF:
        acc = 0.0
        for k in range(_SERIES_TERMS + 1, 1, -1):
            acc = acc * y + (-1.0) ** (k + 1) / k
        return acc * y * y
    return math.log1p(y) - y


def _minors(y: Any) -> Any:  # pragma: no cover (compiled)
    """e1..e4 of a 4×4 matrix (sums of principal minors)."""
    e1 = y[0, 0] + y[1, 1] + y[2, 2] + y[3, 3]
    e2 = 0.0
    for i in range(4):
        for j in range(i + 1, 4):
            e2 += y[i, i] * y[j, j] - y[i, j] * y[j, i]
    e3 = 0.0
    for i in range(4):
        for j in range(i + 1, 4):
            for k in range(j + 1, 4):
                e3 += (y[i, i] * (y[j, j] * y[k, k] - y[j, k] * y[k, j])
                       - y[i, j] * (y[j, i] * y[k, k] - y[j, k] * y[k, i])
                       + y[i, k] * (y[j, i] * y[k, j] - y[j, j] * y[k, i]))
    e4 = 0.0
    for c in range(4):
        # cofactor expansion along row 0
        p = 1 if c == 0 else 0
        q = 2 if c <= 1 else 1
        r = 3 if c <= 2 else 2
        minor = (y[1, p] * (y[2, q] * y[3, r] - y[2, r] * y[3, q])
                 - y[1, q] * (y[2, p] * y[3, r] - y[2, r] * y[3, p])
                 + y[1, r] * (y[2, p] * y[3, q] - y[2, q] * y[3, p]))
        e4 += (-1.0) ** c * y[0, c] * minor
    return e1, e2, e3, e4


def _one_order(gram: Any, var1: Any, var2: Any, e: Any, alpha: Any, w1: Any, w2: Any, y: Any, work: Any,
               z: Any) -> Any:  # pragma: no cover (compiled)
    """D_α for the mixture weights (w1, w2) on the two laws: (1 − α, α) is D_α(P_1‖P_2), (α, 1 − α) the reverse."""
    for col in range(4):
        y[0, col] = w1 * (var1 * gram[0, col] + gram[1, col])
        y[1, col] = w1 * gram[0, col]
        y[2, col] = w2 * (var2 * gram[2, col] + gram[3, col])
        y[3, col] = w2 * gram[2, col]
    e1, e2, e3, e4 = _minors(y)
    scale = 1.0
    for i in range(4):
        for j in range(4):
            scale += abs(y[i, j])
    # coefficients of the characteristic polynomial of I + Y: all > 0 iff I + Y (hence the mixture) is PD
    coef = (4.0 + e1, 6.0 + 3.0 * e1 + e2, 4.0 + 3.0 * e1 + 2.0 * e2 + e3, 1.0 + e1 + e2 + e3 + e4)
    binom = (4.0, 6.0, 4.0, 1.0)
    for k in range(4):
        if not coef[k] > _PD_RTOL * binom[k] * scale ** (k + 1):
            return math.inf
    rest = e2 + e3 + e4
    mix = _log1p_minus_identity(e1 + rest) + rest
    # 2×2 blocks: e1 = v G00 + 2 G01, e2 = det(S) det(G_ii) = −(G00 G11 − G01²)
    d1 = -(gram[0, 0] * gram[1, 1] - gram[0, 1] * gram[0, 1])
    l1 = _log1p_minus_identity(var1 * gram[0, 0] + 2.0 * gram[0, 1] + d1) + d1
    d2 = -(gram[2, 2] * gram[3, 3] - gram[2, 3] * gram[2, 3])
    l2 = _log1p_minus_identity(var2 * gram[2, 2] + 2.0 * gram[2, 3] + d2) + d2
    # the weight of law i's log det is −w_i (weights sum: 1 − w1 − w2 = 0), the traces cancel
    logdet = -(mix - w1 * l1 - w2 * l2) / (2.0 * (alpha - 1.0))
    if logdet < 0.0:
        logdet = 0.0
    # mean term: (α/2) eᵀ G (I + Y)⁻¹ e by Gaussian elimination with partial pivoting
    for i in range(4):
        for j in range(4):
            work[i, j] = y[i, j] + (1.0 if i == j else 0.0)
        work[i, 4] = e[i]
    for col in range(4):
        piv = col
        for r in range(col + 1, 4):
            if abs(work[r, col]) > abs(work[piv, col]):
                piv = r
        if piv != col:
            for j in range(5):
                tmp = work[col, j]
                work[col, j] = work[piv, j]
                work[piv, j] = tmp
        for r in range(col + 1, 4):
            f = work[r, col] / work[col, col]
            for j in range(col, 5):
                work[r, j] -= f * work[col, j]
    for i in range(3, -1, -1):
        acc = work[i, 4]
        for j in range(i + 1, 4):
            acc -= work[i, j] * z[j]
        z[i] = acc / work[i, i]
    quad = 0.0
    for i in range(4):
        gz = 0.0
        for j in range(4):
            gz += gram[i, j] * z[j]
        quad += e[i] * gz
    if quad < 0.0:
        quad = 0.0
    return 0.5 * alpha * quad + logdet


def _pair_kernel(x: Any, var_a: Any, beta: Any, alpha: Any, forward: Any,
                 backward: Any) -> None:  # pragma: no cover (compiled)
    """Both orders of D_α for every (pair-of-times b, neighbouring pair p) from the contracted moments.

    x: (3, B, 3P) with x[t, b, 3p + c] = Σ_g A_c,g M_t,g (t: ff, fk, kk; c: a1a1, a1a2, a2a2); var_a, beta: (B, P, 2).
    """
    num = x.shape[1]
    npairs = var_a.shape[1]
    gram = np.empty((4, 4))
    y = np.empty((4, 4))
    work = np.empty((4, 5))
    z = np.empty(4)
    e = np.zeros(4)
    for b in range(num):
        for p in range(npairs):
            base = 3 * p
            g00 = x[0, b, base]
            g01 = x[1, b, base]
            g11 = x[2, b, base]
            g02 = x[0, b, base + 1]
            g03 = x[1, b, base + 1]
            g13 = x[2, b, base + 1]
            g22 = x[0, b, base + 2]
            g23 = x[1, b, base + 2]
            g33 = x[2, b, base + 2]
            gram[0, 0] = g00
            gram[0, 1] = g01
            gram[1, 0] = g01
            gram[1, 1] = g11
            gram[0, 2] = g02
            gram[2, 0] = g02
            gram[0, 3] = g03
            gram[3, 0] = g03
            gram[1, 2] = g03
            gram[2, 1] = g03
            gram[1, 3] = g13
            gram[3, 1] = g13
            gram[2, 2] = g22
            gram[2, 3] = g23
            gram[3, 2] = g23
            gram[3, 3] = g33
            e[0] = beta[b, p, 0]
            e[2] = -beta[b, p, 1]
            v1 = var_a[b, p, 0]
            v2 = var_a[b, p, 1]
            forward[b, p] = _one_order(gram, v1, v2, e, alpha, 1.0 - alpha, alpha, y, work, z)
            backward[b, p] = _one_order(gram, v1, v2, e, alpha, alpha, 1.0 - alpha, y, work, z)


@functools.cache
def _compiled() -> tuple[Any, Any]:
    """The fast-path loops compiled by numba (on first use; cached on disk)."""
    import numba

    jit = functools.partial(numba.njit, cache=True, nogil=True)
    # reassociated (SIMD) sums over the groups; deterministic for a given build
    gram_sums = numba.njit(cache=True, nogil=True, fastmath=True)(_gram_sums)
    log1p_mi = jit(_log1p_minus_identity)
    minors = jit(_minors)
    glb = {"_log1p_minus_identity": log1p_mi, "_minors": minors}
    one_order = _rebind(_one_order, glb)
    one_order_jit = jit(one_order)
    kernel = jit(_rebind(_pair_kernel, {"_one_order": one_order_jit}))
    return gram_sums, kernel


def _rebind(fn: Any, extra: dict[str, Any]) -> Any:
    """``fn`` with some module globals replaced (so that compiled callees are called from compiled code)."""
    import types

    namespace = dict(fn.__globals__)
    namespace.update(extra)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def _pair_tables(grid: _Grid, data: _PairData, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(K+1, P, 2) a_iᵀV(s)a_i and β_i = b_i − a_iᵀm(s) at the grid times s (only ``rows`` filled when given)."""
    npairs = data.b1.size
    var_sums = data.sums.reshape(-1, npairs, 3)  # (m, P, 3)
    var_a = np.zeros((grid.last + 1, npairs, 2))
    beta = np.zeros((grid.last + 1, npairs, 2))
    rows = np.arange(grid.last + 1) if rows is None else np.unique(rows)
    variance, mean = grid.variance[rows], np.asarray(grid.law.mean)[rows]
    var_a[rows] = np.stack([variance @ var_sums[:, :, 0], variance @ var_sums[:, :, 2]], axis=2)
    beta[rows] = np.stack([data.b1[None, :] - mean @ data.a1.T, data.b2[None, :] - mean @ data.a2.T], axis=2)
    return var_a, beta


def _divergence_batch(grid: _Grid, data: _PairData, alpha: float, k_idx: np.ndarray, l_idx: np.ndarray,
                      q_idx: np.ndarray, var_a: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward D_α, shapes (B, P), for blocks (q, k) at positions l (q = −1: last iterate only)."""
    gram_sums, kernel = _compiled()
    num = k_idx.size
    npairs = data.b1.size
    forward, backward = np.empty((num, npairs)), np.empty((num, npairs))
    sums_t = np.ascontiguousarray(data.sums.T)
    rows = max(1, _CHUNK_ELEMENTS // max(3 * sums_t.shape[0], 1))
    for lo in range(0, num, rows):
        hi = min(num, lo + rows)
        x = np.empty((3, hi - lo, sums_t.shape[0]))
        gram_sums(k_idx[lo:hi], l_idx[lo:hi], q_idx[lo:hi], grid.gamma_int, grid.variance, grid.rate, grid.step,
                  grid.shrink, grid.noise2, sums_t, x)
        ell = l_idx[lo:hi]
        kernel(x, np.ascontiguousarray(var_a[ell]), np.ascontiguousarray(beta[ell]), alpha, forward[lo:hi],
               backward[lo:hi])
    return forward, backward


def _combine(forward: np.ndarray, backward: np.ndarray, direction: str) -> np.ndarray:
    if direction == "forward":
        return forward
    if direction == "backward":
        return backward
    return np.maximum(forward, backward)


def renyi_divergences(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, iterates: Any, positions: Any,
                      direction: str = "max") -> PrivacyLoss:
    """D_α(t_k; s_ℓ, θ) (eq. (14), correct order) for a batch of (k, ℓ) and every pair: the O(m)-per-pair fast path.

    Same quantity as :func:`renyi_divergence` (module docstring, "Fast path"), vectorized over the (k, ℓ) pairs. A
    surrogate: divergences of diffusion-approximation laws on a data-dependent set of pairs, not a worst-case DP
    guarantee. Accuracy: the second-order log-determinant terms are formed without first-order cancellation, so the
    relative error stays at the level of rounding (≈ 1e-13 against the low-rank path of :mod:`divergences` in the
    benchmark) unless both the mean gap and the covariance change are tiny, where it is absolute, ≈ 1e-16 times the
    size of the whitened covariance change.

    Args:
        renyi_order: α > 1.
        law: an :class:`~privdyn.dynamics.hsgd.HSGDLaw` on the SGD grid (:func:`sgd_grid_law`).
        pairs: the neighbouring pairs.
        iterates, positions: integer arrays of one shape (B,), entries in [0, K]; ℓ > k gives 0 (s > t).
        direction: ``"forward"``, ``"backward"`` or ``"max"`` (:data:`DIRECTIONS`).

    Returns:
        :class:`PrivacyLoss` (``surrogate``) with ``value`` of shape (B, P); +inf where the mixture is not PD.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(DIRECTIONS, direction=direction)
    grid = _grid(law)
    k_idx, l_idx = _index_arrays(grid, iterates, positions)
    data = _pair_data(law, pairs)
    var_a, beta = _pair_tables(grid, data, l_idx)
    after = l_idx > k_idx  # the record is used after iterate k: identical laws, D = 0 (Theorem 4.3)
    fwd, bwd = _divergence_batch(grid, data, alpha, np.where(after, l_idx, k_idx), l_idx,
                                 np.full(k_idx.size, -1, dtype=np.int64), var_a, beta)
    fwd[after], bwd[after] = 0.0, 0.0
    return PrivacyLoss(value=_combine(fwd, bwd, direction), guarantee=Guarantee.SURROGATE, quantity="renyi_divergence",
                       source=REFERENCE + ", eq. (14), correct argument order; " + _SURROGATE_NOTE)


def _index_arrays(grid: _Grid, iterates: Any, positions: Any) -> tuple[np.ndarray, np.ndarray]:
    k_idx = np.atleast_1d(np.asarray(iterates))
    l_idx = np.atleast_1d(np.asarray(positions))
    _check.integer(minimum=0, iterates=k_idx, positions=l_idx)
    if k_idx.shape != l_idx.shape or k_idx.ndim != 1:
        raise ValueError(f"iterates and positions must be 1-D arrays of one shape; got {k_idx.shape} and "
                         f"{l_idx.shape}.")
    k_idx, l_idx = k_idx.astype(np.int64), l_idx.astype(np.int64)
    if np.any(k_idx > grid.last):
        raise ValueError(f"iterates must be <= {grid.last} (the last time of the law); got {int(k_idx.max())}.")
    return k_idx, l_idx


# ----------------------------------------------------------------------------------------------------------------
# Accountants
# ----------------------------------------------------------------------------------------------------------------


def _mixture(alpha: float, worst: np.ndarray, num_steps: int, affected: int) -> float:
    """(1/(α−1)) [logsumexp({log(n − k)} ∪ (α−1)·worst) − log n] (Lemma C.3 on the SGD grid)."""
    if np.any(np.isinf(worst)):
        return math.inf
    terms = (alpha - 1.0) * worst
    if num_steps > affected:
        terms = np.concatenate(([math.log(num_steps - affected)], terms))
    if terms.size == 0:
        return 0.0
    return max(0.0, (float(logsumexp(terms)) - math.log(num_steps)) / (alpha - 1.0))


def _num_steps(grid: _Grid, num_steps: Any) -> int:
    _check.integer(minimum=1, num_steps=num_steps)
    return int(num_steps)


def rdp_epsilon(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, num_steps: int,
                iterates: Any = None) -> PrivacyLoss:
    """Last-iterate RDP curve of Theorem 4.3, eq. (15), on the SGD grid (labelled ``surrogate``).

    rdp_epsilon(k) = (1/(α−1)) [logsumexp({log(n − k)} ∪ {(α−1) max_θ D_α(k; ℓ, θ) : ℓ < k}) − log n], with D_α the
    correct-order divergence (14) maximized over both orders and the ``pairs`` (module docstring). O(k·m) per iterate
    (the divergences of all positions ℓ < k in one batch).

    This is a diffusion approximation on a data-dependent set of pairs, not a worst-case DP guarantee.

    Args:
        renyi_order: α > 1.
        law: the HSGD law on the SGD grid t_k = k/d up to at least max(iterates) (:func:`sgd_grid_law`).
        pairs: the candidate neighbouring pairs (e.g. :func:`select_pairs`).
        num_steps: n, the dataset size = number of steps of the pass (the differing record's position is uniform
            over the n steps); T = n/d.
        iterates: iterates k ∈ [0, n] (default 0..n).

    Returns:
        :class:`PrivacyLoss` (``surrogate``) with ``value`` (len(iterates),).
    """
    alpha = _renyi_order(renyi_order)
    grid = _grid(law)
    n = _num_steps(grid, num_steps)
    ks = _iterates(grid, n, iterates)
    data = _pair_data(law, pairs)
    var_a, beta = _pair_tables(grid, data)
    out = np.zeros(ks.size)
    for i, k in enumerate(ks.tolist()):
        if k == 0:
            continue
        ell = np.arange(k, dtype=np.int64)
        fwd, bwd = _divergence_batch(grid, data, alpha, np.full(k, k, dtype=np.int64), ell,
                                     np.full(k, -1, dtype=np.int64), var_a, beta)
        out[i] = _mixture(alpha, np.maximum(fwd, bwd).max(axis=1), n, k)
    return PrivacyLoss(value=out, guarantee=Guarantee.SURROGATE, quantity="rdp_epsilon",
                       source=REFERENCE + ", Theorem 4.3 eq. (15) (correct argument order, both orders); "
                              + _SURROGATE_NOTE)


def _iterates(grid: _Grid, n: int, iterates: Any) -> np.ndarray:
    ks = np.arange(n + 1) if iterates is None else np.atleast_1d(np.asarray(iterates))
    _check.integer(minimum=0, iterates=ks)
    ks = ks.astype(np.int64)
    if ks.ndim != 1:
        raise ValueError(f"iterates must be a 1-D array; got shape {ks.shape}.")
    limit = min(n, grid.last)
    if np.any(ks > limit):
        raise ValueError(f"iterates must be <= min(num_steps, last grid index of the law) = {limit}; got "
                         f"{int(ks.max())}.")
    return ks


def _release_iterates(grid: _Grid, n: int, release_iterates: Any) -> np.ndarray:
    ks = np.atleast_1d(np.asarray(release_iterates))
    _check.integer(minimum=1, release_iterates=ks)
    ks = ks.astype(np.int64)
    if ks.ndim != 1 or ks.size == 0:
        raise ValueError(f"release_iterates must be a non-empty 1-D array; got shape {ks.shape}.")
    if np.any(np.diff(ks) <= 0):
        raise ValueError(f"release_iterates must be strictly increasing (release times in order); got {ks.tolist()}.")
    limit = min(n, grid.last)
    if ks[-1] > limit:
        raise ValueError(f"release_iterates must be <= num_steps = {n} (t_J <= T) and within the law "
                         f"(last index {grid.last}); got {int(ks[-1])}.")
    return ks


def release_divergences(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, release_iterates: Any,
                        positions: Any, mode: str = "keep_last_block", direction: str = "max") -> PrivacyLoss:
    """D_α^{[J]} (Theorem 4.4, eq. (20)) of the release X_{t_1}, …, X_{t_J} for records at steps ``positions``.

    ``mode="keep_last_block"``: the exact divergence of the release, = that of (X_{t_q}, X_{t_r}) with k_q the last
    release ≤ ℓ and k_r the first > ℓ (Markov property; module docstring), labelled ``surrogate``.
    ``mode="suffix"``: the paper's suffix (t_r, …, t_J) only (= the last-iterate divergence at t_r), labelled
    ``lower_bound``. Positions ℓ ≥ k_J give 0. Either way a diffusion approximation on a data-dependent set of pairs,
    not a worst-case DP guarantee.

    Returns:
        :class:`PrivacyLoss` with ``value`` (L, P).
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(RELEASE_MODES, mode=mode)
    _check.one_of(DIRECTIONS, direction=direction)
    grid = _grid(law)
    ks = _release_iterates(grid, grid.last, release_iterates)
    ells = np.atleast_1d(np.asarray(positions))
    _check.integer(minimum=0, positions=ells)
    ells = ells.astype(np.int64)
    fwd, bwd = _release_batch(grid, _pair_data(law, pairs), alpha, ks, ells, mode)
    label = Guarantee.LOWER_BOUND if mode == "suffix" else Guarantee.SURROGATE
    return PrivacyLoss(value=_combine(fwd, bwd, direction), guarantee=label, quantity="renyi_divergence",
                       source=REFERENCE + f", Theorem 4.4 eq. (20), mode={mode}; " + _SURROGATE_NOTE)


def _release_batch(grid: _Grid, data: _PairData, alpha: float, ks: np.ndarray, ells: np.ndarray,
                   mode: str) -> tuple[np.ndarray, np.ndarray]:
    npairs = data.b1.size
    fwd, bwd = np.zeros((ells.size, npairs)), np.zeros((ells.size, npairs))
    live = ells < ks[-1]
    if not np.any(live):
        return fwd, bwd
    ell = ells[live]
    first_after = np.searchsorted(ks, ell, side="right")  # r: k_r > ℓ
    k_idx = ks[first_after]
    if mode == "keep_last_block":
        q_idx = np.where(first_after > 0, ks[np.maximum(first_after - 1, 0)], -1).astype(np.int64)
    else:
        q_idx = np.full(ell.size, -1, dtype=np.int64)
    var_a, beta = _pair_tables(grid, data, ell)
    f, b = _divergence_batch(grid, data, alpha, k_idx, ell, q_idx, var_a, beta)
    fwd[live], bwd[live] = f, b
    return fwd, bwd


def rdp_epsilon_releases(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, num_steps: int,
                         release_iterates: Any, mode: str = "keep_last_block") -> PrivacyLoss:
    """RDP of releasing the iterates k_1 < … < k_J (Theorem 4.4, eq. (21) with its missing "+" restored).

    (1/(α−1)) [logsumexp({log(n − k_J)} ∪ {(α−1) max_θ D_α^{[J]}(ℓ, θ) : ℓ < k_J}) − log n], both orders.
    ``mode="keep_last_block"`` (default) uses the exact law of the release and is labelled ``surrogate``;
    ``mode="suffix"`` is the paper's reading, at most the true value, labelled ``lower_bound`` (never a guarantee).
    Surrogate: a diffusion approximation on a data-dependent set of pairs, not a worst-case DP guarantee.

    Raises:
        ValueError: release times not strictly increasing, or beyond num_steps (t_J > T) or the law.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(RELEASE_MODES, mode=mode)
    grid = _grid(law)
    n = _num_steps(grid, num_steps)
    ks = _release_iterates(grid, n, release_iterates)
    ells = np.arange(ks[-1], dtype=np.int64)
    fwd, bwd = _release_batch(grid, _pair_data(law, pairs), alpha, ks, ells, mode)
    value = _mixture(alpha, np.maximum(fwd, bwd).max(axis=1), n, int(ks[-1]))
    label = Guarantee.LOWER_BOUND if mode == "suffix" else Guarantee.SURROGATE
    return PrivacyLoss(value=value, guarantee=label, quantity="rdp_epsilon",
                       source=REFERENCE + f", Theorem 4.4 eq. (21), mode={mode}; " + _SURROGATE_NOTE)


# ----------------------------------------------------------------------------------------------------------------
# Average of the releases (Theorem 4.5)
# ----------------------------------------------------------------------------------------------------------------


def _average_moments(grid: _Grid, ks: np.ndarray, ell: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-group M_ff, M_fk, M_kk (L, m) of the averaged release X̄ = (1/J)Σ_r X_{t_r} for records at steps ``ell``.

    With φ_r = Φ(t_r, s) (post blocks k_r > ℓ) and ψ_p = Φ(s, t_p) (pre blocks): f̄ = (h/J)Σ_post φ_r,
    k̄ = −(1/J)[Σ_pre V(t_p)ψ_p + cV(s)Σ_post φ_r], and the common variance K̄ = (1/J²)Σ_{r,r'} Cov(X⁰_{t_r}, X⁰_{t_r'})
    with Cov = Φ(t_r', t_r)V(t_r) (pre, r ≤ r'), φ_r' c ψ_p V(t_p) (post r', pre p), Φ(t_r', t_r)K_r (post, r ≤ r'),
    K_r = V(t_r) − φ_r²V(s) + φ_r²(c²V(s) + h²σ²).
    """
    j = ks.size
    gi, var, rate = grid.gamma_int, grid.variance, grid.rate
    h = grid.step[ell][:, None]
    c = grid.shrink[ell][:, None]
    vs = var[ell]
    post = ks[None, :] > ell[:, None]  # (L, J)
    f_sum = np.zeros_like(vs)
    k_pre = np.zeros_like(vs)
    cov_blocks = []
    for r in range(j):
        lag = (gi[ks[r]] - gi[ell])[:, None] * rate[None, :]  # Γ(t_r) − Γ(s), either sign
        is_post = post[:, r][:, None]
        phi = np.exp(-np.where(is_post, lag, 0.0))
        psi = np.exp(np.where(is_post, 0.0, lag))  # Φ(s, t_p) = e^{−a(Γ(s) − Γ(t_p))}
        vr = var[ks[r]][None, :]
        f_sum += np.where(is_post, phi, 0.0)
        k_pre += np.where(is_post, 0.0, vr * psi)
        own = np.where(is_post, np.maximum(vr - phi**2 * vs, 0.0) + phi**2 * (c * c * vs + h * h * grid.noise2),
                       vr)
        cov_blocks.append((phi, psi, own, is_post))
    total = np.zeros_like(vs)
    for r in range(j):
        phi_r, psi_r, own_r, post_r = cov_blocks[r]
        total += own_r
        for r2 in range(r + 1, j):
            phi_2, _, _, post_2 = cov_blocks[r2]
            link = np.exp(-(gi[ks[r2]] - gi[ks[r]]) * rate)[None, :]
            # r < r2: pre-pre and post-post propagate the earlier block; post-pre goes through the update
            cross = np.where(post_r, link * own_r, np.where(post_2, phi_2 * c * psi_r * var[ks[r]][None, :],
                                                              link * own_r))
            total += 2.0 * cross
    fbar = h * f_sum / j
    kbar = -(k_pre + c * vs * f_sum) / j
    kvar = total / j**2
    return fbar**2 / kvar, fbar * kbar / kvar, kbar**2 / kvar


def average_divergences(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, release_iterates: Any,
                        positions: Any, direction: str = "max") -> PrivacyLoss:
    """D_α^{avg} (Theorem 4.5, eq. (23), correct order) of the average of the releases, per position (L, P).

    Blocks released before the record's step are the unperturbed ones, with the C_i cross terms (Theorem 4.5 leaves
    them undefined).
    Labelled ``surrogate``: a diffusion approximation on a data-dependent set of pairs, not a worst-case DP guarantee.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(DIRECTIONS, direction=direction)
    grid = _grid(law)
    ks = _release_iterates(grid, grid.last, release_iterates)
    ells = np.atleast_1d(np.asarray(positions))
    _check.integer(minimum=0, positions=ells)
    fwd, bwd = _average_batch(grid, _pair_data(law, pairs), alpha, ks, ells.astype(np.int64))
    return PrivacyLoss(value=_combine(fwd, bwd, direction), guarantee=Guarantee.SURROGATE, quantity="renyi_divergence",
                       source=REFERENCE + ", Theorem 4.5 eq. (23); " + _SURROGATE_NOTE)


def _average_batch(grid: _Grid, data: _PairData, alpha: float, ks: np.ndarray,
                   ells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, kernel = _compiled()
    npairs = data.b1.size
    fwd, bwd = np.zeros((ells.size, npairs)), np.zeros((ells.size, npairs))
    live = np.flatnonzero(ells < ks[-1])
    if live.size == 0:
        return fwd, bwd
    var_a, beta = _pair_tables(grid, data, ells[live])
    m = grid.rate.size
    rows = max(1, _CHUNK_ELEMENTS // max(m * ks.size, 1))
    for lo in range(0, live.size, rows):
        sel = live[lo:lo + rows]
        ell = ells[sel]
        mff, mfc, mcc = _average_moments(grid, ks, ell)
        x = np.stack([mff @ data.sums, mfc @ data.sums, mcc @ data.sums])
        f, b = np.empty((sel.size, npairs)), np.empty((sel.size, npairs))
        kernel(x, np.ascontiguousarray(var_a[ell]), np.ascontiguousarray(beta[ell]), alpha, f, b)
        fwd[sel], bwd[sel] = f, b
    return fwd, bwd


def rdp_epsilon_average(renyi_order: float, law: HSGDLaw, pairs: NeighboringPairs, *, num_steps: int,
                        release_iterates: Any) -> PrivacyLoss:
    """RDP of releasing the average of the iterates k_1 < … < k_J (Theorem 4.5, eq. (24)), labelled ``surrogate``.

    (1/(α−1)) [logsumexp({log(n − k_J)} ∪ {(α−1) max_θ D_α^{avg}(ℓ, θ) : ℓ < k_J}) − log n], both orders. A diffusion
    approximation on a data-dependent set of pairs, not a worst-case DP guarantee.
    """
    alpha = _renyi_order(renyi_order)
    grid = _grid(law)
    n = _num_steps(grid, num_steps)
    ks = _release_iterates(grid, n, release_iterates)
    ells = np.arange(ks[-1], dtype=np.int64)
    fwd, bwd = _average_batch(grid, _pair_data(law, pairs), alpha, ks, ells)
    value = _mixture(alpha, np.maximum(fwd, bwd).max(axis=1), n, int(ks[-1]))
    return PrivacyLoss(value=value, guarantee=Guarantee.SURROGATE, quantity="rdp_epsilon",
                       source=REFERENCE + ", Theorem 4.5 eq. (24); " + _SURROGATE_NOTE)


# ----------------------------------------------------------------------------------------------------------------
# Exact discrete ground truth (not in the paper: the law of discrete SGD itself, for a fixed data order)
# ----------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class ExactSGDLaw:
    """The exact Gaussian law N(means[i], covariances[i]) of iterate ``iterates[i]`` of discrete noisy SGD."""

    iterates: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    guarantee: Guarantee = Guarantee.EXACT


def _exact_inputs(features: Any, labels: Any, step_size: Any, ridge: Any, noise_std: Any, x0: Any,
                  init_variance: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float, np.ndarray, float]:
    a = np.asarray(features, dtype=float)
    b = np.asarray(labels, dtype=float)
    if a.ndim != 2 or a.shape[0] == 0:
        raise ValueError(f"features must have shape (n, d) with n >= 1; got {a.shape}.")
    n, d = a.shape
    if b.shape != (n,):
        raise ValueError(f"labels must have shape (n,) = ({n},); got {b.shape}.")
    _check.finite(features=a, labels=b)
    _check.scalar(ridge=ridge, noise_std=noise_std, init_variance=init_variance)
    _check.non_negative(ridge=ridge, init_variance=init_variance)
    _check.positive(noise_std=noise_std)
    eta = np.broadcast_to(np.asarray(step_size, dtype=float), (n,)).copy()
    _check.positive(step_size=eta)
    x = np.asarray(x0, dtype=float)
    if x.shape != (d,):
        raise ValueError(f"x0 must have shape (d,) = ({d},); got {x.shape}.")
    _check.finite(x0=x)
    return a, b, eta, float(ridge), float(noise_std), x, float(init_variance)


def _exact_step(mean: np.ndarray, cov: np.ndarray, a: np.ndarray, b: float, eta: float, ridge: float,
                noise2: float) -> tuple[np.ndarray, np.ndarray]:
    """x ↦ C x + ηba + N(0, η²σ²I), C = (1 − ηδ)I − η aaᵀ, as a rank-one update: O(d²)."""
    c = 1.0 - eta * ridge
    va = cov @ a
    new_mean = c * mean - eta * a * (a @ mean) + eta * b * a
    new_cov = c * c * cov - c * eta * (np.outer(a, va) + np.outer(va, a)) + eta**2 * (a @ va) * np.outer(a, a)
    new_cov[np.diag_indices_from(new_cov)] += eta**2 * noise2
    return new_mean, 0.5 * (new_cov + new_cov.T)


def exact_sgd_law(features: Any, labels: Any, *, step_size: Any, ridge: float, noise_std: float, x0: Any,
                  iterates: Any, init_variance: float = 0.0) -> ExactSGDLaw:
    """Exact law of discrete noisy SGD (Algorithm 1, batch 1, fixed data order, Gaussian noise) on least squares.

    x_{k+1} = C_k x_k + η_k b_k a_k − η_kσZ_k with C_k = (1 − η_kδ)I − η_k a_ka_kᵀ is affine with Gaussian noise, so
    x_k ~ N(m_k, V_k): m_{k+1} = C_km_k + η_kb_ka_k, V_{k+1} = C_kV_kC_kᵀ + η_k²σ²I (Algorithm 1 is
    linear-Gaussian for a fixed order), from
    x_0 ~ N(x0, init_variance·I) (init_variance = 0: a fixed, public x_0). O(n d²). Labelled ``exact``.

    Args:
        features, labels: (n, d), (n,) the records in the order they are used (row k at step k).
        step_size: η > 0, a scalar or (n,) per step.
        ridge: δ ≥ 0. noise_std: σ > 0. x0: (d,). init_variance: ≥ 0.
        iterates: iterates k ∈ [0, n] to report.
    """
    a, b, eta, ridge, sigma, x, v0 = _exact_inputs(features, labels, step_size, ridge, noise_std, x0, init_variance)
    n, d = a.shape
    ks = np.atleast_1d(np.asarray(iterates))
    _check.integer(minimum=0, iterates=ks)
    ks = ks.astype(np.int64)
    if np.any(ks > n):
        raise ValueError(f"iterates must be <= n = {n}; got {int(ks.max())}.")
    mean, cov = x.copy(), v0 * np.eye(d)
    means, covs = np.empty((ks.size, d)), np.empty((ks.size, d, d))
    for k in range(n + 1):
        hit = np.flatnonzero(ks == k)
        means[hit], covs[hit] = mean, cov
        if k == n or k >= ks.max():
            break
        mean, cov = _exact_step(mean, cov, a[k], b[k], eta[k], ridge, sigma**2)
    return ExactSGDLaw(iterates=ks, means=means, covariances=covs)


def exact_sgd_renyi(renyi_order: float, *, features: Any, labels: Any, position: int, replacement_feature: Any,
                    replacement_label: float, iterate: int, step_size: Any, ridge: float, noise_std: float, x0: Any,
                    init_variance: float = 0.0, direction: str = "max") -> PrivacyLoss:
    """Exact D_α between the laws of SGD iterate k on the data and on the data with record ``position`` replaced.

    Both laws are exact Gaussians (:func:`exact_sgd_law`; the data order is fixed, not shuffled) and the divergence is
    :func:`privdyn.privacy.divergences.renyi_gaussian` (``forward``: D_α(P ‖ P'), P the original data; ``backward``;
    ``max``). The ground truth for the surrogate D_α(k; ℓ, θ) of eq. (14) with θ = ((a_ℓ, b_ℓ), (a', b')). O(k d² + d³).
    0 when ``position >= iterate`` (the record is not used before iterate k). Labelled ``exact``.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(DIRECTIONS, direction=direction)
    a, b, eta, ridge_f, sigma, x, v0 = _exact_inputs(features, labels, step_size, ridge, noise_std, x0, init_variance)
    n, d = a.shape
    _check.integer(minimum=0, position=position, iterate=iterate)
    ell, k = int(position), int(iterate)
    if k > n:
        raise ValueError(f"iterate must be <= n = {n}; got iterate={k}.")
    if ell >= n:
        raise ValueError(f"position must be < n = {n}; got position={ell}.")
    new_a = np.asarray(replacement_feature, dtype=float)
    if new_a.shape != (d,):
        raise ValueError(f"replacement_feature must have shape (d,) = ({d},); got {new_a.shape}.")
    _check.finite(replacement_feature=new_a, replacement_label=replacement_label)
    source = "exact Gaussian law of discrete noisy SGD with a fixed data order (Algorithm 1 of arXiv 2510.16687)"
    if ell >= k:
        return PrivacyLoss(value=0.0, guarantee=Guarantee.EXACT, quantity="renyi_divergence", source=source)
    mean, cov = x.copy(), v0 * np.eye(d)
    for step in range(ell):
        mean, cov = _exact_step(mean, cov, a[step], b[step], eta[step], ridge_f, sigma**2)
    laws = []
    for feat, lab in ((a[ell], b[ell]), (new_a, float(replacement_label))):
        m_i, c_i = _exact_step(mean, cov, feat, lab, eta[ell], ridge_f, sigma**2)
        for step in range(ell + 1, k):
            m_i, c_i = _exact_step(m_i, c_i, a[step], b[step], eta[step], ridge_f, sigma**2)
        laws.append((m_i, c_i))
    values = []
    if direction in ("forward", "max"):
        values.append(divergences.renyi_gaussian(alpha, mean1=laws[0][0], cov1=laws[0][1], mean2=laws[1][0],
                                                 cov2=laws[1][1]))
    if direction in ("backward", "max"):
        values.append(divergences.renyi_gaussian(alpha, mean1=laws[1][0], cov1=laws[1][1], mean2=laws[0][0],
                                                 cov2=laws[0][1]))
    return PrivacyLoss(value=max(values), guarantee=Guarantee.EXACT, quantity="renyi_divergence", source=source)
