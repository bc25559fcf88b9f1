"""Planning DP-SGD with independent or correlated noise: calibrated noise and a ranking of noise strategies.

:func:`dpsgd` calibrates the noise multiplier κ of DP-SGD (clipped per-example gradients summed over a batch, noise
``κ·clip·(C⁻¹Z)_t`` added to the sum at step t, Wang et al., arXiv 2605.12648, Algorithm 1) for an (ε, δ) budget,
for every candidate noise strategy (:mod:`privdyn.privacy.correlated`), and ranks the strategies by the utility
proxy below.

**Privacy.** Every κ comes from the run's :class:`~privdyn.privacy.mechanism.DPSGDMechanism` record (its
``calibration``, by the accountant that :data:`privdyn.privacy.accounting.ALLOW_LIST` assigns to the strategy,
sampler and relation). A combination off the list, or whose accountant's conditions fail (Theorem F.12: ε ≤ 1 and
rT ≥ 3 ln(2/δ)), is refused (``NotAccountableError``) when the user named the strategy, else listed as refused.

**Utility proxy** (the matrix-factorization error of Denisov et al. 2022, arXiv 2202.08312, §2, and
Choquette-Choo et al. 2023, arXiv 2211.06530, eq. (1): the "mean squared error" of the noisy prefix sums that
jax_privacy's matrix-factorization tools report). DP-SGD's iterates are θ_t = θ_0 − η Σ_{s≤t} (g_s + ξ_s): the
model sees the noise only through its *prefix sums*, ``A ξ`` with A the T×T lower-triangular all-ones workload and
``ξ = κ·clip·C⁻¹Z`` (Z iid standard normal, one column per coordinate). The proxy is the expected squared error per
coordinate, averaged over the T steps,

    prefix_sum_mse = (κ·clip)² · ‖A C⁻¹‖_F² / T,

at the *calibrated* κ of each strategy (so the privacy cost of the correlation, through its accountant, is in κ).
For the Toeplitz strategies here ``A C⁻¹`` has first column b_k = Σ_{j≤k} d_j (d the noise coefficients) and
‖A C⁻¹‖_F² = Σ_k (T − k) b_k². Independent noise gives (T + 1)/2 · κ², λ-CGD (1 + (1 − λ)²(T − 1)/2) · κ².
The error of the last prefix sum, (κ·clip)² Σ_k b_k² (the largest row, the "max" error), is reported beside it.
The proxy measures the noise alone, on the summed gradients (divide by B² for the averaged gradient); it is not a
prediction of training loss.

**One relation per ranking.** All strategies of a plan share the user's neighbouring relation, and by default the
user's sampler, so the ranking compares like with like (one κ unit, one relation). With ``samplers`` the plan also
ranks participation schemes: every (strategy, sampler) pair the allow-list accounts under that one relation, at the
same (ε, δ), expected batch size and steps; the proxy is comparable across samplers because it is the noise on the
sum of a batch of the same expected size (random allocation's mean batch is n / ⌈n / B⌉, B when B divides n).
Under fixed-size sampling with zero-out neighbours and
under Poisson sampling, independent noise is accounted by dp-accounting's PLD of the Poisson-subsampled Gaussian
(tight: exact up to discretization), and λ-CGD, banded-inverse, Toeplitz and BLT noise by the amplified bound of
:mod:`privdyn.privacy.amplification` (Theorem F.8's pair, dominated by the Poisson-subsampled Gaussian at noise
multiplier κ/‖C‖₂; for λ-CGD under fixed-size sampling, the smaller of it and Theorem F.12). The amplified bound is a
valid upper bound, within a few per cent of the Monte-Carlo estimate of the same pair's ε where κ/‖C‖₂ ≥ 2 and up to
10× above it where κ/‖C‖₂ < 1 at small sampling rates. A ranking
that sets a correlated strategy (a bound) against independent noise (a tight PLD) is therefore **biased against the
correlated strategy**: a correlated strategy that ranks below independent noise may still be better, one that ranks
above it is better by at least the margin shown. The plan says so whenever its ranking mixes the two.

**Speed.** The amplified bound costs seconds per evaluation, so its calibrations for the *ranking* run at
``ranking_rtol`` (default :data:`RANKING_RTOL`, 1e-2; κ is still on the safe side, at most 1% above the smallest), and
the chosen strategy is calibrated again at ``rtol``. Calibrations are cached within a plan (the Pareto front reuses
them).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from privdyn import _check
from privdyn._progress import report
from privdyn.plan._budget import DPSGD_NO_MEMBERSHIP, PlanningShare, PrivacyStatement
from privdyn.plan._plan import Alternative, ParetoFront, Plan, Verification, _fmt, json_ready
from privdyn.privacy import accounting, correlated
from privdyn.privacy.labels import DPSGD_SAMPLERS, NeighboringRelation, Sampler, as_neighboring, as_sampler
from privdyn.privacy.mechanism import DPSGDMechanism

__all__ = ["DPSGDPlan", "RefusedPair", "dpsgd", "parse_samplers", "parse_strategy", "strategy_spec", "prefix_sum_mse",
           "DEFAULT_STRATEGIES"]

DEFAULT_STRATEGIES = ("independent", "lambda_cgd:0.1", "lambda_cgd:0.3", "lambda_cgd:0.5", "lambda_cgd:0.7",
                      "lambda_cgd:0.9", "square_root")
"""The candidates when none are named: DP-SGD, λ-CGD at five correlations and the square-root factorization."""

CALIBRATION_RTOL = 1e-4
"""Relative tolerance of κ in the plan (the accountant returns the safe side)."""
RANKING_RTOL = 1e-2
"""Relative tolerance of κ for the ranking's calibrations by the (slow) amplified bound; the chosen strategy is
calibrated again at :data:`CALIBRATION_RTOL`."""
PARETO_RTOL = 1e-3
"""Relative tolerance of κ along the Pareto front (amplified-bound rows use :data:`RANKING_RTOL` there)."""
VERIFY_COORDINATES = 32
"""Coordinates of the noise stream per verification run (iid, averaged within the run)."""

_TIGHT_ACCOUNTANTS = ("dp_accounting_pld", "theorem_f8_pld", "random_allocation_pld")
"""Accountants exact up to discretization (independent noise by a PLD of a tightly dominating pair); every other,
including a row added later, is treated as a looser upper bound."""

_LOADERS = {
    "poisson": "each record joins each step independently with probability batch_size / n, so batch sizes vary and "
               "a batch can be empty (Opacus' DPDataLoader; privdyn.torch.BatchSampler(sampler='poisson'))",
    "fixed_size": "exactly batch_size distinct records drawn afresh, uniformly without replacement, at every step "
                  "(privdyn.torch.BatchSampler(sampler='fixed_size'))",
    "random_allocation": "each record in exactly one of the ceil(n / batch_size) steps of every epoch, chosen "
                         "uniformly and independently; the mean batch is n / ceil(n / batch_size) and a batch can be "
                         "empty (privdyn.torch.BatchSampler(sampler='random_allocation'), not a shuffled partition)",
    "shuffle": "one shuffled pass split into batches per epoch (privdyn.torch.BatchSampler(sampler='shuffle'))",
}
"""What a data loader must do to implement each sampler; a sampler not named here is described by its allow-list
row's conditions, or by :func:`privdyn.algorithms.dpsgd.sample_batches`."""


