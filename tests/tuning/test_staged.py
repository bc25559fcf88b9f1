"""Tests of privdyn.tuning.staged: the planner's starting model (the search itself is measured against an exhaustive
one in ``tests/plan/test_plan_search.py``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest


def test_linearized_model_matches_its_closed_form_and_a_direct_solve() -> None:
    """The planner's starting model: the constant schedule's closed form, and solve_ivp on the linear ODE.

    Tolerance: the trapezoid rule on 401 Chebyshev-spaced nodes (spacing h <= pi/800) errs by about
    h^2/12 * (kV)^2 <= 1e-4 relative at kV <= 7, the largest decay exponent here.
    """
    from scipy import integrate

    from privdyn.spectra import Spectrum
    from privdyn.tuning import Objective, candidates, linearized_risk

    objective = Objective(Spectrum.identity(4), np.full(1, 0.8), 0.05, 0.6, 1e-4)
    initial, gamma, rho = 0.4, 0.05, 3.0
    rate = 2.0 * math.sqrt(2.0 / math.pi) / math.sqrt(initial + 0.36)
    families = {c.name: c for c in candidates(("constant", "polynomial", "harmonic"))}
    clocks = np.array([0.05, 0.7, 4.0])
    decay = np.exp(-rate * clocks)
    closed = initial * decay + gamma * clocks / (2 * rate) * (1 - decay) + 2 * (clocks * gamma / rho) ** 2
    np.testing.assert_allclose(linearized_risk(objective, rho, families["constant"], clocks), closed, rtol=1e-4)
    for name, offset in (("polynomial (schedule_exponent 1)", None), ("harmonic", 0.2)):
        profile = families[name].learning_rate((1.0, 1.0) if offset is None else (1.0, 1.0, offset))
        total = float(profile.integral(1.0))
        for clock in clocks:
            def rhs(t: float, r: np.ndarray, clock: float = clock, profile: Any = profile,
                    total: float = total) -> np.ndarray:
                v = clock * float(profile.value(t)) / total
                dv2 = clock**2 * float(profile.squared_derivative(t)) / total**2
                return -rate * v * r + 0.5 * gamma * v**2 - 2 * gamma**2 / rho**2 * dv2
            sol = integrate.solve_ivp(rhs, (0.0, 1.0), [initial], rtol=1e-10, atol=1e-12)
            jump = 2 * gamma**2 * (clock * float(profile.value(1.0)) / total) ** 2 / rho**2
            got = linearized_risk(objective, rho, families[name], np.array([clock]), offset)[0]
            assert got == pytest.approx(sol.y[0, -1] + jump, rel=1e-4), (name, clock)
