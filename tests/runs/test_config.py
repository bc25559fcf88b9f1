"""Config typing and the --set override rules of ARCHITECTURE.md."""

import dataclasses
from typing import Literal

import pytest

from privdyn.runs.config import ConfigError, ExperimentConfig, apply_overrides, parse_overrides


@dataclasses.dataclass(frozen=True, kw_only=True)
class Inner(ExperimentConfig):
    width: int = 4
    scale: float = 1.0

    def validate(self):
        if self.width < 1:
            raise ValueError(f"width must be >= 1; got width={self.width}.")
        if self.scale > 100:
            raise ValueError(f"the product of widths is too large for scale={self.scale}.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Example(ExperimentConfig):
    quick_overrides = {"num_runs": 10}

    step_size: float = 0.1
    smoothness: float = 4.0
    num_runs: int = 100
    renyi_orders: tuple[float, ...] = (2.0, 10.0)
    label: str = "x"
    cap: float | None = None
    method: Literal["ode", "lsoda"] = "ode"
    verbose: bool = False
    inner: Inner = Inner()

    def validate(self):
        if self.step_size >= 1 / self.smoothness:
            raise ValueError(f"step_size must be < 1/smoothness = {1 / self.smoothness:g}; got {self.step_size}.")


def override(*pairs, base=None):
    return apply_overrides(base or Example(), parse_overrides(pairs))


def test_values_parse_as_json_else_string():
    cfg = override("step_size=0.05", "renyi_orders=[2,10,30]", "label=hello world", "method=lsoda")
    assert cfg.step_size == 0.05 and cfg.renyi_orders == (2.0, 10.0, 30.0)
    assert cfg.label == "hello world" and cfg.method == "lsoda"


def test_int_for_float_and_scalar_for_list():
    cfg = override("step_size=0", "smoothness=2", "renyi_orders=5")
    assert isinstance(cfg.smoothness, float) and cfg.smoothness == 2.0
    assert cfg.renyi_orders == (5.0,)


def test_null_only_where_allowed():
    assert override("cap=null").cap is None
    assert override("cap=3").cap == 3.0
    with pytest.raises(ConfigError, match="step_size does not accept null"):
        override("step_size=null")


def test_dotted_keys_reach_nested_configs():
    cfg = override("inner.width=8", "inner.scale=2")
    assert cfg.inner == Inner(width=8, scale=2.0)
    with pytest.raises(ConfigError, match="unknown config key 'inner.depth'"):
        override("inner.depth=1")
    with pytest.raises(ConfigError, match="no nested keys"):
        override("step_size.x=1")


def test_nested_validation_errors_name_the_dotted_key():
    with pytest.raises(ConfigError, match=r"^inner\.width must be >= 1"):
        override("inner.width=0")
    with pytest.raises(ConfigError, match=r"^inner: the product of widths"):
        override("inner.scale=1000")


@pytest.mark.parametrize("pairs, match", [
    (("nope=1",), "unknown config key 'nope'"),
    (("num_runs=2.5",), "num_runs must be an integer"),
    (("num_runs=true",), "num_runs must be an integer"),
    (("step_size=abc",), "step_size must be a number"),
    (("verbose=1",), "verbose must be true or false"),
    (("method=rk4",), 'method must be one of "ode", "lsoda"'),
    (("renyi_orders=[]",), "non-empty"),
    (("renyi_orders=[2, \"a\"]",), r"renyi_orders\[1\] must be a number"),
    (("step_size=0.3",), r"step_size must be < 1/smoothness = 0.25"),
    (("step_size=0.1", "step_size=0.2"), "given twice"),
    (("novalue",), "KEY=VALUE"),
    (("step_size=NaN",), "finite"),
])
def test_bad_overrides_raise_one_line(pairs, match):
    with pytest.raises(ConfigError, match=match) as info:
        override(*pairs)
    assert "\n" not in str(info.value)


def test_cross_field_validation_applies_after_all_overrides():
    with pytest.raises(ConfigError, match="step_size must be < 1/smoothness"):
        override("step_size=0.4")
    cfg = override("step_size=0.4", "smoothness=2")  # valid together, whatever the order
    assert (cfg.step_size, cfg.smoothness) == (0.4, 2.0)


def test_quick_then_round_trip():
    cfg = Example().quick()
    assert cfg.num_runs == 10
    assert Example.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="unknown config key"):
        Example.from_dict({"zzz": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.num_runs = 3