def _is_slow(row: accounting.AllowListRow) -> bool:
    """Rows whose calibration evaluates the amplified bound (seconds per evaluation)."""
    return row.accountant.startswith("amplified")


# ------------------------------------------------------------------------------------------------------------
# Strategies by name
# ------------------------------------------------------------------------------------------------------------


def _numbers(text: str, what: str, spec: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values:
        raise ValueError(f"strategy {spec!r}: {what} must be a comma-separated list of numbers; got {text!r}.")
    return values


def parse_strategy(spec: str | correlated.Strategy) -> correlated.Strategy:
    """A noise strategy from its name: ``independent``, ``lambda_cgd:λ``, ``square_root``,
    ``banded_inverse:d0,d1,...`` (noise coefficients), ``toeplitz:c0,c1,...`` (encoder coefficients) or
    ``blt:θ1,θ2,...:ω1,ω2,...`` (buffer decays, output scales); a :class:`~privdyn.privacy.correlated.Strategy` is
    returned as it is.
    """
    if isinstance(spec, correlated.Strategy):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"strategy must be a name or a privdyn.privacy.correlated.Strategy; got {spec!r}.")
    name, _, rest = spec.strip().partition(":")
    if name == "independent" and not rest:
        return correlated.Independent()
    if name == "square_root" and not rest:
        return correlated.SquareRoot()
    if name == "lambda_cgd" and rest:
        value = _numbers(rest, "noise_correlation", spec)
        if len(value) != 1:
            raise ValueError(f"strategy {spec!r}: lambda_cgd takes one noise_correlation in [0, 1).")
        return correlated.LambdaCGD(value[0])
    if name == "banded_inverse" and rest:
        return correlated.BandedInverse(_numbers(rest, "noise_coefficients", spec))
    if name == "toeplitz" and rest:
        return correlated.Toeplitz(_numbers(rest, "encoder_coefficients", spec))
    if name == "blt" and rest.count(":") == 1:
        decays, scales = rest.split(":")
        return correlated.BufferedToeplitz(_numbers(decays, "buffer_decays", spec),
                                           _numbers(scales, "output_scales", spec))
    raise ValueError("strategy must be 'independent', 'lambda_cgd:LAMBDA', 'square_root', 'banded_inverse:D0,D1,...', "
                     f"'toeplitz:C0,C1,...' or 'blt:DECAYS:SCALES'; got strategy={spec!r}.")


def strategy_spec(strategy: correlated.Strategy) -> str:
    """The name :func:`parse_strategy` reads back (the strategy's repr for parameters it cannot spell)."""
    if isinstance(strategy, correlated.LambdaCGD):
        return f"lambda_cgd:{strategy.noise_correlation:g}"
    if type(strategy) in (correlated.Independent, correlated.SquareRoot):
        return strategy.name
    return repr(strategy)


def _prefix_coefficients(strategy: correlated.Strategy, num_steps: int) -> np.ndarray:
    """b_k = Σ_{j≤k} d_j, the first column of A C⁻¹ (A the prefix-sum workload)."""
    return np.cumsum(strategy.noise_coefficients(num_steps))


