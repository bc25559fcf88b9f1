"""The dominating pair of DP-SGD with correlated noise under i.i.d. per-step participation (Theorem F.8).

Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert & Kloft (arXiv 2605.12648v1), Theorem F.8: DP-SGD that releases
``X + C^{-1} Z`` (``X`` the stream of summed clipped gradients, one row per step; ``Z`` iid Gaussian with std
``noise_multiplier * clip``; ``C`` lower-triangular) is dominated, for a record that joins each step independently
with probability ``r``, by

    P = sum_y s(y) N(|C| y, kappa^2 I_T),   Q = N(0, kappa^2 I_T),   s(y) = r^{|y|} (1 - r)^{T - |y|},

(clip = 1; ``|C|`` the entrywise absolute value, from Lemma F.7's row-norm bounds): ``(P, Q)`` dominates the
"remove" direction and ``(Q, P)`` the "add" direction. The theorem is stated for fixed-size batches drawn without
replacement independently at every step with zero-out neighbours (``r = B / n``); the same proof (release the other
records' contributions, then Lemma F.7 = Choquette-Choo et al. 2024, arXiv 2410.06266, Lemma 3.3) holds verbatim for
Poisson sampling with add-remove neighbours, where the differing record also joins each step independently with
probability ``r``. Nothing else of the two samplers enters the pair.

This module validates the inputs once (:func:`dominating_pair`) and evaluates the pair's privacy loss exactly by
enumerating the ``2^T`` participation patterns (:func:`privacy_loss_exact`, tiny T only), the oracle of the tests
and of the Monte-Carlo estimate on small horizons.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from privdyn import _check
from privdyn.privacy.labels import AMPLIFIED_SAMPLERS, NeighboringRelation, Sampler, as_sampler
from privdyn.privacy.labels import AMPLIFIED_SAMPLERS as SAMPLERS  # the name of the subset here, kept

if TYPE_CHECKING:  # the strategies import scipy through privdyn.rng: keep `import privdyn.privacy` light
    from privdyn.privacy.correlated import Strategy

__all__ = ["SAMPLERS", "NEIGHBORING", "DominatingPair", "dominating_pair", "privacy_loss_exact",
           "MAX_ENUMERATION_STEPS"]

NEIGHBORING: dict[str, NeighboringRelation] = {Sampler.POISSON: NeighboringRelation.ADD_REMOVE,
                                                Sampler.FIXED_SIZE: NeighboringRelation.ZERO_OUT}
"""The neighbouring relation of the pair under each sampler (Theorem F.8; its Poisson counterpart)."""

MAX_ENUMERATION_STEPS = 16
"""Largest horizon for which :func:`privacy_loss_exact` enumerates the ``2^T`` participation patterns."""

PAPER = "Wang et al., arXiv 2605.12648v1"


@dataclasses.dataclass(frozen=True)
class DominatingPair:
    """The Theorem F.8 pair for a Toeplitz encoder: ``|C|`` is fixed by its first column ``coefficients``.

    Attributes:
        coefficients: ``|c_0|, ..., |c_{T-1}|``, the first column of ``|C|`` (non-negative).
        noise_multiplier: kappa, the noise std on the sum of clipped gradients divided by the clip.
        sampling_prob: r, the per-step participation probability of the differing record.
        num_steps: T.
        strategy: the strategy's ``repr`` (for sources and error messages).
    """

    coefficients: np.ndarray
    noise_multiplier: float
    sampling_prob: float
    num_steps: int
    strategy: str

    def encoder_matrix(self) -> np.ndarray:
        """Dense ``|C|`` (T x T); for tests and tiny horizons."""
        idx = np.arange(self.num_steps)
        lag = idx[:, None] - idx[None, :]
        out = np.zeros((self.num_steps, self.num_steps))
        mask = lag >= 0
        out[mask] = self.coefficients[lag[mask]]
        return out


def validate_sampler(sampler: Sampler | str) -> str:
    """``sampler`` must be ``"poisson"`` or ``"fixed_size"``; ``"shuffle"`` is refused with the reason."""
    if isinstance(sampler, str) and sampler == "shuffle":
        raise ValueError("sampler='shuffle' cannot be accounted by the amplification accountant: shuffled epochs do "
                         "not give i.i.d. per-step participation (Theorem F.8 needs it); use 'poisson' or "
                         "'fixed_size'.")
    return as_sampler(sampler, AMPLIFIED_SAMPLERS).value


def dominating_pair(strategy: Strategy, *, noise_multiplier: float, sampling_prob: float,
                    num_steps: int) -> DominatingPair:
    """Validate the inputs and build the :class:`DominatingPair` of Theorem F.8.

    Args:
        strategy: a :class:`privdyn.privacy.correlated.Strategy` (every strategy there is Toeplitz).
        noise_multiplier: kappa > 0 (noise std on the sum of clipped gradients, relative to the clip).
        sampling_prob: r in (0, 1] (``batch_size / n`` for fixed-size batches).
        num_steps: T >= 1.
    """
    from privdyn.privacy.correlated import Strategy

    if not isinstance(strategy, Strategy):
        raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
    _check.scalar(noise_multiplier=noise_multiplier, sampling_prob=sampling_prob)
    _check.positive(noise_multiplier=noise_multiplier)
    _check.in_range(0.0, 1.0, closed="right", sampling_prob=sampling_prob)
    _check.finite(num_steps=num_steps)
    _check.integer(minimum=1, num_steps=num_steps)
    num_steps = int(num_steps)
    coefficients = np.abs(np.asarray(strategy.encoder_coefficients(num_steps), dtype=float))
    _check.finite(encoder_coefficients=coefficients)
    return DominatingPair(coefficients=coefficients, noise_multiplier=float(noise_multiplier),
                          sampling_prob=float(sampling_prob), num_steps=num_steps, strategy=repr(strategy))


def participation_patterns(num_steps: int) -> np.ndarray:
    """All ``2^T`` vectors of ``{0, 1}^T`` as rows (float)."""
    codes = np.arange(2**num_steps, dtype=np.int64)
    return ((codes[:, None] >> np.arange(num_steps)[None, :]) & 1).astype(float)


def privacy_loss_exact(pair: DominatingPair, outputs: np.ndarray) -> np.ndarray:
    """``log dP/dQ`` at each row of ``outputs`` (shape (m, T)), by enumerating the ``2^T`` participation patterns.

    ``log dP/dQ(theta) = log sum_y s(y) exp((<|C| y, theta> - ||C| y||^2 / 2) / kappa^2)``, a log-sum-exp over
    patterns (exact up to rounding). Only for ``T <= MAX_ENUMERATION_STEPS``.
    """
    if pair.num_steps > MAX_ENUMERATION_STEPS:
        raise ValueError(f"exact enumeration needs num_steps <= {MAX_ENUMERATION_STEPS}; got "
                         f"num_steps={pair.num_steps}.")
    outputs = np.atleast_2d(np.asarray(outputs, dtype=float))
    patterns = participation_patterns(pair.num_steps)
    means = patterns @ pair.encoder_matrix().T  # (2^T, T): |C| y for each pattern
    r = pair.sampling_prob
    ones = patterns.sum(axis=1)
    log_prior = ones * math.log(r) + ((pair.num_steps - ones) * math.log1p(-r) if r < 1.0 else 0.0)
    if r == 1.0:
        log_prior = np.where(ones == pair.num_steps, 0.0, -np.inf)
    var = pair.noise_multiplier**2
    exponent = (outputs @ means.T - 0.5 * np.sum(means**2, axis=1)[None, :]) / var + log_prior[None, :]
    top = np.max(exponent, axis=1, keepdims=True)
    return (top + np.log(np.sum(np.exp(exponent - top), axis=1, keepdims=True)))[:, 0]
