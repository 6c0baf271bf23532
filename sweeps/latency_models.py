"""latency_models: exp4c's curves under the reference and the measured latency model (1,800 configs).

The measured model (docs/reference/profiles.md) is fitted to seed 000's conditional-write
benchmark: the read is part of the measured op, failed conditional writes
answer later than successful ones, contention slows conditional requests, and
GCS and Azure throttle conditional writes to one object (refused ones are
resent by the client library).
This sweeps exp4c's grid twice, reference (as seed 001) and measured, so the
dashboard's comparison shows both frontiers per provider and the change in
usable throughput (``python -m dashboards compare``).
"""

import sys

from ray_jobs import Grid, Treatment
from sweeps.exp4c import GRID as EXP4C
from sweeps.seed001 import INTER_ARRIVAL_SCALES_MS, QUICK_TABLE_COUNTS

GRID = Grid(
    experiment="latency_models",
    description="latency_models: exp4c under the reference and the measured latency model",
    fixed=EXP4C.fixed,
    swept={"latency_model": (None, "measured"), **EXP4C.swept},
    # One and ten tables, every mix, and every scale from 50 ms: fine enough to place the
    # knees (exp4c's quick scales, 100/500/2000 ms, are too coarse to show a change).
    quick={"num_tables": QUICK_TABLE_COUNTS,
           "inter_arrival_scale_ms": tuple(s for s in INTER_ARRIVAL_SCALES_MS if s >= 50)},
    # The profile's content (provider_profile) follows from the model and the provider.
    compares=Treatment("latency_model", baseline=None, companions=("provider_profile",),
                       labels=((None, "reference model (seed 001)"), ("measured", "measured model (seed 000)"))),
    knee_quick={"num_tables": (1, 10), "fast_append_ratio": (1.0, 0.9)},
    # No view of its own: `commit-sweeps dashboard compare` prints it (and the page's views draw each model's study).
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
