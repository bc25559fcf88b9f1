"""The kan paper's two-layer Kolmogorov-Arnold network with closed-form, rank-one per-example gradients.

Wang, Schuchardt, Kalinin, et al., "Population Risk Bounds for Kolmogorov-Arnold Networks Trained by DP-SGD with
Correlated Noise", arXiv 2605.12648, Section 3.1 and Appendix B:

    f_W(x) = (1/sqrt(m)) c^T h( sigma( W h(x) / sqrt(d) ) ),

with ``h`` the B-spline feature map of :mod:`privdyn.models.bspline` (``h(x) in R^{dp}`` stacks ``h(x_1), ...,
h(x_d)``, coordinate-major: entry ``i p + k`` is ``b_k(x_i)``), trainable first-layer coefficients ``W`` of shape
``(m, d p)`` (row ``j`` is ``w_j``, the vectorized parameter ``(w_1, ..., w_m)`` of the paper), a frozen second layer
``c`` of shape ``(m, p)`` drawn once from ``N(0, I)``, a fixed activation ``sigma`` (sigmoid or tanh) and no bias, base
branch or scale parameters (this is not pykan's parameterization). The loss is the logistic loss
``l(z) = log(1 + exp(-z))`` of the margin ``z = y f_W(x)`` with labels ``y in {-1, +1}``.

Per-example gradients (proof of Lemma B.6): with ``s_j = w_j^T h(x) / sqrt(d)``, ``u_j = sigma(s_j)`` and
``a_j(x) = sigma'(s_j) <c_j, h'(u_j)>``,

    grad_W f_W(x) = a(x) h(x)^T / sqrt(m d)         (a rank-one m x dp matrix),
    grad_W l(y f_W(x)) = l'(y f_W(x)) y a(x) h(x)^T / sqrt(m d).

A model here returns these as *factors* ``(A, H)`` with the gradient of example ``i`` equal to ``outer(A[i], H[i])``,
so per-example norms are ``||A[i]|| ||H[i]||`` and the clipped batch sum is one matrix product ``(s * A)^T H``; no
``B x (m d p)`` tensor is ever formed. :class:`LogisticRegression` exposes the same interface.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np
from scipy import special

from privdyn import _check
from privdyn._deprecation import renamed_arguments
from privdyn.models.bspline import BSplineBasis

__all__ = [
    "ACTIVATIONS",
    "Activation",
    "activation",
    "logistic_loss",
    "logistic_loss_derivative",
    "validate_labels",
    "KAN",
]


# ---------------------------------------------------------------------------------------------------------------
# Logistic loss and activations
# ---------------------------------------------------------------------------------------------------------------


def logistic_loss(margin: np.ndarray) -> np.ndarray:
    """``l(z) = log(1 + exp(-z))``, computed stably as ``logaddexp(0, -z)`` (the kan paper's loss, Section 3)."""
    return np.logaddexp(0.0, -_check.real_array(margin=margin))


def logistic_loss_derivative(margin: np.ndarray) -> np.ndarray:
    """``l'(z) = -1 / (1 + exp(z)) = -expit(-z)`` (in ``[-1, 0]``; 0 and -1 at ``z = ±inf``; NaN is refused)."""
    z = _check.real_array(margin=margin)
    if np.any(np.isnan(z)):
        raise ValueError(f"margin must not be NaN; got margin={margin!r}.")
    return -special.expit(-z)


def validate_labels(y: np.ndarray, n: int) -> np.ndarray:
    """``y`` as a float64 vector of ``n`` labels in ``{-1, +1}`` (``ValueError`` naming ``y`` otherwise)."""
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) (one label per row of x); got shape {y.shape}.")
    y = y.astype(np.float64)
    _check.finite(y=y)
    bad = ~((y == 1.0) | (y == -1.0))
    if np.any(bad):
        raise ValueError(f"y must hold labels in {{-1, +1}}; got y={y[bad][0]!r}.")
    return y


