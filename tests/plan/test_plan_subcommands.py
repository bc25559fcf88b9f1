"""``privdyn plan FAMILY``: one sub-command per family, its own options and help, the same outputs as before.

``plan_cli_recorded.json`` holds what ``privdyn plan`` printed and wrote, for one invocation of each family and a few
refusals, when it was one command taking every family's options (recorded from that version by running this file:
``python tests/plan/test_plan_subcommands.py --record tests/plan/plan_cli_recorded.json``). The sub-commands must give
the same exit status, the same text, the same JSON and the same files. Since the recording the privacy statement
gained what an attacker can do (``membership`` or ``membership_reason``, and the sentence "Membership inference: ..."
at the end of its text): :func:`_before_membership` removes them from the new outputs before the comparison. The
``dpsgd`` entry was recorded again (without membership) when the amplified bound gained the two-step block bound: its
lambda-CGD alternative's noise multiplier fell from 2.3108 to 2.2789 (and its noise and risk with it); nothing else
in it changed.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from privdyn.cli import main

RECORDED = Path(__file__).with_name("plan_cli_recorded.json")
OUT = "@OUT"  # replaced by a fresh folder; printed paths under it are recorded as <OUT>

_DPGD = ["dpgd", "--n", "100", "--d", "5", "--spectrum", "uniform", "--target-norm", "1", "--label-noise", "0.5",
         "--epsilon", "2", "--delta", "1e-5", "--schedule", "polynomial"]
_LANGEVIN = ["langevin", "--n", "1000", "--d", "10", "--strong-convexity", "1", "--smoothness", "2", "--lipschitz",
             "1", "--epsilon", "1", "--delta", "1e-5"]
_HSGD = ["hsgd", "--n", "50", "--d", "20", "--label-noise", "0.5", "--ridge", "0.1", "--renyi-order", "2",
         "--rdp-epsilon", "2"]
_DPSGD = ["dpsgd", "--n", "1000", "--sampling-rate", "0.05", "--epochs", "0.5", "--epsilon", "1", "--delta", "1e-5",
          "--sampler", "poisson", "--neighboring", "add_remove", "--strategy", "independent", "--strategy",
          "lambda_cgd:0.5", "--clip", "2"]
CASES: dict[str, list[str]] = {
    "dpgd": [*_DPGD, "--json"],
    "dpgd_rho_text": ["dpgd", "--n", "100", "--d", "5", "--rho", "1", "--label-noise", "0.5", "--schedule", "constant",
                      "--schedule", "harmonic"],
    "langevin_text": [*_LANGEVIN[:-4], "--zcdp", "0.5", "--sensitivity", "3"],
    "langevin_out": [*_LANGEVIN, "--out", OUT, "--pareto", "3", "--verify", "3", "--seed", "4", "--quiet"],
    "hsgd": [*_HSGD, "--spectrum", "power_law:0.5", "--target-norm", "2", "--json"],
    "hsgd_text": _HSGD,
    "dpsgd": [*_DPSGD, "--json"],
    "dpsgd_text": ["dpsgd", "--n", "1000", "--batch-size", "50", "--num-steps", "10", "--epsilon", "1", "--delta",
                   "1e-5", "--sampler", "fixed_size", "--neighboring", "replace_one", "--strategy", "independent"],
    "unknown_family": ["sgd", "--n", "10"],
    "dpsgd_without_sampler": ["dpsgd", "--n", "1000", "--batch-size", "10", "--num-steps", "5", "--epsilon", "2",
                              "--delta", "1e-5", "--neighboring", "add_remove"],
    "langevin_bad_delta": [*_LANGEVIN[:-1], "1", "--out", OUT],
    "dpgd_bad_pareto": [*_DPGD, "--pareto", "1"],
}
VOLATILE = ("elapsed_s",)
"""Keys whose value is a wall-clock time, not a result: never compared."""
_MEMBERSHIP_SENTENCE = re.compile(r" Membership inference: [^\n]*")


def _before_membership(value: Any) -> Any:
    """``value`` without what the privacy statement gained after the recording (the module docstring)."""
    if isinstance(value, dict):
        return {k: _before_membership(v) for k, v in value.items() if k not in ("membership", "membership_reason")}
    if isinstance(value, list):
        return [_before_membership(v) for v in value]
    if isinstance(value, str):
        return _MEMBERSHIP_SENTENCE.sub("", value)
    return value


def run_case(args: list[str], out: Path) -> dict[str, Any]:
    """``privdyn plan ARGS`` in this process: exit status, stdout, stderr, and what it wrote under ``out``."""
    argv = ["plan", *(str(out) if a == OUT else a for a in args)]
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = main(argv)
    record: dict[str, Any] = {"status": status, "stdout": stdout.getvalue().replace(str(out), "<OUT>"),
                              "stderr": stderr.getvalue().replace(str(out), "<OUT>"),
                              "files": sorted(p.name for p in out.iterdir()) if out.exists() else None}
    if (out / "plan.json").exists():
        record["plan_json"] = json.loads((out / "plan.json").read_text())
    return record


def _same(recorded: Any, now: Any, where: str) -> None:
    """Equal, floats to 1e-12 relative (the last bits of a float may differ between machines), times ignored."""
    assert type(recorded) is type(now), f"{where}: {recorded!r} != {now!r}"
    if isinstance(recorded, dict):
        assert recorded.keys() == now.keys(), f"{where}: keys {sorted(recorded.keys() ^ now.keys())}"
        for key in recorded:
            if key not in VOLATILE:
                _same(recorded[key], now[key], f"{where}.{key}")
    elif isinstance(recorded, list):
        assert len(recorded) == len(now), f"{where}: {len(recorded)} != {len(now)} entries"
        for index, (a, b) in enumerate(zip(recorded, now, strict=True)):
            _same(a, b, f"{where}[{index}]")
    elif isinstance(recorded, float):
        assert math.isclose(recorded, now, rel_tol=1e-12, abs_tol=1e-300), f"{where}: {recorded!r} != {now!r}"
    else:
        assert recorded == now, f"{where}: {recorded!r} != {now!r}"


@pytest.mark.parametrize("case", list(CASES))
def test_the_outputs_are_those_of_the_single_command(case: str, tmp_path: Path) -> None:
    recorded = json.loads(RECORDED.read_text())[case]
    now = run_case(CASES[case], tmp_path / "out")
    if now["stdout"].startswith("{"):
        now["stdout"] = json.dumps(_before_membership(json.loads(now["stdout"])))
    now = _before_membership(now)
    assert now["status"] == recorded["status"] and now["stderr"] == recorded["stderr"], now["stderr"]
    assert now["files"] == recorded["files"]
    _same(recorded.get("plan_json"), now.get("plan_json"), "plan.json")
    if now["stdout"].startswith("{"):
        _same(json.loads(recorded["stdout"]), json.loads(now["stdout"]), "stdout")
    else:
        assert now["stdout"] == recorded["stdout"]


OWN = {  # each family's options besides those of every plan: the keywords of privdyn.plan.<family> it offers
    "dpgd": ["--n", "--d", "--spectrum", "--target-norm", "--target-exponent", "--label-noise", "--epsilon",
             "--delta", "--rho", "--zcdp", "--schedule", "--data", "--label-column", "--public-stats",
             "--planning-share", "--feature-norm-bound", "--label-bound"],
    "langevin": ["--n", "--d", "--strong-convexity", "--smoothness", "--lipschitz", "--sensitivity", "--epsilon",
                 "--delta", "--zcdp"],
    "hsgd": ["--n", "--d", "--spectrum", "--target-norm", "--label-noise", "--ridge", "--renyi-order",
             "--rdp-epsilon"],
    "dpsgd": ["--n", "--batch-size", "--sampling-rate", "--num-steps", "--epochs", "--epsilon", "--delta",
              "--sampler", "--samplers", "--neighboring", "--strategy", "--clip"],
}
EVERY_PLAN = ["--json", "--out", "--verify", "--seed", "--pareto", "--quiet", "--help"]
_KEYWORD = {"--schedule": "schedules", "--strategy": "strategies", "--sampling-rate": "batch_size",
            "--epochs": "num_steps"}  # the option -> the planner keyword it gives


def _help(family: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["plan", family, "--help"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("family", list(OWN))
def test_the_help_lists_the_family_options_and_only_those(family: str, capsys: pytest.CaptureFixture[str]) -> None:
    import privdyn.plan

    text = _help(family, capsys)
    listed = re.findall(r"^  (--[a-z-]+)", text, flags=re.MULTILINE)
    assert listed == OWN[family] + EVERY_PLAN, listed
    keywords = inspect.signature(getattr(privdyn.plan, family)).parameters
    for option in OWN[family]:  # each one is read by the family's planner
        assert _KEYWORD.get(option, option[2:].replace("-", "_")) in keywords, option
    for line in re.findall(r"^  --[a-z-]+ .*$", text, flags=re.MULTILINE):  # each with a description
        assert len(line.split(maxsplit=2)) == 3 or line.strip() in ("--json", "--quiet", "--public-stats"), line


def test_the_help_of_a_family_loads_no_numerical_library() -> None:
    script = ("import sys\nfrom privdyn.cli import main\nassert main(['plan', 'dpsgd', '--help']) == 0\n"
              "print(' '.join(sorted(sys.modules)), file=sys.stderr)")
    loaded = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stderr
    assert not {"numpy", "scipy", "matplotlib", "dp_accounting", "torch"} & set(loaded.split())


def test_the_group_help_lists_the_families(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--help"]) == 0
    text = capsys.readouterr().out
    assert re.findall(r"^  (\w+) {2,}\S", text, flags=re.MULTILINE) == list(OWN)
    assert "--n" not in text


def _words(text: str) -> str:
    """Help text without its layout (the wrapping depends on the terminal's width)."""
    return re.sub(r"-\s+", "-", " ".join(text.split()))


@pytest.mark.parametrize("family", list(OWN))
def test_docs_show_each_family_help(family: str, capsys: pytest.CaptureFixture[str]) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "plan.md").read_text()
    shown = re.search(rf"```text\n\$ privdyn plan {family} --help\n(.*?)```", page, flags=re.DOTALL)
    assert shown is not None, f"docs/plan.md shows no `privdyn plan {family} --help`"
    assert _words(shown.group(1)) == _words(_help(family, capsys))


