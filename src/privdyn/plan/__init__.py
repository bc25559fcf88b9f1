"""The planner: from a privacy budget to hyper-parameters, a predicted utility and a certified guarantee.

One function per family, each returning a :class:`Plan` (``to_json()``, ``summary()``, ``simulate(num_runs, seed)``,
``pareto_front()``):

* :func:`dpgd` — one-pass clipped DP-GD for linear regression (Bombari et al., arXiv 2505.16329);
* :func:`langevin` — noisy GD on a strongly convex, smooth loss (Chourasia, Ye, Shokri, arXiv 2102.05855);
* :func:`hsgd` — one-pass noisy SGD on least squares, with the homogenized-SGD privacy *surrogate*
  (Lin, Kolaczyk, Smith, Paquette, arXiv 2510.16687);
* :func:`dpsgd` — DP-SGD with independent or correlated noise (Wang et al., arXiv 2605.12648).

and the reverse direction, :func:`dpsgd_account`: the ε of a DP-SGD run already trained, by the allow-listed
accountant, with its label and statement (``privdyn account``).

``privdyn.plan.dpgd`` is the planning function; each family's implementation lives in a private module
(``privdyn.plan._dpgd``, ...), and what other packages use is public here: the plan types (``DPGDPlan``,
``DPSGDPlan``, ``HSGDPlan``, ``LangevinPlan``), the dpgd schedule families (``DPGD_SCHEDULES``), the planning share's
release (``Release``, ``release_statistics``) and the zCDP budget helpers (``zcdp_for_epsilon``,
``zcdp_statement``). The family modules load on first use, so ``import privdyn.plan`` imports neither SciPy's
optimizers nor matplotlib.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from privdyn.plan import families

if TYPE_CHECKING:
    from privdyn.plan._account import DPSGDAccount, dpsgd_account
    from privdyn.plan._budget import zcdp_for_epsilon as zcdp_for_epsilon
    from privdyn.plan._budget import zcdp_statement as zcdp_statement
    from privdyn.plan._data import Release as Release
    from privdyn.plan._data import release_statistics as release_statistics
    from privdyn.plan._dpgd import SCHEDULES as DPGD_SCHEDULES  # noqa: F401 - importable, not in __all__
    from privdyn.plan._dpgd import DPGDPlan as DPGDPlan
    from privdyn.plan._dpgd import dpgd as dpgd
    from privdyn.plan._dpsgd import DPSGDPlan as DPSGDPlan
    from privdyn.plan._dpsgd import dpsgd as dpsgd
    from privdyn.plan._hsgd import HSGDPlan as HSGDPlan
    from privdyn.plan._hsgd import hsgd as hsgd
    from privdyn.plan._langevin import LangevinPlan as LangevinPlan
    from privdyn.plan._langevin import langevin as langevin
    from privdyn.plan._plan import Alternative, ParetoFront, Plan, Verification

__all__ = ["Plan", "Alternative", "ParetoFront", "Verification", "FAMILIES", "dpgd", "langevin", "hsgd", "dpsgd",
           "plan", "dpsgd_account", "DPSGDAccount"]

FAMILIES = families.FAMILIES
"""The families privdyn can plan; ``privdyn.plan.<family>`` is each one's planning function."""
_TYPES = ("Plan", "Alternative", "ParetoFront", "Verification")
_FROM: dict[str, tuple[str, str]] = {
    "DPGDPlan": ("_dpgd", "DPGDPlan"), "DPGD_SCHEDULES": ("_dpgd", "SCHEDULES"), "DPSGDPlan": ("_dpsgd", "DPSGDPlan"),
    "HSGDPlan": ("_hsgd", "HSGDPlan"), "LangevinPlan": ("_langevin", "LangevinPlan"), "Release": ("_data", "Release"),
    "release_statistics": ("_data", "release_statistics"), "zcdp_for_epsilon": ("_budget", "zcdp_for_epsilon"),
    "zcdp_statement": ("_budget", "zcdp_statement"),
}
"""The names other privdyn packages (audit, sklearn) use: each family's plan type (what its planning function
returns), the dpgd schedule families, the planning share's release and the zCDP budget helpers. Importable from here
and loaded on first use; not in ``__all__``: users get plans from the planning functions, not by building them."""


def __getattr__(name: str) -> Any:
    if name in FAMILIES:
        return families.planning_function(name)
    if name in _TYPES:
        return getattr(importlib.import_module(f"{__name__}._plan"), name)
    if name in _FROM:
        module, attribute = _FROM[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    if name in ("dpsgd_account", "DPSGDAccount"):
        return getattr(importlib.import_module(f"{__name__}._account"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def plan(family: str, **options: Any) -> Plan:
    """``privdyn.plan.<family>(**options)``: the plan of one family by name (one of :data:`FAMILIES`)."""
    result: Plan = families.planning_function(family)(**options)
    return result
