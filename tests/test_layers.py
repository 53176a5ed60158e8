"""The house drawn from the imports: no circles, and no arrow from a lower layer to a higher one.

Drawn from the source (ast), every import counted wherever it stands (inside a function too),
except those under `if TYPE_CHECKING:`, which name a type and load nothing. A module belongs to
the layer of the longest prefix in `LAYERS` that names it; a module may import its own layer or
any below (docs/DESIGN.md, "Layers").
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "factory"

LAYERS = [
    # records, errors and the one way to register a kind: what every stage speaks
    ["factory", "factory.errors", "factory.records", "factory.section", "factory.registry", "factory.protocols",
     "factory.atomic"],
    # the stages, and the executors that run an attempt's stages somewhere
    ["factory.tasks", "factory.sandbox", "factory.teachers", "factory.agent", "factory.verify", "factory.filters",
     "factory.render", "factory.warehouse", "factory.report", "factory.output", "factory.executor"],
    # the pipeline's config: it only assembles the stages' own sections
    ["factory.config"],
    # orchestration: a run from its tasks to its dataset
    ["factory.run"],
    # the edges people use: the command line, and what makes a run of other agents' trajectories
    ["factory.cli", "factory.render.cli", "factory.interchange"],
]


def modules() -> dict[str, Path]:
    """Every module by dotted name; a folder without `__init__.py` (a namespace package) too."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
        for i in range(1, len(parts)):
            found.setdefault(".".join(parts[:i]), path.parents[len(parts) - 1 - i] / "__init__.py")
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported(tree: ast.AST, known: dict[str, Path] | None = None) -> list[str]:
    """The modules the import statements load, anywhere in the module but under TYPE_CHECKING:
    `from a.b import c` loads the module a.b.c when there is one, else a.b."""
    names: list[str] = []
    known = modules() if known is None else known

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                walk(child)
            return
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.extend(f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                         for alias in node.names)
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return names


def graph() -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in known.items():
        if not path.exists():  # a namespace package: no code of its own
            continue
        for name in imported(ast.parse(path.read_text(), str(path)), known):
            if name != "factory" and not name.startswith("factory."):
                continue
            while name not in known:  # a name in a module, not a module: its module
                name = name.rpartition(".")[0]
            if name != module:
                edges[module].add(name)
    return edges


def layer(module: str) -> int:
    best, level = "", None
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, level = prefix, i
    assert level is not None, f"{module} is in no layer: add it to LAYERS"
    return level


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_circle():
    assert cycles(graph()) == []


def test_no_module_imports_a_layer_above_its_own():
    upward = sorted(f"{a} -> {b}" for a, targets in graph().items() for b in targets if layer(b) > layer(a))
    assert upward == []


def test_every_module_is_in_a_layer():
    for module in modules():
        layer(module)


@pytest.mark.parametrize("edges, circles", [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
])
def test_a_circle_is_found_where_there_is_one(edges, circles):
    assert cycles(edges) == circles


def test_an_import_inside_a_function_counts_and_one_for_type_checking_does_not():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import factory.cli\n"
                     "def f():\n    from factory.run.folder import RunStore\n")
    assert "factory.run.folder" in imported(tree) and "factory.cli" not in imported(tree)
