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
"""The private methods; ``+share`` is DPLinearRegression with a planning share (dropped when the config has none)."""


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
    else:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got method={method!r}.")
    estimator.fit(x_train, y_train)
    record = {"epsilon": estimator.privacy_["epsilon"], "delta": estimator.privacy_["delta"]}
    if hasattr(estimator, "plan_"):
        record["predicted_excess_mse"] = estimator.plan_["predicted_excess_mse"]
    return estimator.predict(x_test), record
