"""Report the structure of the package and of the tools: import circles, large modules and functions,
provider branches.

    python -m tools.structure [--quiet]
    python -m tools.structure --graph          # the package layering, bottom first
    python -m tools.structure --update-doc     # write that layering into design/contracts.md

Imports are read from the source (``ast``), at module level and inside functions alike. A
circle is a strongly connected set of modules (or of top-level packages: ``holistic.models``,
``holistic.execution`` ...) that import each other, directly or around a loop. A package's
``__init__`` is a module like any other: when it imports its submodules (a facade), a submodule
that imports a name from the package itself (``from holistic.results import ...`` inside
``holistic.results.reader``, even ``from holistic.results import manifest``, which runs the
``__init__`` first) closes a circle: a submodule imports its siblings by their full name
(``from holistic.results.manifest import ...``). ``holistic/``, ``tools/`` and ``tests/`` are all
checked (the provider-name rule applies to the package only). Exit 1 when any limit is broken.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "holistic"
TOOLS = ROOT.parent / "tools"
TESTS = ROOT.parent / "tests"
CONTRACTS_DOC = ROOT.parent / "design" / "contracts.md"
GRAPH_START = "<!-- package graph: python -m tools.structure --update-doc -->"
GRAPH_END = "<!-- end of package graph -->"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100
PROVIDER_NAMES = frozenset(
    {"embedded", "huggingface", "llama_cpp", "openai", "anthropic", "openai_compatible", "simple"}
)
"""Built-in provider names: comparing a value with one of them is a branch on a provider."""
PROVIDER_MODULE_PREFIXES = ("embedded", "huggingface", "hf_", "llama_", "openai", "anthropic", "simple", "providers")
"""Modules that implement a provider (by their file name): they may name themselves."""


@dataclass
class Report:
    module_circles: list[list[str]] = field(default_factory=list)
    package_circles: list[list[str]] = field(default_factory=list)
    package_edges: list[str] = field(default_factory=list)
    package_deps: dict[str, set[str]] = field(default_factory=dict)
    """Top-level package -> the top-level packages it imports (``holistic`` itself left out)."""
    large_modules: list[tuple[int, str]] = field(default_factory=list)
    long_functions: list[tuple[int, str]] = field(default_factory=list)
    provider_branches: list[str] = field(default_factory=list)

    @property
    def broken(self) -> bool:
        return any((self.module_circles, self.package_circles, self.large_modules, self.long_functions))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The names ``node`` imports; ``from X import y`` imports ``X`` (its ``__init__`` runs first and
    ``y`` is looked up on it) and ``X.y`` when that is a submodule."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join([*base, *([node.module] if node.module else [])])
        else:
            target = node.module or ""
        return [target, *(f"{target}.{a.name}" for a in node.names)]
    return []


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; components of one node are left out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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
                    found.append(sorted(component))
    return found


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _provider_branches(tree: ast.AST, module: str) -> Iterable[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Set | ast.Tuple | ast.List):
            named = sorted(str(e.value) for e in node.elts if isinstance(e, ast.Constant) and e.value in PROVIDER_NAMES)
            if len(named) > 1:
                yield f"{module}:{node.lineno} lists providers {', '.join(named)}"
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for operand in operands:
            values = operand.elts if isinstance(operand, ast.Tuple | ast.Set | ast.List) else [operand]
            for value in values:
                if isinstance(value, ast.Constant) and value.value in PROVIDER_NAMES:
                    yield f"{module}:{node.lineno} compares with {value.value!r}"


def check(root: Path = ROOT, providers: bool = True) -> Report:
    """The structure of the package at ``root``; ``providers``: report branches on a provider's name."""
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in files.items()}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, tree in trees.items():
        is_package = files[module].name == "__init__.py"
        for node in ast.walk(tree):
            for name in _imported(node, module, is_package):
                while name and name not in files:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    graph[module].add(name)
    report = Report(module_circles=_strongly_connected(graph))
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        mine = _package(module)
        packages.setdefault(mine, set())
        for target in targets:
            theirs = _package(target)
            if theirs not in (mine, root.name):
                packages[mine].add(theirs)
                packages.setdefault(theirs, set())
    report.package_circles = _strongly_connected(packages)
    report.package_deps = {p: packages[p] for p in sorted(packages) if p != root.name}
    in_circle = {p for c in report.package_circles for p in c}
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            a, b = _package(module), _package(target)
            if a != b and a in in_circle and b in in_circle:
                report.package_edges.append(f"{module} -> {target}")
    for module, path in files.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            report.large_modules.append((lines, module))
        for node in ast.walk(trees[module]):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    report.long_functions.append((length, f"{module}.{node.name}"))
        if providers and not module.rpartition(".")[2].startswith(PROVIDER_MODULE_PREFIXES):
            report.provider_branches.extend(_provider_branches(trees[module], module))
    report.large_modules.sort(reverse=True)
    report.long_functions.sort(reverse=True)
    return report


