"""The speed guard (``python -m benchmarks.speed``) runs, prints a ratio per config and stores a baseline.

Not a timing test: the figures are whatever this machine gives; only the
output's shape and the baseline file are checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from benchmarks.speed import GUARD_CONFIGS, START_UP

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_guard_prints_a_ratio_per_config_and_saves_a_baseline(tmp_path):
    names = [name for name, _ in GUARD_CONFIGS] + [START_UP]
    baseline = tmp_path / "baseline.json"
    # An older release that had no figure for the last config (a flag it did not know).
    then = {name: 1000.0 for name in names[:-2]} | {names[-2]: None, START_UP: 1000.0}
    baseline.write_text(json.dumps({"baselines": [{"commit": "old", "date": "2026-01-01", "machine": "m",
                                                   "duration_s": 1801.0, "repeats": 1, "seconds": then}]}))
    result = subprocess.run([sys.executable, "-m", "benchmarks.speed", "--duration-s", "1801", "--repeats", "1",
                             "--baseline", str(baseline), "--save-baseline"], cwd=ROOT, capture_output=True,
                            text=True, timeout=900, env={**os.environ, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr
    lines = {line[:42].strip(): line[42:].split() for line in result.stdout.splitlines()}
    for name in names[:-2] + [START_UP]:
        now_ms, then_ms, ratio = float(lines[name][0]), float(lines[name][2]), float(lines[name][4])
        assert then_ms == 1000.0 * 1000 and 0 < now_ms and 0 <= ratio < 0.01  # far faster than 1000 s a seed
    assert lines[names[-2]][2:] == ["-", "-"]  # no figure then: no ratio
    stored = json.loads(baseline.read_text())["baselines"]
    assert [entry["commit"] for entry in stored][0] == "old" and len(stored) == 2
    assert set(stored[1]["seconds"]) == set(names) and all(v > 0 for v in stored[1]["seconds"].values())
