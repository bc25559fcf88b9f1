"""Privacy accountants, divergences and conversions. No simulation, no I/O."""

from privdyn.privacy.amplification import amplified_epsilon
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["Guarantee", "NeighboringRelation", "PrivacyLoss", "amplified_epsilon"]
