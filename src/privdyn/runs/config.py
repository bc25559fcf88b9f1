"""Typed, frozen experiment configs and the ``--set KEY=VALUE`` override rules (ARCHITECTURE.md, CLI contract).

An experiment's config is a frozen, keyword-only dataclass deriving from :class:`ExperimentConfig`. Field types
are plain annotations (``float``, ``int``, ``bool``, ``str``, ``tuple[float, ...]``, ``X | None``, ``Literal``,
or a nested config dataclass); cross-field constraints go in :meth:`ExperimentConfig.validate`, which runs on
construction. Every problem raises :class:`ConfigError`, a ``ValueError`` whose message is one line naming the key,
the value and what is allowed.

Override semantics (:func:`apply_overrides`):

* ``KEY`` is a key of the config as ``privdyn show`` prints it, dotted for nested configs;
* ``VALUE`` is parsed as JSON when it parses, else taken as a string;
* an integer is accepted where a float is expected, a JSON list where a tuple is expected, and a scalar given for
  a list-valued key becomes a one-element tuple;
* ``null`` is accepted only where the field allows None; a key given twice is an error.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, get_args, get_origin

__all__ = ["DEFAULT_EXECUTOR", "DEFAULT_OUT_DIR", "EXECUTOR_SPECS", "ConfigError", "ExperimentConfig",
           "apply_overrides", "has_key", "parse_overrides"]

DEFAULT_OUT_DIR = Path("privdyn-results")
"""Where ``privdyn run`` and ``privdyn reproduce`` write when ``--out`` is not given."""

EXECUTOR_SPECS = ("serial", "local", "dask-local", "tcp://HOST:PORT")
"""The ``--executor`` values (see :func:`privdyn.runs.runner.open_executor`)."""

DEFAULT_EXECUTOR = "local"
"""The executor of a run that names none (one of :data:`EXECUTOR_SPECS`)."""


class ConfigError(ValueError):
    """An invalid config or override; the message is one line."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExperimentConfig:
    """Base class of every experiment config.

    Subclasses declare typed fields with defaults (the paper's setting) and override :meth:`validate` for
    cross-field constraints, raising :class:`ConfigError` (or ``ValueError``, which is re-raised as one).
    ``quick_overrides`` maps keys to the values ``--quick`` uses.
    """

    quick_overrides: ClassVar[Mapping[str, Any]] = {}

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            coerced = _coerce(field.name, _field_types(type(self))[field.name], value)
            object.__setattr__(self, field.name, coerced)
        try:
            self.validate()
        except ConfigError:
            raise
        except (ValueError, TypeError) as exc:
            raise ConfigError(_one_line(str(exc))) from exc

    def validate(self) -> None:
        """Cross-field constraints; raise ``ValueError`` naming the keys involved."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, ExperimentConfig):
                out[field.name] = value.to_dict()
            elif isinstance(value, tuple):
                out[field.name] = list(value)
            else:
                out[field.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown config key {unknown[0]!r}; valid keys: {', '.join(sorted(known))}.")
        return cls(**dict(data))

    def quick(self) -> Self:
        """The config ``--quick`` runs (this config with :attr:`quick_overrides` applied)."""
        return self.replace(**self.quick_overrides)

    def replace(self, **changes: Any) -> Self:
        return dataclasses.replace(self, **changes)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _type_name(annotation: Any) -> str:
    if annotation is float:
        return "a number"
    if annotation is int:
        return "an integer"
    if annotation is bool:
        return "true or false"
    if annotation is str:
        return "a string"
    origin = get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(a) for a in get_args(annotation))
    if origin is tuple:
        return f"a list of {_type_name(get_args(annotation)[0])}s".replace("a numbers", "numbers")
    if origin in (typing.Union, types.UnionType):
        parts = [a for a in get_args(annotation) if a is not type(None)]
        return " or ".join(_type_name(p) for p in parts) + " or null"
    return getattr(annotation, "__name__", str(annotation))


def _coerce(key: str, annotation: Any, value: Any) -> Any:
    """Coerce ``value`` to ``annotation`` under the override rules, or raise :class:`ConfigError`."""
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = get_args(annotation)
        if value is None:
            if type(None) in args:
                return None
            raise ConfigError(f"{key} does not accept null; expected {_type_name(annotation)}.")
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(key, arg, value)
            except ConfigError as exc:
                errors.append(exc)
        raise ConfigError(f"{key} must be {_type_name(annotation)}; got {json.dumps(value, default=str)}.")
    if value is None:
        raise ConfigError(f"{key} does not accept null; expected {_type_name(annotation)}.")
    if isinstance(annotation, type) and issubclass(annotation, ExperimentConfig):
        if isinstance(value, annotation):
            return value
        if isinstance(value, Mapping):
            return annotation.from_dict(value)
        raise ConfigError(f"{key} must be an object with keys of {annotation.__name__}; got {value!r}.")
    if annotation is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{key} must be true or false; got {json.dumps(value, default=str)}.")
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return int(value)
        raise ConfigError(f"{key} must be an integer; got {json.dumps(value, default=str)}.")
    if annotation is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ConfigError(f"{key} must be a finite number; got {value!r}.")
            return float(value)
        raise ConfigError(f"{key} must be a number; got {json.dumps(value, default=str)}.")
    if annotation is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{key} must be a string; got {json.dumps(value, default=str)}.")
    if origin is Literal:
        allowed = get_args(annotation)
        if value in allowed and type(value) in {type(a) for a in allowed}:
            return value
        raise ConfigError(f"{key} must be {_type_name(annotation)}; got {json.dumps(value, default=str)}.")
    if origin is tuple:
        (item_type, *rest) = get_args(annotation)
        if rest != [Ellipsis]:
            raise TypeError(f"config field {key}: only homogeneous tuple[X, ...] fields are supported.")
        items = value if isinstance(value, list | tuple) else [value]
        if not items:
            raise ConfigError(f"{key} must be a non-empty list of {_type_name(item_type)}s.")
        return tuple(_coerce(f"{key}[{i}]", item_type, v) for i, v in enumerate(items))
    raise TypeError(f"config field {key}: unsupported annotation {annotation!r}.")


def parse_overrides(pairs: Iterable[str]) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` strings into a mapping (VALUE as JSON when it parses, else the raw string).

    A VALUE that opens a JSON list, object or string (``[``, ``{``, ``"``) but does not parse is an error (it would
    otherwise be taken as a string and reported as a wrong type)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set expects KEY=VALUE; got {pair!r}.")
        if key in out:
            raise ConfigError(f"--set key {key!r} given twice.")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            if raw.strip()[:1] in ("[", "{", '"'):  # meant as JSON (a list, an object, a quoted string)
                raise ConfigError(f"--set {key}: the value {raw.strip()!r} is malformed JSON ({exc.msg} at character "
                                  f"{exc.pos}); write a list as [2, 8], an object as {{\"key\": 1}}.") from None
            value = raw
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{key} must be finite; got {raw!r}.")
        out[key] = value
    return out


def apply_overrides(config: ExperimentConfig, overrides: Mapping[str, Any], *, _prefix: str = "") -> ExperimentConfig:
    """Return ``config`` with dotted-key ``overrides`` applied and the whole result validated."""
    nested: dict[str, Any] = {}
    for key, value in overrides.items():
        head, _, tail = key.partition(".")
        names = {f.name for f in dataclasses.fields(config)}
        if head not in names:
            raise ConfigError(f"unknown config key {_prefix + key!r}; valid keys: "
                              f"{', '.join(_prefix + n for n in sorted(names))}.")
        current = getattr(config, head)
        if tail:
            if not isinstance(current, ExperimentConfig):
                raise ConfigError(f"unknown config key {_prefix + key!r}: {_prefix + head} has no nested keys.")
            nested.setdefault(head, {})[tail] = value
        else:
            if isinstance(current, ExperimentConfig) and not isinstance(value, Mapping):
                raise ConfigError(f"{_prefix + key} is a group of keys; set its members as {_prefix + key}.NAME=VALUE.")
            nested[head] = value
    changes: dict[str, Any] = {}
    for head, value in nested.items():
        current = getattr(config, head)
        if isinstance(current, ExperimentConfig) and isinstance(value, dict):
            changes[head] = apply_overrides(current, value, _prefix=f"{_prefix}{head}.")
        else:
            changes[head] = value
    try:
        return dataclasses.replace(config, **changes)
    except (TypeError, ValueError) as exc:
        message = _one_line(str(exc))
        if _prefix:  # a nested group's validation names its own key: qualify it (d -> privacy.d)
            names = {f.name for f in dataclasses.fields(config)}
            first = message.split(" ", 1)[0]
            message = _prefix + message if first in names else f"{_prefix.rstrip('.')}: {message}"
        if isinstance(exc, ConfigError) and not _prefix:
            raise
        raise ConfigError(message) from exc


def has_key(config: ExperimentConfig, key: str) -> bool:
    """Whether the dotted ``key`` names a key of ``config`` (a field, or a field of a nested config)."""
    head, _, tail = key.partition(".")
    if head not in {f.name for f in dataclasses.fields(config)}:
        return False
    current = getattr(config, head)
    return not tail or (isinstance(current, ExperimentConfig) and has_key(current, tail))
