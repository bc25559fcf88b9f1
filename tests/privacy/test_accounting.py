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


def test_theorem_f12_with_its_proved_constant_is_the_closed_form():
    """The F.12 half of the lambda-CGD fixed-size row, against the theorem written out with K = 2."""
    strategy = correlated.LambdaCGD(0.5)
    sizes = accounting._sizes(50_000, 500, 5_000)
    kappa = accounting._f12_noise_multiplier(strategy, 1.0, 1e-5, sizes)
    # kappa^2 = 2 ((1 - lam^T)/(1 - lam))^2 (rT + sqrt(3 rT ln(2/d))) ln(2.5/d)
    rt = 0.01 * 5_000
    expected = math.sqrt(2 * (1 / 0.5) ** 2 * (rt + math.sqrt(3 * rt * math.log(2e5))) * math.log(2.5e5))
    assert kappa is not None and kappa.value == pytest.approx(expected, rel=1e-9)
    assert kappa.value == pytest.approx(192.11 / 2, rel=1e-4)  # half the stated-constant table entry (sqrt(8/2))
    back = accounting._f12_epsilon(strategy, float(kappa.value), sizes, 1e-5)
    assert back is not None and back.value == pytest.approx(1.0, rel=1e-12)
    # outside its conditions the theorem says nothing (and is never extrapolated)
    assert accounting._f12_noise_multiplier(strategy, 2.0, 1e-5, sizes) is None
    assert accounting._f12_epsilon(strategy, 10.0, sizes, 1e-5) is None
    assert accounting._f12_epsilon(strategy, 500.0, accounting._sizes(50_000, 500, 3_000), 1e-5) is None


AMPLIFIED_ROWS = [(noise, sampler, relation) for noise in ("lambda_cgd", "banded_inverse", "toeplitz", "blt")
                  for sampler, relation in (("fixed_size", "zero_out"), ("poisson", "add_remove"),
                                            ("poisson", "zero_out"))]
_OF_KIND = {"lambda_cgd": correlated.LambdaCGD(0.3), "banded_inverse": correlated.BandedInverse([1.0, -0.5]),
            "toeplitz": correlated.Toeplitz([1.0, 0.5, 0.25]),
            "blt": correlated.BufferedToeplitz([0.9, 0.5], [0.3, 0.1])}
TINY = dict(n=1_000, batch_size=50, num_steps=10, delta=1e-5)  # r = 0.05: one amplified evaluation takes seconds


@pytest.mark.parametrize(("noise", "sampler", "neighboring"), AMPLIFIED_ROWS)
def test_correlated_noise_under_iid_participation_is_on_the_list(noise, sampler, neighboring):
    row = accounting.accountant_for(_OF_KIND[noise], sampler=sampler, neighboring=neighboring)
    assert (row.noise, row.sampler, row.neighboring.value) == (noise, sampler, neighboring)
    assert row.guarantee is Guarantee.BOUND and "i.i.d." in row.conditions
    assert row.accountant == ("amplified_bound_or_theorem_f12" if (noise, sampler) == ("lambda_cgd", "fixed_size")
                              else "amplified_bound")


def _coarse():
    from privdyn.privacy.amplification import BoundSettings

    return BoundSettings(value_discretization_interval=accounting.AMPLIFIED_DISCRETIZATION)


@pytest.mark.parametrize(("strategy", "sampler", "neighboring"), [
    (correlated.Toeplitz([1.0, 0.5, 0.25]), "fixed_size", "zero_out"),
    (correlated.Toeplitz([1.0, 0.5, 0.25]), "poisson", "add_remove"),
    (correlated.LambdaCGD(0.3), "poisson", "zero_out"),
])
def test_dispatcher_returns_exactly_the_amplified_bound(strategy, sampler, neighboring):
    from privdyn.privacy.amplification import amplified_epsilon

    loss = accounting.dpsgd_epsilon(strategy, noise_multiplier=5.0, sampler=sampler, neighboring=neighboring,
                                    **TINY)
    oracle = amplified_epsilon(strategy, noise_multiplier=5.0, sampling_prob=0.05, num_steps=10, delta=1e-5,
                               sampler=sampler, settings=_coarse())
    assert loss.value == oracle.value and 0 < loss.value < math.inf
    assert (loss.sampler, loss.neighboring.value) == (sampler, neighboring)
    assert loss.guarantee is Guarantee.BOUND and loss.source.startswith(oracle.source)
    if neighboring == "zero_out" and sampler == "poisson":
        assert "same pair as add-remove" in loss.source
    assert accounting.dpsgd_epsilon(strategy, noise_multiplier=0.0, sampler=sampler, neighboring=neighboring,
                                    **TINY).value == math.inf


