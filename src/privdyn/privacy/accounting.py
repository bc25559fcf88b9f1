"""What privdyn can account: the allow-list of DP-SGD mechanisms, and one entry point for each direction.

A DP-SGD run with correlated noise is described by three things besides its sizes: the noise **strategy** (the
matrix factorization, :mod:`privdyn.privacy.correlated`), the **sampler** (how records join the steps:
``"fixed_size"``, ``"poisson"`` or ``"shuffle"``) and the **neighbouring relation** (``"replace_one"``,
``"add_remove"``, ``"zero_out"``). privdyn accounts a run only if that triple is a row of :data:`ALLOW_LIST`;
everything else raises :class:`NotAccountableError`, which names the combination. A mechanism is never accounted
as if it were another one: shuffling is not Poisson sampling, correlated noise is not independent noise, and one
neighbouring relation is not another. The check is on the strategy's exact kind (:func:`noise_kind`), never on
class inheritance (:class:`~privdyn.privacy.correlated.LambdaCGD` is a banded-inverse strategy, but a
banded-inverse strategy is not accounted by lambda-CGD's theorem).

Units: ``noise_multiplier`` is kappa, the standard deviation of the noise added to the **sum** of the clipped
per-example gradients divided by the clip (Wang et al., arXiv 2605.12648, Algorithm 1 and Theorem F.8). Under
``replace_one`` the sum's L2 sensitivity is twice the clip, so dp-accounting receives kappa / 2 there.

Rows (the reference of each accountant is in its ``source``):

=============  ============  ============  ===============================================================  =====
noise          sampler       neighboring   accountant                                                       label
=============  ============  ============  ===============================================================  =====
independent    poisson       add_remove    dp-accounting PLD of the Poisson-subsampled Gaussian              bound
independent    fixed_size    replace_one   dp-accounting RDP, sampling without replacement (WBK 2019)        bound
independent    fixed_size    zero_out      Theorem F.8's pair at lambda = 0: Poisson-subsampled Gaussian     bound
                                           at rate B/n (dp-accounting PLD)
lambda_cgd     fixed_size    zero_out      Theorem F.12 with its proved constant 2; valid only for           bound
                                           epsilon <= 1 and r T >= 3 ln(2 / delta)
=============  ============  ============  ===============================================================  =====
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from privdyn import _check
from privdyn.privacy import correlated, correlated_calibration
from privdyn.privacy.labels import SAMPLERS, Guarantee, NeighboringRelation, PrivacyLoss

__all__ = [
    "SAMPLERS",
    "NOISE_KINDS",
    "NotAccountableError",
    "AllowListRow",
    "ALLOW_LIST",
    "noise_kind",
    "accountant_for",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
]


class NotAccountableError(ValueError):
    """privdyn has no accountant for this (noise, sampler, neighbouring relation), or its conditions fail."""


NOISE_KINDS = ("independent", "lambda_cgd", "banded_inverse", "toeplitz", "blt", "square_root")
"""Every strategy kind of :mod:`privdyn.privacy.correlated` (the values of ``Strategy.name``)."""

_KIND_OF_TYPE: dict[type, str] = {
    correlated.Independent: "independent",
    correlated.LambdaCGD: "lambda_cgd",
    correlated.BandedInverse: "banded_inverse",
    correlated.Toeplitz: "toeplitz",
    correlated.BufferedToeplitz: "blt",
    correlated.SquareRoot: "square_root",
}


def noise_kind(strategy: correlated.Strategy) -> str:
    """The exact kind of a noise strategy: its class, never a parent class; ``LambdaCGD(0)`` is ``"independent"``.

    Raises:
        TypeError: ``strategy`` is not one of privdyn's strategy classes (a subclass is not accounted either).
    """
    kind = _KIND_OF_TYPE.get(type(strategy))
    if kind is None:
        raise TypeError(f"strategy must be one of privdyn's strategies ({', '.join(t.__name__ for t in _KIND_OF_TYPE)}"
                        f"); got strategy={strategy!r} of type {type(strategy).__name__}.")
    if kind == "lambda_cgd" and strategy.noise_correlation == 0.0:  # type: ignore[attr-defined]
        return "independent"
    return kind


@dataclasses.dataclass(frozen=True)
class _Sizes:
    n: int
    batch_size: int
    num_steps: int

    @property
    def sampling_prob(self) -> float:
        return self.batch_size / self.n


EpsilonFn = Callable[[correlated.Strategy, float, _Sizes, float], PrivacyLoss]
NoiseMultiplierFn = Callable[[correlated.Strategy, float, float, _Sizes, float], PrivacyLoss]


@dataclasses.dataclass(frozen=True)
class AllowListRow:
    """One accounted combination and its accountant.

    Attributes:
        noise: the strategy kind (:data:`NOISE_KINDS`).
        sampler: ``"fixed_size"``, ``"poisson"`` or ``"shuffle"``.
        neighboring: the neighbouring relation.
        accountant: a short name of the accountant (written into plans and reports).
        guarantee: the label of its numbers.
        conditions: the conditions under which it holds beyond the triple (empty if none); checked in code.
        epsilon: ``(strategy, noise_multiplier, sizes, delta) -> PrivacyLoss``.
        noise_multiplier: ``(strategy, epsilon, delta, sizes, rtol) -> PrivacyLoss``, on the safe side.
    """

    noise: str
    sampler: str
    neighboring: NeighboringRelation
    accountant: str
    guarantee: Guarantee
    conditions: str
    epsilon: EpsilonFn = dataclasses.field(repr=False, compare=False)
    noise_multiplier: NoiseMultiplierFn = dataclasses.field(repr=False, compare=False)

    def describe(self) -> str:
        """One line: ``noise / sampler / neighboring: accountant (label)``."""
        return f"{self.noise} / {self.sampler} / {self.neighboring.value}: {self.accountant} ({self.guarantee.value})"


# ---------------------------------------------------------------------------------------------------------------
# The accountants of the rows
# ---------------------------------------------------------------------------------------------------------------


def _independent_epsilon(sampler: str, relation: NeighboringRelation) -> EpsilonFn:
    def epsilon(strategy: correlated.Strategy, noise_multiplier: float, sizes: _Sizes, delta: float) -> PrivacyLoss:
        return correlated_calibration.epsilon_dp_accounting(
            noise_multiplier, n=sizes.n, batch_size=sizes.batch_size, num_steps=sizes.num_steps, delta=delta,
            sampler=sampler, neighboring=relation)

    return epsilon


def _independent_noise_multiplier(sampler: str, relation: NeighboringRelation) -> NoiseMultiplierFn:
    def noise_multiplier(strategy: correlated.Strategy, epsilon: float, delta: float, sizes: _Sizes,
                         rtol: float) -> PrivacyLoss:
        return correlated_calibration.noise_multiplier_dp_accounting(
            n=sizes.n, batch_size=sizes.batch_size, num_steps=sizes.num_steps, epsilon=epsilon, delta=delta,
            sampler=sampler, neighboring=relation, rtol=rtol)

    return noise_multiplier


_F12_CONSTANT = 2.0  # the constant Theorem F.12's proof gives (the statement has 8): see noise_multiplier_theorem_f12


def _f12_conditions(sizes: _Sizes, delta: float) -> None:
    rate_steps = sizes.sampling_prob * sizes.num_steps
    chernoff = 3.0 * math.log(2.0 / delta)
    if rate_steps < chernoff:
        raise NotAccountableError(
            f"Theorem F.12 (lambda-CGD, fixed-size sampling, zero-out) needs r*T >= 3*ln(2/delta): r*T = "
            f"batch_size/n*num_steps = {rate_steps:.6g} < {chernoff:.6g} at delta={delta!r}; privdyn has no other "
            "accountant for lambda > 0 here (take more steps or a larger batch).")


def _f12_epsilon(strategy: correlated.Strategy, noise_multiplier: float, sizes: _Sizes, delta: float) -> PrivacyLoss:
    """Theorem F.12 solved for epsilon at a given kappa (the theorem's kappa is proportional to 1 / epsilon)."""
    _f12_conditions(sizes, delta)
    lam = strategy.noise_correlation  # type: ignore[attr-defined]
    if noise_multiplier == 0.0:
        epsilon = math.inf
    else:
        at_one = correlated_calibration.noise_multiplier_theorem_f12(
            lam, n=sizes.n, batch_size=sizes.batch_size, num_steps=sizes.num_steps, epsilon=1.0, delta=delta,
            constant=_F12_CONSTANT)
        epsilon = float(at_one.value) / noise_multiplier
    if 1.0 < epsilon < math.inf:  # no noise is no privacy (inf); in between, the theorem says nothing
        raise NotAccountableError(
            f"Theorem F.12 (lambda-CGD with noise_correlation={lam!r}, fixed-size sampling, zero-out) holds only for "
            f"epsilon <= 1, and noise_multiplier={noise_multiplier!r} would need epsilon = {epsilon:.6g}; privdyn "
            "has no accountant for this run (use a noise multiplier of at least "
            f"{noise_multiplier * epsilon:.6g}).")
    source = (f"Wang et al., arXiv 2605.12648v1, Theorem F.12 (= Thm 5.1) with its proved constant 2, solved for "
              f"epsilon; lambda-CGD with noise_correlation={lam!r}, fixed-size batches, zero-out neighbours")
    return PrivacyLoss(value=epsilon, guarantee=Guarantee.BOUND, quantity="epsilon",
                       neighboring=NeighboringRelation.ZERO_OUT, sampler="fixed_size", source=source)


def _f12_noise_multiplier(strategy: correlated.Strategy, epsilon: float, delta: float, sizes: _Sizes,
                          rtol: float) -> PrivacyLoss:
    _f12_conditions(sizes, delta)
    lam = strategy.noise_correlation  # type: ignore[attr-defined]
    if epsilon > 1.0:
        raise NotAccountableError(
            f"Theorem F.12 (lambda-CGD with noise_correlation={lam!r}, fixed-size sampling, zero-out) holds only for "
            f"epsilon <= 1; got epsilon={epsilon!r}. privdyn has no accountant for lambda > 0 at this budget.")
    loss = correlated_calibration.noise_multiplier_theorem_f12(
        lam, n=sizes.n, batch_size=sizes.batch_size, num_steps=sizes.num_steps, epsilon=epsilon, delta=delta,
        constant=_F12_CONSTANT)
    return dataclasses.replace(loss, sampler="fixed_size")


_REPLACE_ONE, _ADD_REMOVE, _ZERO_OUT = (NeighboringRelation.REPLACE_ONE, NeighboringRelation.ADD_REMOVE,
                                        NeighboringRelation.ZERO_OUT)

ALLOW_LIST: tuple[AllowListRow, ...] = (
    AllowListRow("independent", "poisson", _ADD_REMOVE, "dp_accounting_pld", Guarantee.BOUND, "",
                 _independent_epsilon("poisson", _ADD_REMOVE), _independent_noise_multiplier("poisson", _ADD_REMOVE)),
    AllowListRow("independent", "fixed_size", _REPLACE_ONE, "dp_accounting_rdp", Guarantee.BOUND, "",
                 _independent_epsilon("fixed_size", _REPLACE_ONE),
                 _independent_noise_multiplier("fixed_size", _REPLACE_ONE)),
    AllowListRow("independent", "fixed_size", _ZERO_OUT, "theorem_f8_pld", Guarantee.BOUND, "",
                 _independent_epsilon("fixed_size", _ZERO_OUT),
                 _independent_noise_multiplier("fixed_size", _ZERO_OUT)),
    AllowListRow("lambda_cgd", "fixed_size", _ZERO_OUT, "theorem_f12_proved", Guarantee.BOUND,
                 "epsilon <= 1 and r*T >= 3*ln(2/delta), r = batch_size/n", _f12_epsilon, _f12_noise_multiplier),
)
"""The accounted combinations. An accountant added to privdyn adds its row here (and to docs/accounting.md)."""


# ---------------------------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------------------------


def _relation(neighboring: str | NeighboringRelation) -> NeighboringRelation:
    try:
        return NeighboringRelation(neighboring)
    except ValueError:
        choices = ", ".join(repr(r.value) for r in NeighboringRelation)
        raise ValueError(f"neighboring must be one of {choices}; got neighboring={neighboring!r}.") from None


def accountant_for(strategy: correlated.Strategy, *, sampler: str,
                   neighboring: str | NeighboringRelation) -> AllowListRow:
    """The allow-list row that accounts DP-SGD with this noise, sampler and neighbouring relation.

    Raises:
        NotAccountableError: the combination is not on :data:`ALLOW_LIST` (the message names it and lists what
            privdyn accounts for this noise).
        ValueError / TypeError: an unknown sampler or relation, or not a privdyn strategy.
    """
    _check.one_of(SAMPLERS, sampler=sampler)
    relation = _relation(neighboring)
    kind = noise_kind(strategy)
    for row in ALLOW_LIST:
        if (row.noise, row.sampler, row.neighboring) == (kind, sampler, relation):
            return row
    same_noise = [f"{row.sampler} / {row.neighboring.value}" for row in ALLOW_LIST if row.noise == kind]
    offer = (f"for {kind} noise privdyn accounts: {'; '.join(same_noise)}" if same_noise
             else f"privdyn accounts no sampler for {kind} noise")
    raise NotAccountableError(
        f"privdyn cannot account DP-SGD with {kind} noise ({strategy!r}), sampler={sampler!r} and "
        f"neighboring={relation.value!r}: the combination is not on the allow-list, and accounting it as another "
        f"mechanism could under-report epsilon ({offer}).")


def _sizes(n: int, batch_size: int, num_steps: int) -> _Sizes:
    _check.finite(n=n, batch_size=batch_size, num_steps=num_steps)
    _check.integer(minimum=1, n=n, batch_size=batch_size, num_steps=num_steps)
    if int(batch_size) > int(n):
        raise ValueError(f"batch_size must be <= n = {int(n)}; got batch_size={batch_size!r}.")
    return _Sizes(int(n), int(batch_size), int(num_steps))


def _delta(delta: float) -> float:
    _check.scalar(delta=delta)
    _check.finite(delta=delta)
    _check.in_range(0.0, 1.0, closed="neither", delta=delta)
    return float(delta)


def dpsgd_epsilon(strategy: correlated.Strategy, *, noise_multiplier: float, n: int, batch_size: int,
                  num_steps: int, delta: float, sampler: str, neighboring: str | NeighboringRelation) -> PrivacyLoss:
    """epsilon of ``num_steps`` steps of DP-SGD with this noise strategy, by the allow-listed accountant.

    Args:
        strategy: the noise strategy (:mod:`privdyn.privacy.correlated`).
        noise_multiplier: kappa >= 0, the noise std on the summed clipped gradients divided by the clip.
        n, batch_size, num_steps: dataset size, (expected) batch size B <= n, number of steps T.
        delta: in (0, 1).
        sampler: ``"fixed_size"``, ``"poisson"`` or ``"shuffle"`` (required: no default).
        neighboring: ``"replace_one"``, ``"add_remove"`` or ``"zero_out"`` (required: no default).

    Returns:
        ``PrivacyLoss(value=epsilon, guarantee, quantity="epsilon", neighboring, sampler, source)``; ``inf`` at
        kappa = 0.

    Raises:
        NotAccountableError: the combination is not on :data:`ALLOW_LIST`, or the accountant's conditions fail.
        ValueError: bad input (the message names the parameter).
    """
    row = accountant_for(strategy, sampler=sampler, neighboring=neighboring)
    _check.scalar(noise_multiplier=noise_multiplier)
    _check.non_negative(noise_multiplier=noise_multiplier)
    return row.epsilon(strategy, float(noise_multiplier), _sizes(n, batch_size, num_steps), _delta(delta))


def dpsgd_noise_multiplier(strategy: correlated.Strategy, *, epsilon: float, delta: float, n: int, batch_size: int,
                           num_steps: int, sampler: str, neighboring: str | NeighboringRelation,
                           rtol: float = 1e-4) -> PrivacyLoss:
    """The noise multiplier kappa that makes DP-SGD with this noise (epsilon, delta)-DP, on the safe side.

    The returned kappa's epsilon, as evaluated by the row's accountant, is at most ``epsilon``; where the
    accountant is a search, kappa is within ``rtol`` of the smallest such kappa.

    Returns:
        ``PrivacyLoss(value=kappa, guarantee, quantity="noise_multiplier", neighboring, sampler, source)``.

    Raises:
        NotAccountableError: the combination is not on :data:`ALLOW_LIST`, or the accountant's conditions fail.
        ValueError: bad input (the message names the parameter).
    """
    row = accountant_for(strategy, sampler=sampler, neighboring=neighboring)
    _check.scalar(epsilon=epsilon, rtol=rtol)
    _check.positive(epsilon=epsilon)
    _check.in_range(1e-12, 1.0, closed="both", rtol=rtol)
    return row.noise_multiplier(strategy, float(epsilon), _delta(delta), _sizes(n, batch_size, num_steps),
                                float(rtol))
