"""The ``privdyn`` command: list, show, run and reproduce the experiments; bench (ARCHITECTURE.md, CLI contract).

Exit status: 0 the run completed (whatever its checks say); 1 ``--strict`` and a check failed, or a benchmark of
``privdyn bench`` failed to run; 2 bad arguments or config (exactly one line on stderr, nothing written); 3 an
unexpected error (one line; the traceback with ``--debug``). The CLI only parses and wires: experiments and engines
do the work. It imports the runner, the registry and an experiment's module only when a command needs them, so
``privdyn --help`` and ``privdyn --version`` stay fast.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.exceptions import TyperException

from privdyn.audit.cli import audit_command
from privdyn.plan.account_cli import account_command
from privdyn.plan.cli import plan_app
from privdyn.runs import progress
from privdyn.runs.config import DEFAULT_EXECUTOR, DEFAULT_OUT_DIR, ConfigError, parse_overrides

if TYPE_CHECKING:
    from privdyn.runs.runner import UnitCounts

__all__ = ["app", "main"]

EXIT_OK, EXIT_CHECKS_FAILED, EXIT_USAGE, EXIT_UNEXPECTED = 0, 1, 2, 3

app = typer.Typer(
    name="privdyn",
    help="Predict, certify and optimize the privacy-utility trade-off of noisy gradient training.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    no_args_is_help=True,
)
"""The ``privdyn`` command line (a Typer application; ``privdyn --help`` lists its commands)."""


class _Usage(Exception):
    """A usage or config error: one line on stderr, exit 2."""


def _print_version(value: bool) -> None:
    if value:
        from privdyn._version import version

        typer.echo(f"privdyn {version()}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _options(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", is_eager=True,
                                          callback=_print_version)] = False,
    debug: Annotated[bool, typer.Option("--debug", help="On an unexpected error (exit 3), print the traceback too. "
                                        "Accepted anywhere on the command line.")] = False,
) -> None:
    """Predict, certify and optimize the privacy-utility trade-off of noisy gradient training."""


QUIET_HELP = "No progress display (it is drawn on stderr only when stdout and stderr are terminals)."


@contextlib.contextmanager
def _progress(label: str, quiet: bool) -> Any:
    """Rich progress bars on a terminal (units of the experiment, and steps inside a unit); quiet otherwise."""
    from privdyn._progress import display

    with display(f"{label}: units", quiet=quiet, inner=True) as bars:
        if bars is None:
            yield None
            return
        units, inner = bars.task_ids

        def on_unit(done: int, total: int) -> None:
            bars.update(units, completed=done, total=total)
            bars.update(inner, visible=False)

        def on_step(done: int, total: int | None) -> None:
            bars.update(inner, completed=done, total=total, visible=True)

        with progress.reporting(on_step):
            yield on_unit


def _run_one(name: str, config: Any, *, seed: int, quick: bool, out: Path, executor: Any,
             force: bool, quiet: bool, label: str | None = None) -> dict[str, Any]:
    from privdyn.experiments import registry
    from privdyn.runs import runner

    experiment = registry.get(name)
    counts = runner.UnitCounts()
    with _progress(label or name, quiet) as on_unit:
        result = runner.run_experiment(experiment, config, seed=seed, quick=quick, out_dir=out, executor=executor,
                                       force=force, progress=on_unit, counts=counts)
    _report(result, out, counts)
    return result


def _check_counts(result: dict[str, Any]) -> tuple[int, int, int]:
    checks = result["checks"]
    return (sum(c["passed"] is True for c in checks), sum(c["passed"] is False for c in checks),
            sum(c["passed"] is None for c in checks))


def _fails_strict(result: dict[str, Any]) -> bool:
    from privdyn.runs.results import fails_strict

    return any(fails_strict(c) for c in result["checks"])


def _report(result: dict[str, Any], out: Path, counts: UnitCounts) -> None:
    """One line per experiment (and one per failed check)."""
    passed, failed, other = _check_counts(result)
    writing = "" if result.get("outputs_s") is None else f", {result['outputs_s']:.2f} s writing outputs"
    typer.echo(f"{result['experiment']}: {passed} checks passed, {failed} failed, {other} not applicable or "
               f"findings; units {counts.computed} computed, {counts.cached} cached ({result['elapsed_s']:.2f} s"
               f"{writing}) -> {out / result['experiment']}")
    for check in result["checks"]:
        if check["passed"] is False:
            typer.echo(f"  FAILED [{check['kind']}] {check['name']}: {check['claim']}"
                       + (f" ({check['note']})" if check["note"] else ""))


@app.command("list")
def list_command(json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """One line per experiment: name, paper key, description; opt-in experiments (run only by name) last, marked."""
    from privdyn.experiments import registry

    rows = [{"name": e.name, "paper": e.paper_key, "description": e.description, "title": e.title,
             "opt_in": e.name in registry.OPT_IN}
            for e in [*registry.EXPERIMENTS.values(), *(registry.get(name) for name in registry.OPT_IN)]]
    if json_output:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        mark = "[opt-in: runs only when named, not in a plain reproduce] " if row["opt_in"] else ""
        typer.echo(f"{row['name']}\t{row['paper']}\t{mark}{row['description']}")


@app.command("show")
def show_command(name: Annotated[str, typer.Argument(help="Experiment name.")],
                 quick: Annotated[bool, typer.Option("--quick", help="Show the --quick config.")] = False) -> None:
    """The experiment's full config as JSON (every key can be overridden with --set)."""
    _, config = _prepare(name, quick=quick, overrides=())
    typer.echo(json.dumps(config.to_dict(), indent=2))


