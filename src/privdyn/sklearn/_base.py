"""What the private regressors share: parameter and data checks, the public-bound preprocessing, the privacy record.

**Preprocessing from public bounds only.** Each row x is projected onto the ball ‖x‖ <= F (``feature_norm``) and
each label clipped to [−B, B] (``label_bound``); nothing is computed from the data (no centring, no scaling). With
``fit_intercept`` the intercept is a constant feature of value a = F/√d appended to every projected row, so the
rows the mechanism sees lie in the ball of radius R = √(F² + a²) = F·√(1 + 1/d), a public number: the intercept is
inside the ball and its coefficient is private like the others.

**Neighbouring relation.** Both estimators are accounted for replace-one neighbours (datasets of the same size n
that differ in one row (x, y)), the relation of the amplification-by-iteration bound of one-pass DP-GD. The size n
is treated as public; it also sets the default δ = 1/n^1.1.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from privdyn import _check

__all__ = ["PrivateLinearModel", "expected_failed_checks", "MAX_FEATURES", "Preprocessed", "generator_from"]

MAX_FEATURES = 10_000
"""The widest feature matrix (intercept column included) the estimators accept. AdaSSP releases the d(d+1)/2
entries of XᵀX and solves a d × d system; DP-GD draws n·d Gaussian noise values and plans on a d-dimensional model.
Beyond 10⁴ columns both exceed the memory and time an in-memory scikit-learn fit can afford."""

DELTA_EXPONENT = 1.1
"""``delta=None`` means δ = 1/n^1.1 for n training rows (δ well below 1/n, the usual requirement)."""

_EXPECTED_FAILED_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": (
        "sample weights are refused: a weighted row changes the sensitivity the privacy accounting assumes"),
    "check_sample_weight_equivalence_on_sparse_data": (
        "sample weights are refused: a weighted row changes the sensitivity the privacy accounting assumes"),
    "check_sample_weights_not_an_array": "sample weights are refused (see check_sample_weight_equivalence)",
    "check_sample_weights_list": "sample weights are refused (see check_sample_weight_equivalence)",
    "check_sample_weights_shape": "sample weights are refused (see check_sample_weight_equivalence)",
    "check_sample_weights_not_overwritten": "sample weights are refused (see check_sample_weight_equivalence)",
    "check_sample_weights_invariance": "sample weights are refused (see check_sample_weight_equivalence)",
    "check_sample_weights_pandas_series": "sample weights are refused (see check_sample_weight_equivalence)",
    "check_all_zero_sample_weights_error": "sample weights are refused (see check_sample_weight_equivalence)",
    "check_regressors_train": (
        "a minimum training score (R^2 > 0.5 on data far outside the public bounds of the check) cannot be "
        "promised by a private fit: the noise is calibrated to the privacy budget, not to the score"),
}


def expected_failed_checks(estimator: object = None) -> dict[str, str]:
    """The checks of ``sklearn.utils.estimator_checks`` that cannot apply to a private regressor, with the reason.

    Pass it as ``check_estimator(estimator, expected_failed_checks=expected_failed_checks(estimator))``.
    """
    return dict(_EXPECTED_FAILED_CHECKS)


def generator_from(random_state: Any) -> np.random.Generator:
    """The privacy noise's generator: fresh OS entropy for None, a seeded generator for an int (reproducible).

    A ``numpy.random.Generator`` is used as given; a legacy ``RandomState`` seeds a new generator from one draw.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(0, 2**31 - 1)))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and int(random_state) >= 0:
        return np.random.default_rng(int(random_state))
    raise TypeError(f"random_state must be None, an integer >= 0, a numpy.random.Generator or a RandomState; got "
                    f"random_state={random_state!r}.")


def _check_finite(name: str, values: np.ndarray) -> None:
    """ValueError naming the first NaN or infinite entry (scikit-learn's checks look for 'NaN' or 'inf')."""
    if np.isfinite(values).all():  # the common case, without building an index array of the bad entries
        return
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        where = f"{name}[{', '.join(str(i) for i in bad[0])}]"
        raise ValueError(f"{name} must be finite (no NaN or inf); got {where}={float(values[tuple(bad[0])])!r}.")


class Preprocessed:
    """Rows projected onto the public ball, labels clipped, the intercept column appended.

    Attributes:
        features: (n, d') the rows the mechanism sees (d' = d + 1 with an intercept), each of norm <= ``radius``.
        labels: (n,) the clipped labels, in [−B, B].
        radius: R, the public bound on every row's norm (F, or F·√(1 + 1/d) with the intercept column).
        intercept_feature: a = F/√d, the constant of the intercept column (0 without an intercept).
    """

    def __init__(self, features: np.ndarray, labels: np.ndarray, *, feature_norm: float, label_bound: float,
                 fit_intercept: bool) -> None:
        n, d = features.shape
        norms = np.sqrt(np.einsum("ij,ij->i", features, features))
        factors = np.minimum(1.0, feature_norm / np.where(norms > 0, norms, 1.0))
        self.intercept_feature = feature_norm / math.sqrt(d) if fit_intercept else 0.0
        x = np.empty((n, d + int(fit_intercept)))  # the projected rows written once, the intercept column beside
        np.multiply(features, factors[:, None], out=x[:, :d])
        if fit_intercept:
            x[:, d] = self.intercept_feature
        self.features = x
        self.labels = np.clip(labels, -label_bound, label_bound)
        self.radius = math.hypot(feature_norm, self.intercept_feature)
        self.feature_norm, self.label_bound = feature_norm, label_bound

    def share(self) -> dict[str, str | float]:
        """The preprocessing's entry in a ``privacy_["shares"]`` list: public bounds, no privacy spent."""
        return {"use": f"preprocessing: rows projected onto ||x|| <= {self.feature_norm:g}, labels clipped to "
                       f"[-{self.label_bound:g}, {self.label_bound:g}], intercept as the constant feature "
                       f"{self.intercept_feature:g} (public bounds, nothing computed from the data)",
                "zcdp": 0.0, "fraction": 0.0}


