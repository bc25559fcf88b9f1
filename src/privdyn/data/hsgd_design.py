"""Data designs of the hsgd paper: the Section 5 uniform design and Gaussian designs with any spectrum.

Lin, Kolaczyk, Smith, Paquette, "High-Dimensional Privacy-Utility Dynamics of Noisy SGD on Least Squares" (arXiv
2510.16687; cited as "the paper"), Section 5; ``docs/hsgd.md`` records the readings below.

**Section 5 design** (:class:`UniformDesign`, :func:`paper_design`). The paper states: x̃ ~ "Unif(0, I_d/√d)", design
entries a_ij ~ "Unif(0, 1/√d)" i.i.d., labels b_i = a_iᵀx̃ + ξ_i with ξ_i ~ N(0, 0.01/d) "clipped at ±3 standard
deviations", x_0 ~ N(0, I_d). privdyn reads it as follows (choices the paper does not state):

* "Unif(0, 1/√d)" is the interval [0, 1/√d], for the features and for every coordinate of x̃. The features
  are then *not centered*: E a = 1/(2√d)·1, and the second-moment matrix Σ = E[aaᵀ] (the paper's Σ; not a covariance)
  has a spike. ``centered=True`` is the alternative reading a_ij ~ Unif[−1/(2√d), 1/(2√d)] (same variance, no spike);
  x̃ stays Unif[0, 1/√d] in both readings.
* "Clipped at ±3 sd" clips ξ to [−3s, 3s] (s = √(0.01/d)); it does not resample.
* Σ is the analytic population matrix (rather than the empirical AᵀA/n): Σ = (1/(12d))·I + μ²·11ᵀ with
  μ = 1/(2√d) (μ = 0 when centered). Its eigenvalues are the bulk λ_b = 1/(12d) (multiplicity d − 1) and the spike
  λ_s = 1/(12d) + dμ² = 1/(12d) + 1/4 along u = 1/√d (derived). The eigenbasis used here is the Householder reflection
  H = I − 2wwᵀ/‖w‖², w = e_0 − u, which swaps e_0 and u: its column 0 is u (the spike direction) and the other columns
  span the bulk, so the eigen-coordinates of x are Hx, computed in O(d).
* E ξ² of the clipped normal is s²[(2Φ(c) − 1) − 2cφ(c) + 2c²(1 − Φ(c))] with c = 3 (≈ 0.99501·s², derived).

Random-number layout of :meth:`UniformDesign.sample`: sample k consumes d + 1 uniforms u_k ∈ [0, 1) from the data
generator (``Generator.random``): a_k = u_k[:d]/√d (minus 1/(2√d) when centered) and ξ_k = s·clip(Φ⁻¹(u'_k), ±c),
with u'_k = u_k[d] + 2⁻⁵⁴ ∈ (0, 1) (inverse-CDF sampling). The generator's stream is consumed sequentially, so drawing
m samples at once or in blocks gives the same samples.

**Gaussian designs** (:func:`gaussian_design`): a ~ N(0, Σ) with any spectrum, written in the eigenbasis of Σ, and
b = aᵀx̃ + ζε. They are :class:`privdyn.data.synthetic.SyntheticDesign` objects (same sampling layout and risk), so
every simulator and engine that takes one works unchanged; their features are centered, so E[aaᵀ] is the covariance.

:func:`hsgd_problem` turns either design, an initialization x_0 and the training hyper-parameters into a
:class:`privdyn.dynamics.hsgd.HSGDProblem` for the Volterra risk and the law of (linearized) HSGD.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from privdyn import _check
from privdyn._arrays import read_only
from privdyn.data.synthetic import SyntheticDesign
from privdyn.hsgd_problem import HSGDProblem, X0Policy
from privdyn.schedules import LearningRate, OutsideTheoryWarning
from privdyn.spectra import Spectrum, isotropic_target

__all__ = [
    "PAPER_LABEL_NOISE_VARIANCE",
    "PAPER_LABEL_NOISE_CLIP",
    "UniformDesign",
    "paper_design",
    "gaussian_design",
    "clipped_normal_second_moment",
    "hsgd_problem",
    "population_risk",
]

PAPER_LABEL_NOISE_VARIANCE = 0.01
"""d·Var ξ before clipping in the paper's Section 5 (ξ ~ N(0, 0.01/d))."""

