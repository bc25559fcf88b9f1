"""Tests of privdyn.privacy.correlated_calibration: Theorems F.12 and D.9 of arXiv 2605.12648v1, dp-accounting.

Reference values: the kan spec's section 2.4(c) table (computed from the theorems' formulas, printed to 2-3
decimals) and its dp-accounting check (epsilon of the Theorem D.9 kappa). The accountant is checked against two
independent mpmath evaluations: Wang-Balle-Kasiviswanathan's Theorem 9 (an upper bound it must not exceed) and the
exact Renyi divergence of one concrete pair of neighbouring datasets (a value it must not fall below).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from privdyn.privacy import correlated_calibration as cc
from privdyn.privacy.conversions import rdp_to_epsilon
from privdyn.privacy.labels import Guarantee, NeighboringRelation

# (n, B, T, epsilon, delta, kappa of D.9, kappa of F.12 at lambda = 0, 0.3, 0.5, 0.7, 0.9, epsilon of D.9's kappa)
TABLE = [
    (50_000, 500, 5_000, 1.0, 1e-5, 13.864, [96.05, 137.22, 192.11, 320.18, 960.54], 0.82),
    (10_000, 5_000, 100, 1.0, 1e-5, 98.032, [96.05, 137.22, 192.11, 320.18, 960.51], 0.84),
    (10_000, 1_000, 1_000, 0.5, 1e-6, 134.178, [279.72, 399.60, 559.44, 932.40, 2797.20], 0.41),
]
LAMBDAS = [0.0, 0.3, 0.5, 0.7, 0.9]
FIXED = dict(sampler="fixed_size", neighboring="replace_one")
POISSON = dict(sampler="poisson", neighboring="add_remove")


def _kwargs(row):
    n, batch_size, num_steps, epsilon, delta = row[:5]
    return dict(n=n, batch_size=batch_size, num_steps=num_steps, epsilon=epsilon, delta=delta)


@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"n={r[0]},B={r[1]},T={r[2]}")
def test_closed_forms_reproduce_the_reference_table(row):
    d9 = cc.noise_multiplier_theorem_d9(**_kwargs(row))
    assert abs(d9.value - row[5]) <= 0.0005
    assert d9.guarantee is Guarantee.HEURISTIC and not d9.guarantee.is_guarantee
    assert d9.neighboring is NeighboringRelation.REPLACE_ONE and d9.quantity == "noise_multiplier"
    for lam, printed in zip(LAMBDAS, row[6], strict=True):
        stated = cc.noise_multiplier_theorem_f12(lam, **_kwargs(row))
        proved = cc.noise_multiplier_theorem_f12(lam, **_kwargs(row), constant=2.0)
        assert abs(stated.value - printed) <= 0.005
        assert stated.value == pytest.approx(2.0 * proved.value, rel=1e-14)  # sqrt(8 / 2)
        assert stated.guarantee is Guarantee.BOUND and stated.neighboring is NeighboringRelation.ZERO_OUT
        assert "theorem_f12" in stated.source and "theorem_f12_proved" in proved.source


def test_f12_formula_written_out():
    n, batch_size, num_steps, epsilon, delta, lam = 20_000, 2_000, 500, 0.8, 1e-6, 0.45
    r = batch_size / n
    expected = math.sqrt(8 * ((1 - lam**num_steps) / (1 - lam)) ** 2
                         * (r * num_steps + math.sqrt(3 * r * num_steps * math.log(2 / delta)))
                         * math.log(2.5 / delta)) / epsilon
    got = cc.noise_multiplier_theorem_f12(lam, n=n, batch_size=batch_size, num_steps=num_steps, epsilon=epsilon,
                                          delta=delta)
    assert got.value == pytest.approx(expected, rel=1e-13)
    values = [cc.noise_multiplier_theorem_f12(x, n=n, batch_size=batch_size, num_steps=num_steps, epsilon=epsilon,
                                              delta=delta).value for x in np.linspace(0, 0.99, 12)]
    assert np.all(np.diff(values) > 0)


def test_f12_validity_conditions_are_named():
    base = dict(n=50_000, batch_size=500, epsilon=1.0, delta=1e-5)
    # r T >= 3 ln(2 / delta) = 36.62: T >= 3662 at r = 0.01 (kan spec section 2.4(c))
    cc.noise_multiplier_theorem_f12(0.5, num_steps=3662, **base)
    with pytest.raises(ValueError, match=r"r\*T >= 3\*ln\(2/delta\)"):
        cc.noise_multiplier_theorem_f12(0.5, num_steps=3661, **base)
    with pytest.raises(ValueError, match="epsilon <= 1"):
        cc.noise_multiplier_theorem_f12(0.5, num_steps=5000, **{**base, "epsilon": 1.5})
    with pytest.raises(ValueError, match="delta"):
        cc.noise_multiplier_theorem_f12(0.5, num_steps=5000, **{**base, "delta": 1.0})
    with pytest.raises(ValueError, match="constant"):
        cc.noise_multiplier_theorem_f12(0.5, num_steps=5000, **base, constant=4.0)
    for lam in (1.0, -0.2, float("nan")):
        with pytest.raises(ValueError, match="noise_correlation"):
            cc.noise_multiplier_theorem_f12(lam, num_steps=5000, **base)
    with pytest.raises(ValueError, match="batch_size"):
        cc.noise_multiplier_theorem_f12(0.5, num_steps=5000, **{**base, "batch_size": 60_000})
    with pytest.raises(ValueError, match="epsilon"):
        cc.noise_multiplier_theorem_d9(n=100, batch_size=10, num_steps=5, epsilon=float("inf"), delta=1e-5)
    with pytest.raises(ValueError, match="batch_size"):
        cc.noise_multiplier_theorem_d9(n=100, batch_size=101, num_steps=5, epsilon=1.0, delta=1e-5)


# --- dp-accounting ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"n={r[0]},B={r[1]},T={r[2]}")
def test_d9_kappa_through_the_accountant(row):
    """dp-accounting receives kappa / 2 (relative to the replace-one sensitivity 2 clip): epsilon 0.82/0.84/0.41."""
    n, batch_size, num_steps, _, delta = row[:5]
    kappa = cc.noise_multiplier_theorem_d9(**_kwargs(row)).value
    result = cc.epsilon_dp_accounting(kappa, n=n, batch_size=batch_size, num_steps=num_steps, delta=delta, **FIXED)
    assert abs(result.value - row[7]) <= 0.005
    assert result.value < row[3]  # D.9 is conservative here (valid in these regimes, not in general)
    assert result.guarantee is Guarantee.BOUND and result.neighboring is NeighboringRelation.REPLACE_ONE


def test_reading_kappa_as_the_replace_one_multiplier_would_under_report():
    """The spec's counter-example: handing dp-accounting kappa itself claims 0.39 instead of 0.82 (row 1)."""
    n, batch_size, num_steps, _, delta = TABLE[0][:5]
    kappa = cc.noise_multiplier_theorem_d9(**_kwargs(TABLE[0])).value
    wrong = cc.epsilon_dp_accounting(2 * kappa, n=n, batch_size=batch_size, num_steps=num_steps, delta=delta,
                                     **FIXED)
    assert abs(wrong.value - 0.39) <= 0.005


