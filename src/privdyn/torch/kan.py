"""The kan paper's two-layer KAN as a torch module, with closed-form rank-one per-example gradients.

Wang, Schuchardt, Kalinin, et al., "Population Risk Bounds for Kolmogorov-Arnold Networks Trained by DP-SGD with
Correlated Noise", arXiv 2605.12648, Section 3.1 and Appendix B (the NumPy model is :class:`privdyn.models.kan.KAN`):

    f_W(x) = (1/sqrt(m)) c^T h( sigma( W h(x) / sqrt(d) ) ),

with ``h`` the uniform B-spline feature map of :class:`privdyn.models.bspline.BSplineBasis` (coordinate-major: entry
``i p + k`` of ``h(x)`` is ``b_k(x_i)``), the trainable ``W`` of shape ``(m, d p)`` held as the weight of an
``nn.Linear(d p, m, bias=False)`` applied to ``h(x) / sqrt(d)`` (so per-example-gradient engines that know linear
layers, e.g. Opacus' hooks, handle it), a frozen second layer ``c`` of shape ``(m, p)`` and the logistic loss
``l(z) = log(1 + exp(-z))`` of the margin ``y f_W(x)``, ``y in {-1, +1}``.

Per-example gradients in closed form (proof of Lemma B.6): with ``s = W h(x) / sqrt(d)``, ``u = sigma(s)`` and
``a_j = sigma'(s_j) <c_j, h'(u_j)>``, the loss gradient of example ``i`` is the rank-one matrix ``outer(A_i, H_i)`` with
``A_i = l'(y_i f_i) y_i a(x_i) / sqrt(m d)`` and ``H_i = h(x_i)``: norms ``||A_i|| ||H_i||`` and the clipped sum
``(s * A)^T H`` never form a ``B x m x d p`` tensor (:meth:`KAN.loss_and_gradient_factors`).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from privdyn import _check
from privdyn.models import kan as numpy_kan
from privdyn.models.bspline import BSplineBasis, cardinal_pieces

__all__ = ["KAN"]


class KAN(nn.Module):
    """The two-layer KAN of the kan paper (arXiv 2605.12648, Section 3.1) with a frozen second layer.

    Args:
        d: input dimension.
        second_layer: the frozen coefficients ``c``, shape ``(width, p)`` with ``p = grid_size + spline_order``.
        grid_size, spline_order, interval: the B-spline basis of both layers (as
            :class:`privdyn.models.bspline.BSplineBasis`); the interval must contain [-1, 1] and the activation's range.
        activation: ``"sigmoid"`` or ``"tanh"``.
        initial_parameters: ``W_0`` of shape ``(width, d p)`` (default: ``N(0, 1)`` entries from ``generator``).
        generator: a torch.Generator for the default ``W_0``.
        dtype: of the parameters and computations (default float64, the NumPy model's precision).

    Attributes:
        first_layer: ``nn.Linear(d p, width, bias=False)``; its weight is ``W``.
    """

    def __init__(self, d: int, second_layer: torch.Tensor | np.ndarray, *, grid_size: int = 5,
                 spline_order: int = 3, interval: tuple[float, float] = (-1.0, 1.0), activation: str = "sigmoid",
                 initial_parameters: torch.Tensor | np.ndarray | None = None,
                 generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        _check.integer(minimum=1, d=d)
        self.basis = BSplineBasis(grid_size=grid_size, spline_order=spline_order, interval=interval)
        self.activation = numpy_kan.activation(activation)
        c = torch.as_tensor(np.array(second_layer, dtype=np.float64) if isinstance(second_layer, np.ndarray)
                            else second_layer.detach().to(torch.float64))
        p = self.basis.num_basis
        if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] != p:
            raise ValueError(f"second_layer must have shape (width, {p}) with width >= 1; got shape {tuple(c.shape)}.")
        _check.finite(second_layer=c.numpy())
        lo, hi = self.basis.interval
        a_lo, a_hi = self.activation.output_range
        if lo > min(a_lo, -1.0) or hi < max(a_hi, 1.0):
            raise ValueError(f"interval must contain [-1, 1] and the range of {self.activation.name}; "
                             f"got interval={self.basis.interval!r}.")
        self.d, self.width, self.num_basis = int(d), int(c.shape[0]), p
        self.first_layer = nn.Linear(self.d * p, self.width, bias=False, dtype=dtype)
        with torch.no_grad():
            if initial_parameters is None:
                self.first_layer.weight.normal_(generator=generator)
            else:
                w = torch.as_tensor(initial_parameters).to(dtype)
                if tuple(w.shape) != (self.width, self.d * p):
                    raise ValueError(f"initial_parameters must have shape {(self.width, self.d * p)}; "
                                     f"got shape {tuple(w.shape)}.")
                _check.finite(initial_parameters=w.double().numpy())
                self.first_layer.weight.copy_(w)
        self.register_buffer("second_layer", c.to(dtype))
        k = self.basis.spline_order
        pieces = np.stack([cardinal_pieces(k, nu) * self.basis.spacing ** -nu for nu in (0, 1)])
        self.register_buffer("_pieces", torch.as_tensor(pieces, dtype=dtype))
        self._knot0 = float(self.basis.knots[0])
        self._inv_h = 1.0 / self.basis.spacing

    @classmethod
    def from_numpy(cls, model: numpy_kan.KAN, params: np.ndarray, *, dtype: torch.dtype = torch.float64) -> KAN:
        """The torch twin of a :class:`privdyn.models.kan.KAN` at parameters ``params`` (same basis and activation)."""
        if not isinstance(model, numpy_kan.KAN):
            raise TypeError(f"model must be a privdyn.models.kan.KAN; got {type(model).__name__}.")
        return cls(model.d, model.second_layer, grid_size=model.basis.grid_size,
                   spline_order=model.basis.spline_order, interval=model.basis.interval,
                   activation=model.activation.name, initial_parameters=np.asarray(params), dtype=dtype)

    @property
    def weight(self) -> nn.Parameter:
        """The trainable ``W`` (shape ``(width, d p)``)."""
        return self.first_layer.weight

    # -- basis ------------------------------------------------------------------------------------------------

    def _basis(self, v: torch.Tensor, derivative: int = 0) -> torch.Tensor:
        """``h^(derivative)(v)`` along a new last axis of length p (zero outside the knot span, right piece at knots).

        Basis function ``i`` on knot span ``s`` is piece ``s - i`` of the cardinal B-spline, evaluated at the position
        ``t`` within the span (as :meth:`privdyn.models.bspline.BSplineBasis.evaluate`).
        """
        k, p = self.basis.spline_order, self.num_basis
        x = (v - self._knot0) * self._inv_h
        span = torch.floor(x).detach()
        t = x - span
        piece = span.unsqueeze(-1) - torch.arange(p, device=v.device, dtype=span.dtype)
        inside = (span >= 0) & (span < self.basis.num_spans)
        valid = (piece >= 0) & (piece <= k) & inside.unsqueeze(-1)
        coefficients = self._pieces[derivative][piece.clamp(0, k).long()]  # (..., p, k + 1)
        t = t.unsqueeze(-1)
        value = coefficients[..., k]
        for power in range(k - 1, -1, -1):
            value = value * t + coefficients[..., power]
        return torch.where(valid, value, torch.zeros((), dtype=value.dtype, device=value.device))

    def _check_inputs(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor; got {type(x).__name__}.")
        if x.ndim != 2 or x.shape[1] != self.d:
            raise ValueError(f"x must have shape (n, {self.d}); got shape {tuple(x.shape)}.")
        x = x.to(self.weight.dtype)
        if x.numel():
            lo, hi = self.basis.interval
            slack = 1e-12 * (hi - lo)
            low, high = float(x.min()), float(x.max())
            if not (math.isfinite(low) and math.isfinite(high)):
                raise ValueError("x must be finite; got a non-finite entry.")
            if low < lo - slack or high > hi + slack:
                raise ValueError(f"x must have coordinates in the basis interval [{lo}, {hi}]; got min {low!r} and "
                                 f"max {high!r}.")
        return x

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """``h(x)`` for each row: shape ``(n, d p)``, entry ``i p + k`` equal to ``b_k(x_i)``."""
        x = self._check_inputs(x)
        return self._basis(x).reshape(x.shape[0], self.d * self.num_basis)

    def _activation(self, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.activation.name == "sigmoid":
            u = torch.sigmoid(s)
            return u, u * (1.0 - u)
        u = torch.tanh(s)
        return u, 1.0 - u * u

    # -- evaluation ---------------------------------------------------------------------------------------------

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``f_W(x)`` for each row of ``x`` (shape ``(n,)``), differentiable in ``W`` by autograd."""
        s = self.first_layer(self.features(x) * (1.0 / math.sqrt(self.d)))
        u, _ = self._activation(s)
        return torch.einsum("njk,jk->n", self._basis(u), self.second_layer) * (1.0 / math.sqrt(self.width))

    @staticmethod
    def per_example_losses(output: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``l(y f) = log(1 + exp(-y f))`` per example (softplus, stable)."""
        return nn.functional.softplus(-y.to(output.dtype) * output)

    def loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The empirical risk ``(1/n) sum_i l(y_i f_W(x_i))``."""
        return self.per_example_losses(self(x), y).mean()

    @torch.no_grad()
    def loss_and_gradient_factors(self, x: torch.Tensor,
                                  y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-example losses and the factors of the per-example loss gradients, by the closed form.

        Returns ``(losses, A, H)`` with ``grad_W l(y_i f_W(x_i)) = outer(A[i], H[i])``, ``A[i] = l'(y_i f_i) y_i
        a(x_i) / sqrt(m d)`` and ``H[i] = h(x_i)`` (kan paper, arXiv 2605.12648, proof of Lemma B.6).
        """
        h = self.features(x)
        y = self._check_labels(y, h.shape[0])
        s = self.first_layer(h * (1.0 / math.sqrt(self.d)))
        u, du = self._activation(s)
        f = torch.einsum("njk,jk->n", self._basis(u), self.second_layer) * (1.0 / math.sqrt(self.width))
        slope = torch.einsum("njk,jk->nj", self._basis(u, derivative=1), self.second_layer)
        margin = y * f
        # l'(z) = -1 / (1 + exp(z)) = -sigmoid(-z)
        scale = -torch.sigmoid(-margin) * y * (1.0 / math.sqrt(self.width * self.d))
        a = du * slope * scale.unsqueeze(1)
        return nn.functional.softplus(-margin), a, h

    def _check_labels(self, y: torch.Tensor, n: int) -> torch.Tensor:
        if not isinstance(y, torch.Tensor):
            raise TypeError(f"y must be a torch.Tensor; got {type(y).__name__}.")
        if tuple(y.shape) != (n,):
            raise ValueError(f"y must have shape ({n},) (one label per row of x); got shape {tuple(y.shape)}.")
        y = y.to(self.weight.dtype)
        bad = (y != 1.0) & (y != -1.0)
        if bool(bad.any()):
            raise ValueError(f"y must hold labels in {{-1, +1}}; got y={y[bad][0].item()!r}.")
        return y
