"""Law checks: the released output of a row's runs against the law the mechanism states for it.

A mechanism whose release is Gaussian given the data states its law: the mean and the covariance of the output on
a fixed dataset follow from the update rule and the noise the privacy statement calibrates. A noise-scale bug (noise
drawn or scaled by a wrong factor) changes that law long before it moves the threshold test's epsilon, so each such
row compares its runs with the stated law:

* :class:`WhitenedSample`: the runs' outputs whitened by the stated law, ``(output - mean) L^{-T}`` with
  ``L L^T`` the stated covariance, so that under the law the rows are i.i.d. N(0, I_k). Tested exactly: every mean
  (normal, standard error ``1/sqrt(n)``), every variance (chi-square with n - 1 degrees of freedom), every
  correlation (Student's t with n - 2) and the pooled variance of all ``n k`` values (chi-square with (n - 1) k), the
  last the most powerful against a scale bug.
* :class:`CdfSample`: a one-dimensional output whose stated law is not Gaussian but known exactly (a censored
  Gaussian): the Kolmogorov-Smirnov test against its CDF.
* :class:`TwoSample`: an output whose law is a known function of Gaussian noise without a closed form: the
  two-sample Kolmogorov-Smirnov test against a reference implementation that draws the stated noise.
* :class:`Replay`: such an output where the runs' standard normals can be handed to a reference implementation
  with the stated noise: run by run, the release must equal the reference's to ``rtol`` (a coupling, stronger than a
  two-sample test: any change of a noise scale shows in every run; z is 0 when all agree, infinite otherwise).

Each test gives a z-score (a p-value is converted to the z of the same two-sided tail). The check fails when a z
exceeds the threshold: 5, or the Bonferroni z at family-wise level 1e-6 over the row's tests when that is larger
(:func:`check_law`). Under the stated law a row's check fails by chance with probability at most about 1e-6.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["CdfSample", "LawCheck", "Replay", "TwoSample", "WhitenedSample", "check_law", "law_threshold"]

FAMILY_LEVEL = 1e-6
"""Family-wise probability that a correct mechanism fails its law check."""
MIN_Z = 5.0
"""The smallest threshold (the project's z = 5)."""
POWER_MARGIN = 2.0
"""Power is stated for an effect of (threshold + 2) standard errors: detected with probability >= 0.977."""


@dataclasses.dataclass(frozen=True)
class WhitenedSample:
    """Outputs whitened by the stated law: shape (runs, k); i.i.d. N(0, I_k) under the law."""

    name: str
    values: np.ndarray


@dataclasses.dataclass(frozen=True)
class CdfSample:
    """One-dimensional outputs and the exact CDF of their stated law."""

    name: str
    values: np.ndarray
    cdf: Callable[[np.ndarray], np.ndarray]


@dataclasses.dataclass(frozen=True)
class TwoSample:
    """Outputs of the runs and of a reference that draws the stated noise (same length or not), one-dimensional."""

    name: str
    values: np.ndarray
    reference: np.ndarray


@dataclasses.dataclass(frozen=True)
class Replay:
    """Outputs of the runs and of a reference fed the same standard normals, shape (runs, k)."""

    name: str
    values: np.ndarray
    reference: np.ndarray
    rtol: float = 1e-8


Sample = WhitenedSample | CdfSample | TwoSample | Replay


@dataclasses.dataclass(frozen=True)
class LawCheck:
    """The outcome of :func:`check_law`.

    Attributes:
        passed: every z within ``threshold``.
        max_z: the largest z over the tests (the evidence against the stated law).
        worst: the test that gave ``max_z``.
        threshold: the z threshold (5, or the Bonferroni z at level 1e-6 over ``tests`` if larger).
        tests: how many tests were made.
        runs: the smallest number of outputs in a sample.
        power: what the check detects with probability >= 0.977, in words (the relative change of the noise
            standard deviation for whitened samples).
    """

    passed: bool
    max_z: float
    worst: str
    threshold: float
    tests: int
    runs: int
    power: str

    def runs_needed(self) -> float:
        """Runs at which an effect of the size measured here would give z = threshold + 2 (a scaling estimate,
        z growing as sqrt(runs)); ``inf`` when no effect was measured (``max_z`` = 0)."""
        if self.max_z <= 0.0:
            return math.inf
        return self.runs * ((self.threshold + POWER_MARGIN) / self.max_z) ** 2


def law_threshold(tests: int) -> float:
    """max(5, the two-sided Bonferroni z at family-wise level :data:`FAMILY_LEVEL` over ``tests`` tests)."""
    from scipy import stats

    return max(MIN_Z, float(stats.norm.isf(FAMILY_LEVEL / (2.0 * max(tests, 1)))))


def _z_of_p(p: float) -> float:
    """The z whose two-sided normal tail is ``p``."""
    return _z_of_log_p(math.log(p) if p > 0.0 else -math.inf)


def _z_of_log_p(log_p: float) -> float:
    """The z whose two-sided normal tail is exp(``log_p``), computed in log space (no underflow)."""
    from scipy import special

    if log_p == -math.inf:
        return math.inf
    return float(-special.ndtri_exp(min(log_p, 0.0) - math.log(2.0)))


def _whitened_tests(sample: WhitenedSample) -> list[tuple[str, float]]:
    """Exact tests of i.i.d. N(0, I_k) rows, each reported as the z of the same two-sided tail: means (normal),
    variances ((n - 1) s^2 ~ chi^2(n - 1)), correlations (t with n - 2 degrees of freedom) and the pooled variance
    (chi^2((n - 1) k))."""
    from scipy import stats

    values = np.asarray(sample.values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    n, k = values.shape
    if n < 20:
        raise ValueError(f"a law check needs >= 20 runs; got {n} in {sample.name!r}.")

    def chi2_z(total: float, dof: int) -> float:
        log_tail = min(float(stats.chi2.logsf(total, dof)), float(stats.chi2.logcdf(total, dof)))
        if math.isfinite(log_tail):
            return _z_of_log_p(log_tail + math.log(2.0))
        # beyond the float range of the tail: the Wilson-Hilferty normal approximation of the same statistic
        return abs(((total / dof) ** (1.0 / 3.0) - (1.0 - 2.0 / (9.0 * dof))) / math.sqrt(2.0 / (9.0 * dof)))

    means = values.mean(axis=0)
    centred = values - means
    squares = np.sum(centred**2, axis=0)
    tests = [(f"{sample.name}: mean[{i}]", abs(float(means[i])) * math.sqrt(n)) for i in range(k)]
    tests += [(f"{sample.name}: variance[{i}]", chi2_z(float(squares[i]), n - 1)) for i in range(k)]
    if k > 1:
        correlation = (centred.T @ centred) / np.sqrt(np.outer(squares, squares))
        for i in range(k):
            for j in range(i + 1, k):
                r = float(np.clip(correlation[i, j], -1.0 + 1e-15, 1.0 - 1e-15))
                t = abs(r) * math.sqrt((n - 2) / (1.0 - r * r))
                tests.append((f"{sample.name}: correlation[{i},{j}]",
                               _z_of_log_p(float(stats.t.logsf(t, n - 2)) + math.log(2.0))))
    tests.append((f"{sample.name}: pooled variance", chi2_z(float(squares.sum()), (n - 1) * k)))
    return tests


def check_law(samples: Sequence[Sample]) -> LawCheck:
    """Test every sample against its stated law (module docstring)."""
    from scipy import stats

    if not samples:
        raise ValueError("check_law needs at least one sample.")
    tests: list[tuple[str, float]] = []
    power: list[str] = []
    runs = []
    pooled_values = 0
    ks_sizes = []
    for sample in samples:
        if isinstance(sample, WhitenedSample):
            tests += _whitened_tests(sample)
            runs.append(int(np.shape(sample.values)[0]))
            pooled_values = max(pooled_values, int(np.size(sample.values)))
        elif isinstance(sample, CdfSample):
            result = stats.kstest(np.asarray(sample.values, dtype=float), sample.cdf)
            tests.append((f"{sample.name}: Kolmogorov-Smirnov against the stated CDF", _z_of_p(float(result.pvalue))))
            runs.append(int(np.size(sample.values)))
            ks_sizes.append(float(np.size(sample.values)))
        elif isinstance(sample, TwoSample):
            result = stats.ks_2samp(np.asarray(sample.values, dtype=float), np.asarray(sample.reference, dtype=float))
            tests.append((f"{sample.name}: two-sample Kolmogorov-Smirnov against the reference",
                          _z_of_p(float(result.pvalue))))
            runs.append(int(np.size(sample.values)))
            m, r = float(np.size(sample.values)), float(np.size(sample.reference))
            ks_sizes.append(m * r / (m + r))
        elif isinstance(sample, Replay):
            values, reference = (np.asarray(v, dtype=float) for v in (sample.values, sample.reference))
            scale = np.maximum(np.abs(reference), 1.0)
            error = float(np.max(np.abs(values - reference) / scale)) if values.size else 0.0
            agree = values.shape == reference.shape and error <= sample.rtol
            tests.append((f"{sample.name}: replay against the reference (largest relative error {error:.3g})",
                          0.0 if agree else math.inf))
            runs.append(int(np.shape(values)[0]))
            power.append("any change of the noise in any run (replay)")
        else:
            raise TypeError("a law sample must be WhitenedSample, CdfSample, TwoSample or Replay; got "
                            f"{type(sample).__name__}.")
    threshold = law_threshold(len(tests))
    worst, max_z = max(tests, key=lambda item: item[1])
    if pooled_values:
        # the pooled variance test sees f^2 - 1 with standard error sqrt(2 / N): detected when |f^2 - 1| is
        # (threshold + 2) standard errors (a lower factor, the planted kind of bug)
        change = (threshold + POWER_MARGIN) * math.sqrt(2.0 / pooled_values)
        power.append(f"noise std x {math.sqrt(max(1.0 - change, 0.0)):.3f} or lower (pooled variance of "
                     f"{pooled_values} whitened values)")
    for size in ks_sizes:
        # the DKW critical distance at the threshold's tail, plus 1/sqrt(size) (about four null standard deviations
        # of the distance) for power
        tail = 2.0 * float(stats.norm.sf(threshold))
        distance = math.sqrt(math.log(2.0 / tail) / (2.0 * size)) + 1.0 / math.sqrt(size)
        power.append(f"a CDF distance >= {distance:.3g} (Kolmogorov-Smirnov, effective size {size:.0f})")
    return LawCheck(passed=bool(max_z <= threshold), max_z=float(max_z), worst=worst, threshold=threshold,
                    tests=len(tests), runs=min(runs), power="; ".join(power))
