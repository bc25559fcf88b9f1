"""Empirical privacy audits: how distinguishable neighbouring datasets really are, measured by running a mechanism.

Every mechanism privdyn simulates is run on a worst-case pair of neighbouring datasets (a canary), and the runs give a
lower bound on its epsilon: by a threshold test with Clopper-Pearson confidence (Jagielski, Ullman, Oprea 2020,
arXiv 2006.07709; Nasr et al. 2021, arXiv 2101.04535), or exactly where the output law is Gaussian (Balle and Wang
2018, arXiv 1805.06530, Theorem 8). An accountant labelled ``exact`` or ``bound`` whose epsilon is below the audited
lower bound under-reports: a violation. Modules: :mod:`~privdyn.audit.statistics` (the test),
:mod:`~privdyn.audit.gaussian` (the exact Gaussian curve), :mod:`~privdyn.audit.base` (what a mechanism provides),
:mod:`~privdyn.audit.law` (the runs against the release's stated law), :mod:`~privdyn.audit.mechanisms` (the
canary pairs), :mod:`~privdyn.audit.dpgd_rows` (one-pass DP-GD: the simulator, the plan and DPLinearRegression),
:mod:`~privdyn.audit.noisy_sgd` (the hsgd surrogate's row),
:mod:`~privdyn.audit.estimators` (AdaSSP and the planner's other rows),
:mod:`~privdyn.audit.torch_optimizer` (PyTorch's ``PrivateOptimizer`` run on the DP-SGD canary; needs the torch extra),
:mod:`~privdyn.audit.core` (one row of the table), :mod:`~privdyn.audit.table` (the table, through the runner),
:mod:`~privdyn.audit.mutants` (mutation testing of the privacy path: ``python -m privdyn.audit.mutants``).

Every row runs the public entry point it names (``AuditRow.entry_point``) end to end, and where its release is
Gaussian given the data, checks the runs against the release's stated law (``law_check``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "base": ("Mechanism",),
    "core": ("AuditRow", "audit_mechanism"),
    "gaussian": ("gaussian_shift_delta", "gaussian_shift_epsilon"),
    "mechanisms": ("MECHANISMS", "mechanism"),
    "statistics": ("clopper_pearson_upper", "epsilon_lower_bound", "threshold_audit"),
    "table": ("audit",),
}

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS)

if TYPE_CHECKING:
    from privdyn.audit.base import Mechanism as Mechanism
    from privdyn.audit.core import AuditRow as AuditRow
    from privdyn.audit.core import audit_mechanism as audit_mechanism
    from privdyn.audit.gaussian import gaussian_shift_delta as gaussian_shift_delta
    from privdyn.audit.gaussian import gaussian_shift_epsilon as gaussian_shift_epsilon
    from privdyn.audit.mechanisms import MECHANISMS as MECHANISMS
    from privdyn.audit.mechanisms import mechanism as mechanism
    from privdyn.audit.statistics import clopper_pearson_upper as clopper_pearson_upper
    from privdyn.audit.statistics import epsilon_lower_bound as epsilon_lower_bound
    from privdyn.audit.statistics import threshold_audit as threshold_audit
    from privdyn.audit.table import audit as audit
