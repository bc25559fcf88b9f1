"""Figure 1 of the dpgd paper (arXiv 2505.16329): its setting, the independent ODE reference table, the design (the
independent reference solver lives in :mod:`privdyn.reference.dpgd_risk`)."""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from privdyn import _check
from privdyn.data.synthetic import SyntheticDesign, num_samples
from privdyn.experiments.dpgd_common import synthetic_design
from privdyn.reference.dpgd_risk import reference_risk_ode
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.naming import unit_key
from privdyn.runs.results import CheckKind

__all__ = ["Fig1Config", "reference_risk_ode"]


INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM

LARGE_DIM = 500
"""From this d on, the simulation is compared with the ODE as an invariant; below it, as a finding."""
ALLOWANCE_MIN_DIM = 100
"""The smallest d from which a finite-d allowance is derived (smaller d are too far from the asymptotic regime)."""
LSODA_RTOL = 1e-4
"""The exponential solver against the independent LSODA solve (issue 5)."""

SpectrumName = Literal["identity", "uniform"]


# --------------------------------------------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig1Config(ExperimentConfig):
    """Figure 1's setting (its caption): γ = 0.1, ρ = 1, ζ = 0.3, η̃(0) = 3, c = 1, ‖θ*‖ = 1, d ∈ {10, 100, 1000}.

    Panels are (schedule_exponent, spectrum) pairs in the paper's order: 1 = (0, identity), 2 = (0, uniform),
    3 = (½, identity), 4 = (½, uniform). ``runs_per_unit`` only splits the runs into units (run i draws the same
    numbers whatever the split).
    """

    schedule_exponents: tuple[float, ...] = (0.0, 0.5)
    spectra: tuple[SpectrumName, ...] = ("identity", "uniform")
    dims: tuple[int, ...] = (10, 100, 1000)
    aspect_ratio: float = 0.1
    clip: float = 1.0
    initial_learning_rate: float = 3.0
    rho: float = 1.0
    label_noise: float = 0.3
    num_runs: int = 40
    runs_per_unit: int = 20
    num_time_points: int = 41

    quick_overrides = {"dims": (100, 500), "num_runs": 40, "runs_per_unit": 20}

    def validate(self) -> None:
        _check.positive(aspect_ratio=self.aspect_ratio, clip=self.clip, rho=self.rho, label_noise=self.label_noise,
                        initial_learning_rate=self.initial_learning_rate)
        _check.non_negative(schedule_exponents=self.schedule_exponents)
        bad = [a for a in self.schedule_exponents if 0 < a < 1 and a != 0.5]
        if bad:
            raise ValueError(f"schedule_exponents must be in {{0, 0.5}} or >= 1 (Assumption 2 of arXiv 2505.16329); "
                             f"got {bad[0]!r}.")
        for name in ("schedule_exponents", "spectra", "dims"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name} must not repeat a value; got {list(values)}.")
        _check.integer(minimum=1, dims=np.asarray(self.dims))
        _check.integer(minimum=2, num_runs=self.num_runs, num_time_points=self.num_time_points)
        _check.integer(minimum=1, runs_per_unit=self.runs_per_unit)
        for d in self.dims:
            n = round(d / self.aspect_ratio)
            if n < 2:
                raise ValueError(f"aspect_ratio must give n = round(d/aspect_ratio) >= 2 for every d in dims; got "
                                 f"aspect_ratio={self.aspect_ratio!r} with d={d} (n={n}).")

    def panels(self) -> list[tuple[int, float, str]]:
        """(panel, schedule_exponent, spectrum), panel numbers 1.. in the paper's order (α outer, Σ inner)."""
        out: list[tuple[int, float, str]] = []
        for i, alpha in enumerate(self.schedule_exponents):
            for j, spectrum in enumerate(self.spectra):
                out.append((i * len(self.spectra) + j + 1, alpha, spectrum))
        return out

    def num_samples(self, d: int) -> int:
        return num_samples(d, aspect_ratio=self.aspect_ratio)

    def nominal_times(self) -> np.ndarray:
        """The grid t_j in (0, 1) at which the curve is reported (t = 0 is deterministic, t = 1 is split off)."""
        return np.linspace(0.0, 1.0, self.num_time_points)[1:-1]

    def record_steps(self, d: int) -> np.ndarray:
        """The iterations k_j = ⌊t_j n⌋ of the nominal grid, then n − 1 (θ_{n−1}, compared with R(1⁻))."""
        n = self.num_samples(d)
        steps = np.floor(self.nominal_times() * n * (1.0 + 1e-12)).astype(np.int64)
        return np.append(steps, n - 1)


_PAPER_CONFIG = Fig1Config()
_PAPER_KEYS = ("aspect_ratio", "clip", "initial_learning_rate", "rho", "label_noise")

# Figure 1 ODE reference, computed independently (d -> ∞ ODE, uniform grid λ_i = 2(i − ½)/d): (α, spectrum) ->
# R(0.25), R(0.5), R(0.75), R(1), final private risk, as printed.
_REFERENCE_TIMES = (0.25, 0.5, 0.75, 1.0)
_REFERENCE_TABLE = {
    (0.0, "identity"): ("0.1878", "0.0624", "0.0233", "0.0122", "0.1922"),
    (0.0, "uniform"): ("0.1504", "0.0547", "0.0281", "0.0186", "0.1986"),
    (0.5, "identity"): ("0.2310", "0.1246", "0.0914", "0.0972", "0.0972"),
    (0.5, "uniform"): ("0.1882", "0.1032", "0.0826", "0.0915", "0.0915"),
}


# --------------------------------------------------------------------------------------------------------------
# The experiment
# --------------------------------------------------------------------------------------------------------------


def _design(spectrum: str, d: int, config: Fig1Config) -> SyntheticDesign:
    return synthetic_design(spectrum, d, label_noise=config.label_noise, norm=1.0)


def _ode_times(config: Fig1Config, d: int) -> np.ndarray:
    """The curve times k_j/n, θ_{n−1}'s time, the reference times of the reference table, and 1."""
    n = config.num_samples(d)
    return np.unique(np.concatenate([config.record_steps(d) / n, _REFERENCE_TIMES]))


def _stream_key(spectrum: str, d: int) -> str:
    """The simulator's stream key: runs are numbered globally, so the split into units does not change them."""
    return unit_key(method="simulation", spectrum=spectrum, d=d)
