"""``privdyn audit [NAME] [--all] [--json] [--runs N] [--seed S] [--confidence C] [--executor SPEC]``.

Only typer is imported at module level; the audit loads inside the command. A bad option exits with status 2, one
line on stderr and nothing printed on stdout.
"""

from __future__ import annotations

import json
import math
from typing import Annotated

import typer
from typer.exceptions import TyperException

__all__ = ["AuditUsageError", "audit_command"]


class AuditUsageError(TyperException):
    """A bad option or value of ``privdyn audit``: exit status 2, one line."""

    exit_code = 2


def _validate(name: str | None, runs: int, seed: int, confidence: float) -> None:
    from privdyn.audit.base import missing_extra
    from privdyn.audit.mechanisms import MECHANISMS

    if name is not None and name not in MECHANISMS:
        raise AuditUsageError(f"unknown mechanism {name!r}; valid names: {', '.join(MECHANISMS)}.")
    if name is not None and (missing := missing_extra(MECHANISMS[name])) is not None:
        raise AuditUsageError(f"{missing}.")
    if not 100 <= runs <= 10**8:
        raise AuditUsageError(f"--runs must be an integer in [100, 10**8]; got {runs}.")
    if not 0 <= seed < 2**63:
        raise AuditUsageError(f"--seed must be an integer in [0, 2**63); got {seed}.")
    if not (math.isfinite(confidence) and 0.0 < confidence < 1.0):
        raise AuditUsageError(f"--confidence must be in (0, 1); got {confidence}.")


def audit_command(
    name: Annotated[str | None, typer.Argument(help="One mechanism (default: all); see the docs' audit page.")]
    = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON list of rows.")] = False,
    all_rows: Annotated[bool, typer.Option("--all", help="Also the amplified-bound rows (about a minute each).")]
    = False,
    runs: Annotated[int, typer.Option("--runs", help="Audit runs per dataset (>= 100; the CI contract uses 10^4).")]
    = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random stream.")] = 0,
    confidence: Annotated[float, typer.Option("--confidence", help="Confidence of the empirical lower bounds.")]
    = 1.0 - 1e-6,
    executor: Annotated[str, typer.Option("--executor", help="Where mechanisms run: serial, local, dask-local or "
                                                             "tcp://HOST:PORT.")] = "serial",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress display (it is drawn on stderr only when "
                                                        "stdout and stderr are terminals).")] = False,
) -> None:
    """Audit privdyn's accountants: reported epsilon against a lower bound measured on a canary pair."""
    _validate(name, runs, seed, confidence)
    from privdyn._progress import display, report
    from privdyn.audit.table import audit, available_mechanisms
    from privdyn.runs.config import ConfigError
    from privdyn.runs.runner import open_executor

    names = [name] if name else (list(available_mechanisms()) if all_rows else None)
    try:
        with open_executor(executor) as pool, display("audit", quiet=quiet) as bars:
            rows = audit(names, runs=runs, confidence=confidence, seed=seed, executor=pool,
                         progress=None if bars is None else lambda done, total: report("mechanisms", done, total))
    except ConfigError as exc:
        raise AuditUsageError(str(exc)) from None
    if name is None:  # rows that need an extra not installed here
        from privdyn.audit.table import unavailable_mechanisms

        for reason in unavailable_mechanisms().values():
            typer.echo(f"skipped: {reason}", err=True)
    if json_output:
        typer.echo(json.dumps([row.to_json() for row in rows], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"privdyn audit (seed {seed}, confidence {confidence:g})")
    for column in ("mechanism", "guarantee", "epsilon", "audited", "method", "runs", "ratio", "law (z / max)",
                   "verdict"):
        table.add_column(column)
    for row in rows:
        verdict = "VIOLATION" if row.violation else ("tight" if row.tight else "ok")
        if row.law_check is False:
            verdict = f"LAW FAILS; {verdict}"
        if row.surrogate_gap is not None:
            verdict = f"{verdict}; gap {row.surrogate_gap:+.2%}"
        law = "-" if row.law_check is None else f"{row.law_z:.3g} / {row.law_threshold:.3g}"
        table.add_row(row.mechanism, row.guarantee, f"{row.epsilon:.4g}", f"{row.audited_lower_bound:.4g}",
                      row.method, str(row.runs), f"{row.ratio:.3f}", law, verdict)
    Console(width=160).print(table)
    for row in rows:
        if row.surrogate_gap is not None:
            side = "below" if row.surrogate_gap < 0 else "above"
            typer.echo(f"finding: {row.mechanism} ({row.guarantee}): the surrogate's divergence on the audited pair "
                       f"is {abs(row.surrogate_gap):.2%} {side} the exact one; not a violation (the contract covers "
                       f"exact and bound)")
    violations = sum(row.violation for row in rows)
    failed = sum(row.law_check is False for row in rows)
    checked = sum(row.law_check is not None for row in rows)
    typer.echo(f"{len(rows)} mechanisms, {violations} violations, {failed} failed law checks (of {checked}), "
               f"{sum(row.tight for row in rows)} tight (ratio >= 0.5)")
