"""The studies' results: dated files in studies/<name>/results/, each row stamped with its date and command, never
overwritten unless asked; and every study runs as ``python -m studies.<name>``."""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from studies.results import add_out_flags, out_path, results_dir, write_csv, write_json

ROOT = Path(__file__).resolve().parents[1]
STUDIES = sorted(p.parent.name for p in (ROOT / "studies").glob("*/__init__.py"))
RESULTS = sorted((ROOT / "studies").glob("*/results/*.*"))


def _args(argv):
    parser = argparse.ArgumentParser()
    add_out_flags(parser, "rows")
    return parser.parse_args(argv)


def test_the_default_file_is_dated_and_an_existing_one_is_replaced_only_when_asked(tmp_path, capsys):
    today = datetime.date.today().isoformat()
    assert out_path(_args([]), "holdout", "fit-1-2-3", "csv") == results_dir("holdout") / f"fit-1-2-3-{today}.csv"
    taken = tmp_path / "rows.csv"
    taken.write_text("old\n")
    with pytest.raises(SystemExit) as stopped:
        out_path(_args(["--out", str(taken)]), "holdout", "x", "csv")
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: out: ") and str(taken) in line and "--overwrite" in line
    assert out_path(_args(["--out", str(taken), "--overwrite"]), "holdout", "x", "csv") == taken
    assert taken.read_text() == "old\n"  # choosing the file writes nothing


def test_every_row_and_document_carries_its_date_and_command(tmp_path):
    day = datetime.date(2026, 11, 29)
    path = write_csv(tmp_path / "a" / "rows.csv", [{"clients": 4, "within": True}, {"clients": 5, "note": "x"}],
                     "python -m studies.holdout --fit 1-3", day)
    rows = list(csv.DictReader(path.open()))
    assert list(rows[0]) == ["date", "command", "clients", "within", "note"]
    command = "python -m studies.holdout --fit 1-3"
    assert [(r["date"], r["command"], r["clients"]) for r in rows] == [("2026-11-29", command, "4"),
                                                                        ("2026-11-29", command, "5")]
    document = json.loads(write_json(tmp_path / "doc.json", {"calls": [1]}, "python -m x", day).read_text())
    assert document == {"date": "2026-11-29", "command": "python -m x", "calls": [1]}
    assert not list(tmp_path.rglob("*.partial"))


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_each_stored_result_is_stamped_with_the_date_its_name_gives(path):
    named = re.search(r"(\d{4}-\d{2}-\d{2})", path.name).group(1)
    if path.suffix == ".csv":
        rows = list(csv.DictReader(path.open()))
        assert rows and {r["date"] for r in rows} == {named}
        assert all(r["command"].startswith("python -m studies.") for r in rows)
    else:
        document = json.loads(path.read_text())
        assert document["date"] == named and document["command"].startswith("python -m studies.")


def test_every_study_has_results_and_a_main():
    assert len(STUDIES) >= 9
    for name in STUDIES:
        assert (ROOT / "studies" / name / "__main__.py").exists(), name
        assert any(p.parts[-3] == name for p in RESULTS), f"{name} has no results"


@pytest.mark.parametrize("name", STUDIES)
def test_each_study_runs_as_a_module(name):
    done = subprocess.run([sys.executable, "-m", f"studies.{name}", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python -m studies.{name}")
