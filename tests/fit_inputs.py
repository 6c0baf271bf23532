"""Helpers for tests that feed ``fit`` measurement files: write rows as CSV, run the fit, edit a row."""

from __future__ import annotations

import csv
from pathlib import Path

from commit_sweeps.simcore_command import main


def write_rows(path: Path, rows: list[dict], encoding: str = "utf-8") -> Path:
    """``rows`` as a CSV file at ``path``, their keys as the header."""
    with open(path, "w", newline="", encoding=encoding) as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def run_fit(capsys, *argv) -> tuple[int, list[str]]:
    """``fit``'s exit status and its stderr lines, fitted cheaply (three evaluations)."""
    status = main(["fit", "--quiet", "--max-evaluations", "3", *argv])
    return status, capsys.readouterr().err.strip().splitlines()


def edited(rows, line, **changes):
    """A copy of ``rows`` with row ``line`` changed."""
    rows = [dict(row) for row in rows]
    rows[line].update(changes)
    return rows
