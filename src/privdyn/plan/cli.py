"""``privdyn plan FAMILY [options]``: one plan per call, as a table, as JSON (``--json``) or into ``--out DIR``.

Each family (dpgd, langevin, hsgd, dpsgd) is a sub-command whose options are the keywords of
``privdyn.plan.<family>`` that the command line offers (``--target-norm`` is ``target_norm``), plus the options of
every plan (``--json``, ``--out``, ``--verify``, ``--seed``, ``--pareto``, ``--quiet``); ``privdyn plan FAMILY --help``
lists them. Only typer is imported here at module level; the planner loads inside the command. An option of another
family, a bad value or an impossible budget exits with status 2, one line on stderr and nothing written.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.exceptions import TyperException

from privdyn.plan.families import FAMILIES, planning_function

__all__ = ["plan_app", "PlanUsageError"]


class PlanUsageError(TyperException):
    """A bad option or value of ``privdyn plan``: exit status 2, one line."""

    exit_code = 2


# CLI option name -> keyword of the family function (the same name with dashes as underscores, except these)
_RENAMED = {"schedule": "schedules", "strategy": "strategies"}
_CLI_NAME = {v: k for k, v in _RENAMED.items()}


def _flag(keyword: str) -> str:
    return "--" + _CLI_NAME.get(keyword, keyword).replace("_", "-")


def _dpsgd_sizes(kwargs: dict[str, Any], sampling_rate: float | None, epochs: float | None) -> None:
    """--sampling-rate and --epochs, the alternatives to --batch-size and --num-steps, into the planner's sizes."""
    if sampling_rate is None and epochs is None:
        return
    from privdyn.plan._account import resolve_sizes
    from privdyn.plan.account_cli import OPTION_NAMES

    if kwargs.get("n") is None:
        raise PlanUsageError(f"{'--sampling-rate' if sampling_rate is not None else '--epochs'} needs --n (the "
                             "number of training examples).")
    try:
        _, batch, steps, _ = resolve_sizes(n=kwargs["n"], batch_size=kwargs.get("batch_size"),
                                           sampling_prob=sampling_rate, num_steps=kwargs.get("num_steps"),
                                           epochs=epochs, sampler=kwargs.get("sampler"), names=OPTION_NAMES)
    except ValueError as exc:
        raise PlanUsageError(" ".join(str(exc).split())) from None
    kwargs.update(batch_size=batch, num_steps=steps)


BYTES_PER_STEP = 256
"""Memory a plan holds per entry of its per-step (or per-dimension) arrays, rounded up from a measurement: a
one-pass dpgd plan (n steps) peaked at about 40 bytes per step for the table and 190 with ``--json`` (n = 3·10^7)."""
_STEP_SIZES = {"dpgd": (("n", "one pass: a step per example"), ("d", "a value per dimension")),
               "hsgd": (("n", "one pass: a step per example"), ("d", "a value per dimension")),
               "dpsgd": (("num_steps", "the noise of every step"),)}


def _physical_memory() -> int | None:
    """Bytes of physical memory of this machine, or None where the system does not say."""
    import os

    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def _check_memory(family: str, kwargs: dict[str, Any]) -> None:
    """Refuse, before anything is allocated, a size whose per-step (per-dimension) arrays cannot fit in memory.

    A necessary condition only: a size under the limit may still be slow or need more (e.g. a d x d matrix).
    """
    memory = _physical_memory()
    if memory is None:
        return
    limit = memory // BYTES_PER_STEP
    for key, why in _STEP_SIZES.get(family, ()):
        value = kwargs.get(key)
        if isinstance(value, int) and value > limit:
            option = _flag(key)
            raise PlanUsageError(
                f"{option} {value} cannot fit in memory: a {family} plan keeps arrays ({why}) of about "
                f"{BYTES_PER_STEP} bytes an entry, {value * BYTES_PER_STEP / 2**30:.3g} GiB, more than this "
                f"machine's {memory / 2**30:.3g} GiB; {option} must be an integer from 1 to {limit}.")


