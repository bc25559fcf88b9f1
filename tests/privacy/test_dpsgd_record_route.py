"""DP-SGD is accounted and calibrated in one place, the DPSGDMechanism record: each front door's route through the
record gives exactly (the same floats) what the accountant that the allow-list row wraps gives on loose arguments."""

import pytest

pytest.importorskip("dp_accounting")

from privdyn.privacy import accounting, correlated, correlated_calibration  # noqa: E402
from privdyn.privacy.accounting import NotAccountableError  # noqa: E402
from privdyn.privacy.mechanism import DPSGDMechanism  # noqa: E402

DELTA = 1e-5

# (sampler, neighboring, n, batch_size, num_steps, kappa, epsilon): rows whose accountant is dp-accounting's
DP_ACCOUNTING_ROWS = [
    ("poisson", "add_remove", 1_000, 50, 60, 1.3, 2.0),
    ("poisson", "add_remove", 2_000, 40, 80, 0.9, 1.0),
    ("fixed_size", "replace_one", 1_000, 50, 60, 1.3, 2.0),
    ("fixed_size", "zero_out", 1_000, 40, 50, 1.1, 3.0),
]


def _record(sampler, neighboring, n, batch_size, num_steps, kappa, strategy=None):
    return DPSGDMechanism(noise_multiplier=kappa, n=n, batch_size=batch_size, num_steps=num_steps, sampler=sampler,
                          neighboring=neighboring, strategy=strategy or correlated.Independent())


@pytest.mark.parametrize(("sampler", "neighboring", "n", "batch_size", "num_steps", "kappa", "epsilon"),
                         DP_ACCOUNTING_ROWS)
def test_record_route_equals_dp_accounting_route_exactly(sampler, neighboring, n, batch_size, num_steps, kappa,
                                                         epsilon):
    sizes = dict(n=n, batch_size=batch_size, num_steps=num_steps, sampler=sampler, neighboring=neighboring)
    record = _record(sampler, neighboring, n, batch_size, num_steps, kappa)
    old_eps = correlated_calibration.epsilon_dp_accounting(kappa, delta=DELTA, **sizes)
    assert float(record.privacy_loss(DELTA).value) == float(old_eps.value)
    assert record.privacy_loss(DELTA).source == old_eps.source
    old_kappa = correlated_calibration.noise_multiplier_dp_accounting(epsilon=epsilon, delta=DELTA, rtol=1e-3,
                                                                     **sizes)
    assert float(record.calibration(epsilon, DELTA, rtol=1e-3).value) == float(old_kappa.value)
    assert record.calibrate(epsilon, DELTA, rtol=1e-3).noise_multiplier == float(old_kappa.value)
    # the public conveniences build the same record
    convenience = accounting.dpsgd_epsilon(correlated.Independent(), noise_multiplier=kappa, delta=DELTA, **sizes)
    assert float(convenience.value) == float(old_eps.value)
    assert float(accounting.dpsgd_noise_multiplier(correlated.Independent(), epsilon=epsilon, delta=DELTA,
                                                   rtol=1e-3, **sizes).value) == float(old_kappa.value)


def test_random_allocation_and_cyclic_poisson_records_equal_their_accountants():
    from privdyn.privacy import cyclic_poisson, random_allocation

    record = _record("random_allocation", "add_remove", 400, 40, 30, 1.5)
    old = random_allocation.epsilon(1.5, steps_per_epoch=10, num_epochs=3, delta=DELTA, neighboring="add_remove")
    assert float(record.privacy_loss(DELTA).value) == float(old.value)
    toeplitz = correlated.Toeplitz([1.0, -0.4])
    record = _record("cyclic_poisson", "zero_out", 1_000, 50, 60, 2.0, toeplitz)
    q = cyclic_poisson.sampling_prob(n=1_000, batch_size=50, num_partitions=2)
    old = cyclic_poisson.epsilon(toeplitz, 2.0, sampling_prob=q, num_steps=60, delta=DELTA, num_partitions=2,
                                 neighboring="zero_out")
    assert float(record.privacy_loss(DELTA).value) == float(old.value)


def test_accountant_for_takes_a_record_or_a_strategy_with_its_sampler_and_relation():
    record = _record("fixed_size", "zero_out", 100, 10, 5, 1.0, correlated.LambdaCGD(0.5))
    row = accounting.accountant_for(record)
    assert row is accounting.accountant_for(correlated.LambdaCGD(0.5), sampler="fixed_size", neighboring="zero_out")
    assert row is record.row and row.accountant == "amplified_bound_or_theorem_f12"
    with pytest.raises(TypeError, match="carries its own"):
        accounting.accountant_for(record, sampler="poisson")
    with pytest.raises(TypeError, match="needs sampler and neighboring"):
        accounting.accountant_for(correlated.Independent(), sampler="poisson")


def test_refusals_are_unchanged():
    with pytest.raises(NotAccountableError) as plain:
        _record("shuffle", "add_remove", 1_000, 50, 60, 1.3)
    assert plain.value.reason == "shuffled_epochs"
    with pytest.raises(NotAccountableError) as caught:  # the convenience adds the shuffling evidence
        accounting.dpsgd_epsilon(correlated.Independent(), noise_multiplier=1.3, n=1_000, batch_size=50,
                                 num_steps=60, delta=DELTA, sampler="shuffle", neighboring="add_remove")
    assert caught.value.reason == "shuffled_epochs"
    assert str(caught.value).startswith(str(plain.value)) and len(str(caught.value)) > len(str(plain.value))
    with pytest.raises(NotAccountableError) as caught:  # a refusal comes before any size check
        _record("poisson", "replace_one", 10, 50, 0, 1.0, correlated.LambdaCGD(0.3))
    assert caught.value.reason == "correlated_replace_one"


def test_planner_calibrates_and_states_through_the_record():
    import privdyn.plan

    plan = privdyn.plan.dpsgd(n=1_000, batch_size=50, num_steps=60, epsilon=2.0, delta=DELTA, sampler="poisson",
                              neighboring="add_remove", strategies=["independent"], rtol=1e-3)
    record = _record("poisson", "add_remove", 1_000, 50, 60, 0.0)
    kappa = float(record.calibration(2.0, DELTA, rtol=1e-3).value)
    assert plan.hyperparameters["noise_multiplier"] == kappa
    assert plan.privacy.epsilon == float(record.calibrate(2.0, DELTA, rtol=1e-3).privacy_loss(DELTA).value)


def test_kan_experiment_kappas_are_the_records_calibrations():
    from privdyn.experiments.kan_training import common

    old = correlated_calibration.noise_multiplier_dp_accounting(n=1_000, batch_size=50, num_steps=60, epsilon=2.0,
                                                               delta=DELTA, sampler="fixed_size",
                                                               neighboring="replace_one")
    assert common._dp_accounting_kappa(1_000, 50, 60, 2.0, DELTA) == float(old.value)


def test_audit_rows_report_the_records_epsilon():
    from privdyn.audit import mechanisms

    row = mechanisms.mechanism("dpsgd-poisson")
    record = row.record()
    assert isinstance(record, DPSGDMechanism) and record.sampler == row.sampler
    assert float(row.reported().value) == float(record.privacy_loss(row.delta).value)
