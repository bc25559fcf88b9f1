"""Privacy experiments of the kan paper (arXiv 2605.12648): the closed-form cumulative noise variance and shared
validation."""

from __future__ import annotations

from typing import Any

import numpy as np

from privdyn import _check
from privdyn.runs.results import CheckKind

__all__ = ["PAPER", "cumulative_noise_variance"]


PAPER = "Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft 2026 (arXiv 2605.12648)"
"""The kan paper (arXiv 2605.12648), as the experiments' records cite it."""

INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM


def _check_noise_correlations(values: tuple[float, ...]) -> None:
    _check.in_range(0.0, 1.0, closed="left", noise_correlations=np.asarray(values))
    if len(set(values)) != len(values):
        raise ValueError(f"noise_correlations must not repeat a value; got {list(values)}.")


# ==============================================================================================================
# kan-fig1-right: cumulative noise of DP-lambda-CGD
# ==============================================================================================================


def cumulative_noise_variance(noise_correlation: float, steps: Any, *, noise_multiplier: float = 1.0) -> np.ndarray:
    """Per-coordinate variance of the prefix sum ``kappa sum_{s<=t} xi_s`` of DP-lambda-CGD noise.

    Algorithm 1 of Wang et al. (arXiv 2605.12648v1) adds ``kappa xi_t`` (unit clip, noise on the summed gradients)
    with ``xi_t = Z_t - lambda Z_{t-1}``, ``Z_0 = 0`` and ``Z_t`` iid standard normal. Telescoping,

        sum_{s=1}^t xi_s = sum_{s=1}^t Z_s - lambda sum_{s=0}^{t-1} Z_s = Z_t + (1 - lambda) sum_{s=1}^{t-1} Z_s,

    a sum of independent terms, so each coordinate has variance

        Var(kappa sum_{s<=t} xi_s) = kappa^2 (1 + (1 - lambda)^2 (t - 1)),

    against ``kappa^2 t`` for independent noise (lambda = 0). This is the squared norm of row t of the decoder
    ``A C^{-1}`` (ones on the diagonal, ``1 - lambda`` below it; eqs. (24)-(25) of Appendix F.1) and the quantity of
    Figure 1 (right), ``||sum_{s<=t} xi_s||^2 / D``. The unprojected parameter
    trajectory carries ``-eta (clip / B)`` times this prefix sum; the paper's shifted iterate (§4.3)
    ``U_t = W~_t + eta c_priv Z_t`` with ``c_priv = clip kappa / B`` removes the fresh term ``kappa Z_t`` and keeps
    a noise of variance ``kappa^2 (1 - lambda)^2 (t - 1)`` in units of ``(eta clip / B)^2``.

    Shapes: steps (T,) or scalar -> same shape.

    Args:
        noise_correlation: lambda in [0, 1).
        steps: t >= 1 (integers).
        noise_multiplier: kappa >= 0.
    """
    _check.scalar(noise_correlation=noise_correlation, noise_multiplier=noise_multiplier)
    _check.in_range(0.0, 1.0, closed="left", noise_correlation=noise_correlation)
    _check.non_negative(noise_multiplier=noise_multiplier)
    t = np.asarray(steps)
    _check.integer(minimum=1, steps=t)
    lam, kappa = float(noise_correlation), float(noise_multiplier)
    return kappa**2 * (1.0 + (1.0 - lam) ** 2 * (t.astype(float) - 1.0))
