"""What privdyn can account: the allow-list of DP-SGD mechanisms, and one entry point for each direction.

A DP-SGD run with correlated noise is described by three things besides its sizes: the noise **strategy** (the
matrix factorization, :mod:`privdyn.privacy.correlated`), the **sampler** (how records join the steps:
``"fixed_size"``, ``"poisson"``, ``"shuffle"``, ``"random_allocation"`` or ``"cyclic_poisson"``) and the
**neighbouring relation** (``"replace_one"``,
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

=================  ==========  ===========  =============================================================  =====
noise              sampler     neighboring  accountant                                                     label
=================  ==========  ===========  =============================================================  =====
independent        poisson     add_remove   dp-accounting PLD of the Poisson-subsampled Gaussian            bound
independent        fixed_size  replace_one  dp-accounting RDP, sampling without replacement (WBK 2019)      bound
independent        fixed_size  zero_out     Theorem F.8's pair at lambda = 0: Poisson-subsampled Gaussian   bound
                                            at rate B/n (dp-accounting PLD)
independent        random_     add_remove,  the balls-in-bins pair (Chua et al., arXiv 2412.16802) over      bound
                   allocation  zero_out     ceil(T / t) epochs of t = ceil(n / B) steps
                                            (:mod:`privdyn.privacy.random_allocation`)
independent,       cyclic_     add_remove,  Theorem 4 of Choquette-Choo et al. 2023 (arXiv 2306.08153):     bound
toeplitz           poisson     zero_out     ceil(T / b) Poisson-subsampled Gaussians at rate q = B b / n,
                                            noise multiplier kappa / ||c|| (dp-accounting PLD; b = the
                                            encoder's bands; :mod:`privdyn.privacy.cyclic_poisson`)
lambda_cgd         fixed_size  zero_out     the smaller of the amplified bound and Theorem F.12 (proved     bound
                                            constant 2, where epsilon <= 1 and r T >= 3 ln(2 / delta))
lambda_cgd         poisson     add_remove   amplified bound                                                 bound
lambda_cgd         poisson     zero_out     amplified bound (the add_remove pair, see below)                bound
banded_inverse,    fixed_size  zero_out     amplified bound                                                 bound
toeplitz, blt      poisson     add_remove   amplified bound                                                 bound
                   poisson     zero_out     amplified bound (the add_remove pair, see below)                bound
lambda_cgd,        random_     add_remove,  the smaller of the Gaussian mechanism at the worst one-step-    bound
banded_inverse,    allocation  zero_out     per-epoch set's sensitivity (no amplification) and the spectral
toeplitz, blt                               route (independent noise at kappa / ||C||_2, random-allocation
                                            PLD) (:mod:`privdyn.privacy.correlated_allocation`)
=================  ==========  ===========  =============================================================  =====

**The amplified bound** (:func:`privdyn.privacy.amplification.amplified_epsilon`, ``method="bound"``) bounds the
Theorem F.8 dominating pair of Wang et al. (arXiv 2605.12648v1, Appendix F.2), in both directions, by the smaller of
the spectral bound (the pair is a post-processing of the Poisson-subsampled Gaussian at noise multiplier
``kappa / ||C||_2``, dp-accounting's PLD; :mod:`privdyn.privacy.amplification.spectral`) and, at sampling rates from
0.9 on, the conditional composition of mixture-of-Gaussians PLDs (Choquette-Choo, Ganesh, Steinke & Thakurta, ICLR
2024, arXiv 2310.15526). It holds for any lower-triangular Toeplitz encoder when the differing record joins each step
independently with probability ``r = B / n``: fixed-size batches drawn afresh at every step (zero-out neighbours, as
Theorem F.8 states) and Poisson sampling (add-remove neighbours, the same proof). **Poisson sampling with zero-out
neighbours is the same pair as with add-remove**: in both cases the differing record joins each step independently
with probability ``r`` and, when it joins, moves the noisy sum by at most the clip, while a zeroed record, like an
absent one, adds nothing to it; the pair of Theorem F.8 describes exactly that (the step may scale the sum by public
constants such as the expected batch size, never by the realized one, as privdyn's optimizers do). The dispatcher
evaluates the bound at PLD discretization :data:`AMPLIFIED_DISCRETIZATION` (every discretization gives an upper
bound; this one is the calibration's, so a calibrated kappa is certified by the very function that reports epsilon).

For lambda-CGD under fixed-size sampling with zero-out neighbours, Theorem F.12 (with the constant 2 its proof gives)
is a second valid upper bound where its conditions hold: the row reports the smaller epsilon (or the smaller
calibrated kappa), and ``source`` names the accountant that gave it.

**Correlated noise under random allocation** (:mod:`privdyn.privacy.correlated_allocation`), the smaller of two
bounds: a record's steps form a set with one step per epoch; for each such set the run is dominated by a Gaussian
mechanism of sensitivity ``||C 1_S||`` (unit clip), and by joint convexity the mixture over the allocation is
dominated by the worst set (no amplification); and the run is a post-processing of the independent-noise run at
``kappa / a``, ``a >= ||C||_2``, accounted by the random-allocation PLD (the spectral route).

Still refused, each with a named reason (:data:`REFUSAL_REASONS`): shuffled epochs for every noise (participation
is not i.i.d. per step, and shuffling is not Poisson sampling; for independent noise the error prints the Poisson
epsilon beside a valid lower bound on shuffling's, :mod:`privdyn.privacy.shuffling`), replace-one neighbours for
correlated noise under every sampler, random allocation included (a replace-one neighbour is two zero-out steps;
the group conversion is loose and privdyn does not apply it silently), independent noise under fixed-size add-remove or
Poisson replace-one, cyclic Poisson with a dense encoder (banded inverse, lambda-CGD, BLT, square root: Theorem 4
needs a banded C) or with replace-one neighbours, and the square-root factorization under any other sampler: its
encoder coefficients never become negligible, so the amplified bound conditions on every lag of the whole horizon and
its cost grows as T^2, which has not been measured to keep a calibration usable at training horizons.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from privdyn import _check
from privdyn.privacy import correlated, correlated_calibration
from privdyn.privacy.labels import (
    SAMPLERS,
    Guarantee,
    NeighboringRelation,
    PrivacyLoss,
    Sampler,
    as_neighboring,
    as_sampler,
)

if TYPE_CHECKING:
    from privdyn.privacy.mechanism import DPSGDMechanism

__all__ = [
    "AMPLIFIED_DISCRETIZATION",
    "SAMPLERS",
    "NOISE_KINDS",
    "NotAccountableError",
    "REFUSAL_REASONS",
    "refusal_reason",
    "AllowListRow",
    "ALLOW_LIST",
    "noise_kind",
    "accountant_for",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
]


class NotAccountableError(ValueError):
    """privdyn has no accountant for this (noise, sampler, neighbouring relation), or its conditions fail.

    Attributes:
        reason: the name of the reason (a key of :data:`REFUSAL_REASONS`), or None.
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


