"""Privacy amplification by i.i.d. per-step participation for DP-SGD with correlated noise.

Modules (``docs/amplification.md``): :mod:`.pair` (the Theorem F.8 dominating pair, exact privacy loss on short
horizons), :mod:`.spectral` (the upper bound by domination with a Poisson-subsampled Gaussian), :mod:`.blocks` (the
upper bound by domination with independent two-step blocks, lambda-CGD), :mod:`.conditional`
(the upper bound by conditional composition of mixture-of-Gaussians PLDs),
:mod:`.monte_carlo` (the Monte-Carlo estimate), :mod:`.accountant` (the entry points).
"""

from privdyn.privacy.amplification.accountant import METHODS, amplified_epsilon, amplified_noise_multiplier
from privdyn.privacy.amplification.conditional import BoundSettings
from privdyn.privacy.amplification.pair import NEIGHBORING, SAMPLERS

__all__ = ["METHODS", "NEIGHBORING", "SAMPLERS", "BoundSettings", "amplified_epsilon", "amplified_noise_multiplier"]
