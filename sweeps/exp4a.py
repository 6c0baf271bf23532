"""exp4a: FastAppend only, S3 storage, a catalog service of fixed latency (240 configs).

Sweeps table count x catalog CAS latency x inter-arrival scale, as in seed
001's experiment 4a (docs/reference/glossary.md, "Experiments").
"""

import sys

from ray_jobs import Grid
from sweeps.seed001 import (CATALOG_LATENCIES_MS, INTER_ARRIVAL_SCALES_MS, TABLE_COUNTS,
                            QUICK_INTER_ARRIVAL_SCALES_MS)

GRID = Grid(
    experiment="exp4a",
    description="exp4a: FA 100%, S3, catalog service; tables x catalog latency x inter-arrival",
    fixed={"provider": "s3", "catalog": "service", "fast_append_ratio": 1.0},
    swept={
        "num_tables": TABLE_COUNTS,
        "catalog_latency_ms": CATALOG_LATENCIES_MS,
        "inter_arrival_scale_ms": INTER_ARRIVAL_SCALES_MS,
    },
    quick={
        "num_tables": (1, 10, 50),
        "catalog_latency_ms": (10, 50),
        "inter_arrival_scale_ms": (20,) + QUICK_INTER_ARRIVAL_SCALES_MS,
    },
    # The knee search's quick curves: a fast and a slow catalog at one and ten tables.
    knee_quick={"num_tables": (1, 10), "catalog_latency_ms": (10, 50)},
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
