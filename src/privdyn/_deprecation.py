"""Deprecation paths: renamed arguments keep working for a while, with a warning that names the replacement."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

__all__ = ["deprecated_arguments", "renamed_arguments"]

P = ParamSpec("P")
R = TypeVar("R")


def renamed_arguments(**renames: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Accept the old keyword names of renamed arguments, ``old="new"``, with a :class:`DeprecationWarning`.

    Passing both the old and the new name is a ``TypeError``. Positional calls are unaffected.
    """

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"{function.__name__}() got both {new!r} and its deprecated name {old!r}.")
                warnings.warn(f"{function.__name__}(): the argument {old!r} is deprecated; use {new!r}.",
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper

    return decorate


def deprecated_arguments(owner: str, names: Sequence[str], replacement: str, *, stacklevel: int = 3) -> None:
    """Warn once, with a :class:`DeprecationWarning`, that ``owner``'s arguments ``names`` still work for one release
    and that ``replacement`` (a clause naming what to pass instead) replaces them.

    ``stacklevel`` 3 points the warning at the caller of the function that calls this one.
    """
    listed = ", ".join(repr(name) for name in names)
    what = f"the argument {listed} is" if len(names) == 1 else f"the arguments {listed} are"
    warnings.warn(f"{owner}: {what} deprecated and will be removed in the next release; {replacement}.",
                  DeprecationWarning, stacklevel=stacklevel)
