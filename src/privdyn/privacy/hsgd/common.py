"""Neighbouring pairs and laws of homogenized SGD (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687, Lemma C.1) and the
per-pair divergence."""

from __future__ import annotations

import dataclasses
import math
import weakref
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.dynamics import hsgd as hsgd_dynamics
from privdyn.dynamics.hsgd import HSGDLaw, HSGDProblem
from privdyn.privacy import divergences
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss
from privdyn.schedules import Constant

__all__ = [
    "NeighboringPairs", "NeighboringLaws", "select_pairs", "sgd_grid_law", "neighboring_laws", "renyi_divergence",
    "RELEASE_MODES", "DIRECTIONS", "REFERENCE"
]


REFERENCE = hsgd_dynamics.REFERENCE
"""The hsgd paper (arXiv 2510.16687), as the accountant's sources cite it."""
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
        feats = np.atleast_2d(_check.real_array(features=self.features))
        other = np.atleast_2d(_check.real_array(other_features=self.other_features))
        labels = np.atleast_1d(_check.real_array(labels=self.labels))
        other_labels = np.atleast_1d(_check.real_array(other_labels=self.other_labels))
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
    def single(cls, feature: ArrayLike, label: float, other_feature: ArrayLike, other_label: float) -> NeighboringPairs:
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


def select_pairs(features: ArrayLike, labels: ArrayLike, *, ridge: float, num_pairs: int, gap: str = "proxy",
                 mean: ArrayLike | None = None) -> NeighboringPairs:
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
    a = _check.real_array(features=features)
    b = _check.real_array(labels=labels)
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
    _check.instance(HSGDProblem, problem=problem)
    _check.scalar(num_steps=num_steps, refinements=refinements)
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

    def __post_init__(self) -> None:
        _check.record(self)


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
