"""The timing guards of benchmarks/ print their figures beside stored baselines taken with the same settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from benchmarks.baseline import comparable, load_baselines, new_entry, ratio_table, save_baseline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _entry(commit, settings, figures):
    return {"commit": commit, "date": "2026-01-01", "machine": "m", "settings": settings, "figures": figures}


def test_a_saved_baseline_replaces_only_one_of_the_same_commit_and_settings(tmp_path):
    path = str(tmp_path / "guard_baseline.json")
    save_baseline(path, "what", _entry("a", {"clients": 50}, {"p50_ms": 1.0}))
    save_baseline(path, "what", _entry("a", {"clients": 10}, {"p50_ms": 2.0}))
    save_baseline(path, "what", _entry("a", {"clients": 50}, {"p50_ms": 3.0}))
    save_baseline(path, "what", _entry("b", {"clients": 50}, {"p50_ms": 4.0}))
    stored = load_baselines(path)
    assert [(b["commit"], b["settings"]["clients"], b["figures"]["p50_ms"]) for b in stored] == [
        ("a", 50, 3.0), ("a", 10, 2.0), ("b", 50, 4.0)]
    assert json.loads(open(path).read())["what"] == "what"
    assert [b["commit"] for b in comparable(stored, {"clients": 50})] == ["a", "b"]
    assert comparable(stored, {"clients": 20}) == []


def test_the_ratio_is_now_over_then_and_a_missing_figure_has_none():
    lines = ratio_table({"p50_ms": 3.0, "errors": 0}, [_entry("a", {}, {"p50_ms": 2.0})],
                        {"p50_ms": "ms", "errors": ""})
    assert lines[1].split() == ["p50_ms", "3.0", "ms", "2.0", "ms", "1.50"]
    assert lines[2].split() == ["errors", "0", "-", "-"]  # no figure then: no ratio
    assert lines[3] == "baseline a: measured 2026-01-01 on m"


def test_a_new_entry_records_the_command_commit_and_machine():
    entry = new_entry(ROOT, {"clients": 5}, "python -m benchmarks.server_load --clients 5", "0.1 before", {"x": 1})
    assert entry["command"] == "python -m benchmarks.server_load --clients 5" and entry["settings"] == {"clients": 5}
    assert entry["commit"] and entry["machine"] and len(entry["date"]) == 10


def test_the_server_load_guard_stores_a_baseline_and_compares_the_next_run_with_it(tmp_path):
    baseline = tmp_path / "server_load_baseline.json"
    command = [sys.executable, "-m", "benchmarks.server_load", "--clients", "4", "--requests", "5",
               "--baseline", str(baseline)]
    environment = {**os.environ, "PYTHONPATH": ROOT}
    first = subprocess.run(command + ["--save-baseline"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                           env=environment)
    assert first.returncode == 0, first.stderr
    assert "no stored baseline with these settings" in first.stdout
    (stored,) = load_baselines(str(baseline))
    assert stored["settings"] == {"clients": 4, "requests": 5} and stored["figures"]["errors"] == 0
    second = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=environment)
    assert second.returncode == 0, second.stderr
    p50 = next(line for line in second.stdout.splitlines() if line.startswith("p50_ms")).split()
    assert p50[3] == f"{stored['figures']['p50_ms']:.1f}" and float(p50[-1]) > 0  # then, and now / then
    other = subprocess.run(command[:4] + ["3"] + command[5:], cwd=ROOT, capture_output=True, text=True,
                           timeout=300, env=environment)
    assert "no stored baseline with these settings" in other.stdout  # 3 requests a client: not comparable