class PrivateLinearModel(RegressorMixin, BaseEstimator):
    """The shared parts of the private regressors: checks, preprocessing, ``predict``.

    Subclasses define ``__init__`` (the parameters ``epsilon``, ``delta``, ``feature_norm``, ``label_bound``,
    ``fit_intercept``, ``random_state`` at least) and ``fit``.
    """

    epsilon: float
    delta: float | None
    feature_norm: float | None
    label_bound: float | None
    fit_intercept: bool
    coef_: np.ndarray
    intercept_: float

    def _check_parameters(self) -> tuple[float, float, float]:
        """``(epsilon, feature_norm, label_bound)`` checked; delta too (when given). Nothing reads the data."""
        _check.scalar(epsilon=self.epsilon)
        _check.positive(epsilon=self.epsilon)
        if self.delta is not None:
            _check.delta(self.delta)
        for name in ("feature_norm", "label_bound"):
            value = getattr(self, name)
            if value is None:
                what = "on the norm ||x|| of a row" if name == "feature_norm" else "on |y|"
                raise ValueError(
                    f"{name} is required: a public bound {what}, a number > 0 chosen without looking at the private "
                    f"data; got {name}=None. Rows are projected onto the ball ||x|| <= feature_norm and labels "
                    "clipped to [-label_bound, label_bound].")
            _check.scalar(**{name: value})
            _check.positive(**{name: value})
        if not isinstance(self.fit_intercept, bool | np.bool_):
            raise TypeError(f"fit_intercept must be a bool; got fit_intercept={self.fit_intercept!r}.")
        return float(self.epsilon), float(self.feature_norm), float(self.label_bound)  # type: ignore[arg-type]

    def _check_data(self, X: Any, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray]:
        """The training data as float arrays, checked (finite, >= 2 rows, not too wide); sets n_features_in_."""
        if sample_weight is not None:
            raise ValueError("sample_weight must be None: privdyn's private regressors refuse sample weights (a "
                             "weighted row would change the sensitivity the privacy accounting assumes); got "
                             f"sample_weight of type {type(sample_weight).__name__}.")
        if np.issubdtype(getattr(y, "dtype", np.float64), np.complexfloating):
            raise ValueError("Complex data not supported: y must be real numbers; got complex values (their imaginary "
                             "part would be discarded).")
        try:
            labels = np.asarray(y, dtype=float)
        except (TypeError, ValueError):  # not numbers (or None): scikit-learn's own message below
            labels = np.zeros(0)
        _check_finite("y", labels)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_all_finite=False,
                             ensure_min_samples=1)
        _check_finite("X", X)
        n, d = X.shape
        if n < 2:
            raise ValueError(f"X must have n_samples >= 2 rows; got n_samples = {n} (1 sample): a private fit on a "
                             "single sample releases nothing useful and the default delta = 1/n^1.1 would be 1.")
        width = d + int(bool(self.fit_intercept))
        if width > MAX_FEATURES:
            raise ValueError(f"X must have at most {MAX_FEATURES - int(bool(self.fit_intercept))} features (the "
                             f"accountant serves at most {MAX_FEATURES} columns, the intercept column included); got "
                             f"X with {d} features.")
        return X, y

    def _delta(self, n: int) -> tuple[float, str]:
        """δ and how it was chosen."""
        if self.delta is None:
            return float(n) ** -DELTA_EXPONENT, f"1/n^{DELTA_EXPONENT} with n = {n} (delta=None)"
        return float(self.delta), "given"

    def _set_coefficients(self, theta: np.ndarray, prep: Preprocessed, scale: float) -> None:
        """coef_ and intercept_ in the original units from θ fitted on ``scale``·(preprocessed rows)."""
        d = self.n_features_in_
        self.coef_ = np.asarray(scale * theta[:d], dtype=float)
        self.intercept_ = float(scale * prep.intercept_feature * theta[d]) if self.fit_intercept else 0.0

    def predict(self, X: Any) -> np.ndarray:
        """x·coef_ + intercept_ for each row (the released model; no privacy is spent)."""
        check_is_fitted(self, ("coef_", "intercept_"))
        X = validate_data(self, X, dtype=np.float64, reset=False)
        result: np.ndarray = X @ self.coef_ + self.intercept_
        return result

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = getattr(self, "random_state", None) is None
        return tags
