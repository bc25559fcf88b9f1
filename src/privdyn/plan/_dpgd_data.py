"""The dpgd data model of a data file: spectrum, target projections, residual, row scale, assumption checks.

The deterministic equivalent of arXiv 2505.16329 (Definition 4.2) takes the eigenvalues λ_i of Σ, the squared
projections (ω_iᵀθ*)² of the target on its eigenvectors and the label-noise level ζ. From the second-moment sums
S_xx = Σ x xᵀ, S_xy = Σ y x, S_yy = Σ y² of n rows (exact, or released by the planning share's Gaussian mechanisms,
:mod:`privdyn.plan._data`):

* M̂ = S_xx/n = Σ_i λ_i ω_i ω_iᵀ, the moments m_i = ω_iᵀS_xy/n and θ* = Σ_i (m_i/λ_i) ω_i: the best linear predictor
  (least squares on the rows), its squared projections (m_i/λ_i)²;
* the residual of the best linear predictor, ζ² = S_yy/n − Σ_i m_i²/λ_i. On real data it is not label noise
  independent of x: it holds everything the linear model misses. The ODE treats it as Gaussian noise of variance ζ²;
  with the data at hand (``--public-stats``) that is checked and its consequence for clipping computed (below).

**Under the planning share** the sums carry Gaussian noise of known scale (s_xx, s_xy, s_yy). Three corrections,
each a property of the Gaussian noise, not of the data:

* an eigenvalue of M̂ below the noise matrix's spectral norm 2√d·s_xx/n (Wigner's semicircle) is not resolved: it is
  raised to that level, and the prediction says how many were (such directions decay faster in the model than in
  the data, so the prediction is optimistic there);
* E[m_i²] = m_i² + (s_xy/n)²: the squared moments are debiased by (s_xy/n)² before they enter θ* and ζ². Without it,
  Σ_i m_i²/λ_i is inflated by (s_xy/n)²·Σ_i 1/λ_i, over the small noisy eigenvalues, ζ̂² goes negative and was
  clamped to the floor 10⁻³·S_yy/n — a label noise of 0.03·rms(y) whatever the data (the cause of the up-to-780×
  optimistic predictions with a planning share, see docs/sklearn.md);
* a residual that still falls below the floor is reported as not resolved.

**Checks of the ODE's assumptions** (reasons of the ``heuristic`` label, :func:`assess`): the d → ∞ limit, by the
effective rank r = (tr Σ)²/tr Σ² (the relative finite-d error of the deterministic equivalent is O(r^(−1/2)), so r < 4
means an error of order ½ or more); under ``--public-stats`` the Gaussian-design assumptions the clipping factors of
Lemma B.1 rest on: the clipped fraction of per-example gradients at the plan's threshold against the Gaussian
model's, and the clipping fixed point (below).

**The clipping fixed point** (``--public-stats``). Clipped GD does not converge to θ*: its fixed point θ_c solves
Σ_k min(1, C/(‖x_k‖·|r_k|))·r_k x_k = 0 (a Huber-type M-estimator with per-row threshold C/‖x_k‖). For Gaussian
residuals independent of x (the paper's model) θ_c = θ*; for the skewed, heavy-tailed residuals of real data it is
not, and ½‖Σ^(1/2)(θ_c − θ*)‖² is an excess risk the ODE cannot see. It is computed exactly on the rows (iteratively
reweighted least squares) and added to the ODE's prediction, and the planner's search minimizes the sum.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

__all__ = ["DataAssessment", "ClipBias", "data_model", "assess", "RANK_THRESHOLD", "CLIPPED_RATIO"]

RANK_THRESHOLD = 4.0
"""Below this effective rank the d → ∞ limit's relative error, O(r^(−1/2)), reaches ½: label ``heuristic``."""
CLIPPED_RATIO = 2.0
"""The clipped fraction of gradients measured on the rows against the Gaussian model's: outside [1/2, 2] the
Gaussian clipping factors (Lemma B.1) do not describe the data (label ``heuristic``)."""
_RESIDUAL_FLOOR = 1e-3
"""ζ̂² is at least this fraction of S_yy/n (a floor for an unresolved residual; reported when it binds)."""
_EIGENVALUE_FLOOR = 1e-9
"""Eigenvalues of M̂ below this fraction of the largest are raised to it (rounding; reported if the data have any)."""


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class DataAssessment:
    """What the data model rests on, in the units of the data (features times ``feature_scale``, labels as given).

    Attributes:
        residual_variance: ζ², the mean squared residual of the best linear predictor (label units²).
        effective_rank: (tr Σ)²/tr Σ².
        unresolved_eigenvalues: eigenvalues of the released M̂ below its noise level (0 for public statistics).
        residual_resolved: False when ζ̂² hit its floor.
        row_scale: E‖x‖² of the rows (as given, before ``feature_scale``) over the public bound's square, when a
            bound was given (the planning share): how much of the ball the rows use; None otherwise.
        residual_kurtosis: E r⁴/(E r²)² of the best-linear residual (3 for Gaussian), public statistics only.
        norm_dispersion: sd(‖x‖²)/E‖x‖² on the rows against a Gaussian design's √(2 tr Σ²)/tr Σ, as the pair
            (measured, gaussian); public statistics only.
        reasons: the assumptions that failed (the ``heuristic`` label's reasons), and what was not checked.
    """

    residual_variance: float
    effective_rank: float
    unresolved_eigenvalues: int
    residual_resolved: bool
    row_scale: float | None = None
    residual_kurtosis: float | None = None
    norm_dispersion: tuple[float, float] | None = None
    failed: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"residual_variance": self.residual_variance, "effective_rank": self.effective_rank,
                "unresolved_eigenvalues": self.unresolved_eigenvalues, "residual_resolved": self.residual_resolved,
                "row_scale": self.row_scale, "residual_kurtosis": self.residual_kurtosis,
                "norm_dispersion": None if self.norm_dispersion is None else list(self.norm_dispersion),
                "failed": list(self.failed), "unchecked": list(self.unchecked)}