def _prepare(name: str, *, quick: bool, overrides: Sequence[str]) -> Any:
    from privdyn.experiments import registry

    try:
        return registry.prepare(name, quick=quick, overrides=parse_overrides(overrides))
    except ConfigError as exc:
        raise _Usage(str(exc)) from None


@contextlib.contextmanager
def _executor(spec: str) -> Any:
    """Open the executor; a bad spec or an unreachable scheduler is a usage error (before anything runs)."""
    from privdyn.runs import runner

    stack = contextlib.ExitStack()
    try:
        pool = stack.enter_context(runner.open_executor(spec))
    except ConfigError as exc:
        raise _Usage(str(exc)) from None
    with stack:
        yield pool


MAX_SEED = 2**63 - 1


def _check_seed(seed: int) -> None:
    if not 0 <= seed <= MAX_SEED:
        raise _Usage(f"--seed must be an integer in [0, 2**63 - 1]; got {seed}.")


def _out_dir(out: str, names: Sequence[str]) -> Path:
    """The ``--out`` folder, checked before any unit computes: usable, or a usage error (nothing is written).

    The folder and ``out/NAME`` for each experiment must be folders if they exist; the nearest existing ancestor must
    be a folder this process can create files in (probed with a temporary file, so a read-only or special file system
    is caught even for a privileged user).
    """
    if not out.strip():
        raise _Usage("--out must name a folder; got an empty string (use --out . for the current folder).")
    path = Path(out)
    for candidate in (path, *(path / name for name in names)):
        if candidate.exists() and not candidate.is_dir():
            raise _Usage(f"--out {out}: {candidate} exists and is not a folder.")
    ancestor = path
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise _Usage(f"--out {out}: {ancestor} is not a folder.")
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=ancestor):
            pass
    except OSError as exc:
        raise _Usage(f"--out {out}: cannot write in {ancestor} ({exc.strerror or exc}).") from None
    return path


EXECUTOR_HELP = "Where units run: serial, local (a process pool), dask-local, or tcp://HOST:PORT (a Dask scheduler)."