@pytest.mark.parametrize(("args", "owner"), [
    (["langevin", "--planning-share", "0.1"], "dpgd"),
    (["dpsgd", "--spectrum", "identity"], "dpgd and hsgd"),
    (["hsgd", "--epochs", "1"], "dpsgd"),
    (["dpgd", "--n", "10", "--ridge=1"], "hsgd"),
    (["dpgd", "--strong-convexity"], "langevin"),
])
def test_an_option_of_another_family_exits_2_naming_both(args: list[str], owner: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["plan", *args, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    option = args[-1].split("=")[0] if args[-1].startswith("--") else args[-2]
    assert captured.out == "" and len(lines) == 1, captured.err
    assert f"{option} does not apply to `privdyn plan {args[0]}` (it is an option of {owner})" in lines[0]
    assert not out.exists()


def test_an_option_of_no_family_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "langevin", "--nope", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "No such option: --nope" in captured.err


@pytest.mark.parametrize("args", [[], ["--n", "10"], ["--json"]])
def test_a_missing_family_exits_2_naming_the_families(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "`privdyn plan` needs a FAMILY: dpgd, langevin, hsgd, dpsgd" in captured.err


def test_the_family_may_follow_options(capsys: pytest.CaptureFixture[str]) -> None:
    """As with the single command, ``privdyn plan --json --n 1000 langevin ...`` is ``privdyn plan langevin ...``."""
    assert main(["plan", *_LANGEVIN, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["plan", "--json", "--n", "1000", "--d=10", "langevin", *_LANGEVIN[5:]]) == 0
    second = json.loads(capsys.readouterr().out)
    _same(first, second, "stdout")


if __name__ == "__main__":  # record the outputs of the installed privdyn: --record FILE
    import tempfile

    if sys.argv[1:2] != ["--record"] or len(sys.argv) != 3:
        sys.exit("usage: python tests/plan/test_plan_subcommands.py --record FILE")
    with tempfile.TemporaryDirectory() as folder:
        records = {name: run_case(args, Path(folder) / name) for name, args in CASES.items()}
    Path(sys.argv[2]).write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