RUN_OPTIONS = ("json_output", "out", "verify", "seed", "pareto", "quiet")
"""The options every family has: what to print or write and how to check the plan (never passed to the planner)."""
_SIZE_ALTERNATIVES = ("sampling_rate", "epochs")  # dpsgd: resolved into batch_size and num_steps


def _plan(family: str, options: dict[str, Any]) -> None:
    """Plan ``family`` from the options of its sub-command (parameter name -> value) and print or write the plan."""
    import warnings

    options = dict(options)
    run = {key: options.pop(key) for key in RUN_OPTIONS}
    json_output, out, verify, seed, pareto, quiet = (run[key] for key in RUN_OPTIONS)
    sampling_rate, epochs = (options.pop(key, None) for key in _SIZE_ALTERNATIVES)
    for flag, count in (("--verify", verify), ("--pareto", pareto)):
        if count is not None and count < 2:
            raise PlanUsageError(f"{flag} must be an integer >= 2; got {count}.")
    if seed < 0:
        raise PlanUsageError(f"--seed must be a non-negative integer; got {seed}.")
    if out is not None and out.exists() and not out.is_dir():
        raise PlanUsageError(f"--out must be a directory; {str(out)!r} is a file.")
    function = planning_function(family)
    accepted = inspect.signature(function).parameters
    kwargs: dict[str, Any] = {_RENAMED.get(name, name): str(value) if isinstance(value, Path) else value
                              for name, value in options.items() if value is not None and value is not False
                              and value != []}
    if family == "dpsgd":
        _dpsgd_sizes(kwargs, sampling_rate, epochs)
    _check_memory(family, kwargs)
    missing = [k for k, p in accepted.items() if p.default is inspect.Parameter.empty and k not in kwargs
               and p.kind is not inspect.Parameter.VAR_KEYWORD]
    if missing:
        flags = [_flag(k) + {"num_steps": " (or --epochs)", "batch_size": " (or --sampling-rate)"}.get(k, "")
                 if family == "dpsgd" else _flag(k) for k in missing]
        raise PlanUsageError(f"`privdyn plan {family}` needs {', '.join(flags)}; see `privdyn plan {family} --help`.")
    if family == "dpsgd":  # required by the planner, never assumed (they default to None only to say so)
        from privdyn.privacy.labels import SAMPLERS

        for key, choices in (("sampler", f"{', '.join(SAMPLERS[:-1])} or {SAMPLERS[-1]}; or --samplers"),
                             ("neighboring", "add_remove, replace_one or zero_out")):
            if kwargs.get(key) is None and not (key == "sampler" and kwargs.get("samplers") is not None):
                raise PlanUsageError(f"`privdyn plan dpsgd` needs --{key} ({choices}); privdyn never assumes one.")
    from privdyn._progress import display

    try:
        with warnings.catch_warnings(), display(f"plan {family}", quiet=quiet):
            warnings.simplefilter("ignore")  # the plan's notes carry what the user must know
            result = function(**kwargs)
            num_points = pareto if pareto is not None else (7 if out is not None else None)
            front = None if num_points is None else result.pareto_front(num_points=num_points)
            if verify is None:
                check = None
            elif family == "dpgd" and options.get("data") is not None and options.get("public_stats"):
                from privdyn.plan._data import load_data  # the user's rows, declared public

                check = result.simulate(verify, seed, data=load_data(options["data"], options["label_column"]))
            else:
                check = result.simulate(verify, seed)
    except (ValueError, TypeError) as exc:
        raise PlanUsageError(" ".join(str(exc).split())) from None
    if out is not None:
        from privdyn.plan._output import write_plan

        write_plan(result, out, pareto_front=front, verification=check)
    if json_output:
        typer.echo(json.dumps(result.to_json(pareto_front=front, verification=check), allow_nan=False))
        return
    typer.echo(result.summary())
    if front is not None:
        typer.echo("\nPareto front (" + front.budget_name + " -> predicted " + front.quantity + ")")
        for x, y in zip(front.budgets.tolist(), front.predicted.tolist(), strict=True):
            typer.echo(f"  {x:12.6g}  {y:12.6g}")
    if check is not None:
        typer.echo("\n" + check.text())
    if out is not None:
        typer.echo(f"\nwrote {out / 'plan.json'} and {out / 'plan.png'}")


