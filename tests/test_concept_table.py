"""docs/design.md's "Where each concept lives" table names modules that exist and things they define.

Each row has three cells, and every backticked span in them is checked:

- home: ``path.py``: ``Name``, ``Name``; ``other.py``: ``Name`` -- each path
  exists and defines (``def``, ``class``, an assignment at the top level) each
  name after it; ``Class.attribute`` is an attribute its class body defines;
- concept: prose. A backticked Python name is defined by one of the row's
  homes, or is a module (``simcore.fit``, ``scipy.linalg``) or a module's
  name (``simcore.config.SimConfig``); a backticked path exists; anything
  else (a flag, a command) is prose;
- who imports it: each backticked path exists, and each Python module among
  them imports one of the row's homes (or names it as a string, as
  ``commit_sweeps/cli.py`` names its commands' modules).

A path ``a/b.py`` also names the module ``a.b`` once it has become a package
(``a/b/``): its modules then hold the names. Everything is read with ``ast``.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
SECTION = "## Where each concept lives"
SPAN = re.compile(r"`([^`]+)`")
PYTHON_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class Row:
    """One row of the table: the line it is on and its three cells."""

    line: int
    concept: str
    home: str
    importers: str

    @property
    def label(self) -> str:
        return f"docs/design.md:{self.line}: {self.concept[:60]}"


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table line; a ``|`` inside backticks is text, not a border."""
    cells, current, in_code = [], "", False
    for char in line.strip().strip("|"):
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(current.strip())
            current = ""
        else:
            current += char
    return cells + [current.strip()]


def table_rows(text: str) -> list[Row]:
    """The rows of the section's table, header and separator left out."""
    lines = text.splitlines()
    start = lines.index(SECTION)
    rows = []
    for number, line in enumerate(lines[start + 1:], start + 2):
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        if cells[0] == "concept" or not cells[0].strip("-: "):
            continue
        assert len(cells) == 3, f"docs/design.md:{number}: {len(cells)} cells, expected concept | home | importers"
        rows.append(Row(number, *cells))
    return rows


def _is_path(span: str) -> bool:
    return "/" in span


def module_files(path: str) -> list[Path]:
    """The source of the module at ``path``: the file, or the modules of the package it became; [] if neither."""
    file = ROOT / path
    if file.is_file():
        return [file]
    package = ROOT / path.removesuffix(".py")
    if path.endswith(".py") and (package / "__init__.py").is_file():
        return sorted(package.rglob("*.py"))
    return []


