"""Audit one mechanism: the reported epsilon against an empirical (or exact) lower bound from its canary runs.

For every mechanism of :mod:`privdyn.audit.mechanisms`:

1. the reported epsilon and its guarantee label come from privdyn's accountant;
2. ``runs // 4`` *selection* runs per dataset choose the threshold of the test, then ``runs`` fresh *audit* runs per
   dataset give its error counts, hence a lower bound on epsilon at ``confidence`` (:mod:`privdyn.audit.statistics`);
3. where the output law is Gaussian, the audited bound is instead the exact epsilon of that law
   (:mod:`privdyn.audit.gaussian`);
4. where the release has a stated law (Gaussian given the data, or a known function of Gaussian noise), the audit
   runs are tested against it (:mod:`privdyn.audit.law`: means and covariances within z = 5 or Bonferroni standard
   errors, or Kolmogorov-Smirnov): ``law_check``, with the largest z and the check's power in the row.

A row whose guarantee is ``exact`` or ``bound`` and whose audited lower bound exceeds the reported epsilon is a
**violation**: the accountant under-reports (or the mechanism does not do what the accountant assumes). A row of
another label (the hsgd ``surrogate``) is never a violation: how far it is from the truth is a finding
(``surrogate_gap``). A row with
ratio (audited / reported) >= 0.5 is **tight**: the bound is within a factor two of what the runs demonstrate.
"""

from __future__ import annotations

import dataclasses
import functools
import math

from privdyn import _check
from privdyn.audit.base import Mechanism
from privdyn.audit.gaussian import gaussian_shift, gaussian_shift_epsilon
from privdyn.audit.law import check_law
from privdyn.audit.statistics import threshold_audit
from privdyn.privacy.labels import Guarantee, PrivacyLoss

__all__ = ["AuditRow", "DEFAULT_CONFIDENCE", "DEFAULT_RUNS", "TIGHT_RATIO", "audit_mechanism"]

DEFAULT_RUNS = 10_000
"""Audit runs per dataset (the CI contract's minimum)."""
DEFAULT_CONFIDENCE = 1.0 - 1e-6
"""Confidence of the empirical lower bounds (the CI contract's level)."""
TIGHT_RATIO = 0.5
"""A row is reported as tight when audited_lower_bound / epsilon >= this."""

_CHECKED = (Guarantee.EXACT, Guarantee.BOUND)


@dataclasses.dataclass(frozen=True)
class AuditRow:
    """One line of the audit table (JSON keys: the field names).

    Attributes:
        mechanism: the mechanism's name.
        epsilon: the epsilon privdyn reports at ``delta``.
        delta: the delta of the audited (epsilon, delta) statement.
        guarantee: the accountant's label.
        audited_lower_bound: the exact epsilon of the output law (``method="exact_gaussian"``) or the certified
            lower bound of the threshold test (``method="threshold_test"``).
        confidence: the confidence of ``audited_lower_bound`` (1.0 when it is exact).
        runs: audit runs per dataset (what the row made: :meth:`Mechanism.runs_for` of the runs asked).
        ratio: audited_lower_bound / epsilon.
        method: ``"exact_gaussian"`` or ``"threshold_test"``.
        threshold_lower_bound: the threshold test's lower bound, also computed where the law is exact.
        law_check: where the release has a stated law, whether the audit runs match it
            (:func:`privdyn.audit.law.check_law`); None otherwise.
        law_z: the largest z of the law check (None without one).
        law_threshold: its z threshold (5 or the Bonferroni z at level 1e-6).
        law_power: what the law check detects with probability >= 0.977, in words.
        law_worst: the test that gave ``law_z``.
        entry_point: the public function or method every run goes through.
        caught: ``violation`` or a failed law check: the audit flags the row.
        violation: the guarantee is ``exact`` or ``bound`` and the audited lower bound exceeds epsilon.
        tight: ratio >= 0.5.
        description: what the mechanism is and which accountant reports it.
        surrogate_gap: for a ``surrogate`` accountant with an exact counterpart, (surrogate divergence / exact
            divergence - 1) on the audited pair: a finding (negative: the surrogate under-reports), never a
            violation; None otherwise.
    """

    mechanism: str
    epsilon: float
    delta: float
    guarantee: str
    audited_lower_bound: float
    confidence: float
    runs: int
    ratio: float
    method: str
    threshold_lower_bound: float
    law_check: bool | None
    violation: bool
    tight: bool
    description: str
    surrogate_gap: float | None = None
    law_z: float | None = None
    law_threshold: float | None = None
    law_power: str | None = None
    law_worst: str | None = None
    entry_point: str = ""

    @property
    def caught(self) -> bool:
        """Whether the audit flags this row: a violation, or runs that do not have the stated law."""
        return self.violation or self.law_check is False

    def to_json(self) -> dict[str, object]:
        """The row as a JSON-compatible dictionary."""
        return dataclasses.asdict(self)


