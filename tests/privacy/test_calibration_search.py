"""Tests of the PLD side of privdyn.privacy._calibration_search.

The vectorized connect-the-dots estimate must reproduce dp-accounting's pessimistic PLD epsilon (the quantity it
stands in for during the search), and the calibration must certify its answer with dp-accounting itself: the
returned epsilon is dp-accounting's at the returned interval, at most the target, and the noise multiplier is within
``rtol`` of the smallest one whose epsilon at dp-accounting's default interval is at most the target.
"""

from __future__ import annotations

import dp_accounting
import pytest

from privdyn.privacy import _calibration_search as search

ADD_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
ZERO_OUT = dp_accounting.NeighboringRelation.REPLACE_SPECIAL


@pytest.mark.parametrize("z, q, steps, interval", [
    (2.7527, 0.01, 5_000, 1e-3),    # the kan Poisson setting near its calibrated multiplier
    (0.99985, 0.01, 2_000, 5e-4),
    (0.8, 0.2, 100, 1e-3),          # large epsilon
    (5.0, 0.001, 1_000, 1e-3),      # small epsilon
    (20.0, 1.0, 1, 1e-4),           # no subsampling, one step
    (0.5, 0.9, 1_000, 1e-3),        # epsilon in the thousands (e^-loss underflows)
])
def test_pld_estimate_matches_dp_accounting(z: float, q: float, steps: int, interval: float) -> None:
    estimate = search.pld_epsilon_estimate(z, sampling_prob=q, num_steps=steps, delta=1e-5, interval=interval)
    for relation in (ADD_REMOVE, ZERO_OUT):
        reference = search.pld_epsilon(z, sampling_prob=q, num_steps=steps, delta=1e-5, relation=relation,
                                       interval=interval)
        assert estimate == pytest.approx(reference, rel=1e-7)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    calls: list[float] = []
    forward = search.pld_epsilon

    def counted(z: float, **kwargs: object) -> float:
        calls.append(z)
        return forward(z, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "pld_epsilon", counted)
    return calls


@pytest.mark.parametrize("q, steps, epsilon, delta, relation", [
    (0.01, 1_000, 1.0, 1e-5, ADD_REMOVE),
    (0.001, 1_000, 0.5, 1e-6, ADD_REMOVE),   # the zCDP start is 2.4x too small here: the safeguarded search
    (0.05, 300, 4.0, 1e-5, ZERO_OUT),
    (0.1, 50, 1.0, 1e-5, dp_accounting.NeighboringRelation.REPLACE_ONE),  # no estimate: dp-accounting throughout
])
def test_calibrate_pld_is_certified_by_dp_accounting_and_tight(monkeypatch: pytest.MonkeyPatch, q: float, steps: int,
                                                                epsilon: float, delta: float,
                                                                relation: object) -> None:
    rtol = 1e-4
    calls = _counting(monkeypatch)
    z, achieved, interval = search.calibrate_pld(sampling_prob=q, num_steps=steps, epsilon=epsilon, delta=delta,
                                                 relation=relation, rtol=rtol)
    if relation is not dp_accounting.NeighboringRelation.REPLACE_ONE:
        assert len(calls) == 1  # the search runs on the estimate; dp-accounting only certifies
    monkeypatch.undo()

    def at(x: float, h: float) -> float:
        return search.pld_epsilon(x, sampling_prob=q, num_steps=steps, delta=delta, relation=relation, interval=h)

    assert search.DEFAULT_PLD_INTERVAL <= interval <= 1e-3
    assert achieved == at(z, interval) <= epsilon
    assert at(z, search.DEFAULT_PLD_INTERVAL) <= epsilon
    assert at(z / (1.0 + rtol), search.DEFAULT_PLD_INTERVAL) > epsilon
