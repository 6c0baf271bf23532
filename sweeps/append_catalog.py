"""append_catalog: CAS vs conditional-append catalogs on S3 Express and Azure (1,080 configs).

S3 Express One Zone and Azure Blob support position-conditional appends
(seeds 000 and 003, with measured latencies). An append catalog commits by
appending its intention record at the expected position and reading the log
back to learn the outcome (as the reference's append catalog); this sweeps
it beside the CAS catalog of exp4c on the providers that have append.
"""

import sys

from ray_jobs import Grid, Treatment, sweep_main
from sweeps.seed001 import (FAST_APPEND_RATIOS, INTER_ARRIVAL_SCALES_MS, QUICK_INTER_ARRIVAL_SCALES_MS,
                            QUICK_TABLE_COUNTS, TABLE_COUNTS)

GRID = Grid(
    experiment="append_catalog",
    description="append_catalog: CAS vs conditional-append catalog on s3x, azurex, azure",
    swept={
        "catalog": ("storage", "append"),
        "provider": ("s3x", "azurex", "azure"),
        "num_tables": TABLE_COUNTS,
        "fast_append_ratio": FAST_APPEND_RATIOS,
        "inter_arrival_scale_ms": INTER_ARRIVAL_SCALES_MS,
    },
    quick={"provider": ("s3x", "azure"), "num_tables": QUICK_TABLE_COUNTS, "fast_append_ratio": (1.0,),
           "inter_arrival_scale_ms": QUICK_INTER_ARRIVAL_SCALES_MS},
    compares=Treatment("catalog", baseline="storage",
                       labels=(("storage", "CAS (storage catalog)"), ("append", "conditional append"))),
)

if __name__ == "__main__":
    sys.exit(sweep_main([GRID]))