@pytest.mark.parametrize("setting", [
    (10_000, 5_000, 100, 1.0, 1e-5),
    (50_000, 500, 5_000, 1.0, 1e-5),
    (10_000, 100, 2_000, 6.0, 1e-5),
], ids=lambda s: f"n={s[0]},B={s[1]},T={s[2]},eps={s[3]}")
@pytest.mark.parametrize("accounting", [FIXED, POISSON, dict(sampler="fixed_size", neighboring="zero_out")],
                         ids=["fixed_size-replace_one", "poisson-add_remove", "fixed_size-zero_out"])
def test_inverse_round_trip(setting, accounting):
    """The calibration is safe (epsilon <= target by the forward accountant at its defaults) and tight: kappa
    smaller by 1 + rtol gives more than the target, so it is the full calibration's kappa to rtol."""
    n, batch_size, num_steps, epsilon, delta = setting
    rtol = 1e-4
    kappa = cc.noise_multiplier_dp_accounting(n=n, batch_size=batch_size, num_steps=num_steps, epsilon=epsilon,
                                              delta=delta, rtol=rtol, **accounting)
    assert kappa.guarantee is Guarantee.BOUND and kappa.sampler == accounting["sampler"]
    assert kappa.neighboring is NeighboringRelation(accounting["neighboring"])
    kwargs = dict(n=n, batch_size=batch_size, num_steps=num_steps, delta=delta, **accounting)
    assert cc.epsilon_dp_accounting(kappa.value, **kwargs).value <= epsilon
    assert cc.epsilon_dp_accounting(kappa.value / (1 + rtol), **kwargs).value > epsilon


