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

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from scipy import stats
from scipy.special import logsumexp

from privdyn import _check
from privdyn.algorithms.noisy_sgd import CLIP_CONVENTIONS, simulate_noisy_sgd
from privdyn.data.hsgd_design import UniformDesign, hsgd_problem
from privdyn.dynamics import hsgd as dyn
from privdyn.experiments.base import Experiment, Findings, Unit
from privdyn.experiments.config import ExperimentConfig
from privdyn.experiments.hsgd_risk import PAPER, paper_setting
from privdyn.experiments.naming import json_number, printed_value, unit_key
from privdyn.experiments.plotting import as_floats, pyplot, save_figure, select_series
from privdyn.experiments.results import (
    Check,
    CheckKind,
    Metric,
    Series,
    Table,
    check_close,
    check_not_applicable,
    check_ordering,
    finding,
)
from privdyn.privacy import hsgd as priv
from privdyn.privacy.hidden_state import ye_shokri_rdp
from privdyn.rng import generator
from privdyn.schedules import Constant

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

INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM
FINDING = CheckKind.FINDING

Z = 5.0
"""The z of Monte-Carlo and significance checks (one-sided level ≈ 2.9e−7)."""
REFINEMENTS = 2
"""Romberg refinements of the law's Volterra solve (as in :mod:`privdyn.experiments.hsgd_risk`)."""
REFERENCE_RTOL = 1e-9
"""Relative tolerance of the engine against the independent solvers. Both evaluate the same closed-form divergence
on the same law, so they differ by rounding only (the engine documents ~1e−13 relative); 1e−9 leaves room for the
conditioning of the small solves at long lags."""
RELAXATION_TIMES = 5.0
"""The steady-state claim applies when the pass spans this many relaxation times 1/(η·min_j(λ_j + δ)) (iterations)."""
EARLY_ITERATES = 60
"""Every iterate k ≤ this is on the curve (the transient peak of Figure 2(b) sits near k ≈ 10–25)."""
REFERENCE_STRIDE = 10
"""The independent solver recomputes the curve at every iterate k ≤ EARLY_ITERATES, every REFERENCE_STRIDE-th
iterate after it and k = n (it costs about ten times the engine per iterate)."""
_REF_YE_SHOKRI = {3.0: "8.687", 5.0: "37.13", 7.0: "79.80"}
"""Figure 3(b) reference values (an independent implementation): ε_YS at α = 2 with the position mixture, σ = 1.5,
η = 0.05, δ = 0.1, n = 1500."""
_REF_FIG2B = {"peak": {1.0: 8e-5, 1.25: 5e-5, 1.5: 3.7e-5}, "plateau": 1.3e-5}
"""Figure 2(b) reference magnitudes (an independent implementation; seed-dependent, printed to one or two digits)."""


# --------------------------------------------------------------------------------------------------------------
# Independent reference solvers
# --------------------------------------------------------------------------------------------------------------


def _rounding_atol(renyi_order: float, size: int) -> float:
    """Absolute rounding allowance of a Gaussian Rényi divergence computed from log-determinants of ``size`` × ``size``
    whitened matrices near the identity: each log-determinant carries ≲ size·eps, weighted by (|1 − α| + α + 1)/
    (2(α − 1)) = α/(α − 1); a factor 16 covers the solve of the mean term."""
    return 16.0 * size * np.finfo(float).eps * renyi_order / (renyi_order - 1.0)


def _gaussian_renyi_stack(alpha: float, delta: np.ndarray, cov1: np.ndarray, cov2: np.ndarray) -> np.ndarray:
    """D_α(N(μ_1, cov1) ‖ N(μ_2, cov2)) for stacks (L, r, r) of whitened covariances, Δ = μ_1 − μ_2 (L, r).

    D_α = (α/2)Δᵀ M⁻¹ Δ − [log det M − (1 − α) log det cov1 − α log det cov2]/(2(α − 1)), M = (1 − α)cov1 + αcov2
    (Gil et al. 2013, the correct order of the paper's Lemma C.2); +inf where M is not positive definite.
    """
    mix = (1.0 - alpha) * cov1 + alpha * cov2
    sign, logdet_mix = np.linalg.slogdet(mix)
    _, logdet1 = np.linalg.slogdet(cov1)
    _, logdet2 = np.linalg.slogdet(cov2)
    out = np.full(delta.shape[0], math.inf)
    ok = sign > 0
    if np.any(ok):
        # positive definiteness: a positive determinant is not enough for r > 1; check the smallest eigenvalue
        ok &= np.linalg.eigvalsh(mix)[:, 0] > 0
    if np.any(ok):
        sol = np.linalg.solve(mix[ok], delta[ok][..., None])[..., 0]
        quad = np.einsum("li,li->l", delta[ok], sol)
        logdet = -(logdet_mix[ok] - (1.0 - alpha) * logdet1[ok] - alpha * logdet2[ok]) / (2.0 * (alpha - 1.0))
        out[ok] = 0.5 * alpha * quad + logdet
    return out


@dataclasses.dataclass(frozen=True)
class _Subspace:
    """An orthonormal basis of span{P_g a, P_g a' : groups g} and the coordinates of a, a' in it."""

    groups: np.ndarray  # (r,) the eigen-group of each basis vector
    coords1: np.ndarray  # (r,)
    coords2: np.ndarray  # (r,)


def _pair_subspace(group_of: np.ndarray, num_groups: int, a1: np.ndarray, a2: np.ndarray) -> _Subspace:
    groups, c1, c2 = [], [], []
    for g in range(num_groups):
        idx = np.flatnonzero(group_of == g)
        block = np.stack([a1[idx], a2[idx]], axis=1)  # (n_g, 2)
        u, s, _ = np.linalg.svd(block, full_matrices=False)
        keep = s > 1e-12 * max(float(s.max(initial=0.0)), 1e-300)
        basis = u[:, keep]
        for col in range(basis.shape[1]):
            groups.append(g)
            c1.append(float(basis[:, col] @ a1[idx]))
            c2.append(float(basis[:, col] @ a2[idx]))
    return _Subspace(groups=np.asarray(groups, dtype=np.int64), coords1=np.asarray(c1), coords2=np.asarray(c2))


def reference_divergences(renyi_order: float, law: dyn.HSGDLaw, *, feature: Any, label: float, other_feature: Any,
                          other_label: float, iterate: int, positions: Any) -> tuple[np.ndarray, np.ndarray]:
    """D_α(k; ℓ, θ) (eq. (14) of the paper, correct order) in both orders, by restriction to a small subspace.

    Independent of :mod:`privdyn.privacy.hsgd` (the reference of this module's invariants). In the eigenbasis of Σ the
    law N(m(t), V(t)) has V diagonal and constant on each eigen-group g, and Φ(t, s) = e^{−a_g(Γ(t) − Γ(s))} on it.
    After the differentiating update (Lemma C.1), with h = γ(s)/d, c = 1 − hδ, C_i = cI − h a_ia_iᵀ,

        m_1 − m_2 = hΦ(a_1β_1 − a_2β_2),  β_i = b_i − a_iᵀm(s),
        V_i = V(t) + Φ[C_iV(s)C_iᵀ − V(s) + h²σ²I]Φ.

    Both laws are block-diagonal for the split R^d = S ⊕ S^⊥ with S = span{P_g a_1, P_g a_2 : g} (P_g the projection on
    group g), and they coincide on S^⊥, so D_α is exactly the divergence of the restrictions to S (dimension ≤ 2m):
    small dense matrices, whitened by the common diagonal V(t) + Φ²((c² − 1)V(s) + h²σ²), evaluated by
    :func:`numpy.linalg.slogdet` and :func:`numpy.linalg.solve`.

    Args:
        renyi_order: α > 1.
        law: the law on the SGD grid t_k = k/d (features in the problem's eigen-coordinates).
        feature, label, other_feature, other_label: the pair ((a, b), (a', b')), eigen-coordinates.
        iterate: k. positions: the steps ℓ ≤ k of the differing record (ℓ = k: the law right after the update).

    Returns:
        (forward, backward): D_α(P_1 ‖ P_2) and D_α(P_2 ‖ P_1), each (L,).
    """
    alpha = float(renyi_order)
    problem = law.problem
    d = problem.dim
    ells = np.atleast_1d(np.asarray(positions, dtype=np.int64))
    k = int(iterate)
    if np.any(ells > k) or np.any(ells < 0):
        raise ValueError(f"positions must be in [0, iterate] = [0, {k}]; got {ells.tolist()}.")
    a1, a2 = np.asarray(feature, dtype=float), np.asarray(other_feature, dtype=float)
    sub = _pair_subspace(problem.spectrum.groups, problem.spectrum.num_groups, a1, a2)
    rate = problem.hessian_eigenvalues[sub.groups]  # (r,)
    gamma_int = np.asarray(law.integrated_learning_rate)
    var = np.asarray(law.group_variance)[:, sub.groups]  # (T, r)
    h = np.asarray(problem.learning_rate.value(ells / d), dtype=float).reshape(ells.shape) / d  # (L,)
    c = 1.0 - h * problem.ridge
    phi = np.exp(-np.outer(gamma_int[k] - gamma_int[ells], rate))  # (L, r)
    vs, vt = var[ells], var[k][None, :]
    sigma2 = problem.noise_std**2
    base = vt + phi**2 * ((c * c - 1.0)[:, None] * vs + (h * h)[:, None] * sigma2)  # common diagonal (L, r)
    w = 1.0 / np.sqrt(base)
    mean_s = np.asarray(law.mean)[ells]  # (L, d)
    beta1 = float(label) - mean_s @ a1
    beta2 = float(other_label) - mean_s @ a2
    delta = h[:, None] * phi * (sub.coords1[None, :] * beta1[:, None] - sub.coords2[None, :] * beta2[:, None])
    r = sub.groups.size
    eye = np.eye(r)
    covs = []
    for coords in (sub.coords1, sub.coords2):
        cmat = c[:, None, None] * eye - h[:, None, None] * np.outer(coords, coords)[None]  # (L, r, r)
        inner = cmat @ (vs[:, :, None] * np.swapaxes(cmat, 1, 2))  # C V(s) Cᵀ
        inner = inner - vs[:, :, None] * eye + (h * h * sigma2)[:, None, None] * eye
        cov = vt[:, :, None] * eye + phi[:, :, None] * inner * phi[:, None, :]
        covs.append(w[:, :, None] * cov * w[:, None, :])
    dw = w * delta
    forward = _gaussian_renyi_stack(alpha, dw, covs[0], covs[1])
    backward = _gaussian_renyi_stack(alpha, -dw, covs[1], covs[0])
    return forward, backward


