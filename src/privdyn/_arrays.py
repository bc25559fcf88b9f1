"""Array helpers (internal): read-only arrays for frozen records, scalars for 0-d results."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["read_only", "scalar_or_array"]


def read_only(array: Any, dtype: Any = float) -> np.ndarray:
    """A copy of ``array`` as ``dtype`` (None: its own) that cannot be written: what a frozen record stores."""
    out = np.array(array, dtype=dtype)
    out.setflags(write=False)
    return out


def scalar_or_array(value: Any) -> Any:
    """A NumPy scalar for a 0-d array, the value itself otherwise: what a broadcasting function returns."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
