"""Tests of privdyn.privacy.langevin (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): Theorem 4 and Lemma 6 (spec 10.3):
the utility bounds (privdyn.privacy.langevin.utility).

Reference numbers come from specs/seed-001.md, which derives them from the paper's formulas.
"""

from __future__ import annotations

import dataclasses
import math
from decimal import Decimal

import numpy as np
import pytest

from privdyn.privacy import langevin as lg
from privdyn.privacy.conversions import optimal_renyi_order, zcdp_to_epsilon
from privdyn.privacy.labels import Guarantee


def assert_printed(value: float, printed: str) -> None:
    """value rounds to the printed decimal (half a unit of the last printed digit)."""
    exponent = Decimal(printed).as_tuple().exponent
    tolerance = 0.5 * 10.0**exponent * (1 + 1e-9)
    assert abs(value - float(printed)) <= tolerance, (value, printed)


# ----------------------------------------------------------------------------------------------------
# Theorem 4 and Lemma 6 (spec 10.3)

T4 = dict(lipschitz=1.0, strong_convexity=1.0, smoothness=2.0, n=10**4, d=100)


def test_theorem4_rdp_form():
    p = lg.theorem4_parameters(renyi_order=10, rdp_epsilon=1.0, **T4)
    assert p.form == "rdp"
    assert p.step_size == 0.125
    assert p.noise_variance == pytest.approx(4e-7, rel=1e-14)
    assert p.noise_scale == pytest.approx(math.sqrt(4e-7), rel=1e-14)
    assert p.num_steps_real == pytest.approx(8 * math.log(1e5), rel=1e-14)
    assert_printed(p.num_steps_real, "92.103")
    assert p.num_steps == 93 and isinstance(p.num_steps, int)
    assert p.gradient_complexity == 930_000
    # Lemma 6 at the real K* is exactly 10 alpha beta d L^2 / (lambda^2 eps' n^2) = 2.0e-4
    at_kstar = lg.lemma6_excess_risk_bound(
        num_steps=p.num_steps_real,
        step_size=p.step_size,
        noise_scale=p.noise_scale,
        lipschitz=1,
        strong_convexity=1,
        smoothness=2,
        d=100,
    )
    assert at_kstar == pytest.approx(2.0e-4, rel=1e-12)
    assert_printed(p.excess_risk_bound, "2.0e-4")
    assert p.excess_risk_bound < at_kstar
    # Corollary 1 at K* = 0.99684 <= 1, and the certified guarantee is (10, 1)-RDP for every K
    cor1 = lg.dynamics_rdp(
        10,
        num_steps=p.num_steps_real,
        step_size=0.125,
        noise_scale=p.noise_scale,
        strong_convexity=1,
        smoothness=2,
        sensitivity=2,
        n=10**4,
    ).value
    assert_printed(cor1, "0.99684")
    assert p.rdp_epsilon_at_num_steps <= 1.0
    assert p.privacy.value == pytest.approx(1.0, rel=1e-14)
    assert p.privacy.guarantee is Guarantee.BOUND and p.privacy.quantity == "rdp_epsilon"
    # the RDP form does not depend on the K* formula choice
    exact = lg.theorem4_parameters(renyi_order=10, rdp_epsilon=1.0, num_steps_formula="exact", **T4)
    assert dataclasses.replace(exact, num_steps_formula="printed") == p


