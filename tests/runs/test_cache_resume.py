"""Cache and resume: interrupted runs recompute only missing units and end with the same result."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from privdyn import rng
from privdyn.runs import cache as cache_module
from privdyn.runs import runner
from privdyn.runs.base import Experiment, Findings, Unit
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.progress import reporting, unit_progress
from privdyn.runs.results import Metric, Series

CALLS: list[str] = []
FAIL_ON: set[str] = set()


@dataclasses.dataclass(frozen=True, kw_only=True)
class CountingConfig(ExperimentConfig):
    quick_overrides = {"num_units": 3}
    num_units: int = 6
    scale: float = 1.0


class Counting(Experiment):
    """A test experiment whose units record their calls and can be made to fail."""

    name = "test-counting"
    paper_key = "test"
    title = "counting"
    paper = "none"
    description = "test experiment"
    config_class = CountingConfig

    def units(self, config):
        return [Unit(f"u{i}", {"i": i}) for i in range(config.num_units)]

    def compute_unit(self, config, unit, seed):
        CALLS.append(unit.key)
        if unit.key in FAIL_ON:
            raise RuntimeError(f"interrupted at {unit.key}")
        draws = rng.generator(seed, unit.key).standard_normal(3) * config.scale
        return {"draws": draws, "inf": float("inf"), "pair": (unit.params["i"], 2)}

    def assemble(self, config, outputs, *, seed, quick):
        xs = [o["pair"][0] for o in outputs.values()]
        ys = [sum(o["draws"]) for o in outputs.values()]
        return Findings(series=[Series(name="s", params={"method": "simulation"}, x=xs, y=ys, x_label="i",
                                       y_label="sum")],
                        metrics=[Metric(name="inf", params={}, value=outputs["u0"]["inf"])])

    def plot(self, result, out_dir):
        return []


EXPERIMENT = Counting()


def run(out, *, seed=0, quick=False, force=False, **overrides):
    config = EXPERIMENT.config(quick=quick).replace(**overrides)
    counts = runner.UnitCounts()
    result = runner.run_experiment(EXPERIMENT, config, seed=seed, quick=quick, out_dir=out, force=force,
                                   counts=counts)
    return result, counts


def without_elapsed(result):
    return {k: v for k, v in result.items() if k not in ("elapsed_s", "outputs_s", "compute_s")}


@pytest.fixture(autouse=True)
def _reset():
    CALLS.clear()
    FAIL_ON.clear()


def test_interrupted_run_resumes_without_recomputing(tmp_path):
    FAIL_ON.add("u3")
    with pytest.raises(RuntimeError, match="interrupted at u3"):
        run(tmp_path / "a")
    assert CALLS == ["u0", "u1", "u2", "u3"]
    FAIL_ON.clear()
    CALLS.clear()
    resumed, counts = run(tmp_path / "a")
    assert CALLS == ["u3", "u4", "u5"]  # finished units are not recomputed
    assert (counts.cached, counts.computed) == (3, 3)
    CALLS.clear()
    fresh, _ = run(tmp_path / "b")
    assert len(CALLS) == 6
    assert without_elapsed(resumed) == without_elapsed(fresh)
    assert json.loads((tmp_path / "a" / "test-counting" / "result.json").read_text())["metrics"][0]["value"] == "inf"


def test_second_run_uses_the_cache_and_force_recomputes(tmp_path):
    first, _ = run(tmp_path)
    CALLS.clear()
    second, counts = run(tmp_path)
    assert CALLS == [] and counts.cached == 6
    assert without_elapsed(first) == without_elapsed(second)
    _, counts = run(tmp_path, force=True)
    assert len(CALLS) == 6 and counts.computed == 6


def test_a_cached_rerun_reports_the_cost_of_the_run_that_computed_the_result(tmp_path):
    first, counts = run(tmp_path)
    assert counts.computed == 6 and first["compute_s"] == pytest.approx(counts.compute_s) and first["compute_s"] > 0
    second, counts = run(tmp_path)
    assert counts.cached == 6 and second["compute_s"] == first["compute_s"]  # not the rerun's own (tiny) time
    on_disk = json.loads((tmp_path / "test-counting" / "result.json").read_text())
    assert on_disk["compute_s"] == first["compute_s"]
    for path in (tmp_path / "test-counting" / ".cache").glob("*.json"):  # a cache written before times were kept
        record = json.loads(path.read_text())
        record.pop("compute_s")
        path.write_text(json.dumps(record))
    third, counts = run(tmp_path)
    assert counts.cached == 6 and counts.untimed == 6 and third["compute_s"] is None


@pytest.mark.parametrize("change", [dict(scale=2.0), dict(seed=1), dict(quick=True)])
def test_config_seed_and_quick_invalidate(tmp_path, change):
    run(tmp_path)
    CALLS.clear()
    run(tmp_path, **change)
    assert CALLS and set(CALLS) <= {f"u{i}" for i in range(6)}
    assert len(CALLS) == (3 if change.get("quick") else 6)


def test_a_source_edit_invalidates(tmp_path, monkeypatch):
    run(tmp_path)
    CALLS.clear()
    monkeypatch.setattr(cache_module, "source_hash", lambda: "edited")
    run(tmp_path)
    assert len(CALLS) == 6


def test_tree_hash_sees_any_source_edit(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    before = cache_module.tree_hash(tmp_path / "pkg")
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    edited = cache_module.tree_hash(tmp_path / "pkg")
    (tmp_path / "pkg" / "b.py").write_text("")
    added = cache_module.tree_hash(tmp_path / "pkg")
    assert len({before, edited, added}) == 3
    assert cache_module.source_hash() == cache_module.tree_hash(
        __import__("pathlib").Path(cache_module.__file__).resolve().parent.parent)


def test_torn_cache_file_is_recomputed(tmp_path):
    run(tmp_path)
    files = sorted((tmp_path / "test-counting" / ".cache").glob("*.json"))
    assert len(files) == 6
    files[0].write_text('{"key": "trunc')
    CALLS.clear()
    _, counts = run(tmp_path)
    assert len(CALLS) == 1 and counts.cached == 5


def test_unit_progress_reports_only_when_installed():
    seen = []
    assert list(unit_progress(range(3))) == [0, 1, 2]
    with reporting(lambda done, total: seen.append((done, total))):
        assert list(unit_progress(range(3))) == [0, 1, 2]
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_killed_reproduce_resumes_with_the_same_summary(tmp_path):
    """Kill `privdyn run` mid-run (SIGKILL), start it again: finished units are kept, the result is unchanged."""
    args = [sys.executable, "-m", "privdyn.cli", "run", "langevin-tightness", "--executor", "serial",
            "--set", "mc_num_runs=200000", "--set", "mc_block_size=2000", "--set", "max_num_steps=50"]
    out = tmp_path / "killed"
    cache_dir = out / "langevin-tightness" / ".cache"
    proc = subprocess.Popen([*args, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(cache_dir.glob("*.json"))) < 10:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = {p.name: p.stat().st_mtime_ns for p in cache_dir.glob("*.json")}
    assert 10 <= len(kept) < 101, "the run was not killed mid-way"
    assert not (out / "langevin-tightness" / "result.json").exists()
    done = subprocess.run([*args, "--out", str(out)], capture_output=True, text=True, check=True)
    assert f"{101 - len(kept)} computed, {len(kept)} cached" in done.stdout
    assert all((cache_dir / name).stat().st_mtime_ns == mtime for name, mtime in kept.items())
    clean = tmp_path / "clean"
    subprocess.run([*args, "--out", str(clean)], capture_output=True, text=True, check=True)
    resumed = json.loads((out / "langevin-tightness" / "result.json").read_text())
    fresh = json.loads((clean / "langevin-tightness" / "result.json").read_text())
    assert without_elapsed(resumed) == without_elapsed(fresh)
    assert np.isfinite([c["measured"] for c in fresh["checks"] if c["name"] == "simulation_renyi"]).all()