def prefix_sum_mse(strategy: correlated.Strategy, *, noise_multiplier: float, num_steps: int,
                   clip: float = 1.0) -> tuple[float, float]:
    """(mean, last): (κ·clip)²‖A C⁻¹‖_F²/T and (κ·clip)²‖(A C⁻¹)_{T,:}‖², per coordinate (module docstring)."""
    b = _prefix_coefficients(strategy, num_steps)
    scale = (noise_multiplier * clip) ** 2
    frobenius = float(np.dot(num_steps - np.arange(num_steps), b * b))
    return scale * frobenius / num_steps, scale * float(np.dot(b, b))


# ------------------------------------------------------------------------------------------------------------
# Calibration of one strategy
# ------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Sizes:
    n: int
    batch_size: int
    num_steps: int
    delta: float
    sampler: str
    neighboring: NeighboringRelation
    clip: float

    def mechanism(self, strategy: correlated.Strategy, noise_multiplier: float = 0.0) -> DPSGDMechanism:
        """The run's record (refused if off the allow-list); κ = 0 for a record to calibrate."""
        return DPSGDMechanism(strategy=strategy, noise_multiplier=noise_multiplier, n=self.n, sampler=self.sampler,
                              batch_size=self.batch_size, num_steps=self.num_steps, neighboring=self.neighboring)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Ranked:
    strategy: correlated.Strategy
    sampler: str
    row: accounting.AllowListRow
    noise_multiplier: float
    calibration_source: str
    calibration_rtol: float
    mse: float
    last_mse: float

    def hyperparameters(self, s: _Sizes) -> dict[str, Any]:
        kind = accounting.noise_kind(self.strategy)
        out: dict[str, Any] = {"strategy": kind}
        if isinstance(self.strategy, correlated.LambdaCGD | correlated.Independent):
            out["noise_correlation"] = getattr(self.strategy, "noise_correlation", 0.0)
        elif strategy_spec(self.strategy) != kind:
            out["strategy_spec"] = strategy_spec(self.strategy)
        out.update(noise_multiplier=self.noise_multiplier, noise_std=self.noise_multiplier * s.clip, clip=s.clip,
                   sampler=self.sampler, neighboring=s.neighboring.value, accountant=self.row.accountant,
                   guarantee=self.row.guarantee.value, calibration_rtol=self.calibration_rtol)
        return out


_Cache = dict[tuple[str, str, float, float], "_Ranked"]


def _calibrate(strategy: correlated.Strategy, epsilon: float, s: _Sizes, rtol: float, ranking_rtol: float,
               cache: _Cache | None = None) -> _Ranked:
    """κ for (ε, δ) by the allow-listed accountant (raises NotAccountableError), and the proxy at κ.

    Rows of the amplified bound are calibrated at ``ranking_rtol`` (if looser than ``rtol``), the others at ``rtol``;
    ``cache`` (keyed by strategy, sampler, ε and the tolerance used) saves repeated calibrations within a plan.
    """
    row = (mechanism := s.mechanism(strategy)).row
    used = max(rtol, ranking_rtol) if _is_slow(row) else rtol
    key = (repr(strategy), s.sampler, float(epsilon), used)
    if cache is not None and key in cache:
        return cache[key]
    loss = mechanism.calibration(epsilon, s.delta, rtol=used)
    kappa = float(loss.value)
    mse, last = prefix_sum_mse(strategy, noise_multiplier=kappa, num_steps=s.num_steps, clip=s.clip)
    ranked = _Ranked(strategy=strategy, sampler=s.sampler, row=row, noise_multiplier=kappa,
                     calibration_source=loss.source, calibration_rtol=used, mse=mse, last_mse=last)
    if cache is not None:
        cache[key] = ranked
    return ranked


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


# ------------------------------------------------------------------------------------------------------------
# Participation schemes
# ------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RefusedPair:
    """A (strategy, sampler) the plan could not account under its neighbouring relation.

    Attributes:
        strategy: the strategy's name (:func:`strategy_spec`).
        sampler: the sampler.
        reason: the named reason (a key of :data:`privdyn.privacy.accounting.REFUSAL_REASONS`), or None when the
            combination is listed but its accountant's conditions fail.
        message: the dispatcher's message, on one line.
    """

    strategy: str
    sampler: str
    reason: str | None
    message: str


def parse_samplers(samplers: str | Sequence[Sampler | str]) -> tuple[str, ...]:
    """The participation schemes to rank (their string values): a list of names, a comma-separated string, or
    ``"all"`` (:data:`privdyn.privacy.labels.DPSGD_SAMPLERS`, so a sampler added there is ranked too); duplicates are
    dropped."""
    names = samplers.split(",") if isinstance(samplers, str) else list(samplers)
    if not all(isinstance(v, str) for v in names):
        raise TypeError(f"samplers must be sampler names; got samplers={samplers!r}.")
    names = [v.strip() for v in names if v.strip()]
    if names == ["all"]:
        names = [choice.value for choice in DPSGD_SAMPLERS]
    unknown = [v for v in names if v not in DPSGD_SAMPLERS]
    if unknown or not names:
        raise ValueError(f"samplers must name one or more of {', '.join(DPSGD_SAMPLERS)} (or 'all'); got "
                         f"samplers={samplers!r}" + (f" (unknown: {', '.join(map(repr, unknown))})." if unknown
                                                     else "."))
    return tuple(dict.fromkeys(names))