REFUSAL_REASONS = {
    "shuffled_epochs": "a shuffled epoch puts each record in exactly one batch of a random partition: participation "
                       "is neither Poisson nor i.i.d. per step, accounting it as Poisson sampling can under-report "
                       "epsilon (Chua et al. 2024), and privdyn knows no usable upper bound for it",
    "square_root_cost": "the square-root factorization's encoder coefficients never become negligible, so the "
                        "amplified bound conditions on every lag and costs T^2, not measured usable at training "
                        "horizons",
    "correlated_replace_one": "a replace-one neighbour is two zero-out steps of a matrix mechanism; the group "
                              "conversion is loose and privdyn does not apply it silently",
    "cyclic_poisson_dense_encoder": "cyclic Poisson is accounted by Theorem 4 of Choquette-Choo et al. 2023 "
                                    "(arXiv 2306.08153), which needs a banded encoder C (b bands, b parts); this "
                                    "strategy's C is dense (a banded inverse, lambda-CGD, BLT or the square root), so "
                                    "a record's participations b steps apart still overlap in C and the theorem does "
                                    "not apply",
    "cyclic_poisson_bands_exceed_partitions": "Theorem 4 of Choquette-Choo et al. 2023 needs the encoder's bands "
                                              "b <= the sampler's number of parts; with fewer parts a record's "
                                              "participations overlap in C",
    "relation_not_covered": "no accountant in privdyn covers this sampler under this neighbouring relation (the "
                            "sampler's pair is stated for another relation; accounting it as that one could "
                            "under-report epsilon)",
}
"""Why a combination is refused: each triple off :data:`ALLOW_LIST` maps to one of these (:func:`refusal_reason`)."""


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
        sampler: one of :data:`SAMPLERS` (:data:`privdyn.privacy.labels.DPSGD_SAMPLERS`).
        neighboring: the neighbouring relation.
        accountant: a short name of the accountant (written into plans and reports).
        guarantee: the label of its numbers.
        conditions: the conditions under which it holds beyond the triple (empty if none); checked in code.
        epsilon: ``(strategy, noise_multiplier, sizes, delta) -> PrivacyLoss``.
        noise_multiplier: ``(strategy, epsilon, delta, sizes, rtol) -> PrivacyLoss``, on the safe side.
    """

    noise: str
    sampler: Sampler
    neighboring: NeighboringRelation
    accountant: str
    guarantee: Guarantee
    conditions: str
    epsilon: EpsilonFn = dataclasses.field(repr=False, compare=False)
    noise_multiplier: NoiseMultiplierFn = dataclasses.field(repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sampler", as_sampler(self.sampler))
        _check.record(self)

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


def _f12_applies(sizes: _Sizes, delta: float) -> bool:
    """Theorem F.12's condition on the horizon: r T >= 3 ln(2 / delta)."""
    return sizes.sampling_prob * sizes.num_steps >= 3.0 * math.log(2.0 / delta)


