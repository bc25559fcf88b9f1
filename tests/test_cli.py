"""The command-line contract: verbs, exit codes, one-line errors that write nothing."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from privdyn.cli import main


def run_cli(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_list(capsys):
    status, out, _ = run_cli(capsys, "list")
    assert status == 0
    names = [line.split("\t")[0] for line in out.strip().splitlines()]
    assert {"langevin-fig1", "langevin-tightness", "langevin-table1"} <= set(names)
    assert all(len(line.split("\t")) == 3 for line in out.strip().splitlines())
    status, out, _ = run_cli(capsys, "list", "--json")
    assert status == 0 and {row["name"] for row in json.loads(out)} == set(names)
    opt_in = {row["name"] for row in json.loads(out) if row["opt_in"]}
    assert opt_in == {"sklearn-regression", "sklearn-classification"}


def test_list_marks_the_opt_in_experiments(capsys):
    from privdyn.experiments import registry

    _, out, _ = run_cli(capsys, "list")
    lines = {line.split("\t")[0]: line for line in out.strip().splitlines()}
    assert set(registry.OPT_IN) <= set(lines)
    assert all("[opt-in: runs only when named" in lines[name] for name in registry.OPT_IN)
    assert not any("[opt-in" in lines[name] for name in registry.NAMES)


def test_show_prints_the_full_config(capsys):
    status, out, _ = run_cli(capsys, "show", "langevin-tightness")
    full = json.loads(out)
    status_q, out_q, _ = run_cli(capsys, "show", "langevin-tightness", "--quick")
    quick = json.loads(out_q)
    assert status == status_q == 0
    assert full.keys() == quick.keys() and quick["mc_num_runs"] < full["mc_num_runs"]


BAD_INVOCATIONS = {
    "unknown --set key": ["run", "langevin-fig1", "--set", "nope=1"],
    "wrong-typed value": ["run", "langevin-fig1", "--set", "n=abc"],
    "step_size >= 1/smoothness": ["run", "langevin-fig1", "--set", "step_size=0.3"],
    "unknown flag": ["run", "langevin-fig1", "--bogus"],
    "non-integer --seed": ["run", "langevin-fig1", "--seed", "x"],
    "unknown command": ["frobnicate"],
    "missing argument": ["run"],
    "unknown experiment": ["run", "langevin-fig99"],
    "key given twice": ["run", "langevin-fig1", "--set", "n=10", "--set", "n=20"],
    "null where not allowed": ["run", "langevin-fig1", "--set", "n=null"],
    "unknown executor": ["run", "langevin-fig1", "--executor", "gpu"],
    "--only matches nothing": ["reproduce", "--only", "hsgd-zzz"],
    "negative seed": ["run", "langevin-fig1", "--seed", "-3"],
    "malformed JSON list": ["run", "langevin-fig1", "--set", "renyi_orders=[2,8"],
}


@pytest.mark.parametrize("args", BAD_INVOCATIONS.values(), ids=BAD_INVOCATIONS.keys())
def test_bad_arguments_exit_2_with_one_line_and_write_nothing(capsys, tmp_path, args):
    out_dir = tmp_path / "out"
    extra = ["--out", str(out_dir)] if args[0] in ("run", "reproduce") and len(args) > 1 else []
    status, out, err = run_cli(capsys, *args, *extra)
    assert status == 2, (status, out, err)
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("privdyn: error:")
    assert not out_dir.exists()


def test_malformed_json_is_named_malformed(capsys, tmp_path):
    _, _, err = run_cli(capsys, "run", "langevin-fig1", "--set", "renyi_orders=[2,8", "--out", str(tmp_path / "o"))
    assert "--set renyi_orders: the value '[2,8' is malformed JSON" in err and "must be a number" not in err


def test_step_size_message_names_the_parameter_and_range(capsys, tmp_path):
    _, _, err = run_cli(capsys, "run", "langevin-fig1", "--set", "step_size=0.3", "--out", str(tmp_path / "o"))
    assert "step_size must be < 1/smoothness = 0.25" in err and "0.3" in err


def test_run_writes_the_documented_outputs(capsys, tmp_path):
    status, out, err = run_cli(capsys, "run", "langevin-fig1", "--out", str(tmp_path), "--seed", "4",
                               "--set", "max_num_steps=200", "--strict")
    assert status == 0, err
    target = tmp_path / "langevin-fig1"
    assert sorted(p.name for p in target.iterdir()) == [".cache", "figure.png", "figure.svg", "result.json",
                                                         "series.csv"]
    result = json.loads((target / "result.json").read_text())
    assert result["seed"] == 4 and result["quick"] is False and result["config"]["max_num_steps"] == 200
    assert result["artifacts"] == ["figure.png", "figure.svg", "series.csv"]
    for key in ("experiment", "title", "paper", "config", "series", "tables", "metrics", "checks", "environment",
                "elapsed_s", "outputs_s"):
        assert key in result
    assert isinstance(result["outputs_s"], float) and result["outputs_s"] > 0
    assert result["series"][0]["params"]["renyi_order"] == 10  # integer-valued parameters are JSON integers
    for check in result["checks"]:
        assert set(check) == {"name", "kind", "claim", "expected", "measured", "tolerance", "standard_error", "margin",
                              "passed", "note"}
    # paper claims whose K values exceed max_num_steps are restricted; the 5-digit table needs K up to 1000
    assert (target / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (target / "figure.svg").read_text().lstrip().startswith("<?xml")


def test_overrides_that_change_the_paper_setting_make_claims_not_applicable(capsys, tmp_path):
    status, _, _ = run_cli(capsys, "run", "langevin-fig1", "--out", str(tmp_path), "--set", "noise_scale=0.05",
                           "--set", "renyi_orders=2", "--executor", "serial")
    assert status == 0
    result = json.loads((tmp_path / "langevin-fig1" / "result.json").read_text())
    claims = [c for c in result["checks"] if c["kind"] == "paper_claim" and c["name"].startswith("asymptote")]
    assert claims and all(c["passed"] is None and c["note"] for c in claims)
    assert all(c["passed"] is not False for c in result["checks"] if c["kind"] == "invariant")


def test_reproduce_writes_summaries(capsys, tmp_path):
    status, out, err = run_cli(capsys, "reproduce", "--quick", "--only", "langevin-fig1", "--only", "langevin-table1",
                               "--out", str(tmp_path), "--strict", "--executor", "serial")
    assert status == 0, out + err
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [e["experiment"] for e in summary["experiments"]] == ["langevin-fig1", "langevin-table1"]
    assert summary["checks"] and set(summary["checks"][0]) == {"experiment", "check", "kind", "passed", "expected",
                                                               "measured", "note"}
    assert (tmp_path / "summary.md").read_text().startswith("# privdyn reproduce")
    assert not (tmp_path / "langevin-tightness").exists()
    # a second reproduce reuses every cached unit and writes the same summary except elapsed fields
    status, out, _ = run_cli(capsys, "reproduce", "--quick", "--only", "langevin-fig1", "--only", "langevin-table1",
                             "--out", str(tmp_path), "--executor", "serial")
    assert status == 0 and " 0 computed" in out
    again = json.loads((tmp_path / "summary.json").read_text())
    assert again["checks"] == summary["checks"]
    timing = ("elapsed_s", "outputs_s")
    strip = [{k: v for k, v in e.items() if k not in timing} for e in summary["experiments"]]
    assert strip == [{k: v for k, v in e.items() if k not in timing} for e in again["experiments"]]
    assert all(isinstance(e["outputs_s"], float) and e["outputs_s"] > 0 for e in again["experiments"])


@pytest.mark.skipif(shutil.which("privdyn") is None, reason="the privdyn console script is not installed")
def test_console_script_exit_codes(tmp_path):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    bad = subprocess.run(["privdyn", "run", "langevin-fig1", "--seed", "x"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, check=False)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())
    ok = subprocess.run([sys.executable, "-m", "privdyn.cli", "list"], capture_output=True, text=True, env=env,
                        check=False)
    assert ok.returncode == 0 and "langevin-fig1" in ok.stdout


def test_version_and_debug_in_help(capsys):
    import privdyn

    status, out, _ = run_cli(capsys, "--version")
    assert status == 0 and out.strip() == f"privdyn {privdyn.__version__}"
    status, out, _ = run_cli(capsys, "--help")
    assert status == 0 and "--debug" in out and "--version" in out and "report" in out


def test_reproduce_seed_set_force_like_run(capsys, tmp_path):
    # max_num_steps is a key of langevin-fig1 and langevin-tightness, not of langevin-table1
    args = ["reproduce", "--quick", "--only", "langevin-*", "--out", str(tmp_path), "--executor", "serial",
            "--seed", "3", "--set", "max_num_steps=200"]
    status, out, err = run_cli(capsys, *args)
    assert status == 0, err
    results = {name: json.loads((tmp_path / name / "result.json").read_text())
               for name in ("langevin-fig1", "langevin-tightness", "langevin-table1")}
    assert all(r["seed"] == 3 for r in results.values())
    assert results["langevin-fig1"]["config"]["max_num_steps"] == 200
    assert results["langevin-tightness"]["config"]["max_num_steps"] == 200
    assert "max_num_steps" not in results["langevin-table1"]["config"]
    status, out, _ = run_cli(capsys, *args)
    assert status == 0 and out.count(" 0 computed") == 3
    status, out, _ = run_cli(capsys, *args, "--force")
    assert status == 0 and out.count(" 0 cached") == 3


REPRODUCE_BAD = {
    "a key of no selected experiment": ["--only", "langevin-table1", "--set", "max_num_steps=10"],
    "a value one experiment rejects": ["--only", "langevin-*", "--set", "step_size=0.3"],
    "negative seed": ["--only", "langevin-table1", "--seed", "-1"],
    "malformed --set": ["--only", "langevin-table1", "--set", "n"],
}


@pytest.mark.parametrize("args", REPRODUCE_BAD.values(), ids=REPRODUCE_BAD.keys())
def test_reproduce_bad_overrides_exit_2(capsys, tmp_path, args):
    status, out, err = run_cli(capsys, "reproduce", "--quick", *args, "--out", str(tmp_path / "out"))
    assert status == 2 and len(err.strip().splitlines()) == 1 and err.startswith("privdyn: error:"), err
    assert not (tmp_path / "out").exists()


def test_reproduce_override_error_names_the_experiment(capsys, tmp_path):
    _, _, err = run_cli(capsys, "reproduce", "--only", "langevin-fig1", "--set", "step_size=0.3", "--out",
                        str(tmp_path))
    assert "langevin-fig1: step_size must be < 1/smoothness" in err
    _, _, err = run_cli(capsys, "reproduce", "--only", "langevin-table1", "--set", "max_num_steps=10", "--out",
                        str(tmp_path))
    assert "'max_num_steps'" in err and "langevin-table1" in err