def _loader(sampler: str, row: accounting.AllowListRow | None) -> str:
    if sampler in _LOADERS:
        return _LOADERS[sampler]
    if row is not None and row.conditions:
        return row.conditions
    return f"batches drawn as privdyn.algorithms.dpsgd.sample_batches({sampler!r}, ...) draws them"


def _sampler_ranking(ranked: list[_Ranked], schemes: Sequence[str], s: _Sizes,
                     name: Any) -> dict[str, Any]:
    """The ranking's keys when several samplers are ranked: the samplers, what each loader must do, the entries
    (best first) and the opening of the ranking's text (``scheme_text``)."""
    rows = {r.sampler: r.row for r in ranked}
    accounted = [v for v in schemes if v in rows]
    return {
        "samplers": list(schemes),
        "loaders": {v: _loader(v, rows.get(v)) for v in accounted},
        "entries": [{"strategy": strategy_spec(r.strategy), "sampler": r.sampler, "accountant": r.row.accountant,
                     "guarantee": r.row.guarantee.value, "noise_multiplier": r.noise_multiplier,
                     "prefix_sum_mse": r.mse} for r in ranked],
        "scheme_text": (
            f"by prefix_sum_mse at each (strategy, sampler) pair's calibrated noise_multiplier, across the "
            f"participation schemes {', '.join(accounted)}, all under {s.neighboring.value} neighbours (one "
            f"neighbouring relation per ranking: another relation is another privacy unit, not comparable), at the "
            f"same (epsilon, delta), expected batch size {s.batch_size} and {s.num_steps} steps, so the proxy (noise "
            f"on the summed gradients of a batch of the same expected size) compares like with like; each scheme "
            f"holds only if the data loader draws batches that way (ranking.loaders); "),
    }


