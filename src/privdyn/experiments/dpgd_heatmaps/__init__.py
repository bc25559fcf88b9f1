"""dpgd Figures 4–6: hyper-parameter heatmaps of one-pass clipped DP-GD over (η̃(0), c).

Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329 (v2), Section 7. Each panel fixes the aspect ratio γ = d/n and
the schedule exponent α of η̃(t) = η̃(0)(1 − t)^α (eq. 5.1) and maps the final risk of Algorithm 1 over a log grid
of the initial learning rate η̃(0) (x) and the clipping constant c (y), C_clip = c√d:

* ``dpgd-fig4``: synthetic isotropic data (d = 100, Σ = I, ζ = 0.3, ‖θ*‖ = 1, ρ = 0.1), the mean over runs of the
  excess risk R(θ^p) of the released iterate, γ ∈ {0.01, 0.001} × α ∈ {0, ½}; next to it the isotropic ODE (eq. 4.11)
  plus the final jump 2c²η̃(1)²γ²/ρ² (Proposition 4.4) on the same grid, a different engine than the simulation;
* ``dpgd-fig5``: MNIST 1 vs 7 (d = 784, ρ = 0.1, γ ∈ {1, 0.1}), the validation loss P = ½·mean((X_vθ − y_v)²);
* ``dpgd-fig6``: California housing (d = 8, ρ = 0.1, γ ∈ {0.01, 0.001}, 5 runs), the validation loss.

Real data is used when its local cache exists; otherwise the bundled substitutes (digits 1 vs 7, diabetes) run on
aspect ratios their training split can reach, and the config and every series record which data was used.

Every simulated heatmap comes from :func:`privdyn.algorithms.dpgd.simulate_dpgd`, one batch per (panel, block of
runs): all grid points of a panel are rows of the same batch and share their data and noise streams (common random
numbers, keyed by the panel), and run i is the same whatever the blocking. The panel numbering follows the paper:
panels run over γ first, then α (Figure 4: 1 = (0.01, 0), 2 = (0.001, 0), 3 = (0.01, ½), 4 = (0.001, ½)).

Checks follow the paper's discussion of Figures 4-6 (Section 7): (i) the minimum lies at c < 1 and η̃(0) < 2/γ;
(ii) along the valley (rows c < 1) the best product cη̃(0) stays within a factor 3 of the ODE argmin (real data:
of the valley's geometric mean, i.e. the valley is parallel to a line cη̃(0) = const); (iii) the simulated minimum
against the ODE minimum (a finding at d = 100, below the size the finite-d allowance was derived for); (iv) α = ½
beats α = 0 at γ = 0.001; and an independent ODE reference table of minimal risks.
"""

from __future__ import annotations

from privdyn.experiments.dpgd_heatmaps.common import (  # noqa: F401 - its public names stay importable from the package
    CLAIM as CLAIM,
)
from privdyn.experiments.dpgd_heatmaps.common import (
    INVARIANT as INVARIANT,
)
from privdyn.experiments.dpgd_heatmaps.common import (
    VALLEY_FACTOR as VALLEY_FACTOR,
)
from privdyn.experiments.dpgd_heatmaps.common import (
    Fig4Config as Fig4Config,
)
from privdyn.experiments.dpgd_heatmaps.common import (
    HeatmapConfig as HeatmapConfig,
)
from privdyn.experiments.dpgd_heatmaps.common import (
    RealHeatmapConfig as RealHeatmapConfig,
)
from privdyn.experiments.dpgd_heatmaps.fig4 import (  # noqa: F401 - its public names stay importable from the package
    Fig4 as Fig4,
)
from privdyn.experiments.dpgd_heatmaps.real import (
    OUTLIER_FACTOR as OUTLIER_FACTOR,
)
from privdyn.experiments.dpgd_heatmaps.real import (  # noqa: F401 - its public names stay importable from the package
    Fig5 as Fig5,
)
from privdyn.experiments.dpgd_heatmaps.real import (
    Fig6 as Fig6,
)

EXPERIMENTS = (Fig4(), Fig5(), Fig6())
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = [
    "Fig4",
    "Fig5",
    "Fig6",
    "Fig4Config",
    "RealHeatmapConfig",
    "EXPERIMENTS",
]
