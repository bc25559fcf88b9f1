"""Gaussian random-design linear regression (Assumptions 1 and 3 of the dpgd paper, arXiv 2505.16329v2).

A sample is x ~ N(0, Σ) and y = xᵀθ* + ζ·ε with ε ~ N(0, 1) independent of x. privdyn works in the eigenbasis of
Σ, where Σ = diag(λ_1..λ_d): x = Λ^{1/2} z with z ~ N(0, I_d). This loses no generality for the algorithms studied
here: one-pass DP-GD (its clipping, its step cap and its isotropic noise) is equivariant under rotations, so the law
of its risk trajectory is the same in any basis, given the eigenvalues and the projections ω_iᵀθ* of θ*.

Random-number layout (shared with :mod:`privdyn.algorithms.dpgd`): sample k consumes d + 1 standard normals from the
data generator, ``[z_k (d values), ε_k]``, in that order. Drawing m samples at once or one at a time gives the same
samples (NumPy's ``Generator.standard_normal`` consumes its stream sequentially).
"""

from __future__ import annotations

import dataclasses
import math
import sys
import warnings

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._arrays import read_only
from privdyn._deprecation import renamed_arguments
from privdyn.schedules import OutsideTheoryWarning
from privdyn.spectra import Spectrum, isotropic_target, power_law_target

__all__ = ["SyntheticDesign", "num_samples"]


@renamed_arguments(dim="d")
def num_samples(d: int, *, aspect_ratio: float) -> int:
    """The sample size n = round(d / γ) for a dimension d and an ``aspect_ratio`` γ = d/n > 0 (n >= 1).

    The former name ``dim`` of ``d`` is still accepted, with a ``DeprecationWarning``.
    """
    _check.integer(minimum=1, d=d)
    _check.scalar(aspect_ratio=aspect_ratio)
    _check.positive(aspect_ratio=aspect_ratio)
    # Python floats: an overflow gives inf, without a warning
    ratio = math.inf if int(d) > sys.float_info.max else float(d) / float(aspect_ratio)
    if not math.isfinite(ratio):
        raise ValueError(f"d/aspect_ratio must be a finite sample size n; got d={d!r}, aspect_ratio={aspect_ratio!r} "
                         f"(aspect_ratio must be >= d/{sys.float_info.max:.4g}).")
    n = round(ratio)
    if n < 1:
        raise ValueError(f"aspect_ratio must be <= 2*d = {2 * d} so that n = round(d/aspect_ratio) >= 1; "
                         f"got aspect_ratio={aspect_ratio!r}.")
    return int(n)