class ClipBias:
    """½‖Σ^(1/2)(θ_c − θ*)‖² for clip c, with θ_c the fixed point of clipped GD on the rows (module docstring).

    Works on the scaled rows z = s·x (tr Σ = d) and the labels; cached per c. Iteratively reweighted least squares
    with weights min(1, C/(‖z‖·|r|)), C = c√d, from θ*: the Huber-type estimating equation has a unique root when
    the weighted second-moment matrix stays positive definite, and IRLS decreases its convex objective at every
    step.
    """

    def __init__(self, rows: np.ndarray, labels: np.ndarray, theta: np.ndarray, second_moment: np.ndarray) -> None:
        self.rows, self.labels, self.theta, self.second_moment = rows, labels, theta, second_moment
        self.norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
        self.cache: dict[float, float] = {}

    def fixed_point(self, clip: float, *, max_iter: int = 200, tol: float = 1e-10) -> np.ndarray:
        """θ_c for clip c (C = c√d)."""
        threshold = clip * math.sqrt(self.rows.shape[1])
        theta = self.theta.copy()
        for _ in range(max_iter):
            gradient_norm = self.norms * np.abs(self.rows @ theta - self.labels)
            w = np.minimum(1.0, threshold / np.maximum(gradient_norm, 1e-300))
            weighted = self.rows * w[:, None]
            new = np.linalg.solve(weighted.T @ self.rows, weighted.T @ self.labels)
            step = float(np.max(np.abs(new - theta)))
            theta = new
            if step <= tol * (1.0 + float(np.max(np.abs(theta)))):
                break
        return theta

    def __call__(self, clip: float) -> float:
        key = round(float(clip), 12)
        if key not in self.cache:
            gap = self.fixed_point(float(clip)) - self.theta
            self.cache[key] = 0.5 * float(gap @ self.second_moment @ gap)
        return self.cache[key]

    def clipped_fraction(self, clip: float) -> float:
        """The fraction of rows whose gradient at θ* exceeds C = c√d."""
        threshold = clip * math.sqrt(self.rows.shape[1])
        return float(np.mean(self.norms * np.abs(self.rows @ self.theta - self.labels) > threshold))


