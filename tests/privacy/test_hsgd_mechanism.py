"""The homogenized-SGD record: its surrogate is privdyn.privacy.hsgd's, its labels say surrogate, dp-accounting is
refused, its calibration is the hsgd planner's search."""

import dataclasses
import math

import numpy as np
import pytest

from privdyn.data.hsgd_design import gaussian_design, hsgd_problem
from privdyn.privacy import hsgd
from privdyn.privacy.conversions import rdp_to_epsilon
from privdyn.privacy.hsgd.mechanism import BISECTIONS, NOISE_GRID, HSGDMechanism
from privdyn.privacy.labels import Guarantee
from privdyn.privacy.mechanism import NotExpressibleError
from privdyn.schedules import Constant
from privdyn.spectra import Spectrum

D, N = 16, 32


@pytest.fixture(scope="module")
def setting():
    design = gaussian_design(Spectrum.identity(D), label_noise=0.5, target_norm=1.0)
    features, labels = design.sample(N, np.random.default_rng(3))
    pairs = hsgd.select_pairs(features, labels, ridge=0.1, num_pairs=2)
    return design, pairs


def _record(setting, noise_std, step_size=0.11 / D):  # 5% of the stable limit 2.2 / d
    design, pairs = setting
    problem = hsgd_problem(design, x0=np.zeros(D), learning_rate=Constant(step_size * D), ridge=0.1,
                           noise_std=noise_std)
    return HSGDMechanism(problem=problem, n=N, renyi_order=2.0, pairs=pairs)


def test_surrogate_is_theorem_43_on_the_sgd_grid_and_labelled(setting):
    record = _record(setting, 1.0)
    law = hsgd.sgd_grid_law(record.problem, N)
    direct = float(hsgd.rdp_epsilon(2.0, law, record.pairs, num_steps=N, iterates=[N]).value[0])
    assert record.rdp_epsilon() == direct and math.isfinite(direct) and direct > 0
    assert record.rdp_loss().guarantee == Guarantee.SURROGATE
    loss = record.privacy_loss(1e-5)
    assert loss.guarantee == Guarantee.SURROGATE and loss.quantity == "epsilon"
    assert float(loss.value) == float(rdp_to_epsilon([2.0], [direct], delta=1e-5)[0])


def test_no_noise_is_infinite_and_with_noise_is_a_fresh_problem(setting):
    assert _record(setting, 0.0).rdp_epsilon() == math.inf
    assert _record(setting, 0.3).with_noise(0.7).rdp_epsilon() == _record(setting, 0.7).rdp_epsilon()


def test_dp_accounting_is_refused_with_the_reason(setting):
    with pytest.raises(NotExpressibleError) as caught:
        _record(setting, 1.0).dp_event()
    assert caught.value.reason == "surrogate"


def test_calibrations_meet_the_target_within_one_bisection_step(setting):
    record = _record(setting, 1.0)
    grid = [f * 0.5 for f in NOISE_GRID]
    target = 0.5 * record.rdp_epsilon()
    found = record.calibrate_rdp(target, noise_grid=grid)
    assert found.mechanism is not None and found.mechanism.rdp_epsilon() <= target
    step = (grid[1] / grid[0]) ** (1.0 / 2**BISECTIONS)
    assert record.with_noise(found.mechanism.noise_std / step * (1 - 1e-9)).rdp_epsilon() > target
    epsilon = float(record.privacy_loss(1e-5).value)
    calibrated = record.calibrate(0.95 * epsilon, 1e-5)
    assert float(calibrated.privacy_loss(1e-5).value) <= 0.95 * epsilon
    assert calibrated.noise_std > record.noise_std


def test_unreachable_target_and_bad_input_are_refused(setting):
    record = _record(setting, 1.0)
    assert record.calibrate_rdp(1e-12, noise_grid=[0.1, 1.0]).mechanism is None
    with pytest.raises(ValueError, match="smallest surrogate epsilon"):
        record.calibrate(1e-12, 1e-5, noise_grid=[0.1, 1.0])
    with pytest.raises(ValueError, match="renyi_order"):
        HSGDMechanism(problem=record.problem, n=N, renyi_order=1.0, pairs=record.pairs)
    with pytest.raises(TypeError, match="pairs"):
        HSGDMechanism(problem=record.problem, n=N, renyi_order=2.0, pairs=None)


def test_statement_is_a_surrogate_with_or_without_delta(setting):
    record = _record(setting, 1.0)
    bare = record.statement()
    assert bare.epsilon is None and bare.guarantee == Guarantee.SURROGATE and not bare.is_dp_guarantee
    assert bare.extra["rdp_epsilon"] == record.rdp_epsilon()
    converted = record.statement(1e-5)
    assert converted.epsilon == float(record.privacy_loss(1e-5).value) and converted.delta == 1e-5


def test_hsgd_planner_states_and_calibrates_through_the_record():
    import privdyn.plan
    from privdyn.plan import _hsgd

    plan = privdyn.plan.hsgd(n=40, d=16, label_noise=0.5, ridge=0.1, renyi_order=2.0, rdp_epsilon=1.0, num_pairs=2)
    h, s = plan.hyperparameters, plan.setting
    record = _hsgd._mechanism(s, h["step_size"], h["noise_std"])
    stated = record.statement()
    assert plan.privacy == dataclasses.replace(stated, extra={**stated.extra, "rdp_epsilon_target": 1.0})
    grid = [f * s.gradient_scale for f in NOISE_GRID]
    found = _hsgd._mechanism(s, h["step_size"], grid[0]).calibrate_rdp(1.0, noise_grid=grid)
    assert found.mechanism is not None and found.mechanism.noise_std == h["noise_std"]
