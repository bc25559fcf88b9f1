"""A structure report of ``src/privdyn``: the numbers a refactor of its package layout is judged by.

Usage::

    python tools/structure.py [--root REPO] [--json]

It reads the source with :mod:`ast` only (nothing is imported) and prints a table, or with ``--json`` one JSON
document, of:

(a) **private cross-package imports**: an import that takes an underscore name of another package. The owner of a
    private module path (``privdyn.plan._hsgd._surrogate``) is the package above its first underscore component
    (``privdyn.plan``); the owner of an underscore name (``from privdyn.dynamics.dpgd.sde import _drift``) is the
    package of the module it comes from (``privdyn.dynamics.dpgd``; for ``from P import _x`` with ``P`` a package,
    ``P`` itself). An import counts when the importing file lies outside the owner. Dunder names do not count. Every
    import statement is scanned: module level, inside functions and under ``if TYPE_CHECKING:`` (a type-only import
    still couples to the private name). Counted per statement (one per imported module) and per name taken (the
    underscore names, or every name taken from a private module, or the private module itself); each is listed.
(b) **upward imports**: an import, executed at run time, whose target is the ``__init__`` of a package that encloses
    the importing file: ``from privdyn.privacy import X`` in ``privdyn/privacy/hsgd/accountant.py``, ``from privdyn
    import Spectrum`` anywhere in the package, ``import privdyn.plan`` in ``privdyn/plan/_dpgd.py``. Importing a
    submodule through its package (``from privdyn.privacy import conversions``) targets the submodule and is not
    upward. A package ``__init__`` typically imports its submodules, so such an import makes the file depend on its
    own ancestors (a circle, or one that a lazy re-export hides).
(c) **circles between folders**: strongly connected components (Tarjan) of the module import graph with more than
    one module whose files lie in more than one folder (a package's ``__init__.py`` lies in the package's folder).
    An edge goes from the importing file to the module its import resolves to: the submodule where ``from P import
    m`` names one, else the longest module prefix of the imported name (``from P import name`` -> ``P/__init__``). The
    graph is built twice: with the module-level imports only (those that run on import; ``if TYPE_CHECKING:``
    blocks excluded), and with the function-level (lazy) imports added. A name that a package re-exports lazily
    (``privdyn._lazy.attach``) adds an edge to the module that defines it too. The same is reported for the folder
    graph (folder A -> folder B when a file of A imports a file of B; a subpackage is its own folder, and each module
    directly in ``src/privdyn`` its own node): its strongly connected components of more than one node, the folders
    that depend on each other.
(d) **private re-exports of the packages**: the underscore names that the ``__init__.py`` of each package imports
    and does not use itself (an underscore module that the ``__init__`` calls, as ``_lazy.attach(...)``, is its own
    helper, not a re-export), counted for every package and, separately, for the packages named after a paper key
    (``langevin``, ``hsgd``, ``dpgd``, ``kan``); the table lists every package with one and every paper package. Of
    these, "used
    through the package" counts names some other file (``src``, ``tests``, ``benchmarks``, ``tools``,
    ``examples``) takes from the package itself (``from P import _x``, ``alias._x`` on a name bound to ``P``, or a
    string ``"P._x"``, as in ``monkeypatch.setattr``); "named outside its folder" counts names that occur (as a
    name, an attribute, an imported name, or a string equal to or ending in ``.`` and the name) in some file outside
    the package's folder, however imported; "named nowhere else" counts names that occur in no file other than the
    ``__init__`` and the module the name comes from.
(e) **repeated vocabulary**, by syntactic heuristics (like a grep, but on the syntax tree; they can miss a check
    written another way and count one that is not a range check): the assignments to a name ``SAMPLERS`` (with their
    contents where literal); and the δ range checks: (1) a call to a function whose name contains ``range``,
    ``prob`` or ``unit`` with a keyword argument or a string first argument named ``delta`` (or ``*_delta``,
    ``delta_*``), as ``_check.in_range(0.0, 1.0, delta=delta)`` or ``_prob("delta", delta)``; (2) an ``if`` or
    ``assert`` test that compares a delta-named name or attribute with the constant 0 and with the constant 1, as
    ``if not 0 < delta < 1``. Each is listed, so a reader can judge the heuristic.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["PAPER_KEYS", "Edge", "Report", "build_report", "main"]

PACKAGE = "privdyn"
PAPER_KEYS = ("langevin", "hsgd", "dpgd", "kan")
USER_DIRS = ("src", "tests", "benchmarks", "tools", "examples")
_DELTA = re.compile(r"^(delta|\w+_delta|delta_\w+)$")
_CHECKER = re.compile(r"range|prob|unit", re.IGNORECASE)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True)
class Edge:
    """One imported module (and the names taken from it) of one import statement."""

    importer: str
    file: str
    line: int
    target: str  # the module the statement names (a package's __init__ for ``from P import name``)
    names: tuple[str, ...]  # names taken from target; () for the module itself
    level: str  # "module", "function" or "type_checking"
    resolved: tuple[str, ...] = ()  # the modules that define names a package re-exports lazily


@dataclass
class Report:
    """Everything the tool measures; ``counts`` is the table's first part, the rest lists what was counted."""

    counts: dict[str, int]
    private_imports: list[dict[str, object]]
    upward_imports: list[dict[str, object]]
    circles_module_level: list[list[str]]
    circles_with_lazy_imports: list[list[str]]
    folder_circles_module_level: list[dict[str, list[str]]]
    folder_circles_with_lazy_imports: list[dict[str, list[str]]]
    private_reexports: list[dict[str, object]]
    samplers: list[dict[str, object]]
    delta_checks: list[dict[str, object]]


