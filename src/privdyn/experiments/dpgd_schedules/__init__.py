"""Schedule comparisons of the dpgd paper: Bombari, Luo, Seroussi, Mondelli (arXiv 2505.16329v2), Figures 7 and 8.

* ``dpgd-fig7``: optimized final private risk versus n on synthetic data (d = 100, ζ = 0.3, (θ*_i)² = 1/d, ρ = 0.1,
  c = 0.1), for the polynomial schedules η̃(t) = η̃(0)(1 − t)^α (eq. 5.1), α ∈ {0, ½, 1, 2}, each with η̃(0)
  optimized, and the harmonic schedule η̃(t) = β/(t + τ) (eq. 5.18) with (β, τ) optimized. The hyper-parameters are
  tuned on the ODE deterministic equivalent (Definition 4.2, Proposition 4.4) and the tuned rows of one n are then
  simulated by Algorithm 1 together, with common random numbers. Panels (``panel`` in series and check names, the
  paper's numbering): 1 Σ = I, 2 eigenvalues uniform on [0, 2], 3 and 4 the same normalized by the α = 0 curve.
* ``dpgd-fig8``: the same comparison on real data (MNIST 1 vs 7 and California housing when cached, else the bundled
  substitutes digits 1 vs 7 and diabetes), ρ = 1, c = 0.1, validation loss versus n.

Reference values are independently computed d → ∞ ODE tables for Figure 7, never privdyn's own engines. "Tied" and "on
par" (the paper's words, read off log-scale figures) are made precise by :data:`TIE_RELATIVE`.
"""

from __future__ import annotations

from privdyn.experiments.dpgd_schedules.common import (  # noqa: F401 - its public names stay importable from the package
    ALLOWANCE_MIN_DIMENSION as ALLOWANCE_MIN_DIMENSION,
)
from privdyn.experiments.dpgd_schedules.common import (
    CLAIM as CLAIM,
)
from privdyn.experiments.dpgd_schedules.common import (
    FIG7_REFERENCE as FIG7_REFERENCE,
)
from privdyn.experiments.dpgd_schedules.common import (
    INVARIANT as INVARIANT,
)
from privdyn.experiments.dpgd_schedules.common import (
    TIE_RELATIVE as TIE_RELATIVE,
)
from privdyn.experiments.dpgd_schedules.fig7 import (  # noqa: F401 - its public names stay importable from the package
    Fig7 as Fig7,
)
from privdyn.experiments.dpgd_schedules.fig7 import (
    Fig7Config as Fig7Config,
)
from privdyn.experiments.dpgd_schedules.fig8 import (  # noqa: F401 - its public names stay importable from the package
    Fig8 as Fig8,
)
from privdyn.experiments.dpgd_schedules.fig8 import (
    Fig8Config as Fig8Config,
)
from privdyn.runs.results import (  # noqa: F401 - the former module constant Z stays importable
    Z_SCORE as Z,
)

EXPERIMENTS = (Fig7(), Fig8())
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = [
    "Fig7",
    "Fig7Config",
    "Fig8",
    "Fig8Config",
    "EXPERIMENTS",
    "TIE_RELATIVE",
    "FIG7_REFERENCE",
]
