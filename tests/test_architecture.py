"""The house's shape (docs/architecture.md): arrows one way, each layer importing only what it may, no
module past 600 lines, and a layout table that names every module of the tree.

Every ``import`` and ``from ... import`` in every module of the package is an arrow, wherever it stands
(function-level imports too: they only postpone the cycle to the first call). Imports under
``if TYPE_CHECKING:`` are left out, since they never run. ``from pkg import name`` points at the module
``pkg.name`` when there is one, else at ``pkg``. The parent packages an import also runs are not counted:
a package's ``__init__`` re-exporting its own modules is not a cycle of the code's design.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "webtools"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

#: The bottom of the house: importable from anywhere, importing only each other.
BASE = frozenset({"webtools", "webtools.conf", "webtools.crypto", "webtools.exceptions", "webtools.signals"})
#: What each part below the Django shell may import besides itself (docs/architecture.md, "Layers"). A
#: plugin is its own part (``webtools.plugins.web_search``): plugins do not import each other. Everything
#: else is the Django shell, which may import any part (the cycle test keeps its arrows one way).
MAY_IMPORT = {
    "base": {"base"},
    "webtools.net": {"base"},
    "webtools.runtime": {"base", "webtools.net"},
    "webtools.plugins": {"base", "webtools.net", "webtools.runtime"},
    "webtools.integrations": {"base", "webtools.runtime"},
    "webtools.testing": {"base", "webtools.net", "webtools.runtime"},
    "webtools.models": {"base", "webtools.runtime"},
    # Third-party code carried byte for byte: it imports only itself, and any part may import it.
    "webtools._vendor": set(),
}


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Each module's dotted name and its file."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST):
    """The import statements under ``node``, the bodies of ``if TYPE_CHECKING:`` left out."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _import_nodes(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from _import_nodes(child)


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    modules = module_files(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) for each strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm; the package is small enough for recursion
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, group) for group in groups]


def _cycle_in(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, within the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    return paths[node] + [start]
                if nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a strongly connected group always has one


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "Import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in found)


def test_the_walk_sees_every_kind_of_import(tmp_path):
    """The checker itself: function-level and relative imports count, TYPE_CHECKING ones do not, and a
    cycle is named."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from pkg import c\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\nelse:\n    import pkg.d\n"
    )
    (pkg / "d.py").write_text("import os\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.c"] == {"pkg.d"}
    assert cycles(graph) == []
    (pkg / "d.py").write_text("from . import a\n")
    assert cycles(import_graph(pkg)) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.d", "pkg.a"]]


def part_of(module: str) -> str:
    """The part of the house ``module`` belongs to: ``base``, a key of ``MAY_IMPORT``, a plugin
    (``webtools.plugins.<name>``) or ``shell``."""
    if module in BASE:
        return "base"
    if module.startswith("webtools.plugins."):
        return ".".join(module.split(".")[:3])
    for part in MAY_IMPORT:
        if module == part or module.startswith(part + "."):
            return part
    return "shell"


def may_import(module: str, target: str) -> bool:
    part, target_part = part_of(module), part_of(target)
    if part == "shell" or part == target_part or target_part == "webtools._vendor":
        return True
    rule = MAY_IMPORT["webtools.plugins" if part.startswith("webtools.plugins.") else part]
    return target_part in rule


def test_each_layer_imports_only_what_it_may():
    """Below the Django shell nothing imports a model or the host; the runtime never names a plugin;
    a plugin uses the runtime, the guarded client and the base, never another plugin; net is the floor."""
    wrong = [f"{module} -> {target}" for module, targets in sorted(import_graph().items())
             for target in sorted(targets) if not may_import(module, target)]
    assert not wrong, "Imports across the layers of docs/architecture.md:\n" + "\n".join(wrong)


def test_the_layer_rules_refuse_what_the_design_forbids():
    assert not may_import("webtools.runtime.turn", "webtools.models")
    assert not may_import("webtools.runtime.turn", "webtools.plugins.web_search")
    assert not may_import("webtools.plugins.web_fetch.tool", "webtools.plugins.pdf")
    assert not may_import("webtools.plugins.web_fetch.tool", "webtools.host")
    assert not may_import("webtools.net.client", "webtools.runtime.limits")
    assert not may_import("webtools.models", "webtools.host")
    assert not may_import("webtools.conf", "webtools.net")
    assert not may_import("webtools._vendor.readability.htmls", "webtools.runtime.limits")
    assert may_import("webtools.plugins.web_search.resolution", "webtools.plugins.web_search.forms")
    assert may_import("webtools.host", "webtools.models") and may_import("webtools.admin", "webtools.host")


def layout_rows(text: str) -> list[str]:
    """The paths in the first column of docs/architecture.md's layout table (``*`` matches one name)."""
    section = text.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)`", section, re.MULTILINE)


def test_the_layout_table_names_every_module_and_nothing_that_is_gone():
    rows = layout_rows(ARCHITECTURE.read_text())
    files = [str(path.relative_to(ROOT)) for path in module_files().values()]
    assert len(rows) > 50 and len(set(rows)) == len(rows)
    gone = [row for row in rows if not any(ROOT.glob(row.rstrip("/")))]
    assert not gone, f"docs/architecture.md's layout names what the tree does not have: {gone}"
    # A package's row (``webtools/net/``) stands for its ``__init__.py``.
    missing = [name for name in files if not any(fnmatch.fnmatchcase(name, row) for row in rows)
               and not (name.endswith("/__init__.py") and name[: -len("__init__.py")] in rows)]
    assert not missing, f"add a row for each of these to the layout in docs/architecture.md: {missing}"


def test_no_module_over_600_lines():
    sizes = {name: len(path.read_text().splitlines()) for name, path in module_files().items()}
    assert sizes["webtools.admin"] > 100  # the walk found the package's modules
    # webtools/_vendor holds third-party code carried byte for byte (its README.md says why): not ours to split.
    too_long = {name: lines for name, lines in sizes.items()
                if lines > 600 and not name.startswith("webtools._vendor.")}
    assert not too_long, f"split these by what they own: {too_long}"