@dataclasses.dataclass(frozen=True)
class Activation:
    """A smooth activation with its first two derivatives and the sup-norms ``(B_sigma, B'_sigma, B''_sigma)``.

    The bounds are those of Assumption 3.2 of the kan paper (arXiv 2605.12648); ``output_range`` is the closure of the
    range of ``sigma`` (the second-layer basis must cover it).
    """

    name: str
    value_bound: float
    first_derivative_bound: float
    second_derivative_bound: float
    output_range: tuple[float, float]

    def __post_init__(self) -> None:
        _check.record(self)

    def derivatives(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(sigma(s), sigma'(s), sigma''(s))``."""
        if self.name == "sigmoid":
            value = special.expit(s)
            first = value * (1.0 - value)
            return value, first, first * (1.0 - 2.0 * value)
        value = np.tanh(s)
        first = 1.0 - value * value
        return value, first, -2.0 * value * first

    def value_and_slope(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sigma(s), sigma'(s))``, in place of ``s`` where possible (``s`` is overwritten by ``sigma(s)``)."""
        if self.name == "sigmoid":
            value = special.expit(s, out=s)
            return value, value * (1.0 - value)
        value = np.tanh(s, out=s)
        return value, 1.0 - value * value

    @property
    def bounds(self) -> tuple[float, float, float]:
        return self.value_bound, self.first_derivative_bound, self.second_derivative_bound


ACTIVATIONS = {
    # sigmoid: |s| <= 1, |s'| <= 1/4, |s''| <= 1/(6 sqrt 3) (at s = 1/2 -+ 1/(2 sqrt 3)); tanh: 1, 1, 4/(3 sqrt 3).
    "sigmoid": Activation("sigmoid", 1.0, 0.25, 1.0 / (6.0 * math.sqrt(3.0)), (0.0, 1.0)),
    "tanh": Activation("tanh", 1.0, 1.0, 4.0 / (3.0 * math.sqrt(3.0)), (-1.0, 1.0)),
}
"""The activations a KAN accepts, by name, with the sup-norms of the function and its first two derivatives
(:class:`Activation`)."""


def activation(name: str | Activation) -> Activation:
    """The :class:`Activation` called ``name`` (``"sigmoid"`` or ``"tanh"``)."""
    if isinstance(name, Activation):
        return name
    if not (isinstance(name, str) and name in ACTIVATIONS):
        choices = ", ".join(repr(a) for a in ACTIVATIONS)
        raise ValueError(f"name (the activation) must be one of {choices}; got name={_check._short(name)}.")
    return ACTIVATIONS[name]


_activation_of = activation  # KAN.initialize's ``activation`` argument shadows the function


def _validate_inputs(x: np.ndarray, d: int, input_norm_bound: float | None,
                     interval: tuple[float, float]) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(f"x must have shape (n, {d}); got shape {x.shape}.")
    _check.finite(x=x)
    if input_norm_bound is not None and x.size:
        norms = np.sqrt(np.einsum("ij,ij->i", x, x))
        worst = int(np.argmax(norms))
        if norms[worst] > input_norm_bound * (1.0 + 1e-12):
            raise ValueError(f"x must have rows with ||x||_2 <= {input_norm_bound} (the paper's input domain); "
                             f"got ||x[{worst}]||_2={norms[worst]!r}.")
    lo, hi = interval
    slack = 1e-12 * (hi - lo)  # rounding of inputs normalized to the unit sphere
    if x.size and (x.min() < lo - slack or x.max() > hi + slack):
        raise ValueError(f"x must have coordinates in the basis interval [{lo}, {hi}]; got x with "
                         f"min {x.min()!r} and max {x.max()!r}.")
    return x


# ---------------------------------------------------------------------------------------------------------------
# The KAN
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class KAN:
    """The two-layer KAN of the kan paper (arXiv 2605.12648, Section 3.1, Appendix B) with a frozen second layer.

    The trainable parameter ``W`` is passed to every method (shape ``(width, d * p)``); the model holds the frozen
    second layer and the architecture. Build one with :meth:`initialize`, which draws ``c ~ N(0, I_{m p})``; draw
    ``W_0 ~ N(0, I_{m d p})`` with :meth:`initial_parameters`.

    Attributes:
        d: input dimension.
        second_layer: the frozen coefficients ``c``, shape ``(width, p)``.
        basis: the B-spline basis of both layers (its interval must contain ``[-1, 1]`` and the activation's range).
        activation: sigmoid or tanh.
        input_norm_bound: inputs must satisfy ``||x||_2 <= input_norm_bound`` (the paper's ``1``; ``None`` checks only
            that the coordinates lie in the basis interval).
    """

    d: int
    second_layer: np.ndarray
    basis: BSplineBasis = BSplineBasis()
    activation: Activation = ACTIVATIONS["sigmoid"]
    input_norm_bound: float | None = 1.0

    def __post_init__(self) -> None:
        _check.integer(minimum=1, d=self.d)
        object.__setattr__(self, "d", int(self.d))
        if not isinstance(self.basis, BSplineBasis):
            raise TypeError(f"basis must be a BSplineBasis; got {type(self.basis).__name__}.")
        object.__setattr__(self, "activation", activation(self.activation))
        c = np.array(self.second_layer, dtype=np.float64)
        if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] != self.basis.num_basis:
            raise ValueError(f"second_layer must have shape (width, {self.basis.num_basis}) with width >= 1; "
                             f"got shape {c.shape}.")
        _check.finite(second_layer=c)
        c.setflags(write=False)
        object.__setattr__(self, "second_layer", c)
        # The second-layer splines S_j(u) = <c_j, h(u)>, as polynomials span by span (evaluated without h(u)).
        object.__setattr__(self, "_second_layer_pieces", self.basis.span_polynomials(c))
        lo, hi = self.basis.interval
        a_lo, a_hi = self.activation.output_range
        if lo > min(a_lo, -1.0) or hi < max(a_hi, 1.0):
            raise ValueError(f"basis.interval must contain [-1, 1] and the range of {self.activation.name}; "
                             f"got basis.interval={self.basis.interval!r}.")
        if self.input_norm_bound is not None:
            _check.positive(input_norm_bound=self.input_norm_bound)

    @classmethod
    @renamed_arguments(generator="rng")
    def initialize(cls, *, d: int, width: int, rng: np.random.Generator, grid_size: int = 5,
                   spline_order: int = 3, activation: str = "sigmoid", interval: tuple[float, float] = (-1.0, 1.0),
                   input_norm_bound: float | None = 1.0) -> KAN:
        """A KAN with a fresh frozen second layer ``c ~ N(0, I_{width * p})`` drawn from ``rng`` (``generator`` is its
        deprecated name)."""
        _check.integer(minimum=1, d=d, width=width, grid_size=grid_size)
        _check.generator(rng=rng)
        basis = BSplineBasis(grid_size=grid_size, spline_order=spline_order, interval=interval)
        c = rng.standard_normal((int(width), basis.num_basis))
        return cls(d=d, second_layer=c, basis=basis, activation=_activation_of(activation),
                   input_norm_bound=input_norm_bound)

    # -- sizes ----------------------------------------------------------------------------------------------------

    @property
    def width(self) -> int:
        """The hidden width ``m``."""
        return self.second_layer.shape[0]

    @property
    def num_basis(self) -> int:
        """``p``, the number of basis functions per edge."""
        return self.basis.num_basis

    @property
    def parameter_shape(self) -> tuple[int, int]:
        """``(m, d p)``: the shape of ``W``."""
        return self.width, self.d * self.num_basis

    @property
    def num_parameters(self) -> int:
        """``m d p``, the noise dimension of DP-SGD."""
        return self.width * self.d * self.num_basis

    @renamed_arguments(generator="rng")
    def initial_parameters(self, rng: np.random.Generator) -> np.ndarray:
        """``W_0 ~ N(0, I_{m d p})`` (no fan-in scaling: the ``1/sqrt(d)``, ``1/sqrt(m)`` factors do the scaling)."""
        _check.generator(rng=rng)
        return rng.standard_normal(self.parameter_shape)

    # -- evaluation -----------------------------------------------------------------------------------------------

    def validate_inputs(self, x: np.ndarray) -> np.ndarray:
        """``x`` as a float64 ``(n, d)`` array; ``ValueError`` naming ``x`` if non-finite or outside the domain."""
        return _validate_inputs(x, self.d, self.input_norm_bound, self.basis.interval)

    def _check_parameters(self, params: np.ndarray) -> np.ndarray:
        params = np.asarray(params, dtype=np.float64)
        if params.shape != self.parameter_shape:
            raise ValueError(f"params must have shape {self.parameter_shape}; got shape {params.shape}.")
        return params

    def features(self, x: np.ndarray) -> np.ndarray:
        """``h(x)`` for each row: shape ``(n, d p)``, entry ``i p + k`` equal to ``b_k(x_i)``."""
        x = self.validate_inputs(x)
        return self.basis.evaluate(x).reshape(x.shape[0], self.d * self.num_basis)

    def _hidden(self, params: np.ndarray, features: np.ndarray, *, with_gradient: bool) -> Any:
        """Outputs ``f`` and, if asked, ``a = sigma'(s) <c, h'(sigma(s))>`` (shape ``(n, m)``).

        One matrix product for the pre-activations ``s``, then one compiled pass over the ``n x m`` entries: the
        activation, the second-layer spline ``<c_j, h(u)>`` and its slope by Horner's rule on the span polynomials
        (:meth:`BSplineBasis.span_polynomials`), accumulated into ``f`` without forming ``h(u)``.
        """
        s = features @ params.T
        s *= 1.0 / math.sqrt(self.d)
        n, m = s.shape
        basis = self.basis
        u, du = self.activation.value_and_slope(s)
        out = np.zeros(n)
        slope = np.empty((n, m)) if with_gradient else u
        pieces = self._second_layer_pieces  # type: ignore[attr-defined]  # set in __post_init__
        _compiled_hidden()(u, du, pieces, float(basis.knots[0]), 1.0 / basis.spacing,
                           bool(with_gradient), out, slope)
        out *= 1.0 / math.sqrt(m)
        return out, (slope if with_gradient else None)

    def forward(self, params: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``f_W(x)`` for each row of ``x`` (shape ``(n,)``)."""
        params = self._check_parameters(params)
        return self._hidden(params, self.features(x), with_gradient=False)[0]

    def per_example_losses(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``l(y_i f_W(x_i))`` for each example."""
        f = self.forward(params, x)
        return logistic_loss(validate_labels(y, f.shape[0]) * f)

    def loss(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        """The empirical risk ``L_S(W) = (1/n) sum_i l(y_i f_W(x_i))``."""
        return float(np.mean(self.per_example_losses(params, x, y)))

    def output_gradient_factors(self, params: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Factors of ``grad_W f_W(x_i) = outer(A[i], H[i])``: ``A = a(x) / sqrt(m d)`` (n, m), ``H = h(x)`` (n, dp).

        The kan paper's closed form (arXiv 2605.12648, proof of Lemma B.6); ``||grad f|| = ||A[i]|| ||H[i]||``.
        """
        params = self._check_parameters(params)
        features = self.features(x)
        _, a = self._hidden(params, features, with_gradient=True)
        a *= 1.0 / math.sqrt(self.width * self.d)
        return a, features

    def loss_and_gradient_factors(self, params: np.ndarray, x: np.ndarray,
                                  y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-example losses and factors of the per-example loss gradients, in one forward pass.

        Returns ``(losses, A, H)`` with ``grad_W l(y_i f_W(x_i)) = outer(A[i], H[i])``, where
        ``A[i] = l'(y_i f_i) y_i a(x_i) / sqrt(m d)`` and ``H[i] = h(x_i)``.
        """
        params = self._check_parameters(params)
        features = self.features(x)
        y = validate_labels(y, features.shape[0])
        f, a = self._hidden(params, features, with_gradient=True)
        margin = y * f
        a *= (logistic_loss_derivative(margin) * y / math.sqrt(self.width * self.d))[:, None]
        return logistic_loss(margin), a, features

    def gradient(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The mean loss gradient ``(1/n) sum_i grad_W l(y_i f_W(x_i))`` (shape of ``W``): one matrix product."""
        _, a, h = self.loss_and_gradient_factors(params, x, y)
        return (a.T @ h) / max(h.shape[0], 1)

    def single_example_gradient(self, params: np.ndarray, x: np.ndarray, y: float) -> np.ndarray:
        """The dense loss gradient of one example ``x`` (shape ``(d,)``) with label ``y``: shape of ``W``."""
        _, a, h = self.loss_and_gradient_factors(params, np.asarray(x, dtype=np.float64)[None, :], np.array([y]))
        return np.outer(a[0], h[0])

    def per_example_gradient_gram(self, params: np.ndarray, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """The Gram matrix of the (label-signed) output gradients, the NTK features at ``params``.

        ``K[i, j] = <phi_i, phi_j>`` with ``phi_i = y_i grad_W f_W(x_i)`` (``y_i = 1`` if ``y`` is None). At
        ``params = W_0`` the ``phi_i`` are the features of Assumption 3.3 (NTK separability) of the kan paper
        (arXiv 2605.12648); the margin ``gamma*`` is the distance from 0 to their convex hull,
        ``min_{alpha in simplex} alpha^T K alpha``'s square root. By the rank-one form,
        ``K = (A A^T) * (H H^T) * (y y^T)`` (elementwise) with ``A, H`` from :meth:`output_gradient_factors`.
        A direction ``sum_i alpha_i phi_i`` is the matrix ``(alpha * y * A)^T H`` (shape of ``W``).
        """
        a, h = self.output_gradient_factors(params, x)
        gram = (a @ a.T) * (h @ h.T)
        if y is not None:
            y = validate_labels(y, a.shape[0])
            gram *= np.outer(y, y)
        return gram

    def hessian_block_scalars(self, params: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``q[i, j] = <c_j, v_j(x_i)> / (d sqrt(m))``: the Hessian of ``f`` is block-diagonal over hidden units with
        block ``j`` equal to ``q[i, j] h(x_i) h(x_i)^T`` (proof of Lemma B.6), where
        ``v_j = sigma''(s_j) h'(u_j) + sigma'(s_j)^2 h''(u_j)``. Shape ``(n, m)``.
        """
        params = self._check_parameters(params)
        features = self.features(x)
        s = (features @ params.T) / math.sqrt(self.d)
        u, du, ddu = self.activation.derivatives(s)
        pieces = self._second_layer_pieces  # type: ignore[attr-defined]  # set in __post_init__
        _, slope, curvature = self.basis.evaluate_splines(u, pieces, max_derivative=2)
        q = ddu * slope + du**2 * curvature
        return q / (self.d * math.sqrt(self.width))


# ---------------------------------------------------------------------------------------------------------------
# Compiled hidden layer
# ---------------------------------------------------------------------------------------------------------------


def _hidden_loop(u: Any, du: Any, table: Any, knot0: Any, inv_h: Any, with_slope: Any, out: Any,
                 slope: Any) -> None:  # pragma: no cover
    """``out[n] = sum_j S_j(u[n, j])`` and, ``with_slope``, ``slope[n, j] = du[n, j] S_j'(u[n, j])``.

    ``S_j(u) = <c_j, h(u)>`` is given by its span polynomials ``table[j, span, power]`` in ``t = (u - knot_span) / h``;
    ``u = sigma(s)`` and ``du = sigma'(s)`` come in precomputed (vectorized transcendental functions are faster).
    """
    num_rows, m = u.shape
    num_spans, k1 = table.shape[1], table.shape[2]
    k = k1 - 1
    for n in range(num_rows):
        total = 0.0
        for j in range(m):
            x = (u[n, j] - knot0) * inv_h
            span = math.floor(x)
            if span < 0 or span >= num_spans:
                if with_slope:
                    slope[n, j] = 0.0
                continue
            t = x - span
            i = int(span)
            value = table[j, i, k]
            for power in range(k - 1, -1, -1):
                value = value * t + table[j, i, power]
            total += value
            if with_slope:
                deriv = 0.0
                if k >= 1:
                    deriv = k * table[j, i, k]
                    for power in range(k - 1, 0, -1):
                        deriv = deriv * t + power * table[j, i, power]
                slope[n, j] = du[n, j] * deriv * inv_h
        out[n] = total


@functools.cache
def _compiled_hidden() -> Any:
    """:func:`_hidden_loop` compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)(_hidden_loop)
