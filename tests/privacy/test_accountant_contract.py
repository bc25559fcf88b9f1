"""The contract every privdyn accountant keeps (the pattern of dp-accounting's ``PrivacyAccountantTest``).

Each accountant is described once by an :class:`Accountant` case, and every case runs the same tests:

* the number carries a guarantee label (and, for DP-SGD, the neighbouring relation and the sampler);
* epsilon does not increase as the noise grows;
* epsilon does not decrease with the number of steps (composed accountants grow; last-iterate accountants may
  saturate, which is still non-decreasing);
* a calibration lands on the safe side of its target: the accountant itself gives at most the target at the
  calibrated noise;
* bad input raises ``ValueError`` naming the parameter.

An accountant added to privdyn adds its case to :data:`CASES`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from privdyn.privacy import (
    Guarantee,
    Independent,
    LambdaCGD,
    NeighboringRelation,
    PrivacyLoss,
    Toeplitz,
    composition_noise_scale_for_rdp,
    composition_rdp,
    dpgd_noise_calibration,
    dpgd_privacy_level,
    dpsgd_epsilon,
    dpsgd_noise_multiplier,
    dynamics_rdp,
    epsilon_dp_accounting,
    noise_multiplier_dp_accounting,
    noise_scale_for_dp,
    noise_scale_for_rdp,
    rho_to_epsilon,
    ye_shokri_rdp,
    zcdp_to_epsilon,
)

NOISES = (0.5, 1.0, 2.0, 4.0)
STEPS = (1, 10, 100, 1000)
SAFE = 1e-12  # relative rounding allowed on the safe side of a calibration target


@dataclasses.dataclass(frozen=True)
class Accountant:
    """One accountant under the contract.

    Attributes:
        name: the test id.
        loss: ``loss(noise, steps)``, the accountant's labelled privacy number at a noise level and a number of steps.
        composed: epsilon is non-decreasing in the steps (True for every accountant here; saturation is allowed).
        calibrate: ``calibrate(target, steps)`` the smallest noise meeting ``target`` by this accountant, or None.
        bad_inputs: ``(call, parameter)`` pairs: ``call()`` must raise ``ValueError`` naming ``parameter``.
        steps: the step counts to test (an accountant with a validity window narrows them).
        neighboring: the relation the numbers must carry, where the accountant states one.
    """

    name: str
    loss: Callable[[float, int], PrivacyLoss]
    calibrate: Callable[[float, int], float] | None
    bad_inputs: tuple[tuple[Callable[[], Any], str], ...]
    steps: tuple[int, ...] = STEPS
    noises: tuple[float, ...] = NOISES
    targets: tuple[float, ...] = (0.5, 2.0)
    neighboring: NeighboringRelation | None = None
    sampler: str | None = None


# -- langevin (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): RDP of noisy GD --------------------------------------

_LANGEVIN = dict(step_size=0.02, strong_convexity=1.0, smoothness=4.0, sensitivity=4.0, n=500)


def _dynamics(noise: float, steps: int) -> PrivacyLoss:
    return dynamics_rdp(10, num_steps=steps, noise_scale=noise, **_LANGEVIN)


def _dynamics_calibrate(target: float, steps: int) -> float:
    return float(noise_scale_for_rdp(10, target, num_steps=steps, **_LANGEVIN).value)


def _composition(noise: float, steps: int) -> PrivacyLoss:
    kw = {k: _LANGEVIN[k] for k in ("step_size", "sensitivity", "n")}
    return composition_rdp(10, num_steps=steps, noise_scale=noise, **kw)


def _composition_calibrate(target: float, steps: int) -> float:
    kw = {k: _LANGEVIN[k] for k in ("step_size", "sensitivity", "n")}
    return float(composition_noise_scale_for_rdp(10, target, num_steps=steps, **kw).value)


def _dynamics_dp(noise: float, steps: int) -> PrivacyLoss:
    """(epsilon, delta = 1e-5) of Corollary 1 by the optimal-order conversion of its zCDP form (linear in alpha)."""
    rdp = dynamics_rdp(2, num_steps=steps, noise_scale=noise, **_LANGEVIN)
    zcdp = float(rdp.value) / 2  # Corollary 1 is linear in the order: rdp(alpha) = alpha * zcdp
    eps = zcdp_to_epsilon(zcdp, delta=1e-5, method="bun_steinke")
    return dataclasses.replace(rdp, value=float(eps), quantity="epsilon")


def _dynamics_dp_calibrate(target: float, steps: int) -> float:
    return float(noise_scale_for_dp(target, 1e-5, method="optimal_order", num_steps=steps, **_LANGEVIN).value)


# -- Ye & Shokri's last-iterate bound (arXiv 2203.05363) -----------------------------------------------------------

def _ye_shokri(noise: float, steps: int) -> PrivacyLoss:
    loss = ye_shokri_rdp(2.0, noise_multiplier=noise, contraction=0.99, num_steps=1000, iterates=[steps])
    return dataclasses.replace(loss, value=float(np.asarray(loss.value).reshape(-1)[0]))


# -- dpgd (Bombari et al., arXiv 2505.16329): amplification by iteration, rho^2/2-zCDP of the last iterate ----------

def _dpgd(noise: float, steps: int) -> PrivacyLoss:
    """Constant steps eta = 1/steps with a constant noise multiplier sigma_k = noise * eta (as epsilon at 1e-5)."""
    eta = np.full(steps, 1.0 / steps)
    level = dpgd_privacy_level(eta, noise * eta)
    return dataclasses.replace(level, value=float(rho_to_epsilon(float(level.value), delta=1e-5)), quantity="epsilon")


def _dpgd_calibrate(target: float, steps: int) -> float:
    """The noise multiplier of Proposition 4.1's calibration for the rho that meets ``target``, as ``_dpgd``'s noise."""
    from privdyn.privacy import epsilon_to_rho

    eta = np.full(steps, 1.0 / steps)
    sigmas = dpgd_noise_calibration(eta, rho=float(epsilon_to_rho(target, delta=1e-5)))
    return float(np.max(sigmas / eta))  # a constant multiplier at least every calibrated sigma_k / eta_k


# -- DP-SGD (kan paper, arXiv 2605.12648): dp-accounting and the allow-list ----------------------------------------

_SGD = dict(n=10_000, batch_size=100)
_SGD_NOISES = (0.7, 1.4, 2.8)
_SGD_STEPS = (1, 10, 100)  # dp-accounting's PLD and RDP cost grows with the steps; the contract needs few


def _dp_accounting(sampler: str, relation: str) -> tuple[Callable[[float, int], PrivacyLoss],
                                                         Callable[[float, int], float]]:
    def loss(noise: float, steps: int) -> PrivacyLoss:
        return epsilon_dp_accounting(noise, num_steps=steps, delta=1e-5, sampler=sampler, neighboring=relation,
                                     **_SGD)

    def calibrate(target: float, steps: int) -> float:
        return float(noise_multiplier_dp_accounting(num_steps=steps, epsilon=target, delta=1e-5, sampler=sampler,
                                                    neighboring=relation, **_SGD).value)

    return loss, calibrate


def _allow_list(strategy: Any, sampler: str, relation: str, sizes: dict[str, int], rtol: float = 1e-4,
                ) -> tuple[Callable[[float, int], PrivacyLoss], Callable[[float, int], float]]:
    def loss(noise: float, steps: int) -> PrivacyLoss:
        return dpsgd_epsilon(strategy, noise_multiplier=noise, num_steps=steps, delta=1e-5, sampler=sampler,
                             neighboring=relation, **sizes)

    def calibrate(target: float, steps: int) -> float:
        return float(dpsgd_noise_multiplier(strategy, epsilon=target, num_steps=steps, delta=1e-5, sampler=sampler,
                                            neighboring=relation, rtol=rtol, **sizes).value)

    return loss, calibrate


_WOR = _dp_accounting("fixed_size", "replace_one")
_POISSON = _dp_accounting("poisson", "add_remove")
_ZERO_OUT = _allow_list(Independent(), "fixed_size", "zero_out", _SGD)
# The amplified bound (correlated noise under i.i.d. participation) costs seconds per evaluation whatever the
# horizon: tiny horizons, few noises, one target, and calibrations at rtol 1e-2 keep the contract affordable.
_AMP_SIZES = dict(n=1000, batch_size=50)
_AMP_STEPS = (2, 5, 10)
_TOEPLITZ = _allow_list(Toeplitz([1.0, 0.5, 0.25]), "poisson", "add_remove", _AMP_SIZES, rtol=1e-2)
_LAMBDA_CGD = _allow_list(LambdaCGD(0.5), "fixed_size", "zero_out", _AMP_SIZES, rtol=1e-2)

CASES = (
    Accountant("langevin_dynamics", _dynamics, _dynamics_calibrate, (
        (lambda: _dynamics(-1.0, 10), "noise_scale"),
        (lambda: dynamics_rdp(10, num_steps=-1, noise_scale=1.0, **_LANGEVIN), "num_steps"),
        (lambda: dynamics_rdp(10, num_steps=10, noise_scale=1.0, **{**_LANGEVIN, "step_size": 1.0}), "step_size"),
        (lambda: dynamics_rdp(0.5, num_steps=10, noise_scale=1.0, **_LANGEVIN), "renyi_order"),
    ), neighboring=NeighboringRelation.REPLACE_ONE),
    Accountant("langevin_composition", _composition, _composition_calibrate, (
        (lambda: _composition(0.0, 10), "noise_scale"),
        (lambda: _composition(1.0, -3), "num_steps"),
    ), neighboring=NeighboringRelation.REPLACE_ONE),
    Accountant("langevin_dynamics_dp", _dynamics_dp, _dynamics_dp_calibrate, (
        (lambda: noise_scale_for_dp(1.0, 2.0, num_steps=10, **_LANGEVIN), "delta"),
        (lambda: noise_scale_for_dp(-1.0, 1e-5, num_steps=10, **_LANGEVIN), "epsilon"),
    ), targets=(1.0, 4.0), neighboring=NeighboringRelation.REPLACE_ONE),
    Accountant("ye_shokri_last_iterate", _ye_shokri, None, (
        (lambda: ye_shokri_rdp(2.0, noise_multiplier=-1.0, contraction=0.99, num_steps=10), "noise_multiplier"),
        (lambda: ye_shokri_rdp(2.0, noise_multiplier=1.0, contraction=1.5, num_steps=10), "contraction"),
        (lambda: ye_shokri_rdp(2.0, noise_multiplier=1.0, contraction=0.99, num_steps=0), "num_steps"),
    ), neighboring=NeighboringRelation.REPLACE_ONE),
    Accountant("dpgd_amplification_by_iteration", _dpgd, _dpgd_calibrate, (
        (lambda: dpgd_privacy_level(np.full(3, 0.1), np.array([1.0, -1.0, 1.0])), "noise_multipliers"),
        (lambda: dpgd_noise_calibration(np.full(3, 0.1), rho=-1.0), "rho"),
    ), targets=(1.0, 4.0)),
    Accountant("dp_accounting_fixed_size_replace_one", *_WOR, (
        (lambda: epsilon_dp_accounting(-1.0, num_steps=10, delta=1e-5, sampler="fixed_size",
                                       neighboring="replace_one", **_SGD), "noise_multiplier"),
        (lambda: epsilon_dp_accounting(1.0, num_steps=10, delta=0.0, sampler="fixed_size",
                                       neighboring="replace_one", **_SGD), "delta"),
        (lambda: epsilon_dp_accounting(1.0, n=100, batch_size=200, num_steps=10, delta=1e-5, sampler="fixed_size",
                                       neighboring="replace_one"), "batch_size"),
    ), steps=_SGD_STEPS, noises=_SGD_NOISES, neighboring=NeighboringRelation.REPLACE_ONE, sampler="fixed_size"),
    Accountant("dp_accounting_poisson_add_remove", *_POISSON, (
        (lambda: epsilon_dp_accounting(1.0, num_steps=0, delta=1e-5, sampler="poisson", neighboring="add_remove",
                                       **_SGD), "num_steps"),
    ), steps=_SGD_STEPS, noises=_SGD_NOISES, neighboring=NeighboringRelation.ADD_REMOVE, sampler="poisson"),
    Accountant("allow_list_independent_fixed_size_zero_out", *_ZERO_OUT, (
        (lambda: _ZERO_OUT[0](-1.0, 10), "noise_multiplier"),
        (lambda: dpsgd_epsilon(Independent(), noise_multiplier=1.0, n=100, batch_size=10, num_steps=10, delta=1e-5,
                               sampler="fixed_size", neighboring="next_door"), "neighboring"),
    ), steps=_SGD_STEPS, noises=_SGD_NOISES, neighboring=NeighboringRelation.ZERO_OUT, sampler="fixed_size"),
    Accountant("allow_list_toeplitz_poisson_amplified", *_TOEPLITZ, (
        (lambda: dpsgd_epsilon(Toeplitz([1.0, 0.5]), noise_multiplier=4.0, num_steps=5, delta=2.0,
                               sampler="poisson", neighboring="add_remove", **_AMP_SIZES), "delta"),
        (lambda: dpsgd_epsilon(Toeplitz([1.0, 0.5]), noise_multiplier=4.0, num_steps=5, delta=1e-5,
                               sampler="sometimes", neighboring="add_remove", **_AMP_SIZES), "sampler"),
    ), steps=_AMP_STEPS, noises=(3.0, 6.0, 12.0), targets=(1.0,), neighboring=NeighboringRelation.ADD_REMOVE,
        sampler="poisson"),
    pytest.param(Accountant("allow_list_lambda_cgd_fixed_size_amplified_or_f12", *_LAMBDA_CGD, (
        (lambda: _LAMBDA_CGD[0](-1.0, 5), "noise_multiplier"),
    ), steps=_AMP_STEPS, noises=(3.0, 6.0, 12.0), targets=(1.0,), neighboring=NeighboringRelation.ZERO_OUT,
        sampler="fixed_size"), marks=pytest.mark.slow, id="allow_list_lambda_cgd_fixed_size_amplified_or_f12"),
)


def _value(loss: PrivacyLoss) -> float:
    return float(np.asarray(loss.value).reshape(-1)[0])


@pytest.fixture(params=CASES, ids=[c.name if isinstance(c, Accountant) else None for c in CASES])
def case(request: pytest.FixtureRequest) -> Accountant:
    return request.param


def test_label_is_present(case: Accountant) -> None:
    loss = case.loss(case.noises[1], case.steps[1])
    assert isinstance(loss, PrivacyLoss) and isinstance(loss.guarantee, Guarantee)
    assert loss.guarantee in (Guarantee.EXACT, Guarantee.BOUND), "a calibrated accountant reports a guarantee"
    assert loss.source, "the number says where it comes from"
    if case.neighboring is not None:
        assert loss.neighboring is case.neighboring
    if case.sampler is not None:
        assert loss.sampler == case.sampler


def test_epsilon_does_not_increase_with_the_noise(case: Accountant) -> None:
    for steps in case.steps:
        values = [_value(case.loss(noise, steps)) for noise in case.noises]
        assert all(b <= a * (1 + SAFE) for a, b in zip(values, values[1:], strict=False)), (steps, values)
        assert values[-1] < values[0], f"more noise must help somewhere: {values}"


def test_epsilon_does_not_decrease_with_the_steps(case: Accountant) -> None:
    for noise in case.noises:
        values = [_value(case.loss(noise, steps)) for steps in case.steps]
        assert all(b >= a * (1 - SAFE) for a, b in zip(values, values[1:], strict=False)), (noise, values)


def test_calibration_lands_on_the_safe_side(case: Accountant) -> None:
    if case.calibrate is None:
        pytest.skip(f"{case.name} has no calibration")
    for target in case.targets:
        for steps in case.steps[1:3]:
            noise = case.calibrate(target, steps)
            assert math.isfinite(noise) and noise > 0
            assert _value(case.loss(noise, steps)) <= target * (1 + SAFE), (target, steps, noise)


def test_bad_input_names_the_parameter(case: Accountant) -> None:
    for call, parameter in case.bad_inputs:
        with pytest.raises(ValueError, match=parameter):
            call()
