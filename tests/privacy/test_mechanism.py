"""Mechanism records: dp-accounting events that reproduce privdyn's epsilon, refusals, calibration, composition."""

import math

import pytest

dp_accounting = pytest.importorskip("dp_accounting")

from privdyn.privacy import conversions, correlated  # noqa: E402
from privdyn.privacy.accounting import NotAccountableError  # noqa: E402
from privdyn.privacy.mechanism import DPSGDMechanism, GaussianRelease, NotExpressibleError  # noqa: E402
from privdyn.privacy.statement import PrivacyStatement  # noqa: E402


def _pld_epsilon(mechanism, delta):
    accountant = dp_accounting.pld.PLDAccountant(mechanism.dp_neighboring)
    accountant.compose(mechanism.dp_event())
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize(("kappa", "n", "batch_size", "steps", "relation"), [
    (1.0, 10_000, 100, 1_000, "add_remove"),
    (0.8, 60_000, 256, 2_000, "add_remove"),
    (2.0, 1_000, 250, 40, "add_remove"),
])
def test_poisson_event_gives_privdyns_epsilon_to_1e9(kappa, n, batch_size, steps, relation):
    mechanism = DPSGDMechanism(noise_multiplier=kappa, n=n, batch_size=batch_size, num_steps=steps,
                               sampler="poisson", neighboring=relation)
    ours = float(mechanism.privacy_loss(1e-5).value)
    assert _pld_epsilon(mechanism, 1e-5) == pytest.approx(ours, rel=1e-9)


def test_fixed_size_events_give_privdyns_epsilon():
    zero_out = DPSGDMechanism(noise_multiplier=1.2, n=5_000, batch_size=50, num_steps=500, sampler="fixed_size",
                              neighboring="zero_out")
    assert _pld_epsilon(zero_out, 1e-5) == pytest.approx(float(zero_out.privacy_loss(1e-5).value), rel=1e-9)
    replace = DPSGDMechanism(noise_multiplier=1.2, n=5_000, batch_size=50, num_steps=500, sampler="fixed_size",
                             neighboring="replace_one")
    accountant = dp_accounting.rdp.RdpAccountant(neighboring_relation=replace.dp_neighboring)
    accountant.compose(replace.dp_event())
    assert accountant.get_epsilon(1e-5) == pytest.approx(float(replace.privacy_loss(1e-5).value), rel=1e-6)
    assert replace.membership() is None  # an RDP event: no PLD behind a membership rate


def test_cyclic_poisson_event_gives_privdyns_epsilon():
    mechanism = DPSGDMechanism(noise_multiplier=3.0, n=10_000, batch_size=100, num_steps=300,
                               sampler="cyclic_poisson", neighboring="add_remove",
                               strategy=correlated.Toeplitz([1.0, -0.4, 0.1]))
    assert _pld_epsilon(mechanism, 1e-6) == pytest.approx(float(mechanism.privacy_loss(1e-6).value), rel=1e-9)


@pytest.mark.parametrize(("strategy", "sampler", "reason"), [
    (correlated.LambdaCGD(0.5), "poisson", "correlated_noise"),
    (correlated.BufferedToeplitz([0.9], [0.1]), "random_allocation", "correlated_noise"),
    (correlated.Independent(), "random_allocation", "random_allocation"),
])
def test_what_dp_accounting_cannot_express_is_refused_with_its_reason(strategy, sampler, reason):
    mechanism = DPSGDMechanism(noise_multiplier=2.0, n=1_000, batch_size=10, num_steps=20, sampler=sampler,
                               neighboring="add_remove", strategy=strategy)
    with pytest.raises(NotExpressibleError) as caught:
        mechanism.dp_event()
    assert caught.value.reason == reason
    assert mechanism.membership() is None


def test_construction_refuses_what_privdyn_cannot_account_and_bad_input():
    with pytest.raises(NotAccountableError):
        DPSGDMechanism(noise_multiplier=1.0, n=100, batch_size=10, num_steps=10, sampler="shuffle",
                       neighboring="add_remove")
    with pytest.raises(NotAccountableError):
        DPSGDMechanism(noise_multiplier=1.0, n=100, batch_size=10, num_steps=10, sampler="poisson",
                       neighboring="replace_one", strategy=correlated.LambdaCGD(0.3))
    with pytest.raises(ValueError, match="batch_size"):
        DPSGDMechanism(noise_multiplier=1.0, n=100, batch_size=101, num_steps=10, sampler="poisson",
                       neighboring="add_remove")
    with pytest.raises(ValueError, match="noise_multiplier"):
        DPSGDMechanism(noise_multiplier=-1.0, n=100, batch_size=10, num_steps=10, sampler="poisson",
                       neighboring="add_remove")
    with pytest.raises(ValueError, match="noise_std"):
        GaussianRelease(sensitivity=1.0, noise_std=0.0, neighboring="replace_one")


