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