def _dotted(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


@functools.lru_cache(maxsize=None)
def _definitions(file: Path) -> dict[str, frozenset]:
    """Top-level name -> the attributes its class body defines (none for a function or a value)."""
    def targets(node) -> list[str]:
        if isinstance(node, ast.Name):
            return [node.id]
        if isinstance(node, (ast.Tuple, ast.List)):
            return [name for element in node.elts for name in targets(element)]
        return []

    def assigned(node) -> list[str]:
        if isinstance(node, ast.Assign):
            return [name for target in node.targets for name in targets(target)]
        if isinstance(node, ast.AnnAssign):
            return targets(node.target)
        return []

    found: dict[str, frozenset] = {}
    for node in ast.parse(file.read_text(), str(file)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = frozenset()
        elif isinstance(node, ast.ClassDef):
            found[node.name] = frozenset(
                [item.name for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
                + [name for item in node.body for name in assigned(item)])
        else:
            found.update((name, frozenset()) for name in assigned(node))
    return found


def defines(files: list[Path], name: str) -> bool:
    """``name`` (``Name`` or ``Class.attribute``) is defined at the top level of one of ``files``."""
    head, _, attribute = name.partition(".")
    for file in files:
        attributes = _definitions(file).get(head)
        if attributes is not None and (not attribute or attribute in attributes):
            return True
    return False


def _module_reference(name: str) -> Optional[bool]:
    """True when ``name`` is a module, or a name one of this repository's modules defines; False when its
    longest module prefix does not define the rest; None when no prefix of it is a module."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        prefix, rest = ".".join(parts[:end]), ".".join(parts[end:])
        files = module_files(prefix.replace(".", "/") + ".py")
        if files:
            return not rest or defines(files, rest)
        if not rest and not (ROOT / parts[0]).exists():
            try:
                if importlib.util.find_spec(prefix) is not None:  # a module outside the repository
                    return True
            except (ImportError, ValueError):
                pass
    return None


def home_problems(row: Row) -> tuple[list[str], list[Path], list[str]]:
    """(problems, the homes' files, the names the home cell lists) of the home cell."""
    problems, files, names = [], [], []
    current: Optional[list[Path]] = None
    for span in SPAN.findall(row.home):
        if _is_path(span):
            if span.endswith("/"):  # a folder: one file per study, say
                current = None
                if not (ROOT / span).is_dir():
                    problems.append(f"{span}: no such folder")
                continue
            current = module_files(span)
            if not current:
                problems.append(f"{span}: no such module")
            files += current
        elif PYTHON_NAME.match(span):
            names.append(span)
            if current is None:
                problems.append(f"{span}: a name without a module before it")
            elif current and not defines(current, span):
                problems.append(f"{span}: not defined in the module before it")
    if not files:
        problems.append("no home module")
    return problems, files, names


def concept_problems(row: Row, files: list[Path]) -> list[str]:
    problems = []
    for span in SPAN.findall(row.concept):
        if _is_path(span):
            if not (ROOT / span).exists() and not module_files(span):
                problems.append(f"{span}: no such file")
        elif PYTHON_NAME.match(span) and not defines(files, span) and not _module_reference(span):
            problems.append(f"{span}: neither defined by a home nor a module")
    return problems


def _uses(file: Path) -> set[str]:
    """The dotted names ``file`` imports (``from a import b``: ``a`` and ``a.b``) and its string constants."""
    used = set()
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        if isinstance(node, ast.Import):
            used.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            used.add(node.module)
            used.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            used.add(node.value)
    return used


def imports_a_home(file: Path, home_paths: list[str], names: list[str]) -> bool:
    """``file`` imports one of the homes, or imports one of the row's names from a package above a home."""
    used = _uses(file)
    for path in home_paths:
        module = _dotted(path)
        if any(name == module or name.startswith(module + ".") for name in used):
            return True
        packages = [".".join(module.split(".")[:end]) for end in range(1, module.count(".") + 1)]
        if any(f"{package}.{name}" in used for package in packages for name in names):
            return True
    return False


def importer_problems(row: Row, names: list[str]) -> list[str]:
    home_paths = [span for span in SPAN.findall(row.home) if _is_path(span) and span.endswith(".py")]
    problems = []
    for span in SPAN.findall(row.importers):
        if not _is_path(span):
            continue
        if any(char in span for char in "*?["):
            if not list(ROOT.glob(span)):
                problems.append(f"{span}: matches no file")
            continue
        files = module_files(span) if span.endswith(".py") else ([ROOT / span] if (ROOT / span).exists() else [])
        if not files:
            problems.append(f"{span}: no such file")
        elif span.endswith(".py") and not any(imports_a_home(file, home_paths, names) for file in files):
            problems.append(f"{span}: imports none of {', '.join(home_paths)}")
    return problems


def row_problems(row: Row) -> list[str]:
    problems, files, names = home_problems(row)
    return problems + concept_problems(row, files) + importer_problems(row, names)


ROWS = table_rows(DESIGN.read_text())


def test_the_table_is_there_and_each_row_has_a_home():
    assert len(ROWS) >= 20
    for row in ROWS:
        assert [span for span in SPAN.findall(row.home) if span.endswith(".py")], row.label


@pytest.mark.parametrize("row", ROWS, ids=[str(row.line) for row in ROWS])
def test_each_row_names_modules_that_exist_and_things_they_define(row):
    problems = row_problems(row)
    assert not problems, f"{row.label}: " + "; ".join(problems)


def test_a_wrong_row_is_caught():
    """The checks can fail: a name a module lacks, a module that is not there, an importer that imports none."""
    row = Row(1, "the lease (`Lease.acquire`, `Lease.no_such_method`, `ray_jobs/nowhere.py`, `simcore.fit`)",
              "`ray_jobs/lease.py`: `Lease`, `NoSuchLease`; `ray_jobs/gone.py`: `Gone`",
              "`commit_sweeps/sweep_command.py`, `simcore/config.py`, `ray_jobs/missing.py`")
    assert row_problems(row) == [
        "NoSuchLease: not defined in the module before it",
        "ray_jobs/gone.py: no such module",
        "Lease.no_such_method: neither defined by a home nor a module",
        "ray_jobs/nowhere.py: no such file",
        "simcore/config.py: imports none of ray_jobs/lease.py, ray_jobs/gone.py",
        "ray_jobs/missing.py: no such file",
    ]


def test_a_module_that_became_a_package_still_resolves(tmp_path, monkeypatch):
    package = tmp_path / "pkg" / "mod"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.mod.part import Thing\n")
    (package / "part.py").write_text("class Thing:\n    size = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert module_files("pkg/mod.py") == [package / "__init__.py", package / "part.py"]
    assert defines(module_files("pkg/mod.py"), "Thing.size") and not defines(module_files("pkg/mod.py"), "Other")
