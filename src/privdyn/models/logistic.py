"""Logistic regression with the per-example-gradient interface of :class:`privdyn.models.kan.KAN`.

``f_w(x) = <w, x>`` with ``w`` stored as a ``(1, d)`` matrix, loss ``l(y f_w(x)) = log(1 + exp(-y <w, x>))``. The
per-example loss gradient ``l'(y_i f_i) y_i x_i`` is the rank-one matrix ``outer(A[i], H[i])`` with
``A[i] = l'(y_i f_i) y_i`` (shape ``(n, 1)``) and ``H[i] = x_i``, so the DP-SGD trainer of
:mod:`privdyn.algorithms.dpsgd` treats it exactly like the KAN.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from privdyn import _check
from privdyn._deprecation import renamed_arguments
from privdyn.models.kan import logistic_loss, logistic_loss_derivative, validate_labels

__all__ = ["LogisticRegression"]


@dataclasses.dataclass(frozen=True)
class LogisticRegression:
    """Linear logistic regression without intercept (append a constant feature for one).

    Attributes:
        d: input dimension.
        input_norm_bound: inputs must satisfy ``||x||_2 <= input_norm_bound`` (``None``: no bound is assumed).
    """

    d: int
    input_norm_bound: float | None = None

    def __post_init__(self) -> None:
        _check.integer(minimum=1, d=self.d)
        object.__setattr__(self, "d", int(self.d))
        if self.input_norm_bound is not None:
            _check.positive(input_norm_bound=self.input_norm_bound)

    @property
    def parameter_shape(self) -> tuple[int, int]:
        return 1, self.d

    @property
    def num_parameters(self) -> int:
        return self.d

    @renamed_arguments(generator="rng")
    def initial_parameters(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """``w_0 = 0`` (the convex problem needs no random start; ``rng`` is accepted for the interface)."""
        return np.zeros(self.parameter_shape)

    def validate_inputs(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.d:
            raise ValueError(f"x must have shape (n, {self.d}); got shape {x.shape}.")
        _check.finite(x=x)
        if self.input_norm_bound is not None and x.size:
            norms = np.sqrt(np.einsum("ij,ij->i", x, x))
            worst = int(np.argmax(norms))
            if norms[worst] > self.input_norm_bound * (1.0 + 1e-12):
                raise ValueError(f"x must have rows with ||x||_2 <= {self.input_norm_bound}; "
                                 f"got ||x[{worst}]||_2={norms[worst]!r}.")
        return x

    def _check_parameters(self, params: np.ndarray) -> np.ndarray:
        params = np.asarray(params, dtype=np.float64)
        if params.shape != self.parameter_shape:
            raise ValueError(f"params must have shape {self.parameter_shape}; got shape {params.shape}.")
        return params

    def forward(self, params: np.ndarray, x: np.ndarray) -> np.ndarray:
        return self.validate_inputs(x) @ self._check_parameters(params)[0]

    def per_example_losses(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        f = self.forward(params, x)
        return logistic_loss(validate_labels(y, f.shape[0]) * f)

    def loss(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.per_example_losses(params, x, y)))

    def output_gradient_factors(self, params: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``grad_w f_w(x_i) = outer(1, x_i)``: ``A`` is a column of ones."""
        x = self.validate_inputs(x)
        self._check_parameters(params)
        return np.ones((x.shape[0], 1)), x

    def loss_and_gradient_factors(self, params: np.ndarray, x: np.ndarray,
                                  y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = self.validate_inputs(x)
        y = validate_labels(y, x.shape[0])
        margin = y * (x @ self._check_parameters(params)[0])
        return logistic_loss(margin), (logistic_loss_derivative(margin) * y)[:, None], x

    def gradient(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        _, a, h = self.loss_and_gradient_factors(params, x, y)
        return (a.T @ h) / max(h.shape[0], 1)

    def single_example_gradient(self, params: np.ndarray, x: np.ndarray, y: float) -> np.ndarray:
        _, a, h = self.loss_and_gradient_factors(params, np.asarray(x, dtype=np.float64)[None, :], np.array([y]))
        return np.outer(a[0], h[0])

    def per_example_gradient_gram(self, params: np.ndarray, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """``K[i, j] = y_i y_j <x_i, x_j>``, the Gram matrix of the label-signed output gradients."""
        _, h = self.output_gradient_factors(params, x)
        gram = h @ h.T
        if y is not None:
            y = validate_labels(y, h.shape[0])
            gram *= np.outer(y, y)
        return gram
