"""Banded noise under cyclic Poisson sampling against opake's implementation (``opake-dpftrl``, the ``compare``
extra): the MF Gaussian mechanism with a BandMF strategy (or the identity) under opake's ``poisson`` amplification
(cyclic Poisson over fixed partitions), run as its users run it; privdyn accounts the same encoder (opake's optimized
banded coefficients, as a :class:`~privdyn.privacy.correlated.Toeplitz` strategy) through the allow-list at
``q = B b / n``. Both normalize the noise multiplier the same way (the noise std on the sum, divided by the clip;
the encoder's largest column norm enters as the sensitivity). Epsilons agree to 1%.

opake-dpftrl 0.16.1 declares Python >= 3.11, but its dataclasses (``weakref_slot=True`` under a base class that has
``__weakref__``) import only from Python 3.13: on older interpreters the test is skipped, saying so.
"""

from __future__ import annotations

import sys

import pytest

from privdyn.privacy import accounting, correlated

DELTA = 1e-5


def _opake():
    try:
        import opake.dpftrl.accounting as ftrl
        from opake.dpftrl.noise import band_mf_strategy, identity_strategy
    except ImportError:
        pytest.skip("opake-dpftrl is not installed (pip install 'privdyn[compare]')")
    except TypeError as error:  # its dataclasses need Python >= 3.13 (see the module docstring)
        pytest.skip(f"opake-dpftrl does not import on Python {sys.version_info.major}.{sys.version_info.minor}: "
                    f"{error}")
    return ftrl, band_mf_strategy, identity_strategy


# (bands b, steps T, batch size B, dataset size n, noise multiplier): q = B b / n
SETTINGS = [
    pytest.param(1, 1_000, 10, 1_000, 1.0, id="b1-q0.01-T1000"),
    pytest.param(2, 200, 250, 1_000, 2.0, id="b2-q0.5-T200"),
    pytest.param(4, 400, 250, 1_000, 10.0, id="b4-q1-T400"),
    pytest.param(4, 1_000, 100, 8_000, 3.0, id="b4-q0.05-T1000"),
    pytest.param(8, 2_000, 250, 10_000, 4.0, id="b8-q0.2-T2000", marks=pytest.mark.slow),
    pytest.param(8, 4_000, 10, 40_000, 0.8, id="b8-q0.002-T4000", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("bands", "num_steps", "batch_size", "n", "kappa"), SETTINGS)
def test_banded_noise_under_cyclic_poisson_matches_opake(bands, num_steps, batch_size, n, kappa):
    ftrl, band_mf_strategy, _ = _opake()
    recipe = band_mf_strategy(bands=bands)
    coefficients = recipe.coefficients(n_steps=num_steps).double().numpy()
    assert coefficients.size == bands
    q = batch_size * bands / n
    reference = ftrl.poisson(ftrl.mf_gaussian(kappa, recipe), sample_rate=q, n_steps=num_steps).epsilon_at(DELTA)
    strategy = correlated.Toeplitz(coefficients)
    ours = accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa, n=n, batch_size=batch_size,
                                    num_steps=num_steps, delta=DELTA, sampler="cyclic_poisson",
                                    neighboring="add_remove")
    assert float(ours.value) == pytest.approx(reference, rel=1e-2)
    # opake's BandMF coefficients have unit norm; privdyn's encoder is not normalized: 3 c at 3 kappa is the same
    scaled = accounting.dpsgd_epsilon(correlated.Toeplitz(3.0 * coefficients), noise_multiplier=3.0 * kappa, n=n,
                                      batch_size=batch_size, num_steps=num_steps, delta=DELTA,
                                      sampler="cyclic_poisson", neighboring="add_remove")
    assert float(scaled.value) == pytest.approx(reference, rel=1e-2)


@pytest.mark.parametrize(("num_steps", "batch_size", "n", "kappa"), [(1_000, 10, 1_000, 1.0), (300, 60, 200, 2.5)])
def test_independent_noise_under_cyclic_poisson_matches_opake_identity(num_steps, batch_size, n, kappa):
    ftrl, _, identity_strategy = _opake()
    reference = ftrl.poisson(ftrl.mf_gaussian(kappa, identity_strategy()), sample_rate=batch_size / n,
                             n_steps=num_steps).epsilon_at(DELTA)
    ours = accounting.dpsgd_epsilon(correlated.Independent(), noise_multiplier=kappa, n=n, batch_size=batch_size,
                                    num_steps=num_steps, delta=DELTA, sampler="cyclic_poisson",
                                    neighboring="add_remove")
    assert float(ours.value) == pytest.approx(reference, rel=1e-2)
