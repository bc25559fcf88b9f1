"""Tests of privdyn.privacy.langevin (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): Figure 1 and Corollary 1, the
composition baseline, labels, shapes and validation (the quadratic instance, the extensions, calibration and the utility
bounds are tested in test_langevin_quadratic.py, test_langevin_extensions.py, test_langevin_calibration.py and
test_langevin_utility.py).

Reference numbers come from specs/seed-001.md (sections 6 and 10), which derives them from the paper's
formulas; the composition baseline is checked against dp-accounting's RDP accountant, an independent
implementation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, SelfComposedDpEvent
from dp_accounting import NeighboringRelation as DpNeighboringRelation
from dp_accounting.rdp import RdpAccountant

from privdyn.privacy import langevin as lg
from privdyn.privacy.conversions import rdp_to_epsilon, zcdp_to_epsilon
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

# Figure 1 settings (spec 6): beta = 4, S_g = 4, n = 5000, eta = 0.02, sigma = 0.02.
FIG1 = dict(step_size=0.02, noise_scale=0.02, smoothness=4.0, sensitivity=4.0, n=5000)
FIG1_BASE = dict(step_size=0.02, noise_scale=0.02, sensitivity=4.0, n=5000)


# ----------------------------------------------------------------------------------------------------
# Figure 1 (spec 6)


@pytest.mark.parametrize("alpha", [10, 20, 30])
@pytest.mark.parametrize("lam", [1, 2, 4])
def test_figure1_asymptotes(alpha, lam):
    expected = 0.0016 * alpha / lam
    asym = lg.dynamics_rdp_asymptote(alpha, noise_scale=0.02, strong_convexity=lam, sensitivity=4.0, n=5000)
    assert asym.value == pytest.approx(expected, rel=1e-12)
    far = lg.dynamics_rdp(alpha, num_steps=10**6, strong_convexity=lam, **FIG1)
    assert far.value == pytest.approx(expected, rel=1e-12)


COR1_TABLE = {  # K: (lambda=1, lambda=2, lambda=4) at alpha = 10
    1: ("1.5920e-4", "1.5841e-4", "1.5684e-4"),
    10: ("1.5226e-3", "1.4502e-3", "1.3187e-3"),
    50: ("6.2955e-3", "5.0570e-3", "3.4587e-3"),
    100: ("1.0114e-2", "6.9173e-3", "3.9267e-3"),
    200: ("1.3835e-2", "7.8535e-3", "3.9987e-3"),
    500: ("1.5892e-2", "7.9996e-3", "4.0000e-3"),
    1000: ("1.5999e-2", "8.0000e-3", "4.0000e-3"),
}


@pytest.mark.parametrize("num_steps", sorted(COR1_TABLE))
@pytest.mark.parametrize("alpha", [10, 20, 30])
def test_figure1_corollary1_values(num_steps, alpha):
    for lam, printed in zip((1, 2, 4), COR1_TABLE[num_steps], strict=True):
        value = lg.dynamics_rdp(alpha, num_steps=num_steps, strong_convexity=lam, **FIG1).value
        assert value == pytest.approx(float(printed) * alpha / 10, rel=5e-5)


def test_figure1_baseline_slope_and_examples():
    for alpha in (10, 20, 30):
        slope = lg.composition_rdp(alpha, num_steps=1, **FIG1_BASE).value
        assert slope == pytest.approx(8e-6 * alpha, rel=1e-12)
    values = lg.composition_rdp(10, num_steps=np.array([100, 1000, 2000]), **FIG1_BASE).value
    np.testing.assert_allclose(values, [0.008, 0.08, 0.16], rtol=1e-12)


def test_crossover_constant():
    x = lg.CROSSOVER_X
    assert x == pytest.approx(1.59362426004, abs=1e-11)
    assert -math.expm1(-x) == pytest.approx(x / 2, rel=1e-15)


def test_figure1_crossovers():
    lams = np.array([1.0, 2.0, 4.0])
    cross = lg.crossover_num_steps(step_size=0.02, strong_convexity=lams)
    np.testing.assert_allclose(cross, [159.36, 79.68, 39.84], atol=0.005)
    assert lg.crossover_num_steps(step_size=0.02, strong_convexity=1.0) == pytest.approx(
        3.18725 / 0.02, rel=1e-5
    )
    for lam, k in zip(lams, cross, strict=True):
        for alpha in (10, 20, 30):
            dyn = lg.dynamics_rdp(alpha, num_steps=k, strong_convexity=lam, **FIG1).value
            comp = lg.composition_rdp(alpha, num_steps=k, **FIG1_BASE).value
            assert dyn == pytest.approx(comp, rel=1e-12)
            before, after = math.floor(k), math.ceil(k)
            assert (
                lg.dynamics_rdp(alpha, num_steps=before, strong_convexity=lam, **FIG1).value
                > lg.composition_rdp(alpha, num_steps=before, **FIG1_BASE).value
            )
            assert (
                lg.dynamics_rdp(alpha, num_steps=after, strong_convexity=lam, **FIG1).value
                < lg.composition_rdp(alpha, num_steps=after, **FIG1_BASE).value
            )


def test_small_k_is_twice_composition():
    dyn = lg.dynamics_rdp(10, num_steps=1, strong_convexity=1e-3, **FIG1).value
    comp = lg.composition_rdp(10, num_steps=1, **FIG1_BASE).value
    assert dyn / comp == pytest.approx(2.0, rel=1e-4)


def test_figure1_steps_to_95_percent():
    lams = np.array([1.0, 2.0, 4.0])
    steps = lg.steps_to_fraction(0.95, step_size=0.02, strong_convexity=lams)
    np.testing.assert_allclose(steps, [299.6, 149.8, 74.9], atol=0.05)
    np.testing.assert_allclose(steps, 2 * math.log(20) / (lams * 0.02), rtol=1e-14)
    dyn = lg.dynamics_rdp(10, num_steps=steps, strong_convexity=lams, **FIG1).value
    asym = lg.dynamics_rdp_asymptote(
        10, noise_scale=0.02, strong_convexity=lams, sensitivity=4.0, n=5000
    ).value
    np.testing.assert_allclose(dyn, 0.95 * asym, rtol=1e-12)
    assert lg.steps_to_fraction(0.0, step_size=0.02, strong_convexity=1.0) == 0.0


def test_increments_sum_to_corollary1():
    k = np.arange(1, 301)
    inc = lg.dynamics_rdp_increment(20, step_index=k, strong_convexity=2.0, **FIG1)
    assert inc.quantity == "rdp_epsilon_increment"
    total = lg.dynamics_rdp(20, num_steps=k, strong_convexity=2.0, **FIG1).value
    np.testing.assert_allclose(np.cumsum(inc.value), total, rtol=1e-11)
    assert np.all(np.diff(inc.value) < 0)  # geometric decay
    np.testing.assert_allclose(inc.value[1:] / inc.value[:-1], math.exp(-2.0 * 0.02 / 2), rtol=1e-12)


def test_dynamics_zcdp_is_the_slope_of_corollary1():
    k = np.arange(0, 600, 50)
    rho = lg.dynamics_zcdp(num_steps=k, strong_convexity=2.0, **FIG1)
    assert rho.quantity == "zcdp" and rho.guarantee is Guarantee.BOUND
    for alpha in (1.5, 10.0, 30.0):
        rdp = lg.dynamics_rdp(alpha, num_steps=k, strong_convexity=2.0, **FIG1).value
        np.testing.assert_allclose(alpha * rho.value, rdp, rtol=1e-14)
    rho_inf = lg.dynamics_zcdp(strong_convexity=2.0, **FIG1).value
    asym = lg.dynamics_rdp_asymptote(
        10.0, noise_scale=0.02, strong_convexity=2.0, sensitivity=4.0, n=5000
    ).value
    assert 10.0 * rho_inf == pytest.approx(asym, rel=1e-14)
    # the optimal-order conversion is no worse than Mironov's on any grid of orders
    orders = np.linspace(1.5, 200, 400)
    grid_eps, _ = rdp_to_epsilon(orders, orders * rho_inf, delta=1e-6, method="mironov")
    assert zcdp_to_epsilon(rho_inf, delta=1e-6, method="bun_steinke") <= grid_eps
    with pytest.raises(ValueError, match="step_size must be < 1/smoothness = 0.25"):
        lg.dynamics_zcdp(strong_convexity=2.0, **{**FIG1, "step_size": 0.3})


def test_alpha_scales_asymptote_not_rate():
    k = np.arange(0, 500, 7)
    v10 = lg.dynamics_rdp(10, num_steps=k, strong_convexity=2.0, **FIG1).value
    v30 = lg.dynamics_rdp(30, num_steps=k, strong_convexity=2.0, **FIG1).value
    np.testing.assert_allclose(v30, 3 * v10, rtol=1e-13)


# ----------------------------------------------------------------------------------------------------
# independent oracle: dp-accounting's Gaussian RDP composed K times


@pytest.mark.parametrize(
    ("alpha", "k", "eta", "sigma", "s", "n"),
    [
        (2.0, 1, 0.1, 1.0, 1.0, 1),
        (10.0, 100, 0.02, 0.02, 4.0, 5000),
        (32.0, 2000, 0.02, 0.02, 4.0, 5000),
        (3.5, 57, 0.3, 0.8, 2.0, 17),
    ],
)
def test_composition_matches_dp_accounting(alpha, k, eta, sigma, s, n):
    z = n * sigma * math.sqrt(2 / eta) / s
    accountant = RdpAccountant(orders=[alpha], neighboring_relation=DpNeighboringRelation.REPLACE_ONE)
    accountant.compose(SelfComposedDpEvent(GaussianDpEvent(z), k))
    assert list(accountant.orders) == [alpha]
    expected = float(accountant.rdp[0])
    got = lg.composition_rdp(alpha, num_steps=k, step_size=eta, noise_scale=sigma, sensitivity=s, n=n).value
    assert got == pytest.approx(expected, rel=1e-12)


# ----------------------------------------------------------------------------------------------------
# labels, shapes, validation


def test_labels_and_sources():
    kw = dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)
    cases = [
        (lg.dynamics_rdp(2, strong_convexity=1, smoothness=2, **kw), Guarantee.BOUND, "Corollary 1"),
        (lg.composition_rdp(2, **kw), Guarantee.BOUND, "Theorem 1"),
        (lg.lsi_rdp(2, lsi_constant=0.5, **kw), Guarantee.BOUND, "Theorem 2"),
        (lg.quadratic_exact_rdp(2, **kw), Guarantee.EXACT, "tightness"),
        (lg.quadratic_lower_bound_rdp(2, **kw), Guarantee.LOWER_BOUND, "Theorem 3"),
        (lg.quadratic_corollary2_rdp(2, **kw), Guarantee.BOUND, "Corollary 2"),
        (lg.tracked_lsi_rdp(2, strong_convexity=1, smoothness=2, **kw), Guarantee.BOUND, "privdyn extension"),
        (lg.best_gamma_rdp(2, strong_convexity=1, smoothness=2, **kw), Guarantee.BOUND, "privdyn extension"),
    ]
    for loss, guarantee, words in cases:
        assert isinstance(loss, PrivacyLoss)
        assert loss.guarantee is guarantee
        assert loss.neighboring is NeighboringRelation.REPLACE_ONE
        assert loss.quantity == "rdp_epsilon"
        assert "Chourasia, Ye, Shokri 2021 (arXiv 2102.05855)" in loss.source and words in loss.source
        assert isinstance(loss.value, float)
    assert "assumes" in cases[0][0].source
    assert not Guarantee.LOWER_BOUND.is_guarantee


def test_broadcasting():
    alpha = np.array([2.0, 10.0, 30.0])[:, None]
    k = np.arange(0, 50, 10)[None, :]
    out = lg.dynamics_rdp(alpha, num_steps=k, strong_convexity=1.0, **FIG1).value
    assert out.shape == (3, 5)
    for i in range(3):
        for j in range(5):
            one = lg.dynamics_rdp(
                float(alpha[i, 0]), num_steps=int(k[0, j]), strong_convexity=1.0, **FIG1
            ).value
            assert isinstance(one, float) and out[i, j] == one
    assert lg.composition_rdp(alpha, num_steps=k, **FIG1_BASE).value.shape == (3, 5)
    assert lg.quadratic_exact_rdp(
        2.0,
        num_steps=k,
        step_size=np.array([[0.1], [0.5]]),
        noise_scale=1.0,
        sensitivity=1.0,
        n=1,
        init_variance=np.array([0.0, 0.0, 1.0, 1.0, 2.0]),
    ).value.shape == (2, 5)
    assert lg.best_gamma_rdp(alpha, num_steps=k, strong_convexity=1.0, **FIG1).value.shape == (3, 5)
    assert lg.tracked_lsi_rdp(alpha, num_steps=k, strong_convexity=1.0, **FIG1).value.shape == (3, 5)
    assert isinstance(lg.crossover_num_steps(step_size=0.02, strong_convexity=1), float)
    # integral floats are accepted for counts
    assert (
        lg.dynamics_rdp(
            2,
            num_steps=5.0,
            strong_convexity=1.0,
            step_size=0.02,
            noise_scale=0.02,
            smoothness=4,
            sensitivity=4,
            n=5000.0,
        ).value
        > 0
    )


def test_num_steps_zero_gives_zero():
    kw = dict(num_steps=0, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)
    assert lg.dynamics_rdp(2, strong_convexity=1, smoothness=2, **kw).value == 0.0
    assert lg.composition_rdp(2, **kw).value == 0.0
    assert lg.lsi_rdp(2, lsi_constant=1.0, **kw).value == 0.0
    assert lg.quadratic_lower_bound_rdp(2, **kw).value == 0.0
    assert lg.quadratic_corollary2_rdp(2, **kw).value == 0.0
    assert (
        lg.tracked_lsi_rdp(2, strong_convexity=1, smoothness=2, init_lsi_constant=np.inf, **kw).value == 0.0
    )
    assert lg.best_gamma_rdp(2, strong_convexity=1, smoothness=2, **kw).value == 0.0


GOOD = dict(
    renyi_order=10.0,
    num_steps=100,
    step_size=0.02,
    noise_scale=0.02,
    strong_convexity=1.0,
    smoothness=4.0,
    sensitivity=4.0,
    n=5000,
)

BAD_INPUTS = [  # (parameter, bad value, message fragment)
    ("step_size", 0.25, "step_size must be < 1/smoothness = 0.25"),
    ("step_size", 1.0, "step_size must be < 1/smoothness = 0.25"),
    ("step_size", 0.0, "step_size"),
    ("strong_convexity", 5.0, "strong_convexity must be <= smoothness = 4.0"),
    ("strong_convexity", 0.0, "strong_convexity"),
    ("renyi_order", 1.0, "renyi_order"),
    ("renyi_order", 0.5, "renyi_order"),
    ("noise_scale", 0.0, "noise_scale"),
    ("noise_scale", -1.0, "noise_scale"),
    ("n", 0, "n must be"),
    ("n", 2.5, "n must be an integer"),
    ("num_steps", -1, "num_steps"),
    ("sensitivity", 0.0, "sensitivity"),
    ("sensitivity", -2.0, "sensitivity"),
    ("smoothness", 0.0, "smoothness"),
]
NON_FINITE = [(name, bad) for name in GOOD for bad in (math.nan, math.inf)]


def _call_with(fn, params, **override):
    kwargs = {key: value for key, value in {**GOOD, **override}.items() if key in params}
    first = kwargs.pop("renyi_order")
    return fn(first, **kwargs)


C1_FUNCTIONS = {
    "dynamics_rdp": (lg.dynamics_rdp, set(GOOD)),
    "best_gamma_rdp": (lg.best_gamma_rdp, set(GOOD)),
}


@pytest.mark.parametrize("fn_name", sorted(C1_FUNCTIONS))
@pytest.mark.parametrize(("name", "bad", "match"), BAD_INPUTS)
def test_corollary1_validation(fn_name, name, bad, match):
    fn, params = C1_FUNCTIONS[fn_name]
    with pytest.raises(ValueError, match=match.replace("(", r"\(").replace(")", r"\)")):
        _call_with(fn, params, **{name: bad})


@pytest.mark.parametrize(("name", "bad"), NON_FINITE)
def test_non_finite_rejected(name, bad):
    with pytest.raises(ValueError, match=name):
        _call_with(lg.dynamics_rdp, set(GOOD), **{name: bad})


def test_validation_array_message_names_first_bad_element():
    with pytest.raises(ValueError, match=r"step_size must be < 1/smoothness = 0.5; got step_size=0.6"):
        lg.dynamics_rdp(
            2,
            num_steps=1,
            step_size=np.array([0.1, 0.6]),
            noise_scale=1,
            strong_convexity=1,
            smoothness=np.array([4.0, 2.0]),
            sensitivity=1,
            n=1,
        )


OTHER_FUNCTIONS = [
    (lg.composition_rdp, dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.lsi_rdp, dict(lsi_constant=0.5, num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.quadratic_exact_rdp, dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.quadratic_lower_bound_rdp, dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.quadratic_corollary2_rdp, dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.dynamics_rdp_asymptote, dict(noise_scale=1.0, strong_convexity=1.0, sensitivity=1.0, n=5)),
    (
        lg.dynamics_rdp_increment,
        dict(
            step_index=3,
            step_size=0.1,
            noise_scale=1.0,
            strong_convexity=1.0,
            smoothness=2.0,
            sensitivity=1.0,
            n=5,
        ),
    ),
    (
        lg.tracked_lsi_rdp,
        dict(
            num_steps=10,
            step_size=0.1,
            noise_scale=1.0,
            strong_convexity=1.0,
            smoothness=2.0,
            sensitivity=1.0,
            n=5,
        ),
    ),
]


@pytest.mark.parametrize(("fn", "kwargs"), OTHER_FUNCTIONS, ids=lambda v: getattr(v, "__name__", ""))
def test_common_validation(fn, kwargs):
    assert fn(2.0, **kwargs).value >= 0
    with pytest.raises(ValueError, match="renyi_order"):
        fn(1.0, **kwargs)
    for name, bad in [
        ("noise_scale", 0.0),
        ("sensitivity", -1.0),
        ("n", 0),
        ("num_steps", -1),
        ("step_size", 0.0),
        ("lsi_constant", 0.0),
        ("step_index", 0),
        ("noise_scale", math.nan),
    ]:
        if name in kwargs:
            with pytest.raises(ValueError, match=name):
                fn(2.0, **{**kwargs, name: bad})


@pytest.mark.parametrize(
    "fn", [lg.quadratic_exact_rdp, lg.quadratic_lower_bound_rdp, lg.quadratic_corollary2_rdp]
)
def test_quadratic_step_size_range(fn):
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"step_size must be in \(0.0, 1.0\)"):
            fn(2.0, num_steps=3, step_size=bad, noise_scale=1.0, sensitivity=1.0, n=1)
    with pytest.raises(ValueError, match="init_variance"):
        lg.quadratic_exact_rdp(
            2.0, num_steps=3, step_size=0.5, noise_scale=1.0, sensitivity=1.0, n=1, init_variance=-1.0
        )


def test_calibration_validation():
    kw = dict(step_size=0.1, strong_convexity=1.0, smoothness=2.0, sensitivity=1.0, n=100)
    with pytest.raises(ValueError, match="rdp_epsilon"):
        lg.noise_scale_for_rdp(2.0, 0.0, **kw)
    with pytest.raises(ValueError, match="num_steps"):
        lg.noise_scale_for_rdp(2.0, 1.0, num_steps=0, **kw)
    with pytest.raises(ValueError, match="step_size must be < 1/smoothness = 0.5"):
        lg.noise_scale_for_rdp(2.0, 1.0, **{**kw, "step_size": 0.5})
    with pytest.raises(ValueError, match=r"epsilon must be <= 2\*ln\(1/delta\)"):
        lg.noise_scale_for_dp(50.0, 1e-5, method="paper", **kw)
    assert lg.noise_scale_for_dp(50.0, 1e-5, method="optimal_order", **kw).value > 0
    with pytest.raises(ValueError, match="delta"):
        lg.noise_scale_for_dp(1.0, 0.0, **kw)
    with pytest.raises(ValueError, match="delta"):
        lg.noise_scale_for_dp(1.0, 1.0, method="optimal_order", **kw)
    with pytest.raises(ValueError, match="epsilon"):
        lg.noise_scale_for_dp(-1.0, 1e-5, **kw)
    with pytest.raises(ValueError, match="method"):
        lg.noise_scale_for_dp(1.0, 1e-5, method="balle", **kw)


def test_time_scale_validation():
    with pytest.raises(ValueError, match="step_size"):
        lg.crossover_num_steps(step_size=0.0, strong_convexity=1.0)
    with pytest.raises(ValueError, match="strong_convexity"):
        lg.crossover_num_steps(step_size=0.1, strong_convexity=-1.0)
    with pytest.raises(ValueError, match="fraction"):
        lg.steps_to_fraction(1.0, step_size=0.1, strong_convexity=1.0)
    with pytest.raises(ValueError, match="init_lsi_constant"):
        lg.lsi_constant_tracker(
            num_steps=3, step_size=0.1, noise_scale=1, strong_convexity=1, smoothness=1, init_lsi_constant=0.0
        )
    with pytest.raises(ValueError, match="num_steps"):
        lg.lsi_constant_tracker(
            num_steps=-1,
            step_size=0.1,
            noise_scale=1,
            strong_convexity=1,
            smoothness=1,
            init_lsi_constant=1.0,
        )
