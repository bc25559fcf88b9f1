"""Real regression data for the dpgd paper's Figures 5, 6 and 8, with offline substitutes.

Bombari, Luo, Seroussi, Mondelli (arXiv 2505.16329v2), Section 7 ("experimental details"): MNIST digits "1" vs "7"
with labels ±1 and d = 784, and scikit-learn's California housing (d = 8). Each dataset is split into a training
subset, a disjoint normalization subset and a validation subset; the per-coordinate mean and standard deviation of
the features and of the labels are estimated (non-privately) on the normalization subset and applied to the training
and validation data. The plotted quantity is the validation loss P(θ) = ½·mean((Xθ − y)²) (half mean squared error,
the convention of eq. (3.2) of arXiv 2505.16329, which the 0.6 cap of its Figures 5-6 implies).

No network access at run time. The loaders read a local cache and download only when asked (``download=True``):

* MNIST 1-vs-7: privdyn's own cache file ``mnist_1_vs_7.npz`` in ``cache_dir`` (default: scikit-learn's data home),
  written once from OpenML's ``mnist_784`` (version 1) through :func:`sklearn.datasets.fetch_openml`. It holds
  ``features`` (uint8 pixels, shape (N, 784)) and ``labels`` (int8, +1 for "1" and −1 for "7"), in OpenML order.
* California housing: scikit-learn's own cache (``cal_housing_py3.pkz`` in ``cache_dir``) through
  :func:`sklearn.datasets.fetch_california_housing`.

:func:`load_dataset` falls back to a dataset bundled with scikit-learn when the real one is not cached, and says
which one it used: ``digits_1_vs_7`` (8×8 digits "1" vs "7", 361 samples, d = 64) for MNIST and ``diabetes``
(442 samples, d = 10) for California housing.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._arrays import read_only

__all__ = [
    "DATASETS",
    "SUBSTITUTES",
    "MNIST_CACHE_FILE",
    "ArrayDataset",
    "RegressionSplit",
    "load_mnist_1_vs_7",
    "load_california_housing",
    "load_digits_1_vs_7",
    "load_diabetes",
    "load_dataset",
    "is_cached",
    "split_and_standardize",
]

SUBSTITUTES = {"mnist_1_vs_7": "digits_1_vs_7", "california_housing": "diabetes"}
"""The bundled substitute of each real dataset (used when the real data is not cached)."""

DATASETS = ("mnist_1_vs_7", "california_housing", "digits_1_vs_7", "diabetes")
"""The dataset names :func:`load_dataset` accepts."""

MNIST_CACHE_FILE = "mnist_1_vs_7.npz"
"""The name of privdyn's MNIST 1-vs-7 cache file inside ``cache_dir``."""

_CONSTANT_FEATURE_POLICIES = ("drop", "center")
_ORDERS = ("permute", "fixed")



def _cache_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    if cache_dir is None:
        from sklearn.datasets import get_data_home

        return Path(get_data_home())
    return Path(cache_dir)


# ----------------------------------------------------------------------------------------------------
# loaders


