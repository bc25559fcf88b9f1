"""Sphinx extension: an API page that does not document its package's public names fails the build.

privdyn's packages re-export their public names lazily (PEP 562 ``__getattr__``). When such a name cannot be
imported (an optional dependency missing from the docs environment), autodoc leaves it out without a word, and an
API page can build with nothing on it. This extension turns that into warnings, which ``sphinx-build -W`` makes
errors.

For every module that an ``automodule`` directive documents and that defines ``__all__``, once all pages are read:

* every name of ``__all__`` must be documented on some page, either under the module's own name (``M.name``) or,
  for a class, function or module, as the same object documented elsewhere (``privdyn`` re-exports
  ``privdyn.privacy.Guarantee``; a ``:no-members:`` package page leaves its names to its submodules' pages). A name
  that cannot be imported, or is documented nowhere, gets one warning that names it and, where the import failed,
  the error;
* a page whose directive asks for members (no ``:no-members:``) and that documents none of the names gets one
  warning saying so, in place of one warning per name;
* names the directive lists in ``:exclude-members:`` are left out deliberately and are not required;
* ``api_coverage_kinds`` (default: all four) says which kinds of public name must be documented: ``"class"``,
  ``"function"``, ``"module"``, ``"data"`` (constants; autodoc documents one only where it has a ``#:`` doc comment
  or a docstring, with ``undoc-members`` off). A name that cannot be imported is reported whatever its kind.

Modules without ``__all__`` are outside the check: they declare no public names to compare against (a module that
fails to import is already an autodoc warning).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

from docutils.nodes import Node
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

_ENV_KEY = "api_coverage_requests"


@dataclass(frozen=True)
class Request:
    """One ``automodule`` directive: the page, the module and the options that decide what the page owes."""

    docname: str
    lineno: int
    module: str
    no_members: bool
    excluded: frozenset[str]


def _requests(env: BuildEnvironment) -> dict[str, list[Request]]:
    if not hasattr(env, _ENV_KEY):
        setattr(env, _ENV_KEY, {})
    return cast("dict[str, list[Request]]", getattr(env, _ENV_KEY))


def _recording(base: type[SphinxDirective]) -> type[SphinxDirective]:
    """``base`` (autodoc's ``automodule`` directive) that first records its page, module and options."""

    class RecordingAutomodule(base):  # type: ignore[valid-type, misc]
        def run(self) -> list[Node]:
            excluded = self.options.get("exclude-members") or ""
            request = Request(
                docname=self.env.docname,
                lineno=self.lineno,
                module=self.arguments[0].strip(),
                no_members="no-members" in self.options,
                excluded=frozenset(name.strip() for name in excluded.split(",") if name.strip()),
            )
            _requests(self.env).setdefault(self.env.docname, []).append(request)
            return cast("list[Node]", super().run())

    return RecordingAutomodule


def _wrap_automodule(app: Sphinx, config: Config) -> None:
    # autodoc registers its directives on config-inited; this handler runs after it (higher priority number).
    base, _ = directives.directive("automodule", None, None)
    if base is None:
        raise RuntimeError("api_coverage needs sphinx.ext.autodoc: no automodule directive is registered.")
    app.add_directive("automodule", _recording(base), override=True)


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _requests(env).pop(docname, None)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    mine, theirs = _requests(env), _requests(other)
    for docname in docnames:
        if docname in theirs:
            mine[docname] = theirs[docname]


def _resolve(fullname: str, modules: set[str]) -> Any:
    """The object a documented dotted name refers to, or ``None`` where it does not resolve."""
    parts = fullname.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        module = sys.modules.get(prefix)
        if module is None and prefix in modules:
            try:
                module = importlib.import_module(prefix)
            except Exception:  # noqa: BLE001 - a page documenting a broken module already warned
                return None
        if module is None:
            continue
        obj: Any = module
        try:
            for attribute in parts[cut:]:
                obj = getattr(obj, attribute)
        except Exception:  # noqa: BLE001
            return None
        return obj
    return None


def _has_identity(obj: Any) -> bool:
    # Identity says "documented elsewhere" only for objects that are defined once; two equal constants (small ints,
    # interned strings) would be the same object by chance.
    return inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)


def _check(app: Sphinx, env: BuildEnvironment) -> None:
    py = env.get_domain("py")
    objects: dict[str, Any] = py.data["objects"]
    modules: set[str] = set(py.data["modules"])
    documented_by_id: dict[int, list[tuple[str, str]]] = {}
    for fullname, entry in objects.items():
        obj = _resolve(fullname, modules)
        if obj is not None and _has_identity(obj):
            documented_by_id.setdefault(id(obj), []).append((fullname, entry.docname))

    kinds = frozenset(app.config.api_coverage_kinds)
    for docname in sorted(_requests(env)):
        for request in _requests(env)[docname]:
            _check_request(request, objects, documented_by_id, kinds)


def _kind(obj: Any) -> str:
    if inspect.isclass(obj):
        return "class"
    if inspect.isroutine(obj):
        return "function"
    if inspect.ismodule(obj):
        return "module"
    return "data"


def _check_request(request: Request, objects: dict[str, Any], documented_by_id: dict[int, list[tuple[str, str]]],
                   kinds: frozenset[str]) -> None:
    location = (request.docname, request.lineno)
    try:
        module: ModuleType = importlib.import_module(request.module)
    except Exception as exc:  # noqa: BLE001 - reported, not raised: -W turns it into an error
        logger.warning("api_coverage: %s cannot be imported (%s: %s)", request.module, type(exc).__name__, exc,
                       location=location, type="api_coverage", subtype="import")
        return
    public = getattr(module, "__all__", None)
    if public is None:
        return
    names = [name for name in public if name not in request.excluded]
    here = 0
    missing: list[str] = []
    for name in names:
        fullname = f"{request.module}.{name}"
        try:
            obj = getattr(module, name)
        except Exception as exc:  # noqa: BLE001
            missing.append(f"{name} cannot be imported ({type(exc).__name__}: {exc})")
            continue
        places = []
        if fullname in objects:
            places.append(objects[fullname].docname)
        if _has_identity(obj):
            places.extend(docname for _, docname in documented_by_id.get(id(obj), []))
        here += request.docname in places
        if not places and _kind(obj) in kinds:
            missing.append(f"{name} is documented on no page")
    if names and here == 0 and not request.no_members:
        logger.warning("api_coverage: this page documents none of the %d public names of %s (its __all__)%s",
                       len(names), request.module, "".join(f"; {item}" for item in missing),
                       location=location, type="api_coverage", subtype="empty")
        return
    for item in missing:
        logger.warning("api_coverage: %s (a public name of %s, in its __all__)", item, request.module,
                       location=location, type="api_coverage", subtype="missing")


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.autodoc")
    app.add_config_value("api_coverage_kinds", ("class", "function", "module", "data"), "env", types=(tuple, list))
    app.connect("config-inited", _wrap_automodule, priority=900)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
