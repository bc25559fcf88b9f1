"""Bundled binary-classification data for the kan experiments, scaled to the unit ball the theory assumes.

No download: both datasets ship with scikit-learn. Labels are ±1. The kan paper's bounds assume ‖x‖ ≤ 1, so features
are standardized with training statistics and divided by the largest training-row norm.
"""

from __future__ import annotations

import numpy as np

from privdyn import _check

__all__ = ["BINARY_DATASETS", "load_binary_dataset", "scale_to_unit_ball"]

BINARY_DATASETS = ("breast_cancer", "digits_1_vs_7")
"""``breast_cancer``: scikit-learn's Wisconsin data, 569 × 30, benign = +1, malignant = −1; ``digits_1_vs_7``: the
8 × 8 digits "1" (+1) and "7" (−1), 361 × 64, pixels divided by 16."""


def load_binary_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (N, d) and ±1 labels (N,) of a bundled dataset named in :data:`BINARY_DATASETS`."""
    _check.one_of(BINARY_DATASETS, dataset=name)
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        x, target = load_breast_cancer(return_X_y=True)
        return np.asarray(x, dtype=np.float64), np.where(target == 1, 1.0, -1.0)
    from privdyn.data.real import load_digits_1_vs_7

    return load_digits_1_vs_7()


def scale_to_unit_ball(x_train: np.ndarray, x_test: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Standardize with the training statistics, divide by the largest training-row norm, and scale test rows above
    norm 1 back onto the unit sphere.

    Constant training features (standard deviation 0) are centred only. Both sets are finally shrunk by one part in
    10¹² so that ‖x‖ ≤ 1 holds exactly despite rounding.

    Returns:
        ``(x_train, x_test, number of test rows rescaled)``; ``x_test`` is an empty (0, d) array when not given.
    """
    x_train = _check.real_array(x_train=x_train)
    if x_train.ndim != 2 or x_train.shape[0] == 0 or x_train.shape[1] == 0:
        raise ValueError(f"x_train must be a non-empty 2-D array (n, d); got shape {x_train.shape}.")
    _check.finite(x_train=x_train)
    x_test = np.empty((0, x_train.shape[1])) if x_test is None else _check.real_array(x_test=x_test)
    if x_test.ndim != 2 or x_test.shape[1] != x_train.shape[1]:
        raise ValueError(f"x_test must be a 2-D array with {x_train.shape[1]} columns like x_train; "
                         f"got shape {x_test.shape}.")
    _check.finite(x_test=x_test)
    mean = x_train.mean(axis=0)
    sd = x_train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    train = (x_train - mean) / sd
    test = (x_test - mean) / sd
    radius = float(np.max(np.linalg.norm(train, axis=1)))
    radius = radius if radius > 0 else 1.0
    train /= radius
    test /= radius
    norms = np.linalg.norm(test, axis=1)
    above = norms > 1.0
    test[above] /= norms[above, None]
    train *= 1.0 - 1e-12
    test *= 1.0 - 1e-12
    return train, test, int(np.count_nonzero(above))
