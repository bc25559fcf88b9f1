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


DPSGD = ["plan", "dpsgd", "--n", "1000", "--epsilon", "2", "--delta", "1e-5", "--sampler", "poisson",
         "--neighboring", "add_remove", "--strategy", "independent"]
MISSING_OPTION = ["plan", "dpsgd", "--n", "1000", "--batch-size", "10", "--epsilon", "2", "--delta", "1e-5"]


@pytest.mark.parametrize(("args", "fragment"), [
    (["plan", "dpgd", "--n", "1000000000000", "--d", "3", "--label-noise", "1", "--epsilon", "1", "--delta", "1e-5"],
     "--n 1000000000000 cannot fit in memory"),
    (["plan", "dpgd", "--n", "100", "--d", "1000000000000", "--label-noise", "1", "--epsilon", "1", "--delta",
      "1e-5"], "--d must be an integer from 1 to"),
    ([*DPSGD[:-2], "--batch-size", "1", "--num-steps", "1000000000000"], "--num-steps must be an integer from 1 to"),
    (MISSING_OPTION, "`privdyn plan dpsgd` needs --num-steps (or --epochs)"),
    ([*MISSING_OPTION, "--num-steps", "5"], "`privdyn plan dpsgd` needs --sampler (fixed_size, poisson, shuffle"),
    (["plan", "hsgd", "--n", "150", "--d", "100", "--ridge", "0.1", "--renyi-order", "2"],
     "needs --label-noise, --rdp-epsilon"),
    ([*DPSGD, "--batch-size", "10", "--sampling-rate", "0.01", "--num-steps", "5"],
     "give --batch-size or --sampling-rate, not both"),
    ([*DPSGD, "--batch-size", "10", "--num-steps", "5", "--epochs", "1"], "give --num-steps or --epochs, not both"),
    ([*DPSGD, "--sampling-rate", "0.0125", "--num-steps", "5"], "--sampling-rate x --n must be a whole batch size"),
    ([*DPSGD, "--sampling-rate", "0", "--num-steps", "5"], "--sampling-rate must be in (0.0, 1.0]"),
    ([*DPSGD, "--batch-size", "10", "--epochs", "0"], "--epochs must be > 0"),
    (["plan", "dpgd", "--n", "100", "--d", "3", "--epochs", "2", "--label-noise", "1", "--epsilon", "1", "--delta",
      "1e-5"], "--epochs does not apply to `privdyn plan dpgd`"),
])
def test_more_bad_input_exits_2_with_one_line(args, fragment, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main([*args, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1 and fragment in lines[0], captured.err
    assert "keyword-only" not in captured.err and "MemoryError" not in captured.err
    assert not out.exists()


@pytest.mark.parametrize("family", ["dpgd", "langevin", "hsgd", "dpsgd"])
def test_the_options_an_error_offers_all_exist(family, capsys) -> None:
    import typer

    from privdyn.cli import app

    command = typer.main.get_command(app).commands["plan"].commands[family]  # type: ignore[attr-defined]
    real = {opt for param in command.params for opt in getattr(param, "opts", ())}
    bad = "--lipschitz" if family != "langevin" else "--ridge"
    assert main(["plan", family, bad, "1"]) == 2
    err = capsys.readouterr().err
    offered = err.split("its options are ", 1)[1].rstrip(".\n").split(", ")
    assert offered and set(offered) <= real, set(offered) - real
    assert "--rng" not in offered


def test_epochs_and_sampling_rate_give_the_sizes(capsys) -> None:
    assert main([*DPSGD, "--sampling-rate", "0.01", "--epochs", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["inputs"]["batch_size"] == 10 and doc["inputs"]["num_steps"] == 200
    assert main([*DPSGD, "--batch-size", "10", "--num-steps", "200", "--json"]) == 0
    same = json.loads(capsys.readouterr().out)
    assert same["noise_multiplier"] == doc["noise_multiplier"]


@pytest.mark.parametrize(("text", "fragment"), [
    ("a,b,y\n1,2,3\n4,nan,5\n6,7,8\n", "got nan in column 1 ('b'), row 2 (line 3 of the file)"),
    ("a,b,y\n1,2,3\n4,x,5\n6,7,8\n", "got 'x' in column 1 ('b'), row 2 (line 3 of the file)"),
    ("1,2,3\n4,5,6\n7,8,inf\n", "got inf in column 2, row 3 (line 3 of the file)"),
    ("a,b,y\n1,2,3\n\n4,5\n6,7,8\n", "row 2 (line 4 of the file) has 2 values; every row must have 3"),
])
def test_csv_errors_name_the_row_and_the_column(text, fragment, tmp_path, capsys) -> None:
    path = tmp_path / "d.csv"
    path.write_text(text)
    assert main(["plan", "dpgd", "--data", str(path), "--public-stats", "--epsilon", "1", "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and fragment in err, err
