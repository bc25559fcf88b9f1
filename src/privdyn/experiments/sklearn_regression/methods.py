"""The methods compared by ``sklearn-regression``, each configured as its users would, on the same clipped data.

Features are clipped to the box [−b, b] per coordinate and labels to [−B, B]. diffprivlib's ``LinearRegression``
takes the box (``bounds_X=(−b, b)``, ``bounds_y=(−B, B)``), so it spends no privacy on bounds; privdyn's estimators
take the norm bound the box implies, ``feature_norm = b√d``, and ``label_bound = B``. diffprivlib is pure ε-DP; the
others are (ε, δ)-DP with δ = 1/n^1.1: they are compared at the same ε, which favours them by δ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["METHODS", "diffprivlib_linear_regression", "fit_predict"]

METHODS = ("DPLinearRegression", "DPLinearRegression+share", "AdaSSPRegression", "diffprivlib")
"""The private methods; ``+share`` is DPLinearRegression with the config's planning share (dropped when it has none);
the plain one is the default fit (``planning_share="auto"``)."""


def diffprivlib_linear_regression() -> Any:
    """diffprivlib's ``LinearRegression`` class.

    diffprivlib 0.6.6 (its latest release) imports ``DOUBLE`` and ``DTYPE`` from ``sklearn.tree._tree`` in its
    random-forest module, names scikit-learn no longer defines; its package import then fails although
    ``LinearRegression`` uses neither. The two names are defined with their former values (float64 and float32)
    before the import, as a user on a current scikit-learn has to.
    """
    import sklearn.tree._tree as tree

    for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(tree, name):
            setattr(tree, name, value)
    from diffprivlib.models import LinearRegression

    return LinearRegression


def public_stats_run(*, epsilon: float, box: float, label_box: float, x_train: np.ndarray, y_train: np.ndarray,
                     x_test: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
    """Plan DP-GD with the training rows' statistics declared public (``privdyn plan dpgd --data --public-stats``),
    run the plan once on them (in a random order) and predict the test rows; also the plan's prediction.

    The rows are preprocessed as :class:`~privdyn.sklearn.DPLinearRegression` does (projection onto the norm bound,
    the intercept column, scaled to the ball of radius √d′; labels divided by B), so the plan is the default
    estimator's with public statistics in place of the planning share.
    """
    import warnings

    from privdyn.algorithms.dpgd import dpgd as run
    from privdyn.plan import dpgd as plan_dpgd
    from privdyn.sklearn import Preprocessed

    d = x_train.shape[1]
    norm = box * math.sqrt(d)
    train = Preprocessed(x_train, y_train, feature_norm=norm, label_bound=label_box, fit_intercept=True)
    test = Preprocessed(x_test, np.zeros(len(x_test)), feature_norm=norm, label_bound=label_box, fit_intercept=True)
    width = train.features.shape[1]
    scale = math.sqrt(width) / train.radius
    n = len(y_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = plan_dpgd(data=(train.features * scale, train.labels / label_box), public_stats=True,
                         intercept_column=True, epsilon=epsilon, delta=float(n) ** -1.1)
        z = train.features * (scale * plan.model.feature_scale)
        order = rng.permutation(n)
        theta = run(z[order], train.labels[order] / label_box, clip=plan.clip, learning_rate=plan.learning_rate,
                    rho=plan.rho, rng=rng)
    predictions = (test.features * (scale * plan.model.feature_scale)) @ theta * label_box
    p = plan.prediction
    return predictions, {"epsilon": plan.privacy.epsilon, "delta": plan.privacy.delta,
                         "predicted_excess_mse": label_box**2 * p["excess_mse"], "label": p["label"],
                         "reasons": list(p["reasons"])}


def fit_predict(method: str, *, epsilon: float, box: float, label_box: float, planning_share: float | None,
                x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
                rng: np.random.Generator) -> tuple[np.ndarray, dict[str, Any]]:
    """Fit ``method`` privately on the training rows and predict the test rows; also what the fit recorded."""
    import warnings

    d = x_train.shape[1]
    if method == "diffprivlib":
        model = diffprivlib_linear_regression()(epsilon=epsilon, bounds_X=(-box, box), bounds_y=(-label_box, label_box),
                                                random_state=int(rng.integers(2**31 - 1)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(x_train, y_train)
        return model.predict(x_test), {"epsilon": epsilon, "delta": 0.0}
    from privdyn.sklearn import AdaSSPRegression, DPLinearRegression

    common: dict[str, Any] = {"epsilon": epsilon, "feature_norm": box * math.sqrt(d), "label_bound": label_box,
                              "random_state": rng}
    if method == "AdaSSPRegression":
        estimator: Any = AdaSSPRegression(**common)
    elif method == "DPLinearRegression":
        estimator = DPLinearRegression(**common)
    elif method == "DPLinearRegression+share":
        estimator = DPLinearRegression(**common, planning_share=planning_share)
    elif method == "DPLinearRegression-public":
        estimator = DPLinearRegression(**common, planning_share=None)
    else:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got method={method!r}.")
    estimator.fit(x_train, y_train)
    record = {"epsilon": estimator.privacy_["epsilon"], "delta": estimator.privacy_["delta"]}
    if hasattr(estimator, "prediction_"):
        p = estimator.prediction_
        record.update(predicted_excess_mse=p["excess_mse"], label=p["label"], reasons=list(p["reasons"]))
        if hasattr(estimator, "plan_"):
            record["planning_share"] = estimator.plan_["planning_share"]
            record["solver"] = estimator.training_["solver"]
    return estimator.predict(x_test), record