def test_calibrate_returns_a_record_on_the_safe_side():
    base = DPSGDMechanism(noise_multiplier=1.0, n=10_000, batch_size=100, num_steps=500, sampler="poisson",
                          neighboring="add_remove")
    calibrated = base.calibrate(2.0, 1e-5)
    assert calibrated.n == base.n and calibrated.noise_multiplier != base.noise_multiplier
    assert 2.0 * (1 - 1e-3) <= float(calibrated.privacy_loss(1e-5).value) <= 2.0
    release = GaussianRelease(sensitivity=2.0, noise_std=1.0, neighboring="replace_one").calibrate(1.0, 1e-5)
    assert 1.0 - 1e-9 <= float(release.privacy_loss(1e-5).value) <= 1.0


def test_gaussian_releases_compose_in_dp_accounting_as_in_privdyn():
    """privdyn composes Gaussian releases in zCDP (the planning share with training); dp-accounting's RDP
    accountant on the same events, on a fine grid of orders, gives the same epsilon (its default grid costs 5e-4
    relative here)."""
    releases = [GaussianRelease(sensitivity=1.0, noise_std=s, neighboring="replace_one") for s in (3.0, 5.0, 8.0)]
    ours = float(conversions.zcdp_to_epsilon(sum(r.zcdp for r in releases), delta=1e-6, method="optimal"))
    accountant = dp_accounting.rdp.RdpAccountant(orders=[1.0 + k / 200 for k in range(1, 4000)])
    for release in releases:
        accountant.compose(release.dp_event())
    assert accountant.get_epsilon(1e-6) == pytest.approx(ours, rel=1e-5)
    assert accountant.get_epsilon(1e-6) >= ours * (1 - 1e-9)  # a grid never beats the continuous optimum


def test_a_run_and_a_release_compose_in_dp_accounting():
    run = DPSGDMechanism(noise_multiplier=1.1, n=60_000, batch_size=256, num_steps=200, sampler="poisson",
                         neighboring="add_remove")
    release = GaussianRelease(sensitivity=1.0, noise_std=8.0, neighboring="add_remove")
    accountant = dp_accounting.pld.PLDAccountant(run.dp_neighboring)
    accountant.compose(run.dp_event()).compose(release.dp_event())
    both = accountant.get_epsilon(1e-5)
    assert both > float(run.privacy_loss(1e-5).value) and math.isfinite(both)


def test_statement_reads_like_a_mapping_and_states_membership():
    statement = GaussianRelease(sensitivity=1.0, noise_std=2.0, neighboring="replace_one").statement(1e-5)
    assert isinstance(statement, PrivacyStatement)
    assert statement["epsilon"] == statement.epsilon and "membership" in statement
    assert statement.membership["fpr"] == [0.001, 0.01, 0.1]
    assert "Membership inference" in statement.text()


def test_composed_gaussian_releases_are_one_gaussian_of_the_summed_mu():
    from privdyn.privacy.mechanism import GaussianReleases

    parts = GaussianReleases(releases=[GaussianRelease(sensitivity=d, noise_std=s, neighboring="replace_one",
                                                       statistic=name)
                                       for d, s, name in ((1.0, 4.0, "sum x x^T"), (2.0, 5.0, "sum y x"),
                                                          (1.0, 3.0, "sum y^2"))])
    mu = math.sqrt(1 / 16 + 4 / 25 + 1 / 9)
    assert parts.mu == pytest.approx(mu, rel=1e-15) and parts.zcdp == pytest.approx(mu**2 / 2, rel=1e-15)
    one = GaussianRelease(sensitivity=mu, noise_std=1.0, neighboring="replace_one")
    assert float(parts.privacy_loss(1e-6).value) == float(one.privacy_loss(1e-6).value)
    accountant = dp_accounting.pld.PLDAccountant(parts.dp_neighboring)
    accountant.compose(parts.dp_event())  # dp-accounting's pessimistic PLD of the three: just above the exact value
    assert float(parts.privacy_loss(1e-6).value) <= accountant.get_epsilon(1e-6) <= float(
        parts.privacy_loss(1e-6).value) * (1 + 1e-3)
    calibrated = parts.calibrate(1.0, 1e-6)
    assert 1.0 - 1e-9 <= float(calibrated.privacy_loss(1e-6).value) <= 1.0
    ratios = {c.noise_std / p.noise_std for c, p in zip(calibrated.releases, parts.releases, strict=True)}
    assert max(ratios) == pytest.approx(min(ratios), rel=1e-12)  # one factor for all
    with pytest.raises(ValueError, match="neighbouring relation"):
        GaussianReleases(releases=[GaussianRelease(sensitivity=1.0, noise_std=1.0, neighboring="replace_one"),
                                   GaussianRelease(sensitivity=1.0, noise_std=1.0, neighboring="add_remove")])


