"""Turning counts of a distinguishing test into a lower bound on epsilon, with Clopper-Pearson confidence.

An auditor runs a mechanism many times on each of two neighbouring datasets D and D' and applies a threshold test
"say D' when the score exceeds t". If the mechanism is (epsilon, delta)-DP, every test's false-positive rate FPR
(on D) and false-negative rate FNR (on D') satisfy (Kairouz, Oh, Viswanath 2015, Theorem 2.1)::

    FPR + exp(epsilon) FNR >= 1 - delta        and        FNR + exp(epsilon) FPR >= 1 - delta,

so, with upper confidence limits FPR_u and FNR_u of the two rates,

    epsilon >= max(log((1 - delta - FNR_u) / FPR_u), log((1 - delta - FPR_u) / FNR_u))

holds with the joint confidence of the two limits (Jagielski, Ullman, Oprea 2020, arXiv 2006.07709, Section 3;
Nasr et al. 2021, arXiv 2101.04535, Section 3). Each limit is a one-sided Clopper-Pearson bound at level
``1 - (1 - confidence) / 2``, so by the union bound the lower bound holds with probability at least ``confidence``.

The threshold is chosen on separate *selection* runs and then evaluated on fresh *audit* runs, so the choice does not
bias the confidence statement.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check

__all__ = ["ThresholdAudit", "clopper_pearson_upper", "epsilon_lower_bound", "select_threshold", "threshold_audit"]

NUM_CANDIDATE_THRESHOLDS = 256
"""Thresholds tried on the selection runs (quantiles of the pooled selection scores)."""


def _confidence(confidence: Any) -> float:
    _check.scalar(confidence=confidence)
    _check.finite(confidence=confidence)
    _check.in_range(0.0, 1.0, closed="neither", confidence=confidence)
    return float(confidence)


def clopper_pearson_upper(successes: ArrayLike, trials: ArrayLike, *, confidence: float) -> np.ndarray:
    """The one-sided Clopper-Pearson upper confidence limit of a binomial proportion.

    The exact limit ``p_u`` with ``P(Binomial(trials, p_u) <= successes) = 1 - confidence``, i.e. the
    ``confidence`` quantile of Beta(successes + 1, trials - successes) (Clopper and Pearson 1934); 1 when
    ``successes == trials``.

    Shapes: ``successes`` and ``trials`` broadcast; the result has their broadcast shape.

    Raises:
        ValueError: ``trials`` < 1, ``successes`` outside [0, trials], or ``confidence`` outside (0, 1).
    """
    from scipy import stats

    level = _confidence(confidence)
    _check.finite(successes=successes, trials=trials)
    _check.integer(minimum=0, successes=successes)
    _check.integer(minimum=1, trials=trials)
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if np.any(k > n):
        raise ValueError(f"successes must be <= trials; got successes={k.max()!r} > trials={n.min()!r}.")
    k, n = np.broadcast_arrays(k, n)
    with np.errstate(invalid="ignore"):
        upper = stats.beta.ppf(level, k + 1.0, np.maximum(n - k, 1.0))
    return np.where(k >= n, 1.0, upper)


def epsilon_lower_bound(false_positives: ArrayLike, false_negatives: ArrayLike, *, trials: int, delta: float,
                        confidence: float) -> np.ndarray:
    """The lower bound on epsilon certified by a test's error counts (module docstring).

    Args:
        false_positives: runs on D that the test attributes to D' (out of ``trials``).
        false_negatives: runs on D' that the test attributes to D (out of ``trials``).
        trials: runs on each dataset, >= 1.
        delta: the delta of the (epsilon, delta) statement audited, in [0, 1).
        confidence: the joint confidence of the bound, in (0, 1).

    Returns:
        max(0, log((1 - delta - FNR_u) / FPR_u), log((1 - delta - FPR_u) / FNR_u)), elementwise.
    """
    _check.scalar(delta=delta)
    _check.finite(delta=delta)
    _check.in_range(0.0, 1.0, closed="left", delta=delta)
    level = 1.0 - (1.0 - _confidence(confidence)) / 2.0
    fpr = clopper_pearson_upper(false_positives, trials, confidence=level)
    fnr = clopper_pearson_upper(false_negatives, trials, confidence=level)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1.0 - delta - fnr, 0.0) / fpr)
        two = np.log(np.maximum(1.0 - delta - fpr, 0.0) / fnr)
    return np.maximum(np.maximum(np.nan_to_num(one, nan=0.0, neginf=0.0), np.nan_to_num(two, nan=0.0, neginf=0.0)),
                      0.0)


def _error_counts(scores: np.ndarray, neighbour_scores: np.ndarray,
                  thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For "say D' when score > t": false positives on D and false negatives on D', per threshold."""
    ordered, neighbour_ordered = np.sort(scores), np.sort(neighbour_scores)
    false_positives = scores.size - np.searchsorted(ordered, thresholds, side="right")
    false_negatives = np.searchsorted(neighbour_ordered, thresholds, side="right")
    return false_positives, false_negatives


def _scores(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of scores; got shape {arr.shape}.")
    _check.finite(**{name: arr})
    return arr


def select_threshold(scores: ArrayLike, neighbour_scores: ArrayLike, *, delta: float, confidence: float) -> float:
    """The threshold whose test certifies the largest epsilon on these (selection) runs.

    Candidates are :data:`NUM_CANDIDATE_THRESHOLDS` quantiles of the pooled scores; ties go to the smallest.
    """
    a, b = _scores("scores", scores), _scores("neighbour_scores", neighbour_scores)
    if a.size != b.size:
        raise ValueError(f"scores and neighbour_scores must have the same length; got {a.size} and {b.size}.")
    candidates = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0.0, 1.0, NUM_CANDIDATE_THRESHOLDS)))
    fp, fn = _error_counts(a, b, candidates)
    bounds = epsilon_lower_bound(fp, fn, trials=a.size, delta=delta, confidence=confidence)
    return float(candidates[int(np.argmax(bounds))])


@dataclasses.dataclass(frozen=True)
class ThresholdAudit:
    """The outcome of a threshold test on the audit runs.

    Attributes:
        threshold: the test's threshold (chosen on the selection runs).
        false_positives, false_negatives: error counts on the audit runs.
        trials: audit runs per dataset.
        epsilon_lower_bound: the certified lower bound on epsilon.
    """

    threshold: float
    false_positives: int
    false_negatives: int
    trials: int
    epsilon_lower_bound: float


def threshold_audit(selection: tuple[ArrayLike, ArrayLike], audit: tuple[ArrayLike, ArrayLike], *, delta: float,
                    confidence: float) -> ThresholdAudit:
    """Choose a threshold on the selection scores, then bound epsilon from the audit scores.

    Args:
        selection: (scores on D, scores on D') of the selection runs.
        audit: (scores on D, scores on D') of the audit runs, independent of the selection runs.
        delta, confidence: as in :func:`epsilon_lower_bound`.
    """
    threshold = select_threshold(*selection, delta=delta, confidence=confidence)
    a, b = _scores("scores", audit[0]), _scores("neighbour_scores", audit[1])
    if a.size != b.size:
        raise ValueError(f"audit scores on D and D' must have the same length; got {a.size} and {b.size}.")
    fp, fn = _error_counts(a, b, np.array([threshold]))
    bound = epsilon_lower_bound(fp, fn, trials=a.size, delta=delta, confidence=confidence)
    value = float(bound[0])
    return ThresholdAudit(threshold=threshold, false_positives=int(fp[0]), false_negatives=int(fn[0]),
                          trials=int(a.size), epsilon_lower_bound=0.0 if math.isnan(value) else value)