@functools.lru_cache(maxsize=64)
def _reported(nominal: Mechanism) -> PrivacyLoss:
    """The accountant's epsilon of a mechanism at its nominal noise, computed once per setting in a process (an
    accountant such as dp-accounting's PLD takes seconds; a planted bug changes only the noise the runs use)."""
    return nominal.reported()


def audit_mechanism(mechanism: Mechanism, *, runs: int = DEFAULT_RUNS, confidence: float = DEFAULT_CONFIDENCE,
                    seed: int = 0) -> AuditRow:
    """Audit one mechanism (module docstring); reproducible from ``seed``.

    Args:
        mechanism: a :class:`~privdyn.audit.mechanisms.Mechanism`.
        runs: audit runs per dataset, >= 100 (plus ``runs // 4`` selection runs per dataset).
        confidence: of the threshold test's lower bound, in (0, 1).
        seed: the seed of every random stream (:mod:`privdyn.rng`), >= 0.

    Returns:
        An :class:`AuditRow`.
    """
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a privdyn.audit Mechanism; got {type(mechanism).__name__}.")
    _check.scalar(runs=runs, confidence=confidence, seed=seed)
    _check.integer(minimum=100, runs=runs)
    _check.integer(minimum=0, seed=seed)
    _check.in_range(0.0, 1.0, closed="neither", confidence=confidence)
    runs, seed = int(runs), int(seed)
    reported = _reported(dataclasses.replace(mechanism, noise_factor=1.0))
    runs = int(mechanism.runs_for(runs))
    epsilon, delta = float(reported.value), mechanism.delta
    selection = mechanism.scores(seed, f"audit/{mechanism.name}/selection", max(runs // 4, 1))
    outputs = mechanism.run(seed, f"audit/{mechanism.name}/audit", runs)
    test = threshold_audit(selection, outputs.scores, delta=delta, confidence=confidence)
    law = mechanism.gaussian_law()
    if law is None:
        method, audited, level = "threshold_test", test.epsilon_lower_bound, float(confidence)
    else:
        mu = gaussian_shift(law.mean, law.neighbour_mean, law.std)
        method, audited, level = "exact_gaussian", gaussian_shift_epsilon(mu, delta=delta), 1.0
    checked = check_law(outputs.law) if outputs.law else None
    ratio = audited / epsilon if epsilon > 0 else (0.0 if audited == 0 else math.inf)
    return AuditRow(mechanism=mechanism.name, epsilon=epsilon, delta=delta, guarantee=reported.guarantee.value,
                    audited_lower_bound=audited, confidence=level, runs=runs, ratio=ratio, method=method,
                    threshold_lower_bound=test.epsilon_lower_bound,
                    law_check=None if checked is None else checked.passed,
                    violation=reported.guarantee in _CHECKED and audited > epsilon, tight=ratio >= TIGHT_RATIO,
                    description=mechanism.description, surrogate_gap=mechanism.surrogate_gap(),
                    law_z=None if checked is None else checked.max_z,
                    law_threshold=None if checked is None else checked.threshold,
                    law_power=None if checked is None else checked.power,
                    law_worst=None if checked is None else checked.worst,
                    entry_point=type(mechanism).entry_point)
