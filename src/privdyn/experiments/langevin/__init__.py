"""Experiments of the langevin paper: Chourasia, Ye, Shokri 2021 (arXiv 2102.05855).

* ``langevin-fig1``: Figure 1, the RDP of noisy GD's last iterate (Corollary 1) against the composition baseline;
* ``langevin-tightness``: Section 4, the quadratic instance: lower bound, exact loss, Corollaries 1 and 2,
  composition, and a Monte-Carlo check of the Gaussian law of the iterates;
* ``langevin-table1``: Table 1 and the Theorem 4 worked example, with the utility gain over composition-based
  calibration.

Reference values are tables computed independently of privdyn from the paper's closed forms (Corollary 1, the
composition baseline, the Section 4 instance, the Theorem 4 example) and stored as printed, never from the engine.
"""

from __future__ import annotations

from privdyn.experiments.langevin.common import (  # noqa: F401 - every name the module had stays importable
    CLAIM as CLAIM,
)
from privdyn.experiments.langevin.common import (
    INVARIANT as INVARIANT,
)
from privdyn.experiments.langevin.common import (
    PAPER as PAPER,
)
from privdyn.experiments.langevin.fig1 import (
    _FIG1_ASYMPTOTES as _FIG1_ASYMPTOTES,
)
from privdyn.experiments.langevin.fig1 import (
    _FIG1_COMPOSITION_SLOPE as _FIG1_COMPOSITION_SLOPE,
)
from privdyn.experiments.langevin.fig1 import (
    _FIG1_COR1_ALPHA10 as _FIG1_COR1_ALPHA10,
)
from privdyn.experiments.langevin.fig1 import (
    _FIG1_CROSSOVER as _FIG1_CROSSOVER,
)
from privdyn.experiments.langevin.fig1 import (
    _FIG1_PAPER as _FIG1_PAPER,
)
from privdyn.experiments.langevin.fig1 import (
    _FIG1_STEPS_95 as _FIG1_STEPS_95,
)
from privdyn.experiments.langevin.fig1 import (  # noqa: F401 - every name the module had stays importable
    Fig1 as Fig1,
)
from privdyn.experiments.langevin.fig1 import (
    Fig1Config as Fig1Config,
)
from privdyn.experiments.langevin.fig1 import (
    _gaussian_rdp_from_dp_accounting as _gaussian_rdp_from_dp_accounting,
)
from privdyn.experiments.langevin.table1 import (
    _T4_COMPOSITION_BEST as _T4_COMPOSITION_BEST,
)
from privdyn.experiments.langevin.table1 import (
    _T4_DP as _T4_DP,
)
from privdyn.experiments.langevin.table1 import (
    _T4_RDP as _T4_RDP,
)
from privdyn.experiments.langevin.table1 import (
    _TABLE1_PAPER as _TABLE1_PAPER,
)
from privdyn.experiments.langevin.table1 import (
    _TABLE1_ROWS as _TABLE1_ROWS,
)
from privdyn.experiments.langevin.table1 import (  # noqa: F401 - every name the module had stays importable
    Table1 as Table1,
)
from privdyn.experiments.langevin.table1 import (
    Table1Config as Table1Config,
)
from privdyn.experiments.langevin.table1 import (
    _composition_calibrated_excess as _composition_calibrated_excess,
)
from privdyn.experiments.langevin.tightness import (
    _TIGHTNESS_CURVES as _TIGHTNESS_CURVES,
)
from privdyn.experiments.langevin.tightness import (
    _TIGHTNESS_PAPER as _TIGHTNESS_PAPER,
)
from privdyn.experiments.langevin.tightness import (
    _TIGHTNESS_TABLE as _TIGHTNESS_TABLE,
)
from privdyn.experiments.langevin.tightness import (  # noqa: F401 - every name the module had stays importable
    Tightness as Tightness,
)
from privdyn.experiments.langevin.tightness import (
    TightnessConfig as TightnessConfig,
)
from privdyn.experiments.langevin.tightness import (
    _mc_datasets as _mc_datasets,
)

EXPERIMENTS = (Fig1(), Tightness(), Table1())

__all__ = [
    "Fig1",
    "Tightness",
    "Table1",
    "EXPERIMENTS",
]