def _modules(src: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of the package (a package is its ``__init__.py``)."""
    modules = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _longest_module(dotted: str, modules: dict[str, Path]) -> str | None:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in modules:
            return prefix
    return None


def _literal(tree: ast.AST, node: ast.expr | None) -> object:
    """A literal argument, or the literal a module-level name it refers to is assigned."""
    if isinstance(node, ast.Name):
        for statement in getattr(tree, "body", []):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target] if isinstance(
                statement, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == node.id for t in targets):
                node = statement.value
                break
    try:
        return ast.literal_eval(node) if node is not None else None
    except ValueError:
        return None


def _lazy_exports(package: str, tree: ast.AST) -> dict[str, str]:
    """Name -> defining module of the names a package ``__init__`` re-exports through ``_lazy.attach``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "attach":
            exports = _literal(tree, node.args[1] if len(node.args) > 1 else None)
            aliases = _literal(tree, next((k.value for k in node.keywords if k.arg == "aliases"), None))
            found: dict[str, str] = {}
            if isinstance(exports, dict):
                found.update({name: f"{package}.{module}" for module, names in exports.items() for name in names})
            if isinstance(aliases, dict):
                found.update({name: f"{package}.{module}" for name, (module, _) in aliases.items()})
            return found
    return {}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_statements(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with where it runs: ``module``, ``function`` or ``type_checking``."""

    def walk(node: ast.AST, level: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                continue  # an import is a statement: expressions hold none
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, level
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from walk(child, "type_checking" if level == "type_checking" else "function")
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), "type_checking")
                for statement in child.orelse:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), level)
            else:
                yield from walk(child, level)

    yield from walk(tree, "module")


def _edges(name: str, path: Path, tree: ast.AST, modules: dict[str, Path], root: Path,
           lazy: dict[str, dict[str, str]]) -> list[Edge]:
    package = name if _is_package(name, modules) else name.rpartition(".")[0]
    file = path.relative_to(root).as_posix()
    edges: list[Edge] = []
    for statement, level in _import_statements(tree):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                target = _longest_module(alias.name, modules)
                if target is not None:
                    edges.append(Edge(name, file, statement.lineno, target, (), level))
            continue
        if statement.level:
            base_parts = package.split(".")[: len(package.split(".")) - (statement.level - 1)]
            base = ".".join(base_parts + ([statement.module] if statement.module else []))
        else:
            base = statement.module or ""
        if base != PACKAGE and not base.startswith(PACKAGE + "."):
            continue
        taken: dict[str, list[str]] = {}
        for alias in statement.names:
            submodule = f"{base}.{alias.name}"
            if submodule in modules:
                taken.setdefault(submodule, [])
            else:
                target = _longest_module(base, modules)
                if target is not None:
                    taken.setdefault(target, []).append(alias.name)
        for target, names in taken.items():
            definers = sorted({lazy.get(target, {}).get(n, target) for n in names} - {target})
            resolved = tuple(d for d in (_longest_module(d, modules) for d in definers) if d is not None)
            edges.append(Edge(name, file, statement.lineno, target, tuple(names), level, resolved))
    return edges


def _owner(edge: Edge, modules: dict[str, Path]) -> tuple[str | None, list[str]]:
    """The outermost package whose private part the edge takes, and the private names it takes."""
    parts = edge.target.split(".")
    owner = None
    for index, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:index])
            break
    names = [name for name in edge.names if _private(name)]
    if names and owner is None:
        owner = edge.target if _is_package(edge.target, modules) else edge.target.rpartition(".")[0]
    if owner is not None and not names and not edge.names:
        names = [edge.target.rpartition(".")[2]]
    elif owner is not None and not names:
        names = list(edge.names)
    return owner, names


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def _cross_folder_circles(edges: list[Edge], modules: dict[str, Path], levels: set[str]) -> list[list[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for edge in edges:
        if edge.level in levels:
            graph[edge.importer].update({edge.target, *edge.resolved} - {edge.importer})
    return [component for component in _strongly_connected(graph)
            if len({modules[member].parent for member in component}) > 1]


@dataclass(frozen=True)
class _Uses:
    """What one file refers to: names (identifiers, attributes, imported names), string constants, the names it
    imports from each module (``from M import n``), the names bound to modules (``import M as a``, ``from P import
    m``), and its attribute accesses as (the accessed expression, the attribute)."""

    names: frozenset[str]  # including the last component of every string constant
    strings: frozenset[str]
    from_imports: frozenset[tuple[str, str]]
    module_aliases: frozenset[tuple[str, str]]  # (alias, dotted module name it may stand for)
    attributes: frozenset[tuple[str, str]]


def _folder_circles(edges: list[Edge], modules: dict[str, Path], levels: set[str], root: Path
                    ) -> list[dict[str, list[str]]]:
    """Strongly connected components of the folder graph: folder A -> folder B when a file of A imports one of B.

    The modules directly in ``src/privdyn`` (the substrate, the CLI) are each their own node: as one folder, the
    substrate that everything imports and the CLI that imports everything would make one circle of the whole package.
    """
    def folder(module: str) -> str:
        path = modules[module]
        if path.parent == root / "src" / PACKAGE and path.name != "__init__.py":
            return path.relative_to(root).as_posix()
        return path.parent.relative_to(root).as_posix()

    graph: dict[str, set[str]] = {folder(name): set() for name in modules}
    for edge in edges:
        if edge.level in levels:
            graph[folder(edge.importer)].update({folder(t) for t in (edge.target, *edge.resolved)})
    for node, successors in graph.items():
        successors.discard(node)
    circles = []
    for component in _strongly_connected(graph):
        members = set(component)
        closing = sorted({(e.file, e.line, e.level, t) for e in edges if e.level in levels
                          for t in (e.target, *e.resolved)
                          if {folder(e.importer), folder(t)} <= members and folder(t) != folder(e.importer)})
        circles.append({"folders": component,
                        "imports": [f"{file}:{line} [{level}] -> {target}" for file, line, level, target in closing]})
    return circles


def _uses(tree: ast.AST) -> _Uses:
    names: set[str] = set()
    strings: set[str] = set()
    from_imports: set[tuple[str, str]] = set()
    aliases: set[tuple[str, str]] = set()
    attributes: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
            if isinstance(node.value, ast.Name | ast.Attribute):
                attributes.add((ast.unparse(node.value), node.attr))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.name.rpartition(".")[2])
                aliases.add((alias.asname or alias.name, alias.name))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                names.add(alias.name)
                from_imports.add((node.module or "", alias.name))
                aliases.add((alias.asname or alias.name, f"{node.module}.{alias.name}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            strings.add(node.value)
    # a string names ``x`` where it is ``x`` or ends in ``.x`` (a dotted path, as monkeypatch.setattr takes)
    named = frozenset(names | {text.rpartition(".")[2] for text in strings})
    return _Uses(named, frozenset(strings), frozenset(from_imports), frozenset(aliases), frozenset(attributes))


def _through_package(uses: _Uses, package: str, name: str) -> bool:
    """Whether a file takes ``name`` from ``package`` itself (not from the module that defines it)."""
    if (package, name) in uses.from_imports or f"{package}.{name}" in uses.strings:
        return True
    bound = {alias for alias, module in uses.module_aliases if module == package} | {package}
    return any((value, name) in uses.attributes for value in bound)


def _own_names(tree: ast.AST) -> set[str]:
    """The names a module refers to outside its import statements."""
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _private_reexports(modules: dict[str, Path], trees: dict[Path, ast.AST]) -> list[dict[str, object]]:
    uses = {path: _uses(tree) for path, tree in trees.items()}
    rows: list[dict[str, object]] = []
    for package in sorted(modules):
        if not _is_package(package, modules):
            continue
        init = modules[package]
        own = _own_names(trees[init])
        private: list[tuple[str, Path | None]] = []
        for node in ast.walk(trees[init]):
            if isinstance(node, ast.ImportFrom):
                source = modules.get(node.module or "") if not node.level else None
                private.extend((alias.asname or alias.name, source) for alias in node.names
                               if _private(alias.asname or alias.name) and (alias.asname or alias.name) not in own)
        paper = package.rpartition(".")[2] in PAPER_KEYS
        if not private and not paper:
            continue
        through: list[str] = []
        nowhere: list[str] = []
        outside: list[str] = []
        inside = {path for path in trees if path.is_relative_to(init.parent)}
        for name, source in private:
            others = [path for path in trees if path not in (init, source)]
            if any(_through_package(uses[path], package, name) for path in others):
                through.append(name)
            if not any(name in uses[path].names for path in others):
                nowhere.append(name)
            if any(name in uses[path].names for path in others if path not in inside):
                outside.append(name)
        rows.append({"package": package, "paper": paper, "private_reexports": len(private),
                     "used_through_package": len(through), "used_outside_package": len(outside),
                     "used_nowhere_else": len(nowhere), "taken_from_package": sorted(through),
                     "used_outside": sorted(outside), "unused": sorted(nowhere)})
    return rows


def _delta_named(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name is not None and _DELTA.match(name) is not None


def _vocabulary(root: Path, modules: dict[str, Path], trees: dict[Path, ast.AST]
                ) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    samplers: list[dict[str, object]] = []
    checks: list[dict[str, object]] = []
    for path in modules.values():
        file = path.relative_to(root).as_posix()
        for node in ast.walk(trees[path]):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) and node.value is not None else []
            if any(isinstance(t, ast.Name) and t.id == "SAMPLERS" for t in targets):
                assert isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
                try:
                    contents: object = list(ast.literal_eval(node.value))
                except (ValueError, TypeError, SyntaxError):
                    contents = ast.unparse(node.value)
                samplers.append({"file": file, "line": node.lineno, "contents": contents})
            if isinstance(node, ast.Call):
                callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if _CHECKER.search(callee) and (
                        any(k.arg and _DELTA.match(k.arg) for k in node.keywords) or (
                        node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                        and _DELTA.match(node.args[0].value))):
                    checks.append({"file": file, "line": node.lineno, "code": ast.unparse(node)[:100]})
            if isinstance(node, ast.If | ast.Assert):
                bounds: set[object] = set()
                for compare in ast.walk(node.test):
                    if isinstance(compare, ast.Compare):
                        operands = [compare.left, *compare.comparators]
                        if any(_delta_named(o) for o in operands):
                            bounds.update(o.value for o in operands if isinstance(o, ast.Constant)
                                          and not isinstance(o.value, bool) and o.value in (0, 1))
                if len(bounds) == 2:  # compared with 0 and with 1: a range check
                    checks.append({"file": file, "line": node.lineno, "code": ast.unparse(node.test)[:100]})
    return samplers, sorted(checks, key=lambda c: (str(c["file"]), int(str(c["line"]))))


def build_report(root: Path) -> Report:
    """Measure the repository at ``root`` (its ``src/privdyn``, and for (d) the other user folders)."""
    modules = _modules(root / "src")
    trees: dict[Path, ast.AST] = {}
    for folder in USER_DIRS:
        for path in sorted((root / folder).rglob("*.py")) if (root / folder).is_dir() else []:
            trees[path] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lazy = {name: _lazy_exports(name, trees[path]) for name, path in modules.items() if path.name == "__init__.py"}
    edges = [edge for name, path in modules.items()
             for edge in _edges(name, path, trees[path], modules, root, lazy)]

    private_imports = []
    private_names: list[list[str]] = []
    for edge in edges:
        owner, names = _owner(edge, modules)
        if owner is not None and not _inside(edge.importer, owner):
            private_names.append(names)
            private_imports.append({"file": edge.file, "line": edge.line, "importer": edge.importer,
                                    "owner": owner, "target": edge.target, "names": names, "level": edge.level})
    upward = [{"file": e.file, "line": e.line, "importer": e.importer, "target": e.target, "names": list(e.names),
               "level": e.level}
              for e in edges if e.level != "type_checking" and e.target != e.importer
              and _is_package(e.target, modules) and _inside(e.importer, e.target)]
    circles = _cross_folder_circles(edges, modules, {"module"})
    circles_lazy = _cross_folder_circles(edges, modules, {"module", "function"})
    folder_circles = _folder_circles(edges, modules, {"module"}, root)
    folder_circles_lazy = _folder_circles(edges, modules, {"module", "function"}, root)
    reexports = _private_reexports(modules, trees)
    paper = [row for row in reexports if row["paper"]]
    samplers, delta_checks = _vocabulary(root, modules, trees)
    counts = {
        "modules": len(modules),
        "private_cross_package_imports": len(private_imports),
        "private_cross_package_names": sum(len(names) for names in private_names),
        "upward_imports": len(upward),
        "circles_module_level": len(circles),
        "circles_with_lazy_imports": len(circles_lazy),
        "folder_circles_module_level": len(folder_circles),
        "folder_circles_with_lazy_imports": len(folder_circles_lazy),
        "private_reexports": sum(int(str(p["private_reexports"])) for p in reexports),
        "private_reexports_used_through_package": sum(int(str(p["used_through_package"])) for p in reexports),
        "private_reexports_used_outside_package": sum(int(str(p["used_outside_package"])) for p in reexports),
        "private_reexports_used_nowhere_else": sum(int(str(p["used_nowhere_else"])) for p in reexports),
        "paper_private_reexports": sum(int(str(p["private_reexports"])) for p in paper),
        "samplers_definitions": len(samplers),
        "delta_range_checks": len(delta_checks),
    }
    return Report(counts, private_imports, upward, circles, circles_lazy, folder_circles, folder_circles_lazy,
                  reexports, samplers, delta_checks)


_LABELS = {
    "modules": "modules in src/privdyn",
    "private_cross_package_imports": "(a) imports of another package's underscore names (statements)",
    "private_cross_package_names": "(a)   names they take (underscore names, names of private modules)",
    "upward_imports": "(b) upward imports (of an enclosing package's __init__, run time)",
    "circles_module_level": "(c) circles between folders, module-level imports",
    "circles_with_lazy_imports": "(c) circles between folders, with function-level imports",
    "folder_circles_module_level": "(c) circles of the folder graph, module-level imports",
    "folder_circles_with_lazy_imports": "(c) circles of the folder graph, with function-level imports",
    "private_reexports": "(d) private names re-exported by a package's __init__ (all packages)",
    "private_reexports_used_through_package": "(d)   taken from the package by another file",
    "private_reexports_used_outside_package": "(d)   named in a file outside the package's folder",
    "private_reexports_used_nowhere_else": "(d)   named in no file but the __init__ and its module",
    "paper_private_reexports": "(d) of them, re-exported by the paper packages' __init__",
    "samplers_definitions": "(e) definitions of SAMPLERS (heuristic)",
    "delta_range_checks": "(e) delta range checks (heuristic)",
}


def _joined(names: object) -> str:
    return ", ".join(map(str, names)) if isinstance(names, list | tuple) else str(names)


def _table(report: Report) -> str:
    width = max(len(label) for label in _LABELS.values())
    lines = [f"{'quantity':<{width}}  count", f"{'-' * width}  -----"]
    lines += [f"{_LABELS[key]:<{width}}  {value:>5}" for key, value in report.counts.items()]
    lines.append("\n(a) imports of another package's underscore names")
    lines += [f"  {p['file']}:{p['line']} [{p['level']}] {p['target']}: {_joined(p['names'])}"
              for p in report.private_imports]
    lines.append("\n(b) upward imports")
    lines += [f"  {u['file']}:{u['line']} [{u['level']}] {u['target']}: "
              f"{_joined(u['names']) or '(import of the package itself)'}" for u in report.upward_imports]
    for title, circles in (("circles between folders, module-level", report.circles_module_level),
                           ("circles between folders, with function-level imports", report.circles_with_lazy_imports)):
        lines.append(f"\n(c) {title}")
        lines += [f"  {len(c)} modules: {', '.join(c)}" for c in circles]
    for title, folder_circles in (("module-level", report.folder_circles_module_level),
                                  ("with function-level imports", report.folder_circles_with_lazy_imports)):
        lines.append(f"\n(c) circles of the folder graph, {title}")
        for circle in folder_circles:
            lines.append(f"  {len(circle['folders'])} folders: {', '.join(circle['folders'])}")
            lines += [f"    {line}" for line in circle["imports"]]
    lines.append("\n(d) packages (* a paper package): private re-exports / taken from the package / named outside its "
                 "folder / named nowhere else")
    lines += [f"  {p['package']}{' *' if p['paper'] else ''}: {p['private_reexports']} / {p['used_through_package']} / "
              f"{p['used_outside_package']} / {p['used_nowhere_else']}" for p in report.private_reexports]
    lines.append("\n(e) SAMPLERS definitions")
    lines += [f"  {s['file']}:{s['line']} {s['contents']}" for s in report.samplers]
    lines.append("\n(e) delta range checks")
    lines += [f"  {c['file']}:{c['line']} {c['code']}" for c in report.delta_checks]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the report of the repository at ``--root`` (default: this tool's repository)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="repository root (holding src/privdyn)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    args = parser.parse_args(argv)
    if not (args.root / "src" / PACKAGE / "__init__.py").is_file():
        parser.error(f"--root {args.root}: no src/{PACKAGE}/__init__.py there")
    report = build_report(args.root)
    print(json.dumps(asdict(report), indent=1) if args.json else _table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
