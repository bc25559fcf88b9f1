"""Figure 1 of the dpgd paper: the risk ODE against DP-GD itself (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329).

``dpgd-fig1`` runs Algorithm 1 (:func:`privdyn.algorithms.dpgd.simulate_dpgd`) and solves the deterministic
equivalent of Theorem 1 (Definition 4.2, eq. 4.7; :func:`privdyn.dynamics.dpgd.solve_risk_ode`) in four panels:
α ∈ {0, ½} × Σ ∈ {I, eigenvalues uniform on [0, 2]}, with γ = 0.1, ρ = 1, ζ = 0.3, η̃(0) = 3, c = 1, ‖θ*‖ = 1
(R(0) = ½) and d ∈ {10, 100, 1000}, n = d/γ. It plots R(θ_⌊tn⌋) against t (mean ± 1 sd over runs), the ODE curve
R(t), and for α = 0 the released iterate θ_n after its final noise next to R(1) + 2c²η̃(1)²γ²/ρ² (Proposition 4.4).

Checks:

* invariant: the ODE series (the default exponential solver) equal an independent solve: the right-hand side of
  (4.7) written out in this module, with the printed closed forms of μ_c, ν_c (Lemma B.1), integrated by scipy's LSODA,
  to 1e-4 relative;
* invariant at d >= 500: the simulated mean of every curve point (t on the grid, θ_{n−1} against R(1⁻), the released
  θ_n against R(1) + jump) lies within z·SE of the ODE plus a derived finite-d allowance. z is Bonferroni-corrected
  at family-wise level 1e−6 over the curve's points (never below 5). The allowance is
  :func:`~privdyn.runs.results.finite_size_allowance`: |mean − ODE| at the largest d of the run in
  [100, d), scaled by √(d_small/d) and capped at 3%·√(200/d) of the prediction. Below d = 500 the comparison is a
  finding;
* paper claims: an independent ODE reference table (Figure 1; only at the paper's parameters), the
  final-iterate jump 2c²η̃(1)²γ²/ρ² (= 0.18 at the paper's setting; exact in expectation at any d since tr Σ = d,
  so a z = 5 check with no allowance), and the across-run standard deviation shrinking like 1/√d (a fitted log-log
  slope against −½).

Settings the paper leaves open, chosen here: the uniform spectrum is the quantile-midpoint grid λ_i = 2(i − ½)/d;
(θ*_i)² = 1/d with positive signs (signs do not matter for a diagonal Σ); the time grid has 41 points; the full config
uses 40 runs instead of the paper's 10 (the ±1 sd bands do not depend on the number of runs; the SE-based invariant
needs enough runs for its normal approximation).
"""

from __future__ import annotations

from privdyn.experiments.dpgd_trajectory.common import (  # noqa: F401 - its public names stay importable from the package
    ALLOWANCE_MIN_DIM as ALLOWANCE_MIN_DIM,
)
from privdyn.experiments.dpgd_trajectory.common import (
    CLAIM as CLAIM,
)
from privdyn.experiments.dpgd_trajectory.common import (
    INVARIANT as INVARIANT,
)
from privdyn.experiments.dpgd_trajectory.common import (
    LARGE_DIM as LARGE_DIM,
)
from privdyn.experiments.dpgd_trajectory.common import (
    LSODA_RTOL as LSODA_RTOL,
)
from privdyn.experiments.dpgd_trajectory.common import (
    Fig1Config as Fig1Config,
)
from privdyn.experiments.dpgd_trajectory.common import (
    SpectrumName as SpectrumName,
)
from privdyn.experiments.dpgd_trajectory.common import (
    reference_risk_ode as reference_risk_ode,
)
from privdyn.experiments.dpgd_trajectory.fig1 import (  # noqa: F401 - its public names stay importable from the package
    Fig1 as Fig1,
)

EXPERIMENTS = (Fig1(),)
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = [
    "Fig1Config",
    "Fig1",
    "EXPERIMENTS",
    "reference_risk_ode",
]
