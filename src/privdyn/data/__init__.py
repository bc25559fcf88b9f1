"""Data for the simulators: the papers' synthetic designs, real datasets (with offline substitutes).

Every public name is importable from here; the modules stay importable as namespaces (``privdyn.data.real``,
``privdyn.data.hsgd_design``, ...). The hsgd paper's design functions carry the paper key in their flat names
(``hsgd_paper_design``, ``hsgd_gaussian_design``, ``hsgd_population_risk``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "real": (
        "DATASETS", "MNIST_CACHE_FILE", "SUBSTITUTES", "ArrayDataset", "RegressionSplit", "is_cached",
        "load_california_housing", "load_dataset", "load_diabetes", "load_digits_1_vs_7", "load_mnist_1_vs_7",
        "split_and_standardize",
    ),
    "synthetic": ("SyntheticDesign", "num_samples"),
    "classification": ("BINARY_DATASETS", "load_binary_dataset", "scale_to_unit_ball"),
    "hsgd_design": ("UniformDesign", "clipped_normal_second_moment", "hsgd_problem"),
}
_ALIASES: dict[str, tuple[str, str]] = {
    "hsgd_paper_design": ("hsgd_design", "paper_design"),
    "hsgd_gaussian_design": ("hsgd_design", "gaussian_design"),
    "hsgd_population_risk": ("hsgd_design", "population_risk"),
}
_SUBMODULES = ("classification", "hsgd_design", "real", "synthetic")

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS, aliases=_ALIASES, submodules=_SUBMODULES)

if TYPE_CHECKING:
    from privdyn.data import classification as classification
    from privdyn.data import hsgd_design as hsgd_design
    from privdyn.data import real as real
    from privdyn.data import synthetic as synthetic
    from privdyn.data.classification import BINARY_DATASETS as BINARY_DATASETS
    from privdyn.data.classification import load_binary_dataset as load_binary_dataset
    from privdyn.data.classification import scale_to_unit_ball as scale_to_unit_ball
    from privdyn.data.hsgd_design import UniformDesign as UniformDesign
    from privdyn.data.hsgd_design import clipped_normal_second_moment as clipped_normal_second_moment
    from privdyn.data.hsgd_design import gaussian_design as hsgd_gaussian_design  # noqa: F401 - re-exported under this name
    from privdyn.data.hsgd_design import hsgd_problem as hsgd_problem
    from privdyn.data.hsgd_design import paper_design as hsgd_paper_design  # noqa: F401 - re-exported under this name
    from privdyn.data.hsgd_design import population_risk as hsgd_population_risk  # noqa: F401 - re-exported under this name
    from privdyn.data.real import DATASETS as DATASETS
    from privdyn.data.real import MNIST_CACHE_FILE as MNIST_CACHE_FILE
    from privdyn.data.real import SUBSTITUTES as SUBSTITUTES
    from privdyn.data.real import ArrayDataset as ArrayDataset
    from privdyn.data.real import RegressionSplit as RegressionSplit
    from privdyn.data.real import is_cached as is_cached
    from privdyn.data.real import load_california_housing as load_california_housing
    from privdyn.data.real import load_dataset as load_dataset
    from privdyn.data.real import load_diabetes as load_diabetes
    from privdyn.data.real import load_digits_1_vs_7 as load_digits_1_vs_7
    from privdyn.data.real import load_mnist_1_vs_7 as load_mnist_1_vs_7
    from privdyn.data.real import split_and_standardize as split_and_standardize
    from privdyn.data.synthetic import SyntheticDesign as SyntheticDesign
    from privdyn.data.synthetic import num_samples as num_samples