@app.command("run")
def run_command(
    name: Annotated[str, typer.Argument(help="Experiment name (see `privdyn list`).")],
    quick: Annotated[bool, typer.Option("--quick", help="The fast config (CI-sized).")] = False,
    out: Annotated[str, typer.Option("--out", help="Output directory.")] = str(DEFAULT_OUT_DIR),
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override a config key: KEY=VALUE (JSON).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Run seed.")] = 0,
    executor: Annotated[str, typer.Option("--executor", help=EXECUTOR_HELP)] = DEFAULT_EXECUTOR,
    force: Annotated[bool, typer.Option("--force", help="Ignore the cache and recompute every unit.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when an invariant or unexplained claim fails.")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", help=QUIET_HELP)] = False,
) -> None:
    """Run one experiment and write DIR/NAME/ (result.json, figure.png, series.csv)."""
    experiment, config = _prepare(name, quick=quick, overrides=set_ or ())
    _check_seed(seed)
    out_dir = _out_dir(out, [experiment.name])
    with _executor(executor) as pool:
        result = _run_one(experiment.name, config, seed=seed, quick=quick, out=out_dir, executor=pool, force=force,
                          quiet=quiet)
    if strict and _fails_strict(result):
        raise typer.Exit(EXIT_CHECKS_FAILED)


@app.command("reproduce")
def reproduce_command(
    quick: Annotated[bool, typer.Option("--quick", help="The fast configs (CI-sized).")] = False,
    only: Annotated[list[str] | None, typer.Option("--only", help="Exact names or shell-style globs.")] = None,
    out: Annotated[str, typer.Option("--out", help="Output directory.")] = str(DEFAULT_OUT_DIR),
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override a config key: KEY=VALUE (JSON), in every selected experiment that has KEY.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Run seed.")] = 0,
    executor: Annotated[str, typer.Option("--executor", help=EXECUTOR_HELP)] = DEFAULT_EXECUTOR,
    force: Annotated[bool, typer.Option("--force", help="Ignore the cache and recompute every unit.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when an invariant or unexplained claim fails.")]
    = False,
    report: Annotated[bool, typer.Option("--report", help="Also write DIR/report.html (see `privdyn report`).")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", help=QUIET_HELP)] = False,
) -> None:
    """Run every experiment (or those selected by --only); write DIR/summary.json and DIR/summary.md."""
    from privdyn.experiments import registry
    from privdyn.runs import runner

    try:
        experiments = registry.select(only)
        prepared = registry.prepare_selection([e.name for e in experiments], quick=quick,
                                            overrides=parse_overrides(set_ or ()))
    except ValueError as exc:  # ConfigError included
        raise _Usage(str(exc)) from None
    _check_seed(seed)
    out_dir = _out_dir(out, [e.name for e, _ in prepared])
    for name in ("summary.json", "summary.md", *(("report.html",) if report else ())):
        if (out_dir / name).is_dir():
            raise _Usage(f"--out {out}: {out_dir / name} is a folder; the run writes a file there.")
    results = []
    with _executor(executor) as pool:
        for index, (experiment, config) in enumerate(prepared, start=1):
            results.append(_run_one(experiment.name, config, seed=seed, quick=quick, out=out_dir, executor=pool,
                                    force=force, quiet=quiet,
                                    label=f"[{index}/{len(prepared)}] {experiment.name}"))
    runner.write_summary(results, out_dir)
    typer.echo(f"summary: {out_dir / 'summary.md'}")
    if report:
        from privdyn.report import write_report

        typer.echo(f"report: {write_report(out_dir)}")
    if strict and any(_fails_strict(r) for r in results):
        raise typer.Exit(EXIT_CHECKS_FAILED)


@app.command("report")
def report_command(
    directory: Annotated[str, typer.Argument(help="An output folder of `privdyn run` or `privdyn reproduce`.")]
    = str(DEFAULT_OUT_DIR),
) -> None:
    """Write DIR/report.html: one static page (open it from disk) with every figure, check and failed claim."""
    from privdyn.report import ReportError, write_report

    if not directory.strip():
        raise _Usage("DIR must name a folder; got an empty string (use . for the current folder).")
    try:
        path = write_report(Path(directory))
    except ReportError as exc:
        raise _Usage(str(exc)) from None
    typer.echo(f"report: {path}")


@app.command("bench")
def bench_command(
    names: Annotated[list[str] | None, typer.Argument(help="Benchmark names (default: all).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object per benchmark and line (JSON "
                                              "Lines), as each finishes.")] = False,
    directory: Annotated[Path, typer.Option("--dir", help="The benchmark directory.")] = Path("benchmarks"),
    repeats: Annotated[int | None, typer.Option("--repeats", help="Timed repetitions of each side, 1 to 1000 "
                                                "(default: each benchmark's own, at least 5).")] = None,
    table: Annotated[Path | None, typer.Option("--table", help="Also write the results and the machine as a "
                                               "Markdown page to this file (docs/benchmarks.md, or docs/scaling.md "
                                               "with --scaling).")] = None,
    scaling: Annotated[bool, typer.Option("--scaling", help="Run the scaling studies (time and peak memory against "
                                          "a size, fitted exponents) instead of the side-by-side benchmarks.")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", help=QUIET_HELP)] = False,
    device: Annotated[str | None, typer.Option("--device", help="The torch device of the torch rows (cpu, cuda, "
                                               "cuda:N; default: cuda when a GPU is present, else cpu).")] = None,
) -> None:
    """From a checkout: run ./benchmarks, printing each candidate vs reference result (medians, ratio) as it finishes.

    A benchmark that fails is reported and the others still run; the exit status is then 1. A benchmark whose
    reference library is not installed is skipped with a note naming the extra that brings it (not a failure).
    """
    from privdyn import benchmarking

    if repeats is not None and not 1 <= repeats <= benchmarking.MAX_REPEATS:
        raise _Usage(f"--repeats must be an integer from 1 to {benchmarking.MAX_REPEATS}; got {repeats}.")
    if table is not None and not table.parent.is_dir():
        raise _Usage(f"--table: the folder {str(table.parent)!r} does not exist.")
    if device is not None:
        _bench_device(device)
    try:
        selected: list[Any] = (benchmarking.discover_scaling(directory, names or ()) if scaling
                               else benchmarking.discover(directory, names or ()))
    except ValueError as exc:
        raise _Usage(str(exc)) from None
    from privdyn._progress import display, report

    outcomes: list[Any] = []
    with display("bench", quiet=quiet):
        for index, benchmark in enumerate(selected):
            report(benchmark.name, index, len(selected))
            for outcome in benchmarking.run_all([benchmark], repeats=repeats):
                outcomes.append(outcome)
                typer.echo(json.dumps(outcome.to_json()) if json_output else _bench_line(outcome))
    if table is not None:
        page = benchmarking.scaling_page if scaling else benchmarking.markdown_page
        command = " ".join(["privdyn bench", *(["--scaling"] if scaling else []), *(names or []),
                            *([] if device is None else ["--device", device]),
                            *([] if repeats is None else ["--repeats", str(repeats)]), "--table", table.as_posix()])
        table.write_text(page(outcomes, benchmarking.machine(), command), encoding="utf-8")
        if not json_output:
            typer.echo(f"table: {table}")
    if any(isinstance(o, benchmarking.BenchmarkFailure) for o in outcomes):
        raise typer.Exit(EXIT_CHECKS_FAILED)


def _bench_device(device: str) -> None:
    """Check ``--device`` and hand it to the torch rows (``PRIVDYN_BENCH_DEVICE``, read by bench_torch.py)."""
    import os
    import re

    if not re.fullmatch(r"cpu|cuda(:\d+)?", device):
        raise _Usage(f"--device must be cpu, cuda or cuda:N; got {device!r}.")
    if device != "cpu":
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            raise _Usage(f"--device {device}: PyTorch is not installed (the torch rows need the privdyn[torch] extra).")
        import torch

        index = int(device.partition(":")[2] or 0)
        if not torch.cuda.is_available() or index >= torch.cuda.device_count():
            raise _Usage(f"--device {device}: no such CUDA device here "
                         f"({torch.cuda.device_count() if torch.cuda.is_available() else 0} visible).")
    os.environ["PRIVDYN_BENCH_DEVICE"] = device


def _bench_line(outcome: Any) -> str:
    if outcome.status == "failed":
        return f"{outcome.name}: FAILED: {outcome.error}"
    if outcome.status == "skipped":
        return f"{outcome.name}: skipped: {outcome.reason}"
    if hasattr(outcome, "time_exponent"):  # a scaling study
        points = ", ".join(f"{size:,}: {t * 1e3:.3g} ms / {peak / 2**20:.3g} MiB"
                           for size, t, peak in zip(outcome.sizes, outcome.median_s, outcome.peak_bytes, strict=True))
        return (f"{outcome.name} ({outcome.size_name}; median time / peak memory) {points}; time ~ "
                f"size^{outcome.time_exponent:.2f}, memory ~ size^{outcome.memory_exponent:.2f}")
    r = outcome
    target = "" if r.target_ratio is None else f"; target {r.target_ratio:g}x {'met' if r.meets_target else 'NOT met'}"
    items = "" if r.candidate_items == r.reference_items == 1 else (
        f", {r.candidate_items} vs {r.reference_items} items; per item")
    low, high = r.ratio_spread
    speed = f"{r.ratio:.3g}x faster" if r.ratio >= 1.0 else f"ratio {r.ratio:.3g}x: {1.0 / r.ratio:.3g}x slower"
    return (f"{r.name}: {r.candidate} {r.candidate_median_s * 1e3:.3f} ms vs {r.reference} "
            f"{r.reference_median_s * 1e3:.3f} ms (medians of {r.repeats}{items}) -> {speed} "
            f"(per-repetition ratio {low:.3g}x to {high:.3g}x){target}{'' if r.note is None else '; ' + r.note}")

app.add_typer(plan_app, name="plan")
app.command("account")(account_command)
app.command("audit")(audit_command)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privdyn`` command; returns the exit status (see the module docstring)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    command = typer.main.get_command(app)  # --debug is taken out above: the app's option only documents it
    try:
        status = command.main(args=args, prog_name="privdyn", standalone_mode=False)
    except _Usage as exc:
        print(f"privdyn: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("privdyn: aborted", file=sys.stderr)
        return EXIT_UNEXPECTED
    except TyperException as exc:  # the framework's usage errors (unknown flag, bad type, missing argument, ...)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        print(f"privdyn: error: {_one_line(message)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the documented exit 3, one line
        if debug:
            import traceback

            traceback.print_exc()
        print(f"privdyn: unexpected error: {type(exc).__name__}: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_UNEXPECTED
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
