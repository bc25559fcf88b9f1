"""The reverse direction of :func:`privdyn.plan.dpsgd`: the (ε, δ) of a DP-SGD run that was already trained.

:func:`dpsgd_account` takes what a training script knows (noise multiplier, the sampling rate or the batch size and
n, the steps or the epochs, δ, the sampler, the neighbouring relation and the noise strategy) and returns the ε of
the allow-listed accountant (:data:`privdyn.privacy.accounting.ALLOW_LIST`) with its guarantee label and the full
privacy statement. A combination that is not on the allow-list, or whose accountant's conditions fail, is refused
with :class:`~privdyn.privacy.accounting.NotAccountableError` (its reason): privdyn never accounts one mechanism as
another.

**Sizes.** :func:`resolve_sizes` turns the alternatives into (n, batch size, steps), the sizes the accountants take:

* ``sampling_prob`` r instead of ``batch_size``: with ``n``, the batch size ``r·n`` (it must be a whole number);
  without ``n`` (Poisson sampling only, whose accountants depend on the rate alone), the exact ratio of the float
  ``r`` (:meth:`fractions.Fraction.as_integer_ratio`), so that ``batch_size / n == r`` exactly.
* ``epochs`` E instead of ``num_steps``: T = E·n/B (E/r) steps, rounded up unless it is within 1e-9 (relative) of
  a whole number; rounding up counts at most one step too many, which can only raise ε. A loader that runs a
  different number of steps per epoch (e.g. ⌈n/B⌉ with a last, smaller batch) should give ``num_steps``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

from privdyn import _check
from privdyn.plan._budget import PrivacyStatement
from privdyn.privacy import accounting
from privdyn.privacy.labels import DPSGD_SAMPLERS, NeighboringRelation, Sampler, as_sampler

if TYPE_CHECKING:
    from privdyn.privacy.correlated import Strategy

__all__ = ["DPSGDAccount", "dpsgd_account", "resolve_sizes"]

_NAMES = {"n": "n", "batch_size": "batch_size", "sampling_prob": "sampling_prob", "num_steps": "num_steps",
          "epochs": "epochs"}


def _whole(value: Fraction) -> int | None:
    """``value`` as an int when it is within 1e-9 (relative) of one, else None."""
    nearest = round(value)
    return int(nearest) if nearest >= 1 and abs(value - nearest) <= 1e-9 * nearest else None


def resolve_sizes(*, n: int | None, batch_size: int | None, sampling_prob: float | None, num_steps: int | None,
                  epochs: float | None, sampler: Sampler | str | None,
                  names: Mapping[str, str] = _NAMES) -> tuple[int, int, int, dict[str, object]]:
    """(n, batch_size, num_steps) from the given alternatives (module docstring), and what was derived how.

    ``names`` spells each argument in messages (the CLI passes its option names). Exactly one of ``batch_size`` and
    ``sampling_prob``, and exactly one of ``num_steps`` and ``epochs``, must be given.

    Raises:
        ValueError: both or neither of an alternative pair, a value out of range, ``r·n`` not a whole number,
            or a rate without ``n`` for a sampler other than Poisson.
    """
    def name(key: str) -> str:
        return names[key]

    for first, second in (("batch_size", "sampling_prob"), ("num_steps", "epochs")):
        given = {"batch_size": batch_size, "sampling_prob": sampling_prob, "num_steps": num_steps, "epochs": epochs}
        if given[first] is not None and given[second] is not None:
            raise ValueError(f"give {name(first)} or {name(second)}, not both; got {name(first)}={given[first]!r} "
                             f"and {name(second)}={given[second]!r}.")
        if given[first] is None and given[second] is None:
            raise ValueError(f"{name(first)} or {name(second)} is required.")
    if n is not None:
        _check.integer(minimum=1, **{name("n"): n})
    derived: dict[str, object] = {}
    if sampling_prob is not None:
        _check.scalar(**{name("sampling_prob"): sampling_prob})
        _check.in_range(0.0, 1.0, closed="right", **{name("sampling_prob"): sampling_prob})
        rate = Fraction(float(sampling_prob))
        if n is not None:
            whole = _whole(rate * int(n))
            if whole is None:
                raise ValueError(f"{name('sampling_prob')} x {name('n')} must be a whole batch size (at least 1); "
                                 f"got {float(sampling_prob)!r} x {int(n)} = {float(rate * int(n))!r}.")
            n_, batch = int(n), whole
            derived["batch_size"] = f"{name('sampling_prob')} x {name('n')} = {batch}"
        else:
            if sampler != "poisson":
                raise ValueError(f"{name('sampling_prob')} without {name('n')} is accepted for poisson sampling only "
                                 f"(its accountants depend on the rate alone); sampler={sampler!r} draws batches of "
                                 f"a whole size: give {name('batch_size')} and {name('n')}.")
            batch, n_ = rate.as_integer_ratio()
            derived["rate_only"] = True
    else:
        if n is None:
            raise ValueError(f"{name('batch_size')} needs {name('n')} (the number of training examples).")
        _check.integer(minimum=1, **{name("batch_size"): batch_size})
        if int(batch_size) > int(n):  # type: ignore[arg-type]
            raise ValueError(f"{name('batch_size')} must be <= {name('n')} = {int(n)}; got {batch_size!r}.")
        n_, batch = int(n), int(batch_size)  # type: ignore[arg-type]
    if epochs is not None:
        _check.scalar(**{name("epochs"): epochs})
        _check.positive(**{name("epochs"): epochs})
        exact = Fraction(float(epochs)) * n_ / batch
        whole = _whole(exact)
        steps = whole if whole is not None else max(1, math.ceil(exact))
        formula = (f"{name('epochs')} / {name('sampling_prob')}" if derived.get("rate_only")
                   else f"{name('epochs')} x {name('n')} / {name('batch_size')}")
        derived["num_steps"] = f"{formula} = {float(exact):.10g}" + ("" if whole is not None
                                                                    else f", rounded up to {steps}")
    else:
        _check.integer(minimum=1, **{name("num_steps"): num_steps})
        steps = int(num_steps)  # type: ignore[arg-type]
    return n_, batch, steps, derived


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDAccount:
    """The accounted privacy of a DP-SGD run: ε, its label and accountant, and the statement to publish.

    Attributes:
        inputs: what was given (and the sizes derived from it, see ``derived``).
        epsilon, delta: the (ε, δ) of the run by the allow-listed accountant (epsilon may be inf: no finite ε
            at that δ).
        guarantee: the label of ε (:class:`~privdyn.privacy.labels.Guarantee`).
        accountant: the allow-list row's accountant name.
        statement: the full :class:`~privdyn.plan._budget.PrivacyStatement`.
    """

    inputs: dict[str, object]
    epsilon: float
    delta: float
    guarantee: str
    accountant: str
    statement: PrivacyStatement

    def __post_init__(self) -> None:
        if not isinstance(self.inputs, Mapping):
            raise TypeError(f"inputs must be a mapping of the run's inputs; got {type(self.inputs).__name__}.")
        _check.scalar(epsilon=self.epsilon, delta=self.delta)
        if not float(self.epsilon) >= 0.0:  # inf is a valid epsilon (no guarantee at this delta); NaN is not
            raise ValueError(f"epsilon must be >= 0 (inf allowed); got epsilon={self.epsilon!r}.")
        _check.in_range(0.0, 1.0, closed="left", delta=self.delta)
        for field in ("guarantee", "accountant"):
            if not isinstance(getattr(self, field), str):
                raise TypeError(f"{field} must be a str; got {type(getattr(self, field)).__name__}.")
        if not isinstance(self.statement, PrivacyStatement):
            raise TypeError(f"statement must be a PrivacyStatement; got {type(self.statement).__name__}.")

    def to_json(self) -> dict[str, object]:
        return {"epsilon": self.epsilon, "delta": self.delta,
                "guarantee": self.guarantee, "is_dp_guarantee": self.statement.is_dp_guarantee,
                "accountant": self.accountant, "inputs": dict(self.inputs), "privacy_statement":
                self.statement.to_json()}

    def summary(self) -> str:
        i = self.inputs
        rate = f"sampling rate {i['sampling_prob']:.6g}"
        sizes = rate if i.get("rate_only") else f"batch size {i['batch_size']} of n = {i['n']} ({rate})"
        lines = [f"epsilon = {self.epsilon:.6g} at delta = {self.delta:.3g} (guarantee '{self.guarantee}', "
                 f"accountant {self.accountant})",
                 f"  {i['strategy']} noise, noise_multiplier {i['noise_multiplier']:g}, {i['sampler']} sampling, "
                 f"{i['neighboring']} neighbours, {sizes}, {i['num_steps']} steps"]
        derived = i.get("derived", {})
        assert isinstance(derived, dict)
        lines += [f"  {key} from {how}" for key, how in derived.items() if key != "rate_only"]
        lines += ["", "privacy statement", f"  {self.statement.text()}"]
        return "\n".join(lines)


def dpsgd_account(*, noise_multiplier: float, delta: float, sampler: Sampler | str | None, neighboring: str | None,
                  n: int | None = None, batch_size: int | None = None, sampling_prob: float | None = None,
                  num_steps: int | None = None, epochs: float | None = None, strategy: str | Strategy = "independent",
                  names: Mapping[str, str] = _NAMES) -> DPSGDAccount:
    """ε of a trained DP-SGD run by the allow-listed accountant (module docstring).

    Args:
        noise_multiplier: κ > 0, the noise std on the SUM of clipped per-example gradients divided by the clip
            (Opacus' and dp-accounting's ``noise_multiplier`` under add-remove neighbours).
        delta: in (0, 1).
        sampler: ``"poisson"``, ``"fixed_size"`` or ``"shuffle"`` (required: privdyn never assumes one).
        neighboring: ``"add_remove"``, ``"replace_one"`` or ``"zero_out"`` (required).
        n, batch_size, sampling_prob, num_steps, epochs: the sizes (:func:`resolve_sizes`).
        strategy: the noise strategy, a name of :func:`privdyn.plan._dpsgd.parse_strategy` or a strategy object.
        names: how messages spell the arguments.

    Raises:
        NotAccountableError: the (strategy, sampler, relation) is not on the allow-list or its conditions fail.
        ValueError: bad input (the message names the argument and its valid range).
    """
    from privdyn.plan._dpsgd import _required, _Sizes, parse_strategy, run_statement, strategy_spec

    spell = {**_NAMES, **names}
    kappa_name = spell.get("noise_multiplier", "noise_multiplier")
    _check.scalar(**{kappa_name: noise_multiplier})
    if not (math.isfinite(float(noise_multiplier)) and float(noise_multiplier) > 0.0):
        raise ValueError(f"{kappa_name} must be a finite number > 0 (without noise there is no privacy: epsilon is "
                         f"infinite); got {noise_multiplier!r}.")
    dlt = _check.delta(delta)
    _required(spell.get("sampler", "sampler"), sampler, [choice.value for choice in DPSGD_SAMPLERS],
              "how records join the steps")
    _required(spell.get("neighboring", "neighboring"), neighboring, [r.value for r in NeighboringRelation],
              "which datasets are neighbours")
    sampler = as_sampler(sampler, name=spell.get("sampler", "sampler")).value
    try:
        relation = NeighboringRelation(str(neighboring))
    except ValueError:
        choices = ", ".join(repr(r.value) for r in NeighboringRelation)
        raise ValueError(f"{spell.get('neighboring', 'neighboring')} must be one of {choices}; got "
                         f"{neighboring!r}.") from None
    parsed = parse_strategy(strategy)
    row = accounting.accountant_for(parsed, sampler=str(sampler), neighboring=relation)
    n_, batch, steps, derived = resolve_sizes(n=n, batch_size=batch_size, sampling_prob=sampling_prob,
                                              num_steps=num_steps, epochs=epochs, sampler=sampler, names=spell)
    s = _Sizes(n=n_, batch_size=batch, num_steps=steps, delta=dlt, sampler=str(sampler), neighboring=relation,
               clip=1.0)
    rate_only = bool(derived.get("rate_only"))
    kappa = float(noise_multiplier)
    statement = run_statement(parsed, row, kappa, s, dlt, {},
                              sizes_text=f"rate {batch / n_:.6g}" if rate_only else None)
    inputs: dict[str, object] = {"noise_multiplier": kappa, "sampling_prob": batch / n_, "num_steps": steps,
                              "delta": dlt, "sampler": str(sampler), "neighboring": relation.value,
                              "strategy": strategy_spec(parsed)}
    if rate_only:
        inputs["rate_only"] = True
    else:
        inputs.update(n=n_, batch_size=batch)
    if epochs is not None:
        inputs["epochs"] = float(epochs)
    inputs["derived"] = {k: v for k, v in derived.items() if k != "rate_only"}
    assert statement.epsilon is not None
    return DPSGDAccount(inputs=inputs, epsilon=float(statement.epsilon), delta=dlt, guarantee=row.guarantee.value,
                        accountant=row.accountant, statement=statement)