def _f12_epsilon(strategy: correlated.Strategy, noise_multiplier: float, sizes: _Sizes,
                 delta: float) -> PrivacyLoss | None:
    """Theorem F.12 solved for epsilon at a given kappa (its kappa is proportional to 1 / epsilon); None where the
    theorem says nothing (r T < 3 ln(2 / delta), or an epsilon above 1)."""
    if noise_multiplier == 0.0 or not _f12_applies(sizes, delta):
        return None
    lam = strategy.noise_correlation  # type: ignore[attr-defined]
    at_one = correlated_calibration.noise_multiplier_theorem_f12(
        lam, n=sizes.n, batch_size=sizes.batch_size, num_steps=sizes.num_steps, epsilon=1.0, delta=delta,
        constant=_F12_CONSTANT)
    epsilon = float(at_one.value) / noise_multiplier
    if epsilon > 1.0:
        return None
    source = (f"Wang et al., arXiv 2605.12648v1, Theorem F.12 (= Thm 5.1) with its proved constant 2, solved for "
              f"epsilon; lambda-CGD with noise_correlation={lam!r}, fixed-size batches, zero-out neighbours")
    return PrivacyLoss(value=epsilon, guarantee=Guarantee.BOUND, quantity="epsilon",
                       neighboring=NeighboringRelation.ZERO_OUT, sampler="fixed_size", source=source)


def _f12_noise_multiplier(strategy: correlated.Strategy, epsilon: float, delta: float,
                          sizes: _Sizes) -> PrivacyLoss | None:
    """Theorem F.12's kappa for (epsilon, delta) (closed form); None outside its conditions."""
    if epsilon > 1.0 or not _f12_applies(sizes, delta):
        return None
    loss = correlated_calibration.noise_multiplier_theorem_f12(
        strategy.noise_correlation, n=sizes.n, batch_size=sizes.batch_size,  # type: ignore[attr-defined]
        num_steps=sizes.num_steps, epsilon=epsilon, delta=delta, constant=_F12_CONSTANT)
    return dataclasses.replace(loss, sampler="fixed_size")


AMPLIFIED_DISCRETIZATION = 1e-3
"""The PLD value-discretization interval at which the allow-list evaluates and calibrates the amplified bound (the
calibration's default of :func:`~privdyn.privacy.amplification.amplified_noise_multiplier`; any interval gives an
upper bound; 1e-4 lowered epsilon by at most 4e-4 relative in two checks at T = 100-200, at 3-10 times the cost)."""


def _amplified_settings() -> Any:
    from privdyn.privacy.amplification import BoundSettings

    return BoundSettings(value_discretization_interval=AMPLIFIED_DISCRETIZATION)


def _uses_f12(strategy: correlated.Strategy, sampler: str) -> bool:
    return noise_kind(strategy) == "lambda_cgd" and sampler == "fixed_size"