@dataclasses.dataclass(frozen=True, eq=False)
class SyntheticDesign:
    """The data model x ~ N(0, Σ), y = xᵀθ* + ζε, written in the eigenbasis of Σ.

    Attributes:
        spectrum: the eigenvalues of Σ (grouped, with multiplicities); direction i has eigenvalue
            ``spectrum.per_direction()[i]``. The paper assumes tr Σ = d (``Spectrum.normalized()``).
        theta_star: (d,) the coordinates ω_iᵀθ* of θ* in the eigenbasis, in the spectrum's direction order.
        label_noise: ζ >= 0, the standard deviation of the label noise. The paper needs ζ > 0; ζ = 0 runs with an
            :class:`~privdyn.schedules.OutsideTheoryWarning`.
    """

    spectrum: Spectrum
    theta_star: np.ndarray
    label_noise: float

    def __post_init__(self) -> None:
        if not isinstance(self.spectrum, Spectrum):
            raise TypeError(f"spectrum must be a privdyn.spectra.Spectrum; got {type(self.spectrum).__name__}.")
        theta = np.asarray(self.theta_star)
        if theta.shape != (self.spectrum.dim,):
            raise ValueError(f"theta_star must have shape (d,) = ({self.spectrum.dim},); got {theta.shape}.")
        _check.finite(theta_star=theta)
        _check.scalar(label_noise=self.label_noise)
        _check.non_negative(label_noise=self.label_noise)
        if self.label_noise == 0:
            warnings.warn("label_noise=0 is outside the theory of arXiv 2505.16329 (Assumption 1 needs zeta > 0); "
                          "running anyway.", OutsideTheoryWarning, stacklevel=3)
        object.__setattr__(self, "theta_star", read_only(theta))
        object.__setattr__(self, "label_noise", float(self.label_noise))
        object.__setattr__(self, "_sqrt_eigenvalues", read_only(np.sqrt(self.spectrum.per_direction())))

    # --- constructors -------------------------------------------------------------------------------------------

    @classmethod
    def from_projections(cls, spectrum: Spectrum, squared_projections: ArrayLike, *, label_noise: float,
                         rng: np.random.Generator | None = None) -> SyntheticDesign:
        """θ* from its squared projections onto the eigenspaces of Σ.

        Within a group of equal eigenvalues the squared projection is spread evenly over the group's directions:
        (θ*_i)² = squared_projections[g] / multiplicity[g]. Signs are random (±1 with probability ½ each, from
        ``rng``) when ``rng`` is given, else all positive. Neither choice matters for a diagonal Σ: sign flips and
        rotations inside an eigenspace preserve Σ, and the algorithms are equivariant under them, so the law of the
        risk depends on θ* only through the squared projections per group.

        Args:
            spectrum: the eigenvalues of Σ.
            squared_projections: (m,) the squared norms of the projections of θ* onto the m eigenspaces, >= 0
                (e.g. :func:`privdyn.spectra.isotropic_target` or :func:`privdyn.spectra.power_law_target`).
            label_noise: ζ.
            rng: a generator for random signs, or None for positive signs.
        """
        if not isinstance(spectrum, Spectrum):
            raise TypeError(f"spectrum must be a privdyn.spectra.Spectrum; got {type(spectrum).__name__}.")
        weights = np.asarray(squared_projections)
        if weights.shape != (spectrum.num_groups,):
            raise ValueError(f"squared_projections must have shape (m,) = ({spectrum.num_groups},), one value per "
                             f"eigenvalue group; got {weights.shape}.")
        _check.non_negative(squared_projections=weights)
        theta = np.sqrt(weights / spectrum.multiplicities)[spectrum.groups]
        if rng is not None:
            if not isinstance(rng, np.random.Generator):
                raise TypeError(f"rng must be a numpy.random.Generator or None; got {type(rng).__name__}.")
            theta = theta * np.where(rng.random(spectrum.dim) < 0.5, -1.0, 1.0)
        return cls(spectrum, theta, label_noise)

    @classmethod
    def isotropic(cls, d: int, *, label_noise: float, norm: float = 1.0,
                  rng: np.random.Generator | None = None) -> SyntheticDesign:
        """Σ = I_d and (θ*_i)² = norm²/d (the paper's Figures 1, 4 and 7: R(θ_0) = norm²/2)."""
        spectrum = Spectrum.identity(d)
        return cls.from_projections(spectrum, isotropic_target(spectrum, norm=norm), label_noise=label_noise, rng=rng)

    @classmethod
    def uniform(cls, d: int, *, label_noise: float, norm: float = 1.0,
                rng: np.random.Generator | None = None) -> SyntheticDesign:
        """Eigenvalues at the quantile midpoints of the uniform law on [0, 2] (tr Σ = d), (θ*_i)² = norm²/d."""
        spectrum = Spectrum.uniform(d, low=0.0, high=2.0)
        return cls.from_projections(spectrum, isotropic_target(spectrum, norm=norm), label_noise=label_noise, rng=rng)

    @classmethod
    def power_law(cls, d: int, *, power_law_exponent: float, target_exponent: float, label_noise: float,
                  norm: float = 1.0, rng: np.random.Generator | None = None) -> SyntheticDesign:
        """Assumption 3: the power-law spectrum (exponent φ, tr Σ = d) and (ω_iᵀθ*)² ∝ λ_i^{−ψ}, ‖θ*‖ = norm.

        Needs ψ < 1 − φ (otherwise ‖θ*‖ diverges as d grows; the paper's Assumption 3).
        """
        _check.finite(power_law_exponent=power_law_exponent, target_exponent=target_exponent)
        if not target_exponent < 1.0 - power_law_exponent:
            raise ValueError(f"target_exponent must be < 1 - power_law_exponent = {1.0 - power_law_exponent:g} "
                             f"(Assumption 3 of arXiv 2505.16329); got target_exponent={target_exponent!r}.")
        spectrum = Spectrum.power_law(d, power_law_exponent=power_law_exponent)
        weights = power_law_target(spectrum, target_exponent=target_exponent, norm=norm)
        return cls.from_projections(spectrum, weights, label_noise=label_noise, rng=rng)

    # --- properties ---------------------------------------------------------------------------------------------

    @property
    def dim(self) -> int:
        """The dimension d."""
        return self.spectrum.dim

    @property
    def eigenvalues(self) -> np.ndarray:
        """(d,) the eigenvalue of every direction."""
        return self.spectrum.per_direction()

    @property
    def squared_projections(self) -> np.ndarray:
        """(m,) the squared projections of θ* onto the eigenspaces (the ODE's initial condition up to d/2)."""
        return self.spectrum.group_sums(self.theta_star**2)

    @property
    def initial_risk(self) -> float:
        """R(θ_0) = ½‖Σ^{1/2}θ*‖² for θ_0 = 0."""
        return float(0.5 * np.dot(self.eigenvalues, self.theta_star**2))

    def excess_risk(self, theta: ArrayLike) -> np.ndarray:
        """R(θ) = ½‖Σ^{1/2}(θ − θ*)‖² (Section 3 of arXiv 2505.16329v2). Shapes: (..., d) -> (...)."""
        theta = np.asarray(theta)
        if theta.shape[-1:] != (self.dim,):
            raise ValueError(f"theta must have shape (..., d) with d = {self.dim}; got {theta.shape}.")
        return 0.5 * np.einsum("...d,d->...", (theta - self.theta_star) ** 2, self.eigenvalues)

    def population_loss(self, theta: ArrayLike) -> np.ndarray:
        """P(θ) = ½E[(xᵀθ − y)²] = R(θ) + ζ²/2. Shapes: (..., d) -> (...)."""
        return self.excess_risk(theta) + 0.5 * self.label_noise**2

    # --- sampling -----------------------------------------------------------------------------------------------

    def from_normals(self, normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Samples from standard normals laid out as ``[z (d values), ε]`` per sample: (..., d+1) -> (x, y).

        x = Λ^{1/2} z (shape (..., d)) and y = xᵀθ* + ζε (shape (...)).
        """
        normals = np.asarray(normals)
        d = self.dim
        if normals.shape[-1:] != (d + 1,):
            raise ValueError(f"normals must have shape (..., d + 1) = (..., {d + 1}); got {normals.shape}.")
        x = normals[..., :d] * self._sqrt_eigenvalues  # type: ignore[attr-defined]  # set in __post_init__
        # einsum, not matmul: each label's dot product is summed the same way whatever the batch shape
        y = np.einsum("...d,d->...", x, self.theta_star) + self.label_noise * normals[..., d]
        return x, y

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n i.i.d. samples: features (n, d) and labels (n,), drawn with the layout of the module docstring."""
        _check.integer(minimum=0, n=n)
        _check.generator(rng=rng)
        return self.from_normals(rng.standard_normal((int(n), self.dim + 1)))

    def __repr__(self) -> str:
        norm = math.sqrt(float(self.theta_star @ self.theta_star))
        return f"SyntheticDesign({self.spectrum!r}, |theta_star|={norm:.4g}, label_noise={self.label_noise:g})"
