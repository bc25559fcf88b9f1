"""Private linear models for scikit-learn: :class:`DPLinearRegression`, :class:`AdaSSPRegression` and
:class:`DPLogisticRegression` (noisy GD on the regularized logistic loss, last-iterate accounting,
:mod:`privdyn.sklearn._logistic`).

* :class:`DPLinearRegression` — one pass of clipped DP-GD (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329,
  Algorithm 1 with the noise calibration of Proposition 4.1), its hyper-parameters chosen by the planner
  (:func:`privdyn.plan.dpgd`) from public numbers only, so that tuning spends no privacy;
* :class:`AdaSSPRegression` — sufficient-statistics perturbation with an adaptive ridge (Wang 2018, arXiv
  1803.02596, Algorithm 2), its three Gaussian releases calibrated in zCDP.

Both take public bounds (``feature_norm`` on ‖x‖, ``label_bound`` on ``|y|``), account for every release in ``privacy_``
under replace-one neighbours, and follow scikit-learn's estimator API (``Pipeline``, ``GridSearchCV``, pickling,
pandas input). A search over private fits composes privacy: k fits on the same data spend k budgets.

The public-bound preprocessing is public too, for code that must see the rows as a mechanism does (baselines run on
the same rows, audits): :class:`Preprocessed` (the regressors': projection, label clipping, the intercept column)
and :func:`project_rows` (DPLogisticRegression's: the same rows divided by their radius).

``privacy_`` is a :class:`privdyn.privacy.PrivacyStatement`, read as an object (``model.privacy_.epsilon``) or as a
mapping (``model.privacy_["shares"]``).

The estimators load scikit-learn when first used, so ``import privdyn`` and ``import privdyn.sklearn`` stay cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "_dpgd": ("DPLinearRegression",),
    "_adassp": ("AdaSSPRegression",),
    "_logistic": ("DPLogisticRegression", "classifier_expected_failed_checks", "project_rows"),
    "_base": ("expected_failed_checks", "Preprocessed"),
}

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS)

if TYPE_CHECKING:
    from privdyn.sklearn._adassp import AdaSSPRegression as AdaSSPRegression
    from privdyn.sklearn._base import Preprocessed as Preprocessed
    from privdyn.sklearn._base import expected_failed_checks as expected_failed_checks
    from privdyn.sklearn._dpgd import DPLinearRegression as DPLinearRegression
    from privdyn.sklearn._logistic import DPLogisticRegression as DPLogisticRegression
    from privdyn.sklearn._logistic import classifier_expected_failed_checks as classifier_expected_failed_checks
    from privdyn.sklearn._logistic import project_rows as project_rows
