"""Shuffled epochs: why privdyn refuses them, with the numbers that show it.

A shuffled epoch puts each record in exactly one batch of a random partition; reporting it with a Poisson
accountant at rate B/n is common and can under-report epsilon (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha &
Zhang, "How Private are DP-SGD Implementations?", ICML 2024, arXiv 2403.17673; multi-epoch: "Scalable DP-SGD:
Shuffling vs. Poisson Subsampling", NeurIPS 2024, arXiv 2411.04205). privdyn knows no theorem that bounds shuffled
DP-SGD with Gaussian noise tightly enough to use, so it refuses, and the refusal prints two numbers side by side:

* the Poisson epsilon a user would otherwise have trusted (dp-accounting's PLD of the Poisson-subsampled Gaussian at
  rate B/n over the same steps, add-remove, as Opacus reports it);
* a valid **lower bound** on the true epsilon of the shuffled run, from one pair of neighbouring datasets with
  linear losses (gradients are constants of norm ``clip``, so the released noisy sums are the batch sums plus
  noise, as in Chua et al.'s attack):

  - ``add_remove`` / ``zero_out``: every other record has gradient 0 and the differing record gradient ``g``: the
    record lands in a uniformly random full batch, so one epoch is the random-allocation pair with noise
    ``kappa``;
  - ``replace_one``: every other record has gradient ``-g``, the differing record ``+g`` against ``-g``: the batch
    holding it moves by ``2g``, the random-allocation pair with noise ``kappa / 2``.

  Only the ``n // B`` full batches of each epoch and only whole epochs (of ``ceil(n / B)`` steps) are used (ignoring
  the rest is post-processing, which cannot raise epsilon), so the record joins the used batches with
  probability ``rho = (n // B) B / n``. Epochs reshuffle independently, so the pair composes. Its epsilon is
  bounded below by :func:`privdyn.privacy.random_allocation.epsilon_lower_bound` (convex-order contraction
  throughout, then dp-accounting's optimistic PLD).
"""

from __future__ import annotations

import dataclasses

from privdyn.privacy import random_allocation
from privdyn.privacy.labels import NeighboringRelation

__all__ = ["ShuffleEvidence", "shuffle_evidence"]

_LOWER_BOUND_GRID = random_allocation.AllocationGrid(value_discretization_interval=1e-3, tail_spacing=5e-2,
                                                     bulk_points_per_sd=10.0)
"""A coarse grid: the lower bound is valid on any grid, and a refusal should come back in seconds."""


@dataclasses.dataclass(frozen=True)
class ShuffleEvidence:
    """What a refusal of shuffled epochs prints.

    Attributes:
        poisson_epsilon: dp-accounting's Poisson epsilon at rate B/n over the same steps (add-remove).
        lower_bound: a valid lower bound on the shuffled run's epsilon (0 if less than one whole epoch runs).
        epochs: whole epochs used by the lower bound.
        batches_per_epoch: full batches per epoch used by the lower bound.
    """

    poisson_epsilon: float
    lower_bound: float
    epochs: int
    batches_per_epoch: int

    def describe(self) -> str:
        """One sentence for the refusal."""
        verdict = ("above" if self.lower_bound > self.poisson_epsilon else "not above")
        lower = (f"shuffled epochs have epsilon >= {self.lower_bound:.4g} (a valid lower bound from one pair of "
                 f"neighbouring datasets over {self.epochs} whole epoch(s) of {self.batches_per_epoch} full "
                 f"batches, Chua et al. 2024's construction; {verdict} the Poisson number)"
                 if self.epochs else "no whole epoch runs, so no lower bound is shown")
        return (f"Poisson accounting at rate batch_size/n (add-remove, as Opacus reports it) would report epsilon = "
                f"{self.poisson_epsilon:.4g}; "
                f"{lower}. Use sampler='random_allocation' (each record in exactly one step per epoch, accounted "
                f"exactly) or sampler='poisson'.")


def shuffle_evidence(noise_multiplier: float, *, n: int, batch_size: int, num_steps: int, delta: float,
                     neighboring: NeighboringRelation) -> ShuffleEvidence:
    """The Poisson epsilon and a valid lower bound on the epsilon of shuffled DP-SGD (see the module docstring).

    Args:
        noise_multiplier: kappa > 0 (noise std on the sum of clipped gradients, divided by the clip).
        n, batch_size, num_steps: dataset size, batch size B <= n, steps T.
        delta: in (0, 1).
        neighboring: the relation the user asked for.
    """
    from dp_accounting.pld import privacy_loss_distribution

    rate = batch_size / n
    poisson = privacy_loss_distribution.from_gaussian_mechanism(
        noise_multiplier, sampling_prob=rate, use_connect_dots=True, value_discretization_interval=1e-3)
    poisson_epsilon = float(poisson.self_compose(num_steps).get_epsilon_for_delta(delta))
    full = n // batch_size
    steps_per_epoch = -(-n // batch_size)
    epochs = num_steps // steps_per_epoch
    sigma = noise_multiplier / 2.0 if neighboring == NeighboringRelation.REPLACE_ONE else noise_multiplier
    lower = 0.0
    if epochs:
        lower = random_allocation.epsilon_lower_bound(
            sigma, steps_per_epoch=full, num_epochs=epochs, delta=delta, participation=full * batch_size / n,
            grid=_LOWER_BOUND_GRID)
    return ShuffleEvidence(poisson_epsilon=poisson_epsilon, lower_bound=max(lower, 0.0), epochs=epochs,
                           batches_per_epoch=full)
