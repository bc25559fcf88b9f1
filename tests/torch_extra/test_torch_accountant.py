"""The torch run's accountant: privdyn's allow-list, equal to the NumPy accountants, refusals before training."""

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


def _run(strategy, kappa, *, sampler="fixed_size", neighboring="zero_out", steps=STEPS, delta=None):
    torch.manual_seed(0)
    model = nn.Linear(4, 2).double()
    x = torch.randn(N, 4, dtype=torch.float64)
    y = (x[:, 0] > 0).long()
    private = PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, clip=1.0,
                               noise_multiplier=kappa, batch_size=BATCH, strategy=strategy,
                               noise_source=cn.step_normals(0, "acc"), num_steps=steps, n=N, sampler=sampler,
                               neighboring=neighboring, delta=delta, per_example="vmap")
    for index in BatchSampler(N, BATCH, sampler=sampler, num_steps=steps, generator=np.random.default_rng(0)):
        private.step(x[index], y[index])
    return private


def test_lambda_cgd_epsilon_is_theorem_f12():
    """F.12 (constant 2) at the reported epsilon gives back the run's kappa: an independent path (the calibration)."""
    kappa = 200.0
    private = _run(cn.LambdaCGD(0.6), kappa)
    loss = private.privacy_spent(DELTA)
    assert loss.guarantee == "bound" and loss.neighboring == "zero_out" and loss.sampler == "fixed_size"
    back = cc.noise_multiplier_theorem_f12(0.6, n=N, batch_size=BATCH, num_steps=STEPS, epsilon=float(loss),
                                           delta=DELTA, constant=2.0)
    assert float(back) == pytest.approx(kappa, rel=1e-12)
    assert float(loss) <= 1.0


def test_independent_epsilon_equals_the_numpy_accountant():
    private = _run(cn.Independent(), 1.2, neighboring="replace_one")
    expected = cc.epsilon_dp_accounting(1.2, n=N, batch_size=BATCH, num_steps=STEPS, delta=DELTA,
                                        sampler="fixed_size", neighboring="replace_one")
    loss = private.privacy_spent(DELTA)
    assert float(loss) == pytest.approx(float(expected), rel=1e-12)
    assert loss.neighboring == "replace_one" and loss.guarantee == expected.guarantee


def test_mid_run_epsilon_is_the_planned_runs_bound_where_f12_cannot_cover_the_prefix():
    accountant = DPSGDAccountant(cn.LambdaCGD(0.6), sampler="fixed_size", neighboring="zero_out", n=N,
                                 batch_size=BATCH, noise_multiplier=200.0, num_steps=STEPS, delta=DELTA)
    accountant.step(5)  # r t = 1.25 < 3 ln(2 / delta): F.12 alone does not cover 5 steps
    loss = accountant.privacy_spent(DELTA)
    assert float(loss) == pytest.approx(float(accountant.epsilon(STEPS, DELTA)))
    assert "post-processing" in loss.source
    alone = DPSGDAccountant(cn.LambdaCGD(0.6), sampler="fixed_size", neighboring="zero_out", n=N,
                            batch_size=BATCH, noise_multiplier=200.0)
    alone.step(5)
    with pytest.raises(NotAccountableError, match="r\\*T"):
        alone.privacy_spent(DELTA)


@pytest.mark.parametrize("strategy, sampler, neighboring", [
    (cn.LambdaCGD(0.5), "poisson", "add_remove"),
    (cn.BufferedToeplitz([0.9], [0.1]), "fixed_size", "zero_out"),
    (cn.BandedInverse([1.0, -0.5, 0.1]), "fixed_size", "zero_out"),
    (cn.SquareRoot(), "fixed_size", "zero_out"),
    (cn.Toeplitz([1.0, 0.5]), "fixed_size", "zero_out"),
    (cn.Independent(), "shuffle", "add_remove"),
    (cn.LambdaCGD(0.5), "fixed_size", "replace_one"),
])
def test_unaccountable_runs_are_refused_before_training(strategy, sampler, neighboring):
    model = nn.Linear(4, 2).double()
    before = model.weight.detach().clone()
    with pytest.raises(NotAccountableError, match="cannot account"):
        PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, clip=1.0, noise_multiplier=1.0,
                         batch_size=BATCH, strategy=strategy, noise_source=cn.step_normals(0, "r"), num_steps=STEPS,
                         n=N, sampler=sampler, neighboring=neighboring, per_example="vmap")
    assert torch.equal(model.weight, before)


def test_planned_run_outside_f12_validity_is_refused_before_training():
    with pytest.raises(NotAccountableError, match="epsilon <= 1"):
        _run(cn.LambdaCGD(0.6), 1.0, delta=DELTA)  # kappa = 1 needs epsilon far above 1


def test_calibration_reaches_the_target():
    model = nn.Linear(4, 2).double()
    private = PrivateOptimizer.with_epsilon(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, epsilon=0.8,
                                            delta=DELTA, clip=1.0, batch_size=BATCH, n=N, num_steps=STEPS,
                                            sampler="fixed_size", neighboring="zero_out",
                                            strategy=cn.LambdaCGD(0.6), noise_source=cn.step_normals(0, "c"),
                                            per_example="vmap")
    assert private.calibration.quantity == "noise_multiplier"
    assert float(private.accountant.epsilon(STEPS, DELTA)) <= 0.8 * (1 + 1e-12)
