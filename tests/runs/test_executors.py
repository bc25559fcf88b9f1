"""Every executor gives the same numbers (a real experiment with random units)."""

import logging

import numpy as np
import pytest

from privdyn.experiments import registry
from privdyn.runs import runner

OVERRIDES = {"mc_num_runs": 8_000, "mc_block_size": 1_000, "max_num_steps": 100}


def run_with(executor):
    experiment, config = registry.prepare("langevin-tightness", quick=True, overrides=OVERRIDES)
    return runner.run_experiment(experiment, config, seed=7, quick=True, executor=executor)


def numbers(result):
    """Every number of the result (series, metrics, checks) in a fixed order."""
    out = []
    for s in result["series"]:
        out += [float(v) for v in s["y"]]
    for c in result["checks"]:
        for key in ("expected", "measured", "standard_error"):
            value = c[key]
            values = value if isinstance(value, list) else [value]
            out += [float(v) for v in values if isinstance(v, int | float | str) and v not in ("",)]
    return np.array(out)


@pytest.fixture(scope="module")
def reference():
    with runner.open_executor("serial") as pool:
        return run_with(pool)


def assert_same(result, reference):
    a, b = numbers(result), numbers(reference)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    assert [c["passed"] for c in result["checks"]] == [c["passed"] for c in reference["checks"]]


def test_local_process_pool(reference):
    with runner.open_executor("local") as pool:
        assert_same(run_with(pool), reference)


def test_dask_local_cluster(reference):
    pytest.importorskip("distributed")
    with runner.open_executor("dask-local") as pool:
        assert_same(run_with(pool), reference)


def test_dask_scheduler_by_tcp_address(reference):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://")
        with runner.open_executor(address) as pool:
            assert_same(run_with(pool), reference)


@pytest.mark.parametrize("spec, match", [("gpu", "not known"), ("tcp://nohost", "HOST:PORT"),
                                         ("tcp://h:99999", "HOST:PORT")])
def test_bad_executor_specs(spec, match):
    with pytest.raises(ValueError, match=match):
        with runner.open_executor(spec):
            pass


def test_unreachable_scheduler_is_a_config_error():
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="cannot reach the Dask scheduler"):
        with runner.open_executor("tcp://127.0.0.1:9", connect_timeout_s=1.0):
            pass