def _takes_value(command: Any) -> dict[str, bool]:
    """Every option of a family's command (``--help`` included) -> whether a value follows it on the line."""
    return {opt: not getattr(param, "is_flag", False) for param in command.params for opt in param.opts} | {
        "--help": False}


def _first_unknown(args: list[str], known: dict[str, bool]) -> str | None:
    """The first option of ``args`` that is not in ``known``, read as the parser reads it; None if there is none."""
    index = 0
    while index < len(args) and args[index] != "--":
        name = args[index].split("=", 1)[0]
        if name.startswith("-") and name not in known:
            return name
        index += 2 if known.get(name) and "=" not in args[index] else 1
    return None


class _FamilyCommand(TyperCommand):
    """One family's sub-command: an option of another family is refused by name, with the options that apply."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        siblings = getattr(ctx.parent.command, "commands", {}) if ctx.parent is not None else {}
        unknown = _first_unknown(args, _takes_value(self))
        owners = [name for name, command in siblings.items() if unknown in _takes_value(command)]
        if owners:
            offered = [opt for param in self.params if param.name not in RUN_OPTIONS for opt in param.opts]
            raise PlanUsageError(f"{unknown} does not apply to `privdyn plan {self.name}` (it is an option of "
                                 f"{' and '.join(owners)}); its options are {', '.join(offered)}.")
        return super().parse_args(ctx, args)


class _FamilyGroup(TyperGroup):
    """``privdyn plan``: the family may also follow options (``privdyn plan --json dpgd ...``); a missing or unknown
    family is one line naming the families."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] != "--help":
            known: dict[str, bool] = {}
            for command in self.commands.values():
                known.update(_takes_value(command))
            index = 0
            while index < len(args) and args[index].startswith("-"):
                index += 2 if known.get(args[index], True) and "=" not in args[index] else 1
            if index < len(args):  # the first word that is no option nor its value: the family
                args = [args[index], *args[:index], *args[index + 1:]]
            else:
                args = ["--help"] if "--help" in args else []
        if not args:
            raise PlanUsageError(f"`privdyn plan` needs a FAMILY: {', '.join(FAMILIES)}; see `privdyn plan --help`.")
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        if args and args[0] not in self.commands:
            raise PlanUsageError(f"FAMILY must be one of {', '.join(FAMILIES)}; got {args[0]!r}.")
        return super().resolve_command(ctx, args)


# The options, declared once; each family's command lists those its planner reads.
_Opt = typer.Option
N = Annotated[int | None, _Opt("--n", help="Number of training examples.")]
D = Annotated[int | None, _Opt("--d", help="Dimension (number of features / parameters).")]
Spectrum = Annotated[str | None, _Opt("--spectrum", help="Covariance spectrum: identity (default), uniform, "
                                      "power_law:EXPONENT or a FILE of eigenvalues.")]
LabelNoise = Annotated[float | None, _Opt("--label-noise", help="Label-noise standard deviation.")]
Epsilon = Annotated[float | None, _Opt("--epsilon", help="Target epsilon (with --delta).")]
Delta = Annotated[float | None, _Opt("--delta", help="Target delta in (0, 1).")]
Zcdp = Annotated[float | None, _Opt("--zcdp", help="zCDP budget, instead of --epsilon.")]
Json = Annotated[bool, _Opt("--json", help="Print the plan as one JSON document.")]
Out = Annotated[Path | None, _Opt("--out", help="Write DIR/plan.json and DIR/plan.png.")]
Verify = Annotated[int | None, _Opt("--verify", help="Simulate the plan N times against its prediction.")]
Seed = Annotated[int, _Opt("--seed", help="Seed of --verify.")]
Pareto = Annotated[int | None, _Opt("--pareto", help="Points of the Pareto front (default 7 with --out).")]
Quiet = Annotated[bool, _Opt("--quiet", help="No progress display (it is drawn on stderr only when stdout and stderr "
                                            "are terminals).")]

