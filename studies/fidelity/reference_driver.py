"""Run the reference simulator (cdouglas/endive) on one config and seed.

Runs under the reference's own Python environment, with its checkout on
PYTHONPATH, and only calls its public entry points (load a TOML config, run
a Simulation, export per-transaction rows). Usage:

    python reference_driver.py '<json spec>' <seed> <out.parquet>

The JSON spec holds simcore-style field names; this script translates them
into the reference's TOML layout (see its experiment_configs/exp4*.toml).
"""

import json
import sys
import tempfile
import time


def to_toml(spec: dict, seed: int) -> str:
    lines = [
        "[simulation]", f"duration_ms = {int(spec['duration_s'] * 1000)}", 'output_path = "results.parquet"',
        f"seed = {seed}",
        "[catalog]", f"num_tables = {spec['num_tables']}", "num_groups = 1",
        f'backend = "{spec["catalog"]}"',
    ]
    if spec["catalog"] == "service":
        lines += ["[catalog.service]", 'provider = "instant"', f"latency_ms = {float(spec['catalog_latency_ms'])}"]
    fa = float(spec["fast_append_ratio"])
    lines += [
        "[transaction]", f"retry = {spec['retry']}", f"runtime.min = {spec['runtime_min_ms']}",
        f"runtime.mean = {spec['runtime_median_ms']}", f"runtime.sigma = {spec['runtime_sigma']}",
        'inter_arrival.distribution = "exponential"', f"inter_arrival.scale = {float(spec['inter_arrival_scale_ms'])}",
        f"real_conflict_probability = {float(spec['real_conflict_probability'])}",
        'manifest_list_mode = "rewrite"',
        "[transaction.operation_types]", f"fast_append = {fa}", "merge_append = 0.0",
        f"validated_overwrite = {round(1.0 - fa, 12)}",
        "[storage]", f'provider = "{spec["provider"]}"',
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    spec, seed, out = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    from endive.config import load_simulation_config
    from endive.simulation import Simulation

    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(to_toml(spec, seed))
    started = time.time()
    stats = Simulation(load_simulation_config(f.name, seed_override=seed)).run()
    frame = stats.to_dataframe()
    wall_s = time.time() - started
    frame.attrs = {}
    frame.to_parquet(out)
    print(json.dumps({"wall_s": wall_s, "rows": len(frame)}))


if __name__ == "__main__":
    main()
