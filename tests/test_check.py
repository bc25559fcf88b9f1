"""Validation helpers: messages name the parameter, the value and the valid range."""

import math

import numpy as np
import pytest

from privdyn import _check


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.array([1.0, np.nan])])
def test_finite_rejects_non_finite(value):
    with pytest.raises(ValueError, match=r"^noise_scale must be finite; got noise_scale="):
        _check.finite(noise_scale=value)


def test_positive_message():
    with pytest.raises(ValueError, match=r"^step_size must be > 0; got step_size=-0.5\.$"):
        _check.positive(step_size=-0.5)
    with pytest.raises(ValueError, match=r"n must be > 0; got n=0"):
        _check.positive(n=np.array([3, 0, 2]))
    _check.positive(a=1e-300, b=np.array([1.0, 2.0]))


def test_in_range_open_and_closed():
    _check.in_range(0, 1, closed="both", p=0.0)
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\); got delta=1\.0"):
        _check.in_range(0, 1, closed="neither", delta=1.0)
    with pytest.raises(ValueError, match=r"renyi_order must be in \(1, inf\); got renyi_order=1"):
        _check.in_range(1, math.inf, closed="neither", renyi_order=1)
    with pytest.raises(ValueError, match="got x=nan"):
        _check.in_range(0, 1, x=math.nan)


def test_integer():
    _check.integer(minimum=1, n=np.int64(3), ks=[1, 2, 3])
    with pytest.raises(TypeError, match="num_steps must be an integer"):
        _check.integer(num_steps=2.5)
    with pytest.raises(TypeError, match="a bool"):
        _check.integer(num_steps=True)
    with pytest.raises(ValueError, match=r"n must be an integer >= 1; got n=0"):
        _check.integer(minimum=1, n=0)


def test_less_than_and_one_of():
    with pytest.raises(ValueError, match=r"step_size must be < 1/smoothness = 0.25; got step_size=0.3"):
        _check.less_than(0.25, "1/smoothness = 0.25", step_size=0.3)
    with pytest.raises(ValueError, match="method must be one of 'a', 'b'; got method='c'"):
        _check.one_of(("a", "b"), method="c")


def test_bool_and_strings_are_type_errors():
    with pytest.raises(TypeError, match="flag"):
        _check.positive(flag=True)
    with pytest.raises(TypeError, match="name"):
        _check.positive(name="abc")


@pytest.mark.parametrize("text", ["1.0", b"2", np.array(["1.0"])])
def test_text_is_not_a_number(text):
    for check in (lambda v: _check.scalar(x=v), lambda v: _check.finite(x=v), lambda v: _check.positive(x=v)):
        with pytest.raises(TypeError, match="x must be a real number"):
            check(text)


@pytest.mark.parametrize("bad", [0.0, 1.0, -1e-9, float("nan"), float("inf")])
def test_delta_is_one_open_interval_check(bad):
    with pytest.raises(ValueError, match="delta"):
        _check.delta(bad)
    with pytest.raises(ValueError, match="target_delta"):
        _check.delta(bad, name="target_delta")


def test_delta_returns_a_float_and_refuses_non_scalars():
    assert _check.delta(np.float32(1e-5)) == pytest.approx(1e-5) and type(_check.delta(1e-5)) is float
    with pytest.raises(TypeError, match="delta"):
        _check.delta(True)
    with pytest.raises((TypeError, ValueError), match="delta"):
        _check.delta([1e-5, 1e-6])


def test_deltas_checks_every_entry_of_an_array():
    _check.deltas(np.array([1e-5, 0.5]))
    _check.deltas(1e-5)
    for bad in (np.array([1e-5, 0.0]), np.array([0.5, 1.0]), np.array([np.nan, 0.1])):
        with pytest.raises(ValueError, match="delta"):
            _check.deltas(bad)


def test_member_accepts_the_enum_or_its_value_and_names_the_parameter():
    from privdyn.privacy.labels import NeighboringRelation

    assert _check.member(NeighboringRelation, neighboring="zero_out") is NeighboringRelation.ZERO_OUT
    add_remove = NeighboringRelation.ADD_REMOVE
    assert _check.member(NeighboringRelation, neighboring=add_remove) is add_remove
    with pytest.raises(ValueError, match=r"neighboring must be one of 'replace_one', .*; got neighboring='both'"):
        _check.member(NeighboringRelation, neighboring="both")
