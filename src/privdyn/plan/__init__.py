"""The planner: from a privacy budget to hyper-parameters, a predicted utility and a certified guarantee.

One function per family, each returning a :class:`Plan` (``to_json()``, ``summary()``, ``simulate(num_runs, seed)``,
``pareto_front()``):

* :func:`dpgd` — one-pass clipped DP-GD for linear regression (Bombari et al., arXiv 2505.16329);
* :func:`langevin` — noisy GD on a strongly convex, smooth loss (Chourasia, Ye, Shokri, arXiv 2102.05855);
* :func:`hsgd` — one-pass noisy SGD on least squares, with the homogenized-SGD privacy *surrogate*
  (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687);
* :func:`dpsgd` — DP-SGD with independent or correlated noise (Wang et al., arXiv 2605.12648).

``privdyn.plan.dpgd(...)`` is the planning function; the module of the same name holds its types
(``from privdyn.plan.dpgd import DPGDPlan``). The family modules load on first use, so ``import privdyn.plan`` is
cheap, and the package keeps each family's name bound to its function even after its module is imported.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from privdyn.plan._plan import Alternative, ParetoFront, Plan, Verification
    from privdyn.plan.dpgd import dpgd as dpgd
    from privdyn.plan.hsgd import hsgd as hsgd
    from privdyn.plan.langevin import langevin as langevin

__all__ = ["Plan", "Alternative", "ParetoFront", "Verification", "FAMILIES", "dpgd", "langevin", "hsgd", "dpsgd",
           "plan"]

FAMILIES = ("dpgd", "langevin", "hsgd", "dpsgd")
_TYPES = ("Plan", "Alternative", "ParetoFront", "Verification")


class _Package(types.ModuleType):
    """Keeps ``privdyn.plan.<family>`` bound to the planning function when the family's module is imported."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in FAMILIES and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name in FAMILIES:
        module = importlib.import_module(f"{__name__}.{name}")
        return getattr(module, name)
    if name in _TYPES:
        return getattr(importlib.import_module(f"{__name__}._plan"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def plan(family: str, **options: Any) -> Plan:
    """``privdyn.plan.<family>(**options)``: the plan of one family by name (one of :data:`FAMILIES`)."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}; got family={family!r}.")
    function = __getattr__(family)
    result: Plan = function(**options)
    return result
