"""The progress display: drawn on stderr on a terminal, never with --quiet or when output is not a terminal."""

import json
import subprocess
import sys

from privdyn.cli import main

PLAN = ["plan", "dpsgd", "--n", "1000", "--batch-size", "10", "--num-steps", "50", "--epsilon", "2", "--delta",
        "1e-5", "--sampler", "poisson", "--neighboring", "add_remove", "--strategy", "independent"]


def test_output_that_is_not_a_terminal_carries_no_progress_noise() -> None:
    done = subprocess.run([sys.executable, "-c", "import sys; from privdyn.cli import main; sys.exit(main())",
                           *PLAN, "--json"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "\x1b" not in done.stdout and "\r" not in done.stdout
    assert done.stdout.count("\n") == 1  # one JSON document, nothing else


def _pretend_terminal(monkeypatch):
    """stdout and stderr claim to be terminals (as on an interactive shell); called in the test body, where
    sys.stdout and sys.stderr are capsys's streams."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


def test_a_terminal_shows_progress_on_stderr_and_quiet_turns_it_off(monkeypatch, capsys) -> None:
    _pretend_terminal(monkeypatch)
    assert main([*PLAN, "--json"]) == 0
    shown = capsys.readouterr()
    assert "plan dpsgd" in shown.err  # the display, drawn on stderr
    assert "\x1b" not in shown.out and shown.out.count("\n") == 1  # stdout is the JSON document alone
    assert main([*PLAN, "--json", "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == ""
    first, second = json.loads(shown.out), json.loads(quiet.out)
    first["search"].pop("elapsed_s"), second["search"].pop("elapsed_s")
    assert first == second


def test_bench_shows_progress_and_quiet_turns_it_off(monkeypatch, capsys, tmp_path) -> None:
    _pretend_terminal(monkeypatch)
    (tmp_path / "bench_x.py").write_text(
        "from privdyn.benchmarking import Benchmark\n"
        "BENCHMARKS = (Benchmark(name='x', description='d', candidate_name='c', reference_name='r', "
        "setup=lambda: 1, candidate=lambda v: v, reference=lambda v: v, repeats=5),)\n")
    assert main(["bench", "--dir", str(tmp_path)]) == 0
    assert "bench" in capsys.readouterr().err
    assert main(["bench", "--dir", str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
