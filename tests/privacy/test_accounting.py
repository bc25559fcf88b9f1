"""Tests of privdyn.privacy.accounting: the allow-list, its refusals, and each row against an independent oracle."""

from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting import pld, rdp

from privdyn.privacy import accounting, correlated
from privdyn.privacy.accounting import NotAccountableError
from privdyn.privacy.labels import Guarantee, NeighboringRelation

SIZES = dict(n=10_000, batch_size=100, num_steps=10_000)


def _oracle_poisson_pld(noise_multiplier, *, sampling_prob, num_steps, delta, relation):
    """dp-accounting's own PLD accountant, called as its users would."""
    accountant = pld.PLDAccountant(neighboring_relation=relation)
    event = dp_accounting.PoissonSampledDpEvent(sampling_prob, dp_accounting.GaussianDpEvent(noise_multiplier))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, num_steps))
    return accountant.get_epsilon(delta)


def _oracle_wor_rdp(noise_multiplier, *, n, batch_size, num_steps, delta):
    accountant = rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    event = dp_accounting.SampledWithoutReplacementDpEvent(n, batch_size,
                                                          dp_accounting.GaussianDpEvent(noise_multiplier / 2.0))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, num_steps))
    return accountant.get_epsilon(delta)


def test_the_sampler_decides_a_twentyfold_difference():
    """sigma = 1, q = 0.01, T = 10^4: Opacus users (Poisson, add-remove) expect 6.19; fixed-size replace-one is 118.7.

    dp-accounting's own accountants, called directly, are the oracle.
    """
    strategy = correlated.Independent()
    poisson = accounting.dpsgd_epsilon(strategy, noise_multiplier=1.0, delta=1e-5, sampler="poisson",
                                       neighboring="add_remove", **SIZES)
    fixed = accounting.dpsgd_epsilon(strategy, noise_multiplier=1.0, delta=1e-5, sampler="fixed_size",
                                     neighboring="replace_one", **SIZES)
    oracle = _oracle_poisson_pld(1.0, sampling_prob=0.01, num_steps=10_000, delta=1e-5,
                                 relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    assert poisson.value == pytest.approx(oracle, rel=1e-9) and abs(poisson.value - 6.19) < 0.01
    # dp-accounting's own conversion is looser than privdyn's rounding-aware Balle et al. conversion at most by
    # float rounding; privdyn must not be below it by more than that.
    assert fixed.value == pytest.approx(_oracle_wor_rdp(1.0, delta=1e-5, **SIZES), rel=1e-6)
    assert abs(fixed.value - 118.7) < 0.1
    assert (poisson.sampler, poisson.neighboring) == ("poisson", NeighboringRelation.ADD_REMOVE)
    assert (fixed.sampler, fixed.neighboring) == ("fixed_size", NeighboringRelation.REPLACE_ONE)
    assert poisson.guarantee is Guarantee.BOUND and fixed.guarantee is Guarantee.BOUND


def test_fixed_size_zero_out_is_theorem_f8_at_lambda_zero():
    value = accounting.dpsgd_epsilon(correlated.LambdaCGD(0.0), noise_multiplier=1.2, delta=1e-6, sampler="fixed_size",
                                     neighboring="zero_out", n=50_000, batch_size=500, num_steps=3_000)
    oracle = _oracle_poisson_pld(1.2, sampling_prob=0.01, num_steps=3_000, delta=1e-6,
                                 relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
    assert value.value == pytest.approx(oracle, rel=1e-9)
    assert "Theorem F.8" in value.source and value.neighboring is NeighboringRelation.ZERO_OUT


def test_lambda_cgd_by_theorem_f12_with_its_proved_constant():
    strategy = correlated.LambdaCGD(0.5)
    sizes = dict(n=50_000, batch_size=500, num_steps=5_000)
    kappa = accounting.dpsgd_noise_multiplier(strategy, epsilon=1.0, delta=1e-5, sampler="fixed_size",
                                              neighboring="zero_out", **sizes)
    # Theorem F.12 written out with K = 2: kappa^2 = 2 ((1 - lam^T)/(1 - lam))^2 (rT + sqrt(3 rT ln(2/d))) ln(2.5/d)
    rt = 0.01 * 5_000
    expected = math.sqrt(2 * (1 / 0.5) ** 2 * (rt + math.sqrt(3 * rt * math.log(2e5))) * math.log(2.5e5))
    assert kappa.value == pytest.approx(expected, rel=1e-9)
    assert kappa.value == pytest.approx(192.11 / 2, rel=1e-4)  # half the stated-constant table entry (sqrt(8/2))
    assert kappa.sampler == "fixed_size" and kappa.neighboring is NeighboringRelation.ZERO_OUT
    back = accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa.value, delta=1e-5, sampler="fixed_size",
                                    neighboring="zero_out", **sizes)
    assert back.value == pytest.approx(1.0, rel=1e-12)
    half = accounting.dpsgd_epsilon(strategy, noise_multiplier=2 * kappa.value, delta=1e-5, sampler="fixed_size",
                                    neighboring="zero_out", **sizes)
    assert half.value == pytest.approx(0.5, rel=1e-12)


def test_theorem_f12_outside_its_range_is_refused_not_extrapolated():
    strategy = correlated.LambdaCGD(0.5)
    sizes = dict(n=50_000, batch_size=500, num_steps=5_000)
    with pytest.raises(NotAccountableError, match="epsilon <= 1"):
        accounting.dpsgd_noise_multiplier(strategy, epsilon=2.0, delta=1e-5, sampler="fixed_size",
                                          neighboring="zero_out", **sizes)
    with pytest.raises(NotAccountableError, match="epsilon <= 1"):
        accounting.dpsgd_epsilon(strategy, noise_multiplier=10.0, delta=1e-5, sampler="fixed_size",
                                 neighboring="zero_out", **sizes)
    with pytest.raises(NotAccountableError, match=r"r\*T >= 3\*ln\(2/delta\)"):
        accounting.dpsgd_epsilon(strategy, noise_multiplier=500.0, delta=1e-5, sampler="fixed_size",
                                 neighboring="zero_out", n=50_000, batch_size=500, num_steps=3_000)


@pytest.mark.parametrize(("strategy", "sampler", "neighboring"), [
    (correlated.Independent(), "shuffle", "replace_one"),           # shuffling is not Poisson sampling
    (correlated.Independent(), "shuffle", "add_remove"),
    (correlated.Independent(), "poisson", "replace_one"),
    (correlated.Independent(), "fixed_size", "add_remove"),
    (correlated.LambdaCGD(0.5), "poisson", "add_remove"),             # lambda > 0 under Poisson sampling
    (correlated.LambdaCGD(0.5), "poisson", "zero_out"),
    (correlated.LambdaCGD(0.5), "fixed_size", "replace_one"),        # one relation is not another
    (correlated.BandedInverse([1.0, -0.5]), "fixed_size", "zero_out"),  # same matrix, not lambda-CGD's theorem
    (correlated.BufferedToeplitz([0.9, 0.5], [0.1, 0.2]), "fixed_size", "zero_out"),
    (correlated.Toeplitz([1.0, 0.5, 0.25]), "poisson", "add_remove"),
    (correlated.SquareRoot(), "fixed_size", "zero_out"),
])
def test_everything_off_the_list_is_refused(strategy, sampler, neighboring):
    with pytest.raises(NotAccountableError, match="cannot account") as caught:
        accounting.dpsgd_epsilon(strategy, noise_multiplier=5.0, delta=1e-5, sampler=sampler,
                                 neighboring=neighboring, **SIZES)
    assert sampler in str(caught.value) and neighboring in str(caught.value)
    with pytest.raises(NotAccountableError):
        accounting.dpsgd_noise_multiplier(strategy, epsilon=1.0, delta=1e-5, sampler=sampler,
                                          neighboring=neighboring, **SIZES)


def test_kind_is_exact_type_not_inheritance():
    class MyLambda(correlated.LambdaCGD):
        pass

    assert accounting.noise_kind(correlated.LambdaCGD(0.0)) == "independent"
    assert accounting.noise_kind(correlated.LambdaCGD(0.3)) == "lambda_cgd"
    assert accounting.noise_kind(correlated.BandedInverse([1.0, -0.3])) == "banded_inverse"
    with pytest.raises(TypeError, match="strategy"):
        accounting.noise_kind(MyLambda(0.3))
    assert set(accounting.NOISE_KINDS) == {s.name for s in (
        correlated.Independent(), correlated.LambdaCGD(0.1), correlated.BandedInverse([1.0]),
        correlated.Toeplitz([1.0]), correlated.BufferedToeplitz([0.5], [0.5]), correlated.SquareRoot())}


@pytest.mark.parametrize("row", accounting.ALLOW_LIST, ids=lambda r: r.describe())
def test_every_row_calibrates_on_the_safe_side_and_is_monotone(row):
    strategy = correlated.Independent() if row.noise == "independent" else correlated.LambdaCGD(0.3)
    common = dict(delta=1e-5, sampler=row.sampler, neighboring=row.neighboring, n=20_000, batch_size=400,
                  num_steps=2_000)
    assert accounting.accountant_for(strategy, sampler=row.sampler, neighboring=row.neighboring) is row
    target = 0.8
    kappa = accounting.dpsgd_noise_multiplier(strategy, epsilon=target, **common)
    assert kappa.guarantee is row.guarantee and kappa.quantity == "noise_multiplier"
    assert (kappa.sampler, kappa.neighboring) == (row.sampler, row.neighboring)
    values = [accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa.value * f, **common).value
              for f in (1.0, 1.5, 3.0)]
    assert values[0] <= target and values[0] > 0.95 * target
    assert values[0] > values[1] > values[2]  # epsilon decreases as the noise grows
    more_steps = dict(common, num_steps=4_000)
    assert accounting.dpsgd_epsilon(strategy, noise_multiplier=1.5 * kappa.value, **more_steps).value > values[1]
    assert accounting.dpsgd_epsilon(strategy, noise_multiplier=0.0, **common).value == math.inf


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(sampler="without_replacement"), "sampler"),
    (dict(neighboring="replace-one"), "neighboring"),
    (dict(noise_multiplier=-1.0), "noise_multiplier"),
    (dict(noise_multiplier="2"), "noise_multiplier"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(batch_size=20_000), "batch_size"),
    (dict(n=0), "n"),
    (dict(num_steps=1.5), "num_steps"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = dict(noise_multiplier=2.0, delta=1e-5, sampler="poisson", neighboring="add_remove", **SIZES) | kwargs
    with pytest.raises((ValueError, TypeError), match=name):
        accounting.dpsgd_epsilon(correlated.Independent(), **args)


def test_calibration_bad_input():
    args = dict(delta=1e-5, sampler="poisson", neighboring="add_remove", **SIZES)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            accounting.dpsgd_noise_multiplier(correlated.Independent(), epsilon=bad, **args)
    with pytest.raises(ValueError, match="rtol"):
        accounting.dpsgd_noise_multiplier(correlated.Independent(), epsilon=1.0, rtol=2.0, **args)
