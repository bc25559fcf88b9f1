"""Figures 7-8 of the dpgd paper (arXiv 2505.16329): constants, reference ODE tables and helpers shared by both."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import tuning
from privdyn.algorithms.dpgd import DPGDHyperparameters
from privdyn.experiments.dpgd_common import learning_rate_profile
from privdyn.runs.naming import json_number
from privdyn.runs.results import Z_SCORE, CheckKind, mean_se

__all__ = ["TIE_RELATIVE", "FIG7_REFERENCE"]


INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM

TIE_RELATIVE = 0.1
"""privdyn's reading of the paper's "best or tied" and "on par": within 10% of the best schedule.

The paper compares curves by eye on log-scale figures and gives no tolerance; 10% is the scale the independent reference
uses to compare the figure's simulated optima with the ODE (its item (ii)). Fixed before any
measurement; on simulations it is applied on top of z = 5 paired standard errors.
"""

ALLOWANCE_MIN_DIMENSION = 500
"""From this d on, simulation-versus-ODE comparisons are invariants with a derived finite-d allowance (issue 5)."""


_PANEL = {"identity": 1, "uniform": 2}
"""The paper's panel number of each spectrum in Figure 7; the normalized panels are these + 2."""


def _schedule_label(schedule: str, schedule_exponent: float | None) -> str:
    if schedule == "harmonic":
        return "harmonic"
    assert schedule_exponent is not None  # a polynomial schedule has one
    return f"alpha={json_number(schedule_exponent)}"


# The independent d → ∞ ODE reference for Figure 7, as printed: aspect ratio -> {schedule: value}.
# Order of the printed columns: α = 0, ½, 1, 2, harmonic. The uniform panel uses the 100-point quantile grid.
_COLUMNS = ("alpha=0", "alpha=0.5", "alpha=1", "alpha=2", "harmonic")
FIG7_REFERENCE: Mapping[str, Mapping[float, Mapping[str, str]]] = {
    "identity": {
        1.0: dict(zip(_COLUMNS, ("0.4993", "0.4997", "0.4998", "0.4999", "0.4993"), strict=True)),
        0.1: dict(zip(_COLUMNS, ("0.4383", "0.4693", "0.4823", "0.4920", "0.4383"), strict=True)),
        0.01: dict(zip(_COLUMNS, ("0.0484", "0.0384", "0.0492", "0.110", "0.0390"), strict=True)),
        1e-3: dict(zip(_COLUMNS, ("1.27e-3", "5.96e-4", "5.14e-4", "5.73e-4", "3.30e-4"), strict=True)),
        1e-4: dict(zip(_COLUMNS, ("4.32e-5", "2.03e-5", "1.66e-5", "1.63e-5", "9.13e-6"), strict=True)),
    },
    "uniform": {
        0.1: dict(zip(_COLUMNS, ("0.4051", "0.4486", "0.4695", "0.4860", "0.4051"), strict=True)),
        0.01: dict(zip(_COLUMNS, ("0.0513", "0.0409", "0.0490", "0.0892", "0.0432"), strict=True)),
        1e-3: dict(zip(_COLUMNS, ("3.70e-3", "1.75e-3", "1.39e-3", "1.36e-3", "1.64e-3"), strict=True)),
        1e-4: dict(zip(_COLUMNS, ("3.65e-4", "1.31e-4", "8.4e-5", "6.0e-5", "1.21e-4"), strict=True)),
    },
}
"""The reference optimal ODE risks per panel, aspect ratio and schedule (strings as printed)."""


def _reference_row(panel: str, aspect_ratio: float) -> Mapping[str, str] | None:
    for gamma, row in FIG7_REFERENCE.get(panel, {}).items():
        if math.isclose(gamma, aspect_ratio, rel_tol=1e-9):
            return row
    return None


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean of a − b over runs and its standard error (runs are paired by common random numbers)."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if diff.size < 2:
        return float(np.mean(diff)), math.inf
    mean, _, se = mean_se(diff)
    return float(mean), float(se)


def _run_stats(values: ArrayLike) -> tuple[float, float, float]:
    """Mean, standard deviation (ddof = 1) and standard error over runs."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return float(np.mean(x)), math.nan, math.nan
    mean, sd, se = mean_se(x)
    return float(mean), float(sd), float(se)


def _ratio_stats(num: np.ndarray, den: np.ndarray) -> tuple[float, float, float]:
    """Ratio of means r = mean(num)/mean(den), the sd of its per-run linearization, and its delta-method SE."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    r = float(np.mean(num) / np.mean(den))
    if num.size < 2:
        return r, math.nan, math.nan
    sd = float(np.std(num - r * den, ddof=1) / np.mean(den))
    return r, sd, sd / math.sqrt(num.size)