def test_theorem4_dp_form():
    p = lg.theorem4_parameters(epsilon=1.0, delta=1e-5, **T4)
    assert p.form == "dp"
    assert_printed(p.renyi_order, "24.02585")
    assert p.rdp_epsilon == 0.5
    assert p.noise_variance == pytest.approx(1.922068e-6, rel=5e-7)
    assert p.noise_variance == pytest.approx(8 * (1 + 2 * math.log(1e5)) / 1e8, rel=1e-14)
    assert_printed(p.num_steps_real, "79.886")
    assert p.num_steps == 80
    assert p.privacy.quantity == "epsilon"
    assert p.privacy.value == pytest.approx(1.0, abs=1e-12)  # Mironov: eps/2 + ln(1/delta)/(alpha - 1) = eps
    exact = lg.theorem4_parameters(epsilon=1.0, delta=1e-5, num_steps_formula="exact", **T4)
    assert_printed(exact.num_steps_real, "79.546")
    assert exact.noise_variance == p.noise_variance
    # the same noise with the optimal-order conversion (spec 10.3): eps_DP = 0.99978 at alpha* = 24.52
    rho = 4 / (1.0 * p.noise_variance * 1e8)
    assert_printed(zcdp_to_epsilon(rho, delta=1e-5, method="bun_steinke"), "0.99978")
    assert_printed(optimal_renyi_order(rho, delta=1e-5, method="bun_steinke"), "24.52")
    # and the optimal-order calibration: sigma^2 = 1.921235e-6
    sigma = lg.noise_scale_for_dp(
        1.0,
        1e-5,
        method="optimal_order",
        step_size=0.125,
        strong_convexity=1,
        smoothness=2,
        sensitivity=2,
        n=10**4,
    ).value
    assert sigma**2 == pytest.approx(1.921235e-6, rel=5e-7)


def test_composition_calibrated_utility_analogue():
    """spec 10.3: composition-calibrated noisy GD has best Lemma-6 bound 5.005e-4 (at K = 92)."""
    ks = np.arange(1, 400)
    per_unit = lg.composition_rdp(
        10, num_steps=ks, step_size=0.125, noise_scale=1.0, sensitivity=2.0, n=10**4
    ).value
    sigma = np.sqrt(per_unit / 1.0)  # composition at noise_scale sigma is per_unit / sigma^2; target eps' = 1
    risk = lg.lemma6_excess_risk_bound(
        num_steps=ks, step_size=0.125, noise_scale=sigma, lipschitz=1, strong_convexity=1, smoothness=2, d=100
    )
    assert int(ks[np.argmin(risk)]) == 92
    assert_printed(float(risk.min()), "5.005e-4")


def test_theorem4_vectorized():
    p = lg.theorem4_parameters(renyi_order=np.array([10.0, 20.0]), rdp_epsilon=1.0, **T4)
    assert p.num_steps.shape == (2,) and p.noise_variance.shape == (2,)
    assert p.num_steps[0] == 93
    np.testing.assert_allclose(p.noise_variance, [4e-7, 8e-7], rtol=1e-14)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(), "exactly one of the pairs"),
        (dict(renyi_order=10, rdp_epsilon=1, epsilon=1, delta=1e-5), "exactly one of the pairs"),
        (dict(renyi_order=10), "rdp_epsilon"),
        (dict(delta=1e-5), "epsilon"),
        (dict(epsilon=30.0, delta=1e-5), "epsilon must be <= 2\\*ln\\(1/delta\\)"),
        (dict(renyi_order=10, rdp_epsilon=1e-7), "K\\* is not positive"),
        (dict(renyi_order=1.0, rdp_epsilon=1.0), "renyi_order"),
        (dict(epsilon=1.0, delta=1.5), "delta"),
        (dict(renyi_order=10, rdp_epsilon=1, num_steps_formula="other"), "num_steps_formula"),
    ],
)
def test_theorem4_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lg.theorem4_parameters(**T4, **kwargs)


def test_theorem4_bad_constants():
    with pytest.raises(ValueError, match="strong_convexity"):
        lg.theorem4_parameters(
            lipschitz=1, strong_convexity=3, smoothness=2, n=10, d=1, renyi_order=2, rdp_epsilon=1
        )
    with pytest.raises(ValueError, match="d must be an integer"):
        lg.theorem4_parameters(
            lipschitz=1, strong_convexity=1, smoothness=2, n=10, d=0, renyi_order=2, rdp_epsilon=1
        )


def test_lemma6_validation():
    kw = dict(num_steps=10, noise_scale=0.1, lipschitz=1, strong_convexity=1, smoothness=2, d=3)
    assert lg.lemma6_excess_risk_bound(step_size=0.125, **kw) > 0
    with pytest.raises(
        ValueError, match=r"step_size must be <= strong_convexity/\(2\*smoothness\*\*2\) = 0.125"
    ):
        lg.lemma6_excess_risk_bound(step_size=0.2, **kw)
