"""Settings shared by the dpgd experiments (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329).

Config values name a schedule and a spectrum by strings; these helpers turn them into engine objects, so every
dpgd experiment reads its config the same way.
"""

from __future__ import annotations

from privdyn.data.synthetic import SyntheticDesign
from privdyn.schedules import Harmonic, LearningRate, Polynomial

__all__ = ["PAPER", "SCHEDULES", "SPECTRA", "learning_rate_profile", "synthetic_design"]

PAPER = "Bombari, Luo, Seroussi, Mondelli 2025 (arXiv 2505.16329)"
"""The dpgd paper (arXiv 2505.16329), as the experiments' records cite it."""

SCHEDULES = ("polynomial", "harmonic")
"""``polynomial``: η̃(t) = η̃(0)(1 − t)^α (eq. 5.1; α = 0 is a constant learning rate); ``harmonic``: β/(t + τ)."""

SPECTRA = ("identity", "uniform", "power_law")
"""Σ = I; eigenvalues at the quantile midpoints of the uniform law on [0, 2]; the power law of Assumption 3."""


def learning_rate_profile(schedule: str, *, initial_learning_rate: float | None = None,
                          schedule_exponent: float | None = None, harmonic_scale: float | None = None,
                          harmonic_offset: float | None = None) -> LearningRate:
    """The learning-rate profile η̃(t) named by ``schedule`` (eqs. 5.1 and 5.18 of arXiv 2505.16329)."""
    if schedule == "polynomial":
        if initial_learning_rate is None or schedule_exponent is None:
            raise ValueError("schedule='polynomial' needs initial_learning_rate and schedule_exponent.")
        return Polynomial(initial_learning_rate, schedule_exponent)
    if schedule == "harmonic":
        if harmonic_scale is None or harmonic_offset is None:
            raise ValueError("schedule='harmonic' needs harmonic_scale and harmonic_offset.")
        return Harmonic(harmonic_scale, harmonic_offset)
    raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}; got {schedule!r}.")


def synthetic_design(spectrum: str, d: int, *, label_noise: float, power_law_exponent: float = 0.0,
                     target_exponent: float = 0.0, norm: float = 1.0) -> SyntheticDesign:
    """The Gaussian design named by ``spectrum`` with tr Σ = d and ‖θ*‖ = ``norm``.

    ``identity`` and ``uniform`` spread θ* evenly ((ω_iᵀθ*)² = norm²/d, the paper's Figures 1, 4 and 7);
    ``power_law`` follows Assumption 3 ((ω_iᵀθ*)² ∝ λ_i^(−ψ)).
    """
    if spectrum == "identity":
        return SyntheticDesign.isotropic(d, label_noise=label_noise, norm=norm)
    if spectrum == "uniform":
        return SyntheticDesign.uniform(d, label_noise=label_noise, norm=norm)
    if spectrum == "power_law":
        return SyntheticDesign.power_law(d, power_law_exponent=power_law_exponent, target_exponent=target_exponent,
                                         label_noise=label_noise, norm=norm)
    raise ValueError(f"spectrum must be one of {', '.join(SPECTRA)}; got {spectrum!r}.")
