"""Mechanism records: one frozen, validated description per private mechanism, accounted once.

A record holds everything that decides a mechanism's privacy (its sizes, noise, sampler and neighbouring relation)
and nothing else. Each record has

* ``privacy_loss(delta)``: ε at δ by the accountant privdyn uses for it (a :class:`~privdyn.privacy.labels.PrivacyLoss`
  with its guarantee label and source);
* ``calibrate(epsilon, delta)``: a new record whose noise makes it (ε, δ)-DP, on the safe side;
* ``statement(delta)``: the :class:`~privdyn.privacy.statement.PrivacyStatement` to publish, with the best membership
  test's true-positive rate where a privacy-loss distribution or Gaussian law gives it;
* ``dp_event()``: a dp-accounting ``DpEvent`` for the mechanism, so that it composes with the rest of a pipeline in
  dp-accounting, and ``dp_neighboring``, the dp-accounting ``NeighboringRelation`` to account it under. Where
  dp-accounting cannot express the mechanism (correlated noise, random allocation) it raises
  :class:`NotExpressibleError`, which names why; privdyn still accounts it.

Records: :class:`DPSGDMechanism` (DP-SGD with a noise strategy, sampler and relation; the allow-list of
:mod:`privdyn.privacy.accounting` decides what is accounted, and construction refuses the rest),
:class:`GaussianRelease` and :class:`GaussianReleases` (statistics released with Gaussian noise: the planning
share's and AdaSSP's releases), :class:`NoisyGDMechanism` (langevin: full-batch noisy GD, the last iterate) and
:class:`OnePassDPGDMechanism` (dpgd: one pass of clipped DP-GD, the final iterate). Homogenized SGD (hsgd) has its
record in :mod:`privdyn.privacy.hsgd.mechanism`: its Rényi numbers are a ``surrogate``, not a guarantee to compose, so
its ``dp_event`` raises :class:`NotExpressibleError`.

Example, composing a DP-SGD run with a Gaussian release in dp-accounting::

    import dp_accounting
    from privdyn.privacy.mechanism import DPSGDMechanism, GaussianRelease

    run = DPSGDMechanism(noise_multiplier=1.1, n=60_000, batch_size=256, num_steps=2_000, sampler="poisson",
                         neighboring="add_remove")
    release = GaussianRelease(sensitivity=1.0, noise_std=8.0, neighboring="add_remove")
    accountant = dp_accounting.pld.PLDAccountant(run.dp_neighboring)
    accountant.compose(run.dp_event()).compose(release.dp_event())
    accountant.get_epsilon(1e-5)
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, ClassVar

from privdyn import _check
from privdyn.privacy import correlated
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss, as_neighboring, as_sampler
from privdyn.privacy.membership import gaussian_tpr, membership_table, pld_tpr, zcdp_membership
from privdyn.privacy.statement import Membership, PlanningShare, PrivacyStatement

if TYPE_CHECKING:
    import dp_accounting

    from privdyn.privacy.accounting import AllowListRow, _Sizes

__all__ = ["NotExpressibleError", "DPSGDMechanism", "GaussianRelease", "GaussianReleases", "NoisyGDMechanism",
           "OnePassDPGDMechanism", "PLD_INTERVAL"]

PLD_INTERVAL = 1e-4
"""The value-discretization interval of the PLDs behind ``dp_event`` checks and the membership rates
(dp-accounting's default, and privdyn's DP-SGD accountant's)."""


class NotExpressibleError(ValueError):
    """dp-accounting has no ``DpEvent`` for this mechanism; ``reason`` is a short key, the message says why."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason



def _pld_membership(event: dp_accounting.SelfComposedDpEvent, relation: dp_accounting.NeighboringRelation,
                    ) -> Membership:
    """Membership rates from the PLD of ``SelfComposed(PoissonSampled(q, Gaussian(s)), k)``, built as dp-accounting's
    ``PLDAccountant`` builds it for that event (pessimistic, interval :data:`PLD_INTERVAL`)."""
    from dp_accounting.pld import privacy_loss_distribution

    step = event.event
    pld = privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=step.event.noise_multiplier, sampling_prob=step.sampling_probability,
        value_discretization_interval=PLD_INTERVAL, neighboring_relation=relation).self_compose(event.count)
    return membership_table(lambda a: pld_tpr(pld, a),
                            "the privacy profile of dp-accounting's pessimistic PLD of the mechanism's dp_event "
                            "(an upper bound)")


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDMechanism:
    """DP-SGD: ``num_steps`` noisy steps on batches of (expected) size ``batch_size`` out of ``n`` records.

    Attributes:
        noise_multiplier: κ >= 0, the noise std on the sum of clipped per-example gradients divided by the clip.
        n, batch_size, num_steps: dataset size, (expected) batch size B <= n, number of steps T.
        sampler: how records join the steps (:data:`privdyn.privacy.labels.SAMPLERS`; a
            :class:`~privdyn.privacy.labels.Sampler` is stored as its string value).
        neighboring: ``"replace_one"``, ``"add_remove"`` or ``"zero_out"`` (stored as a
            :class:`~privdyn.privacy.labels.NeighboringRelation`).
        strategy: the noise strategy (:mod:`privdyn.privacy.correlated`; independent noise by default).

    The record is where privdyn accounts and calibrates DP-SGD: :meth:`privacy_loss` (ε) and :meth:`calibration`
    (κ, with its label and source) call the allow-list row's accountant; the planner, ``privdyn.torch``, the audit and
    :func:`~privdyn.privacy.accounting.dpsgd_epsilon` / :func:`~privdyn.privacy.accounting.dpsgd_noise_multiplier`
    build a record and ask it.

    Raises (at construction):
        NotAccountableError: the (noise, sampler, neighbouring) triple is not on the allow-list (checked first).
        ValueError: bad input (the message names the parameter).
    """

    noise_multiplier: float
    n: int
    batch_size: int
    num_steps: int
    sampler: str
    neighboring: NeighboringRelation
    strategy: correlated.Strategy = dataclasses.field(default_factory=correlated.Independent)

    def __post_init__(self) -> None:
        from privdyn.privacy import accounting

        object.__setattr__(self, "neighboring", as_neighboring(self.neighboring))
        object.__setattr__(self, "sampler", as_sampler(self.sampler).value)
        accounting.accountant_for(self.strategy, sampler=self.sampler, neighboring=self.neighboring)  # refusals first
        _check.scalar(noise_multiplier=self.noise_multiplier)
        _check.finite(noise_multiplier=self.noise_multiplier, n=self.n, batch_size=self.batch_size,
                      num_steps=self.num_steps)
        _check.non_negative(noise_multiplier=self.noise_multiplier)
        _check.integer(minimum=1, n=self.n, batch_size=self.batch_size, num_steps=self.num_steps)
        if self.batch_size > self.n:
            raise ValueError(f"batch_size must be <= n = {int(self.n)}; got batch_size={self.batch_size!r}.")
        object.__setattr__(self, "noise_multiplier", float(self.noise_multiplier))
        for name in ("n", "batch_size", "num_steps"):
            object.__setattr__(self, name, int(getattr(self, name)))

    @property
    def row(self) -> AllowListRow:
        """The allow-list row that accounts this mechanism (:func:`privdyn.privacy.accounting.accountant_for`)."""
        from privdyn.privacy import accounting

        return accounting.accountant_for(self.strategy, sampler=self.sampler, neighboring=self.neighboring)

    def _sizes(self) -> _Sizes:
        from privdyn.privacy.accounting import _Sizes

        return _Sizes(self.n, self.batch_size, self.num_steps)

    def privacy_loss(self, delta: float) -> PrivacyLoss:
        """ε at ``delta`` by the allow-listed accountant (the row's ``epsilon``; ``inf`` at κ = 0): the one place
        privdyn computes a DP-SGD run's ε (:func:`privdyn.privacy.accounting.dpsgd_epsilon` builds this record).

        Returns:
            ``PrivacyLoss(value=epsilon, guarantee, quantity="epsilon", neighboring, sampler, source)``.

        Raises:
            NotAccountableError: the accountant's conditions fail.
        """
        return self.row.epsilon(self.strategy, self.noise_multiplier, self._sizes(), _check.delta(delta))

    def calibration(self, epsilon: float, delta: float, *, rtol: float = 1e-4) -> PrivacyLoss:
        """The noise multiplier κ that makes this run (ε, δ)-DP, on the safe side, with its label and source: the
        one place privdyn calibrates DP-SGD noise (:meth:`calibrate` and
        :func:`privdyn.privacy.accounting.dpsgd_noise_multiplier` use it). The record's own ``noise_multiplier`` is
        not used (build the record with any, e.g. 0).

        κ's ε, as evaluated by the row's accountant, is at most ``epsilon``; where the accountant is a search, κ is
        within ``rtol`` of the smallest such κ.

        Returns:
            ``PrivacyLoss(value=kappa, guarantee, quantity="noise_multiplier", neighboring, sampler, source)``.

        Raises:
            NotAccountableError: the accountant's conditions fail.
            ValueError: bad ``epsilon``, ``delta`` or ``rtol`` (the message names it).
        """
        _check.scalar(epsilon=epsilon, rtol=rtol)
        _check.positive(epsilon=epsilon)
        _check.in_range(1e-12, 1.0, closed="both", rtol=rtol)
        return self.row.noise_multiplier(self.strategy, float(epsilon), _check.delta(delta), self._sizes(),
                                         float(rtol))

    def calibrate(self, epsilon: float, delta: float, *, rtol: float = 1e-4) -> DPSGDMechanism:
        """The same mechanism with the noise multiplier of :meth:`calibration` (on the safe side, within ``rtol``
        of the smallest)."""
        return dataclasses.replace(self, noise_multiplier=float(self.calibration(epsilon, delta, rtol=rtol).value))

    @property
    def dp_neighboring(self) -> dp_accounting.NeighboringRelation:
        """The dp-accounting ``NeighboringRelation`` under which :meth:`dp_event` is accounted."""
        if (self.sampler, self.neighboring) == ("fixed_size", NeighboringRelation.ZERO_OUT):
            return NeighboringRelation.ADD_REMOVE.to_dp_accounting()  # Theorem F.8's pair is the Poisson pair
        return self.neighboring.to_dp_accounting()

    def dp_event(self) -> dp_accounting.DpEvent:
        """The dp-accounting ``DpEvent`` of the run (account it under :attr:`dp_neighboring`).

        * independent noise, Poisson sampling: ``SelfComposed(PoissonSampled(B/n, Gaussian(κ)), T)``;
        * independent noise, fixed-size batches, replace-one: ``SelfComposed(SampledWithoutReplacement(n, B,
          Gaussian(κ/2)), T)`` (the sum's sensitivity is twice the clip), for dp-accounting's RDP accountant;
        * independent noise, fixed-size batches, zero-out: the Poisson event at rate B/n, the dominating pair of
          Theorem F.8 at λ = 0 (arXiv 2605.12648), accounted under add-or-remove;
        * banded noise under cyclic Poisson: ``SelfComposed(PoissonSampled(q, Gaussian(κ/||c||)), ceil(T/b))``
          (Choquette-Choo et al. 2023, Theorem 4; :func:`privdyn.privacy.cyclic_poisson.dominating_releases`).

        Raises:
            NotExpressibleError: correlated noise under Poisson, fixed-size or random-allocation sampling (reason
                ``correlated_noise``: dp-accounting has no event for a matrix-factorization mechanism), or
                random allocation (reason ``random_allocation``: dp-accounting has no balls-in-bins event).
        """
        import dp_accounting

        from privdyn.privacy import accounting

        kind = accounting.noise_kind(self.strategy)
        kappa = self.noise_multiplier
        if self.sampler == "cyclic_poisson":
            from privdyn.privacy import cyclic_poisson

            parts = cyclic_poisson.num_partitions(self.strategy)
            q, releases, norm = cyclic_poisson.dominating_releases(
                self.strategy, sampling_prob=cyclic_poisson.sampling_prob(n=self.n, batch_size=self.batch_size,
                                                                          num_partitions=parts),
                num_steps=self.num_steps, num_partitions=parts, neighboring=self.neighboring)
            step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(kappa / norm))
            return dp_accounting.SelfComposedDpEvent(step, releases)
        if kind != "independent":
            raise NotExpressibleError(
                f"dp-accounting has no DpEvent for {kind} correlated noise under {self.sampler} sampling: a "
                "matrix-factorization mechanism is not a composition of independent Gaussian steps; privdyn accounts "
                f"it with {self.row.accountant}", reason="correlated_noise")
        if self.sampler == "random_allocation":
            raise NotExpressibleError(
                "dp-accounting has no DpEvent for random allocation (each record in one uniformly drawn step of "
                "every epoch); privdyn accounts it with the balls-in-bins PLD (privdyn.privacy.random_allocation)",
                reason="random_allocation")
        if (self.sampler, self.neighboring) == ("fixed_size", NeighboringRelation.REPLACE_ONE):
            step = dp_accounting.SampledWithoutReplacementDpEvent(self.n, self.batch_size,
                                                                 dp_accounting.GaussianDpEvent(kappa / 2.0))
        else:
            step = dp_accounting.PoissonSampledDpEvent(self.batch_size / self.n, dp_accounting.GaussianDpEvent(kappa))
        return dp_accounting.SelfComposedDpEvent(step, self.num_steps)

    def membership(self) -> Membership | None:
        """The best membership test's true-positive rate at false-positive rates 0.001, 0.01 and 0.1, from the PLD of
        :meth:`dp_event`; None where dp-accounting's PLD cannot express the mechanism or does not account it
        (fixed-size replace-one: an RDP event)."""
        if (self.sampler, self.neighboring) == ("fixed_size", NeighboringRelation.REPLACE_ONE):
            return None
        try:
            event = self.dp_event()
        except NotExpressibleError:
            return None
        return _pld_membership(event, self.dp_neighboring)

    def statement(self, delta: float) -> PrivacyStatement:
        """What to publish about the run at ``delta``: ε by the allow-listed accountant, its assumptions, and the
        membership rates (:meth:`membership`, a few seconds for thousands of steps)."""
        loss = self.privacy_loss(delta)
        row = self.row
        assumptions = tuple(a for a in (row.conditions,
                                        "per-example gradients clipped to the clip norm before the noise is added",
                                        "the noise and the sampling drawn as stated, independently of the data")
                            if a)
        return PrivacyStatement(
            unit="one example", neighboring=self.neighboring, sampler=self.sampler,
            released="every noisy step (the model after any step)", accountant=loss.source,
            guarantee=loss.guarantee, planning=PlanningShare(), epsilon=float(loss.value), delta=float(delta),
            zcdp=None, training_zcdp=None, rdp_curve=None, conversion=None, assumptions=assumptions,
            extra={"noise_multiplier": self.noise_multiplier, "n": self.n, "batch_size": self.batch_size,
                   "num_steps": self.num_steps, "noise": repr(self.strategy)},
            membership=self.membership())


@dataclasses.dataclass(frozen=True, kw_only=True)
class GaussianRelease:
    """A statistic released with Gaussian noise: N(f(D), σ² I) with ‖f(D) − f(D')‖ <= Δ for neighbours D, D'.

    Exactly μ-GDP with μ = Δ/σ (Dong, Roth & Su 2022, Theorem 2.7) and μ²/2-zCDP; ε at δ is the analytic Gaussian
    mechanism's (Balle & Wang 2018, arXiv 1805.06530, Theorem 8), label ``exact`` (rounded up).

    Attributes:
        sensitivity: Δ > 0 under ``neighboring``.
        noise_std: σ > 0.
        neighboring: the relation Δ refers to.
        statistic: what is released (for the statement).
    """

    sensitivity: float
    noise_std: float
    neighboring: NeighboringRelation
    statistic: str = "a statistic"

    def __post_init__(self) -> None:
        _check.scalar(sensitivity=self.sensitivity, noise_std=self.noise_std)
        _check.finite(sensitivity=self.sensitivity, noise_std=self.noise_std)
        _check.positive(sensitivity=self.sensitivity, noise_std=self.noise_std)
        object.__setattr__(self, "sensitivity", float(self.sensitivity))
        object.__setattr__(self, "noise_std", float(self.noise_std))
        object.__setattr__(self, "neighboring", NeighboringRelation(self.neighboring))

    @property
    def mu(self) -> float:
        """Δ/σ, the Gaussian-DP parameter."""
        return self.sensitivity / self.noise_std

    @property
    def zcdp(self) -> float:
        """μ²/2 = Δ²/(2σ²) (Bun & Steinke 2016, Proposition 1.6)."""
        return 0.5 * self.mu**2

    def privacy_loss(self, delta: float) -> PrivacyLoss:
        from privdyn.privacy.correlated_allocation import gaussian_epsilon

        return PrivacyLoss(value=gaussian_epsilon(self.mu, _check.delta(delta)), guarantee=Guarantee.EXACT,
                           quantity="epsilon", neighboring=self.neighboring,
                           source="the Gaussian mechanism's exact curve (Balle & Wang 2018, Theorem 8), rounded up")

    def calibrate(self, epsilon: float, delta: float) -> GaussianRelease:
        """The same release with the smallest noise (within 1e-12 relative, rounded up) that makes it (ε, δ)-DP."""
        from privdyn.privacy.correlated_allocation import gaussian_mu

        _check.scalar(epsilon=epsilon)
        _check.positive(epsilon=epsilon)
        return dataclasses.replace(self, noise_std=self.sensitivity / gaussian_mu(float(epsilon), _check.delta(delta)))

    @property
    def dp_neighboring(self) -> dp_accounting.NeighboringRelation:
        """Add-or-remove, whatever ``neighboring`` is: Δ already is the sensitivity under ``neighboring``, and
        dp-accounting reads ``GaussianDpEvent(σ/Δ)`` as sensitivity Δ only under add-or-remove (its PLD accountant
        doubles a Gaussian event's sensitivity under replace-one; its RDP accountant does not)."""
        return NeighboringRelation.ADD_REMOVE.to_dp_accounting()

    def dp_event(self) -> dp_accounting.DpEvent:
        """``GaussianDpEvent(σ/Δ)``, to account under :attr:`dp_neighboring`."""
        import dp_accounting

        return dp_accounting.GaussianDpEvent(self.noise_std / self.sensitivity)

    def membership(self) -> Membership:
        return membership_table(lambda a: gaussian_tpr(self.mu, a), "the Gaussian law: Phi(Phi^-1(FPR) + mu), exact")

    def statement(self, delta: float) -> PrivacyStatement:
        loss = self.privacy_loss(delta)
        return PrivacyStatement(
            unit="one record", neighboring=self.neighboring, sampler="full_batch", released=self.statistic,
            accountant=loss.source, guarantee=loss.guarantee, planning=PlanningShare(), epsilon=float(loss.value),
            delta=float(delta), zcdp=self.zcdp, training_zcdp=self.zcdp, rdp_curve=None,
            conversion=None, assumptions=(f"||f(D) - f(D')|| <= {self.sensitivity:g} for neighbouring D, D'",),
            extra={"mu": self.mu, "sensitivity": self.sensitivity, "noise_std": self.noise_std},
            membership=self.membership())


def _zcdp_epsilon(zcdp: float, delta: float) -> float:
    from privdyn.privacy.conversions import zcdp_to_epsilon

    return float(zcdp_to_epsilon(zcdp, delta=delta, method="optimal"))


def _zcdp_for_epsilon(epsilon: float, delta: float) -> float:
    from privdyn.privacy.conversions import zcdp_for_epsilon

    return zcdp_for_epsilon(epsilon, delta)


@dataclasses.dataclass(frozen=True, kw_only=True)
class GaussianReleases:
    """Gaussian releases of the same records, composed (the planning share's three, AdaSSP's three).

    Their adaptive composition is exactly μ-GDP with μ² = Σ μ_i² (Dong, Roth & Su 2022, Corollary 3.3), so ε at δ is
    the analytic Gaussian mechanism's at μ (label ``exact``, rounded up), the same as one release of Δ/σ = μ.
    """

    releases: tuple[GaussianRelease, ...]

    def __post_init__(self) -> None:
        if isinstance(self.releases, GaussianRelease) or not hasattr(self.releases, "__iter__"):
            raise TypeError(f"releases must be a sequence of GaussianRelease; got {self.releases!r}.")
        releases = tuple(self.releases)
        if not releases or not all(isinstance(r, GaussianRelease) for r in releases):
            raise ValueError(f"releases must be a non-empty sequence of GaussianRelease; got {self.releases!r}.")
        relations = {r.neighboring for r in releases}
        if len(relations) != 1:
            raise ValueError("releases must share one neighbouring relation (a composition is accounted under one); "
                             f"got {sorted(r.value for r in relations)}.")
        object.__setattr__(self, "releases", releases)

    @property
    def neighboring(self) -> NeighboringRelation:
        return self.releases[0].neighboring

    @property
    def mu(self) -> float:
        """√(Σ μ_i²), the composition's Gaussian-DP parameter."""
        return float(sum(r.mu**2 for r in self.releases)) ** 0.5

    @property
    def zcdp(self) -> float:
        """Σ μ_i²/2."""
        return float(sum(r.zcdp for r in self.releases))

    def _as_one(self) -> GaussianRelease:
        return GaussianRelease(sensitivity=self.mu, noise_std=1.0, neighboring=self.neighboring,
                               statistic=", ".join(r.statistic for r in self.releases))

    def privacy_loss(self, delta: float) -> PrivacyLoss:
        loss = self._as_one().privacy_loss(delta)
        return dataclasses.replace(loss, source=f"{len(self.releases)} Gaussian releases composed: mu = "
                                                f"sqrt(sum mu_i^2) (Dong, Roth & Su 2022, Corollary 3.3); "
                                                f"{loss.source}")

    def calibrate(self, epsilon: float, delta: float) -> GaussianReleases:
        """The same releases with every noise std scaled by one factor, the smallest that makes them (ε, δ)-DP."""
        factor = self.mu / self._as_one().calibrate(epsilon, delta).mu
        return GaussianReleases(releases=tuple(dataclasses.replace(r, noise_std=r.noise_std * factor)
                                               for r in self.releases))

    def calibrate_zcdp(self, zcdp: float) -> GaussianReleases:
        """The same releases, each given an equal share zcdp/k of a zCDP budget: σ_i = Δ_i/√(2·zcdp/k) (Bun &
        Steinke 2016, Proposition 1.6), so that they compose to exactly ``zcdp``-zCDP (Lemma 2.3 there). The
        releases' current noise is ignored. This is the calibration of a budget split with other zCDP mechanisms
        (the planning share beside training); :meth:`calibrate` is the tighter one for (ε, δ) alone."""
        _check.scalar(zcdp=zcdp)
        _check.finite(zcdp=zcdp)
        _check.positive(zcdp=zcdp)
        each = float(zcdp) / float(len(self.releases))
        return GaussianReleases(releases=tuple(dataclasses.replace(r, noise_std=r.sensitivity / math.sqrt(2.0 * each))
                                               for r in self.releases))

    @property
    def dp_neighboring(self) -> dp_accounting.NeighboringRelation:
        """Add-or-remove (see :attr:`GaussianRelease.dp_neighboring`)."""
        return NeighboringRelation.ADD_REMOVE.to_dp_accounting()

    def dp_event(self) -> dp_accounting.DpEvent:
        """``Composed([Gaussian(σ_i/Δ_i), ...])``, to account under :attr:`dp_neighboring`."""
        import dp_accounting

        return dp_accounting.ComposedDpEvent([r.dp_event() for r in self.releases])

    def membership(self) -> Membership:
        return membership_table(lambda a: gaussian_tpr(self.mu, a),
                                "the Gaussian law of the composition: Phi(Phi^-1(FPR) + mu), exact")

    def statement(self, delta: float) -> PrivacyStatement:
        loss = self.privacy_loss(delta)
        return PrivacyStatement(
            unit="one record", neighboring=self.neighboring, sampler="full_batch",
            released="; ".join(r.statistic for r in self.releases), accountant=loss.source,
            guarantee=loss.guarantee, planning=PlanningShare(), epsilon=float(loss.value), delta=float(delta),
            zcdp=self.zcdp, training_zcdp=self.zcdp, rdp_curve=None, conversion=None,
            assumptions=tuple(f"{r.statistic}: sensitivity {r.sensitivity:g}" for r in self.releases),
            extra={"mu": self.mu}, membership=self.membership())


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoisyGDMechanism:
    """Full-batch noisy gradient descent on a λ-strongly convex, β-smooth loss, releasing the last iterate (langevin).

    θ_{k+1} = θ_k − η∇L(θ_k) + √(2η)σ·N(0, I), K steps, on the mean loss over n records whose per-record gradients
    differ by at most S under replace-one neighbours. Three valid bounds are computed (:meth:`bounds`):

    * ``"shifted_interpolation"``: μ-GDP of the last iterate (Bok, Su & Altschuler 2024, arXiv 2403.00278;
      :func:`privdyn.privacy.langevin.shifted_interpolation_gdp`), exact for a quadratic loss; ε by the Gaussian
      mechanism's curve, zCDP μ²/2;
    * ``"corollary_1"``: Corollary 1 of Chourasia, Ye & Shokri 2021 (arXiv 2102.05855), the last iterate, as zCDP
      (:func:`privdyn.privacy.langevin.dynamics_zcdp`); ε by the optimal zCDP conversion;
    * ``"composition"``: composition over all K steps (their Theorem 1), valid even if every iterate were released.

    The statement uses the one with the smallest ε (:attr:`bound`); shifted interpolation is that one at every
    setting where the three were compared (its zCDP is 0.43–0.56 of Corollary 1's, and never above composition's).
    Corollary 1 needs η < 1/β and λ <= β (checked); shifted interpolation needs η < 2/β.

    Attributes:
        n, num_steps: records and steps K.
        step_size: η.  noise_scale: σ.  strong_convexity: λ.  smoothness: β.  sensitivity: S.
    """

    n: int
    num_steps: int
    step_size: float
    noise_scale: float
    strong_convexity: float
    smoothness: float
    sensitivity: float

    SOURCES: ClassVar[dict[str, str]] = {
        "shifted_interpolation": (
            "Bok, Su & Altschuler 2024 (arXiv 2403.00278), shifted interpolation: the last iterate of full-batch noisy "
            "GD on a strongly convex, smooth loss is mu-GDP, mu = (eta S_g / n)/(sqrt(2 eta) sigma) sqrt((1 + c)"
            "(1 - c^K)/((1 - c)(1 + c^K))), c = max(|1 - eta lambda|, |1 - eta beta|); (epsilon, delta) by the "
            "Gaussian curve"),
        "corollary_1": (
            "Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), Corollary 1: last-iterate RDP of full-batch noisy GD, "
            "alpha * S_g^2 (1 - exp(-lambda eta K / 2)) / (lambda sigma^2 n^2); optimal conversion to "
            "(epsilon, delta)"),
        "composition": (
            "composition over all K steps (arXiv 2102.05855, Theorem 1): K Gaussian steps of shift eta S_g/n and std "
            "sqrt(2 eta) sigma, exactly Gaussian; (epsilon, delta) by the Gaussian curve"),
    }
    """Each bound's citation and formula: the ``accountant`` of a statement that uses it."""

    def __post_init__(self) -> None:
        _check.finite(n=self.n, num_steps=self.num_steps)
        _check.integer(minimum=1, n=self.n, num_steps=self.num_steps)
        for name in ("step_size", "noise_scale", "strong_convexity", "smoothness", "sensitivity"):
            value = getattr(self, name)
            _check.scalar(**{name: value})
            _check.finite(**{name: value})
            _check.positive(**{name: value})
            object.__setattr__(self, name, float(value))
        self.bounds()  # Corollary 1's conditions, checked now

    @property
    def gdp_mu(self) -> float:
        """μ of shifted interpolation: the last iterate is μ-GDP (arXiv 2403.00278)."""
        from privdyn.privacy.langevin import shifted_interpolation_gdp

        return float(shifted_interpolation_gdp(
            num_steps=self.num_steps, step_size=self.step_size, noise_scale=self.noise_scale,
            strong_convexity=self.strong_convexity, smoothness=self.smoothness, sensitivity=self.sensitivity,
            n=self.n).value)

    def bounds(self) -> dict[str, float]:
        """The zCDP of each bound at this noise: ``shifted_interpolation`` (μ²/2), ``corollary_1``, ``composition``."""
        from privdyn.privacy import langevin

        last = float(langevin.dynamics_zcdp(num_steps=self.num_steps, step_size=self.step_size,
                                            noise_scale=self.noise_scale, strong_convexity=self.strong_convexity,
                                            smoothness=self.smoothness, sensitivity=self.sensitivity,
                                            n=self.n).value)
        composed = 0.5 * float(langevin.composition_rdp(2.0, num_steps=self.num_steps, step_size=self.step_size,
                                                        noise_scale=self.noise_scale, sensitivity=self.sensitivity,
                                                        n=self.n).value)
        return {"shifted_interpolation": 0.5 * self.gdp_mu**2, "corollary_1": last, "composition": composed}

    def epsilons(self, delta: float) -> dict[str, float]:
        """ε at ``delta`` by each bound: the Gaussian curve for shifted interpolation and for composition (K composed
        Gaussian steps are exactly √(2ρ)-GDP), the optimal zCDP conversion for Corollary 1."""
        from privdyn.privacy.correlated_allocation import gaussian_epsilon

        dlt = _check.delta(delta)
        bounds = self.bounds()
        return {"shifted_interpolation": gaussian_epsilon(self.gdp_mu, dlt),
                "corollary_1": _zcdp_epsilon(bounds["corollary_1"], dlt),
                "composition": gaussian_epsilon(math.sqrt(2.0 * bounds["composition"]), dlt)}

    def used(self, delta: float) -> str:
        """The bound whose ε at ``delta`` is smallest (each is valid, so the smallest is)."""
        epsilons = self.epsilons(delta)
        return min(epsilons, key=lambda k: epsilons[k])

    @property
    def bound(self) -> str:
        """:meth:`used` at δ = 10⁻⁵ (shifted interpolation wherever the three were compared, at every δ)."""
        return self.used(1e-5)

    @property
    def zcdp(self) -> float:
        """The zCDP of :attr:`bound`."""
        return self.bounds()[self.bound]

    def privacy_loss(self, delta: float) -> PrivacyLoss:
        epsilons = self.epsilons(delta)
        used = self.used(delta)
        return PrivacyLoss(value=epsilons[used], guarantee=Guarantee.BOUND, quantity="epsilon",
                           neighboring=NeighboringRelation.REPLACE_ONE, source=self.SOURCES[used])

    def calibrate(self, epsilon: float, delta: float) -> NoisyGDMechanism:
        """The same run with the smallest noise scale σ (within 1e-12 relative, rounded up) whose ε is at most
        ``epsilon``: every bound's ε decreases in σ, and shifted interpolation's μ is proportional to 1/σ."""
        from privdyn.privacy.correlated_allocation import gaussian_mu

        _check.scalar(epsilon=epsilon)
        _check.positive(epsilon=epsilon)
        dlt = _check.delta(delta)
        scale = self.noise_scale * self.gdp_mu / gaussian_mu(float(epsilon), dlt)
        found = dataclasses.replace(self, noise_scale=scale)
        while float(found.privacy_loss(dlt).value) > epsilon:
            found = dataclasses.replace(found, noise_scale=found.noise_scale * (1.0 + 1e-12))
        return found

    @property
    def dp_neighboring(self) -> dp_accounting.NeighboringRelation:
        return NeighboringRelation.REPLACE_ONE.to_dp_accounting()

    def dp_event(self) -> dp_accounting.DpEvent:
        """``ZCDp(ρ)``, ρ the zCDP of :attr:`bound` (a zCDP guarantee is what dp-accounting can take of a last
        iterate: the run is not a composition of events it knows)."""
        import dp_accounting

        return dp_accounting.ZCDpEvent(self.zcdp)

    def membership(self) -> Membership:
        if self.bound != "corollary_1":
            mu = math.sqrt(2.0 * self.zcdp)
            return membership_table(lambda a: gaussian_tpr(mu, a),
                                    "mu-GDP of the last iterate (shifted interpolation): Phi(Phi^-1(FPR) + mu)")
        return zcdp_membership(self.zcdp)

    def statement(self, delta: float) -> PrivacyStatement:
        loss = self.privacy_loss(delta)
        bounds = self.bounds()
        used = self.used(delta)
        return PrivacyStatement(
            unit="one record", neighboring=NeighboringRelation.REPLACE_ONE, sampler="full_batch",
            released="the last iterate only", accountant=loss.source, guarantee=loss.guarantee,
            planning=PlanningShare(), epsilon=float(loss.value), delta=float(delta), zcdp=bounds[used],
            training_zcdp=bounds[used], rdp_curve=None,
            conversion=("optimal zCDP conversion (all real orders)" if used == "corollary_1"
                        else "the Gaussian mechanism's curve at mu (Balle & Wang 2018, Theorem 8)"),
            assumptions=("the loss is strong_convexity-strongly convex and smoothness-smooth",
                         "step_size < 1/smoothness", "per-record gradients differ by at most sensitivity",
                         "only the last iterate is released"),
            extra={"gdp_mu": self.gdp_mu, "shifted_interpolation_zcdp": bounds["shifted_interpolation"],
                   "last_iterate_zcdp": bounds["corollary_1"], "composition_zcdp": bounds["composition"],
                   "bound": used},
            membership=self.membership())


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class OnePassDPGDMechanism:
    """One pass of clipped DP-GD with per-step noise (dpgd, arXiv 2505.16329 Algorithm 1), releasing θ_n only.

    Proposition 4.1: ρ = max_k η_k/√(Σ_{j>=k} σ_j²) and θ_n is ρ²/2-zCDP under replace-one neighbours
    (:func:`privdyn.privacy.iteration.privacy_level`); ε by the optimal zCDP conversion.

    Attributes:
        step_sizes: η_1..η_n (uncapped).  noise_multipliers: σ_1..σ_n (noise std 2·C_clip·σ_k).
    """

    step_sizes: tuple[float, ...]
    noise_multipliers: tuple[float, ...]

    def __post_init__(self) -> None:
        for name in ("step_sizes", "noise_multipliers"):
            values = _check.real_array(**{name: getattr(self, name)})
            if values.ndim != 1:
                raise ValueError(f"{name} must be a 1-D sequence; got an array of shape {values.shape}.")
            object.__setattr__(self, name, tuple(float(v) for v in values))
        self.rho  # noqa: B018 - checks the arrays (shape, finite, non-negative)

    @property
    def rho(self) -> float:
        from privdyn.privacy.iteration import privacy_level

        return float(privacy_level(self.step_sizes, self.noise_multipliers).value)

    @property
    def zcdp(self) -> float:
        return 0.5 * self.rho**2

    def privacy_loss(self, delta: float) -> PrivacyLoss:
        return PrivacyLoss(value=_zcdp_epsilon(self.zcdp, _check.delta(delta)), guarantee=Guarantee.BOUND,
                           quantity="epsilon", neighboring=NeighboringRelation.REPLACE_ONE,
                           source="Proposition 4.1 of arXiv 2505.16329 (amplification by iteration, the final "
                                  "iterate) as rho^2/2-zCDP; optimal conversion to (epsilon, delta)")

    def calibrate(self, epsilon: float, delta: float) -> OnePassDPGDMechanism:
        """The same steps with the noise-optimal σ_k of eq. 4.2 for the largest ρ whose ε is at most ``epsilon``."""
        from privdyn.privacy.iteration import noise_calibration

        rho = (2.0 * _zcdp_for_epsilon(epsilon, delta)) ** 0.5
        found = OnePassDPGDMechanism(step_sizes=self.step_sizes,
                                     noise_multipliers=tuple(noise_calibration(self.step_sizes, rho=rho)))
        while float(found.privacy_loss(delta).value) > epsilon:  # rounding in eq. 4.2: stay on the safe side
            found = OnePassDPGDMechanism(step_sizes=self.step_sizes,
                                         noise_multipliers=tuple(v * (1.0 + 1e-12) for v in found.noise_multipliers))
        return found

    @property
    def dp_neighboring(self) -> dp_accounting.NeighboringRelation:
        return NeighboringRelation.REPLACE_ONE.to_dp_accounting()

    def dp_event(self) -> dp_accounting.DpEvent:
        """``ZCDp(ρ²/2)``: the final iterate's guarantee (the pass is not a composition of events dp-accounting
        knows; its intermediate iterates are not released)."""
        import dp_accounting

        return dp_accounting.ZCDpEvent(self.zcdp)

    def membership(self) -> Membership:
        return zcdp_membership(self.zcdp)

    def statement(self, delta: float) -> PrivacyStatement:
        loss = self.privacy_loss(delta)
        return PrivacyStatement(
            unit="one row (x, y)", neighboring=NeighboringRelation.REPLACE_ONE, sampler="fixed_order",
            released="the final iterate only", accountant=loss.source, guarantee=loss.guarantee,
            planning=PlanningShare(), epsilon=float(loss.value), delta=float(delta), zcdp=self.zcdp,
            training_zcdp=self.zcdp, rdp_curve=None, conversion="optimal zCDP conversion (all real orders)",
            assumptions=("one pass, each row used at one step", "per-example gradients clipped to C_clip",
                         "only the final iterate is released"),
            extra={"rho": self.rho}, membership=self.membership())