def test_fixed_size_zero_out_is_the_poisson_subsampled_gaussian():
    """Theorem F.8's pair at lambda = 0: the same numbers as Poisson sampling at rate B/n."""
    kwargs = dict(n=60_000, batch_size=256, num_steps=2_000, delta=1e-5)
    fixed = cc.epsilon_dp_accounting(1.1, **kwargs, sampler="fixed_size", neighboring="zero_out")
    poisson = cc.epsilon_dp_accounting(1.1, **kwargs, sampler="poisson", neighboring="zero_out")
    assert fixed.value == poisson.value and "Theorem F.8" in fixed.source
    assert fixed.neighboring is NeighboringRelation.ZERO_OUT and fixed.sampler == "fixed_size"


def test_deprecated_sampling_spelling_keeps_its_defaults():
    kwargs = dict(n=1_000, batch_size=50, num_steps=20, delta=1e-5)
    with pytest.warns(DeprecationWarning, match="sampler="):
        old = cc.epsilon_dp_accounting(2.0, **kwargs, sampling="without_replacement")
    assert old.value == cc.epsilon_dp_accounting(2.0, **kwargs, **FIXED).value
    with pytest.warns(DeprecationWarning):
        old = cc.epsilon_dp_accounting(2.0, **kwargs, sampling="poisson")
    assert old.neighboring is NeighboringRelation.ADD_REMOVE and old.sampler == "poisson"
    with pytest.raises(ValueError, match="not both"):
        cc.epsilon_dp_accounting(2.0, **kwargs, sampling="poisson", sampler="poisson")


def test_sampler_and_relation_are_required():
    """No silent default: fixed-size replace-one (118.7) and Poisson add-remove (6.19) differ 20-fold here."""
    kwargs = dict(n=10_000, batch_size=100, num_steps=10_000, delta=1e-5)
    with pytest.raises(ValueError, match="sampler is required"):
        cc.epsilon_dp_accounting(1.0, **kwargs)
    with pytest.raises(ValueError, match="neighboring is required"):
        cc.epsilon_dp_accounting(1.0, **kwargs, sampler="poisson")


def test_poisson_relations_and_rdp_versus_pld():
    kwargs = dict(n=60_000, batch_size=256, num_steps=2_000, delta=1e-5, sampler="poisson")
    add_remove = cc.epsilon_dp_accounting(1.1, **kwargs, neighboring="add_remove")
    zero_out = cc.epsilon_dp_accounting(1.1, **kwargs, neighboring="zero_out")
    assert zero_out.value == pytest.approx(add_remove.value, rel=1e-9)
    assert zero_out.neighboring is NeighboringRelation.ZERO_OUT
    orders = np.concatenate([np.linspace(1.5, 10.5, 19), np.arange(11, 64)])
    rdp = cc.rdp_dp_accounting(1.1, n=60_000, batch_size=256, num_steps=2_000, renyi_orders=orders, **POISSON)
    rdp_epsilon, _ = rdp_to_epsilon(orders, rdp.value, delta=1e-5)
    assert add_remove.value <= rdp_epsilon  # PLD is the tighter of two upper bounds
    assert cc.epsilon_dp_accounting(0.0, **kwargs, neighboring="add_remove").value == math.inf


