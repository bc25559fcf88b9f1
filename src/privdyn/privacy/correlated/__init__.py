"""Correlated noise for DP-SGD: matrix-factorization strategies, their streaming noise, sensitivity and error.

The matrix mechanism (Denisov et al. 2022, arXiv 2202.08312; Choquette-Choo et al. 2023, arXiv 2211.06530)
releases the stream of summed clipped gradients ``X`` (one row per step) as ``X + C^{-1} Z`` with ``Z`` iid
Gaussian: the *encoder* ``C`` determines the sensitivity, the *noise matrix* ``C^{-1}`` the correlation of the
noise across steps. Every strategy here is lower-triangular Toeplitz, so both matrices are fixed by their first
columns, ``encoder_coefficients`` ``c_k`` and ``noise_coefficients`` ``d_k``, with ``sum_j c_j d_{k-j} = [k == 0]``.

Strategies (``docs/correlated_noise.md``):

* :class:`Independent`: ``C = I`` (DP-SGD).
* :class:`LambdaCGD`: ``C^{-1} = I - lambda * Shift``, ``C_{t,u} = lambda^(t-u)`` (the kan paper, Wang et al.,
  arXiv 2605.12648, Algorithm 1 and eqs. (24)-(25) of Appendix F.1; Kalinin et al. 2026, arXiv 2601.22334).
* :class:`BandedInverse`: ``C^{-1}`` banded, given by its coefficients; DP-lambda-CGD is its two-band case.
* :class:`Toeplitz`: ``C`` given by its (possibly banded) Toeplitz coefficients.
* :class:`BufferedToeplitz` (BLT; Dvijotham et al. 2024, arXiv 2404.16706; McMahan et al. 2024, arXiv
  2408.08868): ``c_0 = 1``, ``c_k = sum_i omega_i theta_i^(k-1)``, parameters given (not optimized).
* :class:`SquareRoot`: ``C = A^{1/2}`` for the prefix-sum workload ``A`` (Fichtenberger, Henzinger & Upadhyay
  2023, arXiv 2202.11205): ``c_k = binom(2k, k) / 4^k``, near-optimal for the prefix-sum error.

Noise is streamed one step at a time into NumPy float64 arrays of any shape (no framework is assumed: a training
loop in any array library can wrap or copy the output), holding only the strategy's buffers: see
:class:`NoiseStream`. Step ``t`` (1-based; ``Z_u = 0`` for ``u <= 0``) draws its standard normals from
:class:`StepNormals`, a counter-based stream, so a past step's ``Z_u`` can be *regenerated* bit for bit instead of
stored.

Units: with a unit clip, the noise ``C^{-1} Z`` is for the **sum** of clipped gradients. Multiply by
``clip * noise_multiplier`` (noise on the sum) or ``clip * noise_multiplier / batch_size`` (on the average, the
kan paper's convention) through ``scale``. Sensitivities are for a unit clip under ``zero_out`` / ``add_remove``
neighbours (one record's rows change by at most 1 in L2) and twice that under ``replace_one``.
"""

from __future__ import annotations

from privdyn.privacy.correlated.participation import prefix_sum_max_error, prefix_sum_rmse, sensitivity
from privdyn.privacy.correlated.strategies import (
    BandedInverse,
    BufferedToeplitz,
    Independent,
    LambdaCGD,
    SquareRoot,
    Strategy,
    Toeplitz,
)
from privdyn.privacy.correlated.streams import DEFAULT_CHUNK_SIZE as DEFAULT_CHUNK_SIZE
from privdyn.privacy.correlated.streams import NoiseStream
from privdyn.rng import StepNormals, step_normals

__all__ = [
    "StepNormals",
    "step_normals",
    "Strategy",
    "Independent",
    "BandedInverse",
    "LambdaCGD",
    "Toeplitz",
    "BufferedToeplitz",
    "SquareRoot",
    "NoiseStream",
    "sensitivity",
    "prefix_sum_rmse",
    "prefix_sum_max_error",
]
