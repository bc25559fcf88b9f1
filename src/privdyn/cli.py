"""The ``privdyn`` command: list, show, run and reproduce the experiments (ARCHITECTURE.md, CLI contract).

Exit status: 0 the run completed (whatever its checks say); 1 ``--strict`` and a check failed; 2 bad arguments or
config (exactly one line on stderr, nothing written); 3 an unexpected error (one line; the traceback with
``--debug``). The CLI only parses and wires: experiments and engines do the work.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.exceptions import TyperException

from privdyn.experiments import registry, runner
from privdyn.experiments.config import ConfigError, parse_overrides
from privdyn.experiments.results import fails_strict

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


class _Usage(Exception):
    """A usage or config error: one line on stderr, exit 2."""


def _progress_callback(label: str):
    """A rich progress bar on a terminal; None (quiet) otherwise."""
    if not sys.stderr.isatty():
        return None, None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        transient=True)
    task = progress.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return progress, update


def _run_one(name: str, config, *, seed: int, quick: bool, out: Path, executor) -> dict[str, Any]:
    experiment = registry.get(name)
    progress, update = _progress_callback(name)
    if progress is None:
        return runner.run_experiment(experiment, config, seed=seed, quick=quick, out_dir=out, executor=executor)
    with progress:
        return runner.run_experiment(experiment, config, seed=seed, quick=quick, out_dir=out, executor=executor,
                                     progress=update)


def _check_counts(result: dict[str, Any]) -> tuple[int, int, int]:
    checks = result["checks"]
    return (sum(c["passed"] is True for c in checks), sum(c["passed"] is False for c in checks),
            sum(c["passed"] is None for c in checks))


def _fails_strict(result: dict[str, Any]) -> bool:
    return any(fails_strict(c) for c in result["checks"])


def _report(result: dict[str, Any], out: Path) -> None:
    passed, failed, other = _check_counts(result)
    typer.echo(f"{result['experiment']}: {passed} checks passed, {failed} failed, {other} not applicable or "
               f"findings ({result['elapsed_s']:.2f} s) -> {out / result['experiment']}")
    for check in result["checks"]:
        if check["passed"] is False:
            typer.echo(f"  FAILED [{check['kind']}] {check['name']}: {check['claim']}"
                       + (f" ({check['note']})" if check["note"] else ""))


@app.command("list")
def list_command(json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """One line per experiment: name, paper key, description."""
    rows = [{"name": e.name, "paper": e.paper_key, "description": e.description, "title": e.title}
            for e in registry.EXPERIMENTS.values()]
    if json_output:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        typer.echo(f"{row['name']}\t{row['paper']}\t{row['description']}")


@app.command("show")
def show_command(name: Annotated[str, typer.Argument(help="Experiment name.")],
                 quick: Annotated[bool, typer.Option("--quick", help="Show the --quick config.")] = False) -> None:
    """The experiment's full config as JSON (every key can be overridden with --set)."""
    _, config = _prepare(name, quick=quick, overrides=())
    typer.echo(json.dumps(config.to_dict(), indent=2))


def _prepare(name: str, *, quick: bool, overrides: Sequence[str]):
    try:
        return runner.prepare(name, quick=quick, overrides=parse_overrides(overrides))
    except ConfigError as exc:
        raise _Usage(str(exc)) from None


def _executor(spec: str):
    try:
        return runner.make_executor(spec)
    except ConfigError as exc:
        raise _Usage(str(exc)) from None


@app.command("run")
def run_command(
    name: Annotated[str, typer.Argument(help="Experiment name (see `privdyn list`).")],
    quick: Annotated[bool, typer.Option("--quick", help="The fast config (CI-sized).")] = False,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = runner.DEFAULT_OUT_DIR,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override a config key: KEY=VALUE (JSON).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Run seed.")] = 0,
    executor: Annotated[str, typer.Option("--executor", help="Where units run: serial.")] = "serial",
    force: Annotated[bool, typer.Option("--force", help="Recompute every unit.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when an invariant or unexplained claim fails.")]
    = False,
) -> None:
    """Run one experiment and write DIR/NAME/ (result.json, figure.png, series.csv)."""
    experiment, config = _prepare(name, quick=quick, overrides=set_ or ())
    if seed < 0:
        raise _Usage(f"--seed must be a non-negative integer; got {seed}.")
    pool = _executor(executor)
    result = _run_one(experiment.name, config, seed=seed, quick=quick, out=out, executor=pool)
    _report(result, out)
    if strict and _fails_strict(result):
        raise typer.Exit(EXIT_CHECKS_FAILED)


@app.command("reproduce")
def reproduce_command(
    quick: Annotated[bool, typer.Option("--quick", help="The fast configs (CI-sized).")] = False,
    only: Annotated[list[str] | None, typer.Option("--only", help="Exact names or shell-style globs.")] = None,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = runner.DEFAULT_OUT_DIR,
    executor: Annotated[str, typer.Option("--executor", help="Where units run: serial.")] = "serial",
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when an invariant or unexplained claim fails.")]
    = False,
) -> None:
    """Run every experiment (or those selected by --only); write DIR/summary.json and DIR/summary.md."""
    try:
        experiments = registry.select(only)
    except ValueError as exc:
        raise _Usage(str(exc)) from None
    pool = _executor(executor)
    prepared = [_prepare(e.name, quick=quick, overrides=()) for e in experiments]
    results = []
    for experiment, config in prepared:
        result = _run_one(experiment.name, config, seed=0, quick=quick, out=out, executor=pool)
        _report(result, out)
        results.append(result)
    runner.write_summary(results, out)
    typer.echo(f"summary: {out / 'summary.md'}")
    if strict and any(_fails_strict(r) for r in results):
        raise typer.Exit(EXIT_CHECKS_FAILED)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privdyn`` command; returns the exit status (see the module docstring)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    command = typer.main.get_command(app)
    try:
        status = command.main(args=args, prog_name="privdyn", standalone_mode=False)
    except _Usage as exc:
        print(f"privdyn: error: {_one_line(exc)}", file=sys.stderr)
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
        print(f"privdyn: unexpected error: {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
        return EXIT_UNEXPECTED
    return int(status or 0)



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
