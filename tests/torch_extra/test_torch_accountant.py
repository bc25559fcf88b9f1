"""The torch run's accountant: privdyn's allow-list, equal to the NumPy accountants, refusals before training."""

import dataclasses
import functools

import numpy as np
import pytest

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from privdyn.privacy import correlated as cn  # noqa: E402
from privdyn.privacy import correlated_calibration as cc  # noqa: E402
from privdyn.privacy.accounting import NotAccountableError  # noqa: E402
from privdyn.torch import BatchSampler, DPSGDAccountant, PrivateOptimizer  # noqa: E402

N, BATCH, STEPS, DELTA = 2000, 500, 150, 1e-5
LOSS = functools.partial(F.cross_entropy, reduction="none")


def _batches(sampler="fixed_size", neighboring="zero_out", **kwargs):
    """The run's batch sampler: the participation the accountant reads (N examples, batches of BATCH)."""
    kwargs.setdefault("num_steps", STEPS)
    return BatchSampler(N, BATCH, sampler=sampler, neighboring=neighboring, generator=np.random.default_rng(0),
                        **kwargs)


def _run(strategy, kappa, *, sampler="fixed_size", neighboring="zero_out", steps=STEPS, delta=None):
    torch.manual_seed(0)
    model = nn.Linear(4, 2).double()
    x = torch.randn(N, 4, dtype=torch.float64)
    y = (x[:, 0] > 0).long()
    batches = BatchSampler(N, BATCH, sampler=sampler, neighboring=neighboring, num_steps=steps,
                           generator=np.random.default_rng(0))
    private = PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, clip=1.0,
                               noise_multiplier=kappa, strategy=strategy, noise_source=cn.step_normals(0, "acc"),
                               num_steps=steps, batch_sampler=batches, delta=delta, per_example="vmap")
    for index in batches:
        private.step(x[index], y[index])
    return private


def test_lambda_cgd_epsilon_is_the_smaller_of_the_amplified_bound_and_theorem_f12():
    """Fixed-size batches, zero-out: the run's epsilon is the NumPy dispatcher's, the smaller of the two bounds."""
    from privdyn.privacy import accounting

    kappa = 200.0
    private = _run(cn.LambdaCGD(0.6), kappa)
    loss = private.privacy_spent(DELTA)
    assert loss.guarantee == "bound" and loss.neighboring == "zero_out" and loss.sampler == "fixed_size"
    expected = accounting.dpsgd_epsilon(cn.LambdaCGD(0.6), noise_multiplier=kappa, n=N, batch_size=BATCH,
                                        num_steps=STEPS, delta=DELTA, sampler="fixed_size", neighboring="zero_out")
    assert float(loss) == float(expected)
    # Theorem F.12 (constant 2) applies here (r T = 37.5 >= 3 ln(2 / delta)): the reported epsilon is at most its value
    f12_at_one = cc.noise_multiplier_theorem_f12(0.6, n=N, batch_size=BATCH, num_steps=STEPS, epsilon=1.0,
                                                 delta=DELTA, constant=2.0)
    assert float(loss) <= float(f12_at_one) / kappa * (1 + 1e-12)


def test_independent_epsilon_equals_the_numpy_accountant():
    private = _run(cn.Independent(), 1.2, neighboring="replace_one")
    expected = cc.epsilon_dp_accounting(1.2, n=N, batch_size=BATCH, num_steps=STEPS, delta=DELTA,
                                        sampler="fixed_size", neighboring="replace_one")
    loss = private.privacy_spent(DELTA)
    assert float(loss) == pytest.approx(float(expected), rel=1e-12)
    assert loss.neighboring == "replace_one" and loss.guarantee == expected.guarantee


def test_mid_run_epsilon_accounts_the_steps_taken():
    """r t = 1.25 < 3 ln(2 / delta) after 5 steps: Theorem F.12 says nothing, the amplified bound accounts them."""
    accountant = DPSGDAccountant(cn.LambdaCGD(0.6), _batches(), noise_multiplier=200.0)
    accountant.step(5)
    loss = accountant.privacy_spent(DELTA)
    assert float(loss) == float(accountant.epsilon(5, DELTA)) and "Theorem F.8 pair" in loss.source
    assert 0.0 < float(loss) < float(accountant.epsilon(STEPS, DELTA))


@pytest.mark.parametrize("strategy, sampler, neighboring", [
    (cn.LambdaCGD(0.5), "poisson", "replace_one"),
    (cn.BufferedToeplitz([0.9], [0.1]), "fixed_size", "replace_one"),
    (cn.BandedInverse([1.0, -0.5, 0.1]), "shuffle", "zero_out"),
    (cn.SquareRoot(), "fixed_size", "zero_out"),  # the square root stays refused under every sampler
    (cn.SquareRoot(), "poisson", "add_remove"),
    (cn.Toeplitz([1.0, 0.5]), "fixed_size", "add_remove"),
    (cn.Independent(), "shuffle", "add_remove"),
    (cn.LambdaCGD(0.5), "fixed_size", "replace_one"),
    (cn.BufferedToeplitz([0.9], [0.2]), "cyclic_poisson", "add_remove"),  # a dense encoder: Theorem 4 needs bands
])
def test_unaccountable_runs_are_refused_before_training(strategy, sampler, neighboring):
    model = nn.Linear(4, 2).double()
    before = model.weight.detach().clone()
    with pytest.raises(NotAccountableError, match="cannot account"):
        PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, clip=1.0, noise_multiplier=1.0,
                         strategy=strategy, noise_source=cn.step_normals(0, "r"), num_steps=STEPS,
                         batch_sampler=_batches(sampler, neighboring, strategy=strategy), per_example="vmap")
    assert torch.equal(model.weight, before)


