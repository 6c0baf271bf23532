"""retry_policies: immediate retry vs exponential backoff vs the split policy (900 configs).

seed 001 recommends retrying catalog-only conflicts at once and backing off
exponentially (with jitter) on same-table conflicts. This compares the three
policies on exp4c's providers and mixes at 1 and 10 tables. Backoff: 10 ms,
doubling, capped at 5 s, +/-10% jitter (simcore's defaults).
"""

import sys

from ray_jobs import Grid, Treatment, sweep_main
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
)

if __name__ == "__main__":
    sys.exit(sweep_main([GRID]))