plan_app = typer.Typer(name="plan", cls=_FamilyGroup, rich_markup_mode=None, add_completion=False,
                       help="Plan a private training run: hyper-parameters, predicted utility, privacy statement. "
                            "One sub-command per family; `privdyn plan FAMILY --help` lists its options.")
"""The ``privdyn plan`` command group: one sub-command per planner family."""


@plan_app.command("dpgd", cls=_FamilyCommand, short_help="One-pass clipped DP-GD for linear regression.")
def dpgd_command(
    n: N = None, d: D = None, spectrum: Spectrum = None,
    target_norm: Annotated[float | None, _Opt("--target-norm", help="||theta*||, the norm of the true "
                                              "parameter.")] = None,
    target_exponent: Annotated[float | None, _Opt("--target-exponent", help="Power-law target exponent psi "
                                                  "(projections ~ eigenvalue^-psi), instead of --target-norm.")]
    = None,
    label_noise: LabelNoise = None, epsilon: Epsilon = None,
    delta: Annotated[float | None, _Opt("--delta", help="Target delta in (0, 1) (with --epsilon, or --zcdp for the "
                                        "(epsilon, delta) report).")] = None,
    rho: Annotated[float | None, _Opt("--rho", help="Budget as rho: the released iterate is rho^2/2-zCDP.")] = None,
    zcdp: Zcdp = None,
    schedule: Annotated[list[str] | None, _Opt("--schedule", help="A schedule to search: constant, polynomial or "
                                               "harmonic (repeatable; default all).")] = None,
    data: Annotated[Path | None, _Opt("--data", help="CSV, .npy or .parquet file with a label column (with "
                                      "--public-stats or --planning-share).")] = None,
    label_column: Annotated[str | None, _Opt("--label-column", help="Label column name (default: last).")] = None,
    public_stats: Annotated[bool, _Opt("--public-stats", help="Treat the data file's statistics as public.")]
    = False,
    planning_share: Annotated[float | None, _Opt("--planning-share", help="Share of the zCDP budget spent "
                                                 "estimating the data's statistics.")] = None,
    feature_norm_bound: Annotated[float | None, _Opt("--feature-norm-bound", help="Public bound on ||x|| (with "
                                                     "--planning-share).")] = None,
    label_bound: Annotated[float | None, _Opt("--label-bound", help="Public bound on |y| (with --planning-share).")]
    = None,
    json_output: Json = False, out: Out = None,
    verify: Annotated[int | None, _Opt("--verify", help="Simulate the plan N times against its prediction (with "
                                       "--data FILE --public-stats: on the file's rows).")] = None,
    seed: Seed = 0, pareto: Pareto = None, quiet: Quiet = False,
) -> None:
    """One-pass clipped DP-GD for linear regression (arXiv 2505.16329): schedule, clip, learning rate."""
    _plan("dpgd", locals())


