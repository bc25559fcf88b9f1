"""Independent solvers for the privacy curves of the hsgd paper (arXiv 2510.16687): subspace and dense computations of
the neighbouring laws' Renyi divergences (Lemmas C.1-C.3) and the Ye-Shokri trajectory, written apart from the engines
they check (:mod:`privdyn.privacy.hsgd`, :mod:`privdyn.privacy.hidden_state`)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from privdyn.dynamics import hsgd as dyn
from privdyn.privacy import hsgd as priv

__all__ = ["reference_divergences", "reference_rdp_epsilon", "dense_divergences", "reference_ye_shokri",
           "rounding_atol", "mixture_epsilon"]


# --------------------------------------------------------------------------------------------------------------
# Independent reference solvers
# --------------------------------------------------------------------------------------------------------------


def rounding_atol(renyi_order: float, size: int) -> float:
    """Absolute rounding allowance of a Gaussian Rényi divergence computed from log-determinants of ``size`` × ``size``
    whitened matrices near the identity: each log-determinant carries ≲ size·eps, weighted by (abs(1 − α) + α + 1)/
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


def reference_divergences(renyi_order: float, law: dyn.HSGDLaw, *, feature: ArrayLike, label: float,
                          other_feature: ArrayLike,
                          other_label: float, iterate: int, positions: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
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


def mixture_epsilon(alpha: float, worst: np.ndarray, num_steps: int, iterate: int) -> float:
    """ε(k) = (1/(α − 1))[logsumexp({log(n − k)} ∪ (α − 1)·worst) − log n], at least 0 (eq. (15) on the SGD grid).

    ``worst`` holds the k = ``iterate`` worst-case divergences D_α(k; ℓ) over the positions ℓ < k of the differing
    sample (+inf anywhere gives +inf); ``num_steps`` is n, ``alpha`` the Rényi order α > 1.
    """
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
                          iterates: ArrayLike) -> np.ndarray:
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
        out[i] = mixture_epsilon(float(renyi_order), worst, int(num_steps), k)
    return out


def dense_divergences(renyi_order: float, law: dyn.HSGDLaw, *, feature: ArrayLike, label: float,
                      other_feature: ArrayLike,
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
                        iterates: ArrayLike) -> np.ndarray:
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
    return np.array([mixture_epsilon(alpha, eps[:k], n, int(k)) for k in ks.tolist()])
