"""``privdyn plan``: exit status, one line on stderr, one JSON document, --out writes plan.json and plan.png."""

import json

import dp_accounting
import numpy as np
import pytest
from dp_accounting import rdp

from privdyn.cli import main

DPGD = ["plan", "dpgd", "--n", "1000", "--d", "20", "--spectrum", "uniform", "--target-norm", "1", "--label-noise",
        "0.5", "--epsilon", "2", "--delta", "1e-5", "--schedule", "polynomial"]


def test_json_is_one_document_and_the_guarantee_checks_out(capsys) -> None:
    assert main([*DPGD, "--json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)  # exactly one document
    assert out.strip().count("\n") == 0
    accountant = rdp.RdpAccountant()
    accountant.compose(dp_accounting.ZCDpEvent(doc["zcdp"]))
    assert accountant.get_epsilon(doc["delta"]) <= 2.0
    assert doc["schedule"] == "polynomial" and len(doc["step_sizes"]) == 1000


def test_out_writes_plan_json_and_png_with_the_pareto_front(tmp_path, capsys) -> None:
    out = tmp_path / "plan"
    assert main([*DPGD, "--out", str(out), "--pareto", "3", "--verify", "4"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["plan.json", "plan.png"]
    doc = json.loads((out / "plan.json").read_text())
    front = doc["pareto_front"]
    assert front["budget_name"] == "epsilon" and len(front["budgets"]) == 3
    assert np.all(np.diff(front["predicted"]) < 0)  # more budget, less risk
    assert doc["verification"]["num_runs"] == 4
    assert (out / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "verification" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "fragment"), [
    (["plan", "dpgd", "--n", "0", "--d", "3", "--label-noise", "1", "--epsilon", "1", "--delta", "1e-5"],
     "n must be an integer >= 1"),
    (["plan", "dpgd", "--n", "10", "--d", "3", "--label-noise", "1", "--epsilon", "0", "--delta", "1e-5"],
     "epsilon must be > 0"),
    (["plan", "dpgd", "--n", "10", "--d", "3", "--label-noise", "1", "--epsilon", "1", "--delta", "1"],
     "delta must be in (0.0, 1.0)"),
    (["plan", "sgd", "--n", "10"], "FAMILY must be one of"),
    (["plan", "dpgd", "--n", "10", "--d", "3", "--spectrum", "nope", "--label-noise", "1", "--epsilon", "1",
      "--delta", "1e-5"], "spectrum must be"),
    (["plan", "dpgd", "--n", "10", "--d", "3", "--ridge", "1", "--label-noise", "1", "--epsilon", "1",
      "--delta", "1e-5"], "--ridge does not apply"),
    (["plan", "dpgd", "--n", "ten"], "--n"),
    (["plan", "dpgd", "--data", "missing.csv", "--epsilon", "1", "--delta", "1e-5", "--public-stats"],
     "no such file"),
    (["plan", "hsgd", "--n", "200", "--d", "50", "--label-noise", "0.5", "--ridge", "0.1", "--renyi-order", "2",
      "--rdp-epsilon", "1e-12"], "smallest surrogate rdp_epsilon found"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(args, fragment, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main([*args, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], captured.err
    assert not out.exists()


def test_data_without_declaration_exits_2(tmp_path, capsys) -> None:
    path = tmp_path / "d.npy"
    np.save(path, np.random.default_rng(0).standard_normal((50, 4)))
    assert main(["plan", "dpgd", "--data", str(path), "--epsilon", "1", "--delta", "1e-5", "--out",
                 str(tmp_path / "o")]) == 2
    assert "refused unless" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_langevin_and_hsgd_from_the_cli(capsys) -> None:
    assert main(["plan", "langevin", "--n", "1000", "--d", "10", "--strong-convexity", "1", "--smoothness", "2",
                 "--lipschitz", "1", "--epsilon", "1", "--delta", "1e-5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["guarantee"] == "bound" and doc["epsilon"] <= 1.0 and doc["num_steps"] >= 1
    assert main(["plan", "hsgd", "--n", "150", "--d", "100", "--label-noise", "0.5", "--ridge", "0.1",
                 "--renyi-order", "2", "--rdp-epsilon", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["guarantee"] == "surrogate" and doc["epsilon"] is None
    assert doc["privacy_statement"]["is_dp_guarantee"] is False
    assert "NOT a differential-privacy guarantee" in doc["privacy_statement"]["text"]