def _mixture(alpha: float, worst: np.ndarray, num_steps: int, iterate: int) -> float:
    """(1/(α − 1))[logsumexp({log(n − k)} ∪ (α − 1)·worst) − log n], at least 0 (eq. (15) on the SGD grid)."""
    worst = np.asarray(worst, dtype=float)
    if np.any(np.isinf(worst)):
        return math.inf
    terms = list((alpha - 1.0) * worst)
    if num_steps > iterate:
        terms.append(math.log(num_steps - iterate))
    if not terms:
        return 0.0
    return max(0.0, (float(logsumexp(terms)) - math.log(num_steps)) / (alpha - 1.0))


def reference_rdp_epsilon(renyi_order: float, law: dyn.HSGDLaw, pairs: priv.NeighboringPairs, *, num_steps: int,
                          iterates: Any) -> np.ndarray:
    """rdp_epsilon(k) of Theorem 4.3, eq. (15), from :func:`reference_divergences` (sup over pairs, both orders).

    (1/(α − 1))[logsumexp({log(n − k)} ∪ {(α − 1) max_θ D_α(k; ℓ, θ) : ℓ = 0..k − 1}) − log n] (Lemma C.3; eq. (15)).
    """
    ks = np.atleast_1d(np.asarray(iterates, dtype=np.int64))
    out = np.zeros(ks.size)
    for i, k in enumerate(ks.tolist()):
        if k == 0:
            continue
        worst = np.full(k, -math.inf)
        for p in range(pairs.num_pairs):
            fwd, bwd = reference_divergences(renyi_order, law, feature=pairs.features[p], label=pairs.labels[p],
                                             other_feature=pairs.other_features[p], other_label=pairs.other_labels[p],
                                             iterate=k, positions=np.arange(k))
            worst = np.maximum(worst, np.maximum(fwd, bwd))
        out[i] = _mixture(float(renyi_order), worst, int(num_steps), k)
    return out


def dense_divergences(renyi_order: float, law: dyn.HSGDLaw, *, feature: Any, label: float, other_feature: Any,
                      other_label: float, iterate: int, position: int) -> dict[str, float]:
    """D_α(k; ℓ, θ) in both orders from dense d × d matrices (Lemma C.1's laws, Lemma C.2's divergence).

    m_i = m(t) − hΦ∇f(m(s); a_i, b_i), V_i = V(t) + Φ[C_iV(s)C_iᵀ − V(s) + h²σ²I]Φ in the eigenbasis, whitened by the
    common diagonal, then the Gaussian formula of :func:`_gaussian_renyi_stack`. O(d³): a few points only.

    Returns:
        ``forward``, ``backward`` (the two orders) and ``mean_term_forward``, ``log_det_term_forward`` (the two parts
        of the forward value).
    """
    alpha = float(renyi_order)
    problem = law.problem
    d = problem.dim
    k, ell = int(iterate), int(position)
    rate = problem.hessian_eigenvalues[problem.spectrum.groups]
    h = float(problem.learning_rate.value(ell / d)) / d
    c = 1.0 - h * problem.ridge
    gamma_int = np.asarray(law.integrated_learning_rate)
    phi = np.exp(-rate * (gamma_int[k] - gamma_int[ell]))
    vs, vt = np.asarray(law.variance[ell]), np.asarray(law.variance[k])
    ms, mt = np.asarray(law.mean[ell]), np.asarray(law.mean[k])
    sigma2 = problem.noise_std**2
    w = 1.0 / np.sqrt(vt + phi**2 * ((c * c - 1.0) * vs + h * h * sigma2))
    laws = []
    for a, b in ((np.asarray(feature, dtype=float), float(label)),
                 (np.asarray(other_feature, dtype=float), float(other_label))):
        grad = a * (a @ ms - b) + problem.ridge * ms
        mean = mt - h * phi * grad
        cmat = c * np.eye(d) - h * np.outer(a, a)
        inner = (cmat * vs[None, :]) @ cmat.T - np.diag(vs) + h * h * sigma2 * np.eye(d)
        cov = np.diag(vt) + phi[:, None] * inner * phi[None, :]
        laws.append((w * mean, w[:, None] * cov * w[None, :]))
    (m1, v1), (m2, v2) = laws
    fwd = float(_gaussian_renyi_stack(alpha, (m1 - m2)[None], v1[None], v2[None])[0])
    bwd = float(_gaussian_renyi_stack(alpha, (m2 - m1)[None], v2[None], v1[None])[0])
    mix = (1.0 - alpha) * v1 + alpha * v2
    mean_term = 0.5 * alpha * float((m1 - m2) @ np.linalg.solve(mix, m1 - m2))
    return {"forward": fwd, "backward": bwd, "mean_term_forward": mean_term, "log_det_term_forward": fwd - mean_term}


def reference_ye_shokri(renyi_order: float, *, noise_multiplier: float, contraction: float, num_steps: int,
                        iterates: Any) -> np.ndarray:
    """Ye & Shokri's last-iterate RDP trajectory (arXiv 2203.05363; Figure 3(b)), computed independently.

    If the differing record is used j steps before the end, the two last iterates are Gaussians with mean gap at most
    2Cη q^{j−1} and covariance η²σ_m²C² Σ_{i<j} q^{2i} I, so ε_j = α(2q^{j−1})²/(2σ_m² Σ_{i=0}^{j−1} q^{2i}) (the sum
    accumulated here, not its closed form); ε_k = (1/(α − 1)) log((n − k)/n + (1/n) Σ_{j=1}^k e^{(α−1)ε_j}).
    """
    alpha, q, n = float(renyi_order), float(contraction), int(num_steps)
    j = np.arange(1, n + 1)
    powers = q ** (2.0 * (j - 1))
    eps = alpha * 4.0 * powers / (2.0 * noise_multiplier**2 * np.cumsum(powers))
    ks = np.atleast_1d(np.asarray(iterates, dtype=np.int64))
    return np.array([_mixture(alpha, eps[:k], n, int(k)) for k in ks.tolist()])


# --------------------------------------------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Setting(ExperimentConfig):
    """The Section 5 setting: d, n, step_size η (γ = ηd), ridge δ, x0_policy."""

    d: int = 1000
    n: int = 1500
    step_size: float = 0.05
    ridge: float = 0.1
    x0_policy: Literal["random_public", "random_secret"] = "random_public"

    def validate(self) -> None:
        _check.integer(minimum=2, d=self.d, n=self.n)
        _check.positive(step_size=self.step_size, ridge=self.ridge)
        if not self.step_size * (1.0 / 3.0 + self.ridge) < 2.0:
            raise ValueError(f"step_size must satisfy step_size·(1/3 + ridge) < 2 (per-sample SGD stability, "
                             f"E‖a‖² = 1/3); got step_size={self.step_size!r} with ridge={self.ridge!r}.")
        lam_b = 1.0 / (12.0 * self.d)
        lam = np.array([lam_b + 0.25, lam_b])
        count = np.array([1.0, self.d - 1.0])
        kappa = self.step_size / 2 * float(np.sum(count * lam**2 / (lam + self.ridge)))
        if not kappa < 1:
            raise ValueError(f"step_size is unstable: the Volterra kernel mass κ_K = {kappa:.4g} >= 1; "
                             f"got step_size={self.step_size!r}, ridge={self.ridge!r}, d={self.d}.")

    @property
    def learning_rate(self) -> float:
        """γ = step_size·d (the paper's η = 0.05 is the discrete step)."""
        return self.step_size * self.d

    @property
    def relaxation_iterations(self) -> float:
        """1/(η·min_j(λ_j + δ)): the slowest e-folding of the mean, in iterations (λ_min = 1/(12d))."""
        return 1.0 / (self.step_size * (1.0 / (12.0 * self.d) + self.ridge))

    def base_params(self) -> dict[str, Any]:
        return {"d": self.d, "n": self.n, "step_size": json_number(self.step_size), "ridge": json_number(self.ridge)}


