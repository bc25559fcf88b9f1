"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A subpackage lists its public names once, by defining module, and calls :func:`attach`. Nothing is imported until a
name is first used, so ``import privdyn.privacy`` stays cheap and using a light name (``Guarantee``) never loads a
heavy module (scipy, numba, matplotlib). Each ``__init__`` also imports the same names under ``TYPE_CHECKING`` for
type checkers and editors; ``tests/test_api.py`` checks that the two lists agree.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["attach"]


def attach(package: str, exports: Mapping[str, Iterable[str]], *, aliases: Mapping[str, tuple[str, str]] | None = None,
           submodules: Iterable[str] = ()) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of a package that re-exports names lazily.

    Args:
        package: the package's ``__name__``.
        exports: for each submodule (relative name, e.g. ``"conversions"`` or ``"correlated.strategies"``), the
            public names it defines that the package re-exports under the same name.
        aliases: public names re-exported under a different name, ``{public: (submodule, attribute)}``, used where
            a function has its module's name (``privdyn.algorithms.noisy_gd.noisy_gd``) or where two papers give
            the same name to different things (the paper key then goes into the public name).
        submodules: submodules reachable as attributes of the package (``privdyn.privacy.langevin``), imported on
            first access.

    Returns:
        ``(__getattr__, __dir__, __all__)``; ``__all__`` is sorted and holds the re-exported names only.
    """
    targets: dict[str, tuple[str, str]] = {}
    for module, names in exports.items():
        for name in names:
            targets[name] = (module, name)
    for alias, target in (aliases or {}).items():
        if alias in targets:
            raise ValueError(f"{package}: {alias!r} is both exported and aliased.")
        targets[alias] = target
    modules = frozenset(submodules)
    clashes = modules & targets.keys()
    if clashes:
        raise ValueError(f"{package}: {sorted(clashes)} name both a submodule and an exported object.")

    def __getattr__(name: str) -> Any:
        if name in targets:
            module, attribute = targets[name]
            value = getattr(importlib.import_module(f"{package}.{module}"), attribute)
        elif name in modules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        globals_ = importlib.import_module(package).__dict__
        globals_[name] = value  # later look-ups bypass __getattr__
        return value

    public = sorted(targets)

    def __dir__() -> list[str]:
        return sorted({*importlib.import_module(package).__dict__, *targets, *modules})

    return __getattr__, __dir__, public
