"""Privacy accountants, divergences and conversions. No simulation, no I/O."""

from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["Guarantee", "NeighboringRelation", "PrivacyLoss"]