def data_model(sxx: np.ndarray, sxy: np.ndarray, syy: float, *, rows: int, release: Any, features: np.ndarray | None,
               labels: np.ndarray | None, source: str, statistics: str, precondition: bool = False) -> Any:
    """The :class:`~privdyn.plan._dpgd.DPGDModel` of the sums (module docstring); ``release`` for a planning share.

    ``precondition`` (planning share only): the model of the rows whitened by the released second moment,
    z ↦ P z with P = V diag((λ̂⁺ + τ)^(−1/2)) Vᵀ (τ the release's noise level; the model's ``preconditioner``).
    """
    from privdyn.plan._dpgd import DPGDModel
    from privdyn.spectra import Spectrum

    dim = sxx.shape[0]
    values, vectors = np.linalg.eigh(0.5 * (sxx + sxx.T) / rows)
    top = float(values.max())
    if not top > 0:
        raise ValueError("the estimated second-moment matrix has no positive eigenvalue; the data (or the planning "
                         "share) is too small to plan from.")
    moment = vectors.T @ (sxy / rows)
    squared = moment**2
    noise_level = 0.0
    if release is not None:
        noise_level = 2.0 * math.sqrt(dim) * release.stds["second_moment_features"] / rows
        squared = np.maximum(squared - (release.stds["feature_label_moment"] / rows) ** 2, 0.0)
    hidden = values < noise_level  # directions the release does not resolve
    unresolved = int(np.sum(hidden))
    floored = np.maximum(values, max(_EIGENVALUE_FLOOR * top, noise_level))
    explained = float(np.sum(np.where(hidden, 0.0, squared / floored)))  # the resolved directions' signal
    floor = _RESIDUAL_FLOOR * syy / rows
    raw_residual = syy / rows - explained
    remaining = max(raw_residual, floor, 1e-12)
    signal = np.where(hidden, 0.0, squared / floored)  # signal variance λ_i θ_i² per direction
    if unresolved:  # the release cannot split the rest: half signal, spread over the hidden directions
        signal = np.where(hidden, 0.5 * remaining / unresolved, signal)
        residual = 0.5 * remaining
    else:
        residual = remaining
    preconditioner = None
    if precondition:
        if release is None:
            raise ValueError("precondition applies to a planning share only (the rows are whitened by the released "
                             "second moment); drop it or give planning_share.")
        # rows z -> P z with P = V diag((λ̂⁺ + τ)^(-1/2)) Vᵀ, τ the noise level: the released second moment becomes
        # diag(λ̂/(λ̂⁺ + τ)) (kept as released, raised to a small floor only, so that its trace — the rows' scale
        # after whitening — is unbiased); the signal variance per direction is unchanged by the change of basis
        shift = np.maximum(values, 0.0) + noise_level
        preconditioner = (vectors / np.sqrt(shift)) @ vectors.T
        values = np.maximum(values, max(_EIGENVALUE_FLOOR * top, 1e-3 * noise_level)) / shift
    else:
        values = floored
    theta_sq = signal / values  # squared projections of the best linear predictor
    scale = math.sqrt(dim / float(values.sum()))
    spectrum = Spectrum.from_eigenvalues(values * scale**2)
    projections = spectrum.group_sums(theta_sq / scale**2)
    eig = values * scale**2
    effective_rank = float(eig.sum() ** 2 / np.sum(eig**2))
    clip_bias = None
    kurtosis = None
    dispersion = None
    row_scale = None
    if features is not None and labels is not None and not precondition:
        theta = vectors @ (moment / values)
        residuals = labels - features @ theta
        kurtosis = float(np.mean(residuals**4) / np.mean(residuals**2) ** 2)
        sq_norms = np.einsum("ij,ij->i", features, features)
        dispersion = (float(np.std(sq_norms) / np.mean(sq_norms)), float(math.sqrt(2.0 * np.sum(eig**2)) / eig.sum()))
        z = features * scale
        clip_bias = ClipBias(z, labels, theta / scale, (z.T @ z) / rows)
    if release is not None:
        row_scale = float(np.trace(sxx) / rows) / release.feature_norm_bound**2
    failed: list[str] = []
    unchecked: list[str] = []
    if effective_rank < RANK_THRESHOLD:
        failed.append(f"d -> infinity limit: the effective rank (tr S)^2/tr S^2 = {effective_rank:.3g} < "
                      f"{RANK_THRESHOLD:g}, so the ODE's O(rank^-1/2) finite-d error is of order 1/2 or more")
    if unresolved:
        failed.append(f"spectrum: {unresolved} of {dim} eigenvalues of the released second moment lie below its "
                      f"noise level {noise_level:.3g} (2 sqrt(d) s_xx/n) and were raised to it; the bias along them "
                      "is predicted to decay faster than it will")
    if unresolved and raw_residual >= floor:
        failed.append(f"residual: {raw_residual:.3g} of the mean squared label is not explained by the resolved "
                      "directions; half of it is taken as signal over the unresolved ones, half as label noise (a "
                      "public prior, not an estimate)")
    if raw_residual < floor:
        failed.append(f"residual: the estimated residual variance {raw_residual:.3g} is below its floor "
                      f"{floor:.3g} (1e-3 of the mean squared label); the label noise is not resolved")
    if release is not None:
        unchecked.append("Gaussian design and residual (clipping factors of Lemma B.1): not checkable from the "
                         "released second moments; the clipping fixed point's bias is not included")
    assessment = DataAssessment(residual_variance=residual, effective_rank=effective_rank,
                                unresolved_eigenvalues=unresolved, residual_resolved=raw_residual >= floor,
                                row_scale=row_scale, residual_kurtosis=kurtosis, norm_dispersion=dispersion,
                                failed=tuple(failed), unchecked=tuple(unchecked))
    description = {"spectrum": "data", "data": source, "n": rows, "d": dim, "label_noise": math.sqrt(residual),
                   "target_norm": float(np.sqrt(theta_sq.sum())), "feature_scale": scale, "statistics": statistics,
                   "assessment": assessment.to_json()}
    return DPGDModel(n=rows, d=dim, spectrum=spectrum, target_projections=projections,
                     label_noise=math.sqrt(residual), feature_scale=scale, description=description,
                     assessment=assessment, clip_bias=clip_bias, release=release,
                     preconditioner=preconditioner)