def test_lambda_cgd_fixed_size_reports_the_smaller_of_the_amplified_bound_and_theorem_f12():
    """Where F.12 applies (r T >= 3 ln(2/delta), epsilon <= 1) both bounds hold: the row gives the smaller."""
    from privdyn.privacy.amplification import amplified_epsilon

    strategy = correlated.LambdaCGD(0.5)
    sizes = dict(n=1_000, batch_size=100, num_steps=400)  # r T = 40 >= 3 ln(2e5) = 36.6
    kappa = 300.0
    f12 = accounting._f12_epsilon(strategy, kappa, accounting._sizes(**sizes), 1e-5)
    amplified = amplified_epsilon(strategy, noise_multiplier=kappa, sampling_prob=0.1, num_steps=400, delta=1e-5,
                                  sampler="fixed_size", settings=_coarse())
    loss = accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa, delta=1e-5, sampler="fixed_size",
                                    neighboring="zero_out", **sizes)
    assert f12 is not None and f12.value <= 1.0
    assert loss.value == min(f12.value, amplified.value)
    assert ("Theorem F.12" in loss.source) == (f12.value < amplified.value)
    assert amplified.value < f12.value  # the amplified bound is the tighter one here (docs/amplification.md)
    # beyond F.12's range (epsilon > 1) the amplified bound alone accounts the run: no refusal any more
    alone = accounting.dpsgd_epsilon(strategy, noise_multiplier=1.0, sampler="fixed_size", neighboring="zero_out",
                                     **TINY)
    assert alone.value > 1.0 and "Theorem F.12" not in alone.source


def test_amplified_calibration_is_on_the_safe_side_and_tight_to_rtol():
    strategy, rtol, target = correlated.Toeplitz([1.0, 0.5, 0.25]), 1e-2, 0.5
    common = dict(sampler="poisson", neighboring="add_remove", **TINY)
    kappa = accounting.dpsgd_noise_multiplier(strategy, epsilon=target, rtol=rtol, **common)
    assert kappa.guarantee is Guarantee.BOUND and kappa.quantity == "noise_multiplier"
    assert (kappa.sampler, kappa.neighboring.value) == ("poisson", "add_remove")
    assert accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa.value, **common).value <= target
    # the search evaluated a kappa at least value / (1 + rtol) that misses the target; epsilon decreases in kappa
    assert accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa.value / (1 + rtol), **common).value > target


def test_lambda_cgd_fixed_size_calibration_is_never_above_theorem_f12():
    strategy = correlated.LambdaCGD(0.5)
    sizes = dict(n=1_000, batch_size=100, num_steps=400, delta=1e-5, sampler="fixed_size", neighboring="zero_out")
    kappa = accounting.dpsgd_noise_multiplier(strategy, epsilon=1.0, rtol=1e-2, **sizes)
    f12 = accounting._f12_noise_multiplier(strategy, 1.0, 1e-5, accounting._sizes(1_000, 100, 400))
    assert f12 is not None and kappa.value <= f12.value
    assert accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa.value, **sizes).value <= 1.0


@pytest.mark.parametrize(("strategy", "sampler", "neighboring"), [
    (correlated.Independent(), "shuffle", "replace_one"),           # shuffling is not Poisson sampling
    (correlated.Independent(), "shuffle", "add_remove"),
    (correlated.Independent(), "poisson", "replace_one"),
    (correlated.Independent(), "fixed_size", "add_remove"),
    (correlated.LambdaCGD(0.5), "shuffle", "zero_out"),               # not i.i.d. participation
    (correlated.LambdaCGD(0.5), "fixed_size", "replace_one"),        # one relation is not another
    (correlated.LambdaCGD(0.5), "poisson", "replace_one"),
    (correlated.LambdaCGD(0.5), "fixed_size", "add_remove"),
    (correlated.BandedInverse([1.0, -0.5]), "fixed_size", "replace_one"),
    (correlated.BufferedToeplitz([0.9, 0.5], [0.1, 0.2]), "shuffle", "add_remove"),
    (correlated.Toeplitz([1.0, 0.5, 0.25]), "poisson", "replace_one"),
    (correlated.SquareRoot(), "fixed_size", "zero_out"),              # the square root stays refused
    (correlated.SquareRoot(), "poisson", "add_remove"),
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


@pytest.mark.parametrize("row", [
    pytest.param(r, marks=pytest.mark.slow) if (r.sampler, r.neighboring) == ("random_allocation", "zero_out") else r
    for r in accounting.ALLOW_LIST if r.noise == "independent"], ids=lambda r: r.describe())
def test_every_independent_row_calibrates_on_the_safe_side_and_is_monotone(row):
    strategy = correlated.Independent()
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
