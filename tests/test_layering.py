"""How the modules depend on each other, read from the source (an AST scan, nothing imported):
imports go one way and form no cycle, and no private name crosses a module boundary (issue 28:
``agents/apps/rl_value.py`` and its learner imported each other, a module ``__getattr__`` handed
out a private function, and ``_walk`` and ``LabelledSplit._tasks`` were used from other modules)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.problems import ROOT

PACKAGES = ("agents", "pddlgym_sl", "domains")
"""The importable packages whose import graph must be acyclic."""
SCANNED = (*PACKAGES, "benchmarks", "experiments")
"""Where no private name may be used across modules."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources(roots: tuple[str, ...]) -> dict[str, tuple[Path, ast.Module]]:
    out = {}
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            out[_module_name(path)] = (path, ast.parse(path.read_text(), str(path)))
    return out


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import that runs (at module level or in a function), not those under TYPE_CHECKING."""
    found: list[ast.Import | ast.ImportFrom] = []

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if "TYPE_CHECKING" in ast.unparse(node.test):
                for child in node.orelse:
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.append(node)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            found.append(node)

    Visitor().visit(tree)
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The modules of ours that `node` (in `module`) imports: ``from a.b import c`` is ``a.b.c``
    when that is a module, else ``a.b``."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known}
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    out = set()
    for alias in node.names:
        full = f"{base}.{alias.name}"
        out |= {full} if full in known else ({base} if base in known else set())
    return out


def _graph() -> dict[str, set[str]]:
    sources = _sources(PACKAGES)
    known = set(sources)
    graph = {}
    for module, (path, tree) in sources.items():
        edges = set()
        for node in _imports(tree):
            edges |= _targets(module, path.name == "__init__.py", node, known)
        graph[module] = edges - {module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    """Function-level imports count too: they are how the rl_value cycle hid."""
    assert _cycles(_graph()) == []


def test_imports_go_one_way():
    """`agents` uses `pddlgym_sl` and `domains`; the planning core never imports the learning code."""
    graph = _graph()
    assert {
        (m, t) for m, ts in graph.items() if not m.startswith("agents") for t in ts if t.startswith("agents")
    } == set()


def _private_definitions(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.id if isinstance(node, ast.Name) else node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_name_crosses_a_module():
    """``from ours import _x`` is refused; so is ``obj._x`` where ``_x`` is defined by another of our
    modules and not by this one (``self._x`` and ``cls._x`` are the module's own)."""
    sources = _sources(SCANNED)
    defined = {module: _private_definitions(tree) for module, (_, tree) in sources.items()}
    everywhere = set().union(*defined.values())
    found = []
    for module, (path, tree) in sources.items():
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] in SCANNED:
                    found += [
                        f"{where}:{node.lineno}: imports {a.name}" for a in node.names if _private(a.name)
                    ]
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                if node.attr in everywhere and node.attr not in defined[module]:
                    found.append(f"{where}:{node.lineno}: uses {ast.unparse(node)}")
    assert found == []


def test_no_module_getattr_hands_out_a_private_name():
    """A module ``__getattr__`` may compute a public name lazily (`domains.DOMAIN_NAMES`), never
    re-export a private one (``agents.apps.rl_value`` handed out ``_merge_by_problem``)."""
    found = []
    for module, (_, tree) in _sources(SCANNED).items():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
                strings = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant)}
                found += [f"{module}: {s}" for s in strings if isinstance(s, str) and _private(s)]
    assert found == []
