"""DPLogisticRegression: noisy gradient descent on the L2-regularized logistic loss, last iterate only.

The fit (Algorithm 1 of Chourasia, Ye, Shokri 2021, arXiv 2102.05855), in order, with nothing computed from the
private data before the mechanism runs:

1. **Checks** of every parameter and of the data (finite, >= 2 rows, >= 2 classes, no sample weights): a refusal
   happens before any noise is drawn.
2. **Preprocessing from the public bound** F (``feature_norm``): each row is projected onto the ball ‖x‖ <= F;
   with ``fit_intercept`` a constant feature a = F/√d is appended, so every row lies in the ball of radius
   R = F·√(1 + 1/d); the rows are divided by R, so the mechanism sees rows z with ‖z‖ <= 1.
3. **The loss**, per example, with λ = ``ridge``: binary, ℓ(θ; z, y) = log(1 + e^{−y θ·z}) + (λ/2)‖θ‖² (y = ±1);
   K >= 3 classes, the multinomial (softmax) cross-entropy of the logits Wz, W of shape (K, d'), plus (λ/2)‖W‖²_F.
   It is λ-strongly convex and β-smooth with β = 1/4 + λ (binary: the logistic second derivative is <= 1/4) or
   β = 1/2 + λ (multinomial: the Hessian of the log-partition, diag(p) − ppᵀ, has norm <= 1/2). The gradient of
   the unregularized part has norm <= ‖z‖ <= 1 (binary) or ‖p − e_y‖·‖z‖ <= √2 (multinomial); the regularizer's
   gradient λθ is the same for neighbouring datasets, so the total gradient sensitivity under replace-one
   neighbours is S_g = 2 (binary) or 2√2 (multinomial).
4. **The constraint set** C is the ball ‖θ‖ <= r with r = √(2 ln K / λ) (K = 2 for binary): the regularized risk
   at θ = 0 is ln K, so every minimizer lies in C; on C the loss is L-Lipschitz with L = S_g/2 + λr.
5. **Planning** (:func:`privdyn.plan.langevin`, public numbers only: n, the width, K, λ, β, L, S_g and the
   budget): the step η = 0.99/β (Corollary 1 needs η < 1/β), the number of steps K (at most ``max_iter``) and the
   noise scale σ calibrated at K by shifted interpolation to the largest Gaussian shift μ whose exact (ε, δ) curve
   meets the budget. ``ridge="auto"`` lets the planner's bound choose λ too (:func:`_choose_ridge`).
6. **Training**: θ_0 ~ Π_C(N(0, 2σ²/λ I)) (the start Corollary 1 assumes), then K steps of
   θ ← Π_C(θ − η∇𝓛(θ) + √(2η)σZ) (:func:`privdyn.algorithms.noisy_gd.noisy_gd`); only θ_K is kept. Each step
   is two matrix-vector products over the rows (the margins Zθ, then Zᵀ times the loss's derivatives), with BLAS
   pinned to one thread: a multi-threaded BLAS splits the sum over the rows among its threads, which changes the
   last bits of the gradient with the number of threads (by default the machine's core count), so the same seed
   would give other coefficients on another machine; and on a busy machine the threads wait on each other
   (docs/sklearn.md, "Speed").
7. **Release**: ``coef_`` and ``intercept_`` are θ_K in the original units (post-processing).

**Privacy.** The accountant is the tightest valid last-iterate bound for full-batch noisy GD on this loss: shifted
interpolation (Bok, Su & Altschuler 2024, arXiv 2403.00278; :func:`privdyn.privacy.langevin.shifted_interpolation_gdp`),
a μ-GDP bound that is exact on the quadratic, with Corollary 1 (:func:`privdyn.privacy.langevin.dynamics_zcdp`) and
the composition over all K steps (valid even when every iterate is released) computed beside it; the smallest ε is
used (:class:`privdyn.privacy.NoisyGDMechanism`). ``privacy_`` names the bound used, records all three, and what
last-iterate accounting saved. Mini-batches are not offered: privdyn's Ye–Shokri bound
(:mod:`privdyn.privacy.hidden_state`) covers one shuffled epoch at batch size 1 only, which this estimator does not
run.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import ThreadpoolController

from privdyn import _check
from privdyn.algorithms.noisy_gd import Loss
from privdyn.sklearn._base import _check_finite, generator_from

__all__ = ["DPLogisticRegression", "MAX_ITER", "MultinomialLoss", "RIDGE_GRID", "STEP_FRACTION", "WORK_BUDGET",
           "account", "classifier_expected_failed_checks", "default_max_iter", "project_rows"]

STEP_FRACTION = 0.99
"""η = STEP_FRACTION/β: Corollary 1 needs η < 1/β strictly, and the planner's utility bound improves with η."""

