"""Audit row ``sklearn-dplogisticregression``: :class:`privdyn.sklearn.DPLogisticRegression`'s own ``fit`` on a canary.

The pair: n one-dimensional rows without intercept; every row but the canary is x = 0 (zero logistic gradient,
labels alternating so that both classes occur), the canary is x = F (``feature_norm``) with label 1 on D and 0 on
D'. The score of a run is the released ``coef_``. Each run is one call of the estimator's ``fit`` with its defaults
but ``max_iter`` and ``ridge`` (fixed here so the row is quick), at the row's δ; the reported ε is the fitted
estimator's own ``privacy_["epsilon"]``. After the estimator's preprocessing the canary is z = 1, and the two
labels' logistic gradients differ by exactly 1 at every θ (σ(t) + σ(−t) = 1), half the sensitivity S_g = 2 the
accountant allows for any pair of rows in the unit ball: the threshold test is a lower bound that need not be tight.

``noise_factor`` != 1 (a planted bug) cannot be passed to the estimator: those runs use the engine ``fit`` calls
(:func:`privdyn.algorithms.noisy_gd.noisy_gd`) with the fitted ``training_`` numbers and the noise scaled, so the
planted bug changes the noise only; at ``noise_factor`` = 1 every run is a call of ``fit``.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import numpy as np

from privdyn.audit.base import Mechanism, _generators
from privdyn.privacy.labels import PrivacyLoss

__all__ = ["DPLogisticRegressionCanary"]


@functools.lru_cache(maxsize=8)
def _fitted(setting: DPLogisticRegressionCanary) -> Any:
    """The estimator fitted once on D (its ``privacy_`` and ``training_`` do not depend on the noise drawn)."""
    data = setting.datasets()[0]
    return setting.estimator(random_state=0).fit(*data)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPLogisticRegressionCanary(Mechanism):
    """DPLogisticRegression's ``fit`` on the label-flip canary (module docstring); threshold test on ``coef_``."""

    name: ClassVar[str] = "sklearn-dplogisticregression"
    description: ClassVar[str] = ("privdyn.sklearn.DPLogisticRegression (noisy GD, logistic loss, last iterate), its "
                                  "own fit on a label-flip canary: the estimator's privacy_")

    entry_point: ClassVar[str] = "privdyn.sklearn.DPLogisticRegression.fit"
    slow_accountant: ClassVar[bool] = True
    """Not the accountant (cached, milliseconds) but the runs: 2.5 x 10^4 calls of ``fit`` take minutes, so the row
    runs behind ``-m slow`` like the amplified-bound rows."""

    n: int = 10
    epsilon: float = 2.0
    feature_norm: float = 1.0
    ridge: float = 0.5
    max_iter: int = 50

    def estimator(self, random_state: Any) -> Any:
        from privdyn.sklearn import DPLogisticRegression

        return DPLogisticRegression(epsilon=self.epsilon, delta=self.delta, feature_norm=self.feature_norm,
                                    fit_intercept=False, ridge=self.ridge, max_iter=self.max_iter,
                                    random_state=random_state)

    def datasets(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        x = np.zeros((self.n, 1))
        x[0, 0] = self.feature_norm
        y = np.arange(self.n) % 2
        y[0] = 1
        flipped = y.copy()
        flipped[0] = 0
        return (x, y), (x, flipped)

    def reported(self) -> PrivacyLoss:
        privacy = _fitted(dataclasses.replace(self, noise_factor=1.0)).privacy_
        if privacy["delta"] != self.delta:
            raise AssertionError(f"the estimator reports delta={privacy['delta']!r}, not the audited {self.delta!r}")
        return PrivacyLoss(value=float(privacy["epsilon"]), guarantee=privacy["guarantee"], quantity="epsilon",
                           neighboring=privacy["neighboring"],
                           source=f"DPLogisticRegression(...).privacy_: {privacy['accountant']}")

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        outputs = []
        for data, gen in zip(self.datasets(), _generators(seed, unit_key), strict=True):
            if self.noise_factor == 1.0:
                outputs.append(np.array([self.estimator(gen).fit(*data).coef_[0, 0] for _ in range(runs)]))
            else:
                outputs.append(self._engine(data, gen, runs))
        return outputs[0], outputs[1]

    def _engine(self, data: tuple[np.ndarray, np.ndarray], gen: np.random.Generator, runs: int) -> np.ndarray:
        """The fit's noisy GD with the fitted numbers and the noise multiplied by ``noise_factor`` (runs at once)."""
        from privdyn.algorithms.noisy_gd import L2Ball, LogisticLoss, noisy_gd

        training = _fitted(dataclasses.replace(self, noise_factor=1.0)).training_
        rows = data[0] * training["row_scale"]
        theta = noisy_gd(LogisticLoss(ridge=training["ridge"]), (rows, 2.0 * data[1] - 1.0),
                         num_steps=training["num_steps"], step_size=training["step_size"],
                         noise_scale=training["noise_scale"] * self.noise_factor, rng=gen, num_runs=runs,
                         projection=L2Ball(training["radius"]), strong_convexity=training["ridge"])
        return np.asarray(theta[:, 0] * training["row_scale"])
