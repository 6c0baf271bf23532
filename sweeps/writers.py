"""writers: streaming writers x commit interval x tables per provider, with and without maintenance.

The question users ask (Iceberg #9218: "what is the maximum number of
concurrent writers?"): N writers, each committing every S seconds, on a
storage catalog. ``writers`` has no maintenance; ``writers_maintenance``
adds two compaction jobs (long ValidatedOverwrites, every 10 minutes) on
the same tables. Both with the reference client and Iceberg Java's
settings. Per-class success, time to commit and lag are in every row.
"""

import sys

from ray_jobs import Grid, View
from sweeps.seed001 import PROVIDERS

WRITER_COUNTS = (5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
COMMIT_INTERVALS_S = (60, 300)

GRID = Grid(
    experiment="writers",
    description="writers: clients x provider x tables x commit interval x writers (FA-only streaming appends)",
    fixed={"catalog": "storage", "fast_append_ratio": 1.0},
    swept={
        "client": ("reference", "iceberg-java"),
        "provider": PROVIDERS,
        "num_tables": (1, 10),
        "commit_interval_s": COMMIT_INTERVALS_S,
        "writers": WRITER_COUNTS,
    },
    quick={
        "client": ("iceberg-java",),
        "provider": ("s3x", "s3"),
        "commit_interval_s": (60,),
        "writers": (10, 100, 1000),
    },
    # writers_maintenance (derived below) shares the section.
    view=View("max-writers", anchor="writers", nav="Writers", title="Writer workloads",
              lead="How many streaming writers, each committing every interval, a catalog serves before commits fail: "
                   "max writers against commit interval per provider and client, with and without compaction jobs "
                   "(`commit-sweeps sweep writers`)."),
)

MAINTENANCE_GRID = GRID.derive(
    "writers_maintenance",
    description="writers_maintenance: as writers, plus 2 compaction jobs every 10 minutes on the same tables",
    maintenance_jobs=2, maintenance_interval_s=600.0)

GRIDS = [GRID, MAINTENANCE_GRID]

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main(GRIDS))