# ------------------------------------------------------------------------------------------------------------
# The plan
# ------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class DPSGDPlan(Plan):
    """A dpsgd plan (:class:`~privdyn.plan._plan.Plan`): the chosen strategy and its κ, the ranking, the refusals.

    Attributes:
        strategy: the chosen noise strategy.
        noise_multiplier: its calibrated κ (noise std on the summed clipped gradients / clip).
        epsilon_target, delta: the budget.
        sizes: n, batch size, steps, sampler, relation, clip.
        candidates: the strategies that were ranked (the chosen one first).
        candidate_samplers: the sampler of each candidate (all the user's sampler unless ``samplers`` were ranked).
        refused_pairs: every (strategy, sampler) privdyn cannot account here, with the named reason
            (:class:`RefusedPair`); :attr:`refused` gives them as ``(strategy_spec, message)``.
        samplers: the participation schemes that were ranked (one, the user's sampler, by default).
        ranking: how the ranking was made (criterion, sampler, relation, the accountant of each strategy,
            ``biased_against_correlated`` and the text that says what the ranking rests on; with several samplers
            also ``samplers``, ``loaders`` and ``entries``, one per ranked pair, best first).
        ranking_rtol: the tolerance of the amplified-bound calibrations of the ranking (and the Pareto front).
        calibrations: the plan's calibrations, keyed by (strategy repr, sampler, epsilon, rtol), reused by the Pareto
            front.
    """

    strategy: correlated.Strategy
    noise_multiplier: float
    epsilon_target: float
    delta: float
    sizes: _Sizes
    candidates: tuple[correlated.Strategy, ...]
    candidate_samplers: tuple[str, ...]
    refused_pairs: tuple[RefusedPair, ...]
    samplers: tuple[str, ...]
    ranking: dict[str, Any]
    ranking_rtol: float = RANKING_RTOL
    calibrations: _Cache = dataclasses.field(default_factory=dict, repr=False)

    @property
    def refused(self) -> tuple[tuple[str, str], ...]:
        """``(strategy_spec, message)`` of each refused pair (the message names the sampler and the reason)."""
        return tuple((pair.strategy, pair.message) for pair in self.refused_pairs)

    @property
    def ranks_samplers(self) -> bool:
        """Whether the plan ranked several participation schemes (``samplers``), not only the user's sampler."""
        return len(self.samplers) > 1

    def simulate(self, num_runs: int, seed: int = 0) -> Verification:
        """The chosen strategy's noise stream, ``num_runs`` runs: its prefix-sum error against the proxy.

        Each run streams ``κ·clip·(C⁻¹Z)_t`` (:meth:`privdyn.privacy.correlated.Strategy.stream`, counter-based
        normals) for :data:`VERIFY_COORDINATES` coordinates over the T steps, accumulates the prefix sums and
        measures their mean square over steps and coordinates, whose expectation is exactly ``prefix_sum_mse``;
        the check is two-sided at 5 standard errors with no bias allowance.
        """
        _check.integer(minimum=2, num_runs=num_runs)
        _check.integer(minimum=0, seed=seed)
        s = self.sizes
        source = correlated.step_normals(int(seed), "privdyn-plan/dpsgd")
        stream = self.strategy.stream((int(num_runs), VERIFY_COORDINATES), source, num_steps=s.num_steps,
                                      scale=self.noise_multiplier * s.clip)
        prefix = np.zeros((int(num_runs), VERIFY_COORDINATES))
        total = np.zeros(int(num_runs))
        for _ in range(s.num_steps):
            prefix += stream.next()
            total += np.einsum("ij,ij->i", prefix, prefix)
        measured = total / (s.num_steps * VERIFY_COORDINATES)
        return Verification.from_runs(
            measured, predicted=self.predicted_risk, quantity=self.quantity, seed=int(seed),
            note=(f"mean square of the prefix sums of the {strategy_spec(self.strategy)} noise stream "
                  f"({VERIFY_COORDINATES} coordinates x {s.num_steps} steps per run); its expectation is the proxy "
                  "exactly, so no bias allowance. This checks the noise and the proxy's algebra, not the privacy "
                  "accounting or a training loss"))

    def pareto_front(self, budgets: Sequence[float] | None = None, *, num_points: int = 7) -> ParetoFront:
        """The smallest proxy over the ranked strategies against ε, each re-calibrated at every ε (rtol 1e-3; the
        amplified-bound rows at the plan's ``ranking_rtol``, cached).

        Budgets where no ranked strategy can be accounted (e.g. ε > 1 for λ-CGD alone) have error ``inf``.
        """
        _check.integer(minimum=2, num_points=num_points)
        values = (np.geomspace(self.epsilon_target / 8.0, self.epsilon_target * 8.0, num_points) if budgets is None
                  else np.sort(np.asarray(budgets, dtype=float)))
        _check.positive(budgets=values)
        best: list[float] = []
        params: list[dict[str, Any]] = []
        for epsilon in values.tolist():
            ranked = []
            for strategy, sampler in zip(self.candidates, self.candidate_samplers, strict=True):
                try:
                    ranked.append(_calibrate(strategy, epsilon, dataclasses.replace(self.sizes, sampler=sampler),
                                             PARETO_RTOL, self.ranking_rtol, self.calibrations))
                except accounting.NotAccountableError:
                    continue
            if not ranked:
                best.append(math.inf)
                params.append({})
                continue
            winner = min(ranked, key=lambda r: r.mse)
            best.append(winner.mse)
            params.append(winner.hyperparameters(self.sizes))
        return ParetoFront(budget_name="epsilon", budgets=values, predicted=np.array(best), quantity=self.quantity,
                           hyperparameters=tuple(params),
                           note=(f"the best of the ranked strategies at every epsilon (delta = {self.delta:g}, "
                                 f"{'/'.join(self.samplers)} sampling, {self.sizes.neighboring.value} neighbours), "
                                 "each calibrated by its allow-listed accountant (rtol 1e-3; amplified-bound rows "
                                 f"at {self.ranking_rtol:g})"))

    def to_json(self, *, pareto_front: ParetoFront | None = None,
                verification: Verification | None = None) -> dict[str, Any]:
        out = super().to_json(pareto_front=pareto_front, verification=verification)
        out["ranking"] = json_ready(self.ranking)
        if self.ranks_samplers:
            out["refused"] = [{"strategy": p.strategy, "sampler": p.sampler, "reason_name": p.reason,
                               "reason": p.message} for p in self.refused_pairs]
        else:  # one sampler: the layout of a plan that ranks noise strategies alone
            out["refused"] = [{"strategy": spec, "reason": reason} for spec, reason in self.refused]
        return out

    def summary(self) -> str:
        lines = [super().summary(), "", "ranking", f"  {self.ranking['text']}"]
        if self.ranks_samplers:
            lines += ["", "ranked (strategy / sampler, accountant, noise_multiplier, prefix_sum_mse)"]
            lines += [f"  {e['strategy'] + ' / ' + e['sampler']:<36} {e['accountant']:<32} "
                      f"{_fmt(e['noise_multiplier']):>10} {_fmt(e['prefix_sum_mse']):>12}"
                      for e in self.ranking["entries"]]
            lines += ["", "what the data loader must do"]
            lines += [f"  {sampler:<18} {text}" for sampler, text in self.ranking["loaders"].items()]
        if self.refused_pairs and self.ranks_samplers:  # grouped by their named reason
            lines += ["", "not ranked (privdyn cannot account them here)"]
            for reason in dict.fromkeys(p.reason for p in self.refused_pairs):
                pairs = [p for p in self.refused_pairs if p.reason == reason]
                if reason in accounting.REFUSAL_REASONS:
                    lines.append(f"  {reason}: {', '.join(p.strategy + ' / ' + p.sampler for p in pairs)}")
                    lines.append(f"    {accounting.REFUSAL_REASONS[reason]}")
                else:
                    lines += [f"  {p.strategy} / {p.sampler}: {p.message}" for p in pairs]
        elif self.refused:
            lines += ["", "not ranked (privdyn cannot account them here)"]
            lines += [f"  {spec:<20} {reason}" for spec, reason in self.refused]
        return "\n".join(lines)


def _statement(best: _Ranked, s: _Sizes, epsilon: float, delta: float) -> PrivacyStatement:
    """The privacy statement of the chosen strategy: ε recomputed by the same accountant at the calibrated κ."""
    return run_statement(best.strategy, best.row, best.noise_multiplier, s, delta,
                         {"epsilon_target": epsilon, "calibration": best.calibration_source})


