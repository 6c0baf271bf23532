"""append_catalog: CAS vs conditional-append catalogs on S3 Express and Azure (1,080 configs).

S3 Express One Zone and Azure Blob support position-conditional appends
(seeds 000 and 003, with measured latencies). An append catalog commits by
appending its intention record at the expected position and reading the log
back to learn the outcome (as the reference's append catalog); this sweeps
it beside the CAS catalog of exp4c on the providers that have append.
"""

import sys

from ray_jobs import Grid, Treatment, View
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
    knee_quick={"provider": ("s3x",), "num_tables": (1, 10), "fast_append_ratio": (1.0,)},
    view=View("treatment-latency", anchor="append", nav="Append catalog", title="Conditional-append catalog",
              lead="CAS catalog vs position-conditional append catalog on the providers that support appends: "
                   "usable-throughput frontiers per provider and mix against table count, and latency at the knee.",
              expects="CAS and append catalogs",
              legend="Solid: CAS catalog (conditional write of the whole catalog object, as exp4c). Dashed: append "
                     "catalog (position-conditional append of the intention record plus a discovery read). Colour: "
                     "provider. Hollow: a lower bound; cross: no point above the threshold. Change: usable throughput "
                     "relative to CAS.",
              short_labels=(("storage", "CAS"), ("append", "append"))),
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