def load_mnist_1_vs_7(*, cache_dir: str | os.PathLike[str] | None = None,
                      download: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """MNIST digits "1" (label +1) and "7" (label −1), flattened: features (N, 784) in [0, 1], labels (N,).

    Reads ``cache_dir/mnist_1_vs_7.npz`` (see the module docstring). With ``download=True`` and no cache file, fetches
    OpenML's ``mnist_784`` (version 1) with :func:`sklearn.datasets.fetch_openml` (its own files also go to
    ``cache_dir``), keeps the two classes and writes the cache file atomically. Pixels are divided by 255.

    Raises:
        FileNotFoundError: the cache file is missing and ``download`` is False.
    """
    directory = _cache_dir(cache_dir)
    path = directory / MNIST_CACHE_FILE
    if not path.exists():
        if not download:
            raise FileNotFoundError(
                f"MNIST 1-vs-7 is not cached: no {MNIST_CACHE_FILE} in {str(directory)!r}. Call "
                "load_mnist_1_vs_7(download=True) once with network access, or use the offline substitute "
                "'digits_1_vs_7'.")
        _download_mnist_1_vs_7(directory, path)
    with np.load(path) as cached:
        pixels, labels = cached["features"], cached["labels"]
    if pixels.ndim != 2 or pixels.shape[1] != 784 or labels.shape != (pixels.shape[0],):
        raise ValueError(f"{path.name} must hold features of shape (N, 784) and labels of shape (N,); got "
                         f"{pixels.shape} and {labels.shape}.")
    if not np.all(np.isin(labels, (-1, 1))):
        raise ValueError(f"{path.name}: labels must be +1 or -1.")
    return pixels.astype(float) / 255.0, labels.astype(float)


def _download_mnist_1_vs_7(directory: Path, path: Path) -> None:
    from sklearn.datasets import fetch_openml

    directory.mkdir(parents=True, exist_ok=True)
    features, targets = fetch_openml("mnist_784", version=1, data_home=str(directory), as_frame=False,
                                     return_X_y=True)
    digits = np.asarray(targets).astype(str)
    keep = (digits == "1") | (digits == "7")
    pixels = np.rint(np.asarray(features)[keep]).astype(np.uint8)
    labels = np.where(digits[keep] == "1", 1, -1).astype(np.int8)
    handle, temporary = tempfile.mkstemp(dir=directory, suffix=".npz.part")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez_compressed(stream, features=pixels, labels=labels)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_california_housing(*, cache_dir: str | os.PathLike[str] | None = None,
                            download: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's California housing: features (20640, 8) and median house values (20640,) in $100,000.

    Calls :func:`sklearn.datasets.fetch_california_housing` with ``data_home=cache_dir`` and
    ``download_if_missing=download``, so it reads scikit-learn's own cache file.

    Raises:
        FileNotFoundError: the data is not cached and ``download`` is False.
    """
    from sklearn.datasets import fetch_california_housing

    directory = None if cache_dir is None else str(cache_dir)
    try:
        features, labels = fetch_california_housing(data_home=directory, download_if_missing=bool(download),
                                                    return_X_y=True)
    except OSError as error:
        if download:
            raise
        raise FileNotFoundError(
            f"California housing is not cached in {str(_cache_dir(cache_dir))!r} ({error}). Call "
            "load_california_housing(download=True) once with network access, or use the offline substitute "
            "'diabetes'.") from error
    return np.asarray(features), np.asarray(labels)


def load_digits_1_vs_7() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8×8 digits, classes "1" (+1) and "7" (−1): features (361, 64), labels (361,).

    The offline substitute for MNIST 1-vs-7 (pixel values 0..16 divided by 16).
    """
    from sklearn.datasets import load_digits

    features, digits = load_digits(return_X_y=True)
    keep = (digits == 1) | (digits == 7)
    return features[keep].astype(float) / 16.0, np.where(digits[keep] == 1, 1.0, -1.0)


def load_diabetes() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled diabetes regression data: features (442, 10), labels (442,).

    The offline substitute for California housing (features as scikit-learn scales them; they are standardized
    again by :func:`split_and_standardize`).
    """
    from sklearn.datasets import load_diabetes as sklearn_load_diabetes

    features, labels = sklearn_load_diabetes(return_X_y=True)
    return np.asarray(features), np.asarray(labels)


def is_cached(name: str, *, cache_dir: str | os.PathLike[str] | None = None) -> bool:
    """Whether :func:`load_dataset` can load ``name`` itself, without a download or a substitute.

    The bundled datasets are always available; MNIST 1-vs-7 needs its cache file; California housing needs
    scikit-learn's cache (checked by loading it, which reads a local file only).
    """
    _check.one_of(DATASETS, name=name)
    if name == "mnist_1_vs_7":
        return (_cache_dir(cache_dir) / MNIST_CACHE_FILE).exists()
    if name == "california_housing":
        try:
            load_dataset(name, cache_dir=cache_dir, substitute=False)
        except FileNotFoundError:
            return False
    return True


def load_dataset(name: str, *, cache_dir: str | os.PathLike[str] | None = None,
                 substitute: bool = True) -> tuple[str, np.ndarray, np.ndarray]:
    """Load a dataset by name, falling back to its bundled substitute when the real data is not cached.

    Never downloads. ``name`` is one of :data:`DATASETS`.

    Returns:
        ``(dataset_name_used, features, labels)``: the name of the dataset actually loaded (the substitute's
        name after a fallback), features (N, d) and labels (N,).

    Raises:
        FileNotFoundError: the real data is not cached and ``substitute`` is False.
    """
    _check.one_of(DATASETS, name=name)
    loaders = {
        "mnist_1_vs_7": lambda: load_mnist_1_vs_7(cache_dir=cache_dir),
        "california_housing": lambda: load_california_housing(cache_dir=cache_dir),
        "digits_1_vs_7": load_digits_1_vs_7,
        "diabetes": load_diabetes,
    }
    try:
        features, labels = loaders[name]()
        return name, features, labels
    except FileNotFoundError:
        if not substitute or name not in SUBSTITUTES:
            raise
    used = SUBSTITUTES[name]
    features, labels = loaders[used]()
    return used, features, labels


# ----------------------------------------------------------------------------------------------------
# datasets the simulator consumes


def _features_and_labels(prefix: str, features: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    x = _check.real_array(**{f"{prefix}features": features})
    y = _check.real_array(**{f"{prefix}labels": labels})
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{prefix}features must be a non-empty 2-D array (N, d); got shape {x.shape}.")
    if y.shape != (x.shape[0],):
        raise ValueError(f"{prefix}labels must have shape (N,) = ({x.shape[0]},); got {y.shape}.")
    _check.finite(**{f"{prefix}features": x, f"{prefix}labels": y})
    return x, y


@dataclasses.dataclass(frozen=True, eq=False)
class ArrayDataset:
    """Given training arrays (consumed once, in order) and a validation set: the simulator's real-data input.

    Attributes:
        train_features, train_labels: (N, d) and (N,); a run of n steps uses n of the N training samples, each once.
        validation_features, validation_labels: (N_v, d) and (N_v,); the risk reported is the validation loss
            P(θ) = ½·mean((X_v θ − y_v)²).
        name: the dataset name recorded in results (e.g. ``"mnist_1_vs_7"``).
        order: ``"permute"``: run i processes the first n samples of its own random permutation of the training
            set (drawn from run i's data stream), so runs differ in data and noise; ``"fixed"``: every run processes
            samples 0..n−1 in the given order, so runs differ only in their privacy noise. Either way every row of a
            batch sees the same data in the same order (common random numbers).
    """

    train_features: np.ndarray
    train_labels: np.ndarray
    validation_features: np.ndarray
    validation_labels: np.ndarray
    name: str = "arrays"
    order: str = "permute"

    def __post_init__(self) -> None:
        x, y = _features_and_labels("train_", self.train_features, self.train_labels)
        xv, yv = _features_and_labels("validation_", self.validation_features, self.validation_labels)
        if xv.shape[1] != x.shape[1]:
            raise ValueError(f"validation_features must have d = {x.shape[1]} columns like train_features; got "
                             f"{xv.shape[1]}.")
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str; got name={self.name!r}.")
        _check.one_of(_ORDERS, order=self.order)
        object.__setattr__(self, "train_features", read_only(x))
        object.__setattr__(self, "train_labels", read_only(y))
        object.__setattr__(self, "validation_features", read_only(xv))
        object.__setattr__(self, "validation_labels", read_only(yv))

    @property
    def dim(self) -> int:
        return int(self.train_features.shape[1])

    @property
    def num_train(self) -> int:
        return int(self.train_features.shape[0])

    def validation_loss(self, theta: ArrayLike) -> np.ndarray:
        """P(θ) = ½·mean((X_v θ − y_v)²) on the validation set. Shapes: (..., d) -> (...)."""
        theta = np.asarray(theta)
        if theta.shape[-1:] != (self.dim,):
            raise ValueError(f"theta must have shape (..., d) with d = {self.dim}; got {theta.shape}.")
        flat = theta.reshape(-1, self.dim)
        out = np.empty(flat.shape[0])
        chunk = max(1, 2**22 // max(1, self.validation_labels.size))  # bound the (chunk, N_v) residual matrix
        for start in range(0, flat.shape[0], chunk):
            residuals = flat[start:start + chunk] @ self.validation_features.T - self.validation_labels
            out[start:start + chunk] = 0.5 * np.mean(residuals**2, axis=1)
        return out.reshape(theta.shape[:-1])


@dataclasses.dataclass(frozen=True, eq=False)
class RegressionSplit:
    """A train / normalization / validation split, standardized with the normalization subset's statistics.

    Attributes:
        dataset: the dataset name.
        train_features, train_labels: standardized training data, (n_train, d) and (n_train,).
        validation_features, validation_labels: standardized validation data, (n_val, d) and (n_val,).
        feature_mean, feature_std: (d,) the statistics applied (of the kept features).
        label_mean, label_std: the label statistics applied.
        kept_features: (d,) indices of the kept columns of the original features.
        normalization_size: the number of samples used only for the statistics.
        constant_features: the policy applied to columns constant on the normalization subset (see
            :func:`split_and_standardize`).
    """

    dataset: str
    train_features: np.ndarray
    train_labels: np.ndarray
    validation_features: np.ndarray
    validation_labels: np.ndarray
    feature_mean: np.ndarray
    feature_std: np.ndarray
    label_mean: float
    label_std: float
    kept_features: np.ndarray
    normalization_size: int
    constant_features: str

    def __post_init__(self) -> None:
        _check.record(self)

    @property
    def dim(self) -> int:
        return int(self.train_features.shape[1])

    @property
    def train_size(self) -> int:
        return int(self.train_features.shape[0])

    @property
    def validation_size(self) -> int:
        return int(self.validation_features.shape[0])

    def to_dataset(self, *, order: str = "permute") -> ArrayDataset:
        """The simulator's input (see :class:`ArrayDataset` for ``order``)."""
        return ArrayDataset(self.train_features, self.train_labels, self.validation_features,
                            self.validation_labels, name=self.dataset, order=order)


def split_and_standardize(features: ArrayLike, labels: ArrayLike, *, train_size: int | None, normalization_size: int,
                          validation_size: int, rng: np.random.Generator, constant_features: str = "drop",
                          dataset: str = "arrays") -> RegressionSplit:
    """The paper's three-way split and non-private standardization (Section 7 of arXiv 2505.16329v2).

    A random permutation of the N samples (from ``rng``) is cut into, in order, the normalization subset
    (``normalization_size``), the validation subset (``validation_size``) and the training subset (``train_size``,
    or all the remaining samples when None). Feature and label means and standard deviations (ddof = 0) are
    computed on the normalization subset only and applied to the training and validation subsets.

    A column is *constant* when its standard deviation on the normalization subset is <= 1e-12·max(1, abs(mean))
    (e.g. MNIST's border pixels). ``constant_features="drop"`` (default) removes such columns, so d shrinks
    (record ``dim``); ``"center"`` keeps them, only centred (std taken as 1). The paper does not say which it
    did; dropping avoids dividing by ~0, and centring keeps d (e.g. 784 for MNIST).

    Raises:
        ValueError: sizes that do not fit in N (or are < 1), constant labels on the normalization subset, or no
            non-constant feature left.
    """
    x, y = _features_and_labels("", features, labels)
    _check.one_of(_CONSTANT_FEATURE_POLICIES, constant_features=constant_features)
    _check.generator(rng=rng)
    _check.integer(minimum=1, normalization_size=normalization_size, validation_size=validation_size)
    total = x.shape[0]
    rest = total - normalization_size - validation_size
    if train_size is None:
        train_size = rest
    _check.integer(minimum=1, train_size=train_size)
    if train_size > rest:
        raise ValueError(f"train_size + normalization_size + validation_size must be <= N = {total}; got "
                         f"{train_size} + {normalization_size} + {validation_size}.")
    order = rng.permutation(total)
    norm_idx = order[:normalization_size]
    val_idx = order[normalization_size:normalization_size + validation_size]
    train_idx = order[normalization_size + validation_size:normalization_size + validation_size + train_size]

    mean = x[norm_idx].mean(axis=0)
    std = x[norm_idx].std(axis=0)
    constant = std <= 1e-12 * np.maximum(1.0, np.abs(mean))
    if constant_features == "drop":
        kept = np.flatnonzero(~constant)
        if kept.size == 0:
            raise ValueError("every feature is constant on the normalization subset; increase normalization_size.")
    else:
        kept = np.arange(x.shape[1])
        std = np.where(constant, 1.0, std)
    mean, std = mean[kept], std[kept]
    label_mean, label_std = float(y[norm_idx].mean()), float(y[norm_idx].std())
    if not label_std > 1e-12 * max(1.0, abs(label_mean)):
        raise ValueError("labels are constant on the normalization subset; cannot standardize them.")

    def features_of(idx: np.ndarray) -> np.ndarray:
        return read_only((x[np.ix_(idx, kept)] - mean) / std)

    def labels_of(idx: np.ndarray) -> np.ndarray:
        return read_only((y[idx] - label_mean) / label_std)

    return RegressionSplit(
        dataset=str(dataset), train_features=features_of(train_idx), train_labels=labels_of(train_idx),
        validation_features=features_of(val_idx), validation_labels=labels_of(val_idx),
        feature_mean=read_only(mean), feature_std=read_only(std), label_mean=label_mean, label_std=label_std,
        kept_features=read_only(kept, dtype=np.int64), normalization_size=int(normalization_size),
        constant_features=constant_features)
