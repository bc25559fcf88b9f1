"""Progress of long commands: what an engine reports, and the display the CLI draws on a terminal.

An engine with a long loop calls :func:`report` (a short status, and optionally ``done`` of ``total``); it costs
nothing unless a listener is installed with :func:`listening` (a context variable, so nothing global). The CLI
installs one through :func:`display`: a rich progress line on **stderr**, shown only when both stdout and stderr are
terminals and ``--quiet`` is not given, and erased when the command ends, so what a command prints on stdout (a table,
one JSON document) is the same with and without it. rich is imported only when a display is drawn.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["report", "listening", "enabled", "display"]

Listener = Callable[[str, "int | None", "int | None"], None]

_LISTENER: contextvars.ContextVar[Listener | None] = contextvars.ContextVar("privdyn_progress", default=None)


def report(message: str, done: int | None = None, total: int | None = None) -> None:
    """Tell the listener (if any) what is being computed now, and how far along (``done`` of ``total``)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(message, done, total)


@contextlib.contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Install ``listener`` for the reports made in this context (None: report nothing)."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def enabled(quiet: bool) -> bool:
    """Whether a command draws progress: not ``--quiet``, and stdout and stderr are both terminals."""
    return not quiet and sys.stdout.isatty() and sys.stderr.isatty()


@contextlib.contextmanager
def display(label: str, *, quiet: bool, inner: bool = False) -> Iterator[Any]:
    """A progress display on stderr for one command; yields None (and draws nothing) where :func:`enabled` is False.

    Yields the rich ``Progress`` object; its first task (``label``) follows :func:`report`. With ``inner``, a second,
    hidden task is added for the steps inside a unit (the experiment runner's bars use it).
    """
    if not enabled(quiet):
        with listening(None):
            yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bars = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True, redirect_stdout=False,
                    redirect_stderr=False)  # stdout stays the command's own (rich would route it to stderr)
    main = bars.add_task(label, total=None)
    if inner:
        bars.add_task("  inside the unit", total=None, visible=False)

    def listener(message: str, done: int | None, total: int | None) -> None:
        bars.update(main, description=f"{label}: {message}" if message else label, completed=done or 0, total=total)

    with bars, listening(listener):
        yield bars
