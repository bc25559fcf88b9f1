"""The CLI and runner under misuse: unusable ``--out`` and absurd ``--seed`` exit 2 before any unit computes, pool
workers die with a killed command, concurrent runs into one folder compute each unit once, outputs follow the umask.
"""

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from privdyn.cli import main
from privdyn.experiments import registry
from privdyn.runs import runner
from privdyn.runs.cache import UnitCache

EXPERIMENT = "langevin-table1"  # quick and made of several units


@pytest.fixture
def no_compute(monkeypatch):
    """Any unit computed fails the test: a usage error must stop the command before."""

    def refuse(*args, **kwargs):
        raise AssertionError("a unit was computed before the usage error")

    monkeypatch.setattr(runner, "compute_units", refuse)


def _usage_error(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    assert status == 2, (status, out, err)
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("privdyn: error: ")
    return err


def _commands(out):
    return [["run", EXPERIMENT, "--quick", "--executor", "serial", "--out", out],
            ["reproduce", "--quick", "--only", EXPERIMENT, "--executor", "serial", "--out", out]]


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize("command", [0, 1], ids=["run", "reproduce"])
def test_unusable_out_exits_2_before_computing(capsys, tmp_path, monkeypatch, no_compute, command):
    monkeypatch.chdir(tmp_path)
    existing = tmp_path / "a-file"
    existing.write_text("keep")
    before = _files(tmp_path)
    cases = {str(existing): "exists and is not a folder", "": "empty string", "   ": "empty string",
             str(existing / "below"): "is not a folder", "/proc/privdyn-out": "cannot write in /proc"}
    for out, message in cases.items():
        err = _usage_error(capsys, *_commands(out)[command])
        assert message in err
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / EXPERIMENT).write_text("a file where the experiment's folder goes")
    before = _files(tmp_path)
    assert "exists and is not a folder" in _usage_error(capsys, *_commands(str(tmp_path / "out"))[command])
    assert _files(tmp_path) == before and existing.read_text() == "keep"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="permissions do not bind the superuser")
def test_read_only_out_exits_2(capsys, tmp_path, no_compute):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert "cannot write" in _usage_error(capsys, *_commands(str(locked / "out"))[0])
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize("seed", ["-1", str(2**63), "99999999999999999999", "1.5", "abc", "nan"])
@pytest.mark.parametrize("command", [0, 1], ids=["run", "reproduce"])
def test_absurd_seed_exits_2(capsys, tmp_path, no_compute, seed, command):
    err = _usage_error(capsys, *_commands(str(tmp_path / "out"))[command], "--seed", seed)
    assert "--seed" in err
    assert not (tmp_path / "out").exists()


def test_largest_seed_runs(capsys, tmp_path):
    status = main([*_commands(str(tmp_path))[0], "--seed", str(2**63 - 1)])
    assert status == 0, capsys.readouterr()


def test_outputs_follow_the_umask(capsys, tmp_path):
    previous = os.umask(0o027)
    try:
        assert main(_commands(str(tmp_path))[1]) == 0, capsys.readouterr()
    finally:
        os.umask(previous)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    kinds = {p.suffix for p in files}
    assert {".json", ".csv", ".png", ".md", ".lock"} <= kinds, kinds
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~0o027, path


class _CountingExperiment:
    """A registered experiment whose units sleep a little and are counted (shared by threads of this process)."""

    def __init__(self, name):
        self.inner = registry.get(name)
        self.calls = []
        self.lock = threading.Lock()

    def __getattr__(self, attribute):
        return getattr(self.inner, attribute)

    def compute_unit(self, config, unit, seed):
        with self.lock:
            self.calls.append(unit.key)
        time.sleep(0.05)
        return self.inner.compute_unit(config, unit, seed)


def test_concurrent_runs_compute_each_unit_once(tmp_path):
    experiment = _CountingExperiment(EXPERIMENT)
    config = experiment.config(quick=True)
    outputs, errors = [], []

    def one_run():
        cache = UnitCache(tmp_path / ".cache", experiment=EXPERIMENT, seed=0, quick=True)
        try:
            outputs.append(runner.compute_units(experiment, config, seed=0, quick=True, cache=cache))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one_run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    keys = [u.key for u in experiment.units(config)]
    assert sorted(experiment.calls) == sorted(keys)  # every unit computed exactly once over the three runs
    assert outputs[0] == outputs[1] == outputs[2] and list(outputs[0]) == keys


def test_concurrent_commands_share_the_work(tmp_path):
    command = [sys.executable, "-m", "privdyn.cli", *_commands(str(tmp_path))[0]]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    texts = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), texts
    computed = [int(out.split(" computed")[0].rsplit(" ", 1)[1]) for out, _ in texts]
    cached = [int(out.split(" cached")[0].rsplit(" ", 1)[1]) for out, _ in texts]
    units = len(registry.get(EXPERIMENT).units(registry.get(EXPERIMENT).config(quick=True)))
    assert sum(computed) == units and all(c + k == units for c, k in zip(computed, cached, strict=True))


def _descendants(pid: int) -> list[int]:
    psutil = pytest.importorskip("psutil")
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _alive(pid: int) -> bool:
    psutil = pytest.importorskip("psutil")
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
@pytest.mark.parametrize("executor", ["local", "dask-local"])
def test_workers_die_with_a_killed_command(tmp_path, executor):
    """The local pool's and a local Dask cluster's workers end within 5 s of a SIGKILL of the command."""
    if executor == "dask-local":
        pytest.importorskip("distributed")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "privdyn.cli", "reproduce", "--quick", "--only", "langevin-tightness",
               "--set", "mc_num_runs=400000000", "--executor", executor, "--out", str(out)]
    cli = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and cli.poll() is None:
            workers = _descendants(cli.pid)
            if len(workers) >= 2:  # the pool's workers are up (with spawn, also a resource tracker)
                break
            time.sleep(0.2)
        assert cli.poll() is None and workers, "the command ended or started no worker"
        time.sleep(2.0)  # let the workers import and start computing
        workers = _descendants(cli.pid)
        cli.send_signal(signal.SIGKILL)
        cli.wait(10)
        time.sleep(5.0)
        survivors = [pid for pid in workers if _alive(pid)]
        assert survivors == [], f"workers alive 5 s after the command was killed: {survivors}"
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
        for pid in workers:  # clean up after a failure (only the processes this test started)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_plan_outputs_follow_the_umask(capsys, tmp_path):
    out = tmp_path / "plan"
    args = ["plan", "dpgd", "--n", "200", "--d", "5", "--spectrum", "uniform", "--target-norm", "1", "--label-noise",
            "0.5", "--epsilon", "2", "--delta", "1e-5", "--out", str(out)]
    previous = os.umask(0o027)
    try:
        assert main(args) == 0, capsys.readouterr()
    finally:
        os.umask(previous)
    files = sorted(out.iterdir())
    assert [p.name for p in files] == ["plan.json", "plan.png"]  # no temporary left behind
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~0o027, path


@pytest.mark.parametrize("directory", ["", "  "])
def test_report_with_an_empty_folder_exits_2_and_writes_nothing(capsys, tmp_path, monkeypatch, directory):
    monkeypatch.chdir(tmp_path)
    err = _usage_error(capsys, "report", directory)
    assert "empty string" in err
    assert list(tmp_path.iterdir()) == []
