"""retry_policies: immediate retry vs exponential backoff vs the split policy (900 configs).

seed 001 recommends retrying catalog-only conflicts at once and backing off
exponentially (with jitter) on same-table conflicts. This compares the three
policies on exp4c's providers and mixes at 1 and 10 tables. Backoff: 10 ms,
doubling, capped at 5 s, +/-10% jitter (simcore's defaults).
"""

import sys

from ray_jobs import Grid, Treatment, View
from sweeps.seed001 import (FAST_APPEND_RATIOS, INTER_ARRIVAL_SCALES_MS, PROVIDERS,
                            QUICK_INTER_ARRIVAL_SCALES_MS)

GRID = Grid(
    experiment="retry_policies",
    description="retry_policies: immediate vs backoff vs split retries, exp4c providers at 1 and 10 tables",
    fixed={"catalog": "storage"},
    swept={
        "retry_policy": ("immediate", "backoff", "split"),
        "provider": PROVIDERS,
        "num_tables": (1, 10),
        "fast_append_ratio": FAST_APPEND_RATIOS,
        "inter_arrival_scale_ms": INTER_ARRIVAL_SCALES_MS,
    },
    quick={"provider": ("s3x", "s3"), "fast_append_ratio": (0.9,),
           "inter_arrival_scale_ms": QUICK_INTER_ARRIVAL_SCALES_MS},
    # "immediate" is stored as an unset policy (the reference's behaviour), hence the baseline None.
    compares=Treatment("retry_policy", baseline=None,
                       companions=("backoff_base_ms", "backoff_multiplier", "backoff_cap_ms", "backoff_jitter"),
                       labels=((None, "immediate"),)),
    knee_quick={"provider": ("s3x",), "num_tables": (1,), "fast_append_ratio": (0.9,)},
    view=View("treatment-change", anchor="retry", nav="Retry policies", title="Retry policies",
              lead="Immediate retry (the reference) vs exponential backoff vs the split policy (immediate on "
                   "catalog-only conflicts, backoff on same-table ones), at 1 and 10 tables: the change in usable "
                   "throughput and in VO p99 commit latency at each policy's knee, and VO p99 along the load curve.",
              expects="immediate, backoff and split",
              legend="Bars: each policy's usable throughput (and VO p99 latency at its own knee) relative to "
                     "{baseline} retry on the same curve; up is more throughput, down is lower latency. Green: better, "
                     "red: worse. The curve chart follows VO p99 as load rises, one line per policy; hollow dots are "
                     "past the knee."),
)

if __name__ == "__main__":
    from commit_sweeps.sweep_command import sweep_main

    sys.exit(sweep_main([GRID]))