def _best_or_tied(target: str, values: Mapping[str, float], runs: Mapping[str, np.ndarray] | None) -> dict[str, Any]:
    """Is ``target`` the best schedule or within :data:`TIE_RELATIVE` of it (plus z = 5 paired SE on runs)?

    ``standard_error`` is the paired SE against the best other schedule (the one the rule uses), ``standard_errors``
    the paired SE against each other schedule (the best one depends on the seed; a check records them all).
    """
    others = {k: v for k, v in values.items() if k != target}
    best = min(others, key=lambda k: others[k])
    excess = values[target] - others[best]
    allowed = TIE_RELATIVE * others[best]
    se = None
    ses = None
    if runs is not None:
        _, se = _paired(runs[target], runs[best])
        allowed += Z_SCORE * se
        ses = [_paired(runs[target], runs[k])[1] for k in others]
    return {"best_other": best, "target": values[target], "best_value": others[best],
            "ratio": values[target] / others[best], "passed": bool(excess <= allowed), "standard_error": se,
            "standard_errors": ses}


# --------------------------------------------------------------------------------------------------------------
# ODE tuning (Figure 7, and the shared row construction)
# --------------------------------------------------------------------------------------------------------------


def _tune_on_ode(*, spectrum: Any, targets: np.ndarray, aspect_ratio: float, rho: float, clip: float,
                 label_noise: float, schedule_exponents: Sequence[float], learning_rate_min: float,
                 harmonic_offset_bounds: tuple[float, float], grid_points: int, starts: int, random_starts: int,
                 tolerance: float, ode_rtol: float) -> list[dict[str, Any]]:
    """Minimize the ODE final private risk R(1) + 2c²η̃(1)²γ²/ρ² (Proposition 4.4) per schedule.

    Polynomial schedules: over η̃(0) ∈ [learning_rate_min, 2/γ] (``privdyn.tuning.tune_polynomial``). Harmonic:
    over (η̃(0) = β/τ, τ) with η̃(0) in the same box (``privdyn.tuning.tune_harmonic`` with
    ``initial_learning_rate_bounds``): in these coordinates the landscape's flat valley (nearly constant β/τ)
    is aligned with an axis, and η̃(0) ≤ 2/γ is a box bound (§5.1: η̃(0) > 2/γ is sub-optimal).
    """
    high = 2.0 / aspect_ratio
    common: dict[str, Any] = dict(grid_points=grid_points, starts=starts, random_starts=random_starts,
                                  tol=tolerance, seed=0)
    rows: list[dict[str, Any]] = []
    for alpha in schedule_exponents:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tuning.OptimumAtBoundWarning)
            result = tuning.tune_polynomial(spectrum=spectrum, target_projections=targets, aspect_ratio=aspect_ratio,
                                            rho=rho, label_noise=label_noise, schedule_exponent=alpha, clip=clip,
                                            learning_rate_bounds=(learning_rate_min, high), rtol=ode_rtol, **common)
        rows.append({"schedule": "polynomial", "schedule_exponent": float(alpha),
                     "initial_learning_rate": result.optimum["initial_learning_rate"], "harmonic_scale": None,
                     "harmonic_offset": None, "ode_risk": result.value, "at_bound": list(result.at_bound),
                     "converged": result.converged, "evaluations": result.num_evaluations})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tuning.OptimumAtBoundWarning)
        result = tuning.tune_harmonic(spectrum=spectrum, target_projections=targets, aspect_ratio=aspect_ratio,
                                      rho=rho, label_noise=label_noise, clip=clip,
                                      initial_learning_rate_bounds=(learning_rate_min, high),
                                      harmonic_offset_bounds=harmonic_offset_bounds, rtol=ode_rtol, **common)
    eta0, tau = result.optimum["initial_learning_rate"], result.optimum["harmonic_offset"]
    rows.append({"schedule": "harmonic", "schedule_exponent": None, "initial_learning_rate": eta0,
                 "harmonic_scale": eta0 * tau, "harmonic_offset": tau, "ode_risk": result.value,
                 "at_bound": list(result.at_bound), "converged": result.converged,
                 "evaluations": result.num_evaluations})
    return rows


def _hyperparameters(row: Mapping[str, Any], *, clip: float, rho: float) -> DPGDHyperparameters:
    if row["schedule"] == "harmonic":
        profile = learning_rate_profile("harmonic", harmonic_scale=row["harmonic_scale"],
                                        harmonic_offset=row["harmonic_offset"])
    else:
        profile = learning_rate_profile("polynomial", initial_learning_rate=row["initial_learning_rate"],
                                        schedule_exponent=row["schedule_exponent"])
    return DPGDHyperparameters(clip=clip, learning_rate=profile, rho=rho)


def _privacy_error(hyper: Sequence[DPGDHyperparameters], n: int, rho: float) -> float:
    """max |ρ_recomputed/ρ − 1| over rows, ρ recomputed from the calibrated σ_k by Proposition 4.1."""
    return max(abs(float(h.privacy(n).value) / rho - 1.0) for h in hyper)
