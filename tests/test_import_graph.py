"""The packages import in one direction: simcore, then ray_jobs, dashboards and store_probe, then commit_sweeps.

- simcore's modules import one another without a cycle, and nothing above
  them, except ``simcore/__main__.py`` (``python -m simcore``, an entry
  point into the command line);
- nothing below the command line (``commit_sweeps``) imports it, except the
  entry points: a package's ``__main__.py`` and a module's ``if __name__ ==
  "__main__":`` block (``python -m ray_jobs.capacity``); the grid files in
  ``sweeps/`` are scripts too and may;
- argparse is the command line's alone, and simcore reads no environment
  variable: what a flag or a variable says reaches it as an argument.

Every import counts, a function's deferred ``import`` too: a cycle hidden in
a function body is still two modules that cannot be understood (or moved)
one without the other. The graph is read from the source with ``ast``, so
nothing is imported to check it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIMCORE = ROOT / "simcore"
# Packages simcore must never import: Ray, and the packages built on simcore.
ABOVE_SIMCORE = ("ray", "ray_jobs", "dashboards", "sweeps", "commit_sweeps", "store_probe")
COMMAND_LINE = "commit_sweeps"
# The libraries below the command line: none imports it, or argparse.
BELOW_COMMAND_LINE = ("simcore", "ray_jobs", "dashboards", "store_probe")
# The grid files: scripts, which may enter the command line (``sweep_main``), but need no argparse of their own.
SCRIPTS = ("sweeps",)


def _modules() -> dict[str, Path]:
    return {path.stem: path for path in sorted(SIMCORE.glob("*.py"))}


def _is_main_block(node: ast.AST) -> bool:
    """``if __name__ == "__main__":``, the part of a module that runs only as a script."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _imports(path: Path, *, library_only: bool = False) -> set[str]:
    """Every module named by an import anywhere in ``path`` (``from a import b``: ``a.b``); ``library_only``:
    leave out a top-level ``if __name__ == "__main__":`` block's."""
    tree = ast.parse(path.read_text(), str(path))
    if library_only:
        tree.body = [node for node in tree.body if not _is_main_block(node)]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _sources(*packages: str) -> list[Path]:
    return [path for package in packages for path in sorted((ROOT / package).rglob("*.py"))]


def _reads_the_environment(path: Path) -> list[int]:
    """Lines of ``path`` that read an environment variable (``os.environ``, ``os.getenv``, ``environ`` imported)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "getenvb"):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                alias.name in ("environ", "environb", "getenv", "getenvb") for alias in node.names):
            lines.append(node.lineno)
    return lines


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
    assert {"config", "clients", "profiles", "errors", "builder"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def test_the_config_stands_on_the_errors_presets_and_profiles_not_the_other_way():
    graph = import_graph()
    assert graph["errors"] <= {"redaction"} and graph["redaction"] == set() and graph["providers"] == set()
    assert graph["clients"] <= {"errors"} and graph["input_files"] <= {"errors"}
    assert graph["profiles"] <= {"errors", "providers", "input_files"}  # input_files: the checked file reader
    assert "builder" not in graph["config"]


def test_simcore_imports_nothing_above_it():
    checked = [path for path in _sources("simcore") if path.name != "__main__.py"]
    assert SIMCORE / "builder.py" in checked
    for path in checked:
        above = sorted(imported for imported in _imports(path) if imported.split(".")[0] in ABOVE_SIMCORE)
        assert above == [], f"{path.relative_to(ROOT)} imports {above}"


def test_nothing_below_the_command_line_imports_it_but_the_entry_points():
    entries = []
    for path in _sources(*BELOW_COMMAND_LINE):
        imported = sorted(name for name in _imports(path, library_only=True) if name.split(".")[0] == COMMAND_LINE)
        if path.name == "__main__.py":
            entries.append(str(path.relative_to(ROOT)))
            continue
        assert imported == [], f"{path.relative_to(ROOT)} imports {imported}"
    assert {"simcore/__main__.py", "ray_jobs/__main__.py", "dashboards/__main__.py"} <= set(entries)


def test_the_entry_finder_sees_a_main_block_and_only_that():
    capacity = ROOT / "ray_jobs" / "capacity.py"
    assert "commit_sweeps.capacity_command.main" in _imports(capacity)
    assert "commit_sweeps.capacity_command.main" not in _imports(capacity, library_only=True)


def test_argparse_is_the_command_lines_alone():
    for path in _sources(*BELOW_COMMAND_LINE, *SCRIPTS):
        assert "argparse" not in _imports(path), f"{path.relative_to(ROOT)} imports argparse"
    assert "argparse" in _imports(ROOT / COMMAND_LINE / "flags.py")


def test_simcore_reads_no_environment_variable():
    for path in _sources("simcore"):
        assert _reads_the_environment(path) == [], f"{path.relative_to(ROOT)} reads the environment"
    assert _reads_the_environment(ROOT / COMMAND_LINE / "flags.py")  # where $SIMCORE_MAX_MEMORY is read
