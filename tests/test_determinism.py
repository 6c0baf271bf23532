"""A seed fixes every number: the same in one process, across processes, whatever the seed order or batching."""

import json
import os
import subprocess
import sys

from simcore import SimConfig, simulate, simulate_transactions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = SimConfig(provider="azure", num_tables=3, fast_append_ratio=0.7, inter_arrival_scale_ms=150,
                   runtime_median_ms=20_000.0, duration_s=900.0)
CLI = [sys.executable, "-m", "simcore", "run", "--provider", "azure", "--catalog", "storage", "--num-tables", "3",
       "--fast-append-ratio", "0.7", "--inter-arrival-scale-ms", "150", "--duration-s", "3600",
       "--seeds", "5,6", "--json"]


def test_same_seed_same_numbers_in_process():
    assert simulate(CONFIG, [4]) == simulate(CONFIG, [4])
    assert simulate_transactions(CONFIG, 4).equals(simulate_transactions(CONFIG, 4))


def test_seed_order_and_batching_do_not_matter():
    both = simulate(CONFIG, [1, 2])
    assert both == [simulate(CONFIG, [1])[0], simulate(CONFIG, [2])[0]]
    assert simulate(CONFIG, [2, 1]) == both[::-1]


def test_different_seeds_differ():
    a, b = simulate(CONFIG, [1, 2])
    assert a["commit_latency_mean_ms"] != b["commit_latency_mean_ms"]


def test_identical_across_processes():
    env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONHASHSEED": "0"}
    first = subprocess.run(CLI, capture_output=True, text=True, check=True, env=env, cwd=ROOT).stdout
    env["PYTHONHASHSEED"] = "12345"
    second = subprocess.run(CLI, capture_output=True, text=True, check=True, env=env, cwd=ROOT).stdout
    assert first == second
    rows = [json.loads(line) for line in first.splitlines()]
    assert [r["seed"] for r in rows] == [5, 6]
    in_process = simulate(SimConfig(provider="azure", num_tables=3, fast_append_ratio=0.7,
                                    inter_arrival_scale_ms=150), [5])[0]
    assert rows[0]["success_rate"] == in_process["success_rate"]
    assert rows[0]["commit_latency_p99_ms"] == in_process["commit_latency_p99_ms"]