def test_noisy_gd_record_uses_the_smallest_of_three_bounds_and_is_the_estimators_accountant():
    from privdyn.privacy import langevin
    from privdyn.privacy.conversions import zcdp_to_epsilon
    from privdyn.privacy.correlated_allocation import gaussian_epsilon
    from privdyn.privacy.mechanism import NoisyGDMechanism
    from privdyn.sklearn._logistic import account

    setting = dict(n=5_000, num_steps=1_000, step_size=0.99 / 0.26, noise_scale=0.02, strong_convexity=0.01,
                   smoothness=0.26, sensitivity=2.0)
    record = NoisyGDMechanism(**setting)
    last = float(langevin.dynamics_zcdp(**setting).value)  # Corollary 1's slope
    composed = float(langevin.composition_rdp(3.0, num_steps=1_000, step_size=0.99 / 0.26, noise_scale=0.02,
                                              sensitivity=2.0, n=5_000).value) / 3.0  # Theorem 1: linear in the order
    # shifted interpolation, written out: c = 1 - eta lambda here, shift eta S/n, noise std sqrt(2 eta) sigma
    eta, c = 0.99 / 0.26, 1.0 - 0.99 / 0.26 * 0.01
    factor = (1 + c) * (1 - c**1000) / ((1 - c) * (1 + c**1000))
    mu = eta * 2.0 / 5_000 / (math.sqrt(2 * eta) * 0.02) * math.sqrt(factor)
    assert record.gdp_mu == pytest.approx(mu, rel=1e-12)
    bounds = record.bounds()
    assert bounds == pytest.approx({"shifted_interpolation": mu**2 / 2, "corollary_1": last, "composition": composed},
                                   rel=1e-12)
    epsilons = record.epsilons(1e-6)
    assert epsilons["shifted_interpolation"] == pytest.approx(gaussian_epsilon(mu, 1e-6), rel=1e-9)
    assert epsilons["corollary_1"] == pytest.approx(float(zcdp_to_epsilon(last, delta=1e-6, method="optimal")),
                                                    rel=1e-12)
    assert epsilons["composition"] == pytest.approx(gaussian_epsilon(math.sqrt(2 * composed), 1e-6), rel=1e-9)
    assert record.bound == "shifted_interpolation" and record.zcdp == bounds["shifted_interpolation"]
    assert float(record.privacy_loss(1e-6).value) == min(epsilons.values())
    assert account(**setting, delta=1e-6)["epsilon"] == float(record.privacy_loss(1e-6).value)
    # dp-accounting on the zCDP event (mu^2/2) gives a larger epsilon than the Gaussian curve: both hold
    accountant = dp_accounting.rdp.RdpAccountant(orders=[1.0 + k / 100 for k in range(1, 20_000)])
    accountant.compose(record.dp_event())
    assert accountant.get_epsilon(1e-6) >= float(record.privacy_loss(1e-6).value)
    calibrated = record.calibrate(1.0, 1e-6)
    assert 1.0 - 1e-9 <= float(calibrated.privacy_loss(1e-6).value) <= 1.0
    with pytest.raises(ValueError):
        NoisyGDMechanism(**{**setting, "step_size": 10.0})  # eta >= 1/beta: Corollary 1 does not apply


def test_zcdp_membership_is_never_below_the_gaussian_law_of_the_same_zcdp():
    """A zCDP bound allows more than the Gaussian mechanism of the same zCDP (which is sqrt(2 rho)-GDP)."""
    from privdyn.privacy.mechanism import OnePassDPGDMechanism
    from privdyn.privacy.membership import gaussian_tpr

    record = OnePassDPGDMechanism(step_sizes=[0.5] * 100, noise_multipliers=[0.05] * 100)
    table = record.membership()
    for fpr, tpr in zip(table["fpr"], table["tpr"], strict=True):
        assert gaussian_tpr(record.rho, fpr) - 1e-9 <= tpr <= 1.0


def test_one_pass_dpgd_record_calibrates_by_proposition_41():
    from privdyn.privacy.iteration import privacy_level
    from privdyn.privacy.mechanism import OnePassDPGDMechanism

    steps = [1.0 / (k + 10) for k in range(1, 501)]
    record = OnePassDPGDMechanism(step_sizes=steps, noise_multipliers=[1.0] * 500).calibrate(2.0, 1e-5)
    assert record.rho == pytest.approx(float(privacy_level(steps, record.noise_multipliers).value), rel=1e-12)
    # both conversions must hold: dp-accounting's order grid binds by a few parts in 1e6 (conversions.zcdp_for_epsilon)
    assert 2.0 * (1 - 1e-5) <= float(record.privacy_loss(1e-5).value) <= 2.0
    assert record.dp_event().rho == pytest.approx(record.zcdp, rel=1e-15) and record.dp_event().xi == 0.0
