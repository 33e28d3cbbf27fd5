"""The core's import graph, read from the source (AST), and held against the layer order that
docs/ARCHITECTURE.md declares.

Why here and not in a linter: the order is the project's own (which subject may use which), and
it lives in one place, the layers block of ARCHITECTURE.md, so the document and the code cannot
drift apart. Every import counts, including those made inside a function: an import hidden in a
function body is still a dependency, and hiding one is how the old cycle stayed closed.

Run it to print the figures: `python tests/imports.py` (or `--src DIR --layers FILE` for another
checkout and another order).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "allreduce_explainer"
SRC = ROOT / "src"
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


@dataclass(frozen=True)
class Edge:
    """One import: module `source` imports module `target` (both dotted, under the package)."""

    source: str
    target: str
    line: int


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    out = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _source(name: str, mods: dict[str, Path], node: ast.ImportFrom) -> str:
    """The module an ImportFrom in module `name` imports from (`from .. import a`: the parent)."""
    is_package = mods[name].name == "__init__.py"
    base = name.split(".") if is_package else name.split(".")[:-1]
    if node.level == 0:
        base = []
    elif node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _resolve(name: str, mods: dict[str, Path], node: ast.ImportFrom) -> list[str]:
    """The modules an ImportFrom in module `name` names: `from . import a` may name a module."""
    target = _source(name, mods, node)
    out = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
    if len(out) < len(node.names):
        out.append(target)
    return out


def edges(src: Path = SRC) -> list[Edge]:
    """Every import inside the package, wherever in a file it is written."""
    mods = modules(src)
    out = []
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith(PACKAGE)
            ):
                targets = _resolve(name, mods, node)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith(PACKAGE)]
            else:
                continue
            out += [Edge(name, t, node.lineno) for t in targets if t in mods and t != name]
    return out


def top(module: str) -> str:
    """A module's node at the top level of the graph: its subpackage, or itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def layers(text: str | None = None) -> list[tuple[str, ...]]:
    """The layer order declared in ARCHITECTURE.md, bottom first: its block after the line
    `<!-- layers: top first -->`, one layer a line (an indented line goes on describing the one
    above), its nodes before the first double space."""
    text = ARCHITECTURE.read_text() if text is None else text
    block = text.split("<!-- layers: top first -->", 1)[1].split("```")[1]
    rows = [line for line in block.splitlines()[1:] if line.strip() and not line[0].isspace()]
    return [tuple(re.split(r"\s{2,}", row.strip())[0].split(", ")) for row in reversed(rows)]


def against_order(
    found: list[Edge], order: list[tuple[str, ...]], within: bool = False
) -> list[Edge]:
    """Imports between top-level nodes that do not point to a strictly lower layer (or, with
    `within`, to the same layer), and imports from or to a node the order does not list."""
    rank = {node: i for i, layer in enumerate(order) for node in layer}
    bad = []
    for e in found:
        a, b = top(e.source), top(e.target)
        lower = a in rank and b in rank and (rank[b] < rank[a] or within and rank[b] == rank[a])
        if a != b and not lower:
            bad.append(e)
    return bad


FACES = ("nccl",)  # subpackages other subjects reach only through their __init__'s __all__


def face(package: str, src: Path = SRC) -> set[str]:
    """The names a subpackage's __init__ lists in __all__: what the rest may import from it."""
    tree = ast.parse((src / PACKAGE / package / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def past_face(src: Path = SRC, package: str = "nccl") -> list[Edge]:
    """Reaches past a subpackage's face from outside it: an import of one of its modules, a name
    imported from it that its __all__ does not list, or an attribute `nccl.topology.X`."""
    mods = modules(src)
    inside = f"{PACKAGE}.{package}"
    names, parts = (
        face(package, src),
        {m.rsplit(".", 1)[1] for m in mods if m.startswith(inside + ".")},
    )
    out = []
    for name, path in mods.items():
        if name == inside or name.startswith(inside + "."):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or node.module):
                source = _source(name, mods, node)
                for a in node.names:
                    t = f"{source}.{a.name}"
                    if a.name not in names if source == inside else t.startswith(inside + "."):
                        out.append(Edge(name, t, node.lineno))
            elif isinstance(node, ast.Import):
                out += [
                    Edge(name, a.name, node.lineno)
                    for a in node.names
                    if a.name.startswith(inside + ".")
                ]
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == package
                and node.attr in parts
            ):
                out.append(Edge(name, f"{inside}.{node.attr}", node.lineno))
    return out


def figures(
    src: Path = SRC, order: list[tuple[str, ...]] | None = None, within: bool = False
) -> dict:
    """The graph's figures: nodes at the top level, modules, cycles (between modules and
    between top-level nodes) and imports against the order."""
    found = edges(src)
    by_module: dict[str, set[str]] = {}
    by_top: dict[str, set[str]] = {}
    for e in found:
        by_module.setdefault(e.source, set()).add(e.target)
        if top(e.source) != top(e.target):
            by_top.setdefault(top(e.source), set()).add(top(e.target))
    mods = modules(src)
    return {
        "top_level_nodes": len({top(m) for m in mods if m != PACKAGE}),
        "modules": len(mods),
        "module_cycles": cycles(by_module),
        "top_level_cycles": cycles(by_top),
        "against_order": against_order(found, layers() if order is None else order, within),
        "past_faces": [
            e
            for package in FACES
            if (src / PACKAGE / package).is_dir()
            for e in past_face(src, package)
        ],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", type=Path, default=SRC, help="the folder that holds the package")
    p.add_argument("--layers", type=Path, help="a file whose layers block gives the order")
    p.add_argument("--within", action="store_true", help="allow imports inside one layer")
    a = p.parse_args(argv)
    order = layers(a.layers.read_text()) if a.layers else None
    f = figures(a.src, order, a.within)
    print(f"top-level nodes: {f['top_level_nodes']} ({f['modules']} modules)")
    print(f"cycles between modules: {len(f['module_cycles'])} {f['module_cycles'] or ''}")
    print(f"cycles between top-level nodes: {len(f['top_level_cycles'])}")
    print(f"imports against the layer order: {len(f['against_order'])}")
    for e in f["against_order"]:
        print(f"  {e.source} -> {e.target} (line {e.line})")
    print(f"imports past a subpackage's face ({', '.join(FACES)}): {len(f['past_faces'])}")
    for e in f["past_faces"]:
        print(f"  {e.source} -> {e.target} (line {e.line})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
