"""The installed version of privdyn and the folder it is imported from.

The package ``__init__`` (``privdyn.__version__``) and the modules that record the version or hash the source (the
CLI, the run harness, the report, the plan's JSON, the audit's mutants) read them here, so none of them imports its
own enclosing package. Nothing heavy is imported: ``importlib.metadata`` (itself slow to import) only on the first
call to :func:`version`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["version", "package_dir"]


@cache
def version() -> str:
    """The version of the installed distribution; ``"0+unknown"`` in a source tree that was not installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as distribution_version

    try:
        return distribution_version("privdyn")
    except PackageNotFoundError:
        return "0+unknown"


def package_dir() -> Path:
    """The folder of the ``privdyn`` package that is imported (``Path(privdyn.__file__).parent``, not resolved)."""
    return Path(__file__).parent