def package_layers(deps: dict[str, set[str]]) -> str:
    """The package graph as text, one package a line, bottom first: a package's layer is one
    above the highest of the packages it imports (packages in a circle share a layer)."""
    layer: dict[str, int] = {}
    in_circle = {p for c in _strongly_connected(deps) for p in c}

    def depth(package: str, seen: frozenset[str]) -> int:
        if package not in layer:
            below = [d for d in deps[package] if d not in seen]
            layer[package] = 1 + max((depth(d, seen | {d}) for d in below), default=-1)
        return layer[package]

    for package in deps:
        depth(package, frozenset({package}))
    width = max(len(p) for p in deps)
    lines = []
    for package in sorted(deps, key=lambda p: (layer[p], p)):
        short = ", ".join(sorted(d.rpartition(".")[2] for d in deps[package]))
        mark = "  (in a circle)" if package in in_circle else ""
        lines.append(f"{layer[package]}  {package:<{width}}  -> {short or '-'}{mark}".rstrip())
    return "\n".join(lines)


def graph_block(report: Report) -> str:
    """The generated part of design/contracts.md: the package layering in a code block."""
    return f"{GRAPH_START}\n```text\n{package_layers(report.package_deps)}\n```\n{GRAPH_END}"


def documented_block(doc: Path = CONTRACTS_DOC) -> str:
    """The package-graph block as design/contracts.md has it now."""
    text = doc.read_text(encoding="utf-8")
    start, end = text.index(GRAPH_START), text.index(GRAPH_END) + len(GRAPH_END)
    return text[start:end]


def print_report(title: str, report: Report, quiet: bool) -> None:
    print(f"{title}: module circles: {len(report.module_circles)}")
    for circle in report.module_circles:
        print("   " + " ".join(circle))
    print(f"{title}: package circles: {len(report.package_circles)}")
    for circle in report.package_circles:
        print("   " + " ".join(circle))
    if not quiet:
        for edge in report.package_edges:
            print("      " + edge)
    print(f"{title}: modules over {MAX_MODULE_LINES} lines: {len(report.large_modules)}")
    for lines, module in report.large_modules:
        print(f"   {lines} {module}")
    print(f"{title}: functions over {MAX_FUNCTION_LINES} lines: {len(report.long_functions)}")
    for lines, function in report.long_functions:
        print(f"   {lines} {function}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.structure", description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="leave out the import edges of package circles")
    parser.add_argument("--graph", action="store_true", help="print the package layering, bottom first")
    parser.add_argument("--update-doc", action="store_true", help="write the layering into design/contracts.md")
    args = parser.parse_args(argv)
    report = check()
    if args.graph:
        print(package_layers(report.package_deps))
        return 0
    if args.update_doc:
        text = CONTRACTS_DOC.read_text(encoding="utf-8")
        CONTRACTS_DOC.write_text(text.replace(documented_block(), graph_block(report)), encoding="utf-8")
        return 0
    print_report(ROOT.name, report, args.quiet)
    print(f"{ROOT.name}: provider-name comparisons outside the providers: {len(report.provider_branches)}")
    for branch in report.provider_branches:
        print("   " + branch)
    broken = report.broken or bool(report.provider_branches)
    for root in (TOOLS, TESTS):
        other = check(root, providers=False)
        print_report(root.name, other, args.quiet)
        broken = broken or other.broken
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
