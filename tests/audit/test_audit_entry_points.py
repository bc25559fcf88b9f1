"""Every audit row's runs go through the public entry point the row names: the entry point is wrapped by a counter
and the row's runs are made; per-run entry points (an estimator's fit, one run of an algorithm) are called once per
run, vectorized simulators at least once per dataset."""

import importlib

import pytest

from privdyn.audit.base import missing_extra
from privdyn.audit.mechanisms import MECHANISMS, mechanism

ROWS = [name for name, cls in MECHANISMS.items() if missing_extra(cls) is None]
PER_RUN = {"privdyn.sklearn.DPLinearRegression.fit", "privdyn.sklearn.AdaSSPRegression.fit",
           "privdyn.sklearn.DPLogisticRegression.fit", "privdyn.algorithms.dpgd.dpgd"}
"""Entry points that make one run per call."""


def _resolve(path: str) -> tuple[object, str]:
    """(owner, attribute) of a dotted ``module[.Class].name``."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:-1]:
            owner = getattr(owner, name)
        return owner, parts[-1]
    raise AssertionError(f"cannot resolve {path}")


@pytest.mark.parametrize("name", ROWS)
def test_the_runs_go_through_the_named_entry_point(name, monkeypatch):
    cls = MECHANISMS[name]
    owner, attribute = _resolve(cls.entry_point)
    original = getattr(owner, attribute)
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, attribute, counted)
    mech = mechanism(name)
    runs = mech.runs_for(100)
    outputs = mech.run(0, "entry-point", runs)
    assert [len(side) for side in outputs.scores] == [runs, runs]
    if cls.entry_point in PER_RUN:
        assert len(calls) >= 2 * runs, (name, len(calls))
    else:
        assert len(calls) >= 2, (name, len(calls))


def test_every_row_names_a_public_entry_point():
    for cls in MECHANISMS.values():
        owner, attribute = _resolve(cls.entry_point)
        assert callable(getattr(owner, attribute)) and not attribute.startswith("_"), cls.entry_point
