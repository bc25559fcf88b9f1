"""The homogenized SDE of DP-GD (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329, Remark 4.3, Definition C.1),
simulated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.dynamics.dpgd.clipping import clipping_factor_arrays
from privdyn.dynamics.dpgd.system import grouped_system, validated_drive, validated_times
from privdyn.rng import CounterStream
from privdyn.schedules import LearningRate
from privdyn.spectra import Spectrum

__all__ = ['simulate_homogenized_sde']


# ---------------------------------------------------------------------------------------------------------------
# Homogenized SDE (Remark 4.3, Definition C.1)
# ---------------------------------------------------------------------------------------------------------------

NoiseSource = np.random.Generator | Sequence[np.random.Generator] | CounterStream

_DRAW_CHUNK = 1 << 20  # normals drawn at once per run when every run has its own Generator


class _Normals:
    """Standard normals (num_runs, d) per step from one Generator, one Generator per run, or a CounterStream."""

    def __init__(self, rng: Any, num_runs: int, d: int):
        if isinstance(rng, np.random.Generator | CounterStream):
            self.source: Any = rng
        elif isinstance(rng, Sequence) and all(isinstance(g, np.random.Generator) for g in rng):
            if len(rng) != num_runs:
                raise ValueError(f"rng must hold one Generator per run (num_runs={num_runs}); got {len(rng)}.")
            self.source = list(rng)
        else:
            raise TypeError("rng must be a numpy.random.Generator, a sequence of num_runs Generators or a "
                            f"privdyn.rng.CounterStream; got rng of type {type(rng).__name__}.")
        self.num_runs, self.d = num_runs, d
        self.block = max(1, _DRAW_CHUNK // max(d * num_runs, 1))
        self.buffer: np.ndarray | None = None

    def draw(self, k: int) -> np.ndarray:
        if isinstance(self.source, np.random.Generator):
            return self.source.standard_normal((self.num_runs, self.d))
        if isinstance(self.source, CounterStream):
            return self.source.standard_normal(k, self.num_runs, self.d)
        j = k % self.block
        if j == 0 or self.buffer is None:  # run i draws its next block from its own Generator
            self.buffer = np.stack([g.standard_normal((self.block, self.d)) for g in self.source], axis=1)
        return self.buffer[j]


def simulate_homogenized_sde(*, spectrum: Spectrum, target_projections: ArrayLike, aspect_ratio: float,
                             learning_rate: LearningRate, clip: float, rho: float, label_noise: float, n: int,
                             num_runs: int, rng: NoiseSource, times: ArrayLike) -> np.ndarray:
    """Euler–Maruyama paths of homogenized DP-GD (Remark 4.3, Definition C.1 of arXiv 2505.16329); R at ``times``.

    The SDE, in the eigenbasis of a diagonal Σ (V = Θ − θ*, one coordinate per direction, d = ``spectrum.dim``):

        dV = −η̄ μ_c(R) ΣV dt + η̄ √(2ν_c(R)(R + ζ²/2) Σ/n) dB^s + (2√d/n) c σ̃ dB^p,    R = ½ VᵀΣV,

    with η̄ = min(η̃, 2n/d), ρ²σ̃² = −dη̃²/dt, c′ = c/√(2R + ζ²), V(0) = −θ*. **Drift factor 1, not 2:** (4.14) and
    (C.1) print −2η̄μ∇P, but the Itô expansions (C.9), (C.27), (C.29) use −η̄μ⟨ΣV, ∇q⟩, and only factor 1 gives back
    the ODE (4.7): E d(V_i²) = (−2η̄μλ_i V_i² + 2η̄²νPλ_i/n + 4dc²σ̃²/n²) dt, i.e. D_i = dV_i²/2 follows (4.7) with
    γ = d/n. One Euler–Maruyama step per sample (Δt = 1/n, t_k = k/n); the two independent Brownian terms enter as
    one Gaussian increment with the sum of their variances. θ*'s squared projection p_g is split equally over the
    m_g directions of group g (signs do not matter for a diagonal Σ and Gaussian noise).

    Args:
        spectrum, target_projections, learning_rate, clip, rho, label_noise: as in :func:`solve_risk_ode`.
        aspect_ratio: γ = d/n; must equal ``spectrum.dim / n`` (the SDE is at finite n).
        n: number of samples (steps), ≥ 1.
        num_runs: independent paths, ≥ 1.
        rng: a numpy Generator (runs share it, so run i depends on num_runs), a sequence of num_runs Generators
            (run i draws only from rng[i]) or a :class:`privdyn.rng.CounterStream` (draw k = step k).
        times: (T,) increasing times in [0, 1]; R is recorded at step round(t·n).

    Returns:
        (num_runs, T) the excess risk ½(Θ_t − θ*)ᵀΣ(Θ_t − θ*) of each path at ``times`` (before the final-step
        noise of Proposition 4.4). Monte Carlo: its mean estimates the ODE's R(t) up to O(1/√d)-type fluctuations.

    Shapes: target_projections (m,), times (T,) -> (num_runs, T).
    """
    grouped_system(spectrum, target_projections)  # validation
    drive = validated_drive(learning_rate, aspect_ratio, clip, rho, label_noise)
    _check.integer(minimum=1, n=n, num_runs=num_runs)
    d = spectrum.dim
    if abs(d / n - drive.aspect_ratio) > 1e-9 * drive.aspect_ratio:
        raise ValueError(f"aspect_ratio must equal spectrum.dim / n = {d}/{n} = {d / n:.6g} for the SDE at finite n; "
                         f"got aspect_ratio={aspect_ratio!r}.")
    ts = validated_times(times)
    record = np.rint(ts * n).astype(np.int64)
    lam = np.asarray(spectrum.per_direction(), dtype=float)
    per_direction = (np.asarray(target_projections, dtype=float) / spectrum.multiplicities)[spectrum.groups]
    V = np.repeat(-np.sqrt(per_direction)[None, :], num_runs, axis=0)
    normals = _Normals(rng, num_runs, d)
    k_all = np.arange(n) / n
    _, eta_bar, b = drive.profile(k_all)
    dt = 1.0 / n
    private_var = b / (drive.aspect_ratio**2) * (2.0 * d / n**2) * dt  # 4dc²σ̃²/n²·Δt = (b/γ²)(2d/n²)Δt
    out = np.empty((num_runs, ts.size))
    zeta2 = drive.label_noise**2
    for k in range(n + 1):
        R = 0.5 * ((V * V) @ lam)
        hit = record == k
        if np.any(hit):
            out[:, hit] = R[:, None]
        if k == n:
            break
        with np.errstate(divide="ignore"):
            cp = drive.clip / np.sqrt(2.0 * R + zeta2)
        mu, nu = clipping_factor_arrays(cp)
        e = float(eta_bar[k])
        drift = (-e * dt) * mu  # (runs,)
        sample_var = (e * e * 2.0 * dt / n) * nu * (R + 0.5 * zeta2)  # times λ_i per direction
        std = np.sqrt(sample_var[:, None] * lam[None, :] + private_var[k])
        V += (drift[:, None] * lam[None, :]) * V + std * normals.draw(k)
    return out