def _wbk_theorem9_rdp(q, kappa, order):
    """WBK 2019 Theorem 9 for the subsampled Gaussian with eps_M(j) = 2 j / kappa^2 and eps_M(inf) = inf.

    As simplified in the kan paper (proof of Lemma D.7, after eq. (19)):
    (1/(a-1)) log(1 + q^2 C(a,2) min(4(e^{4/k^2} - 1), 2 e^{4/k^2}) + 2 sum_{j>=3} q^j C(a,j) e^{2j(j-1)/k^2}).
    """
    with mpmath.workdps(40):
        q, kappa = mpmath.mpf(q), mpmath.mpf(kappa)
        e2 = mpmath.exp(4 / kappa**2)
        total = 1 + q**2 * mpmath.binomial(order, 2) * min(4 * (e2 - 1), 2 * e2)
        for j in range(3, order + 1):
            total += 2 * q**j * mpmath.binomial(order, j) * mpmath.exp(2 * j * (j - 1) / kappa**2)
        return float(mpmath.log(total) / (order - 1))


def _pair_rdp(q, kappa, order):
    """Exact D_alpha of one replace-one pair: record +clip vs -clip, included with probability q, noise std kappa."""
    with mpmath.workdps(20):
        q, s = mpmath.mpf(q), mpmath.mpf(kappa)

        def density(x, mean):
            return mpmath.npdf(x, 0, s) * (1 - q) + mpmath.npdf(x, mean, s) * q

        integral = mpmath.quad(lambda x: density(x, 1) ** order * density(x, -1) ** (1 - order),
                               [-mpmath.inf, -20 * s, -1, 0, 1, 20 * s, mpmath.inf])
        return float(mpmath.log(integral) / (order - 1))


PAIR_ORDERS = [0, 3, 10, 30]  # orders 2, 5, 12, 32


@pytest.mark.parametrize("kappa", [1.6, 4.0])
def test_accountant_between_wbk_theorem9_and_an_exact_pair(kappa):
    n, batch_size, num_steps, delta = 1_000, 50, 3, 1e-5
    q = batch_size / n
    orders = np.arange(2, 33)
    acc = cc.rdp_dp_accounting(kappa, n=n, batch_size=batch_size, num_steps=num_steps, renyi_orders=orders, **FIXED)
    upper = num_steps * np.array([_wbk_theorem9_rdp(q, kappa, int(a)) for a in orders])
    lower = num_steps * np.array([_pair_rdp(q, kappa, int(a)) for a in orders[PAIR_ORDERS]])
    assert np.all(acc.value <= upper * (1 + 1e-9))
    assert np.all(acc.value[PAIR_ORDERS] >= lower * (1 - 1e-9))
    # epsilon over the same integer orders and the same conversion
    eps_acc = cc.epsilon_dp_accounting(kappa, n=n, batch_size=batch_size, num_steps=num_steps, delta=delta,
                                       renyi_orders=orders.tolist(), **FIXED).value
    eps_wbk, _ = rdp_to_epsilon(orders, upper, delta=delta)
    assert eps_acc <= eps_wbk * (1 + 1e-12)
    # the j = 2 term dominates at high noise: the two agree closely there
    if kappa >= 4.0:
        assert acc.value[0] == pytest.approx(upper[0], rel=1e-3)


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(noise_multiplier=-1.0), "noise_multiplier"),
    (dict(noise_multiplier=float("nan")), "noise_multiplier"),
    (dict(batch_size=2_000), "batch_size"),
    (dict(n=float("inf")), "n must be finite"),
    (dict(num_steps=float("nan")), "num_steps must be finite"),
    (dict(delta=float("nan")), "delta"),
    (dict(delta=0.0), "delta"),
    (dict(sampler="shuffle"), "sampler"),
    (dict(sampler="without_replacement"), "sampler"),
    (dict(neighboring="add_remove"), "neighboring"),
    (dict(sampler="poisson", neighboring="replace_one"), "neighboring"),
])
def test_accountant_bad_input(kwargs, name):
    args = dict(noise_multiplier=2.0, n=1_000, batch_size=10, num_steps=5, delta=1e-5, **FIXED) | kwargs
    with pytest.raises(ValueError, match=name):
        cc.epsilon_dp_accounting(args.pop("noise_multiplier"), **args)


def test_inverse_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        cc.noise_multiplier_dp_accounting(n=1_000, batch_size=10, num_steps=5, epsilon=-1.0, delta=1e-5, **FIXED)
    with pytest.raises(ValueError, match="rtol"):
        cc.noise_multiplier_dp_accounting(n=1_000, batch_size=10, num_steps=5, epsilon=1.0, delta=1e-5, rtol=0.0,
                                          **FIXED)
