"""LangevinSetting: the six noisy-GD constants held once, validated once, same numbers as the keyword functions."""

import dataclasses

import numpy as np
import pytest

from privdyn.privacy import LangevinSetting
from privdyn.privacy import langevin as lv

SETTING = dict(step_size=0.1, noise_scale=0.8, strong_convexity=1.0, smoothness=2.0, sensitivity=2.0, n=50)


def test_methods_equal_the_keyword_functions():
    setting = LangevinSetting(**SETTING)
    assert setting.keywords() == SETTING
    k = np.array([1, 10, 100])
    pairs = [
        (setting.dynamics_rdp(2.0, num_steps=k), lv.dynamics_rdp(2.0, num_steps=k, **SETTING)),
        (setting.dynamics_rdp_increment(3.0, step_index=k), lv.dynamics_rdp_increment(3.0, step_index=k, **SETTING)),
        (setting.dynamics_zcdp(num_steps=k), lv.dynamics_zcdp(num_steps=k, **SETTING)),
        (setting.dynamics_zcdp(), lv.dynamics_zcdp(**SETTING)),
        (setting.best_gamma_rdp(2.0, num_steps=40), lv.best_gamma_rdp(2.0, num_steps=40, **SETTING)),
        (setting.tracked_lsi_rdp(2.0, num_steps=40), lv.tracked_lsi_rdp(2.0, num_steps=40, **SETTING)),
        (setting.composition_rdp(2.0, num_steps=k),
         lv.composition_rdp(2.0, num_steps=k, step_size=0.1, noise_scale=0.8, sensitivity=2.0, n=50)),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(got.value, want.value)
        assert got.guarantee == want.guarantee and got.source == want.source


def test_frozen():
    setting = LangevinSetting(**SETTING)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setting.n = 10  # type: ignore[misc]


@pytest.mark.parametrize(("key", "value", "message"), [
    ("step_size", 0.6, "step_size must be < 1/smoothness"),
    ("step_size", -0.1, "step_size"),
    ("noise_scale", 0.0, "noise_scale"),
    ("strong_convexity", 3.0, "strong_convexity must be <= smoothness"),
    ("sensitivity", -1.0, "sensitivity"),
    ("n", 2.5, "n must be an integer >= 1"),
])
def test_bad_constants_name_the_parameter_in_the_setting_and_the_functions(key, value, message):
    bad = {**SETTING, key: value}
    with pytest.raises(ValueError, match=message):
        LangevinSetting(**bad)
    with pytest.raises(ValueError, match=message):
        lv.dynamics_rdp(2.0, num_steps=10, **bad)