def run_statement(strategy: correlated.Strategy, row: accounting.AllowListRow, noise_multiplier: float, s: _Sizes,
                  delta: float, cross_checks: dict[str, Any], sizes_text: str | None = None) -> PrivacyStatement:
    """The privacy statement of DP-SGD run with ``strategy`` at κ = ``noise_multiplier``: ε by the row's accountant.

    ``sizes_text`` replaces the default description of the batches (``batch_size = B of n = N``), e.g. for a
    Poisson rate given without a dataset size.
    """
    from privdyn.privacy import correlated_calibration

    mechanism = s.mechanism(strategy, noise_multiplier)
    loss = mechanism.privacy_loss(delta)
    rdp_curve = None
    conversion = None
    if row.accountant == "dp_accounting_rdp":  # the row's accountant is an RDP curve: publish it
        orders = np.array([1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0])
        curve = correlated_calibration.rdp_dp_accounting(
            noise_multiplier, n=s.n, batch_size=s.batch_size, num_steps=s.num_steps, renyi_orders=orders,
            sampler=s.sampler, neighboring=s.neighboring)
        rdp_curve = {"renyi_orders": orders.tolist(), "rdp_epsilons": np.asarray(curve.value).tolist()}
        conversion = "RDP -> (epsilon, delta) by Balle et al. 2020 (arXiv 1905.09982, Theorem 21)"
    elif row.accountant.endswith("_pld"):
        conversion = "privacy-loss distribution, pessimistic discretization (no RDP curve)"
    elif _is_slow(row):
        conversion = ("privacy-loss distributions of the amplified bound, composed conditionally (no RDP curve)"
                      if "Theorem F.12" not in loss.source else "a closed-form (epsilon, delta) bound (no RDP curve)")
    membership = mechanism.membership()  # about 1 s where the run has a PLD (independent noise, cyclic Poisson)
    batches = sizes_text or f"batch_size = {s.batch_size} of n = {s.n}"
    assumptions = [
        f"every step draws a batch by {s.sampler} sampling ({batches}), {s.num_steps} steps",
        f"per-example gradients clipped to L2 norm clip = {s.clip:g} and summed; noise "
        f"noise_multiplier * clip * (C^-1 Z)_t added to the sum at step t",
        "the noise strategy, sizes and hyper-parameters do not depend on the private data",
    ]
    if row.conditions:
        assumptions.append(f"the accountant's conditions hold: {row.conditions}")
    return PrivacyStatement(
        unit="one example (a record of the training set)", neighboring=s.neighboring, sampler=s.sampler,
        released="every noisy gradient sum, hence every iterate", accountant=f"{row.describe()}; {loss.source}",
        guarantee=row.guarantee, planning=PlanningShare(), epsilon=float(loss.value), delta=delta, zcdp=None,
        training_zcdp=None, rdp_curve=rdp_curve, conversion=conversion, assumptions=tuple(assumptions),
        cross_checks=cross_checks, extra={"noise_multiplier": noise_multiplier}, membership=membership,
        membership_reason=None if membership is not None else DPSGD_NO_MEMBERSHIP)


def _required(name: str, value: Any, choices: Sequence[str], meaning: str) -> None:
    """``value`` is given; else an error listing ``choices`` (string values: an enum member's repr is not one)."""
    if value is None:
        raise ValueError(f"{name} is required ({meaning}): one of {', '.join(repr(c) for c in choices)}; "
                         "privdyn never assumes one.")