def _amplified_epsilon(sampler: str, relation: NeighboringRelation) -> EpsilonFn:
    def epsilon(strategy: correlated.Strategy, noise_multiplier: float, sizes: _Sizes, delta: float) -> PrivacyLoss:
        from privdyn.privacy.amplification import amplified_epsilon

        if noise_multiplier == 0.0:
            return PrivacyLoss(value=math.inf, guarantee=Guarantee.BOUND, quantity="epsilon", neighboring=relation,
                               sampler=sampler, source="no noise: no privacy")
        loss = amplified_epsilon(strategy, noise_multiplier=noise_multiplier, sampling_prob=sizes.sampling_prob,
                                 num_steps=sizes.num_steps, delta=delta, sampler=sampler,
                                 settings=_amplified_settings())
        loss = dataclasses.replace(loss, source=loss.source + _relation_note(sampler, relation))
        if _uses_f12(strategy, sampler):
            f12 = _f12_epsilon(strategy, noise_multiplier, sizes, delta)
            if f12 is not None and float(f12.value) < float(loss.value):
                loss = dataclasses.replace(f12, source=f"{f12.source} (smaller than the amplified bound's "
                                                      f"{float(loss.value):.6g})")
        return dataclasses.replace(loss, sampler=sampler, neighboring=relation)

    return epsilon


def _amplified_noise_multiplier(sampler: str, relation: NeighboringRelation) -> NoiseMultiplierFn:
    def noise_multiplier(strategy: correlated.Strategy, epsilon: float, delta: float, sizes: _Sizes,
                         rtol: float) -> PrivacyLoss:
        from privdyn.privacy.amplification import amplified_epsilon, amplified_noise_multiplier

        settings = _amplified_settings()
        f12 = _f12_noise_multiplier(strategy, epsilon, delta, sizes) if _uses_f12(strategy, sampler) else None
        if f12 is not None:
            # One evaluation decides which bound calibrates lower: if the amplified bound misses the target at
            # F.12's kappa, its own kappa is larger (epsilon decreases in kappa), and F.12's is the answer.
            at_f12 = amplified_epsilon(strategy, noise_multiplier=float(f12.value), sampling_prob=sizes.sampling_prob,
                                       num_steps=sizes.num_steps, delta=delta, sampler=sampler, settings=settings)
            if float(at_f12.value) > epsilon:
                return dataclasses.replace(f12, sampler=sampler, neighboring=relation,
                                           source=f"{f12.source} (the amplified bound needs more noise)")
        loss = amplified_noise_multiplier(strategy, epsilon=epsilon, delta=delta, sampling_prob=sizes.sampling_prob,
                                          num_steps=sizes.num_steps, sampler=sampler, rtol=max(rtol, 1e-6),
                                          settings=settings)
        return dataclasses.replace(loss, sampler=sampler, neighboring=relation,
                                   source=loss.source + _relation_note(sampler, relation))

    return noise_multiplier


def _relation_note(sampler: str, relation: NeighboringRelation) -> str:
    if (sampler, relation) == ("poisson", NeighboringRelation.ZERO_OUT):
        return "; zero-out neighbours under Poisson sampling: the same pair as add-remove"
    return ""


_REPLACE_ONE, _ADD_REMOVE, _ZERO_OUT = (NeighboringRelation.REPLACE_ONE, NeighboringRelation.ADD_REMOVE,
                                        NeighboringRelation.ZERO_OUT)


