"""sklearn-regression: the opt-in comparison runs end to end on a small config and refuses to run without its extra."""

from __future__ import annotations

import numpy as np
import pytest

from privdyn.experiments import registry
from privdyn.experiments.sklearn_regression import datasets
from privdyn.experiments.sklearn_regression.experiment import SklearnRegressionConfig, _split
from privdyn.runs import runner
from privdyn.runs.config import ConfigError

NAME = "sklearn-regression"
SMALL = {"datasets": ["diabetes"], "epsilons": [3.0, 30.0], "sweep_epsilons": [100.0], "num_seeds": 2,
         "planning_share": None}


def _has_extra() -> bool:
    return not datasets.missing_packages(tuple(datasets.DATASETS))


def test_missing_extra_is_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets.importlib.util, "find_spec", lambda name: None if name == "diffprivlib" else 1)
    with pytest.raises(ConfigError, match=r"needs the 'compare' extra \(pip install 'privdyn\[compare\]'\); "
                                          r"missing: diffprivlib"):
        registry.prepare(NAME, overrides=SMALL)


@pytest.mark.skipif(not _has_extra(), reason="needs the compare extra (pip install 'privdyn[compare]')")
def test_small_run_contract(tmp_path) -> None:  # type: ignore[no-untyped-def]
    experiment, config = registry.prepare(NAME, overrides=SMALL)
    result = runner.run_experiment(experiment, config, seed=0, out_dir=tmp_path)
    tables = {t["name"]: t for t in result["tables"]}
    rows = tables["relative_mse"]["rows"]
    assert len(rows) == 3 + 2 * 2  # the default at every epsilon of the sweep, the others at `epsilons`
    assert {r[4] for r in rows} == {"DPLinearRegression", "AdaSSPRegression", "diffprivlib"}
    checks = {c["name"]: c for c in result["checks"]}
    assert checks["recorded_epsilon_within_request"]["passed"] is True
    for name in ("default_at_least_as_accurate_as_adassp", "default_improves_with_epsilon",
                 "public_stats_prediction_within_band", "share_prediction_within_band"):
        assert checks[name]["kind"] == "paper_claim"
    assert len(tables["paired_difference"]["rows"]) == 2 and len(tables["monotonicity"]["rows"]) == 2
    public = tables["public_stats_prediction"]["rows"]
    assert len(public) == 2 and all(r[2] > 0 and r[8] == 2 for r in public)
    assert len(tables["share_prediction"]["rows"]) == 2  # the default fit spends the auto share
    adassp = tables["adassp_prediction"]["rows"]
    assert len(adassp) == 2 and all(r[2] > 0 and r[8] == 2 for r in adassp)
    solver = tables["solver"]["rows"]
    assert [r[1] for r in solver] == [3.0, 30.0, 100.0] and all(0 <= r[2] <= r[3] == 2 for r in solver)
    assert (tmp_path / NAME / "figure.png").is_file()


@pytest.mark.skipif(not _has_extra(), reason="needs the compare extra (pip install 'privdyn[compare]')")
def test_datasets_ship_in_packages() -> None:
    shapes = {name: datasets.load(name)[0].shape for name in datasets.DATASETS}
    assert shapes == {"diabetes": (442, 10), "txhousing": (7126, 51), "randhie": (20190, 9),
                      "diamonds": (53940, 23)}
    assert sum(rows >= 5000 for rows, _ in shapes.values()) >= 2


def test_split_is_standardized_by_the_training_rows_and_clipped() -> None:
    rng = np.random.default_rng(0)
    features, labels = rng.normal(3.0, 10.0, size=(200, 3)), rng.normal(5.0, 2.0, size=200)
    config = SklearnRegressionConfig.__new__(SklearnRegressionConfig)  # no extra needed for the split itself
    object.__setattr__(config, "test_fraction", 0.25)
    object.__setattr__(config, "feature_box", 1.5)
    object.__setattr__(config, "label_box", 2.0)
    x_train, y_train, x_test, y_test = _split(features, labels, config, np.random.default_rng(1))
    assert x_train.shape == (150, 3) and x_test.shape == (50, 3)
    assert np.abs(x_train).max() <= 1.5 and np.abs(y_test).max() <= 2.0
    assert abs(float(np.mean(np.clip(y_train, -2, 2)))) < 0.2