PAPER_LABEL_NOISE_CLIP = 3.0
"""The paper's label-noise clipping, in standard deviations (Section 5: "clipped at ±3 standard deviations")."""

_HALF_ULP = 2.0**-54  # maps Generator.random's k·2⁻⁵³ into the open interval (0, 1)



def clipped_normal_second_moment(std: float, clip: float) -> float:
    """E[ξ²] for ξ = s·clip(Z, −c, c), Z ~ N(0, 1): s²[(2Φ(c) − 1) − 2cφ(c) + 2c²(1 − Φ(c))] (derived).

    Args:
        std: s ≥ 0, the standard deviation before clipping.
        clip: c > 0, the clipping level in standard deviations (``math.inf``: no clipping, E ξ² = s²).
    """
    _check.scalar(std=std, clip=clip)
    _check.non_negative(std=std)
    if not float(clip) > 0:
        raise ValueError(f"clip must be > 0 (math.inf for no clipping); got clip={clip!r}.")
    if math.isinf(clip):
        return float(std) ** 2
    c = float(clip)
    tail = special.ndtr(-c)  # 1 − Φ(c), accurate in the tail
    pdf = math.exp(-0.5 * c * c) / math.sqrt(2.0 * math.pi)
    return float(std) ** 2 * ((1.0 - 2.0 * tail) - 2.0 * c * pdf + 2.0 * c * c * tail)


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class UniformDesign:
    """The paper's Section 5 design: uniform features and target, clipped Gaussian label noise (module docstring).

    Attributes:
        target: (d,) the ground truth x̃ (the paper draws its coordinates from Unif[0, 1/√d]; see :func:`paper_design`).
        label_noise_std: s ≥ 0, the standard deviation of ξ before clipping (the paper: √(0.01/d)).
        label_noise_clip: c > 0, ξ is clipped to [−cs, cs] (the paper: 3; ``math.inf`` for no clipping).
        centered: False for the paper's reading a_ij ~ Unif[0, 1/√d] (spiked Σ); True for
            a_ij ~ Unif[−1/(2√d), 1/(2√d)] (Σ = I/(12d)).
    """

    target: np.ndarray
    label_noise_std: float
    label_noise_clip: float = PAPER_LABEL_NOISE_CLIP
    centered: bool = False

    def __post_init__(self) -> None:
        target = _check.real_array(target=self.target)
        if target.ndim != 1 or target.size == 0:
            raise ValueError(f"target must be a non-empty 1-D array (d,); got shape {target.shape}.")
        _check.finite(target=target)
        _check.scalar(label_noise_std=self.label_noise_std, label_noise_clip=self.label_noise_clip)
        _check.non_negative(label_noise_std=self.label_noise_std)
        if not float(self.label_noise_clip) > 0:
            raise ValueError("label_noise_clip must be > 0 (math.inf for no clipping); got "
                             f"label_noise_clip={self.label_noise_clip!r}.")
        if not isinstance(self.centered, bool | np.bool_):
            raise TypeError(f"centered must be a bool; got centered={self.centered!r}.")
        object.__setattr__(self, "target", read_only(target))
        object.__setattr__(self, "label_noise_std", float(self.label_noise_std))
        object.__setattr__(self, "label_noise_clip", float(self.label_noise_clip))
        object.__setattr__(self, "centered", bool(self.centered))

    # --- the analytic population quantities ----------------------------------------------------------------------

    @property
    def dim(self) -> int:
        """The dimension d."""
        return int(self.target.size)

    @property
    def feature_mean(self) -> float:
        """μ = E a_ij: 1/(2√d), or 0 when centered."""
        return 0.0 if self.centered else 0.5 / math.sqrt(self.dim)

    @property
    def feature_variance(self) -> float:
        """Var a_ij = 1/(12d) (the bulk eigenvalue λ_b)."""
        return 1.0 / (12.0 * self.dim)

    @property
    def spike(self) -> float:
        """λ_s = λ_b + dμ² = 1/(12d) + 1/4 (λ_b when centered): the eigenvalue along u = 1/√d."""
        return self.feature_variance + self.dim * self.feature_mean**2

    @property
    def spectrum(self) -> Spectrum:
        """The eigenvalues of Σ in the direction order of :meth:`eigen_coordinates` (direction 0 is u = 1/√d)."""
        values = np.full(self.dim, self.feature_variance)
        values[0] = self.spike
        return Spectrum.from_eigenvalues(values)

    @property
    def label_noise_second_moment(self) -> float:
        """E ξ² of the clipped label noise (:func:`clipped_normal_second_moment`)."""
        return clipped_normal_second_moment(self.label_noise_std, self.label_noise_clip)

    def covariance(self) -> np.ndarray:
        """The analytic second-moment matrix Σ = E[aaᵀ] = (1/(12d))·I + μ²·11ᵀ, shape (d, d) (dense: O(d²) memory)."""
        d = self.dim
        return np.eye(d) * self.feature_variance + self.feature_mean**2

    def _householder(self) -> np.ndarray | None:
        """w/‖w‖ for w = e_0 − u (None when u = e_0, i.e. d = 1, or when Σ is isotropic and H is not needed)."""
        d = self.dim
        if d == 1 or self.centered:
            return None
        w = np.full(d, -1.0 / math.sqrt(d))
        w[0] += 1.0
        return w / np.linalg.norm(w)

    def eigen_coordinates(self, x: ArrayLike) -> np.ndarray:
        """Uᵀx in the eigenbasis U = H of Σ (module docstring): component 0 is uᵀx, u = 1/√d. Shapes: (..., d)."""
        x = self._vectors(x, "x")
        w = self._householder()
        if w is None:
            return x.copy()
        return x - 2.0 * np.einsum("...d,d->...", x, w)[..., None] * w

    def eigenvectors(self) -> np.ndarray:
        """The eigenbasis U (d, d) of :meth:`eigen_coordinates` as columns (Σ = U diag(spectrum) Uᵀ; U = Uᵀ)."""
        d = self.dim
        w = self._householder()
        return np.eye(d) if w is None else np.eye(d) - 2.0 * np.outer(w, w)

    def _vectors(self, x: Any, name: str) -> np.ndarray:
        x = np.asarray(x)
        if x.shape[-1:] != (self.dim,):
            raise ValueError(f"{name} must have shape (..., d) with d = {self.dim}; got {x.shape}.")
        return x

    def population_risk(self, x: ArrayLike) -> np.ndarray:
        """𝒫(x) = ½E(aᵀx − b)² = ½[(x − x̃)ᵀΣ(x − x̃) + E ξ²] (paper, Section 3), in O(d) per vector.

        (x − x̃)ᵀΣ(x − x̃) = ‖v‖²/(12d) + μ²(1ᵀv)² with v = x − x̃. Shapes: (..., d) -> (...).
        """
        v = self._vectors(x, "x") - self.target
        quad = self.feature_variance * np.einsum("...d,...d->...", v, v) + self.feature_mean**2 * v.sum(axis=-1) ** 2
        return 0.5 * (quad + self.label_noise_second_moment)

    def regularized_risk(self, x: ArrayLike, *, ridge: float) -> np.ndarray:
        """ℛ(x) = 𝒫(x) + (ridge/2)‖x‖². Shapes: (..., d) -> (...)."""
        _check.scalar(ridge=ridge)
        _check.non_negative(ridge=ridge)
        x = self._vectors(x, "x")
        return self.population_risk(x) + 0.5 * float(ridge) * np.einsum("...d,...d->...", x, x)

    # --- sampling ------------------------------------------------------------------------------------------------

    def from_uniforms(self, uniforms: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Samples from uniforms in [0, 1) laid out as ``[u (d values), u']`` per sample: (..., d+1) -> (a, b).

        a = u/√d − μ_c (μ_c = 1/(2√d) when centered, else 0) and b = aᵀx̃ + s·clip(Φ⁻¹(u' + 2⁻⁵⁴), ±c).
        """
        u = np.asarray(uniforms)
        d = self.dim
        if u.shape[-1:] != (d + 1,):
            raise ValueError(f"uniforms must have shape (..., d + 1) = (..., {d + 1}); got {u.shape}.")
        features = u[..., :d] / math.sqrt(d)
        if self.centered:
            features = features - 0.5 / math.sqrt(d)
        z = special.ndtri(u[..., d] + _HALF_ULP)
        noise = self.label_noise_std * np.clip(z, -self.label_noise_clip, self.label_noise_clip)
        labels = np.einsum("...d,d->...", features, self.target) + noise
        return features, labels

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n i.i.d. samples: features (n, d) and labels (n,), with the layout of the module docstring."""
        _check.integer(minimum=0, n=n)
        _check.generator(rng=rng)
        return self.from_uniforms(rng.random((int(n), self.dim + 1)))

    def __repr__(self) -> str:
        return (f"UniformDesign(d={self.dim}, centered={self.centered}, label_noise_std={self.label_noise_std:.4g}, "
                f"label_noise_clip={self.label_noise_clip:g})")


def paper_design(d: int, rng: np.random.Generator, *, centered: bool = False) -> UniformDesign:
    """The Section 5 design at dimension d: x̃_j ~ Unif[0, 1/√d] i.i.d. (d uniforms from ``rng``), ξ ~ N(0, 0.01/d)
    clipped at ±3 sd. The paper uses d = 1000 (with n = 1500, step_size 0.05, ridge 0.1, noise_std ∈ {1, 1.25, 1.5}
    and x_0 ~ N(0, I_d), drawn separately)."""
    _check.integer(minimum=1, d=d)
    _check.generator(rng=rng)
    d = int(d)
    target = rng.random(d) / math.sqrt(d)
    return UniformDesign(target=target, label_noise_std=math.sqrt(PAPER_LABEL_NOISE_VARIANCE / d),
                         label_noise_clip=PAPER_LABEL_NOISE_CLIP, centered=centered)


def gaussian_design(spectrum: Spectrum, *, label_noise: float, target: np.ndarray | None = None,
                    target_norm: float = 1.0,
                    rng: np.random.Generator | None = None) -> SyntheticDesign:
    """A Gaussian design a ~ N(0, Σ), b = aᵀx̃ + ζε, with Σ of the given spectrum, in the eigenbasis of Σ.

    Args:
        spectrum: the eigenvalues of Σ (any :class:`~privdyn.spectra.Spectrum`; the hsgd theory assumes ‖Σ‖_op
            bounded in d, Assumption 1).
        label_noise: ζ ≥ 0, the standard deviation of the (Gaussian) label noise w, so E w² = ζ² (ζ = 0 is allowed:
            the hsgd theory only needs w sub-Gaussian, Assumption 2).
        target: (d,) the eigen-coordinates of x̃; None spreads ‖x̃‖² = ``target_norm``² evenly over the directions
            (random signs when ``rng`` is given, :meth:`SyntheticDesign.from_projections`).
        target_norm: ‖x̃‖ when ``target`` is None.
        rng: the generator for the random signs (only with ``target=None``).

    Returns:
        A :class:`~privdyn.data.synthetic.SyntheticDesign`: ``theta_star`` is x̃, ``population_loss`` is 𝒫.
    """
    if target is not None and rng is not None:
        raise ValueError("give rng only when target is None (it draws the random signs of the default target).")
    with warnings.catch_warnings():
        # SyntheticDesign warns on label_noise = 0 for the dpgd paper's theory; the hsgd theory allows w = 0.
        warnings.simplefilter("ignore", OutsideTheoryWarning)
        if target is not None:
            return SyntheticDesign(spectrum, target, label_noise)
        return SyntheticDesign.from_projections(spectrum, isotropic_target(spectrum, norm=target_norm),
                                                label_noise=label_noise, rng=rng)


def population_risk(design: UniformDesign | SyntheticDesign, x: ArrayLike) -> np.ndarray:
    """𝒫(x) = ½E(aᵀx − b)² of either design (SyntheticDesign works in its eigenbasis). Shapes: (..., d) -> (...)."""
    if isinstance(design, UniformDesign):
        return design.population_risk(x)
    if isinstance(design, SyntheticDesign):
        return design.population_loss(x)
    raise TypeError(f"design must be a UniformDesign or a SyntheticDesign; got {type(design).__name__}.")


def hsgd_problem(design: UniformDesign | SyntheticDesign, *, x0: ArrayLike | None, learning_rate: LearningRate,
                 ridge: float, noise_std: float, x0_policy: X0Policy | str = X0Policy.FIXED, init_variance: float = 1.0,
                 empirical_features: ArrayLike | None = None) -> HSGDProblem:
    """The :class:`~privdyn.dynamics.hsgd.HSGDProblem` of noisy SGD/HSGD on ``design``, from x_0 in the design's
    coordinates (the original basis for :class:`UniformDesign`, the eigenbasis for a Gaussian design).

    Uses the analytic Σ, x̃ and E w² of the design; for ``x0_policy="random_secret"`` ``x0`` is the mean of
    the initialization (None: 0). The problem's eigen-coordinates are those of :meth:`UniformDesign.eigen_coordinates`
    (the identity for a Gaussian design).

    ``empirical_features`` (N, d), in the design's coordinates, replaces Σ by the empirical second-moment matrix
    Σ̂ = AᵀA/N (the other reading of Section 5; one dense eigendecomposition, O(d³)); x̃ and E w² stay the design's. The
    problem then carries Σ̂'s eigenvectors and its eigen-coordinates are those of Σ̂.
    """
    if isinstance(design, UniformDesign):
        label_noise = math.sqrt(design.label_noise_second_moment)
        transform = design.eigen_coordinates
    elif isinstance(design, SyntheticDesign):
        label_noise = design.label_noise
        transform = None
    else:
        raise TypeError(f"design must be a UniformDesign or a SyntheticDesign; got {type(design).__name__}.")
    d = design.dim
    target = np.asarray(design.theta_star if isinstance(design, SyntheticDesign) else design.target)
    if x0 is not None:
        x0 = np.asarray(x0)
        if x0.shape != (d,):
            raise ValueError(f"x0 must have shape (d,) = ({d},); got {x0.shape}.")
        _check.finite(x0=x0)
    options: dict[str, Any] = dict(learning_rate=learning_rate, ridge=ridge, noise_std=noise_std,
                                   label_noise=label_noise, x0_policy=x0_policy, init_variance=init_variance)
    if empirical_features is not None:
        features = np.asarray(empirical_features)
        if features.ndim != 2 or features.shape[1] != d or features.shape[0] == 0:
            raise ValueError(f"empirical_features must have shape (N, d) with N >= 1 and d = {d}; got "
                             f"{features.shape}.")
        _check.finite(empirical_features=features)
        covariance = features.T @ features / features.shape[0]
        return HSGDProblem.from_covariance(0.5 * (covariance + covariance.T), target=target, x0=x0, **options)
    if transform is not None:
        target = transform(target)
        x0 = None if x0 is None else transform(x0)
    return HSGDProblem.from_coordinates(design.spectrum, target=target, x0=x0, **options)