def test_a_cyclic_poisson_run_is_accounted_by_theorem_4():
    """A Toeplitz-encoder run on the cyclic-Poisson batch sampler: the optimizer's epsilon is the allow-list's."""
    strategy = cn.Toeplitz([1.0, 0.5, 0.25])
    batch = N // 3 // 2
    torch.manual_seed(0)
    model = nn.Linear(4, 2).double()
    x = torch.randn(N, 4, dtype=torch.float64)
    y = (x[:, 0] > 0).long()
    batches = BatchSampler(N, batch, sampler="cyclic_poisson", neighboring="add_remove", num_steps=30,
                           generator=np.random.default_rng(0), strategy=strategy)
    private = PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, clip=1.0,
                               noise_multiplier=4.0, strategy=strategy, noise_source=cn.step_normals(0, "cyc"),
                               num_steps=30, batch_sampler=batches, per_example="vmap")
    for index in batches:
        private.step(x[index], y[index])
    loss = private.privacy_spent(DELTA)
    assert loss.sampler == "cyclic_poisson" and loss.guarantee == "bound" and "Theorem 4" in loss.source
    from privdyn.privacy import accounting

    assert float(loss) == float(accounting.dpsgd_epsilon(strategy, noise_multiplier=4.0, n=N, batch_size=batch,
                                                         num_steps=30, delta=DELTA, sampler="cyclic_poisson",
                                                         neighboring="add_remove"))


def test_planned_run_outside_f12_validity_is_accounted_by_the_amplified_bound():
    accountant = DPSGDAccountant(cn.LambdaCGD(0.6), _batches(), noise_multiplier=20.0, num_steps=STEPS, delta=DELTA)
    assert accountant.planned.guarantee == "bound" and "Theorem F.12" not in accountant.planned.source
    assert 0.0 < float(accountant.planned) < float("inf")


@pytest.mark.parametrize("strategy", [  # BLT's bound is the slower one (minutes under load): behind the slow marker
    cn.LambdaCGD(0.5), pytest.param(cn.BufferedToeplitz([0.9], [0.2]), marks=pytest.mark.slow)], ids=repr)
def test_poisson_sampling_with_correlated_noise_calibrates_trains_and_accounts(strategy):
    """The issue-17 promise: lambda-CGD and BLT noise under Poisson sampling (add-remove), by the amplified bound."""
    from privdyn.privacy import accounting

    n, batch, steps, target = 1000, 50, 10, 1.0
    torch.manual_seed(0)
    model = nn.Linear(4, 2).double()
    x = torch.randn(n, 4, dtype=torch.float64)
    y = (x[:, 0] > 0).long()
    batches = BatchSampler(n, batch, sampler="poisson", neighboring="add_remove", num_steps=steps,
                           generator=np.random.default_rng(0))
    private = PrivateOptimizer.with_epsilon(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, epsilon=target,
                                            delta=DELTA, clip=1.0, num_steps=steps, batch_sampler=batches,
                                            strategy=strategy, noise_source=cn.step_normals(0, "p"),
                                            per_example="vmap", rtol=1e-2)
    assert private.calibration.guarantee == "bound" and private.calibration.neighboring == "add_remove"
    for index in batches:
        private.step(x[index], y[index])
    loss = private.privacy_spent(DELTA)
    assert loss.sampler == "poisson" and loss.neighboring == "add_remove" and loss.guarantee == "bound"
    assert float(loss) <= target
    assert float(loss) == float(accounting.dpsgd_epsilon(strategy, noise_multiplier=float(private.calibration), n=n,
                                                         batch_size=batch, num_steps=steps, delta=DELTA,
                                                         sampler="poisson", neighboring="add_remove"))


def test_calibration_reaches_the_target():
    model = nn.Linear(4, 2).double()
    private = PrivateOptimizer.with_epsilon(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, epsilon=0.8,
                                            delta=DELTA, clip=1.0, num_steps=STEPS, batch_sampler=_batches(),
                                            strategy=cn.LambdaCGD(0.6), noise_source=cn.step_normals(0, "c"),
                                            per_example="vmap")
    assert private.calibration.quantity == "noise_multiplier"
    assert float(private.accountant.epsilon(STEPS, DELTA)) <= 0.8 * (1 + 1e-12)


def test_accountant_accounts_calibrates_and_checkpoints_through_its_record():
    """epsilon, the calibration and the checkpoint's mechanism all come from the run's DPSGDMechanism record."""
    from privdyn.privacy.mechanism import DPSGDMechanism
    from privdyn.torch.accountant import MECHANISM_FIELDS, DPSGDAccountant, calibrate_noise_multiplier

    batches = _batches(sampler="poisson", neighboring="add_remove")
    accountant = DPSGDAccountant(cn.Independent(), batches, noise_multiplier=1.1, num_steps=STEPS)
    accountant.step(40)
    record = DPSGDMechanism(noise_multiplier=1.1, n=N, batch_size=BATCH, num_steps=40, sampler="poisson",
                            neighboring="add_remove")
    assert float(accountant.privacy_spent(DELTA)) == float(record.privacy_loss(DELTA).value)
    assert accountant.record(40).noise_multiplier == record.noise_multiplier
    saved = accountant.state_dict()["mechanism"]
    assert set(saved) == set(MECHANISM_FIELDS)
    assert {k: v for k, v in saved.items() if k != "strategy"} == {
        "sampler": record.sampler, "n": record.n, "batch_size": record.batch_size,
        "neighboring": record.neighboring.value, "noise_multiplier": record.noise_multiplier}
    kappa = calibrate_noise_multiplier(cn.Independent(), batches, epsilon=2.0, delta=DELTA, num_steps=STEPS)
    assert float(kappa) == float(dataclasses.replace(record, num_steps=STEPS).calibration(2.0, DELTA).value)
