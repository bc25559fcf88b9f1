"""Audit one mechanism: the reported epsilon against an empirical (or exact) lower bound from its canary runs.

For every mechanism of :mod:`privdyn.audit.mechanisms`:

1. the reported epsilon and its guarantee label come from privdyn's accountant;
2. ``runs // 4`` *selection* runs per dataset choose the threshold of the test, then ``runs`` fresh *audit* runs per
   dataset give its error counts, hence a lower bound on epsilon at ``confidence`` (:mod:`privdyn.audit.statistics`);
3. where the output law is Gaussian, the audited bound is instead the exact epsilon of that law
   (:mod:`privdyn.audit.gaussian`), and the runs check that the simulator has that law (sample mean and variance of
   both datasets within five standard errors).

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

import numpy as np

from privdyn import _check
from privdyn.audit.base import GaussianLaw, Mechanism
from privdyn.audit.gaussian import gaussian_shift, gaussian_shift_epsilon
from privdyn.audit.statistics import threshold_audit
from privdyn.privacy.labels import Guarantee, PrivacyLoss

__all__ = ["AuditRow", "DEFAULT_CONFIDENCE", "DEFAULT_RUNS", "LAW_CHECK_Z", "TIGHT_RATIO", "audit_mechanism"]

DEFAULT_RUNS = 10_000
"""Audit runs per dataset (the CI contract's minimum)."""
DEFAULT_CONFIDENCE = 1.0 - 1e-6
"""Confidence of the empirical lower bounds (the CI contract's level)."""
TIGHT_RATIO = 0.5
"""A row is reported as tight when audited_lower_bound / epsilon >= this."""
LAW_CHECK_Z = 5.0
"""Standard errors allowed between the simulated and the exact mean and variance of a Gaussian output."""

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
        runs: audit runs per dataset.
        ratio: audited_lower_bound / epsilon.
        method: ``"exact_gaussian"`` or ``"threshold_test"``.
        threshold_lower_bound: the threshold test's lower bound, also computed where the law is exact.
        law_check: for Gaussian outputs, whether the runs match the exact law (z = 5); None otherwise.
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

    def to_json(self) -> dict[str, object]:
        """The row as a JSON-compatible dictionary."""
        return dataclasses.asdict(self)


def _law_matches(law: GaussianLaw, scores: tuple[np.ndarray, np.ndarray]) -> bool:
    """Sample mean and variance of both sides within LAW_CHECK_Z standard errors of the exact law."""
    for sample, mean in zip(scores, (law.mean, law.neighbour_mean), strict=True):
        runs = sample.size
        mean_error = LAW_CHECK_Z * law.std / math.sqrt(runs)
        variance_error = LAW_CHECK_Z * law.std**2 * math.sqrt(2.0 / (runs - 1))
        if abs(float(sample.mean()) - mean) > mean_error or abs(float(sample.var(ddof=1)) - law.std**2) > \
                variance_error:
            return False
    return True


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
    epsilon, delta = float(reported.value), mechanism.delta
    selection = mechanism.scores(seed, f"audit/{mechanism.name}/selection", max(runs // 4, 1))
    scores = mechanism.scores(seed, f"audit/{mechanism.name}/audit", runs)
    test = threshold_audit(selection, scores, delta=delta, confidence=confidence)
    law = mechanism.gaussian_law()
    if law is None:
        method, audited, level, law_check = "threshold_test", test.epsilon_lower_bound, float(confidence), None
    else:
        mu = gaussian_shift(law.mean, law.neighbour_mean, law.std)
        method, audited, level = "exact_gaussian", gaussian_shift_epsilon(mu, delta=delta), 1.0
        law_check = _law_matches(law, scores)
    ratio = audited / epsilon if epsilon > 0 else (0.0 if audited == 0 else math.inf)
    return AuditRow(mechanism=mechanism.name, epsilon=epsilon, delta=delta, guarantee=reported.guarantee.value,
                    audited_lower_bound=audited, confidence=level, runs=runs, ratio=ratio, method=method,
                    threshold_lower_bound=test.epsilon_lower_bound, law_check=law_check,
                    violation=reported.guarantee in _CHECKED and audited > epsilon, tight=ratio >= TIGHT_RATIO,
                    description=mechanism.description, surrogate_gap=mechanism.surrogate_gap())
