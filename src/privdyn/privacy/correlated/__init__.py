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

from privdyn.privacy.correlated.participation import (  # noqa: F401 - every name the module had stays importable
    _participations as _participations,
)
from privdyn.privacy.correlated.participation import (
    _prefix_noise_coefficients as _prefix_noise_coefficients,
)
from privdyn.privacy.correlated.participation import (
    _separated_bound_squared as _separated_bound_squared,
)
from privdyn.privacy.correlated.participation import (
    _side_best as _side_best,
)
from privdyn.privacy.correlated.participation import (
    prefix_sum_max_error as prefix_sum_max_error,
)
from privdyn.privacy.correlated.participation import (
    prefix_sum_rmse as prefix_sum_rmse,
)
from privdyn.privacy.correlated.participation import (
    sensitivity as sensitivity,
)
from privdyn.privacy.correlated.strategies import (  # noqa: F401 - every name the module had stays importable
    BandedInverse as BandedInverse,
)
from privdyn.privacy.correlated.strategies import (
    BufferedToeplitz as BufferedToeplitz,
)
from privdyn.privacy.correlated.strategies import (
    Independent as Independent,
)
from privdyn.privacy.correlated.strategies import (
    LambdaCGD as LambdaCGD,
)
from privdyn.privacy.correlated.strategies import (
    SquareRoot as SquareRoot,
)
from privdyn.privacy.correlated.strategies import (
    Strategy as Strategy,
)
from privdyn.privacy.correlated.strategies import (
    Toeplitz as Toeplitz,
)
from privdyn.privacy.correlated.strategies import (
    _coefficient_array as _coefficient_array,
)
from privdyn.privacy.correlated.strategies import (
    _HistoryStrategy as _HistoryStrategy,
)
from privdyn.privacy.correlated.strategies import (
    _invert_series as _invert_series,
)
from privdyn.privacy.correlated.strategies import (
    _lower_toeplitz as _lower_toeplitz,
)
from privdyn.privacy.correlated.strategies import (
    _num_steps as _num_steps,
)
from privdyn.privacy.correlated.strategies import (
    _trim as _trim,
)
from privdyn.privacy.correlated.streams import (
    DEFAULT_CHUNK_SIZE as DEFAULT_CHUNK_SIZE,
)
from privdyn.privacy.correlated.streams import (
    NoiseStream as NoiseStream,
)
from privdyn.privacy.correlated.streams import (
    _blt_loop as _blt_loop,
)
from privdyn.privacy.correlated.streams import (
    _BLTStream as _BLTStream,
)
from privdyn.privacy.correlated.streams import (
    _compiled_blt as _compiled_blt,
)
from privdyn.privacy.correlated.streams import (
    _compiled_two_band as _compiled_two_band,
)
from privdyn.privacy.correlated.streams import (
    _HistoryStream as _HistoryStream,
)
from privdyn.privacy.correlated.streams import (
    _shape as _shape,
)
from privdyn.privacy.correlated.streams import (
    _SubstitutionStream as _SubstitutionStream,
)
from privdyn.privacy.correlated.streams import (
    _two_band_loop as _two_band_loop,
)
from privdyn.rng import (  # noqa: F401 - the step normals live in privdyn.rng; their old home keeps them
    _KEY_TAG as _KEY_TAG,
)
from privdyn.rng import (
    CounterStream as CounterStream,
)
from privdyn.rng import (
    StepNormals as StepNormals,
)
from privdyn.rng import as_step_normals as _as_source  # noqa: F401
from privdyn.rng import (
    counter_stream as counter_stream,
)
from privdyn.rng import (
    step_normals as step_normals,
)

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
