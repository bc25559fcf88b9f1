"""Training experiments of the kan paper (arXiv 2605.12648): datasets, the independent clipped-SGD reference, configs,
intervals and fits."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Literal

import numpy as np
from scipy import stats

from privdyn import _check
from privdyn.data.classification import load_binary_dataset, scale_to_unit_ball
from privdyn.models.kan import KAN
from privdyn.privacy import correlated_calibration as cal
from privdyn.privacy.labels import NeighboringRelation
from privdyn.privacy.mechanism import DPSGDMechanism
from privdyn.rng import generator
from privdyn.runs.config import ExperimentConfig
from privdyn.runs.naming import unit_key
from privdyn.runs.results import CheckKind

__all__ = ["Fig1LeftConfig", "BoundsConfig", "t_interval", "reference_clipped_sgd",
           "calibrated_kappa", "f12_conditions", "poisson_pld_kappa", "logistic_regression_accuracy", "training_size"]


PAPER = "Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert, Kloft 2026 (arXiv 2605.12648)"
INVARIANT = CheckKind.INVARIANT
DatasetName = Literal["breast_cancer", "digits_1_vs_7"]
ActivationName = Literal["sigmoid", "tanh"]
CorollaryName = Literal["5.3", "5.5", "5.6"]
KappaSource = Literal["computed", "shipped"]
FeatureScaling = Literal["unit_ball", "box"]
PANELS = ("same_noise", "calibrated")
_DATASET_SIZES = {"breast_cancer": 569, "digits_1_vs_7": 361}
_POPULATION_THEOREM = {"5.3": "5.2", "5.5": "D.16", "5.6": "E.1"}
REFERENCE_RTOL = 1e-9
"""Relative tolerance of the trainer (kappa = 0) against the independent clipped-SGD loop (rounding of T steps)."""
REFERENCE_STEPS = 40
"""Steps of the example-by-example reference loop (it costs B dense gradients per step)."""


# --------------------------------------------------------------------------------------------------------------
# Data and statistics utilities
# --------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _split_dataset(name: str, test_fraction: float, seed: int, feature_scaling: str = "unit_ball") -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    x, y = load_binary_dataset(name)
    rng = generator(seed, unit_key(split="train_test", dataset=name), purpose="data")
    order = rng.permutation(y.size)
    n_test = int(round(test_fraction * y.size))
    test, train = order[:n_test], order[n_test:]
    if feature_scaling == "unit_ball":
        x_tr, x_te, rescaled = scale_to_unit_ball(x[train], x[test])
    else:
        x_tr, x_te, rescaled = scale_to_box(x[train], x[test])
    for a in (x_tr, x_te, y[train], y[test]):
        a.setflags(write=False)
    return x_tr, y[train].copy(), x_te, y[test].copy(), rescaled


BOX_STANDARD_DEVIATIONS = 3.0
"""``feature_scaling="box"``: standardized coordinates are clipped to this many standard deviations, then divided
by it, so every coordinate lies in [-1, 1] (the B-spline grid's interval)."""


def scale_to_box(x_train: np.ndarray, x_test: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Standardize with the training statistics, clip each coordinate to +-3 standard deviations and divide by 3.

    Returns ``(x_train, x_test, number of test entries clipped)``. Rows then satisfy ``||x||_inf <= 1`` (not the
    paper's ``||x||_2 <= 1``): the spline features of every coordinate use the whole grid on [-1, 1] instead of a
    band of width about ``2 / sqrt(d)`` around 0.
    """
    mean = x_train.mean(axis=0)
    sd = x_train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    c = BOX_STANDARD_DEVIATIONS
    train = (x_train - mean) / (sd * c)
    test = (x_test - mean) / (sd * c)
    clipped = int(np.count_nonzero(np.abs(test) > 1.0))
    shrink = 1.0 - 1e-12  # keep the coordinates strictly inside the basis interval despite rounding
    return np.clip(train, -1.0, 1.0) * shrink, np.clip(test, -1.0, 1.0) * shrink, clipped


def training_size(name: str, test_fraction: float) -> int:
    """The number of training rows of a bundled dataset after the test split of :func:`_split_dataset`."""
    return _DATASET_SIZES[name] - int(round(test_fraction * _DATASET_SIZES[name]))


def t_interval(values: Any) -> tuple[float, float, float, float]:
    """``(mean, SE, low, high)``: the two-sided 95% Student-t interval over independent replicates."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        raise ValueError(f"t_interval needs at least 2 values; got {v.size}.")
    mean = float(v.mean())
    se = float(v.std(ddof=1) / math.sqrt(v.size))
    half = float(stats.t.ppf(0.975, v.size - 1)) * se
    return mean, se, mean - half, mean + half


def reference_clipped_sgd(model: KAN, initial_params: np.ndarray, x: np.ndarray, y: np.ndarray, *, num_steps: int,
                          step_size: float, batch_size: int, clip: float,
                          sampling_rng: np.random.Generator) -> np.ndarray:
    """Non-private clipped mini-batch SGD written out example by example (Algorithm 1 with kappa = 0, R* = inf).

    Every step draws ``batch_size`` distinct indices uniformly (``Generator.choice(n, B, replace=False)``), forms
    each example's dense gradient, scales it by ``min(1, clip / ||g||)``, averages and steps. The independent
    reference of ``kan-fig1-left``'s non-private invariant (it shares only the model's gradient).
    """
    params = np.array(initial_params, dtype=np.float64)
    n = y.size
    for _ in range(num_steps):
        index = sampling_rng.choice(n, size=batch_size, replace=False)
        total = np.zeros_like(params)
        for i in index:
            g = model.single_example_gradient(params, x[i], float(y[i]))
            norm = math.sqrt(float(np.sum(g * g)))
            total += g * (min(1.0, clip / norm) if norm > 0 else 1.0)
        params -= step_size * total / batch_size
    return params


def _dpsgd(n: int, batch_size: int, num_steps: int, *, sampler: str, neighboring: str) -> DPSGDMechanism:
    """The DP-SGD record (independent noise) to calibrate: its allow-listed accountant is dp-accounting's."""
    return DPSGDMechanism(noise_multiplier=0.0, n=n, batch_size=batch_size, num_steps=num_steps, sampler=sampler,
                          neighboring=NeighboringRelation(neighboring))


@functools.lru_cache(maxsize=64)
def _dp_accounting_kappa(n: int, batch_size: int, num_steps: int, epsilon: float, delta: float) -> float:
    return float(_dpsgd(n, batch_size, num_steps, sampler="fixed_size",
                        neighboring="replace_one").calibration(epsilon, delta).value)


@functools.lru_cache(maxsize=64)
def calibrated_kappa(n: int, batch_size: int, num_steps: int, epsilon: float, delta: float, noise_correlation: float,
                     source: str) -> dict[str, Any]:
    """kan-fig1-left's calibrated kappa (:mod:`.kappas`): computed now, or the shipped entry (``source``).

    ``shipped_noise_multiplier`` is the shipped entry's kappa (None if the file has none for this setting); a
    ``"shipped"`` request for a setting the file lacks is computed instead (``source`` then says ``"computed"``).
    """
    from privdyn.experiments.kan_training import kappas

    setting: dict[str, Any] = {"n": n, "batch_size": batch_size, "num_steps": num_steps, "epsilon": epsilon,
                               "delta": delta, "noise_correlation": noise_correlation}
    stored = kappas.shipped(**setting)
    if source == "shipped" and stored is not None:
        return {**stored, "source": "shipped", "shipped_noise_multiplier": stored["noise_multiplier"]}
    entry = kappas.calibrate(**setting)
    return {**entry, "source": "computed",
            "shipped_noise_multiplier": None if stored is None else stored["noise_multiplier"]}


@functools.lru_cache(maxsize=64)
def poisson_pld_kappa(n: int, batch_size: int, num_steps: int, epsilon: float, delta: float) -> float:
    """dp-accounting's PLD calibration of the Poisson-subsampled Gaussian (add-remove, multiplier kappa, rtol 1e-4):
    the lambda = 0 reference of the calibrated panel (the Theorem F.8 pair at lambda = 0 is this mechanism)."""
    return float(_dpsgd(n, batch_size, num_steps, sampler="poisson",
                        neighboring="add_remove").calibration(epsilon, delta, rtol=POISSON_PLD_RTOL).value)


POISSON_PLD_RTOL = 1e-4


@functools.lru_cache(maxsize=16)
def logistic_regression_accuracy(name: str, test_fraction: float, seed: int) -> float:
    """Test accuracy of non-private logistic regression (scikit-learn defaults, L2 with C = 1, on features
    standardized with the training statistics) on the train/test split of :func:`_split_dataset`."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    x, y = load_binary_dataset(name)
    rng = generator(seed, unit_key(split="train_test", dataset=name), purpose="data")
    order = rng.permutation(y.size)
    n_test = int(round(test_fraction * y.size))
    test, train = order[:n_test], order[n_test:]
    scaler = StandardScaler().fit(x[train])
    model = LogisticRegression(max_iter=10_000).fit(scaler.transform(x[train]), y[train])
    return float(model.score(scaler.transform(x[test]), y[test]))


def f12_conditions(n: int, batch_size: int, num_steps: int, epsilon: float, delta: float) -> tuple[bool, str]:
    """Whether Theorem F.12's conditions hold (ε <= 1 and rT >= 3 ln(2/δ)), as privdyn's calibration checks them:
    ``(True, "")``, or ``(False, why)`` with the message of its refusal."""
    try:
        cal.noise_multiplier_theorem_f12(0.0, n=n, batch_size=batch_size, num_steps=num_steps, epsilon=epsilon,
                                         delta=delta)
    except ValueError as error:
        return False, str(error)
    return True, ""


def _fit_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of log y on log x and its standard error (nan when fewer than 3 points)."""
    lx, ly = np.log(x), np.log(y)
    if lx.size < 2:
        return math.nan, math.nan
    fit = stats.linregress(lx, ly)
    return float(fit.slope), float(fit.stderr) if lx.size > 2 else math.nan


def _fmt(values: Any) -> str:
    return "[" + ", ".join(f"{float(v):.4g}" for v in np.atleast_1d(values)) + "]"


# --------------------------------------------------------------------------------------------------------------
# kan-fig1-left
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fig1LeftConfig(ExperimentConfig):
    """Figure 1 (left) on offline data. The paper gives no setting: these are chosen.

    ``width``, ``grid_size``, ``spline_order``, ``activation``: the KAN (p = grid_size + spline_order basis
    functions on [-1, 1]); ``num_steps`` (T updates), ``batch_size`` (B), ``step_size`` (eta), ``clip``
    (per-example clipping threshold); ``test_fraction`` of each dataset is held out. ``epsilons``: panel (a) (one
    kappa for every lambda); ``calibrated_epsilons``: panel (b) (kappa(lambda) by the amplified bound, the smaller
    of the spectral bound and the conditional composition, from :mod:`.kappas`; ``kappa_source`` ``"shipped"``
    reads the shipped entries, computing only what the file lacks).

    ``feature_scaling``: ``"unit_ball"`` (the paper's ``||x||_2 <= 1``: standardized, divided by the largest
    training-row norm) or ``"box"`` (:func:`scale_to_box`: every coordinate in [-1, 1], ``||x||_2`` up to
    ``sqrt(d)``; the privacy guarantee does not depend on it, the paper's risk bounds assume the unit ball).

    The non-private settings (box scaling with the earlier ``width`` 8, ``grid_size`` 3, ``num_steps`` 150,
    ``step_size`` 100, ``clip`` 0.1) were chosen on a validation split (25% of the training rows) from a grid over
    scaling (unit ball or clipped standardized coordinates), width, grid size, steps, step size and clip;
    docs/kan.md gives the numbers.
    """

    datasets: tuple[DatasetName, ...] = ("breast_cancer", "digits_1_vs_7")
    test_fraction: float = 0.3
    width: int = 8
    grid_size: int = 3
    spline_order: int = 3
    activation: ActivationName = "sigmoid"
    num_steps: int = 150
    batch_size: int = 128
    step_size: float = 100.0
    clip: float = 0.1
    noise_correlations: tuple[float, ...] = (0.0, 0.3, 0.5, 0.7, 0.9)
    epsilons: tuple[float, ...] = (1.0, 8.0)
    calibrated_epsilons: tuple[float, ...] = (1.0,)
    delta: float = 1e-5
    num_seeds: int = 10
    kappa_source: KappaSource = "computed"
    feature_scaling: FeatureScaling = "box"

    quick_overrides = {"num_seeds": 3, "epsilons": (1.0,), "noise_correlations": (0.0, 0.5, 0.9),
                       "kappa_source": "shipped"}

    def validate(self) -> None:
        for name in ("datasets", "noise_correlations", "epsilons", "calibrated_epsilons"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name} must not repeat a value; got {list(values)}.")
        if 0.0 not in self.noise_correlations:
            raise ValueError(f"noise_correlations must contain 0 (the lambda = 0 reference); got "
                             f"{list(self.noise_correlations)}.")
        bad = [v for v in self.noise_correlations if not 0.0 <= v < 1.0]
        if bad:
            raise ValueError(f"noise_correlations must lie in [0, 1); got {bad[0]!r}.")
        for name in ("epsilons", "calibrated_epsilons"):
            bad = [v for v in getattr(self, name) if not v > 0]
            if bad:
                raise ValueError(f"{name} must be > 0; got {bad[0]!r}.")
        if self.feature_scaling not in ("unit_ball", "box"):
            raise ValueError(f"feature_scaling must be 'unit_ball' or 'box'; got {self.feature_scaling!r}.")
        if self.kappa_source not in ("computed", "shipped"):
            raise ValueError(f"kappa_source must be 'computed' or 'shipped'; got {self.kappa_source!r}.")
        _check.delta(self.delta)
        if not 0.05 <= self.test_fraction <= 0.5:
            raise ValueError(f"test_fraction must lie in [0.05, 0.5]; got {self.test_fraction!r}.")
        for name in ("width", "grid_size", "num_steps", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)!r}.")
        if self.spline_order < 3:
            raise ValueError(f"spline_order must be >= 3 (Assumption 3.2: cubic or higher); got {self.spline_order}.")
        if self.num_seeds < 2:
            raise ValueError(f"num_seeds must be >= 2 (confidence intervals over seeds); got {self.num_seeds}.")
        for name in ("step_size", "clip"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0; got {getattr(self, name)!r}.")
        for ds in self.datasets:
            n_train = _DATASET_SIZES[ds] - int(round(self.test_fraction * _DATASET_SIZES[ds]))
            if self.batch_size > n_train:
                raise ValueError(f"batch_size must not exceed the {ds} training-set size ({n_train}); got "
                                 f"{self.batch_size}.")


def _kan_params(config: Fig1LeftConfig | BoundsConfig) -> dict[str, Any]:
    return {"width": config.width, "grid_size": config.grid_size, "spline_order": config.spline_order,
            "activation": config.activation}


# --------------------------------------------------------------------------------------------------------------
# kan-bounds
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class BoundsConfig(ExperimentConfig):
    """Runs following the corollaries' n-dependence with hand-set constants (Corollaries 5.3, 5.5, 5.6).

    * Corollary 5.3 (correlated, lambda = ``noise_correlation``): ``B = round(batch_fraction n)``,
      ``T = round(num_steps_constant sqrt n)``, ``eta = step_size``, kappa from Theorem F.12 (constant 8);
    * Corollary 5.5 (independent): ``B = round(batch_size_constant sqrt n)``, ``T = round(num_steps_constant
      sqrt n)``, ``eta = step_size``, kappa from Theorem D.9 (the corollary's calibration; label ``heuristic``);
    * Corollary 5.6 (non-private): ``B = round(batch_size_constant sqrt n)``, ``eta = nonprivate_step_size_constant
      B / n``, ``T = ceil(nonprivate_num_steps_constant n^2 / B)``, kappa = 0.

    The corollaries' gamma factors are left out of the schedules (gamma* is measured, not chosen). Data: ``d``
    coordinates, x uniform in the unit ball, ``y = sign(<v, x>)`` with ``v = (1, ..., 1)/sqrt d``; ``n_test`` test
    points. Losses are evaluated at about ``num_eval_points`` evenly spaced iterates t < T (every k-th, k recorded).
    """

    corollaries: tuple[CorollaryName, ...] = ("5.3", "5.5", "5.6")
    ns: tuple[int, ...] = (100, 200, 400, 800)
    d: int = 5
    n_test: int = 2000
    width: int = 8
    grid_size: int = 3
    spline_order: int = 3
    activation: ActivationName = "sigmoid"
    clip: float = 0.2
    epsilon: float = 1.0
    delta: float = 1e-5
    noise_correlation: float = 0.5
    failure_prob: float = 0.01
    batch_fraction: float = 0.5
    batch_size_constant: float = 1.0
    num_steps_constant: float = 10.0
    step_size: float = 100.0
    nonprivate_step_size_constant: float = 1000.0
    nonprivate_num_steps_constant: float = 0.05
    num_eval_points: int = 40
    num_seeds: int = 4

    quick_overrides = {"ns": (64, 128, 256), "n_test": 500, "num_seeds": 2, "num_eval_points": 20}

    def validate(self) -> None:
        for name in ("corollaries", "ns"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name} must not repeat a value; got {list(values)}.")
        bad = [v for v in self.ns if v < 16]
        if bad:
            raise ValueError(f"ns must be >= 16; got {bad[0]!r}.")
        for name in ("d", "n_test", "width", "grid_size", "num_eval_points"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)!r}.")
        if self.spline_order < 3:
            raise ValueError(f"spline_order must be >= 3 (Assumption 3.2); got {self.spline_order}.")
        if self.num_seeds < 2:
            raise ValueError(f"num_seeds must be >= 2 (confidence intervals over seeds); got {self.num_seeds}.")
        for name in ("clip", "epsilon", "step_size", "batch_size_constant", "num_steps_constant",
                     "nonprivate_step_size_constant", "nonprivate_num_steps_constant"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0; got {getattr(self, name)!r}.")
        for name in ("delta", "failure_prob", "batch_fraction", "noise_correlation"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must lie in (0, 1); got {getattr(self, name)!r}.")
        if "5.3" in self.corollaries:
            for n in self.ns:
                b, t = self.schedule("5.3", n)[:2]
                applies, why = f12_conditions(n, b, t, self.epsilon, self.delta)
                if not applies:
                    raise ValueError(f"ns: Corollary 5.3's kappa (Theorem F.12) is undefined at n={n}: {why}; raise "
                                     "num_steps_constant or batch_fraction, or lower epsilon.")

    def schedule(self, corollary: str, n: int) -> tuple[int, int, float]:
        """``(B, T, eta)`` of the scaled-down corollary schedule at sample size n."""
        if corollary == "5.3":
            b = min(n, max(1, round(self.batch_fraction * n)))
            return b, max(1, round(self.num_steps_constant * math.sqrt(n))), self.step_size
        b = min(n, max(1, round(self.batch_size_constant * math.sqrt(n))))
        if corollary == "5.5":
            return b, max(1, round(self.num_steps_constant * math.sqrt(n))), self.step_size
        return b, max(1, math.ceil(self.nonprivate_num_steps_constant * n**2 / b)), \
            self.nonprivate_step_size_constant * b / n