RIDGE_GRID = tuple(float(v) for v in np.geomspace(1e-4, 1.0, 17))
"""The ridges λ (in the units where rows lie in the unit ball) among which ``ridge="auto"`` chooses."""

MAX_ITER = 10_000
"""The most steps ``max_iter=None`` allows (the work budget binds first above n·p = 5·10⁴)."""

WORK_BUDGET = 5 * 10**8
"""``max_iter=None`` keeps K·n·p <= WORK_BUDGET (p parameters): the multiply-adds of one matrix-vector product per
step, about a second of a CPU core for the two products of each step. Small data get :data:`MAX_ITER` steps."""


def default_max_iter(n: int, parameters: int) -> int:
    """The step budget of ``max_iter=None``: min(MAX_ITER, WORK_BUDGET // (n·p)), at least 1 (public numbers)."""
    return max(1, min(MAX_ITER, WORK_BUDGET // (n * parameters)))


DELTA_EXPONENT = 1.1
"""``delta=None`` means δ = 1/n^1.1 for n training rows."""

MAX_FEATURES = 10_000
"""The widest feature matrix accepted (the intercept column included)."""

_SAMPLE_WEIGHTS = "sample weights are refused: a weighted row changes the sensitivity the privacy accounting assumes"
_EXPECTED_FAILED_CHECKS = {
    **{name: _SAMPLE_WEIGHTS for name in (
        "check_sample_weights_pandas_series", "check_sample_weights_not_an_array", "check_sample_weights_list",
        "check_all_zero_sample_weights_error", "check_sample_weights_shape", "check_sample_weights_not_overwritten",
        "check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data",
        "check_sample_weights_invariance", "check_classifiers_one_label_sample_weights")},
    "check_classifiers_train": (
        "a minimum training accuracy (> 0.83 on the check's data) cannot be promised by a private fit: the noise is "
        "calibrated to the privacy budget, not to the score"),
}


def classifier_expected_failed_checks(estimator: object = None) -> dict[str, str]:
    """The checks of ``sklearn.utils.estimator_checks`` that cannot apply to DPLogisticRegression, with the reason.

    Pass it as ``check_estimator(estimator, expected_failed_checks=classifier_expected_failed_checks(estimator))``.
    """
    return dict(_EXPECTED_FAILED_CHECKS)


@dataclasses.dataclass(frozen=True)
class MultinomialLoss(Loss):
    """ℓ(θ; (z, y)) = −log softmax(Wz)_y + (ridge/2)‖W‖²_F with θ = W flattened, W of shape (classes, d).

    ``data`` is a pair (Z of shape (n, d), Y one-hot of shape (n, classes)). Strongly convex with constant ``ridge``
    and (max‖z‖²/2 + ridge)-smooth: the Hessian of the log-partition in the logits is diag(p) − ppᵀ, whose norm is
    at most 1/2 (Böhning 1992 bounds it by ½(I − 11ᵀ/K)).
    """

    classes: int
    ridge: float = 0.0

    def dimension(self, data: tuple[np.ndarray, np.ndarray]) -> int:
        return self.classes * int(data[0].shape[1])

    def _residuals(self, theta: np.ndarray, data: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """softmax(Wz) − e_y for every run and row, shape (runs, n, classes).

        In place on the one array of logits, the operations of ``scipy.special.softmax`` (shift by the maximum,
        exponentiate, divide by the sum), so the result is the same bit for bit.
        """
        features, onehot = data
        weights = theta.reshape(theta.shape[0], self.classes, features.shape[1])
        residuals = np.matmul(features[None, :, :], weights.transpose(0, 2, 1))  # the logits, (runs, n, classes)
        residuals -= np.max(residuals, axis=2, keepdims=True)
        np.exp(residuals, out=residuals)
        residuals /= np.sum(residuals, axis=2, keepdims=True)
        residuals -= onehot[None, :, :]
        return residuals

    def per_example_gradients(self, theta: np.ndarray, data: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        features = data[0]
        residuals = self._residuals(theta, data)
        outer = residuals[:, :, :, None] * features[None, :, None, :]  # (runs, n, classes, d)
        return outer.reshape(theta.shape[0], features.shape[0], -1) + self.ridge * theta[:, None, :]

    def mean_gradient(self, theta: np.ndarray, data: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        features = data[0]
        gradient = np.matmul(self._residuals(theta, data).transpose(0, 2, 1), features[None, :, :])
        gradient /= features.shape[0]
        return gradient.reshape(theta.shape[0], -1) + self.ridge * theta

    def value(self, theta: np.ndarray, data: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        features, onehot = data
        weights = theta.reshape(theta.shape[0], self.classes, features.shape[1])
        logits = np.matmul(features[None, :, :], weights.transpose(0, 2, 1))
        nll = special.logsumexp(logits, axis=2) - np.sum(logits * onehot[None], axis=2)
        return np.asarray(np.mean(nll, axis=1) + 0.5 * self.ridge * np.sum(theta**2, axis=1))


@dataclasses.dataclass(frozen=True)
class _Constants:
    """The loss's public constants in the normalized units (rows in the unit ball)."""

    classes: int
    ridge: float

    @property
    def binary(self) -> bool:
        return self.classes == 2

    @property
    def smoothness(self) -> float:
        return (0.25 if self.binary else 0.5) + self.ridge

    @property
    def sensitivity(self) -> float:
        return 2.0 if self.binary else 2.0 * math.sqrt(2.0)

    @property
    def radius(self) -> float:
        return math.sqrt(2.0 * math.log(self.classes) / self.ridge)

    @property
    def lipschitz(self) -> float:
        return self.sensitivity / 2.0 + self.ridge * self.radius

    @property
    def step_size(self) -> float:
        return STEP_FRACTION / self.smoothness

    def parameters(self, width: int) -> int:
        return width if self.binary else self.classes * width


def _langevin_plan(n: int, width: int, constants: _Constants, max_iter: int, **budget: float) -> Any:
    from privdyn.plan import langevin

    return langevin(n=n, d=constants.parameters(width), strong_convexity=constants.ridge,
                    smoothness=constants.smoothness, lipschitz=constants.lipschitz,
                    sensitivity=constants.sensitivity, step_size=constants.step_size, max_steps=max_iter,
                    accountant_name="shifted_interpolation", **budget)


def _choose_ridge(n: int, width: int, classes: int, zcdp: float, coef_norm: float, max_iter: int) -> float:
    """λ in :data:`RIDGE_GRID` minimizing the planner's bound + λ·B²/2 (B = ``coef_norm``).

    For any comparator θ_c with ‖θ_c‖ <= B, the unregularized risk satisfies 𝓛_0(θ) − 𝓛_0(θ_c) <=
    [𝓛_λ(θ) − min 𝓛_λ] + λB²/2, so the sum bounds the excess risk over the best model of norm <= B. Public numbers
    only (n, width, K, the budget, B and ``max_iter``). The budget is given as the zCDP μ²/2 of the Gaussian shift μ
    that the planner calibrates to for (ε, δ) (:func:`privdyn.plan.langevin` with shifted interpolation), so that
    the (ε, δ) → μ inversion runs once, not once per ridge.
    """
    def objective(ridge: float) -> float:
        plan = _langevin_plan(n, width, _Constants(classes, ridge), max_iter, zcdp=zcdp)
        return float(plan.predicted_risk) + 0.5 * ridge * coef_norm**2

    return min(RIDGE_GRID, key=objective)


@functools.lru_cache(maxsize=32)
def _plan(n: int, width: int, classes: int, epsilon: float, delta: float, ridge: float | None, coef_norm: float,
          max_iter: int) -> dict[str, Any]:
    """The planned hyper-parameters and statement (a pure function of public numbers, hence cached)."""
    if ridge is None:  # the planner's calibration target for (ε, δ): the largest Gaussian shift μ, as zCDP μ²/2
        from privdyn.privacy.correlated_allocation import gaussian_mu

        zcdp = 0.5 * gaussian_mu(float(epsilon), float(delta)) ** 2
        ridge = _choose_ridge(n, width, classes, zcdp, coef_norm, max_iter)
    constants = _Constants(classes, ridge)
    plan = _langevin_plan(n, width, constants, max_iter, epsilon=epsilon, delta=delta)
    hyper = plan.hyperparameters
    return {"constants": constants, "step_size": float(hyper["step_size"]), "num_steps": int(hyper["num_steps"]),
            "noise_scale": float(hyper["noise_scale"]), "predicted_risk": float(plan.predicted_risk),
            "quantity": plan.quantity, "statement": plan.privacy.to_json(), "notes": list(plan.notes)}


@functools.lru_cache(maxsize=64)
def account(*, n: int, num_steps: int, step_size: float, noise_scale: float, strong_convexity: float,
            smoothness: float, sensitivity: float, delta: float) -> dict[str, Any]:
    """The tightest valid bound for full-batch noisy GD's last iterate, with every bound's (ε, δ) beside it.

    The mechanism record :class:`privdyn.privacy.NoisyGDMechanism` is the accountant: shifted interpolation
    (μ-GDP), Corollary 1 (zCDP) and composition over the K steps (exactly Gaussian), the smallest ε used. A pure
    function of public numbers, cached; the caller must not modify the returned dict.
    """
    from privdyn.privacy.mechanism import NoisyGDMechanism

    mechanism = NoisyGDMechanism(n=n, num_steps=num_steps, step_size=step_size, noise_scale=noise_scale,
                                 strong_convexity=strong_convexity, smoothness=smoothness, sensitivity=sensitivity)
    bounds, epsilons, used = mechanism.bounds(), mechanism.epsilons(delta), mechanism.used(delta)
    return {"zcdp": bounds[used], "epsilon": epsilons[used], "bound": used, "source": mechanism.SOURCES[used],
            "last_iterate_epsilon": min(epsilons["shifted_interpolation"], epsilons["corollary_1"]),
            "shifted_interpolation_epsilon": epsilons["shifted_interpolation"],
            "corollary_1_epsilon": epsilons["corollary_1"], "corollary_1_zcdp": bounds["corollary_1"],
            "composition_zcdp": bounds["composition"], "composition_epsilon": epsilons["composition"]}


@functools.cache
def _blas_pools() -> ThreadpoolController:
    """The process's BLAS thread pools (NumPy's among them), found once: ``threadpool_limits`` searches the loaded
    libraries again on every call (about 2.5 ms, more than a whole fit on a few hundred rows)."""
    return ThreadpoolController()


def project_rows(features: np.ndarray, feature_norm: float, fit_intercept: bool) -> tuple[np.ndarray, float, float]:
    """The rows :class:`DPLogisticRegression`'s mechanism sees: each row projected onto ‖x‖ <= F
    (``feature_norm``), with ``fit_intercept`` the constant column a = F/√d appended, all divided by
    R = √(F² + a²), so every row lies in the unit ball (module docstring, step 2). Public bounds only.

    Returns:
        ``(rows, a, R)``: rows of shape (n, d + fit_intercept), the intercept feature a (0 without an intercept)
        and the radius R.
    """
    n, d = features.shape
    norms = np.sqrt(np.einsum("ij,ij->i", features, features))
    factors = np.minimum(1.0, feature_norm / np.where(norms > 0, norms, 1.0))
    intercept_feature = feature_norm / math.sqrt(d) if fit_intercept else 0.0
    radius = math.hypot(feature_norm, intercept_feature)
    rows = np.empty((n, d + int(fit_intercept)))
    np.multiply(features, (factors / radius)[:, None], out=rows[:, :d])
    if fit_intercept:
        rows[:, d] = intercept_feature / radius
    return rows, intercept_feature, radius


class DPLogisticRegression(ClassifierMixin, BaseEstimator):
    """Differentially private logistic regression by full-batch noisy gradient descent, last iterate released.

    Binary (logistic loss) or multi-class (multinomial softmax loss), L2-regularized, trained by Algorithm 1 of
    Chourasia, Ye, Shokri 2021 (arXiv 2102.05855) with the step, number of steps and noise planned by
    :func:`privdyn.plan.langevin` from public numbers only, accounted by the tightest of shifted interpolation
    (μ-GDP of the last iterate, arXiv 2403.00278), Corollary 1 (last iterate) and composition over all steps. See
    the module docstring for every step of ``fit``.

    Args:
        epsilon: ε > 0 of the (ε, δ)-DP guarantee of the fit.
        delta: δ in (0, 1); None means 1/n^1.1 for the n training rows (recorded in ``privacy_``).
        feature_norm: F > 0, a public bound on ‖x‖: every row is projected onto the ball ‖x‖ <= F. Required.
        fit_intercept: learn an intercept, as the coefficient of a constant feature F/√d inside the ball.
        ridge: λ > 0, the L2 regularization in the units where the rows (intercept column included) lie in the
            unit ball (the loss is λ-strongly convex), or ``"auto"``: the planner's choice among
            :data:`RIDGE_GRID` (:func:`_choose_ridge`).
        coef_norm: B > 0, a public guess of the norm of a good model in those units (the largest absolute logit
            it reaches on a row at the bound); only ``ridge="auto"`` reads it.
        max_iter: the most steps of noisy GD the planner may choose (an integer in [1, 10^6]), or None: the
            largest K <= 10^4 with K·n·p <= 5·10^8 multiply-adds (p parameters; ``default_max_iter``, from public
            numbers only): 10^4 steps on small data, about 100 at n = 10^5, d = 50. Each step is a full pass over
            the rows; the planner picks the ridge for this budget of steps, so a larger ``max_iter`` buys a smaller
            ridge at a proportional cost in time.
        classes: the public list of class labels, or None: the labels found in y, whose set is then treated as
            public (one row can add or remove a label that occurs once; ``privacy_["assumptions"]`` says so).
        random_state: None (fresh OS entropy, the default for a release), an int (reproducible) or a Generator.

    Attributes:
        classes_: the class labels, sorted.
        coef_: the private coefficients, shape (1, d) for two classes, (K, d) for K >= 3 (as in scikit-learn).
        intercept_: shape (1,) or (K,).
        n_iter_: the number of noisy GD steps run, shape (1,).
        n_features_in_, feature_names_in_: as in scikit-learn.
        privacy_: the :class:`~privdyn.privacy.PrivacyStatement` of the fit's
            :class:`~privdyn.privacy.mechanism.NoisyGDMechanism` record, read as an object or as a mapping:
            ``epsilon``, ``delta``, ``zcdp``, ``bound`` (``shifted_interpolation``, ``corollary_1`` or
            ``composition``, whichever gives the smallest ε), ``gdp_mu`` (shifted interpolation's μ),
            ``guarantee`` (``bound``), ``neighboring`` (``replace_one``), ``sampler`` (``full_batch``), ``released``
            (the last iterate only), ``shifted_interpolation_epsilon``, ``corollary_1_epsilon`` and
            ``composition_epsilon`` (each bound at the run's noise), ``last_iterate_epsilon`` (the smaller of the
            first two), ``saved`` (its ratio to composition's), ``assumptions`` (what the fit enforced),
            ``requested_epsilon``, the plan's statement (``plan``) and ``membership`` (the best membership test's
            true-positive rate at false-positive rates 0.001, 0.01 and 0.1 that the bound allows).
        training_: what training ran with: ``ridge``, ``smoothness``, ``sensitivity``, ``radius``, ``step_size``,
            ``num_steps``, ``noise_scale``, ``n``, ``row_scale`` (1/R) and the planner's ``predicted_risk``.

    Raises (in ``fit``, before any noise is drawn):
        ValueError: epsilon <= 0; delta outside (0, 1); feature_norm missing or <= 0; ridge <= 0 or not "auto";
            coef_norm <= 0; max_iter < 1; NaN or infinite features; fewer than 2 rows or 2 classes; sample weights.
    """

    def __init__(self, epsilon: float = 1.0, delta: float | None = None, *, feature_norm: float | None = None,
                 fit_intercept: bool = True, ridge: float | str = "auto", coef_norm: float = 10.0,
                 max_iter: int | None = None, classes: ArrayLike | None = None,
                 random_state: int | np.random.Generator | np.random.RandomState | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.feature_norm = feature_norm
        self.fit_intercept = fit_intercept
        self.ridge = ridge
        self.coef_norm = coef_norm
        self.max_iter = max_iter
        self.classes = classes
        self.random_state = random_state

    def _check_parameters(self) -> tuple[float, float, float | None]:
        _check.scalar(epsilon=self.epsilon)
        _check.positive(epsilon=self.epsilon)
        if self.delta is not None:
            _check.delta(self.delta)
        if self.feature_norm is None:
            raise ValueError("feature_norm is required: a public bound on the norm ||x|| of a row, a number > 0 "
                             "chosen without looking at the private data; got feature_norm=None. Rows are projected "
                             "onto the ball ||x|| <= feature_norm.")
        _check.scalar(feature_norm=self.feature_norm)
        _check.positive(feature_norm=self.feature_norm)
        if not isinstance(self.fit_intercept, bool | np.bool_):
            raise TypeError(f"fit_intercept must be a bool; got fit_intercept={self.fit_intercept!r}.")
        ridge: float | None = None
        if isinstance(self.ridge, str):
            if self.ridge != "auto":
                raise ValueError(f"ridge must be a number > 0 or 'auto'; got ridge={self.ridge!r}.")
        else:
            _check.scalar(ridge=self.ridge)
            _check.positive(ridge=self.ridge)  # λ <= 0: no strong convexity, no last-iterate bound
            ridge = float(self.ridge)
        _check.scalar(coef_norm=self.coef_norm)
        _check.positive(coef_norm=self.coef_norm)
        if self.max_iter is not None:
            _check.integer(minimum=1, max_iter=self.max_iter)
            _check.at_most(1_000_000, max_iter=self.max_iter)  # the planner evaluates every K up to it
        return float(self.epsilon), float(self.feature_norm), ridge

    def _check_data(self, X: Any, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray]:
        if sample_weight is not None:
            raise ValueError("sample_weight must be None: DPLogisticRegression refuses sample weights (a weighted "
                             "row would change the gradient sensitivity the privacy accounting assumes); got "
                             f"sample_weight of type {type(sample_weight).__name__}.")
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=1)
        _check_finite("X", X)
        check_classification_targets(y)
        n, d = X.shape
        if n < 2:
            raise ValueError(f"X must have n_samples >= 2 rows; got n_samples = {n} (1 sample).")
        if d + int(bool(self.fit_intercept)) > MAX_FEATURES:
            raise ValueError(f"X must have at most {MAX_FEATURES - int(bool(self.fit_intercept))} features; got {d}.")
        if self.classes is None:
            self.classes_ = np.unique(y)
            if self.classes_.size < 2:
                raise ValueError(f"y must hold at least 2 classes; got 1 class: {self.classes_[0]!r}.")
        else:
            given = np.asarray(self.classes).ravel()
            self.classes_ = np.unique(given)
            if self.classes_.size < 2 or self.classes_.size != given.size:
                raise ValueError(f"classes must list at least 2 distinct labels; got classes={self.classes!r}.")
            unknown = np.setdiff1d(np.unique(y), self.classes_)
            if unknown.size:
                raise ValueError(f"y must take values in classes = {list(self.classes_)!r}; got {unknown[0]!r}.")
        return X, y

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> DPLogisticRegression:
        """Fit privately (full-batch noisy GD, last iterate); returns self. ``sample_weight`` must be None."""
        from privdyn.algorithms.noisy_gd import L2Ball, LogisticLoss, noisy_gd
        from privdyn.privacy.mechanism import NoisyGDMechanism

        epsilon, feature_norm, ridge = self._check_parameters()
        X, y = self._check_data(X, y, sample_weight)
        rng = generator_from(self.random_state)
        n, d = X.shape
        delta = float(n) ** -DELTA_EXPONENT if self.delta is None else float(self.delta)
        classes = int(self.classes_.size)
        rows, intercept_feature, radius = project_rows(X, feature_norm, bool(self.fit_intercept))
        width = rows.shape[1]
        max_iter = (default_max_iter(n, width if classes == 2 else classes * width) if self.max_iter is None
                    else int(self.max_iter))
        planned = _plan(n, width, classes, epsilon, delta, ridge, float(self.coef_norm), max_iter)
        c: _Constants = planned["constants"]
        labels = np.searchsorted(self.classes_, y)
        if c.binary:
            loss: Loss = LogisticLoss(ridge=c.ridge)
            data: tuple[np.ndarray, np.ndarray] = (rows, 2.0 * labels - 1.0)
        else:
            loss = MultinomialLoss(classes=classes, ridge=c.ridge)
            data = (rows, np.eye(classes)[labels])
        with _blas_pools().limit(limits=1, user_api="blas"):  # module docstring, step 6: reproducible and fast
            theta = noisy_gd(loss, data, num_steps=planned["num_steps"], step_size=planned["step_size"],
                             noise_scale=planned["noise_scale"], rng=rng, projection=L2Ball(c.radius),
                             strong_convexity=c.ridge)[0]
        weights = theta.reshape(1 if c.binary else classes, width) / radius
        self.coef_ = np.array(weights[:, :d])
        self.intercept_ = weights[:, d] * intercept_feature if self.fit_intercept else np.zeros(weights.shape[0])
        self.n_iter_ = np.array([planned["num_steps"]], dtype=np.int32)

        mechanism = NoisyGDMechanism(n=n, num_steps=planned["num_steps"], step_size=planned["step_size"],
                                     noise_scale=planned["noise_scale"], strong_convexity=c.ridge,
                                     smoothness=c.smoothness, sensitivity=c.sensitivity)
        accounted = account(n=n, num_steps=planned["num_steps"], step_size=planned["step_size"],
                            noise_scale=planned["noise_scale"], strong_convexity=c.ridge, smoothness=c.smoothness,
                            sensitivity=c.sensitivity, delta=delta)
        self.training_ = {"ridge": c.ridge, "smoothness": c.smoothness, "sensitivity": c.sensitivity,
                          "radius": c.radius, "lipschitz": c.lipschitz, "step_size": planned["step_size"],
                          "num_steps": planned["num_steps"], "noise_scale": planned["noise_scale"], "n": n,
                          "max_iter": max_iter,
                          "width": width, "row_scale": 1.0 / radius, "predicted_risk": planned["predicted_risk"],
                          "predicted_risk_quantity": planned["quantity"]}
        loss_name = "logistic" if c.binary else "multinomial (softmax) cross-entropy"
        statement = mechanism.statement(delta)
        self.privacy_ = dataclasses.replace(
            statement, accountant=accounted["source"], unit="one row (x, y) of the training set",
            released=f"coef_ and intercept_: the last iterate theta_K only, K = {planned['num_steps']}",
            assumptions=(
                f"the per-example {loss_name} loss plus (lambda/2)||theta||^2, lambda = {c.ridge:.6g} > 0: "
                f"lambda-strongly convex, beta-smooth with beta = {c.smoothness:.6g} (rows in the unit ball)",
                f"rows projected onto ||x|| <= {feature_norm:g} (public) and divided by R = {radius:.6g}: total "
                f"gradient sensitivity S_g = {c.sensitivity:.6g} under replace-one neighbours",
                f"step_size = {planned['step_size']:.6g} < 1/beta = {1.0 / c.smoothness:.6g}",
                f"projection onto the ball ||theta|| <= {c.radius:.6g} after every step; start "
                "Pi_C(N(0, 2 sigma^2/lambda I)), independent of the data",
                "full-batch gradients; only the last iterate is released; hyper-parameters from public numbers",
                "the set of class labels is public: " + ("given as classes" if self.classes is not None else
                                                          "taken from y (pass classes= to fix it in advance)")),
            extra={**statement.extra, "requested_epsilon": epsilon,
                   "delta_rule": f"1/n^{DELTA_EXPONENT} with n = {n} (delta=None)" if self.delta is None else "given",
                   "last_iterate_epsilon": accounted["last_iterate_epsilon"],
                   "shifted_interpolation_epsilon": accounted["shifted_interpolation_epsilon"],
                   "corollary_1_epsilon": accounted["corollary_1_epsilon"],
                   "composition_epsilon": accounted["composition_epsilon"],
                   "saved": accounted["last_iterate_epsilon"] / accounted["composition_epsilon"],
                   "plan": copy.deepcopy(planned["statement"])})
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """The logits ``X @ coef_.T + intercept_`` (shape (n,) binary, (n, K) otherwise); no privacy is spent."""
        check_is_fitted(self, ("coef_", "intercept_"))
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores: np.ndarray = X @ self.coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities (sigmoid or softmax of the logits), columns in the order of ``classes_``."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = special.expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return np.asarray(special.softmax(scores, axis=1))

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """The logarithm of :meth:`predict_proba`."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([special.log_expit(-scores), special.log_expit(scores)])
        return np.asarray(special.log_softmax(scores, axis=1))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The most probable class of each row."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return np.asarray(self.classes_[index])

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = getattr(self, "random_state", None) is None
        return tags
