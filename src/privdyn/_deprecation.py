"""Deprecation paths: renamed arguments keep working for a while, with a warning that names the replacement."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["renamed_arguments"]

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
