"""Read-only arrays for frozen records (internal)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["read_only"]


def read_only(array: Any, dtype: Any = float) -> np.ndarray:
    """A copy of ``array`` as ``dtype`` (None: its own) that cannot be written: what a frozen record stores."""
    out = np.array(array, dtype=dtype)
    out.setflags(write=False)
    return out
