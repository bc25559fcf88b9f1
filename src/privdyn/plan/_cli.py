"""``privdyn plan FAMILY [options]``: one plan per call, as a table, as JSON (``--json``) or into ``--out DIR``.

Only typer is imported here at module level; the planner loads inside the command. Every option maps to the
keyword of the same name of ``privdyn.plan.<family>`` (``--target-norm`` is ``target_norm``); an option the family
does not take, a bad value or an impossible budget exits with status 2, one line on stderr and nothing written.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.exceptions import TyperException

__all__ = ["plan_command", "PlanUsageError"]


class PlanUsageError(TyperException):
    """A bad option or value of ``privdyn plan``: exit status 2, one line."""

    exit_code = 2


_Opt = typer.Option

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
    from privdyn.plan._account_cli import OPTION_NAMES

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


def plan_command(
    family: Annotated[str, typer.Argument(help="dpgd, langevin, hsgd or dpsgd.")],
    n: Annotated[int | None, _Opt("--n", help="Number of training examples.")] = None,
    d: Annotated[int | None, _Opt("--d", help="Dimension (number of features / parameters).")] = None,
    spectrum: Annotated[str | None, _Opt("--spectrum", help="identity, uniform, power_law:EXPONENT or a FILE "
                                                           "of eigenvalues.")] = None,
    target_norm: Annotated[float | None, _Opt("--target-norm", help="||theta*||.")] = None,
    target_exponent: Annotated[float | None, _Opt("--target-exponent", help="Power-law target exponent.")] = None,
    label_noise: Annotated[float | None, _Opt("--label-noise", help="Label-noise standard deviation.")] = None,
    epsilon: Annotated[float | None, _Opt("--epsilon", help="Target epsilon (with --delta).")] = None,
    delta: Annotated[float | None, _Opt("--delta", help="Target delta in (0, 1).")] = None,
    rho: Annotated[float | None, _Opt("--rho", help="dpgd's rho: rho^2/2-zCDP.")] = None,
    zcdp: Annotated[float | None, _Opt("--zcdp", help="zCDP budget.")] = None,
    schedule: Annotated[list[str] | None, _Opt("--schedule", help="dpgd: constant, polynomial, harmonic "
                                                                  "(repeatable; default all).")] = None,
    data: Annotated[Path | None, _Opt("--data", help="CSV, .npy or .parquet with a label column.")] = None,
    label_column: Annotated[str | None, _Opt("--label-column", help="Label column name (default: last).")] = None,
    public_stats: Annotated[bool, _Opt("--public-stats", help="Treat the data file's statistics as public.")]
    = False,
    planning_share: Annotated[float | None, _Opt("--planning-share", help="Share of the zCDP budget spent "
                                                                          "estimating the data's statistics.")] = None,
    feature_norm_bound: Annotated[float | None, _Opt("--feature-norm-bound", help="Public bound on ||x||.")] = None,
    label_bound: Annotated[float | None, _Opt("--label-bound", help="Public bound on |y|.")] = None,
    strong_convexity: Annotated[float | None, _Opt("--strong-convexity", help="langevin: lambda.")] = None,
    smoothness: Annotated[float | None, _Opt("--smoothness", help="langevin: beta.")] = None,
    lipschitz: Annotated[float | None, _Opt("--lipschitz", help="langevin: L.")] = None,
    sensitivity: Annotated[float | None, _Opt("--sensitivity", help="langevin: S_g (default 2L).")] = None,
    num_steps: Annotated[int | None, _Opt("--num-steps", help="Number of steps.")] = None,
    ridge: Annotated[float | None, _Opt("--ridge", help="hsgd: ridge.")] = None,
    renyi_order: Annotated[float | None, _Opt("--renyi-order", help="hsgd: Renyi order alpha > 1.")] = None,
    rdp_epsilon: Annotated[float | None, _Opt("--rdp-epsilon", help="hsgd: target Renyi epsilon.")] = None,
    batch_size: Annotated[int | None, _Opt("--batch-size", help="dpsgd: batch size.")] = None,
    sampling_rate: Annotated[float | None, _Opt("--sampling-rate", help="dpsgd: batch_size / n in (0, 1], "
                                                "instead of --batch-size (with --n).")] = None,
    epochs: Annotated[float | None, _Opt("--epochs", help="dpsgd: epochs instead of --num-steps (epochs x n / "
                                         "batch_size steps, rounded up).")] = None,
    sampler: Annotated[str | None, _Opt("--sampler", help="dpsgd: poisson, fixed_size, random_allocation, "
                                                         "cyclic_poisson or shuffle.")] = None,
    samplers: Annotated[str | None, _Opt("--samplers", help="dpsgd: participation schemes to rank as well, "
                                                           "comma-separated (e.g. poisson,random_allocation) or "
                                                           "all; default: --sampler alone.")] = None,
    neighboring: Annotated[str | None, _Opt("--neighboring", help="dpsgd: add_remove, replace_one or "
                                                                  "zero_out.")] = None,
    strategy: Annotated[list[str] | None, _Opt("--strategy", help="dpsgd: a noise strategy to rank: independent, "
                                                                  "lambda_cgd:LAMBDA, square_root, ... "
                                                                  "(repeatable).")] = None,
    clip: Annotated[float | None, _Opt("--clip", help="dpsgd: the clipping threshold (default 1).")] = None,
    json_output: Annotated[bool, _Opt("--json", help="Print the plan as one JSON document.")] = False,
    out: Annotated[Path | None, _Opt("--out", help="Write DIR/plan.json and DIR/plan.png.")] = None,
    verify: Annotated[int | None, _Opt("--verify", help="Simulate the plan N times against its prediction (dpgd "
                                                        "with --data FILE --public-stats: on the file's rows).")]
    = None,
    seed: Annotated[int, _Opt("--seed", help="Seed of --verify.")] = 0,
    pareto: Annotated[int | None, _Opt("--pareto", help="Points of the Pareto front (default 7 with --out).")]
    = None,
    quiet: Annotated[bool, _Opt("--quiet", help="No progress display (it is drawn on stderr only when stdout and "
                                               "stderr are terminals).")] = False,
) -> None:
    """Plan a private training run: hyper-parameters, predicted utility, privacy statement."""
    import warnings

    import privdyn.plan as planner

    options = {
        "n": n, "d": d, "spectrum": spectrum, "target_norm": target_norm, "target_exponent": target_exponent,
        "label_noise": label_noise, "epsilon": epsilon, "delta": delta, "rho": rho, "zcdp": zcdp, "schedule": schedule,
        "data": data, "label_column": label_column, "public_stats": public_stats, "planning_share": planning_share,
        "feature_norm_bound": feature_norm_bound, "label_bound": label_bound, "strong_convexity": strong_convexity,
        "smoothness": smoothness, "lipschitz": lipschitz, "sensitivity": sensitivity, "num_steps": num_steps,
        "ridge": ridge, "renyi_order": renyi_order, "rdp_epsilon": rdp_epsilon, "batch_size": batch_size,
        "sampler": sampler, "samplers": samplers, "neighboring": neighboring, "strategy": strategy, "clip": clip,
    }
    if family not in planner.FAMILIES:
        raise PlanUsageError(f"FAMILY must be one of {', '.join(planner.FAMILIES)}; got {family!r}.")
    for flag, count in (("--verify", verify), ("--pareto", pareto)):
        if count is not None and count < 2:
            raise PlanUsageError(f"{flag} must be an integer >= 2; got {count}.")
    if seed < 0:
        raise PlanUsageError(f"--seed must be a non-negative integer; got {seed}.")
    if out is not None and out.exists() and not out.is_dir():
        raise PlanUsageError(f"--out must be a directory; {str(out)!r} is a file.")
    function = getattr(planner, family)
    accepted = inspect.signature(function).parameters
    alternatives = {"sampling_rate": sampling_rate, "epochs": epochs}
    # the options of this family: its keywords that the command has an option for (never a keyword it has not)
    offered = [_CLI_NAME.get(k, k) for k in accepted if _CLI_NAME.get(k, k) in options]
    if family == "dpsgd":
        offered += list(alternatives)
    kwargs: dict[str, Any] = {}
    for name, given in {**options, **alternatives}.items():
        value: Any = given
        if value is None or value is False or value == []:
            continue
        if name not in offered:
            raise PlanUsageError(f"--{name.replace('_', '-')} does not apply to `privdyn plan {family}`; its options "
                                 f"are {', '.join('--' + k.replace('_', '-') for k in offered)}.")
        if name not in alternatives:
            kwargs[_RENAMED.get(name, name)] = str(value) if isinstance(value, Path) else value
    if family == "dpsgd":
        _dpsgd_sizes(kwargs, sampling_rate, epochs)
    _check_memory(family, kwargs)
    missing = [k for k, p in accepted.items() if p.default is inspect.Parameter.empty and k not in kwargs
               and p.kind is not inspect.Parameter.VAR_KEYWORD]
    if missing:
        flags = [_flag(k) + {"num_steps": " (or --epochs)", "batch_size": " (or --sampling-rate)"}.get(k, "")
                 if family == "dpsgd" else _flag(k) for k in missing]
        raise PlanUsageError(f"`privdyn plan {family}` needs {', '.join(flags)}; see `privdyn plan --help`.")
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
            elif family == "dpgd" and data is not None and public_stats:  # the user's rows, declared public
                from privdyn.plan._data import load_data

                check = result.simulate(verify, seed, data=load_data(data, label_column))
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
