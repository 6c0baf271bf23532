"""exp4c: the catalog is an object in the store itself, per provider (900 configs).

Sweeps provider x table count x FastAppend share x inter-arrival scale, as in
seed 001's experiment 4c: the usable-throughput frontier per provider.
"""

import sys

from ray_jobs import Grid
from sweeps.seed001 import (FAST_APPEND_RATIOS, INTER_ARRIVAL_SCALES_MS, PROVIDERS,
                            QUICK_INTER_ARRIVAL_SCALES_MS, QUICK_TABLE_COUNTS, TABLE_COUNTS)

GRID = Grid(
    experiment="exp4c",
    description="exp4c: storage catalog; provider x tables x FA share x inter-arrival",
    fixed={"catalog": "storage"},
    swept={
        "provider": PROVIDERS,
        "num_tables": TABLE_COUNTS,
        "fast_append_ratio": FAST_APPEND_RATIOS,
        "inter_arrival_scale_ms": INTER_ARRIVAL_SCALES_MS,
    },
    # Every provider and mix, at one and ten tables, below, near and past the knees.
    quick={
        "num_tables": QUICK_TABLE_COUNTS,
        "inter_arrival_scale_ms": QUICK_INTER_ARRIVAL_SCALES_MS,
    },
    # The knee search's quick curves: a fast and a slow provider at one and ten tables, FA only.
    knee_quick={"provider": ("s3x", "s3"), "num_tables": (1, 10), "fast_append_ratio": (1.0,)},
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
