"""Shifted interpolation (arXiv 2403.00278): the μ-GDP bound of the last iterate against exact laws and the other
bounds, and its refusals."""

import math

import numpy as np
import pytest

from privdyn.privacy import langevin


def _exact_shift(*, num_steps: int, contraction: float, shift: float, noise_std: float) -> float:
    """The Gaussian shift of the last iterates of θ ↦ cθ + s + N(0, v) against θ ↦ cθ + N(0, v), both from 0: the
    mean gap and the variance, step by step (an oracle independent of the closed form)."""
    gap, variance = 0.0, 0.0
    for _ in range(num_steps):
        gap = contraction * gap + shift
        variance = contraction**2 * variance + noise_std**2
    return gap / math.sqrt(variance)


@pytest.mark.parametrize("num_steps", [1, 2, 7, 100, 5_000])
@pytest.mark.parametrize(("step_size", "strong_convexity", "smoothness"), [
    (0.5, 0.1, 1.0), (3.0, 0.01, 0.26), (1.9, 0.3, 1.0), (0.9, 1.0, 1.0)])
def test_equal_to_the_worst_linear_instance(num_steps: int, step_size: float, strong_convexity: float,
                                            smoothness: float) -> None:
    """The bound is the shift of the linear map with the worst contraction c = max(|1 − ηλ|, |1 − ηβ|)."""
    sigma, sensitivity, n = 0.3, 2.0, 50
    mu = langevin.shifted_interpolation_gdp(num_steps=num_steps, step_size=step_size, noise_scale=sigma,
                                            strong_convexity=strong_convexity, smoothness=smoothness,
                                            sensitivity=sensitivity, n=n).value
    c = max(abs(1 - step_size * strong_convexity), abs(1 - step_size * smoothness))
    assert c == langevin.contraction_factor(step_size=step_size, strong_convexity=strong_convexity,
                                            smoothness=smoothness)
    exact = _exact_shift(num_steps=num_steps, contraction=c, shift=step_size * sensitivity / n,
                         noise_std=math.sqrt(2 * step_size) * sigma)
    assert mu == pytest.approx(exact, rel=1e-9)


def test_below_composition_and_corollary_1_over_a_grid() -> None:
    """μ²/2 never exceeds composition's zCDP (K Gaussian steps) nor Corollary 1's (η < 1/β), over a grid."""
    for lam in (1e-4, 1e-3, 1e-2, 0.1):
        beta = 0.25 + lam
        for fraction in (0.1, 0.5, 0.99):
            eta = fraction / beta
            ks = np.unique(np.geomspace(1, 1e5, 40).round())
            kw = dict(step_size=eta, noise_scale=0.7, sensitivity=2.0, n=300)
            mu = np.asarray(langevin.shifted_interpolation_gdp(num_steps=ks, strong_convexity=lam, smoothness=beta,
                                                               **kw).value)
            c1 = np.asarray(langevin.dynamics_zcdp(num_steps=ks, strong_convexity=lam, smoothness=beta, **kw).value)
            composed = np.asarray(langevin.composition_rdp(2.0, num_steps=ks, **kw).value) / 2.0
            assert np.all(mu**2 / 2 <= composed * (1 + 1e-12))
            assert np.all(mu**2 / 2 <= c1 * (1 + 1e-12))


def test_zero_steps_and_broadcasting() -> None:
    out = langevin.shifted_interpolation_gdp(num_steps=[0, 1, 10], step_size=0.5, noise_scale=1.0,
                                             strong_convexity=0.1, smoothness=1.0, sensitivity=1.0, n=10)
    assert out.value[0] == 0.0 and out.value.shape == (3,) and np.all(np.diff(out.value) > 0)
    assert out.quantity == "gdp_mu" and out.guarantee == "bound" and "2403.00278" in out.source


@pytest.mark.parametrize(("changes", "match"), [
    ({"step_size": 2.0}, "step_size must be in \\(0, 2/smoothness\\)"),
    ({"strong_convexity": 2.0}, "strong_convexity must be <= smoothness"),
    ({"noise_scale": 0.0}, "noise_scale"),
    ({"n": 0}, "n must be an integer >= 1"),
    ({"num_steps": -1}, "num_steps must be >= 0"),
    ({"sensitivity": float("nan")}, "sensitivity"),
])
def test_refusals_name_the_parameter(changes: dict, match: str) -> None:
    kw = dict(num_steps=10, step_size=0.5, noise_scale=1.0, strong_convexity=0.1, smoothness=1.0, sensitivity=1.0,
              n=10)
    with pytest.raises(ValueError, match=match):
        langevin.shifted_interpolation_gdp(**{**kw, **changes})
