"""Words for the code names that series ``params`` carry, for figure legends and titles.

A legend reads ``Thm 5.1 (= F.12), constant 8; zero-out`` where the params say ``theorem_f12``, ``zero_out``: the
names are those of ARCHITECTURE.md's vocabulary, the words those of the papers and of ``docs/notation.md``. A value
with no entry is shown as it is, underscores as spaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["WORDS", "words"]

WORDS: Mapping[str, Mapping[str, str]] = {
    "accountant": {
        "theorem_f12": "Thm 5.1 (= F.12), constant 8",
        "theorem_f12_proved": "Thm F.12 with the proved constant 2",
        "theorem_d9": "Thm 5.4 (= D.9)",
        "dp_accounting": "dp-accounting",
        "amplified_bound": "amplified bound",
    },
    "neighboring": {"zero_out": "zero-out", "replace_one": "replace-one", "add_remove": "add/remove"},
    "sampling": {"without_replacement": "fixed-size batches", "poisson": "Poisson sampling",
                 "fixed_size": "fixed-size batches", "shuffle": "shuffled epochs"},
    "guarantee": {"lower_bound": "lower bound"},
    "dataset": {"breast_cancer": "breast cancer", "digits_1_vs_7": "digits 1 vs 7", "mnist_1_vs_7": "MNIST 1 vs 7",
                "california_housing": "California housing"},
}
"""The words for each params key's values."""


def words(key: str, value: Any) -> str:
    """The words for ``value`` of the params key ``key`` (``words("neighboring", "zero_out") == "zero-out"``)."""
    text = WORDS.get(key, {}).get(str(value))
    return text if text is not None else str(value).replace("_", " ")
