"""Data for the simulators: Gaussian random designs and real regression datasets (with offline substitutes)."""

from privdyn.data.real import (
    DATASETS,
    SUBSTITUTES,
    ArrayDataset,
    RegressionSplit,
    load_california_housing,
    load_dataset,
    load_diabetes,
    load_digits_1_vs_7,
    load_mnist_1_vs_7,
    split_and_standardize,
)
from privdyn.data.synthetic import SyntheticDesign, num_samples

__all__ = [
    "DATASETS",
    "SUBSTITUTES",
    "ArrayDataset",
    "RegressionSplit",
    "SyntheticDesign",
    "load_california_housing",
    "load_dataset",
    "load_diabetes",
    "load_digits_1_vs_7",
    "load_mnist_1_vs_7",
    "num_samples",
    "split_and_standardize",
]
