"""Progress inside long units.

A unit wraps its long loop in :func:`unit_progress`. When the unit runs in the client process (the ``serial``
executor) and the caller installed a reporter with :func:`reporting` (the CLI does on a terminal), each step is
reported; elsewhere (worker processes, no terminal) the wrapper costs nothing and reports nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

__all__ = ["unit_progress", "reporting"]

T = TypeVar("T")
Reporter = Callable[[int, int | None], None]

_REPORTER: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar("privdyn_unit_progress", default=None)


def unit_progress(iterable: Iterable[T], total: int | None = None) -> Iterator[T]:
    """Yield from ``iterable``, reporting ``(done, total)`` after each item when a reporter is installed."""
    report = _REPORTER.get()
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    for done, item in enumerate(iterable, start=1):
        yield item
        if report is not None:
            report(done, total)


@contextlib.contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Install ``reporter`` for units run in this context (None: report nothing)."""
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)
