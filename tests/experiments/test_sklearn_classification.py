"""sklearn-classification: the opt-in comparison runs end to end on a small config; its peers are run faithfully."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privdyn.experiments import registry
from privdyn.experiments.sklearn_classification import datasets, methods
from privdyn.runs import runner
from privdyn.runs.config import ConfigError

NAME = "sklearn-classification"
SMALL = {"datasets": ["breast_cancer"], "epsilons": [1.0, 8.0], "num_splits": 2}


def _has_extra() -> bool:
    return not datasets.missing_packages(tuple(datasets.DATASETS))


def test_is_opt_in() -> None:
    assert NAME in registry.OPT_IN and NAME not in [e.name for e in registry.select(["*"])]


def test_missing_peer_is_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets.importlib.util, "find_spec", lambda name: None if name == "opendp" else 1)
    with pytest.raises(ConfigError, match="missing: opendp"):
        registry.prepare(NAME, overrides=SMALL)


@pytest.mark.slow  # about a minute on a loaded 2-core machine (four peers, two splits, two epsilons)
@pytest.mark.skipif(not _has_extra(), reason="needs the compare extra, opendp and opacus")
def test_small_run_contract(tmp_path) -> None:  # type: ignore[no-untyped-def]
    experiment, config = registry.prepare(NAME, overrides=SMALL)
    result = runner.run_experiment(experiment, config, seed=0, out_dir=tmp_path)
    tables = {t["name"]: t for t in result["tables"]}
    rows = tables["accuracy"]["rows"]
    assert len(rows) == 1 + 2 * len(methods.METHODS)  # the non-private row, then epsilons x methods
    assert {r[4] for r in rows[1:]} == set(methods.METHODS)
    assert all(0.0 <= r[5] <= 1.0 for r in rows)
    checks = {c["name"]: c for c in result["checks"]}
    assert checks["recorded_epsilon_within_request"]["passed"] is True
    assert checks["target_at_least_as_accurate"]["kind"] == "paper_claim"
    ratios = tables["epsilon_ratios"]["rows"]
    assert all(r[4] <= r[1] * (1 + 1e-9) for r in ratios)  # the last-iterate epsilon is within the request
    assert (tmp_path / NAME / "figure.png").is_file()


@pytest.mark.skipif(not _has_extra(), reason="needs the compare extra, opendp and opacus")
def test_datasets_ship_in_packages() -> None:
    shapes = {name: datasets.load(name)[0].shape for name in datasets.DATASETS}
    assert shapes == {"breast_cancer": (569, 30), "digits": (1797, 64), "fair": (6366, 8), "k401ksubs": (9275, 9)}
    assert sum(rows >= 2000 for rows, _ in shapes.values()) >= 2


@pytest.mark.skipif(not _has_extra(), reason="needs the compare extra, opendp and opacus")
def test_opendp_calibration_meets_the_target_on_its_own_accountant() -> None:
    """The scale found makes OpenDP's composed measurement (epsilon, delta)-DP, and a 1% smaller one is not."""
    scale = methods._opendp_scale(2.0, 50, 5, 1.0, 1e-5)
    spent = methods._opendp_measurement(scale, 5, 50).map(2.0).epsilon(1e-5)
    assert spent <= 1.0 < methods._opendp_measurement(0.99 * scale, 5, 50).map(2.0).epsilon(1e-5)
    # the same Gaussian composition in closed form: K steps of sensitivity 2 at std `scale` are K*2/scale^2 zCDP
    from privdyn.privacy.conversions import zcdp_to_epsilon

    assert math.isclose(spent, float(zcdp_to_epsilon(50 * 2.0**2 / (2 * scale**2), delta=1e-5, method="optimal")),
                        rel_tol=1e-3)


@pytest.mark.skipif(not _has_extra(), reason="needs the compare extra, opendp and opacus")
def test_composition_steps_stop_earlier_than_the_last_iterate_plan() -> None:
    from privdyn.sklearn import DPLogisticRegression

    x, y = datasets.load("fair")
    x = np.clip((x - x.mean(0)) / x.std(0), -2, 2) / 2
    model = DPLogisticRegression(epsilon=1.0, feature_norm=math.sqrt(x.shape[1]), max_iter=1000,
                                 random_state=0).fit(x, y)
    k = methods.composition_num_steps(n=len(y), parameters=x.shape[1] + 1, training=model.training_, epsilon=1.0,
                                      delta=len(y) ** -1.1, max_steps=model.training_["max_iter"])
    assert 1 <= k < model.training_["num_steps"]
