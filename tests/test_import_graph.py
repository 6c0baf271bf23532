"""simcore's modules import one another without a cycle, and import nothing above them.

Every import counts, a function's deferred ``import`` too: a cycle hidden in
a function body is still two modules that cannot be understood (or moved)
one without the other. The graph is read from the source with ``ast``, so
nothing is imported to check it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SIMCORE = Path(__file__).resolve().parents[1] / "simcore"
# Packages simcore must never import: Ray, and the packages built on simcore (their command lines included).
ABOVE_SIMCORE = ("ray", "ray_jobs", "dashboards", "sweeps", "commit_sweeps")


def _modules() -> dict[str, Path]:
    return {path.stem: path for path in sorted(SIMCORE.glob("*.py"))}


def _imports(path: Path) -> set[str]:
    """Every module named by an import anywhere in ``path`` (``from a import b``: ``a.b``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    """simcore module -> the simcore modules it imports.

    ``from simcore import SimConfig`` (a name the package exports, not a
    module) is an import of ``__init__``; ``from simcore.config import
    SimConfig`` and ``from simcore import bounds`` are imports of those
    modules alone.
    """
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        edges = set()
        for imported in _imports(path):
            parts = imported.split(".")
            if parts[0] != "simcore":
                continue
            edges.add(parts[1] if len(parts) > 1 and parts[1] in modules else "__init__")
        edges.discard(name)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as a path (first node repeated at the end), or [] when there is none."""
    state: dict[str, str] = {}  # "open" while on the path, "done" once every successor is explored
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = "open"
        path.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                return path[path.index(successor):] + [successor]
            if successor not in state and (cycle := visit(successor)):
                return cycle
        state[node] = "done"
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_simcore_has_no_import_cycle():
    graph = import_graph()
    assert {"config", "clients", "profiles", "errors", "builder", "flags"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def test_the_config_stands_on_the_errors_presets_and_profiles_not_the_other_way():
    graph = import_graph()
    assert graph["errors"] <= {"redaction"} and graph["redaction"] == set() and graph["providers"] == set()
    assert graph["clients"] <= {"errors"} and graph["input_files"] <= {"errors"}
    assert graph["profiles"] <= {"errors", "providers", "input_files"}  # input_files: the checked file reader
    assert "builder" not in graph["config"] and "flags" not in graph["config"]


def test_simcore_imports_nothing_above_it():
    for name, path in _modules().items():
        above = sorted(imported for imported in _imports(path) if imported.split(".")[0] in ABOVE_SIMCORE)
        assert above == [], f"simcore/{name}.py imports {above}"
