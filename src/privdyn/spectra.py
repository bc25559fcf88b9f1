"""Covariance spectra: distinct eigenvalues with multiplicities, and projections of vectors onto eigenspaces.

The deterministic equivalents of the hsgd and dpgd papers are linear in one state per eigen-direction, with
coefficients that depend on the direction only through its eigenvalue. Directions with the same eigenvalue can
therefore be merged: a :class:`Spectrum` holds the m distinct eigenvalues with their multiplicities, and a vector's
squared projections onto the eigenvectors are summed within each group (:meth:`Spectrum.group_sums`). A spectrum
with m distinct values costs m states whatever the dimension d.

Constructors follow the dpgd paper's conventions (arXiv 2505.16329, Assumption 3 and Section 6): quantile
midpoints for continuous laws (no eigenvalue at 0), and tr Σ = d where the paper needs it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._arrays import read_only

__all__ = ["Spectrum", "eigendecomposition", "isotropic_target", "power_law_target"]



@dataclasses.dataclass(frozen=True, eq=False)
class Spectrum:
    """Distinct eigenvalues (ascending) with multiplicities, and the group of every direction.

    Attributes:
        eigenvalues: (m,) distinct eigenvalues, ascending, >= 0.
        multiplicities: (m,) positive integers; their sum is the dimension d.
        groups: (d,) the group index of each direction, in the order the directions were given.
    """

    eigenvalues: np.ndarray
    multiplicities: np.ndarray
    groups: np.ndarray

    def __post_init__(self) -> None:
        values = np.asarray(self.eigenvalues, dtype=float)
        counts = np.asarray(self.multiplicities)
        groups = np.asarray(self.groups)
        if values.ndim != 1 or values.size == 0 or counts.shape != values.shape:
            raise ValueError("eigenvalues and multiplicities must be non-empty 1-D arrays of the same length.")
        _check.non_negative(eigenvalues=values)
        _check.integer(minimum=1, multiplicities=counts)
        if np.any(np.diff(values) <= 0):
            raise ValueError("eigenvalues must be distinct and ascending (group equal values with from_eigenvalues).")
        if groups.shape != (int(counts.sum()),) or np.any(np.bincount(groups, minlength=values.size) != counts):
            raise ValueError("groups must give each of the d directions a group, multiplicities[g] times group g.")
        object.__setattr__(self, "eigenvalues", read_only(values, dtype=None))
        object.__setattr__(self, "multiplicities", read_only(counts.astype(np.int64), dtype=None))
        object.__setattr__(self, "groups", read_only(groups.astype(np.int64), dtype=None))

    # --- constructors -------------------------------------------------------------------------------------------

    @classmethod
    def from_eigenvalues(cls, eigenvalues: ArrayLike, *, rtol: float = 0.0) -> Spectrum:
        """Group the per-direction ``eigenvalues`` (d,), merging values equal up to ``rtol`` (relative).

        A group starts at its smallest value v and takes every value ≤ v(1 + rtol); its eigenvalue is the mean of its
        members. O(d log d).
        """
        values = np.asarray(eigenvalues, dtype=float)
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"eigenvalues must be a non-empty 1-D array; got shape {values.shape}.")
        _check.finite(eigenvalues=values)
        _check.non_negative(rtol=rtol)
        if np.any(values < 0):
            raise ValueError(f"eigenvalues must be >= 0; got eigenvalues.min()={values.min():g}.")
        order = np.argsort(values, kind="stable")
        sorted_values = values[order]
        if rtol == 0:
            new_group = np.ones(values.size, dtype=bool)
            new_group[1:] = sorted_values[1:] > sorted_values[:-1]
        else:  # compare with the group's first value, so that a slow ramp cannot chain into one wide group
            new_group = np.zeros(values.size, dtype=bool)
            limit = -math.inf
            for i, value in enumerate(sorted_values.tolist()):
                if value > limit:
                    new_group[i], limit = True, value * (1.0 + rtol)
        group_sorted = np.cumsum(new_group) - 1
        groups = np.empty(values.size, dtype=np.int64)
        groups[order] = group_sorted
        counts = np.bincount(group_sorted)
        if rtol == 0:
            representatives = sorted_values[new_group]  # the members are equal
        else:
            representatives = np.bincount(group_sorted, weights=sorted_values) / counts  # group means, O(d)
        return cls(representatives, counts, groups)

    @classmethod
    def identity(cls, d: int) -> Spectrum:
        """Σ = I_d: one group."""
        _check.integer(minimum=1, d=d)
        return cls(np.ones(1), np.array([d]), np.zeros(d, dtype=np.int64))

    @classmethod
    def uniform(cls, d: int, *, low: float = 0.0, high: float = 2.0) -> Spectrum:
        """Quantile midpoints of the uniform law on [low, high]: λ_i = low + (high − low)(i − ½)/d."""
        _check.integer(minimum=1, d=d)
        _check.non_negative(low=low)
        if not high > low:
            raise ValueError(f"high must be > low = {low:g}; got high={high!r}.")
        return cls.from_eigenvalues(low + (high - low) * (np.arange(1, d + 1) - 0.5) / d)

    @classmethod
    def power_law(cls, d: int, *, power_law_exponent: float) -> Spectrum:
        """The dpgd paper's power law (Assumption 3) at quantile midpoints, rescaled to tr Σ = d.

        The limiting density is (1 − φ) C_φ^{φ−1} λ^{−φ} on (0, C_φ), C_φ = (2 − φ)/(1 − φ), with CDF (λ/C_φ)^{1−φ};
        λ_i = C_φ((i − ½)/d)^{1/(1−φ)}. φ = 0 is uniform on [0, 2].
        """
        _check.integer(minimum=1, d=d)
        _check.finite(power_law_exponent=power_law_exponent)
        phi = float(power_law_exponent)
        if phi >= 1:
            raise ValueError(f"power_law_exponent must be < 1; got power_law_exponent={phi!r}.")
        c_phi = (2.0 - phi) / (1.0 - phi)
        values = c_phi * ((np.arange(1, d + 1) - 0.5) / d) ** (1.0 / (1.0 - phi))
        return cls.from_eigenvalues(values * d / values.sum())

    # --- properties ---------------------------------------------------------------------------------------------

    @property
    def dim(self) -> int:
        """The dimension d (sum of multiplicities)."""
        return int(self.multiplicities.sum())

    @property
    def num_groups(self) -> int:
        return int(self.eigenvalues.size)

    @property
    def trace(self) -> float:
        return float(np.dot(self.multiplicities, self.eigenvalues))

    def per_direction(self) -> np.ndarray:
        """The eigenvalue of every direction, in the original direction order: shape (d,)."""
        return self.eigenvalues[self.groups]

    def group_sums(self, per_direction: ArrayLike) -> np.ndarray:
        """Sum per-direction values (d,) — e.g. squared projections — within each group: shape (m,)."""
        values = np.asarray(per_direction, dtype=float)
        if values.shape != (self.dim,):
            raise ValueError(f"per_direction must have shape (d,) = ({self.dim},); got {values.shape}.")
        return np.bincount(self.groups, weights=values, minlength=self.num_groups)

    def normalized(self, trace: float | None = None) -> Spectrum:
        """The spectrum rescaled to the given trace (default d, the dpgd paper's tr Σ = d)."""
        target = self.dim if trace is None else trace
        _check.positive(trace=target)
        return Spectrum(self.eigenvalues * (target / self.trace), self.multiplicities, self.groups)

    def __repr__(self) -> str:
        return (f"Spectrum(d={self.dim}, groups={self.num_groups}, min={self.eigenvalues[0]:.4g}, "
                f"max={self.eigenvalues[-1]:.4g}, trace={self.trace:.6g})")


def eigendecomposition(covariance: ArrayLike, *, rtol: float = 1e-10) -> tuple[Spectrum, np.ndarray]:
    """The spectrum of a symmetric PSD matrix and its eigenvectors (columns, in direction order).

    Eigenvalues equal up to ``rtol`` × the largest one are grouped. Squared projections of a vector v onto the
    eigenspaces are ``spectrum.group_sums((eigenvectors.T @ v) ** 2)``.
    """
    cov = np.asarray(covariance, dtype=float)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        raise ValueError(f"covariance must be a square matrix; got shape {cov.shape}.")
    _check.finite(covariance=cov)
    if not np.allclose(cov, cov.T, rtol=1e-12, atol=1e-12 * np.abs(cov).max()):
        raise ValueError("covariance must be symmetric.")
    values, vectors = np.linalg.eigh(cov)
    scale = max(float(np.abs(values).max()), np.finfo(float).tiny)
    if values.min() < -1e-10 * scale:
        raise ValueError(f"covariance must be positive semi-definite; smallest eigenvalue {values.min():.3g}.")
    values = np.maximum(values, 0.0)
    # merge values within rtol·max of their neighbour (absolute tolerance relative to the largest eigenvalue)
    snapped = values.copy()
    for i in range(1, values.size):
        if values[i] - snapped[i - 1] <= rtol * scale:
            snapped[i] = snapped[i - 1]
    return Spectrum.from_eigenvalues(snapped), vectors


def isotropic_target(spectrum: Spectrum, *, norm: float = 1.0) -> np.ndarray:
    """Squared projections per group of θ* with (θ*_i)² = norm²/d in every direction: shape (m,)."""
    _check.instance(Spectrum, spectrum=spectrum)
    _check.positive(norm=norm)
    return spectrum.multiplicities * norm**2 / spectrum.dim


def power_law_target(spectrum: Spectrum, *, target_exponent: float, norm: float = 1.0) -> np.ndarray:
    """Squared projections per group with (ω_iᵀθ*)² ∝ λ_i^{−ψ} and ‖θ*‖ = norm (dpgd Assumption 3): shape (m,).

    ψ = ``target_exponent``; the paper needs ψ < 1 − φ (checked by the callers that know φ) and λ_i > 0 when ψ > 0.
    """
    _check.finite(target_exponent=target_exponent)
    _check.positive(norm=norm)
    if target_exponent > 0 and spectrum.eigenvalues[0] <= 0:
        raise ValueError("a positive target_exponent needs strictly positive eigenvalues.")
    weights = spectrum.multiplicities * spectrum.eigenvalues ** (-float(target_exponent))
    return norm**2 * weights / weights.sum()
