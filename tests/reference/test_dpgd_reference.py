"""privdyn.reference.dpgd_risk and dpgd_clipping: the independent LSODA risk ODE and the mpmath clipping factors."""

import math

import numpy as np
import pytest

from privdyn.dynamics import dpgd
from privdyn.reference.dpgd_clipping import reference_clipping_factors
from privdyn.reference.dpgd_risk import reference_risk_ode
from privdyn.schedules import Polynomial
from privdyn.spectra import Spectrum

FIG1 = dict(aspect_ratio=0.1, clip=1.0, rho=1.0, label_noise=0.3, initial_learning_rate=3.0)


def test_initial_value_and_final_jump():
    risk, final = reference_risk_ode(eigenvalues=np.ones(10), theta_star=np.full(10, 10**-0.5), **FIG1,
                                     schedule_exponent=0.0, times=[0.0, 1.0])
    assert risk[0] == pytest.approx(0.5, rel=1e-12)
    assert final == pytest.approx(risk[-1] + 0.18, rel=1e-12)  # 2c²η̃(1)²γ²/ρ² = 2·9·0.01
    middle, final_again = reference_risk_ode(eigenvalues=np.ones(10), theta_star=np.full(10, 10**-0.5), **FIG1,
                                             schedule_exponent=0.0, times=[0.5])
    assert final_again == pytest.approx(final, rel=1e-9) and middle.shape == (1,)


@pytest.mark.parametrize("schedule_exponent", [0.0, 0.5])
def test_agrees_with_the_engine(schedule_exponent):
    eigenvalues = np.repeat([0.5, 1.0, 1.5], 4)
    theta_star = np.full(12, 12**-0.5)
    times = np.array([0.25, 0.5, 0.75])
    risk, final = reference_risk_ode(eigenvalues=eigenvalues, theta_star=theta_star, **FIG1,
                                     schedule_exponent=schedule_exponent, times=times)
    spectrum = Spectrum.from_eigenvalues(eigenvalues)
    projections = spectrum.group_sums(theta_star**2)
    engine = dpgd.solve_risk_ode(spectrum=spectrum, target_projections=projections, aspect_ratio=0.1,
                                 learning_rate=Polynomial(3.0, schedule_exponent), clip=1.0, rho=1.0, label_noise=0.3,
                                 times=times)
    np.testing.assert_allclose(risk, engine.risk, rtol=1e-4)
    assert final == pytest.approx(engine.final_private_risk, rel=1e-4)


def test_bad_times_name_the_parameter():
    with pytest.raises(ValueError, match="times"):
        reference_risk_ode(eigenvalues=np.ones(2), theta_star=np.ones(2), **FIG1, schedule_exponent=0.0,
                           times=[0.5, 0.2])
    with pytest.raises(ValueError, match="times"):
        reference_risk_ode(eigenvalues=np.ones(2), theta_star=np.ones(2), **FIG1, schedule_exponent=0.0,
                           times=[1.5])


@pytest.mark.parametrize("c_prime", [1e-3, 0.3, 1.0, 2.5, 6.0])
def test_clipping_factors_match_the_closed_forms(c_prime):
    mu, nu = reference_clipping_factors(c_prime)
    x = c_prime / math.sqrt(2.0)
    assert mu == pytest.approx(math.erf(x), rel=1e-13)
    expected_nu = (c_prime**2 * math.erfc(x) + math.erf(x)
                   - math.sqrt(2.0 / math.pi) * c_prime * math.exp(-0.5 * c_prime**2))
    assert nu == pytest.approx(expected_nu, rel=1e-9)
    engine_mu, engine_nu = dpgd.clipping_factors(np.array([c_prime]))
    assert engine_mu[0] == pytest.approx(mu, rel=1e-12) and engine_nu[0] == pytest.approx(nu, rel=1e-12)