def assess(model: Any, clip: float) -> tuple[str, tuple[str, ...]]:
    """The prediction's label (``model`` or ``heuristic``) and its reasons, at the plan's clip c.

    Adds, under public statistics, the clipping check: the fraction of per-example gradients at θ* above
    C = c√d on the rows against the Gaussian model's P(|N| > c/ζ) (Lemma B.1 at R = 0).
    """
    from scipy import special

    a = model.assessment
    if a is None:
        return "model", ("the planner's model was given as public numbers: the prediction holds for that model",)
    failed = list(a.failed)
    if model.clip_bias is not None:
        measured = model.clip_bias.clipped_fraction(clip)
        gaussian = float(special.erfc(clip / model.label_noise / math.sqrt(2.0)))
        floor = 1.0 / model.n  # one row: the resolution of a measured fraction
        ratio = (measured + floor) / (gaussian + floor)
        if not 1.0 / CLIPPED_RATIO <= ratio <= CLIPPED_RATIO:
            failed.append(f"clipping: {100 * measured:.3g}% of the per-example gradients at the best linear fit "
                          f"exceed C = clip*sqrt(d), the Gaussian model of Lemma B.1 predicts {100 * gaussian:.3g}% "
                          f"(residual kurtosis {a.residual_kurtosis:.3g}, Gaussian 3); the clipping fixed point's "
                          f"bias ({model.clip_bias(clip):.3g} in risk units) is included, the transient is not")
    label = "heuristic" if failed else "model"
    return label, tuple(failed) + tuple(a.unchecked)
