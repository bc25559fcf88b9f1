"""``privdyn account``: the ε of a DP-SGD run already trained, with its guarantee label and statement (``--json``).

The reverse of ``privdyn plan dpsgd``. Only typer is imported at module level; the accountants load inside the
command. A bad option, a missing one or a combination the allow-list refuses exits with status 2, one line on stderr
naming the option and what is allowed, and nothing on stdout.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from privdyn.plan.cli import PlanUsageError

__all__ = ["account_command", "OPTION_NAMES"]

_Opt = typer.Option

OPTION_NAMES = {"n": "--n", "batch_size": "--batch-size", "sampling_prob": "--sampling-rate",
                "num_steps": "--num-steps", "epochs": "--epochs", "noise_multiplier": "--noise-multiplier",
                "delta": "--delta", "sampler": "--sampler", "neighboring": "--neighboring"}
"""The keyword of :func:`privdyn.plan._account.dpsgd_account` -> the option that gives it."""


def account_command(
    noise_multiplier: Annotated[float | None, _Opt("--noise-multiplier", help="Noise std on the SUM of clipped "
                                                   "per-example gradients divided by the clip (> 0).")] = None,
    n: Annotated[int | None, _Opt("--n", help="Number of training examples (with --batch-size).")] = None,
    batch_size: Annotated[int | None, _Opt("--batch-size", help="(Expected) batch size, 1 to n.")] = None,
    sampling_rate: Annotated[float | None, _Opt("--sampling-rate", help="Sampling rate batch_size/n in (0, 1], "
                                                "instead of --batch-size (without --n: poisson only).")] = None,
    num_steps: Annotated[int | None, _Opt("--num-steps", help="Number of noisy steps (>= 1).")] = None,
    epochs: Annotated[float | None, _Opt("--epochs", help="Epochs instead of --num-steps: epochs x n / "
                                         "batch_size steps, rounded up.")] = None,
    delta: Annotated[float | None, _Opt("--delta", help="delta in (0, 1).")] = None,
    sampler: Annotated[str | None, _Opt("--sampler", help="poisson, fixed_size, random_allocation, cyclic_poisson or "
                                                         "shuffle.")] = None,
    neighboring: Annotated[str | None, _Opt("--neighboring", help="add_remove, replace_one or zero_out.")] = None,
    strategy: Annotated[str, _Opt("--strategy", help="Noise strategy: independent, lambda_cgd:LAMBDA, "
                                  "banded_inverse:D0,D1,..., toeplitz:C0,C1,..., blt:DECAYS:SCALES.")]
    = "independent",
    json_output: Annotated[bool, _Opt("--json", help="Print one JSON document.")] = False,
) -> None:
    """The epsilon of a DP-SGD run already trained: noise, sizes, delta, sampler, relation -> epsilon and its label."""
    for option, value in (("--noise-multiplier", noise_multiplier), ("--delta", delta), ("--sampler", sampler),
                          ("--neighboring", neighboring)):
        if value is None:
            meaning = {"--noise-multiplier": "a number > 0", "--delta": "a number in (0, 1)",
                       "--sampler": "poisson, fixed_size, random_allocation, cyclic_poisson or shuffle",
                       "--neighboring": "add_remove, replace_one or zero_out"}[option]
            raise PlanUsageError(f"{option} is required: {meaning}.")
    from privdyn.plan._account import dpsgd_account

    try:
        result = dpsgd_account(noise_multiplier=noise_multiplier,  # type: ignore[arg-type]  # checked above
                               delta=delta,  # type: ignore[arg-type]
                               sampler=sampler, neighboring=neighboring, n=n, batch_size=batch_size,
                               sampling_prob=sampling_rate, num_steps=num_steps, epochs=epochs, strategy=strategy,
                               names=OPTION_NAMES)
    except (ValueError, TypeError) as exc:  # NotAccountableError included: the allow-list's reason
        raise PlanUsageError(" ".join(str(exc).split())) from None
    if json_output:
        typer.echo(json.dumps(result.to_json(), allow_nan=False))
        return
    typer.echo(result.summary())
