"""The constants of one noisy-GD problem for the langevin accountant (Chourasia, Ye, Shokri 2021, arXiv 2102.05855).

Corollary 1, Theorem 2, the composition baseline and the extensions all describe the same algorithm, fixed by six
constants: ``step_size`` (eta), ``noise_scale`` (sigma), ``strong_convexity`` (lambda), ``smoothness`` (beta),
``sensitivity`` (S_g) and ``n``. The module-level functions take them as keywords, one call at a time; a
:class:`LangevinSetting` holds them once, checks Corollary 1's conditions once (this is the validation every
function of :mod:`privdyn.privacy.langevin` that takes all six runs), and evaluates the accountants at a Rényi order
and a number of steps. Both spellings give the same numbers: the methods call the functions.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from privdyn import _check
from privdyn.privacy.labels import PrivacyLoss
from privdyn.privacy.langevin.common import _check_convexity, _check_count, _check_step_below_inverse_smoothness

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["LangevinSetting"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class LangevinSetting:
    """Noisy GD on a strongly convex, smooth loss: the constants every langevin accountant shares.

    Chourasia, Ye, Shokri 2021 (arXiv 2102.05855), Algorithm 1 under the assumptions of Corollary 1: a
    ``strong_convexity``-strongly convex, ``smoothness``-smooth per-example loss on a closed convex set,
    ``step_size < 1/smoothness``, total gradient sensitivity ``sensitivity`` over replace-one neighbours, ``n``
    records, only the last iterate released. Construction checks these conditions (``ValueError`` naming the
    parameter, the value and the valid range); the fields broadcast like the functions' arguments.

    Example::

        setting = LangevinSetting(step_size=0.1, noise_scale=1.0, strong_convexity=1.0, smoothness=2.0,
                                  sensitivity=2.0, n=100)
        setting.dynamics_rdp(2.0, num_steps=50)      # == dynamics_rdp(2.0, num_steps=50, **setting.keywords())

    Attributes:
        step_size: eta, 0 < eta < 1/smoothness.
        noise_scale: sigma > 0 (per-step noise std sqrt(2 * eta) * sigma).
        strong_convexity: lambda > 0, <= smoothness.
        smoothness: beta > 0.
        sensitivity: total gradient sensitivity S_g > 0.
        n: dataset size, an integer >= 1.
    """

    step_size: ArrayLike
    noise_scale: ArrayLike
    strong_convexity: ArrayLike
    smoothness: ArrayLike
    sensitivity: ArrayLike
    n: ArrayLike

    def __post_init__(self) -> None:
        _check.positive(step_size=self.step_size, noise_scale=self.noise_scale, sensitivity=self.sensitivity)
        _check_convexity(self.strong_convexity, self.smoothness)
        _check_step_below_inverse_smoothness(self.step_size, self.smoothness)
        _check_count(1, n=self.n)

    def keywords(self) -> dict[str, ArrayLike]:
        """The six constants as the keyword arguments of the module-level functions."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    def dynamics_rdp(self, renyi_order: ArrayLike, *, num_steps: ArrayLike) -> PrivacyLoss:
        """Corollary 1 at this setting (:func:`~privdyn.privacy.langevin.dynamics_rdp`)."""
        from privdyn.privacy.langevin.dynamics import dynamics_rdp

        return dynamics_rdp(renyi_order, num_steps=num_steps, **self.keywords())

    def dynamics_rdp_increment(self, renyi_order: ArrayLike, *, step_index: ArrayLike) -> PrivacyLoss:
        """Iteration k's share of Corollary 1 (:func:`~privdyn.privacy.langevin.dynamics_rdp_increment`)."""
        from privdyn.privacy.langevin.dynamics import dynamics_rdp_increment

        return dynamics_rdp_increment(renyi_order, step_index=step_index, **self.keywords())

    def dynamics_zcdp(self, *, num_steps: ArrayLike | None = None) -> PrivacyLoss:
        """Corollary 1 as zCDP (:func:`~privdyn.privacy.langevin.dynamics_zcdp`; ``None``: every num_steps)."""
        from privdyn.privacy.langevin.dynamics import dynamics_zcdp

        return dynamics_zcdp(num_steps=num_steps, **self.keywords())

    def composition_rdp(self, renyi_order: ArrayLike, *, num_steps: ArrayLike) -> PrivacyLoss:
        """The composition baseline (:func:`~privdyn.privacy.langevin.composition_rdp`)."""
        from privdyn.privacy.langevin.dynamics import composition_rdp

        return composition_rdp(renyi_order, num_steps=num_steps, step_size=self.step_size,
                               noise_scale=self.noise_scale, sensitivity=self.sensitivity, n=self.n)

    def best_gamma_rdp(self, renyi_order: ArrayLike, *, num_steps: ArrayLike) -> PrivacyLoss:
        """The free-gamma extension (:func:`~privdyn.privacy.langevin.best_gamma_rdp`)."""
        from privdyn.privacy.langevin.extensions import best_gamma_rdp

        return best_gamma_rdp(renyi_order, num_steps=num_steps, **self.keywords())

    def tracked_lsi_rdp(self, renyi_order: ArrayLike, *, num_steps: int,
                        init_lsi_constant: ArrayLike | None = None) -> PrivacyLoss:
        """Theorem 2 with the tracked LSI constant (:func:`~privdyn.privacy.langevin.tracked_lsi_rdp`)."""
        from privdyn.privacy.langevin.extensions import tracked_lsi_rdp

        return tracked_lsi_rdp(renyi_order, num_steps=num_steps, init_lsi_constant=init_lsi_constant,
                               **self.keywords())
