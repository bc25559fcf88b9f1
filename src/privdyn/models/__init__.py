"""Models with closed-form per-example gradients: the B-spline basis, the kan paper's KAN, logistic regression.

Every public name is importable from here; the modules stay importable as namespaces (``privdyn.models.kan``, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privdyn import _lazy

_EXPORTS: dict[str, tuple[str, ...]] = {
    "bspline": ("BSplineBasis", "bspline_bounds", "cardinal_pieces", "num_basis"),
    "kan": ("ACTIVATIONS", "KAN", "Activation", "activation", "logistic_loss", "logistic_loss_derivative"),
    "logistic": ("LogisticRegression",),
}
_SUBMODULES = ("bspline", "kan", "logistic")

__getattr__, __dir__, __all__ = _lazy.attach(__name__, _EXPORTS, submodules=_SUBMODULES)

if TYPE_CHECKING:
    from privdyn.models import bspline as bspline
    from privdyn.models import kan as kan
    from privdyn.models import logistic as logistic
    from privdyn.models.bspline import BSplineBasis as BSplineBasis
    from privdyn.models.bspline import bspline_bounds as bspline_bounds
    from privdyn.models.bspline import cardinal_pieces as cardinal_pieces
    from privdyn.models.bspline import num_basis as num_basis
    from privdyn.models.kan import ACTIVATIONS as ACTIVATIONS
    from privdyn.models.kan import KAN as KAN
    from privdyn.models.kan import Activation as Activation
    from privdyn.models.kan import activation as activation
    from privdyn.models.kan import logistic_loss as logistic_loss
    from privdyn.models.kan import logistic_loss_derivative as logistic_loss_derivative
    from privdyn.models.logistic import LogisticRegression as LogisticRegression