def _allocation_epochs(sizes: _Sizes) -> tuple[int, int]:
    """Random allocation: an epoch has t = ceil(n / B) steps (mean batch n / t <= B); a partial last epoch is
    accounted as a whole one (releasing a prefix of an epoch is post-processing of the whole epoch)."""
    steps_per_epoch = -(-sizes.n // sizes.batch_size)
    return steps_per_epoch, -(-sizes.num_steps // steps_per_epoch)


def _allocation_epsilon(relation: NeighboringRelation) -> EpsilonFn:
    def epsilon(strategy: correlated.Strategy, noise_multiplier: float, sizes: _Sizes, delta: float) -> PrivacyLoss:
        from privdyn.privacy import random_allocation

        if noise_multiplier == 0.0:
            return PrivacyLoss(value=math.inf, guarantee=Guarantee.BOUND, quantity="epsilon", neighboring=relation,
                               sampler="random_allocation", source="no noise: no privacy")
        steps_per_epoch, epochs = _allocation_epochs(sizes)
        loss = random_allocation.epsilon(noise_multiplier, steps_per_epoch=steps_per_epoch, num_epochs=epochs,
                                         delta=delta, neighboring=relation)
        if relation == _ZERO_OUT:
            loss = dataclasses.replace(loss, source=loss.source + "; zero-out neighbours: the same pair as "
                                                                  "add-remove (a zeroed record adds nothing)")
        return loss

    return epsilon


def _allocation_noise_multiplier(relation: NeighboringRelation) -> NoiseMultiplierFn:
    def noise_multiplier(strategy: correlated.Strategy, epsilon: float, delta: float, sizes: _Sizes,
                         rtol: float) -> PrivacyLoss:
        """Brent's method on log epsilon against log kappa, on the accountant itself, then certified: the returned
        kappa's epsilon is <= the target and kappa / (1 + rtol) exceeds it (epsilon decreases in kappa)."""
        from scipy import optimize

        evaluate = _allocation_epsilon(relation)
        cache: dict[float, float] = {}

        def eps(kappa: float) -> float:
            if kappa not in cache:
                cache[kappa] = float(evaluate(strategy, kappa, sizes, delta).value)
            return cache[kappa]

        poisson = correlated_calibration.noise_multiplier_dp_accounting(
            n=sizes.n, batch_size=sizes.batch_size, num_steps=sizes.num_steps, epsilon=epsilon, delta=delta,
            sampler="poisson", neighboring=_ADD_REMOVE, rtol=1e-2)
        high = float(poisson.value)
        while eps(high) > epsilon:
            high *= 1.25
        low = high / 1.25
        while eps(low) <= epsilon:
            high, low = low, low / 1.25
        if high / low > 1.0 + rtol:
            root = optimize.brentq(lambda x: math.log(eps(math.exp(x))) - math.log(epsilon), math.log(low),
                                   math.log(high), xtol=rtol / 4.0)
            candidate = math.exp(root) * (1.0 + rtol / 4.0)
            while eps(candidate) > epsilon:  # certify the safe side
                candidate *= 1.0 + rtol / 4.0
            high = min(high, candidate)
            low = max(low, high / (1.0 + rtol))
            while eps(low) <= epsilon:  # certify tightness: kappa / (1 + rtol) misses the target
                high, low = low, low / (1.0 + rtol)
        steps_per_epoch, epochs = _allocation_epochs(sizes)
        return PrivacyLoss(value=high, guarantee=Guarantee.BOUND, quantity="noise_multiplier", neighboring=relation,
                           sampler="random_allocation",
                           source=f"Brent's method on the random-allocation PLD (t={steps_per_epoch}, {epochs} "
                                  f"epochs): "
                                  f"epsilon({high:.6g}) <= {epsilon!r} < epsilon(kappa / (1 + rtol))")

    return noise_multiplier


def _cyclic_epsilon(relation: NeighboringRelation) -> EpsilonFn:
    def epsilon(strategy: correlated.Strategy, noise_multiplier: float, sizes: _Sizes, delta: float) -> PrivacyLoss:
        from privdyn.privacy import cyclic_poisson

        parts = cyclic_poisson.num_partitions(strategy)
        q = cyclic_poisson.sampling_prob(n=sizes.n, batch_size=sizes.batch_size, num_partitions=parts)
        return cyclic_poisson.epsilon(strategy, noise_multiplier, sampling_prob=q, num_steps=sizes.num_steps,
                                      delta=delta, num_partitions=parts, neighboring=relation)

    return epsilon


def _correlated_allocation_epsilon(relation: NeighboringRelation) -> EpsilonFn:
    def epsilon(strategy: correlated.Strategy, noise_multiplier: float, sizes: _Sizes, delta: float) -> PrivacyLoss:
        from privdyn.privacy import correlated_allocation

        steps_per_epoch, epochs = _allocation_epochs(sizes)
        return correlated_allocation.epsilon(strategy, noise_multiplier, steps_per_epoch=steps_per_epoch,
                                             num_epochs=epochs, delta=delta, neighboring=relation)

    return epsilon


def _cyclic_noise_multiplier(relation: NeighboringRelation) -> NoiseMultiplierFn:
    def noise_multiplier(strategy: correlated.Strategy, epsilon: float, delta: float, sizes: _Sizes,
                         rtol: float) -> PrivacyLoss:
        from privdyn.privacy import cyclic_poisson

        parts = cyclic_poisson.num_partitions(strategy)
        q = cyclic_poisson.sampling_prob(n=sizes.n, batch_size=sizes.batch_size, num_partitions=parts)
        return cyclic_poisson.noise_multiplier(strategy, epsilon=epsilon, delta=delta, sampling_prob=q,
                                               num_steps=sizes.num_steps, num_partitions=parts,
                                               neighboring=relation, rtol=rtol)

    return noise_multiplier


def _correlated_allocation_noise_multiplier(relation: NeighboringRelation) -> NoiseMultiplierFn:
    def noise_multiplier(strategy: correlated.Strategy, epsilon: float, delta: float, sizes: _Sizes,
                         rtol: float) -> PrivacyLoss:
        """The smaller of the two bounds' kappas: the unamplified one in closed form; the spectral one as a times
        the independent-noise row's calibrated kappa, certified by one evaluation. One evaluation of the spectral
        bound at the unamplified kappa decides whether the spectral search can win (epsilon decreases in kappa)."""
        from privdyn.privacy import correlated_allocation

        steps_per_epoch, epochs = _allocation_epochs(sizes)
        common: dict[str, Any] = dict(steps_per_epoch=steps_per_epoch, num_epochs=epochs, delta=delta,
                                      neighboring=relation)
        unamplified = correlated_allocation.unamplified_noise_multiplier(strategy, epsilon=epsilon, **common)
        if float(correlated_allocation.spectral_epsilon(strategy, float(unamplified.value), **common).value) > epsilon:
            return dataclasses.replace(unamplified, source=f"{unamplified.source} (the spectral route needs more "
                                                           f"noise)")
        a = correlated_allocation.operator_norm(strategy, steps_per_epoch * epochs)
        tau = _allocation_noise_multiplier(relation)(correlated.Independent(), epsilon, delta, sizes, rtol)
        kappa = a * float(tau.value)
        while float(correlated_allocation.spectral_epsilon(strategy, kappa, **common).value) > epsilon:
            kappa *= 1.0 + rtol / 4.0  # certify the safe side through the reporting function
        return PrivacyLoss(value=kappa, guarantee=Guarantee.BOUND, quantity="noise_multiplier", neighboring=relation,
                           sampler="random_allocation",
                           source=f"{correlated_allocation.SPECTRAL_SOURCE}: kappa = a tau, a = {a:.6g}, tau from "
                                  f"{tau.source}")

    return noise_multiplier


_CYCLIC = ("the records in b fixed parts (b = the encoder's bands), part t mod b active at step t, each of its "
           "records joining independently with probability q = batch_size * b / n <= 1")
_ALLOCATION = ("each record joins exactly one of the ceil(n/batch_size) steps of every epoch, uniformly and "
               "independently of the other records and of other epochs; a partial last epoch counts as whole")
_CORRELATED_ALLOCATION = (_ALLOCATION + "; any lower-triangular Toeplitz encoder with finite coefficients (the "
                          "unamplified bound needs only at most one step per record per epoch)")
_IID = "i.i.d. per-step participation with rate r = batch_size/n; every noisy step may be released"

ALLOW_LIST: tuple[AllowListRow, ...] = (
    AllowListRow("independent", Sampler.POISSON, _ADD_REMOVE, "dp_accounting_pld", Guarantee.BOUND, "",
                 _independent_epsilon("poisson", _ADD_REMOVE), _independent_noise_multiplier("poisson", _ADD_REMOVE)),
    AllowListRow("independent", Sampler.FIXED_SIZE, _REPLACE_ONE, "dp_accounting_rdp", Guarantee.BOUND, "",
                 _independent_epsilon("fixed_size", _REPLACE_ONE),
                 _independent_noise_multiplier("fixed_size", _REPLACE_ONE)),
    AllowListRow("independent", Sampler.FIXED_SIZE, _ZERO_OUT, "theorem_f8_pld", Guarantee.BOUND, "",
                 _independent_epsilon("fixed_size", _ZERO_OUT),
                 _independent_noise_multiplier("fixed_size", _ZERO_OUT)),
    *(AllowListRow("independent", Sampler.RANDOM_ALLOCATION, relation, "random_allocation_pld", Guarantee.BOUND,
                   _ALLOCATION, _allocation_epsilon(relation), _allocation_noise_multiplier(relation))
      for relation in (_ADD_REMOVE, _ZERO_OUT)),
    *(AllowListRow(noise, Sampler.CYCLIC_POISSON, relation, "banded_cyclic_poisson_pld", Guarantee.BOUND, _CYCLIC,
                   _cyclic_epsilon(relation), _cyclic_noise_multiplier(relation))
      for noise in ("independent", "toeplitz") for relation in (_ADD_REMOVE, _ZERO_OUT)),
    *(AllowListRow(noise, sampler, relation,
                   "amplified_bound_or_theorem_f12" if (noise, sampler) == ("lambda_cgd", "fixed_size")
                   else "amplified_bound", Guarantee.BOUND, _IID,
                   _amplified_epsilon(sampler.value, relation),
                   _amplified_noise_multiplier(sampler.value, relation))
      for noise in ("lambda_cgd", "banded_inverse", "toeplitz", "blt")
      for sampler, relation in ((Sampler.FIXED_SIZE, _ZERO_OUT), (Sampler.POISSON, _ADD_REMOVE),
                                (Sampler.POISSON, _ZERO_OUT))),
    *(AllowListRow(noise, Sampler.RANDOM_ALLOCATION, relation, "allocation_bound", Guarantee.BOUND,
                   _CORRELATED_ALLOCATION, _correlated_allocation_epsilon(relation),
                   _correlated_allocation_noise_multiplier(relation))
      for noise in ("lambda_cgd", "banded_inverse", "toeplitz", "blt") for relation in (_ADD_REMOVE, _ZERO_OUT)),
)
"""The accounted combinations. An accountant added to privdyn adds its row here (and to docs/accounting.md)."""


# ---------------------------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------------------------


def _relation(neighboring: str | NeighboringRelation) -> NeighboringRelation:
    return as_neighboring(neighboring)


def refusal_reason(kind: str, sampler: str, neighboring: NeighboringRelation) -> str:
    """The named reason (a key of :data:`REFUSAL_REASONS`) why a triple off the allow-list is refused."""
    if sampler == "shuffle":
        return "shuffled_epochs"
    if sampler == "cyclic_poisson" and kind not in ("independent", "toeplitz"):
        return "cyclic_poisson_dense_encoder"
    if kind == "square_root":
        return "square_root_cost"
    if kind != "independent" and neighboring == NeighboringRelation.REPLACE_ONE:
        return "correlated_replace_one"
    return "relation_not_covered"


def accountant_for(strategy: correlated.Strategy | DPSGDMechanism, *, sampler: Sampler | str | None = None,
                   neighboring: str | NeighboringRelation | None = None) -> AllowListRow:
    """The allow-list row that accounts DP-SGD with this noise, sampler and neighbouring relation.

    Args:
        strategy: a :class:`~privdyn.privacy.mechanism.DPSGDMechanism` record (then give neither ``sampler`` nor
            ``neighboring``: the record carries them), or a noise strategy with ``sampler`` and ``neighboring``.

    Raises:
        NotAccountableError: the combination is not on :data:`ALLOW_LIST` (the message names it and lists what
            privdyn accounts for this noise).
        ValueError / TypeError: an unknown sampler or relation, or not a privdyn strategy; a record given with a
            ``sampler`` or ``neighboring``, or a strategy without them.
    """
    from privdyn.privacy.mechanism import DPSGDMechanism

    if isinstance(strategy, DPSGDMechanism):
        if sampler is not None or neighboring is not None:
            raise TypeError("accountant_for takes sampler and neighboring only with a strategy: the DPSGDMechanism "
                            f"record carries its own (sampler={strategy.sampler!r}, "
                            f"neighboring={strategy.neighboring.value!r}); got sampler={sampler!r}, "
                            f"neighboring={neighboring!r}.")
        record = strategy
        strategy, sampler, neighboring = record.strategy, record.sampler, record.neighboring
    elif sampler is None or neighboring is None:
        raise TypeError("accountant_for needs sampler and neighboring with a strategy (or a DPSGDMechanism record); "
                        f"got sampler={sampler!r}, neighboring={neighboring!r}.")
    sampler = as_sampler(sampler).value
    relation = _relation(neighboring)
    kind = noise_kind(strategy)
    for row in ALLOW_LIST:
        if (row.noise, row.sampler, row.neighboring) == (kind, sampler, relation):
            return row
    same_noise = [f"{row.sampler} / {row.neighboring.value}" for row in ALLOW_LIST if row.noise == kind]
    offer = (f"for {kind} noise privdyn accounts: {'; '.join(same_noise)}" if same_noise
             else f"privdyn accounts no sampler for {kind} noise")
    reason = refusal_reason(kind, sampler, relation)
    raise NotAccountableError(
        f"privdyn cannot account DP-SGD with {kind} noise ({strategy!r}), sampler={sampler!r} and "
        f"neighboring={relation.value!r}: the combination is not on the allow-list ({reason}: "
        f"{REFUSAL_REASONS[reason]}), and accounting it as another mechanism could under-report epsilon "
        f"({offer}).", reason=reason)


def _record(strategy: correlated.Strategy, noise_multiplier: float, n: int, batch_size: int, num_steps: int,
            sampler: Sampler | str, neighboring: str | NeighboringRelation) -> DPSGDMechanism:
    from privdyn.privacy.mechanism import DPSGDMechanism

    return DPSGDMechanism(strategy=strategy, noise_multiplier=noise_multiplier, n=n, batch_size=batch_size,
                          num_steps=num_steps, sampler=sampler, neighboring=_relation(neighboring))


def dpsgd_epsilon(strategy: correlated.Strategy, *, noise_multiplier: float, n: int, batch_size: int,
                  num_steps: int, delta: float, sampler: Sampler | str,
                  neighboring: str | NeighboringRelation) -> PrivacyLoss:
    """epsilon of ``num_steps`` steps of DP-SGD with this noise strategy, by the allow-listed accountant.

    A convenience kept for compatibility: it builds the
    :class:`~privdyn.privacy.mechanism.DPSGDMechanism` record and returns its ``privacy_loss(delta)``, where the
    computation lives. A refused shuffled run with independent noise has the Poisson epsilon and a lower bound on
    shuffling's in its message (:mod:`privdyn.privacy.shuffling`).

    Args:
        strategy: the noise strategy (:mod:`privdyn.privacy.correlated`).
        noise_multiplier: kappa >= 0, the noise std on the summed clipped gradients divided by the clip.
        n, batch_size, num_steps: dataset size, (expected) batch size B <= n, number of steps T.
        delta: in (0, 1).
        sampler: one of :data:`SAMPLERS` (required: no default).
        neighboring: ``"replace_one"``, ``"add_remove"`` or ``"zero_out"`` (required: no default).

    Returns:
        ``PrivacyLoss(value=epsilon, guarantee, quantity="epsilon", neighboring, sampler, source)``; ``inf`` at
        kappa = 0.

    Raises:
        NotAccountableError: the combination is not on :data:`ALLOW_LIST`, or the accountant's conditions fail.
        ValueError: bad input (the message names the parameter).
    """
    try:
        record = _record(strategy, noise_multiplier, n, batch_size, num_steps, sampler, neighboring)
    except NotAccountableError as error:
        if error.reason != "shuffled_epochs" or noise_kind(strategy) != "independent":
            raise
        _check.scalar(noise_multiplier=noise_multiplier)
        _check.positive(noise_multiplier=noise_multiplier)
        sizes = _sizes(n, batch_size, num_steps)
        from privdyn.privacy.shuffling import shuffle_evidence

        evidence = shuffle_evidence(float(noise_multiplier), n=sizes.n, batch_size=sizes.batch_size,
                                    num_steps=sizes.num_steps, delta=_check.delta(delta),
                                    neighboring=_relation(neighboring))
        raise NotAccountableError(f"{error} {evidence.describe()}", reason=error.reason) from None
    return record.privacy_loss(delta)


def dpsgd_noise_multiplier(strategy: correlated.Strategy, *, epsilon: float, delta: float, n: int, batch_size: int,
                           num_steps: int, sampler: Sampler | str, neighboring: str | NeighboringRelation,
                           rtol: float = 1e-4) -> PrivacyLoss:
    """The noise multiplier kappa that makes DP-SGD with this noise (epsilon, delta)-DP, on the safe side.

    A convenience kept for compatibility: it builds the :class:`~privdyn.privacy.mechanism.DPSGDMechanism` record
    and returns its ``calibration(epsilon, delta, rtol=rtol)``, where the calibration lives. The returned kappa's
    epsilon, as evaluated by the row's accountant, is at most ``epsilon``; where the accountant is a search, kappa is
    within ``rtol`` of the smallest such kappa.

    Returns:
        ``PrivacyLoss(value=kappa, guarantee, quantity="noise_multiplier", neighboring, sampler, source)``.

    Raises:
        NotAccountableError: the combination is not on :data:`ALLOW_LIST`, or the accountant's conditions fail.
        ValueError: bad input (the message names the parameter).
    """
    record = _record(strategy, 0.0, n, batch_size, num_steps, sampler, neighboring)
    return record.calibration(epsilon, delta, rtol=rtol)


def _sizes(n: int, batch_size: int, num_steps: int) -> _Sizes:
    _check.finite(n=n, batch_size=batch_size, num_steps=num_steps)
    _check.integer(minimum=1, n=n, batch_size=batch_size, num_steps=num_steps)
    if int(batch_size) > int(n):
        raise ValueError(f"batch_size must be <= n = {int(n)}; got batch_size={batch_size!r}.")
    return _Sizes(int(n), int(batch_size), int(num_steps))

