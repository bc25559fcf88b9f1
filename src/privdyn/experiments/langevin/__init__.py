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

from privdyn.experiments.langevin.common import CLAIM as CLAIM
from privdyn.experiments.langevin.common import INVARIANT as INVARIANT
from privdyn.experiments.langevin.common import PAPER as PAPER
from privdyn.experiments.langevin.fig1 import Fig1
from privdyn.experiments.langevin.fig1 import Fig1Config as Fig1Config
from privdyn.experiments.langevin.table1 import Table1
from privdyn.experiments.langevin.table1 import Table1Config as Table1Config
from privdyn.experiments.langevin.tightness import Tightness
from privdyn.experiments.langevin.tightness import TightnessConfig as TightnessConfig

EXPERIMENTS = (Fig1(), Tightness(), Table1())
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = [
    "Fig1",
    "Tightness",
    "Table1",
    "EXPERIMENTS",
]
