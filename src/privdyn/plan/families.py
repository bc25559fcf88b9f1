"""The families privdyn can plan, and the planning function of each.

The vocabulary the planner's own modules (the plan types, the ``privdyn plan`` command) share with the package
``__init__``: they read it here rather than from their enclosing package. Each family's planning function lives in
the private module ``privdyn.plan._<family>`` and is imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["FAMILIES", "planning_function"]

FAMILIES = ("dpgd", "langevin", "hsgd", "dpsgd")
"""The families privdyn can plan; ``privdyn.plan.<family>`` is each one's planning function."""


def planning_function(family: str) -> Callable[..., Any]:
    """The planning function of ``family`` (one of :data:`FAMILIES`), ``privdyn.plan.<family>``."""
    if not (isinstance(family, str) and family in FAMILIES):
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}; got family={family!r}.")
    function: Callable[..., Any] = getattr(importlib.import_module(f"privdyn.plan._{family}"), family)
    return function
