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
from typing import cast

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

    # buffers (registered in __init__), declared for type checkers
    second_layer: torch.Tensor
    _pieces: torch.Tensor
    _table: torch.Tensor

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
        self.register_buffer("_pieces", torch.as_tensor(cardinal_pieces(k), dtype=dtype))
        table = self.basis.span_polynomials(c.numpy())  # (m, num_spans, k + 1)
        self.register_buffer("_table", torch.as_tensor(table.reshape(-1, k + 1), dtype=dtype))
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
        return cast(nn.Parameter, self.first_layer.weight)

    # -- basis ------------------------------------------------------------------------------------------------

    def _span(self, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Knot span of each entry (clamped into range), the position ``t`` in it, and whether it lies in the knots."""
        x = (v - self._knot0) * self._inv_h
        span = torch.floor(x).detach()
        inside = (span >= 0) & (span < self.basis.num_spans)
        t = x - span
        return span.clamp(0, self.basis.num_spans - 1).long(), t, inside

    def _powers(self, t: torch.Tensor) -> torch.Tensor:
        """``(1, t, ..., t^k)`` along a new last axis."""
        powers = [torch.ones_like(t), t]
        for _ in range(2, self.basis.spline_order + 1):
            powers.append(powers[-1] * t)
        return torch.stack(powers[: self.basis.spline_order + 1], dim=-1)

    def _basis(self, v: torch.Tensor) -> torch.Tensor:
        """``h(v)`` along a new last axis of length p (zero outside the knot span; at a knot, the right piece).

        On knot span ``s`` the nonzero basis functions are ``s - q`` for ``q = 0..k``, carrying piece ``q`` of the
        cardinal B-spline at the position ``t`` in the span (as :meth:`privdyn.models.bspline.BSplineBasis.evaluate`):
        the ``k + 1`` piece values are scattered into place.
        """
        k, p = self.basis.spline_order, self.num_basis
        span, t, inside = self._span(v)
        values = self._powers(t) @ self._pieces.T  # (..., k + 1): piece q at t
        values = values * inside.unsqueeze(-1)
        index = span.unsqueeze(-1) - torch.arange(k + 1, device=v.device) + k  # position s - q in a k-padded axis
        padded = torch.zeros(v.shape + (p + 2 * k,), dtype=values.dtype, device=v.device)
        padded.scatter_(-1, index, values)
        return padded[..., k: k + p]

    def _second_layer(self, u: torch.Tensor, slope: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``S_j(u_j) = <c_j, h(u_j)>`` and, if asked, ``S_j'(u_j)``, from the span polynomials of the ``S_j``
        (:meth:`privdyn.models.bspline.BSplineBasis.span_polynomials`) without forming ``h(u)``."""
        span, t, inside = self._span(u)
        rows = span + torch.arange(self.width, device=u.device) * self.basis.num_spans
        coefficients = self._table[rows]  # (n, m, k + 1)
        powers = self._powers(t)
        value = (coefficients * powers).sum(-1) * inside
        if not slope:
            return value, None
        k = self.basis.spline_order
        orders = torch.arange(1, k + 1, dtype=t.dtype, device=u.device)
        derivative = (coefficients[..., 1:] * powers[..., :k] * orders).sum(-1) * (self._inv_h * inside)
        return value, derivative

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
        value, _ = self._second_layer(u, slope=False)
        return value.sum(1) * (1.0 / math.sqrt(self.width))

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
        value, slope = self._second_layer(u, slope=True)
        assert slope is not None  # asked for with slope=True
        f = value.sum(1) * (1.0 / math.sqrt(self.width))
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