def dpsgd(*, n: int, batch_size: int, num_steps: int, epsilon: float, delta: float,
          sampler: Sampler | str | None = None, neighboring: str | None = None,
          strategies: Sequence[str | correlated.Strategy] | None = None,
          samplers: str | Sequence[Sampler | str] | None = None, clip: float = 1.0, rtol: float = CALIBRATION_RTOL,
          ranking_rtol: float = RANKING_RTOL) -> DPSGDPlan:
    """Plan DP-SGD with independent or correlated noise: κ per strategy for (ε, δ), ranked by the prefix-sum proxy.

    Args:
        n: number of training examples (>= 1).
        batch_size: (expected) batch size B, 1 <= B <= n.
        num_steps: number of steps T (>= 1).
        epsilon, delta: the budget, epsilon > 0 and delta in (0, 1).
        sampler: one of :data:`privdyn.privacy.labels.DPSGD_SAMPLERS`, a :class:`~privdyn.privacy.Sampler` or its
            string value (required unless ``samplers`` is given).
        neighboring: ``"replace_one"``, ``"add_remove"`` or ``"zero_out"`` (required).
        strategies: names (:func:`parse_strategy`) or strategy objects; every one must be accountable under
            (sampler, neighboring), else the plan is refused. None: :data:`DEFAULT_STRATEGIES`, of which the
            accountable ones are ranked and the others listed as refused.
        samplers: participation schemes to rank as well (a list, a comma-separated string, or ``"all"`` for every
            sampler privdyn knows): every (strategy, sampler) pair the allow-list accounts under ``neighboring`` is
            ranked at the same (ε, δ), batch size and steps, and the others are listed as refused with their named
            reason (a named strategy must be accountable under at least one of them). None: ``sampler`` alone.
        clip: the clipping threshold (scales the proxy by clip²; κ does not depend on it).
        rtol: relative tolerance of the chosen strategy's κ (and of every κ from a dp-accounting row).
        ranking_rtol: relative tolerance of the amplified-bound calibrations that only rank (each a search over a
            bound that costs seconds per evaluation); the chosen strategy is calibrated again at ``rtol``.

    Returns:
        A :class:`DPSGDPlan`: the (strategy, sampler) with the smallest ``prefix_sum_mse`` at its calibrated κ
        (``hyperparameters``: ``strategy``, ``noise_correlation`` for λ-CGD, ``noise_multiplier``, ``noise_std`` =
        κ·clip on the summed gradients, ``sampler``, ``neighboring``, ``accountant``, ``guarantee``), the others in
        ``alternatives`` with theirs, the per-step error curve, the ranking and the privacy statement.

    Raises:
        ValueError: bad sizes or budget, a missing sampler or relation, an unknown strategy or sampler name; and
            :class:`~privdyn.privacy.accounting.NotAccountableError` (a ValueError) for a named strategy privdyn
            cannot account here, or when no default candidate can be accounted.
    """
    started = time.perf_counter()
    _check.integer(minimum=1, n=n, batch_size=batch_size, num_steps=num_steps)
    if int(batch_size) > int(n):
        raise ValueError(f"batch_size must be <= n = {int(n)}; got batch_size={batch_size!r}.")
    _check.scalar(epsilon=epsilon, clip=clip, rtol=rtol, ranking_rtol=ranking_rtol)
    _check.positive(epsilon=epsilon, clip=clip)
    _check.in_range(1e-12, 1.0, closed="both", rtol=rtol)
    _check.in_range(1e-12, 1.0, closed="both", ranking_rtol=ranking_rtol)
    dlt = _check.delta(delta)
    schemes = None if samplers is None else parse_samplers(samplers)
    if schemes is None:
        _required("sampler", sampler, [choice.value for choice in DPSGD_SAMPLERS], "how records join the steps")
    _required("neighboring", neighboring, [r.value for r in NeighboringRelation], "which datasets are neighbours")
    if sampler is not None:
        sampler = as_sampler(sampler).value
        if schemes is not None and sampler not in schemes:
            raise ValueError(f"sampler must be one of the ranked samplers {', '.join(schemes)}; got "
                             f"sampler={sampler!r}.")
    relation = as_neighboring(str(neighboring))
    schemes = schemes or (str(sampler),)
    s = _Sizes(n=int(n), batch_size=int(batch_size), num_steps=int(num_steps), delta=dlt, sampler=schemes[0],
               neighboring=relation, clip=float(clip))
    named = strategies is not None
    specs = list(DEFAULT_STRATEGIES if strategies is None else strategies)
    if not specs:
        raise ValueError("strategies must name at least one noise strategy; got none.")
    parsed = [parse_strategy(spec) for spec in specs]

    cache: _Cache = {}
    ranked: list[_Ranked] = []
    refused: list[RefusedPair] = []
    first_refusal: accounting.NotAccountableError | None = None
    pairs = [(strategy, scheme) for scheme in schemes for strategy in parsed]
    for index, (strategy, scheme) in enumerate(pairs):
        report(f"calibrating {strategy_spec(strategy)}" + (f" / {scheme}" if len(schemes) > 1 else ""), index,
               len(pairs))
        try:
            ranked.append(_calibrate(strategy, float(epsilon), dataclasses.replace(s, sampler=scheme), float(rtol),
                                     float(ranking_rtol), cache))
        except accounting.NotAccountableError as exc:
            if named and len(schemes) == 1:
                raise accounting.NotAccountableError(_one_line(exc), reason=exc.reason) from None
            first_refusal = first_refusal or exc
            refused.append(RefusedPair(strategy=strategy_spec(strategy), sampler=scheme, reason=exc.reason,
                                       message=_one_line(exc)))
    if named:  # a strategy the user named must be accountable under some ranked sampler
        for strategy in parsed:
            if not any(r.strategy is strategy for r in ranked):
                why = "; ".join(p.message for p in refused if p.strategy == strategy_spec(strategy))
                raise accounting.NotAccountableError(f"strategy {strategy_spec(strategy)!r} cannot be accounted under "
                                                     f"any of the samplers {', '.join(schemes)}: {why}")
    if not ranked:
        assert first_refusal is not None
        raise accounting.NotAccountableError(_one_line(first_refusal), reason=first_refusal.reason) from None
    ranked.sort(key=lambda r: r.mse)
    report("calibrating the chosen strategy at rtol", len(pairs), len(pairs))
    if ranked[0].calibration_rtol > rtol:  # the chosen strategy at the user's tolerance
        ranked[0] = _calibrate(ranked[0].strategy, float(epsilon), dataclasses.replace(s, sampler=ranked[0].sampler),
                               float(rtol), float(rtol), cache)
    best = ranked[0]
    s = dataclasses.replace(s, sampler=best.sampler)
    several = len(schemes) > 1

    def name(r: _Ranked) -> str:
        return strategy_spec(r.strategy) + (f" / {r.sampler}" if several else "")

    tight = [r for r in ranked if r.row.accountant in _TIGHT_ACCOUNTANTS]
    loose = [r for r in ranked if r.row.accountant not in _TIGHT_ACCOUNTANTS]
    biased = bool(tight) and bool(loose)
    relation_text = f"{s.sampler} sampling, {s.neighboring.value} neighbours"
    if biased:
        why = ("biased against correlated noise: independent noise is accounted by a PLD that is exact up to "
               "discretization, the correlated strategies by upper bounds (the amplified bound of Theorem F.8's pair, "
               "arXiv 2605.12648, measured within 10% of the Monte-Carlo estimate of epsilon where kappa / ||C||_2 "
               ">= 2 and up to 10x above it where kappa / ||C||_2 < 1, docs/amplification.md; for lambda-CGD under "
               "fixed-size sampling the smaller of it and Theorem F.12). A correlated strategy ranked below "
               "independent noise may still be better; one ranked above it is better by at least the margin shown")
    elif len(ranked) == 1:
        why = "one strategy accountable here, nothing to rank"
    elif tight:
        why = "every ranked strategy is accounted by a PLD exact up to discretization"
    else:
        why = ("every ranked strategy is accounted by the same amplified upper bound, whose slack may differ between "
               "strategies")
    if any(r.calibration_rtol > rtol for r in ranked):
        why += (f"; the runners-up calibrated by the amplified bound are at rtol {float(ranking_rtol):g} (their "
                "noise_multiplier is on the safe side, at most that much above the smallest), so proxies within "
                f"{2 * float(ranking_rtol):.0%} of each other may be ordered either way")
    ranking: dict[str, Any] = {
        "criterion": "prefix_sum_mse", "sampler": s.sampler, "neighboring": s.neighboring.value,
        "biased_against_correlated": biased, "accountants": {name(r): r.row.accountant for r in ranked},
        "text": f"by prefix_sum_mse at each strategy's calibrated noise_multiplier, all under {relation_text}; "
                + why + "."}
    if several:
        ranking.update(_sampler_ranking(ranked, schemes, s, name))
        ranking["text"] = ranking.pop("scheme_text") + why + "."
    notes = [f"noise_multiplier is the noise std on the SUM of clipped per-example gradients divided by clip; on the "
             f"averaged gradient the std is noise_multiplier * clip / batch_size = "
             f"{best.noise_multiplier * s.clip / s.batch_size:.6g}"]
    if refused:
        notes.append("correlated strategies (but the square root) are accounted under fixed_size sampling with "
                     "zero_out neighbours and under poisson sampling (add_remove or zero_out), by the amplified bound; "
                     "independent noise also under fixed_size with replace_one")
    notes.append("prefix_sum_mse measures the noise of the released gradient stream, per coordinate, on the summed "
                 "gradients; it ranks noise strategies and is not a predicted training loss")
    if several:
        notes.append(f"the chosen plan trains with {s.sampler} sampling: the data loader must draw its batches that "
                     f"way ({ranking['loaders'][s.sampler]}), or the privacy statement does not hold")

    alternatives = tuple(
        Alternative(name=name(r), hyperparameters=r.hyperparameters(s), predicted_risk=r.mse,
                    note=f"last prefix sum {r.last_mse:.4g}")
        for r in ranked[1:])
    b = _prefix_coefficients(best.strategy, s.num_steps)
    row_norms = (best.noise_multiplier * s.clip) ** 2 * np.cumsum(b * b)
    shown = np.unique(np.geomspace(1, s.num_steps, min(s.num_steps, 200)).round().astype(int))
    report("privacy statement", len(pairs), len(pairs))
    statement = _statement(best, s, float(epsilon), dlt)
    inputs: dict[str, Any] = {"n": s.n, "batch_size": s.batch_size, "num_steps": s.num_steps,
                              "sampling_prob": s.batch_size / s.n, "epsilon": float(epsilon), "delta": dlt,
                              "sampler": None if sampler is None else str(sampler),
                              "neighboring": s.neighboring.value, "clip": s.clip,
                              "strategies": [strategy_spec(p) for p in parsed]}
    if several:
        inputs["samplers"] = list(schemes)
    return DPSGDPlan(
        family="dpsgd", inputs=inputs,
        hyperparameters=best.hyperparameters(s), per_step={}, predicted_risk=best.mse, quantity="prefix_sum_mse",
        method="closed_form",
        risk_curve={"times": shown.tolist(), "risk": row_norms[shown - 1].tolist(), "final_risk": best.last_mse,
                    "x_label": "step t",
                    "y_label": "E (prefix sum of the noise)^2 per coordinate"},
        alternatives=alternatives, privacy=statement, notes=tuple(notes),
        search={"calibrations": len(cache), "calibration_rtol": float(rtol), "ranking_rtol": float(ranking_rtol),
                "last_prefix_sum_mse": best.last_mse, "elapsed_s": time.perf_counter() - started},
        strategy=best.strategy, noise_multiplier=best.noise_multiplier, epsilon_target=float(epsilon), delta=dlt,
        sizes=s, candidates=tuple(r.strategy for r in ranked), candidate_samplers=tuple(r.sampler for r in ranked),
        refused_pairs=tuple(refused), samplers=tuple(schemes), ranking=ranking, ranking_rtol=float(ranking_rtol),
        calibrations=cache)