def _validate_noise(values: Sequence[float], name: str) -> None:
    arr = np.asarray(values, dtype=float)
    _check.positive(**{name: arr})
    if len(set(arr.tolist())) != arr.size:
        raise ValueError(f"{name} must not repeat a value; got {arr.tolist()}.")


def _validate_order(renyi_order: float) -> None:
    if not renyi_order > 1:
        raise ValueError(f"renyi_order must be > 1; got {renyi_order!r}.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class _CurveSetting(_Setting):
    """A last-iterate RDP curve: α, the top ``num_pairs`` proxy pairs, iterates every ``record_every`` steps."""

    renyi_order: float = 2.0
    num_pairs: int = 5
    record_every: int = 1

    def validate(self) -> None:
        super().validate()
        _validate_order(self.renyi_order)
        _check.integer(minimum=1, num_pairs=self.num_pairs, record_every=self.record_every)
        if self.num_pairs > self.n * (self.n - 1):
            raise ValueError(f"num_pairs must be <= n(n − 1) = {self.n * (self.n - 1)}; got {self.num_pairs}.")

    def curve_iterates(self) -> np.ndarray:
        """Every iterate up to EARLY_ITERATES (the transient peak), then every ``record_every``-th, and n."""
        return np.union1d(np.union1d(np.arange(min(self.n, EARLY_ITERATES) + 1),
                                     np.arange(0, self.n + 1, self.record_every)), [self.n]).astype(np.int64)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig1bConfig(_Setting):
    """Figure 1(b): σ = 1.5, α = 2, ``num_pairs`` random ordered pairs of the dataset, per-pair curves at ``iterates``
    (k = 100 and k = n by default); the first ``num_reference_pairs`` pairs are recomputed by the reference solver."""

    noise_std: float = 1.5
    renyi_order: float = 2.0
    num_pairs: int = 300
    iterates: tuple[int, ...] = (100, 1500)
    num_reference_pairs: int = 8

    quick_overrides = {"d": 200, "n": 1200, "iterates": (100, 1200)}

    def validate(self) -> None:
        super().validate()
        _validate_noise([self.noise_std], "noise_std")
        _validate_order(self.renyi_order)
        _check.integer(minimum=3, num_pairs=self.num_pairs)
        _check.integer(minimum=0, num_reference_pairs=self.num_reference_pairs)
        _check.integer(minimum=1, iterates=np.asarray(self.iterates))
        if max(self.iterates) > self.n or len(set(self.iterates)) != len(self.iterates):
            raise ValueError(f"iterates must be distinct values in [1, n] = [1, {self.n}]; got {list(self.iterates)}.")
        if self.num_pairs > self.n * (self.n - 1):
            raise ValueError(f"num_pairs must be <= n(n − 1) = {self.n * (self.n - 1)}; got {self.num_pairs}.")
        if self.num_reference_pairs > self.num_pairs:
            raise ValueError(f"num_reference_pairs must be <= num_pairs = {self.num_pairs}; got "
                             f"{self.num_reference_pairs}.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig2bConfig(_CurveSetting):
    """Figure 2(b): σ ∈ {1, 1.25, 1.5}, α = 2, top-5 proxy pairs, every iterate (``--quick``: d = 200, n = 1200)."""

    noise_stds: tuple[float, ...] = (1.0, 1.25, 1.5)

    quick_overrides = {"d": 200, "n": 1200, "record_every": 10}

    def validate(self) -> None:
        super().validate()
        _validate_noise(self.noise_stds, "noise_stds")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig3aConfig(_Setting):
    """Figure 3(a): σ = 1.5, clips c ∈ {3, 5, 7} and unclipped, ``num_runs`` runs with common random numbers
    (the paper does not state its number of runs; 3 by default)."""

    noise_std: float = 1.5
    clips: tuple[float, ...] = (3.0, 5.0, 7.0)
    clip_convention: Literal["full_gradient", "data_term"] = "full_gradient"
    num_runs: int = 100
    runs_per_unit: int = 50
    record_every: int = 10

    quick_overrides = {"d": 1000, "n": 600, "num_runs": 40, "runs_per_unit": 20}
    """``--quick`` keeps d = 1000: at d = 200 the per-example gradient norm (≈ δ‖x‖ ≈ 0.1√d) never reaches c = 3."""

    def validate(self) -> None:
        super().validate()
        _validate_noise([self.noise_std], "noise_std")
        _validate_noise(self.clips, "clips")
        _check.one_of(CLIP_CONVENTIONS, clip_convention=self.clip_convention)
        _check.integer(minimum=2, num_runs=self.num_runs)
        _check.integer(minimum=1, runs_per_unit=self.runs_per_unit, record_every=self.record_every)

    @property
    def init_variance(self) -> float:
        return 1.0 if self.x0_policy == "random_secret" else 0.0

    def record_steps(self) -> np.ndarray:
        return np.union1d(np.arange(0, self.n + 1, self.record_every), [self.n]).astype(np.int64)

    def run_batches(self) -> list[tuple[int, int]]:
        return [(first, min(self.runs_per_unit, self.num_runs - first))
                for first in range(0, self.num_runs, self.runs_per_unit)]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig3bConfig(_CurveSetting):
    """Figure 3(b): σ = 1.5, clips c ∈ {3, 5, 7} for the Ye–Shokri bound, α = 2, the unclipped HSGD curve."""

    noise_std: float = 1.5
    clips: tuple[float, ...] = (3.0, 5.0, 7.0)

    quick_overrides = {"d": 200, "n": 1200, "record_every": 10}

    def validate(self) -> None:
        super().validate()
        _validate_noise([self.noise_std], "noise_std")
        _validate_noise(self.clips, "clips")


# --------------------------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------------------------


def observed_dataset(design: UniformDesign, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The n records of the observed dataset (features (n, d) in the original basis, labels (n,)), drawn once per
    (seed, d, n) from their own stream: every unit and every noise_std sees the same data and pairs."""
    rng = generator(seed, unit_key(quantity="dataset", d=design.dim, n=n), purpose="data")
    return design.sample(n, rng)


def _law(config: _Setting, design: UniformDesign, x0: np.ndarray, noise_std: float) -> dyn.HSGDLaw:
    secret = config.x0_policy == "random_secret"
    problem = hsgd_problem(design, x0=None if secret else x0, learning_rate=Constant(config.learning_rate),
                           ridge=config.ridge, noise_std=noise_std, x0_policy=config.x0_policy, init_variance=1.0)
    return priv.sgd_grid_law(problem, config.n, refinements=REFINEMENTS)


def _eigen_pairs(design: UniformDesign, pairs: priv.NeighboringPairs) -> priv.NeighboringPairs:
    """The pairs in the problem's eigen-coordinates (the accountants' basis)."""
    return priv.NeighboringPairs(features=design.eigen_coordinates(pairs.features), labels=pairs.labels,
                                 other_features=design.eigen_coordinates(pairs.other_features),
                                 other_labels=pairs.other_labels, indices=pairs.indices, scores=pairs.scores)


def _privacy_params(config: _Setting, *, noise_std: float, renyi_order: float, num_pairs: int | None,
                    method: str, guarantee: str, quantity: str, clip: float | None = None,
                    mode: str | None = "keep_last_block", x0_policy: str | None = "default") -> dict[str, Any]:
    return {**config.base_params(), "method": method, "guarantee": guarantee, "renyi_order": json_number(renyi_order),
            "mode": mode, "num_pairs": num_pairs,
            "x0_policy": config.x0_policy if x0_policy == "default" else x0_policy,
            "noise_std": json_number(noise_std), "clip": None if clip is None else json_number(clip),
            "quantity": quantity, "release": "last_iterate"}


def _curve_unit(config: _CurveSetting, noise_std: float, seed: int) -> dict[str, Any]:
    """The HSGD rdp_epsilon curve at one noise_std, its independent recomputations and the oracle."""
    design, x0 = paper_setting(config.d, seed)
    features, labels = observed_dataset(design, config.n, seed)
    law = _law(config, design, x0, noise_std)
    pairs = _eigen_pairs(design, priv.select_pairs(features, labels, ridge=config.ridge, num_pairs=config.num_pairs,
                                                   gap="proxy"))
    ks = config.curve_iterates()
    alpha = config.renyi_order
    curve = priv.rdp_epsilon(alpha, law, pairs, num_steps=config.n, iterates=ks)
    checked = (ks <= EARLY_ITERATES) | (ks % REFERENCE_STRIDE == 0) | (ks == config.n)
    reference = reference_rdp_epsilon(alpha, law, pairs, num_steps=config.n, iterates=ks[checked])
    out: dict[str, Any] = {
        "iterates": ks.tolist(), "rdp_epsilon": np.asarray(curve.value).tolist(), "guarantee": curve.guarantee.value,
        "reference_iterates": ks[checked].tolist(), "reference_rdp_epsilon": reference.tolist(),
        "pair_indices": np.asarray(pairs.indices).tolist(),
        "pair_scores": np.asarray(pairs.scores).tolist(), "num_pairs": pairs.num_pairs}
    # single divergences of the top pair against the dense d × d path: a transient point and lag 10 at the end
    n = config.n
    k1 = min(n, 12)
    points = [(k1, min(2, k1 - 1)), (n, max(n - 10, 0))]
    dense = []
    for k, ell in points:
        ref = dense_divergences(alpha, law, feature=pairs.features[0], label=pairs.labels[0],
                                other_feature=pairs.other_features[0], other_label=pairs.other_labels[0],
                                iterate=k, position=ell)
        engine = [float(priv.renyi_divergences(alpha, law, pairs, iterates=[k], positions=[ell],
                                               direction=direction).value[0, 0])
                  for direction in ("forward", "backward")]
        dense.append({"iterate": k, "position": ell, "engine": engine, "dense": [ref["forward"], ref["backward"]],
                      "mean_term": ref["mean_term_forward"], "log_det_term": ref["log_det_term_forward"]})
    out["dense"] = dense
    # the Gaussian-mechanism oracle at s = 0, t = s+ (V(0) = 0 only)
    if law.problem.initial_variance == 0:
        m0 = np.asarray(law.mean[0])
        gap = (pairs.features * (pairs.labels - pairs.features @ m0)[:, None]
               - pairs.other_features * (pairs.other_labels - pairs.other_features @ m0)[:, None])
        out["oracle_expected"] = (alpha * np.sum(gap**2, axis=1) / (2.0 * noise_std**2)).tolist()
        out["oracle_measured"] = np.asarray(priv.renyi_divergences(alpha, law, pairs, iterates=[0], positions=[0])
                                            .value)[0].tolist()
    return out


def _curve_checks(tag: str, config: _CurveSetting, out: Mapping[str, Any]) -> list[Check]:
    """Invariants of one HSGD curve: the reduced-subspace solver, the dense points, the oracle, ε(0) = 0, ε ≥ 0."""
    alpha = config.renyi_order
    eps = np.asarray(out["rdp_epsilon"], dtype=float)
    checked = np.isin(np.asarray(out["iterates"]), np.asarray(out["reference_iterates"]))
    checks = [check_close(
        f"rdp_epsilon_matches_reference {tag}", kind=INVARIANT,
        claim=f"the rdp_epsilon curve of Theorem 4.3 (eq. (15); engine fast path) equals an independent solver at "
              f"{int(checked.sum())} of its {eps.size} iterates (every k <= {EARLY_ITERATES}, every "
              f"{REFERENCE_STRIDE}th after, and n): the neighbouring laws of Lemma C.1 restricted exactly to the "
              "subspace where they differ, small dense log-determinants and solves, and this module's log-space "
              "mixture",
        expected=out["reference_rdp_epsilon"], measured=eps[checked].tolist(), rtol=REFERENCE_RTOL,
        atol=_rounding_atol(alpha, 4),
        note="tolerance: rounding only (same closed form on the same law; subspaces of dimension <= 2m = 4 for the "
             f"m = 2 eigen-groups of the design); relative 1e-9 plus {_rounding_atol(alpha, 4):.2g} absolute")]
    for point in out["dense"]:
        k, ell = point["iterate"], point["position"]
        checks.append(check_close(
            f"divergence_matches_dense {tag} k={k} l={ell}", kind=INVARIANT,
            claim=f"D_α(k={k}; ℓ={ell}, θ) of the top pair, both orders (eq. (14), correct order), equals the dense "
                  f"d × d computation of Lemma C.1's laws and Lemma C.2's divergence",
            expected=point["dense"], measured=point["engine"], rtol=REFERENCE_RTOL,
            atol=_rounding_atol(alpha, config.d),
            note=f"whitened by the common diagonal; absolute allowance {_rounding_atol(alpha, config.d):.2g} for the "
                 f"rounding of d × d log-determinants"))
    name = f"gaussian_mechanism_oracle {tag}"
    claim = ("derived from Lemma C.1: with V(0) = 0, right after an update at s = 0 the laws are N(m_i, h²σ²I), so "
             "D_α(0; 0, θ) = α‖g_0(θ)‖²/(2σ²) for every pair (g_0 the exact gap at x_0)")
    if "oracle_expected" in out:
        checks.append(check_close(name, kind=INVARIANT, claim=claim, expected=out["oracle_expected"],
                                  measured=out["oracle_measured"], rtol=1e-10,
                                  note="closed form from the pairs and x_0"))
    else:
        checks.append(check_not_applicable(name, kind=INVARIANT, claim=claim,
                                           note="not applicable: x0_policy='random_secret' has V(0) = I"))
    ok = bool(eps[0] == 0.0 and np.all(eps >= 0) and np.all(np.isfinite(eps)))
    checks.append(Check(name=f"rdp_epsilon_starts_at_zero {tag}", kind=INVARIANT,
                        claim="rdp_epsilon(0) = 0 (no record used yet) and rdp_epsilon(k) is finite and >= 0",
                        expected=0.0, measured=[float(eps[0]), float(np.min(eps))], tolerance=0.0, passed=ok,
                        note="measured: [rdp_epsilon(0), min_k rdp_epsilon(k)]"))
    return checks


def _is_paper_setting(config: _Setting) -> bool:
    return (config.d, config.n, config.step_size, config.ridge) == (1000, 1500, 0.05, 0.1)


def _spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Spearman's ρ of (x, y) and the one-sided p-value of ρ > 0 (scipy.stats.spearmanr)."""
    res = stats.spearmanr(x, y, alternative="greater")
    return float(res.statistic), float(res.pvalue)


# --------------------------------------------------------------------------------------------------------------
# Figure 1(b)
# --------------------------------------------------------------------------------------------------------------


def _random_pairs(n: int, count: int, seed: int, d: int) -> np.ndarray:
    """``count`` distinct ordered pairs (i, j), i ≠ j, of n records, uniformly without replacement."""
    rng = generator(seed, unit_key(quantity="random_pairs", d=d, n=n), purpose="sampling")
    codes = rng.choice(n * (n - 1), size=count, replace=False)
    i = codes // (n - 1)
    j = codes % (n - 1)
    j = j + (j >= i)
    return np.stack([i, j], axis=1).astype(np.int64)


def _proxy_gap_norms(features: np.ndarray, labels: np.ndarray, index: np.ndarray, ridge: float) -> np.ndarray:
    """‖g(θ)‖₂, g(θ) = (ba − b'a') − (aaᵀ − a'a'ᵀ + δI)1_d (Section 5), in the data's original basis."""
    a, b = features[index[:, 0]], labels[index[:, 0]]
    a2, b2 = features[index[:, 1]], labels[index[:, 1]]
    g = (b[:, None] * a - b2[:, None] * a2) - (a * a.sum(axis=1)[:, None] - a2 * a2.sum(axis=1)[:, None] + ridge)
    return np.linalg.norm(g, axis=1)


class Fig1b(Experiment):
    name = "hsgd-fig1b"
    paper_key = "hsgd"
    title = "Per-pair HSGD privacy loss against the gradient gap of the pair (proxy and exact)"
    paper = f"{PAPER}, Figure 1(b)"
    description = ("Per-pair last-iterate rdp_epsilon (surrogate, eq. (15)) vs ||g(theta)|| over random neighbouring "
                   "pairs, sigma=1.5, with Spearman coefficients for the paper's proxy and the exact gap.")
    config_class = Fig1bConfig

    def units(self, config: Fig1bConfig) -> list[Unit]:
        return [Unit(unit_key(method="volterra", iterate=k), {"iterate": k}) for k in config.iterates]

    def compute_unit(self, config: Fig1bConfig, unit: Unit, seed: int) -> dict[str, Any]:
        k = int(unit.params["iterate"])
        design, x0 = paper_setting(config.d, seed)
        features, labels = observed_dataset(design, config.n, seed)
        index = _random_pairs(config.n, config.num_pairs, seed, config.d)
        law = _law(config, design, x0, config.noise_std)
        eig = design.eigen_coordinates
        pairs = priv.NeighboringPairs(features=eig(features[index[:, 0]]), labels=labels[index[:, 0]],
                                      other_features=eig(features[index[:, 1]]), other_labels=labels[index[:, 1]],
                                      indices=index)
        alpha = config.renyi_order
        ells = np.arange(k)
        div = priv.renyi_divergences(alpha, law, pairs, iterates=np.full(k, k), positions=ells)  # (k, P), both orders
        values = np.asarray(div.value)
        per_pair = np.array([_mixture(alpha, values[:, p], config.n, k) for p in range(pairs.num_pairs)])
        # the exact gap at s = (k − 1)/d, the last position that changes iterate k
        m = np.asarray(law.mean[k - 1])
        gap = (pairs.features * (pairs.labels - pairs.features @ m)[:, None]
               - pairs.other_features * (pairs.other_labels - pairs.other_features @ m)[:, None])
        reference = []
        for p in range(config.num_reference_pairs):
            fwd, bwd = reference_divergences(alpha, law, feature=pairs.features[p], label=pairs.labels[p],
                                             other_feature=pairs.other_features[p],
                                             other_label=pairs.other_labels[p], iterate=k, positions=ells)
            reference.append(_mixture(alpha, np.maximum(fwd, bwd), config.n, k))
        return {"iterate": k, "rdp_epsilon": per_pair.tolist(), "guarantee": div.guarantee.value,
                "proxy_gap": _proxy_gap_norms(features, labels, index, config.ridge).tolist(),
                "exact_gap": np.linalg.norm(gap, axis=1).tolist(), "reference_rdp_epsilon": reference,
                "pair_indices": index.tolist()}

    def assemble(self, config: Fig1bConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        rows = []
        threshold = float(stats.norm.sf(Z))
        for k in config.iterates:
            out = outputs[unit_key(method="volterra", iterate=k)]
            eps = np.asarray(out["rdp_epsilon"], dtype=float)
            params = {**_privacy_params(config, noise_std=config.noise_std, renyi_order=config.renyi_order,
                                        num_pairs=config.num_pairs, method="volterra", guarantee=out["guarantee"],
                                        quantity="rdp_epsilon_per_pair"), "iterate": k}
            spearman = {}
            for gap_kind, label in (("proxy", "proxy ||g(theta)||"), ("exact", "exact ||g_s(theta)||")):
                x = np.asarray(out[f"{gap_kind}_gap"], dtype=float)
                order = np.argsort(x, kind="stable")
                series.append(Series(name=f"rdp_epsilon vs {label} k={k}", params={**params, "gap": gap_kind},
                                     x=x[order], y=eps[order], x_label=label, y_label="rdp_epsilon"))
                rho, p_value = _spearman(x, eps)
                spearman[gap_kind] = (rho, p_value)
                metrics.append(Metric(name="spearman", params={"iterate": k, "gap": gap_kind}, value=rho))
                checks.append(finding(
                    f"spearman_{gap_kind} k={k}",
                    claim=f"Spearman coefficient between the per-pair rdp_epsilon at k = {k} and the "
                          f"{'paper proxy ‖g(θ)‖₂' if gap_kind == 'proxy' else 'exact gap ‖g_s(θ)‖₂ at s = (k−1)/d'} "
                          f"over {eps.size} random pairs",
                    measured=rho, note=f"one-sided p-value (ρ > 0) {p_value:.3g}; an independent implementation "
                                       f"measured 0.10 (proxy, k = 100), 0.58 (proxy, k = 1500), "
                                       f"0.94 (exact, k = 100)"))
            rho, p_value = spearman["proxy"]
            checks.append(Check(
                name=f"privacy_increases_with_proxy k={k}", kind=CLAIM,
                claim=f"Figure 1(b): at a fixed time point (k = {k}) a larger ‖g(θ)‖₂ (the paper's proxy) goes "
                      f"with a larger privacy loss: Spearman's ρ > 0, one-sided significant at z = {Z:g} "
                      f"(p < {threshold:.2g})",
                expected=None, measured=rho, tolerance=threshold, passed=rho > 0 and p_value < threshold,
                note=f"claim: positive relation; measured ρ = {rho:.3f} (p = {p_value:.3g}) over {eps.size} pairs; "
                     f"the exact gap gives ρ = {spearman['exact'][0]:.3f}. The proxy replaces m(s) by 1_d and keeps a "
                     "δI1_d term that cancels in the true gap, so it tracks the privacy loss only loosely "
                     "(Section 5)"))
            nref = len(out["reference_rdp_epsilon"])
            if nref:
                checks.append(check_close(
                    f"per_pair_rdp_epsilon_matches_reference k={k}", kind=INVARIANT,
                    claim=f"the per-pair rdp_epsilon (engine divergences, eq. (15) mixture) of the first {nref} pairs "
                          "equals the independent reduced-subspace solver",
                    expected=out["reference_rdp_epsilon"], measured=eps[:nref].tolist(), rtol=REFERENCE_RTOL,
                    atol=_rounding_atol(config.renyi_order, 4), note="tolerance: rounding only"))
            rows.append([k, spearman["proxy"][0], spearman["proxy"][1], spearman["exact"][0], spearman["exact"][1]])
        tables = [Table(name="spearman coefficients",
                        columns=["iterate", "rho_proxy", "p_proxy", "rho_exact", "p_exact"], rows=rows)]
        return Findings(series=series, tables=tables, metrics=metrics, checks=checks)

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        iterates = sorted({s["params"]["iterate"] for s in result["series"]})
        fig, axes = plt.subplots(len(iterates), 2, figsize=(9.6, 3.6 * len(iterates)), squeeze=False)
        for row, k in enumerate(iterates):
            for col, gap in enumerate(("proxy", "exact")):
                ax = axes[row, col]
                for s in select_series(result, iterate=k, gap=gap):
                    ax.plot(as_floats(s["x"]), as_floats(s["y"]), ".", ms=3, color=f"C{col}")
                    ax.set_xlabel(s["x_label"])
                ax.set_ylabel("per-pair rdp_epsilon (surrogate)")
                ax.set_yscale("log")
                ax.set_title(f"k = {k}, {gap} gap", fontsize=9)
        fig.suptitle(f"{result['paper']}", fontsize=7)
        fig.tight_layout()
        return [save_figure(fig, out_dir)]


# --------------------------------------------------------------------------------------------------------------
# Figure 2(b)
# --------------------------------------------------------------------------------------------------------------


class Fig2b(Experiment):
    name = "hsgd-fig2b"
    paper_key = "hsgd"
    title = "Last-iterate RDP of noisy SGD through HSGD (surrogate) per noise_std"
    paper = f"{PAPER}, Figure 2(b)"
    description = ("rdp_epsilon(k) of Theorem 4.3 (eq. (15), surrogate, top-5 proxy pairs, alpha=2) for sigma in "
                   "{1, 1.25, 1.5}; the paper's steady-state ordering claim vs the sigma-independent plateau.")
    config_class = Fig2bConfig

    def units(self, config: Fig2bConfig) -> list[Unit]:
        return [Unit(unit_key(method="volterra", noise_std=float(s)), {"noise_std": float(s)})
                for s in config.noise_stds]

    def unit_config(self, config: Fig2bConfig, unit: Unit) -> Mapping[str, Any]:
        data = config.to_dict()
        data.pop("noise_stds")
        return {**data, "noise_std": unit.params["noise_std"]}

    def compute_unit(self, config: Fig2bConfig, unit: Unit, seed: int) -> dict[str, Any]:
        return _curve_unit(config, float(unit.params["noise_std"]), seed)

    def assemble(self, config: Fig2bConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        sigmas = sorted(float(s) for s in config.noise_stds)
        peaks, peak_at, plateaus, curves, decomposition = [], [], [], [], []
        for sigma in sigmas:
            out = outputs[unit_key(method="volterra", noise_std=sigma)]
            ks = np.asarray(out["iterates"])
            eps = np.asarray(out["rdp_epsilon"], dtype=float)
            params = _privacy_params(config, noise_std=sigma, renyi_order=config.renyi_order,
                                     num_pairs=out["num_pairs"], method="volterra", guarantee=out["guarantee"],
                                     quantity="rdp_epsilon")
            series.append(Series(name=f"HSGD rdp_epsilon sigma={sigma:g}", params=params, x=ks, y=eps,
                                 x_label="iteration k", y_label="rdp_epsilon"))
            tag = f"noise_std={sigma:g}"
            checks += _curve_checks(tag, config, out)
            i = int(np.argmax(eps))
            peaks.append(float(eps[i]))
            peak_at.append(int(ks[i]))
            plateaus.append(float(eps[-1]))
            curves.append(eps)
            lag = out["dense"][-1]
            decomposition.append((lag["mean_term"], lag["log_det_term"], lag["iterate"] - lag["position"]))
            mparams = {"noise_std": json_number(sigma), "renyi_order": json_number(config.renyi_order)}
            metrics += [Metric(name="peak_rdp_epsilon", params=mparams, value=peaks[-1]),
                        Metric(name="peak_iterate", params=mparams, value=peak_at[-1]),
                        Metric(name="final_rdp_epsilon", params=mparams, value=plateaus[-1])]
        checks += self._ordering_checks(config, sigmas, peaks, peak_at, plateaus, curves, decomposition)
        checks.append(self._spec_magnitudes(config, sigmas, peaks, peak_at, plateaus))
        table = Table(name="peak and plateau", columns=["noise_std", "peak_rdp_epsilon", "peak_iterate",
                                                        "final_rdp_epsilon", "mean_term_lag", "log_det_term_lag"],
                      rows=[[json_number(s), p, k, q, dm[0], dm[1]]
                            for s, p, k, q, dm in zip(sigmas, peaks, peak_at, plateaus, decomposition, strict=True)])
        return Findings(series=series, tables=[table], metrics=metrics, checks=checks)

    @staticmethod
    def _ordering_checks(config: Fig2bConfig, sigmas: list[float], peaks: list[float], peak_at: list[int],
                         plateaus: list[float], curves: list[np.ndarray],
                         decomposition: list[tuple[float, float, int]]) -> list[Check]:
        checks: list[Check] = []
        sig = [json_number(s) for s in sigmas]
        transient_claim = ("Figure 2(b): larger σ gives a uniformly smaller privacy loss in the transient: the peak of "
                           f"rdp_epsilon strictly decreases in σ over σ = {sig}")
        steady_claim = ("Figure 2(b) (Section 5 text): larger σ gives a uniformly smaller privacy loss at steady "
                        "state. Read as: the final rdp_epsilon(n) strictly decreases in σ, and each ratio "
                        "ε(σ_{i+1})/ε(σ_i) is below σ_i/σ_{i+1}: closer (in log scale) to the noise-calibrated "
                        "scaling (σ_i/σ_{i+1})² than to the σ-independent plateau (ratio 1) that the linearized laws "
                        "predict")
        if len(sigmas) < 2:
            note = "not applicable: needs at least two noise_stds"
            return [check_not_applicable("transient_decreases_in_noise_std", kind=CLAIM, claim=transient_claim,
                                         note=note),
                    check_not_applicable("steady_state_decreases_in_noise_std", kind=CLAIM, claim=steady_claim,
                                         note=note)]
        peak_ok = all(b < a for a, b in zip(peaks, peaks[1:], strict=False))
        checks.append(Check(name="transient_decreases_in_noise_std", kind=CLAIM, claim=transient_claim, expected=None,
                            measured=peaks, tolerance=None, passed=peak_ok,
                            note=f"peaks {[f'{p:.3g}' for p in peaks]} at k = {peak_at} for σ = {sig}"))
        stacked = np.stack(curves)[:, 1:]
        uniform = float(np.mean(np.all(np.diff(stacked, axis=0) < 0, axis=0)))
        checks.append(finding(
            "fraction_of_iterates_ordered_in_noise_std",
            claim="fraction of the iterates k >= 1 on the curve at which rdp_epsilon strictly decreases in σ "
                  "(1 = the paper's 'uniformly smaller')", measured=uniform))
        ratios = [b / a for a, b in zip(plateaus, plateaus[1:], strict=False)]
        bounds = [s0 / s1 for s0, s1 in zip(sigmas, sigmas[1:], strict=False)]
        relaxation = config.relaxation_iterations
        if config.n < RELAXATION_TIMES * relaxation:
            checks.append(check_not_applicable(
                "steady_state_decreases_in_noise_std", kind=CLAIM, claim=steady_claim,
                note=f"not applicable: n = {config.n} < {RELAXATION_TIMES:g} relaxation times "
                     f"({RELAXATION_TIMES * relaxation:.0f} iterations): the curve has not reached its steady state"))
        else:
            strictly = all(r < 1 for r in ratios)
            passed = strictly and all(r < b for r, b in zip(ratios, bounds, strict=True))
            note = (f"claim: larger σ uniformly smaller at steady state; measured rdp_epsilon(n = {config.n}) = "
                    f"{[f'{p:.4g}' for p in plateaus]} for σ = {sig}, consecutive ratios "
                    f"{[f'{r:.4f}' for r in ratios]} (thresholds σ_i/σ_(i+1) = {[f'{b:.4f}' for b in bounds]}; "
                    f"noise-calibrated (σ_i/σ_(i+1))² = {[f'{b * b:.4f}' for b in bounds]}); strictly decreasing: "
                    f"{strictly}.")
            if not passed:
                note += (" Not reproduced: the plateau is set by the covariance (log-determinant) term, "
                         "which does not depend on σ when the sampling-noise part 2P_tλ_j of the diffusion is small "
                         "against σ² (V ∝ σ², and D_α(N(0, σ²V_1) ‖ N(0, σ²V_2)) is σ-free); at lag "
                         f"{decomposition[0][2]} the top pair's log-determinant terms are "
                         f"{[f'{dm[1]:.3g}' for dm in decomposition]} vs mean terms "
                         f"{[f'{dm[0]:.3g}' for dm in decomposition]}. The σ-ordering holds only in the transient.")
            checks.append(Check(name="steady_state_decreases_in_noise_std", kind=CLAIM, claim=steady_claim,
                                expected=None, measured=ratios, tolerance=None, passed=passed, note=note))
        lag = int(round(relaxation))
        if config.n > lag:
            changes = []
            for eps in curves:
                ks = np.asarray(config.curve_iterates())
                earlier = float(eps[int(np.searchsorted(ks, config.n - lag))])
                changes.append(abs(float(eps[-1]) - earlier) / max(float(eps[-1]), np.finfo(float).tiny))
            checks.append(finding(
                "plateau_reached",
                claim=f"relative change of rdp_epsilon over the last relaxation time ({lag} iterations) before n, per "
                      "σ (near 0 once the curve has reached its plateau, after a few hundred iterations)",
                measured=changes))
        spread = (max(plateaus) - min(plateaus)) / float(np.mean(plateaus))
        checks.append(finding(
            "plateau_spread_across_noise_std",
            claim="relative spread (max − min)/mean of rdp_epsilon(n) across σ (0 for the σ-independent plateau "
                  "that the linearized laws predict; 1 − (σ_min/σ_max)² = "
                  f"{1 - (sigmas[0] / sigmas[-1]) ** 2:.3f} of the largest under 1/σ² scaling)",
            measured=spread, note=f"rdp_epsilon(n) = {[f'{p:.4g}' for p in plateaus]} for σ = {sig}"))
        checks.append(finding(
            "plateau_decomposition",
            claim=f"top pair at k = n, lag {decomposition[0][2]}: [mean term, log-determinant term] of D_α per σ, and "
                  "σ²·mean term (constant if the mean term scales as 1/σ²)",
            measured=[[dm[0], dm[1], s * s * dm[0]] for dm, s in zip(decomposition, sigmas, strict=True)],
            note="from the dense d × d computation; the log-determinant term dominates at steady state"))
        return checks

    @staticmethod
    def _spec_magnitudes(config: Fig2bConfig, sigmas: list[float], peaks: list[float], peak_at: list[int],
                         plateaus: list[float]) -> Check:
        claim = ("Figure 2(b) reference magnitudes (independent implementation, another data draw; α = 2, top-5 proxy "
                 "pairs, V(0) = 0): peak ≈ 8e-5 (σ=1), 5e-5 (σ=1.25), 3.7e-5 (σ=1.5) near k ≈ 10-25, plateau ≈ 1.3e-5")
        applies = (_is_paper_setting(config) and config.renyi_order == 2 and config.num_pairs == 5
                   and config.x0_policy == "random_public")
        if not applies:
            return check_not_applicable("spec_reference_magnitudes", kind=FINDING, claim=claim,
                                        note="not applicable: the reference values are for d = 1000, n = 1500, "
                                             "η = 0.05, δ = 0.1, α = 2, 5 pairs, x0_policy = random_public")
        expected = {json_number(s): _REF_FIG2B["peak"].get(s) for s in sigmas}
        measured = {json_number(s): [p, k, q] for s, p, k, q in zip(sigmas, peaks, peak_at, plateaus, strict=True)}
        return Check(name="spec_reference_magnitudes", kind=FINDING, claim=claim,
                     expected={"peak": expected, "plateau": _REF_FIG2B["plateau"]},
                     measured=measured, passed=None,
                     note="measured per σ: [peak, peak iterate, rdp_epsilon(n)]; the values depend on the data draw "
                          "(the pairs are extreme order statistics of the proxy)")

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for i, s in enumerate(select_series(result, quantity="rdp_epsilon")):
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), color=f"C{i}", lw=1.2,
                    label=f"σ = {s['params']['noise_std']} ({s['params']['guarantee']})")
        cfg = result["config"]
        ax.set_xlabel("iteration k")
        ax.set_ylabel(f"rdp_epsilon, α = {cfg['renyi_order']}")
        ax.set_yscale("log")
        ax.set_title(f"HSGD surrogate, top-{cfg['num_pairs']} proxy pairs, d = {cfg['d']}, n = {cfg['n']}",
                     fontsize=9)
        ax.legend(fontsize=8)
        fig.suptitle(f"{result['paper']}", fontsize=7)
        fig.tight_layout()
        return [save_figure(fig, out_dir)]


# --------------------------------------------------------------------------------------------------------------
# Figure 3(a)
# --------------------------------------------------------------------------------------------------------------


def _batch_key(first: int, count: int) -> str:
    return f"simulation/runs={first}-{first + count - 1}"


class Fig3a(Experiment):
    name = "hsgd-fig3a"
    paper_key = "hsgd"
    title = "Population risk of clipped noisy SGD against the unclipped run"
    paper = f"{PAPER}, Figure 3(a)"
    description = ("P(x_k) of noisy SGD clipped at c in {3, 5, 7} and unclipped (sigma=1.5, common random numbers), "
                   "with the Volterra curve of the unclipped run.")
    config_class = Fig3aConfig

    def units(self, config: Fig3aConfig) -> list[Unit]:
        units = [Unit("volterra", {"method": "volterra"})]
        units += [Unit(_batch_key(first, count), {"method": "simulation", "first_run": first, "num_runs": count})
                  for first, count in config.run_batches()]
        return units

    def compute_unit(self, config: Fig3aConfig, unit: Unit, seed: int) -> dict[str, Any]:
        design, x0 = paper_setting(config.d, seed)
        steps = config.record_steps()
        if unit.params["method"] == "volterra":
            secret = config.x0_policy == "random_secret"
            problem = hsgd_problem(design, x0=None if secret else x0, learning_rate=Constant(config.learning_rate),
                                   ridge=config.ridge, noise_std=config.noise_std, x0_policy=config.x0_policy,
                                   init_variance=1.0)
            curve = dyn.volterra_risk(problem, steps / config.d, max_step=1.0 / config.d, refinements=REFINEMENTS)
            return {"steps": steps.tolist(), "population_risk": np.asarray(curve.population_risk).tolist()}
        start = np.zeros_like(x0) if config.x0_policy == "random_secret" else x0
        out: dict[str, Any] = {"steps": steps.tolist(), "risk": {}, "clipped_steps": {}}
        for clip in (None, *config.clips):
            sim = simulate_noisy_sgd(data=design, x0=start, ridge=config.ridge, num_steps=config.n,
                                     num_runs=unit.params["num_runs"], seed=seed,
                                     unit_key=unit_key(method="simulation", d=config.d, n=config.n),
                                     first_run=unit.params["first_run"], step_size=config.step_size,
                                     noise_std=config.noise_std, clip=clip, clip_convention=config.clip_convention,
                                     init_variance=config.init_variance, record_steps=steps)
            key = "none" if clip is None else repr(float(clip))
            out["risk"][key] = sim.population_risk.tolist()
            if sim.clipped_steps is not None:
                out["clipped_steps"][key] = sim.clipped_steps.tolist()
        return out

    def assemble(self, config: Fig3aConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        checks: list[Check] = []
        vol = outputs["volterra"]
        steps = np.asarray(vol["steps"])
        base = {**config.base_params(), "noise_std": json_number(config.noise_std), "x0_policy": config.x0_policy,
                "clip_convention": config.clip_convention, "quantity": "population_risk"}
        series.append(Series(name="Volterra (unclipped)", params={**base, "method": "volterra", "clip": None},
                             x=steps, y=vol["population_risk"], x_label="iteration k", y_label="population_risk"))
        batches = [outputs[_batch_key(first, count)] for first, count in config.run_batches()]
        risk = {key: np.concatenate([np.asarray(b["risk"][key]) for b in batches]) for key in batches[0]["risk"]}
        clipped = {key: np.concatenate([np.asarray(b["clipped_steps"][key]) for b in batches])
                   for key in batches[0]["clipped_steps"]}
        runs = risk["none"].shape[0]
        for clip in (None, *config.clips):
            key = "none" if clip is None else repr(float(clip))
            values = risk[key]
            mean, sd = values.mean(axis=0), values.std(axis=0, ddof=1)
            se = sd / math.sqrt(runs)
            series.append(Series(name=f"SGD mean clip={clip}", params={**base, "method": "simulation",
                                                                        "clip": None if clip is None
                                                                        else json_number(clip)},
                                 x=steps, y=mean, y_low=mean - sd, y_high=mean + sd, standard_error=se,
                                 x_label="iteration k", y_label="population_risk"))
        base_runs = risk["none"]
        for clip in config.clips:
            key = repr(float(clip))
            counts = clipped[key]
            never = counts == 0
            diff = risk[key] - base_runs
            tag = f"clip={json_number(clip)}"
            if np.any(never):
                worst = float(np.max(np.abs(diff[never])))
                checks.append(Check(
                    name=f"non_binding_clip_is_identity {tag}", kind=INVARIANT,
                    claim=f"the {int(never.sum())} runs in which clipping at c = {json_number(clip)} never binds are "
                          "bit-identical to the unclipped runs (same data and noise streams)",
                    expected=0.0, measured=worst, tolerance=0.0, passed=worst == 0.0,
                    note="measured: max |P_clipped(x_k) − P_unclipped(x_k)| over those runs and steps"))
            else:
                checks.append(check_not_applicable(
                    f"non_binding_clip_is_identity {tag}", kind=INVARIANT,
                    claim=f"runs in which clipping at c = {json_number(clip)} never binds equal the unclipped runs",
                    note="not applicable: clipping binds in every run"))
            paired = diff[:, 1:].mean(axis=1)  # time-averaged paired difference per run
            mean_diff = float(paired.mean())
            se_diff = float(paired.std(ddof=1) / math.sqrt(runs))
            passed = mean_diff >= -Z * se_diff
            checks.append(Check(
                name=f"unclipped_attains_lowest_risk {tag}", kind=CLAIM,
                claim=f"Figure 3(a): the unclipped run attains the lowest risk: the time-averaged paired difference "
                      f"P_clipped − P_unclipped (c = {json_number(clip)}) is not below 0 beyond z = {Z:g} SE",
                expected=0.0, measured=mean_diff, tolerance=Z * se_diff, standard_error=se_diff, passed=passed,
                note=f"claim: clipped ≥ unclipped; measured {mean_diff:.4g} ± {se_diff:.2g} (SE) over {runs} paired "
                     "runs (common random numbers). An independent implementation shows no visible gap: clipping "
                     "rarely binds for c ≥ 3 under the full-gradient convention"))
            frac = float(counts.mean() / config.n)
            metrics += [Metric(name="clipped_step_fraction", params={"clip": json_number(clip)}, value=frac),
                        Metric(name="mean_paired_risk_difference", params={"clip": json_number(clip)},
                               value=mean_diff)]
            checks.append(finding(
                f"clipping_frequency {tag}",
                claim=f"mean fraction of the n steps whose gradient is clipped at c = {json_number(clip)}, and the "
                      "fraction of runs in which it never binds",
                measured=[frac, float(np.mean(never))],
                note="independent implementation (Figure 3(a)): c = 3 clips ≈ 2% of the steps (first ~35 iterations), "
                     "c = 5, 7 never"))
        mean = base_runs.mean(axis=0)
        se = base_runs.std(axis=0, ddof=1) / math.sqrt(runs)
        pred = np.asarray(vol["population_risk"])
        live = np.ptp(base_runs, axis=0) > 0  # x_0 (equal in every run) carries no sampling error
        dev = float(np.max(np.abs(mean - pred)[live] / se[live])) if np.any(live) else 0.0
        checks.append(finding(
            "unclipped_vs_volterra",
            claim="largest |mean − Volterra| of the unclipped SGD risk over the recorded steps, in standard errors "
                  "(the comparison with a derived tolerance is hsgd-fig2a's)", measured=dev,
            note=f"{runs} runs, {int(np.sum(live))} recorded steps"))
        return Findings(series=series, metrics=metrics, checks=checks)

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for i, s in enumerate(select_series(result, method="simulation")):
            c = s["params"]["clip"]
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), color=f"C{i}", lw=1.1,
                    label="unclipped" if c is None else f"clip c = {c}")
        vol = select_series(result, method="volterra")
        if vol:
            ax.plot(as_floats(vol[0]["x"]), as_floats(vol[0]["y"]), "k--", lw=0.9, label="Volterra (unclipped)")
        cfg = result["config"]
        ax.set_xlabel("iteration k")
        ax.set_ylabel("population risk (mean over runs)")
        ax.set_title(f"σ = {cfg['noise_std']}, {cfg['num_runs']} runs, d = {cfg['d']}", fontsize=9)
        ax.legend(fontsize=8)
        fig.suptitle(f"{result['paper']}", fontsize=7)
        fig.tight_layout()
        return [save_figure(fig, out_dir)]


# --------------------------------------------------------------------------------------------------------------
# Figure 3(b)
# --------------------------------------------------------------------------------------------------------------


class Fig3b(Experiment):
    name = "hsgd-fig3b"
    paper_key = "hsgd"
    title = "Ye-Shokri last-iterate RDP bound for clipped SGD against the HSGD surrogate for unclipped SGD"
    paper = f"{PAPER}, Figure 3(b)"
    description = ("Ye & Shokri (2022) one-epoch RDP bound (bound) for clips c in {3, 5, 7} vs the HSGD rdp_epsilon "
                   "curve (surrogate) of the unclipped run, sigma=1.5, alpha=2.")
    config_class = Fig3bConfig

    def units(self, config: Fig3bConfig) -> list[Unit]:
        return [Unit(unit_key(method="volterra", noise_std=config.noise_std), {"method": "volterra"}),
                Unit("ye_shokri", {"method": "ye_shokri"})]

    def compute_unit(self, config: Fig3bConfig, unit: Unit, seed: int) -> dict[str, Any]:
        if unit.params["method"] == "volterra":
            return _curve_unit(config, config.noise_std, seed)
        ks = config.curve_iterates()
        q = 1.0 - config.step_size * config.ridge
        out: dict[str, Any] = {"iterates": ks.tolist(), "bound": {}, "reference": {}, "guarantee": None}
        for clip in config.clips:
            multiplier = config.noise_std / clip
            loss = ye_shokri_rdp(config.renyi_order, noise_multiplier=multiplier, contraction=q, num_steps=config.n,
                                 iterates=ks)
            out["guarantee"] = loss.guarantee.value
            out["bound"][repr(float(clip))] = np.asarray(loss.value).tolist()
            out["reference"][repr(float(clip))] = reference_ye_shokri(
                config.renyi_order, noise_multiplier=multiplier, contraction=q, num_steps=config.n,
                iterates=ks).tolist()
        return out

    def assemble(self, config: Fig3bConfig, outputs: Mapping[str, Mapping[str, Any]], *, seed: int,
                 quick: bool) -> Findings:
        series: list[Series] = []
        metrics: list[Metric] = []
        hsgd = outputs[unit_key(method="volterra", noise_std=config.noise_std)]
        ys = outputs["ye_shokri"]
        ks = np.asarray(hsgd["iterates"])
        eps = np.asarray(hsgd["rdp_epsilon"], dtype=float)
        series.append(Series(name="HSGD rdp_epsilon (unclipped)",
                             params=_privacy_params(config, noise_std=config.noise_std,
                                                    renyi_order=config.renyi_order, num_pairs=hsgd["num_pairs"],
                                                    method="volterra", guarantee=hsgd["guarantee"],
                                                    quantity="rdp_epsilon"),
                             x=ks, y=eps, x_label="iteration k", y_label="rdp_epsilon"))
        checks = _curve_checks(f"noise_std={json_number(config.noise_std)}", config, hsgd)
        clips = sorted(float(c) for c in config.clips)
        bounds = []
        for clip in clips:
            key = repr(clip)
            bound = np.asarray(ys["bound"][key], dtype=float)
            bounds.append(bound)
            params = {**_privacy_params(config, noise_std=config.noise_std, renyi_order=config.renyi_order,
                                        num_pairs=None, method="ye_shokri", guarantee=ys["guarantee"],
                                        quantity="rdp_epsilon", clip=clip, mode=None, x0_policy=None),
                      "noise_multiplier": config.noise_std / clip}
            series.append(Series(name=f"Ye-Shokri bound clip={clip:g}", params=params, x=ks, y=bound,
                                 x_label="iteration k", y_label="rdp_epsilon"))
            tag = f"clip={json_number(clip)}"
            checks.append(check_close(
                f"ye_shokri_matches_closed_form {tag}", kind=INVARIANT,
                claim="the Ye-Shokri trajectory equals the Gaussian mechanism of the contracted linear recursion "
                      "(ε_j = α(2q^(j−1))²/(2σ_m² Σ_(i<j) q^(2i)), sum accumulated) with this module's mixture",
                expected=ys["reference"][key], measured=bound.tolist(), rtol=1e-10,
                note=f"σ_m = σ/c = {config.noise_std / clip:.6g}, q = 1 − ηδ"))
            metrics.append(Metric(name="ye_shokri_final", params={"clip": json_number(clip)}, value=float(bound[-1])))
            checks.append(finding(
                f"bound_over_surrogate {tag}",
                claim=f"Ye-Shokri bound (c = {json_number(clip)}) over the HSGD surrogate at k = n",
                measured=float(bound[-1] / eps[-1]) if eps[-1] > 0 else math.inf))
        checks += self._spec_values(config, clips, bounds)
        upper = np.min(np.stack(bounds), axis=0)
        live = ks >= 1
        checks.append(check_ordering(
            "bound_above_surrogate", kind=CLAIM,
            claim="Figure 3(b): the Ye-Shokri RDP of every clipped run lies above the HSGD curve of the unclipped run "
                  "at every iterate k >= 1",
            lower=eps[live], upper=upper[live],
            note=f"at k = n: bounds {[f'{b[-1]:.4g}' for b in bounds]} for c = {[json_number(c) for c in clips]} vs "
                 f"HSGD {eps[-1]:.3g} (a formal bound against a surrogate: different kinds of number)"))
        if len(clips) >= 2:
            stacked = np.stack(bounds)[:, live]
            ok = bool(np.all(np.diff(stacked, axis=0) > 0))
            checks.append(Check(
                name="bound_increases_with_clip", kind=CLAIM,
                claim="Figure 3(b): a smaller clip c gives a smaller Ye-Shokri loss (strictly increasing in c at every "
                      "k >= 1)", expected=None, measured=[float(b[-1]) for b in bounds], tolerance=None, passed=ok,
                note=f"values at k = n for c = {[json_number(c) for c in clips]}"))
        return Findings(series=series, metrics=metrics, checks=checks)

    @staticmethod
    def _spec_values(config: Fig3bConfig, clips: list[float], bounds: list[np.ndarray]) -> list[Check]:
        checks = []
        applies = _is_paper_setting(config) and config.renyi_order == 2 and config.noise_std == 1.5
        for clip, bound in zip(clips, bounds, strict=True):
            printed = _REF_YE_SHOKRI.get(clip)
            if printed is None:
                continue
            value, half = printed_value(printed)
            name = f"ye_shokri_spec_value clip={json_number(clip)}"
            claim = ("Figure 3(b) reference value (independent implementation): with α = 2, σ = 1.5, η = 0.05, "
                     f"δ = 0.1, n = 1500 the Ye-Shokri bound at k = n is {printed} for c = {json_number(clip)}")
            if not applies:
                checks.append(check_not_applicable(name, kind=INVARIANT, claim=claim, expected=value,
                                                   note="not applicable: the config differs from the "
                                                        "reference setting"))
                continue
            checks.append(check_close(name, kind=INVARIANT, claim=claim, expected=value, measured=float(bound[-1]),
                                      atol=half, note="tolerance: half a unit in the last printed digit"))
        return checks

    def plot(self, result: Mapping[str, Any], out_dir: Path) -> list[str]:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for i, s in enumerate(select_series(result, method="ye_shokri")):
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), color=f"C{i}", lw=1.1,
                    label=f"Ye-Shokri bound, c = {s['params']['clip']}")
        for s in select_series(result, method="volterra"):
            ax.plot(as_floats(s["x"]), as_floats(s["y"]), "k-", lw=1.2, label="HSGD surrogate (unclipped)")
        cfg = result["config"]
        ax.set_yscale("log")
        ax.set_xlabel("iteration k")
        ax.set_ylabel(f"rdp_epsilon, α = {cfg['renyi_order']}")
        ax.set_title(f"σ = {cfg['noise_std']}, d = {cfg['d']}, n = {cfg['n']}", fontsize=9)
        ax.legend(fontsize=8)
        fig.suptitle(f"{result['paper']}", fontsize=7)
        fig.tight_layout()
        return [save_figure(fig, out_dir)]


EXPERIMENTS = (Fig1b(), Fig2b(), Fig3a(), Fig3b())