@plan_app.command("langevin", cls=_FamilyCommand, short_help="Noisy GD on a strongly convex, smooth loss.")
def langevin_command(
    n: N = None, d: D = None,
    strong_convexity: Annotated[float | None, _Opt("--strong-convexity", help="Strong convexity lambda of the "
                                                   "per-example loss (0 < lambda <= beta).")] = None,
    smoothness: Annotated[float | None, _Opt("--smoothness", help="Smoothness beta of the per-example loss.")]
    = None,
    lipschitz: Annotated[float | None, _Opt("--lipschitz", help="Lipschitz constant L of the per-example loss.")]
    = None,
    sensitivity: Annotated[float | None, _Opt("--sensitivity", help="Total gradient sensitivity S_g (default 2L).")]
    = None,
    epsilon: Epsilon = None, delta: Delta = None, zcdp: Zcdp = None,
    json_output: Json = False, out: Out = None, verify: Verify = None, seed: Seed = 0, pareto: Pareto = None,
    quiet: Quiet = False,
) -> None:
    """Noisy GD on a strongly convex, smooth loss (arXiv 2102.05855): step size, noise scale, number of steps."""
    _plan("langevin", locals())


@plan_app.command("hsgd", cls=_FamilyCommand, short_help="Noisy SGD on least squares (privacy surrogate).")
def hsgd_command(
    n: N = None, d: D = None, spectrum: Spectrum = None,
    target_norm: Annotated[float | None, _Opt("--target-norm", help="||theta*|| (default 1), spread evenly.")]
    = None,
    label_noise: LabelNoise = None,
    ridge: Annotated[float | None, _Opt("--ridge", help="Ridge regularization delta >= 0.")] = None,
    renyi_order: Annotated[float | None, _Opt("--renyi-order", help="Renyi order alpha > 1 of the target.")] = None,
    rdp_epsilon: Annotated[float | None, _Opt("--rdp-epsilon", help="Target surrogate Renyi epsilon at "
                                              "--renyi-order (not a DP guarantee).")] = None,
    json_output: Json = False, out: Out = None, verify: Verify = None, seed: Seed = 0, pareto: Pareto = None,
    quiet: Quiet = False,
) -> None:
    """One-pass noisy SGD on least squares, with the homogenized-SGD privacy surrogate (arXiv 2510.16687)."""
    _plan("hsgd", locals())


@plan_app.command("dpsgd", cls=_FamilyCommand, short_help="DP-SGD with independent or correlated noise.")
def dpsgd_command(
    n: N = None,
    batch_size: Annotated[int | None, _Opt("--batch-size", help="(Expected) batch size, 1 to n.")] = None,
    sampling_rate: Annotated[float | None, _Opt("--sampling-rate", help="batch_size / n in (0, 1], instead of "
                                                "--batch-size (with --n).")] = None,
    num_steps: Annotated[int | None, _Opt("--num-steps", help="Number of noisy steps.")] = None,
    epochs: Annotated[float | None, _Opt("--epochs", help="Epochs instead of --num-steps (epochs x n / batch_size "
                                         "steps, rounded up).")] = None,
    epsilon: Epsilon = None, delta: Delta = None,
    sampler: Annotated[str | None, _Opt("--sampler", help="poisson, fixed_size, random_allocation, cyclic_poisson "
                                        "or shuffle.")] = None,
    samplers: Annotated[str | None, _Opt("--samplers", help="Participation schemes to rank as well, comma-separated "
                                         "(e.g. poisson,random_allocation) or all; default: --sampler alone.")]
    = None,
    neighboring: Annotated[str | None, _Opt("--neighboring", help="add_remove, replace_one or zero_out.")] = None,
    strategy: Annotated[list[str] | None, _Opt("--strategy", help="A noise strategy to rank: independent, "
                                               "lambda_cgd:LAMBDA, square_root, ... (repeatable).")] = None,
    clip: Annotated[float | None, _Opt("--clip", help="The clipping threshold (default 1).")] = None,
    json_output: Json = False, out: Out = None,
    verify: Annotated[int | None, _Opt("--verify", help="Stream the chosen strategy's noise N times against its "
                                       "predicted prefix-sum error.")] = None,
    seed: Seed = 0, pareto: Pareto = None, quiet: Quiet = False,
) -> None:
    """DP-SGD with independent or correlated noise: the noise multiplier of each strategy, ranked."""
    _plan("dpsgd", locals())
